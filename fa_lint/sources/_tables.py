"""Reading the requirement-bearing parts of parsed TOML documents, located."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fa_lint.model import Kind, Parsed, ParseProblem, Requirement, normalize
from fa_lint.sources import _reqs
from fa_lint.sources._toml import TomlDoc, TomlPath


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
            yield _reqs.at(doc.index, start, end, source, **fields)
        elif not isinstance(item, dict):
            yield problem(doc, (*path, i), f"{dotted}[{i}] must be a requirement string", entry=True)


def source_table(
    doc: TomlDoc, where: TomlPath, name: str, item: dict[str, Any], scope: str, source: str
) -> Iterator[Parsed]:
    """A table that says where a package comes from: git tag/rev, URL, or path."""
    url = item.get("url") or item.get("path") or item.get("file")
    git = item.get("git")
    if git:
        ref = item.get("tag") or item.get("rev") or item.get("branch")
        version = _reqs.tag_version(str(ref)) if ref else None
        raw = f"{name} @ git+{git}" + (f"@{ref}" if ref else "")
    elif isinstance(url, str):
        version = _reqs.version_from_url(url)
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
        url=f"git+{git}" if git else str(url),
        kind=Kind.SOURCE,
        scope=scope,
    )
