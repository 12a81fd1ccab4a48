"""pdm.lock: ``[[package]]`` entries with exact versions."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Parsed
from fa_lint.syntax import tomllock
from fa_lint.syntax.tables import text

NAME = "pdm.lock"


def _url(pkg: tomllock.Package) -> str | None:
    git = text(pkg, "git")
    if git:
        return f"git+{git}@{text(pkg, 'ref') or text(pkg, 'revision') or ''}".rstrip("@")
    return text(pkg, "url")


def parse(path: str, text: str) -> Iterator[Parsed]:
    return tomllock.parse(path, text, source=NAME, tool="pdm", url=_url)
