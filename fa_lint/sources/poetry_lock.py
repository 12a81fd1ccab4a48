"""poetry.lock: every ``[[package]]`` is what ``poetry install`` puts in the environment."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Parsed
from fa_lint.syntax import tomllock
from fa_lint.syntax.tables import text

NAME = "poetry.lock"


def _url(pkg: tomllock.Package) -> str | None:
    kind, url = text(pkg, "source", "type"), text(pkg, "source", "url")
    if kind == "git":
        ref = text(pkg, "source", "reference") or text(pkg, "source", "resolved_reference") or ""
        return f"git+{url}@{ref}".rstrip("@")
    return url if kind in ("url", "file") else None


def parse(path: str, text: str) -> Iterator[Parsed]:
    return tomllock.parse(path, text, source=NAME, tool="poetry", url=_url)
