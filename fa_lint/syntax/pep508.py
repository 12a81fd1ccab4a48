"""Turning requirement text into ``Requirement`` records: PEP 508 strings, wheel names, URLs."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from fa_lint._records import NamedTuple
from fa_lint.model import SUBDIRECTORIES, Kind, Location, ParseProblem, Requirement, normalize
from fa_lint.syntax.text import TextIndex, excerpt

if TYPE_CHECKING:
    import urllib.parse

# (Patterns for URLs and file names, compiled on first use: most requirements have neither.)
# "name-version-..." at the start of a wheel or sdist file name; for names packaging refuses, such
# as a wheel whose tags are shell variables (flash_attn-2.7.4-$PY-$PY-linux_x86_64.whl).
# re.ASCII: "\d" alone also matches other scripts' digits ("v٣.3"), which no version may hold.
_ARCHIVE = r"^(?P<name>[A-Za-z0-9_.]+?)-(?P<version>\d[^-]*?)(?:-.*)?\.(?:whl|tar\.gz|zip|tar\.bz2)$"
_TAG = r"^v?(\d+(?:\.\d+)*(?:\.post\d+)?)$"
_TAG_ARCHIVE = r"/archive/(?:refs/tags/)?(v?[\d.]+(?:\.post\d+)?)\.(?:tar\.gz|zip)$"
_NO_EXTRAS: frozenset[str] = frozenset()  # shared: each empty frozenset() is a new 216-byte object
_VCS_SCHEMES = ("git+", "hg+", "svn+", "bzr+")


class WheelName(NamedTuple):
    name: str
    version: Version
    python: str  # e.g. "cp311", or "" when the file name leaves it unknown


def wheel_name(filename: str) -> WheelName | None:
    filename = unquote(filename)
    if not filename.endswith(".whl"):
        return None
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename  # for wheel names only

    try:
        name, version, _build, tags = parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion):
        m = re.match(_ARCHIVE, filename, re.ASCII)
        found = _archive_version(m["version"]) if m else None
        return WheelName(normalize(m["name"]), found, "") if m and found else None
    tag = next(iter(sorted(tags, key=str)), None)
    return WheelName(str(name), version, tag.interpreter if tag else "")


def unquote(text: str) -> str:
    """``%XX`` escapes decoded; urllib (and ipaddress, which it imports) only for text that has one."""
    if "%" not in text:
        return text
    import urllib.parse

    return urllib.parse.unquote(text)


def split_url(url: str) -> urllib.parse.SplitResult | None:
    import urllib.parse

    try:
        return urllib.parse.urlsplit(url)
    except ValueError:  # 'https://[::1/x': urlsplit refuses an unclosed IPv6 host
        return None


def _url_path(url: str) -> str:
    parts = split_url(url)
    return parts.path if parts else ""


def invalid_url(url: str) -> str | None:
    """Why pip could not use ``url`` at all, or None."""
    import urllib.parse

    try:
        urllib.parse.urlsplit(url)
    except ValueError as exc:
        return str(exc)
    return None


def file_name(url: str) -> str:
    """The last path segment of a URL or path, unquoted: where a wheel's name sits."""
    return unquote(_url_path(url).rsplit("/", 1)[-1])


def archive_name(url: str) -> tuple[str, Version] | None:
    """Name and version from a wheel or sdist file name at the end of a URL or path."""
    base = file_name(url)
    wheel = wheel_name(base)
    if wheel:
        return wheel.name, wheel.version
    m = re.match(_ARCHIVE, base, re.ASCII)
    version = _archive_version(m["version"]) if m else None
    return (normalize(m["name"]), version) if m and version else None


def _archive_version(text: str) -> Version | None:
    """A file name's version; one whose local label is a shell variable (``2.3.2+cu118abi${ABI}``)
    still names its release."""
    for candidate in (text, text.split("+", 1)[0]):
        try:
            return Version(candidate)
        except InvalidVersion:
            continue
    return None


def vcs_ref(url: str) -> str | None:
    """The ``@ref`` of a VCS URL (``git+https://host/repo.git@v2.5.0#egg=...``)."""
    if not url.startswith(_VCS_SCHEMES):
        return None
    path = _url_path(url[url.index("+") + 1 :])
    if "@" not in path:
        return None
    return path.rsplit("@", 1)[1] or None


def tag_version(ref: str | None) -> Version | None:
    """A release version from a tag name such as ``v2.5.0``; None for branches and commits."""
    m = re.match(_TAG, ref or "", re.ASCII)
    return Version(m.group(1)) if m else None


def git_version(url: str, ref: str | None, named: bool = False) -> Version | None:
    """The release a git ref of a repository builds: a release tag (``v2.5.0``), or a fork's own
    (ROCm's ``v2.6.3-cktile`` is 2.6.3); ``named``: the file says the repository builds flash-attn."""
    tagged = tag_version(ref)
    if tagged is None and ref:
        from fa_lint.kb import forks

        fork = forks.fork(url, named)
        told = forks.tag_version(fork, ref) if fork else None
        tagged = told[0] if told else None
    return tagged


def version_from_url(url: str, named: bool = False) -> Version | None:
    """The version a URL's text fixes; ``named`` as ``git_version`` says."""
    if url.startswith(_VCS_SCHEMES):
        return git_version(url, vcs_ref(url), named)
    found = archive_name(url)
    if found:
        return found[1]
    # GitHub tag archives: .../archive/refs/tags/v2.5.0.tar.gz
    m = re.search(_TAG_ARCHIVE, _url_path(url), re.ASCII)
    return tag_version(m.group(1)) if m else None


def name_from_url(url: str) -> str | None:
    """The distribution a bare URL installs, when its text says: egg fragment, file name, repo."""
    parts = split_url(url)
    frag = parts.fragment if parts else ""
    m = re.search(r"(?:^|&)egg=([A-Za-z0-9_.-]+)", frag)
    if m:
        return normalize(m.group(1))
    found = archive_name(url)
    if found:
        return found[0]
    if url.startswith(_VCS_SCHEMES):
        from fa_lint.kb import forks

        built = forks.builds(url)  # what the repository's setup.py names, as far as fa-lint knows
        if built == SUBDIRECTORIES[""]:
            sub = re.search(r"(?:^|&)subdirectory=([^&]*)", frag)
            return SUBDIRECTORIES.get(sub.group(1).strip("/") if sub else "")
        return built if built is not None and "subdirectory=" not in frag else None
    return None


# (Compiled on first use: ``looks_like_url`` rules out most requirements without it.)
_URL = r"(?:[a-z][a-z0-9+.-]*://|file:|git\+|hg\+|svn\+|bzr\+)"
_ARCHIVE_END = re.compile(r"\.(?:whl|tar\.gz|zip|tar\.bz2)$")


def looks_like_url(text: str) -> bool:
    # A scheme ends in ":"; without one, only a VCS prefix can match, its "+" third or fourth.
    if ":" not in text and "+" not in text[2:4]:
        return False
    return re.match(_URL, text, re.I) is not None


def looks_like_archive(text: str) -> bool:
    """A wheel or sdist given by path or file name (not ``name @ url``)."""
    if "@" in text or " " in text:
        return False
    return _ARCHIVE_END.search(unquote(text)) is not None


def parse(text: str, location: Location, source: str, **fields: Any) -> Requirement | ParseProblem:
    """A PEP 508 string, a bare URL, or a wheel/sdist path, as one ``Requirement``; ``fields`` are
    the record's others (``raw``: the requirement as written, when it is not ``text``)."""
    stripped = text.strip()
    raw = fields.pop("raw", stripped)
    if looks_like_url(stripped) or looks_like_archive(stripped.split(";", 1)[0].strip()):
        url, _, marker = stripped.partition(";")
        url = url.strip()
        if (why := invalid_url(url)) is not None:
            return ParseProblem(location, f"invalid URL {excerpt(url)}: {why}", stripped)
        name = name_from_url(url)
        if name is None:
            return ParseProblem(location, f"cannot tell which package {excerpt(url)} installs", stripped)
        return Requirement(
            name=name,
            raw=raw,
            location=location,
            source=source,
            url=url,
            version=version_from_url(url, named=name == SUBDIRECTORIES[""]),
            marker=marker.strip() or None,
            **fields,
        )
    read = _pep508(stripped)
    if isinstance(read, str):
        return ParseProblem(location, f"invalid requirement {excerpt(stripped)}: {read}", stripped)
    name, specifier, link, markers, extras = read
    if link and (why := invalid_url(link)) is not None:
        return ParseProblem(location, f"invalid URL {excerpt(link)} in {excerpt(stripped)}: {why}", stripped)
    if link and markers is None:
        link, markers = _glued_marker(link)
    version = version_from_url(link, named=name == SUBDIRECTORIES[""]) if link else None
    return Requirement(
        name=name,
        raw=raw,
        location=location,
        source=source,
        specifier=specifier,
        version=version,
        url=link,
        marker=markers,
        extras=extras,
        **fields,
    )


Pep508 = tuple[str, SpecifierSet, "str | None", "str | None", frozenset[str]]

# The requirement most lines are, ``name``, ``name[extra]>=1.2,<2``, ``torch==2.4.0+cu121``: an ASCII
# name and extras written without spaces, then version clauses, no URL, no marker. packaging's parser
# reads the clauses of such text with ``SpecifierSet`` in one piece (``_try_parse_specifier_set``),
# and so does this, with the same check of its commas; tests/test_sources.py compares the readings.
# Anything else goes to that parser, whose import (its tokenizer's patterns, packaging.markers,
# packaging.tags) costs more than a Dockerfile's hundreds of such requirements.
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_EXTRAS = rf"\[(?P<extras>{_NAME}(?:,{_NAME})*)\]"
_SIMPLE = rf"(?P<name>{_NAME})(?:{_EXTRAS})?[ \t]*(?P<spec>[=!<>~][\w.*+!=<>~, \t-]*)?"
_SHORT = 200  # longer text goes to packaging: no version number here can reach int()'s digit limit


@functools.cache
def _simple() -> re.Pattern[str]:
    return re.compile(_SIMPLE, re.ASCII)  # compiled on first use: a lockfile needs none


@functools.lru_cache(maxsize=4096)
def _specifier_set(clauses: str) -> SpecifierSet | None:
    """``SpecifierSet(clauses)``, once per text (the same ``==2.0.1`` follows many names), or None
    when packaging refuses it. Shared, so made canonical here: packaging sorts a set's clauses in
    place on its first ``str``/``hash``/``==``, and a shared set must iterate the same for every
    requirement that holds it, whichever of them was printed first."""
    try:
        specifier = SpecifierSet(clauses)
    except InvalidSpecifier:
        return None
    str(specifier)
    return specifier


def _plain(text: str) -> Pep508 | None:
    """A simple requirement's reading, as packaging's (see ``_SIMPLE``); None for any other text."""
    m = _simple().fullmatch(text) if len(text) <= _SHORT else None
    if m is None:
        return None
    clauses = m["spec"] or ""
    specifier = _specifier_set(clauses)
    if specifier is None:  # "~=1", ">=1.0+local": packaging's parser says why
        return None
    # what packaging's one-piece reading requires of the commas: one between clauses, one at the end
    commas = clauses.count(",")
    if (
        clauses
        and len(specifier) != commas + 1
        and not (specifier and len(specifier) == commas and clauses.rstrip(" \t").endswith(","))
    ):
        return None
    extras = frozenset(m["extras"].split(",")) if m["extras"] else _NO_EXTRAS
    return normalize(m["name"]), specifier, None, None, extras


@functools.lru_cache(maxsize=4096)
def _pep508(text: str) -> Pep508 | str:
    """packaging's reading of a PEP 508 string (normalised name, specifier, URL, marker, extras), or
    the first line of why it refuses it. Cached: a project writes the same pins in many files."""
    simple = _plain(text)
    if simple is not None:
        return simple
    # packaging's parser (its tokenizer compiles a dozen patterns) only for the text that needs it
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        return str(exc).splitlines()[0]
    marker = str(req.marker) if req.marker else None
    return (
        normalize(req.name),
        req.specifier,
        req.url,
        marker,
        frozenset(req.extras) if req.extras else _NO_EXTRAS,
    )


def _glued_marker(url: str) -> tuple[str, str | None]:
    """``name @ https://host/x.whl;python_version>="3.9"``: PEP 508 wants a space before the ``;``,
    so packaging keeps the marker in the URL; uv splits it off, and so does fa-lint."""
    head, sep, tail = url.partition(";")
    if not sep:
        return url, None
    from packaging.markers import InvalidMarker, Marker

    try:
        return head, str(Marker(tail))
    except InvalidMarker:
        return url, None


def at(index: TextIndex, start: int, end: int, source: str, **fields: Any) -> Requirement | ParseProblem:
    """Parse the requirement text found between two offsets of a file."""
    return parse(index.text[start:end], index.location(start, end), source, **fields)


def exact(
    name: str, version: str, location: Location, source: str, **fields: Any
) -> Requirement | ParseProblem:
    """A lock entry's exact version, which may carry a local label (2.7.4+cu12torch2.6)."""
    try:
        v = Version(version)
    except InvalidVersion:
        return ParseProblem(
            location, f"invalid version {excerpt(version)} for {excerpt(name)}", f"{name} {version}"
        )
    return Requirement(
        name=normalize(name),
        raw=f"{name}=={version}",
        location=location,
        source=source,
        version=v,
        specifier=SpecifierSet(f"=={v}"),
        kind=fields.pop("kind", Kind.LOCK),
        **fields,
    )
