"""pdm.lock: ``[[package]]`` entries with exact versions."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Parsed, ParseProblem
from fa_lint.sources import locks

NAME = "pdm.lock"
PATTERNS = ("pdm.lock",)


def parse(path: str, text: str) -> Iterator[Parsed]:
    for e in locks.entries(path, text, "package"):
        if isinstance(e, ParseProblem):
            yield e
            continue
        doc, i, pkg = e
        url = pkg.get("url") or (
            f"git+{pkg['git']}@{pkg.get('ref') or pkg.get('revision') or ''}".rstrip("@")
            if pkg.get("git")
            else None
        )
        yield locks.entry(doc, ("package", i), pkg, NAME, "pdm", url=url)
