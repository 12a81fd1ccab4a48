"""Makefiles, when named explicitly: recipe lines that install, with ``$(VAR)`` from the file."""

from __future__ import annotations

import re
from collections.abc import Iterator

from fa_lint.model import Parsed
from fa_lint.sources import shell
from fa_lint.sources._text import TextIndex

NAME = "makefile"
PATTERNS: tuple[str, ...] = ()  # never picked up by walking; only files named on the command line

_DEFINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*(?::::=|::=|:=|\?=|\+=|=)[ \t]*(.*?)[ \t]*$", re.M)


def parse(path: str, text: str) -> Iterator[Parsed]:
    variables = {m.group(1): m.group(2) for m in _DEFINE.finditer(text)}
    yield from shell.scan(TextIndex(path, text), NAME, variables=variables, make=True)
