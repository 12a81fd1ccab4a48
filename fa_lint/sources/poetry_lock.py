"""poetry.lock: every ``[[package]]`` is what ``poetry install`` puts in the environment."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Parsed
from fa_lint.sources import locks
from fa_lint.sources._tables import text

NAME = "poetry.lock"


def _url(pkg: locks.Package) -> str | None:
    kind, url = text(pkg, "source", "type"), text(pkg, "source", "url")
    if kind == "git":
        ref = text(pkg, "source", "reference") or text(pkg, "source", "resolved_reference") or ""
        return f"git+{url}@{ref}".rstrip("@")
    return url if kind in ("url", "file") else None


def parse(path: str, text: str) -> Iterator[Parsed]:
    return locks.parse(path, text, source=NAME, tool="poetry", url=_url)
