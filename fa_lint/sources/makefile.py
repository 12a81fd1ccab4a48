"""Makefiles, when named explicitly: recipe lines that install, with ``$(VAR)`` from the file."""

from __future__ import annotations

import re
from collections.abc import Iterator

from fa_lint.model import Parsed
from fa_lint.sources import _shell
from fa_lint.sources._text import TextIndex

NAME = "makefile"
PATTERNS: tuple[str, ...] = ()  # never picked up by walking; only files named on the command line

_DEFINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*(?::::=|::=|:=|\?=|\+=|=)[ \t]*(.*?)[ \t]*$", re.M)
_RECIPE = re.compile(r"^(\t[ \t]*)([@+-]*)")


def _recipes(text: str) -> str:
    """The text as the shell sees it: recipe lines (tab-led, and their continuations) with make's
    ``@``/``-``/``+`` prefixes and ``$$`` escapes undone; every other line blanked (same length)."""
    out: list[str] = []
    continued = False
    for line in text.split("\n"):
        m = _RECIPE.match(line)
        if m or continued:
            shell = m.group(1) + " " * len(m.group(2)) + line[m.end() :] if m else line
            out.append(shell.replace("$$", " $"))
        else:
            out.append(" " * len(line))
        continued = (bool(m) or continued) and line.rstrip("\r").endswith("\\")
    return "\n".join(out)


def parse(path: str, text: str) -> Iterator[Parsed]:
    variables = {m.group(1): m.group(2) for m in _DEFINE.finditer(text)}
    scanner = _shell.Scanner(TextIndex(path, text), NAME)
    scanner.run(0, len(text), _shell.State(_shell.Scope(values=variables)), text=_recipes(text), make=True)
    yield from scanner.finish()
