"""Pipfile.lock (JSON): ``default`` and ``develop`` entries with ``==`` versions."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Kind, Parsed, ParseProblem, Requirement, normalize
from fa_lint.sources import _json, _reqs

NAME = "pipfile.lock"
SECTIONS = {"default": "packages", "develop": "dev-packages"}


def parse(path: str, text: str) -> Iterator[Parsed]:
    doc = _json.load(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    if not isinstance(doc.data, dict):
        yield ParseProblem(doc.index.location(0, 0), "Pipfile.lock must be a JSON object")
        return
    for section, scope in SECTIONS.items():
        table = doc.data.get(section)
        if not isinstance(table, dict):
            continue
        for name, entry in table.items():
            key = doc.keys[(section, name)]
            where = doc.index.location(key, key + len(name) + 2)
            if not isinstance(entry, dict):
                yield ParseProblem(where, f"entry for {name} must be an object")
                continue
            version = entry.get("version")
            if isinstance(version, str) and version.startswith("=="):
                yield _reqs.exact(name, version[2:], where, NAME, tool="pipenv", scope=scope)
            elif entry.get("git") or entry.get("file") or entry.get("path"):
                url = entry.get("file") or entry.get("path")
                if entry.get("git"):
                    url = f"git+{entry['git']}@{entry.get('ref') or ''}".rstrip("@")
                yield Requirement(
                    normalize(name),
                    f"{name} @ {url}",
                    where,
                    NAME,
                    url=str(url),
                    version=_reqs.version_from_url(str(url)),
                    kind=Kind.LOCK,
                    tool="pipenv",
                    scope=scope,
                )
