"""What the TOML lockfiles share: ``[[package]]`` tables with a name and an exact version.

Each lock module says only what differs: its table name, its tool, how an entry names a URL, which
entries are the project itself, and which markers an entry is resolved for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fa_lint.model import Kind, Parsed, ParseProblem, Requirement, normalize
from fa_lint.sources import _reqs, _toml
from fa_lint.sources._tables import WrongType, entry_text, text, wrong_type
from fa_lint.sources._text import excerpt
from fa_lint.sources._toml import TomlDoc

Package = dict[str, Any]


def _none(pkg: Package) -> str | None:
    return None


def parse(
    path: str,
    text: str,
    *,
    source: str,
    tool: str,
    key: str = "package",
    url: Callable[[Package], str | None] = _none,
    scope: Callable[[Package], str] = lambda pkg: "lock",
    skip: Callable[[Package], bool] = lambda pkg: False,
    doc: TomlDoc | None = None,
) -> Iterator[Parsed]:
    if doc is None:
        loaded = _toml.load(path, text)
        if isinstance(loaded, ParseProblem):
            yield loaded
            return
        doc = loaded
    packages = doc.data.get(key, [])
    if not isinstance(packages, list):
        start, end = doc.key_location((key,))
        yield ParseProblem(doc.index.location(start, end), f"{key} must be an array of tables")
        return
    for i, pkg in enumerate(packages):
        if not (isinstance(pkg, dict) and isinstance(pkg.get("name"), str)):
            continue
        try:
            if not skip(pkg):
                yield entry(doc, (key, i), pkg, source, tool, url(pkg), scope(pkg))
        except WrongType as exc:
            what = f"{key} {excerpt(pkg['name'])}"
            yield wrong_type(doc, (key, i), exc, what, entry_text(pkg["name"], pkg))


def entry(
    doc: TomlDoc,
    where: tuple[str | int, ...],
    pkg: Package,
    source: str,
    tool: str,
    url: str | None,
    scope: str,
) -> Parsed:
    """One locked package, located at its ``name = ...`` line."""
    start, end = doc.key_location((*where, "name"))
    location = doc.index.location(start, end)
    name = pkg["name"]
    version = text(pkg, "version")
    if version is not None:
        return _reqs.exact(name, version, location, source, tool=tool, url=url, scope=scope)
    return Requirement(
        normalize(name),
        f"{name} @ {url}" if url else name,
        location,
        source,
        version=_reqs.version_from_url(url) if url else None,
        url=url or "",
        kind=Kind.LOCK,
        tool=tool,
        scope=scope,
    )
