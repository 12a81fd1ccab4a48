"""poetry.lock: every ``[[package]]`` is what ``poetry install`` puts in the environment."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Parsed
from fa_lint.sources import locks

NAME = "poetry.lock"


def _url(pkg: locks.Package) -> str | None:
    source = locks.table(pkg, "source")
    if source.get("type") == "git":
        ref = source.get("reference") or source.get("resolved_reference") or ""
        return f"git+{source.get('url')}@{ref}".rstrip("@")
    return source.get("url") if source.get("type") in ("url", "file") else None


def parse(path: str, text: str) -> Iterator[Parsed]:
    return locks.parse(path, text, source=NAME, tool="poetry", url=_url)
