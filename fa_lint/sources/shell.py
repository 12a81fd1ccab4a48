"""Shell scripts: every ``pip install`` / ``uv pip install`` / ``conda install`` they run."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Parsed
from fa_lint.sources import _shell
from fa_lint.sources._text import TextIndex

NAME = "shell"
PATTERNS = ("*.sh", "*.bash")


def scan(
    index: TextIndex,
    source: str,
    start: int = 0,
    end: int | None = None,
    *,
    variables: dict[str, str] | None = None,
    scope: str = "",
    make: bool = False,
) -> Iterator[Parsed]:
    """Install commands in a stretch of shell text, with the script's own assignments applied."""
    known: list[tuple[int, str, str]] = [(-1, k, v) for k, v in (variables or {}).items()]

    def at(offset: int) -> dict[str, str]:
        return {name: value for off, name, value in known if off <= offset}

    scanner = _shell.Scanner(index, source, at, scope=scope, make=make)
    for cmd in _shell.commands(index.text, start, end):
        for name, value, off in _shell.assignments(cmd):
            known.append((off, name, _shell.expand(value, at(off), make).text))
        yield from scanner.records(cmd)


def parse(path: str, text: str) -> Iterator[Parsed]:
    yield from scan(TextIndex(path, text), NAME)
