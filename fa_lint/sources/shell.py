"""Shell scripts: every ``pip install`` / ``uv pip install`` / ``conda install`` they run."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Parsed
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import Scope, State
from fa_lint.syntax.text import TextIndex

NAME = "shell"


def parse(path: str, text: str) -> Iterator[Parsed]:
    scanner = Scanner(TextIndex(path, text), NAME)
    scanner.run(0, len(text), State(Scope()))
    yield from scanner.finish()
