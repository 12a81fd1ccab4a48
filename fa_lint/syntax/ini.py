"""INI files (setup.cfg, tox.ini) value by value, with the position of every line of a value."""

from __future__ import annotations

import configparser
import re
from collections.abc import Iterator

from fa_lint.model import ParseProblem
from fa_lint.syntax.text import TextIndex

_SECTION = re.compile(r"^\[([^\]]+)\]")
# A key up to the first "=" or ":"; the blanks around it and the value are cut in code (as one pattern,
# "[^=:]*?\s*" and "(.*?)\s*$" retry a run of blanks at each of its places, n^2).
_KEY = re.compile(r"[^\s=:#;][^=:]*[=:]")


def check(index: TextIndex, what: str) -> ParseProblem | None:
    """Where configparser, which decides what the file means, refuses it."""
    try:
        configparser.ConfigParser(interpolation=None, strict=False).read_string(index.text, index.path)
    except configparser.Error as exc:
        line = getattr(exc, "lineno", None) or 1
        return ParseProblem(index.whole_line(line), f"invalid {what}: {exc.message.splitlines()[0]}")
    return None


def values(text: str) -> Iterator[tuple[str, str, int, int, str]]:
    """(section, key, line, column, item) for every line of every value, with positions.

    configparser reads the file for meaning but keeps no line numbers, so values are walked here
    the same way: a key at the start of a line, then indented continuation lines.
    """
    section, key = "", ""
    for n, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        if not line[0].isspace():
            header = _SECTION.match(line)
            if header:
                section, key = header.group(1).strip(), ""
                continue
            text = line.rstrip("\r")
            m = _KEY.match(text)
            if not m:
                continue
            key = m.group()[:-1].strip()
            rest = text[m.end() :]
            value = rest.strip()
            if value:
                yield section, key, n, m.end() + len(rest) - len(rest.lstrip()) + 1, value
        elif key:
            yield section, key, n, len(line) - len(line.lstrip()) + 1, stripped.rstrip("\r")
