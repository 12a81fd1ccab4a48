"""Offsets in a file's text to 1-based line and column, the way every format reports positions."""

from __future__ import annotations

import bisect
import re

from fa_lint.model import Location

_NEWLINE = re.compile("\n")
EXCERPT = 32  # the most characters of a file's text that a diagnostic quotes


def excerpt(text: str) -> str:
    """``text`` quoted for a diagnostic: escaped (``repr``) and cut to ``EXCERPT`` characters, so a
    message points at the offending text without echoing whole lines of a file (an included secret)."""
    text = text.strip()
    return repr(text) if len(text) <= EXCERPT else f"{text[:EXCERPT]!r}..."


class TextIndex:
    """Maps character offsets of one file's text to ``Location`` records."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self._starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._starts, offset) - 1
        return line + 1, offset - self._starts[line] + 1

    def location(self, start: int, end: int | None = None) -> Location:
        line, col = self.position(start)
        end_line, end_col = self.position(start if end is None else end)
        return Location(self.path, line, col, end_line, end_col)

    def offset(self, line: int, column: int = 1) -> int:
        """The offset of a 1-based line and column (clamped to the text)."""
        if line - 1 >= len(self._starts):
            return len(self.text)
        return min(self._starts[line - 1] + column - 1, len(self.text))

    def line_text(self, line: int) -> str:
        start = self.offset(line)
        end = self.text.find("\n", start)
        return self.text[start : len(self.text) if end < 0 else end].rstrip("\r")

    def whole_line(self, line: int) -> Location:
        text = self.line_text(line)
        return Location(self.path, line, 1, line, len(text) + 1)
