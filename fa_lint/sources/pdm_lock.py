"""pdm.lock: ``[[package]]`` entries with exact versions."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Parsed
from fa_lint.sources import locks

NAME = "pdm.lock"


def _url(pkg: locks.Package) -> str | None:
    if pkg.get("git"):
        return f"git+{pkg['git']}@{pkg.get('ref') or pkg.get('revision') or ''}".rstrip("@")
    return pkg.get("url")


def parse(path: str, text: str) -> Iterator[Parsed]:
    return locks.parse(path, text, source=NAME, tool="pdm", url=_url)
