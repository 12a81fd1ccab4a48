"""What the TOML lockfiles share: ``[[package]]`` tables with a name and an exact version.

Each lock module says only what differs: its table name, its tool, how an entry names a URL, which
entries are the project itself, and which markers an entry is resolved for.

A lock is read one ``[[package]]`` table at a time: tomllib reads each table's text on its own, and
the entry is located at its ``name = ...`` line by a search of that text. A lock holds thousands of
tables; read whole, its document and the position of every key in it would be held at once, several
times the memory tomllib itself needs. When a document cannot be cut that way with the same meaning
(tables other than the entries' that share a name, a table header inside a string, an entry written
inline), or tomllib refuses a part, the whole document is read and located instead, as before.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from fa_lint.model import Kind, Location, Parsed, ParseProblem, Requirement, normalize
from fa_lint.syntax import pep508, tomldoc
from fa_lint.syntax.tables import WrongType, entry_text, text, wrong_type
from fa_lint.syntax.text import Cursor, excerpt
from fa_lint.syntax.tomldoc import TomlDoc

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

Package = dict[str, Any]

# A line that starts a table; the first key of its header, and what follows that key.
_TABLE = re.compile(r"^\[", re.M)
_HEADER = re.compile(r"\[(?P<array>\[)?[ \t]*(?P<key>[A-Za-z0-9_-]+)[ \t]*(?P<next>[.\]])")
_NAME = re.compile(r"^name[ \t]*=[ \t]*", re.M)


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
    def record(pkg: Package, where: Callable[[], Location]) -> Parsed | None:
        if isinstance(pkg, dict) and isinstance(pkg.get("name"), str) and not skip(pkg):
            return entry(where(), pkg, source, tool, url(pkg), scope(pkg))
        return None

    found = _by_table(path, text, key, record) if doc is None else None
    if found is not None:
        yield from found
        return
    if doc is None:
        loaded = tomldoc.load(path, text)
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
        try:
            rec = record(pkg, functools.partial(_located, doc, (key, i, "name")))
        except WrongType as exc:  # record() has checked the name
            what = f"{key} {excerpt(pkg['name'])}"
            yield wrong_type(doc, (key, i), exc, what, entry_text(pkg["name"], pkg))
            continue
        if rec is not None:
            yield rec


def _located(doc: TomlDoc, path: tomldoc.TomlPath) -> Location:
    return doc.index.location(*doc.key_location(path))


Record = Callable[[Package, Callable[[], Location]], "Parsed | None"]


def _parts(text: str, key: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The document cut before each line that starts with ``[``: the spans of the ``[[key]]`` entries
    (each with its ``[key.*]`` subtables), and of the parts between them."""
    cuts = [m.start() for m in _TABLE.finditer(text)]
    entries: list[tuple[int, int]] = []
    others: list[tuple[int, int]] = [(0, cuts[0] if cuts else len(text))]
    for n, start in enumerate(cuts):
        end = cuts[n + 1] if n + 1 < len(cuts) else len(text)
        m = _HEADER.match(text, start)
        if m is not None and m["key"] == key and m["next"] == "]" and m["array"]:
            entries.append((start, end))
        elif m is not None and m["key"] == key and m["next"] == "." and entries and entries[-1][1] == start:
            entries[-1] = (entries[-1][0], end)  # a subtable of the entry above
        elif others[-1][1] == start:
            others[-1] = (others[-1][0], end)
        else:
            others.append((start, end))
    return entries, others


def _by_table(path: str, text: str, key: str, record: Record) -> list[Parsed] | None:
    """The records of every ``[[key]]`` table, each table read alone; None when the document cannot
    be read that way with the meaning it has whole, or tomllib refuses a part of it.

    The document is cut before each line that starts with ``[``. An entry is a ``[[key]]`` table with
    its ``[key.*]`` subtables; every other part must be valid alone and name top-level keys no other
    part names (so no table is defined twice across parts), ``key`` not among them. A cut inside a
    multi-line string leaves that string open, so tomllib refuses the part.
    """
    entries, others = _parts(text, key)
    cursor = Cursor(path, text)
    out = []
    try:
        names: set[str] = set()
        for start, end in others:
            part = tomllib.loads(text[start:end])
            if key in part or names & part.keys():
                return None
            names |= part.keys()
        for start, end in entries:
            table = text[start:end]
            part = tomllib.loads(table)
            value = part.get(key)
            if len(part) != 1 or not isinstance(value, list) or len(value) != 1:
                return None
            rec = record(value[0], lambda: cursor.location(*_name_span(table, key, start)))  # noqa: B023
            if rec is not None:
                out.append(rec)
    except (tomllib.TOMLDecodeError, WrongType):  # a value of the wrong type is located by the whole read
        return None
    return out


def _name_span(table: str, key: str, offset: int) -> tuple[int, int]:
    """Offsets of an entry's ``name = "..."``: the line of the table's own keys (before any subtable)
    that starts with it, outside any multi-line string; else where the TOML scanner puts it."""
    own = table[: (table.find("\n[") + 1) or len(table)]
    m = _NAME.search(own)
    if m is not None and '"""' not in own[: m.start()] and "'''" not in own[: m.start()]:
        end = tomldoc.string_at(own, m.end())
        if end is not None:
            return offset + m.start(), offset + end
    span = tomldoc.spans(table).get((key, 0, "name"))
    return (offset + span.key, offset + span.end) if span else (offset, offset)


def entry(location: Location, pkg: Package, source: str, tool: str, url: str | None, scope: str) -> Parsed:
    """One locked package, located at its ``name = ...`` line."""
    name = pkg["name"]
    version = text(pkg, "version")
    if version is not None:
        return pep508.exact(name, version, location, source, tool=tool, url=url, scope=scope)
    return Requirement(
        normalize(name),
        f"{name} @ {url}" if url else name,
        location,
        source,
        version=pep508.version_from_url(url) if url else None,
        url=url or "",
        kind=Kind.LOCK,
        tool=tool,
        scope=scope,
    )
