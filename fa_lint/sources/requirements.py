"""pip requirements and constraints files, read with pip-requirements-parser.

Files whose every line is plain -- a requirement by name, with extras, a version and a marker; ``-r``
or ``-c`` with a path; an index option; a comment -- are read without it: the library imports
urllib.request, http.client, email and ssl when it loads (about 30 ms, more than the rest of a small
run), and on such lines it does nothing but what ``packaging`` does. One line that needs pip's own
syntax (``--hash``, ``-e``, a URL or path, a ``\\`` continuation, a variable, any other option) sends
the whole file to the library. tests/test_sources.py checks that both readings agree.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

from packaging.version import InvalidVersion, Version

from fa_lint._lazy import Lazy
from fa_lint.model import (
    FLASH_ATTN,
    Include,
    InstallOptions,
    Location,
    Parsed,
    ParseProblem,
    Requirement,
    mentions_flash_attn,
    normalize,
)
from fa_lint.syntax import pep508
from fa_lint.syntax.text import SPLITLINES, TextIndex, excerpt, line_starts

NAME = "requirements"

# A line of a requirements file: an option, a local path, a URL, or a name with what may follow it.
# One operator char is never enough: "CC = gcc" (Makefile.in) and "include x" (MANIFEST.in) fail.
# (A pattern, compiled on first use: only a *.in file of no known name is sniffed.)
_SNIFF = r"""^(?:-[rcefi]\s*\S|--[a-z][a-z-]*(?:[=\s]|$)|\.{1,2}(?:/\S*)?(?:\[[^\]]*\])?$
    |[a-z][a-z0-9+.-]*:\S+
    |[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\]\s*)?(?:(?:===?|[<>!~]=|[<>])\s*\S|;|@\s*\S|\\?$|\s\#))"""

_LEAD = re.compile(r"\s*(?:(?:-e|--editable)(?:\s*=\s*|\s+))?")
# pip ends a requirement at an option ("--hash=...") or a comment, which needs whitespace before "#".
# A match starts only where a run of blanks starts (the look-behind): tried from inside a run of n
# blanks not followed by either, "\s+" would give each start back char by char, n^2 in all.
_TAIL = re.compile(r"(?<!\s)(?:\s+(?:--?[A-Za-z]|#)|\s*\\$)")
_ENV_VAR = Lazy(r"\$\{[A-Za-z0-9_]+\}")
_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # what ends a line for str.splitlines()
_HASH_OPTION = re.compile(r"(?<!\S)--(?:h|requi)")  # --hash, --require-hashes, or a prefix of them
# -i/--index-url, --extra-index-url, -f/--find-links, or a prefix of them
_INDEX_OPTION = re.compile(r"(?<!\S)(?:-[if]|--(?:i|ex|f))")
_NAME = r"\s*(?:(?:-e|--editable)\s+)?([A-Za-z0-9][A-Za-z0-9._-]*)"  # compiled on first use: rare

# What a plain line may be. A requirement: a name, extras, a version part, then anything after ";"
# (a marker, which packaging checks); no "@", "/", quotes or "-" before the marker, which pip reads
# as a URL, a path or an option. An option: the few that take one plain word (or none), exactly as
# pip spells them (optparse would take an abbreviation; the library reads those).
_PLAIN = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9._-]*[ \t]*(?:\[[A-Za-z0-9._, \t-]*\][ \t]*)?[A-Za-z0-9.*+!=<>~,() \t]*(?:;.*)?"
)
_OPTION = re.compile(
    r"(?P<option>-r|--requirement|-c|--constraint|-i|--index-url|--extra-index-url|-f|--find-links"
    r"|--trusted-host)(?: +|=)(?P<value>[^\s\"'\\=$][^\s\"'\\$]*)|--pre|--no-index|--prefer-binary"
)
_INCLUDES = {"-r": False, "--requirement": False, "-c": True, "--constraint": True}  # option: constraint
_INDEXES = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links"}
# pip reads a requirement that ends like an archive (extras aside) as a file to install.
_ARCHIVE = re.compile(r"\.(?:whl|zip|tbz|txz|tlz|tgz|tar|tar\.(?:gz|bz2|xz|lz|lzma))(?:\[[^\]]+\])?$", re.I)
# pip-requirements-parser's comment syntax: "#" at the start or after whitespace. The library splits
# with r"(^|\s+)(#.*)$", which backtracks through every run of blanks no "#" follows (n^2); the first
# "#" at the start or after a blank is the same place, found in one pass.
_COMMENT = re.compile(r"(?:^|(?<=\s))#")
# Longer runs of blanks are cut to this before a line goes to the library (whose own comment split is
# quadratic in a run): pip reads any run of blanks as one separator.
_BLANKS = 64
_LONG_BLANKS = re.compile(f"[ \t]{{{_BLANKS + 1},}}")


@functools.cache
def _line_parser() -> Callable[[str], tuple[str, Any, list[str]]]:
    """pip-requirements-parser's ``get_line_parser()``, with its option parser built once.

    The library builds a new optparse parser for every line (about half of its parse time) so that
    append options never share a default list between lines; a deep copy of the defaults per line
    gives the same isolation.
    """
    import copy
    import optparse
    import shlex

    import pip_requirements_parser as prp

    parser = prp.build_parser()

    def parse_line(line: str) -> tuple[str, Any, list[str]]:
        defaults = optparse.Values(copy.deepcopy(parser.get_default_values().__dict__))
        args, options = prp.break_args_options(line)
        opts, arguments = parser.parse_args(shlex.split(options), defaults)
        return args, opts, arguments

    return parse_line


def _items(text: str) -> Iterator[Any]:
    """pip-requirements-parser's records for one file's text, without it re-reading the file.

    The library only parses files by name; its line-level API below is what ``from_file`` runs.
    Imported here, not at module level: it costs ~150 ms and only requirements files need it.
    """
    import pip_requirements_parser as prp

    line_parser = _line_parser()
    for numbered in prp.preprocess(text):
        number, line = numbered
        if isinstance(numbered, prp.CommentLine):
            continue
        rline = prp.RequirementLine(line=line, line_number=number, filename="")
        try:
            req_string, options, arguments = line_parser(line)
            parsed = prp.ParsedLine(rline, req_string, options, False, arguments)
            for item in prp.handle_line(parsed):
                is_req = isinstance(item, prp.ParsedRequirement)
                yield prp.build_req_from_parsedreq(item) if is_req else item
        except Exception as exc:  # the library raises bare Exceptions on bad lines
            yield prp.InvalidRequirementLine(requirement_line=rline, error_message=str(exc))


def sniff(head: str, *, complete: bool) -> bool:
    """Whether every line the head shows reads as a requirement, an option or a path."""
    lines = head.split("\n")
    if not complete:
        lines.pop()  # cut mid-line
    entries = [s for s in (line.strip() for line in lines) if s and not s.startswith("#")]
    return bool(entries) and all(re.match(_SNIFF, s, re.X) for s in entries)


def _whole_install(text: str) -> tuple[bool, InstallOptions | None]:
    """What a file's options say of the whole install, wherever they stand: one --hash (or
    --require-hashes) puts it in pip's hash-checking mode, and index options (-i, --extra-index-url,
    -f) apply to every requirement.

    A pass of its own, before any requirement is read, so that requirements can be handed on one at a
    time; only lines with such an option (or a prefix optparse accepts for one) go through the parser.
    """
    wanted = [p for p in (_HASH_OPTION, _INDEX_OPTION) if p.search(text)]
    hashed = False
    urls: list[str] = []
    if wanted:
        import pip_requirements_parser as prp

        line_parser = _line_parser()
        for numbered in prp.preprocess(text):
            if isinstance(numbered, prp.CommentLine) or not any(p.search(numbered.line) for p in wanted):
                continue
            try:
                args, options, _ = line_parser(numbered.line)
            except Exception:  # the library raises bare Exceptions on bad lines; the main pass reports them
                continue
            hashed = hashed or bool(options.hashes or options.require_hashes)
            if not args:  # an option line: pip takes no index options on a requirement's line
                urls += filter(None, [options.index_url, *(options.extra_index_urls or [])])
                urls += options.find_links or []
            if hashed and _HASH_OPTION in wanted:
                wanted.remove(_HASH_OPTION)
                if not wanted:
                    break
    return hashed, InstallOptions(index_urls=tuple(urls)) if urls else None


# A --pre line lets pip pick pre-releases for every requirement of the file (wherever it stands).
_PRE = re.compile(r"^[ \t]*--pre[ \t]*(?:#.*)?$", re.M)


def parse(path: str, text: str) -> Iterator[Parsed]:
    index = TextIndex(path, text)
    if _CONDA_EXPORT.search(text, 0, 2048):
        return _conda_export(index, text)
    urls = _plain_urls(text)
    pre = InstallOptions(pre=True) if _PRE.search(text) else None
    return _pip(index, text, 0, pre) if urls is None else _read_plain(index, text, urls, pre is not None)


# `conda list --export` writes "# $ conda create --name <env> --file <this file>" atop its
# name=version=build lines, and `conda list --explicit` "@EXPLICIT" atop package URLs: conda spec
# files, whatever their name, which pip cannot read and conda can.
_CONDA_EXPORT = re.compile(r"^(?:#\s*\$\s*conda create .*--file <this file>|@EXPLICIT)\s*$", re.M)
_CONDA_PACKAGE = Lazy(r"/(?P<name>[^/]+)-(?P<version>[^-/]+)-(?P<build>[^-/]+)\.(?:conda|tar\.bz2)(?:#.*)?$")


def _conda_export(index: TextIndex, text: str) -> Iterator[Parsed]:
    """A conda spec file: a MatchSpec a line (``flash-attn=2.3.6=pypi_0``), or after ``@EXPLICIT``
    a package URL, whose file name says name, version and build."""
    explicit = False
    for at, line in _lines(text):
        spec = line.split("#", 1)[0].strip() if not line.lstrip().startswith("http") else line.strip()
        if not spec or spec.startswith("#"):
            continue
        if spec == "@EXPLICIT":
            explicit = True
            continue
        start = at + len(line) - len(line.lstrip())
        where = index.location(start, start + len(spec))
        if explicit:
            yield from _conda_package(spec, where)
            continue
        from fa_lint.syntax import matchspec  # conda's list format only

        rec = matchspec.matchspec(spec, where, NAME)
        if rec is not None:
            yield rec


def _conda_package(url: str, where: Location) -> Iterator[Parsed]:
    """One package URL of an ``@EXPLICIT`` file: exactly that build of that version."""
    m = _CONDA_PACKAGE().search(url)
    if m is None:
        return  # no package file name: nothing fa-lint could judge
    from fa_lint.syntax import matchspec

    name = matchspec.pypi_name(m["name"])
    try:
        version = Version(m["version"])
    except InvalidVersion:
        if mentions_flash_attn(name):
            yield ParseProblem(where, f"invalid version in conda package {excerpt(url)}", url)
        return  # another package's conda version, which PEP 440 cannot say
    yield Requirement(name, url, where, NAME, version=version, url=url, tool="conda")


def _plain_urls(text: str) -> list[str] | None:
    """The URLs of the index options of a file whose every line is plain (``_plain``); None when a
    line is not. One pass finds both: index options apply to the whole install, wherever they stand."""
    urls: list[str] = []
    for _, line in _lines(text):
        option = _plain(line)
        if option is None:
            return None
        if isinstance(option, re.Match) and option["option"] in _INDEXES:
            urls.append(option["value"])
    return urls


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Each line and the offset it starts at, as pip numbers them (str.splitlines()), one at a time."""
    at = 0
    for m in SPLITLINES.finditer(text):
        yield at, text[at : m.start()]
        at = m.end()
    if at < len(text):
        yield at, text[at:]


def _plain(physical: str) -> str | re.Match[str] | None:
    """A plain line's logical text (empty for a comment or a blank), or the option it is; None when
    the line needs pip's parser."""
    if physical.endswith("\\"):
        return None
    # as the library splits a line: text, then a comment, each stripped
    comment = _COMMENT.search(physical)
    logical = (physical[: comment.start()] if comment else physical).strip()
    if not logical:
        return ""
    option = _OPTION.fullmatch(logical)
    if option is not None:
        return option
    head = logical.split(";", 1)[0].rstrip()
    if not _PLAIN.fullmatch(logical) or " -" in logical or _ARCHIVE.search(head):
        return None
    return logical


def _read_plain(index: TextIndex, text: str, urls: list[str], pre: bool = False) -> Iterator[Parsed]:
    """The records of a file whose every line is plain (``_plain``), one line at a time; ``urls``
    are its index options' (``_plain_urls``).

    Two passes (``_plain_urls`` and this one) rather than one that collects records and gives up at
    the first line that is not plain: a file's records are handed on as they are read, so memory
    stays flat however long the file is.
    """
    options = InstallOptions(index_urls=tuple(urls), pre=pre) if urls or pre else None
    for at, physical in _lines(text):
        logical = _plain(physical)
        if isinstance(logical, re.Match):
            constraint = _INCLUDES.get(logical["option"] or "")
            if constraint is not None:
                yield Include(index.location(at, at + len(physical)), logical["value"], constraint=constraint)
        elif logical:
            rec = _requirement(index, at, physical, logical, False, options)
            if rec is not None and rec.url is None:
                yield rec
            else:  # packaging refuses it, or reads a URL: pip's parser says how pip reads the line
                yield from _pip(index, physical, at, options)


def _pip(  # noqa: C901 - complexity 11: a dispatch over pip-requirements-parser's kinds of line (ignored, invalid, option, requirement), each with its record
    index: TextIndex, text: str, base: int = 0, options: InstallOptions | None = None
) -> Iterator[Parsed]:
    """The records pip-requirements-parser reads in ``text``, which starts at offset ``base`` of the
    file (a single line of a plain file, whose ``options`` the caller knows)."""
    import pip_requirements_parser as prp

    starts = [*line_starts(text, SPLITLINES), len(text)]  # pip numbers lines with str.splitlines()
    read = _LONG_BLANKS.sub(" " * _BLANKS, text)  # what the library reads: the same lines
    hashed, found = _whole_install(read)
    if options is None:
        options = found
    elif found is not None and base == 0:  # the whole file: its index options, and its --pre line
        options = found._replace(pre=options.pre)
    for item in _items(read):  # one at a time: the library's records weigh ~2 KB a line
        number = item.requirement_line.line_number
        at = starts[min(number, len(starts)) - 1]  # where pip's line starts
        physical = text[at : starts[min(number, len(starts) - 1)]].rstrip(_BREAKS)
        at += base
        if isinstance(item, prp.IncorrectRequirementLine):
            continue  # options pip ignores with a warning, not an error
        if isinstance(item, prp.InvalidRequirementLine):
            yield from _invalid(index, at, physical, item.requirement_line.line, item.error_message)
        elif isinstance(item, prp.OptionLine):
            where = index.location(at, at + len(physical))
            for target in item.options.get("requirements", []):
                yield Include(where, target)
            for target in item.options.get("constraints", []):
                yield Include(where, target, constraint=True)
        elif isinstance(item, prp.InstallRequirement):
            rec = _named(index, at, physical, item, hashed, options)
            if rec is not None:
                yield rec


def _span(line: str) -> tuple[int, int]:
    start = _LEAD.match(line)
    s = start.end() if start else 0
    tail = _TAIL.search(line, s)
    e = tail.start() if tail else len(line.rstrip())
    return s, e


def _named(
    index: TextIndex, at: int, physical: str, item: Any, hashed: bool, options: InstallOptions | None
) -> Requirement | None:
    name = normalize(item.req.name) if item.req else None
    if name is None and item.link is not None:
        name = pep508.name_from_url(item.link.url)
    if name is None:
        return None  # a local project path such as "-e ."; nothing fa-lint can judge
    return _requirement(index, at, physical, item.requirement_line.line, hashed, options)


def _requirement(
    index: TextIndex, at: int, physical: str, logical: str, hashed: bool, options: InstallOptions | None
) -> Requirement | None:
    """The requirement of one line, located at its text on the physical line starting at ``at``."""
    s, e = _span(physical)
    ls, le = _span(logical)
    raw = logical[ls:le]
    rec = pep508.parse(raw, index.location(at + s, at + e), NAME, hash_checked=hashed, options=options)
    return rec if isinstance(rec, Requirement) else None


def _invalid(index: TextIndex, at: int, physical: str, logical: str, message: str) -> Iterator[Parsed]:
    s, e = _span(physical)
    where = index.location(at + s, at + e)
    var = _ENV_VAR().search(logical)
    if var:
        # pip substitutes ${VAR} from the environment at install time; only that environment knows.
        m = re.match(_NAME, logical)
        if m and normalize(m.group(1)) == FLASH_ATTN:
            ls, le = _span(logical)
            yield Requirement(
                name=FLASH_ATTN, raw=logical[ls:le], location=where, source=NAME, unresolved=var.group()
            )
        return
    first = message.strip().splitlines()[0] if message.strip() else "invalid line"
    first = re.sub(r"^(Invalid requirement:\s*:?\s*)+", "", first)
    first = first.removeprefix("pip_requirements_parser: error: ")  # the library's name, not pip's words
    yield ParseProblem(where, f"pip cannot parse {excerpt(logical)}: {first}", logical.strip())
