"""Shell scripts: every ``pip install`` / ``uv pip install`` / ``conda install`` they run."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Parsed
from fa_lint.sources import _bash, _shell
from fa_lint.sources._text import TextIndex

NAME = "shell"


def parse(path: str, text: str) -> Iterator[Parsed]:
    scanner = _shell.Scanner(TextIndex(path, text), NAME)
    scanner.run(0, len(text), _bash.State(_bash.Scope()))
    yield from scanner.finish()
