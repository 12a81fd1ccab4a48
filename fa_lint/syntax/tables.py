"""Reading the requirement-bearing parts of parsed TOML documents, located."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from fa_lint.model import FLASH_ATTN, Kind, Parsed, ParseProblem, Requirement, Setting, normalize
from fa_lint.syntax import pep508
from fa_lint.syntax.text import excerpt

if TYPE_CHECKING:  # the TOML reader is the caller's: a Pipfile.lock's JSON needs none of it
    from fa_lint.syntax.tomldoc import TomlDoc, TomlPath

T = TypeVar("T")


class WrongType(Exception):
    """A value of the wrong TOML or JSON type at ``path`` (below the entry being read).

    Raised by the typed accessors below and turned into a located ``ParseProblem`` by the reader of
    the entry, so one bad field costs that entry only, however deep the accessor sits.
    """

    def __init__(self, path: TomlPath, expected: str) -> None:
        super().__init__(f"{'.'.join(map(str, path))} must be {expected}")
        self.path = path


def typed(data: Any, path: TomlPath, kind: type[T], expected: str) -> T | None:
    """The value at ``path`` in ``data``; None when absent; ``WrongType`` when present but not ``kind``."""
    for n, key in enumerate(path):
        if not isinstance(data, dict):
            raise WrongType(path[:n], "a table")
        data = data.get(key)
        if data is None:
            return None
    if not isinstance(data, kind):
        raise WrongType(path, expected)
    return data


def text(data: Any, *path: str) -> str | None:
    return typed(data, path, str, "a string")


def subtable(data: Any, *path: str) -> dict[str, Any]:
    return typed(data, path, dict, "a table") or {}


def texts(data: Any, *path: str) -> list[str]:
    """An array of strings (uv's resolution-markers); absent is empty."""
    value = typed(data, path, list, "an array of strings") or []
    if not all(isinstance(x, str) for x in value):
        raise WrongType(path, "an array of strings")
    return value


def wrong_type(doc: TomlDoc, where: TomlPath, exc: WrongType, what: str, entry: str = "") -> ParseProblem:
    """``exc`` as a problem located at the offending key below ``where``; ``entry`` is the one entry it
    costs (``entry_text``), or empty for a setting that is no entry."""
    start, end = doc.key_location((*where, *exc.path))
    return ParseProblem(doc.index.location(start, end), f"{what}: {exc}", entry)


def entry_text(name: str, item: Any) -> str:
    """An entry read from data, for ``ParseProblem.entry``: its name and every string in it, which
    is what tells whether it names flash-attn (a git URL of flash-attention does)."""
    strings, pending = [name], [item]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, dict):
            pending += [*value.keys(), *value.values()]
        elif isinstance(value, list):
            pending += value
    return " ".join(strings)


def get(data: Any, path: TomlPath) -> Any:
    for key in path:
        if isinstance(data, dict) and isinstance(key, str):
            data = data.get(key)
        elif isinstance(data, list) and isinstance(key, int) and key < len(data):
            data = data[key]
        else:
            return None
    return data


def table(doc: TomlDoc, path: TomlPath) -> list[str]:
    value = get(doc.data, path)
    return list(value) if isinstance(value, dict) else []


def problem(doc: TomlDoc, path: TomlPath, message: str, *, entry: bool = False) -> ParseProblem:
    """A located problem; ``entry``: it concerns the one entry at ``path``, the rest was read."""
    start, end = doc.key_location(path)
    text = doc.index.text[start:end] if entry else ""
    return ParseProblem(doc.index.location(start, end), message, text)


def strings(doc: TomlDoc, path: TomlPath, source: str, **fields: Any) -> Iterator[Parsed]:
    """Every PEP 508 string of an array; tables in it (PEP 735 include-group) are skipped."""
    value = get(doc.data, path)
    if value is None:
        return
    dotted = ".".join(map(str, path))
    if not isinstance(value, list):
        yield problem(doc, path, f"{dotted} must be an array of requirement strings")
        return
    for i, item in enumerate(value):
        if isinstance(item, str):
            start, end = doc.value_location((*path, i))
            yield pep508.at(doc.index, start, end, source, **fields)
        elif not isinstance(item, dict):
            yield problem(doc, (*path, i), f"{dotted}[{i}] must be a requirement string", entry=True)


def source_table(
    doc: TomlDoc, where: TomlPath, name: str, item: dict[str, Any], scope: str, source: str
) -> Iterator[Parsed]:
    """A table that says where a package comes from: git tag/rev, URL, or path."""
    try:
        url = text(item, "url") or text(item, "path") or text(item, "file")
        git = text(item, "git")
        ref = text(item, "tag") or text(item, "rev") or text(item, "branch") or text(item, "ref")
    except WrongType as exc:
        yield wrong_type(doc, where, exc, f"source of {excerpt(name)}", entry_text(name, item))
        return
    if git:
        version = pep508.git_version(git, ref, named=normalize(name) == FLASH_ATTN) if ref else None
        raw = f"{name} @ git+{git}" + (f"@{ref}" if ref else "")
    elif url:
        version = pep508.version_from_url(url)
        raw = f"{name} @ {url}"
    else:
        return  # an index or workspace source changes where, not which version
    start, end = doc.key_location(where)
    yield Requirement(
        name=normalize(name),
        raw=raw,
        location=doc.index.location(start, end),
        source=source,
        version=version,
        url=f"git+{git}" if git else url,
        kind=Kind.SOURCE,
        scope=scope,
    )


def settings(doc: TomlDoc, path: TomlPath, kind: str, name: str, scope: str = "") -> Iterator[Setting]:
    """A ``Setting`` for each string of an array (pixi ``platforms``, uv ``environments``)."""
    value = get(doc.data, path)
    if not isinstance(value, list):
        return
    for i, item in enumerate(value):
        if isinstance(item, str):
            start, end = doc.value_location((*path, i))
            yield Setting(doc.index.location(start, end), kind, name, item, scope)
