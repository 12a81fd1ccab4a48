"""Offsets in a file's text to 1-based line and column, the way every format reports positions."""

from __future__ import annotations

import bisect
import re

from fa_lint.model import Location

_NEWLINE = re.compile("\n")


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


class Cursor:
    """Locations of offsets taken in order, counting lines on the way: a lock's entries located in one
    pass, without an index of every line (a list as long as the file, for a few offsets)."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self._offset = 0  # lines are counted up to here
        self._line = 1
        self._line_start = 0

    def position(self, offset: int) -> tuple[int, int]:
        if offset < self._offset:  # an earlier offset: count again from the top
            self._offset, self._line, self._line_start = 0, 1, 0
        newlines = self.text.count("\n", self._offset, offset)
        if newlines:
            self._line += newlines
            self._line_start = self.text.rfind("\n", self._offset, offset) + 1
        self._offset = offset
        return self._line, offset - self._line_start + 1

    def location(self, start: int, end: int) -> Location:
        line, col = self.position(start)
        end_line, end_col = self.position(end)
        return Location(self.path, line, col, end_line, end_col)
