"""poetry.lock: every ``[[package]]`` is what ``poetry install`` puts in the environment."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Parsed, ParseProblem
from fa_lint.sources import locks

NAME = "poetry.lock"
PATTERNS = ("poetry.lock",)


def parse(path: str, text: str) -> Iterator[Parsed]:
    for e in locks.entries(path, text, "package"):
        if isinstance(e, ParseProblem):
            yield e
            continue
        doc, i, pkg = e
        source = pkg.get("source")
        if not isinstance(source, dict):
            source = {}
        url = source.get("url") if source.get("type") in ("git", "url", "file") else None
        if url and source.get("type") == "git":
            url = f"git+{url}@{source.get('reference') or source.get('resolved_reference') or ''}".rstrip("@")
        yield locks.entry(doc, ("package", i), pkg, NAME, "poetry", url=url)
