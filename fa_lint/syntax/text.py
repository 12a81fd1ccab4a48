"""Offsets in a file's text to 1-based line and column, the way every format reports positions.

One line model for every format: a line ends at "\n" (a "\r" before it is part of the line ending),
as git, diff and GitHub count lines, so annotations, suppression comments and fixes all agree. A
reader that numbers lines its own way (pip splits on every Unicode line break, Python also on a lone
"\r") turns its (line, column) into an offset with ``line_starts`` first; only offsets cross over.
"""

from __future__ import annotations

import bisect
import re
from array import array

from fa_lint.model import Location

_NEWLINE = re.compile("\n")
# Where str.splitlines() breaks, which is how pip numbers the lines of a requirements file. (The two
# breaks past Latin-1 stand apart: a character class that holds them takes five times as long to compile.)
SPLITLINES = re.compile("\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85]|\u2028|\u2029")
# Where Python's tokenizer breaks (ast line numbers): a form feed is whitespace there.
PYTHON_LINES = re.compile("\r\n|\r|\n")
EXCERPT = 32  # the most characters of a file's text that a diagnostic quotes


def excerpt(text: str) -> str:
    """``text`` quoted for a diagnostic: escaped (``repr``) and cut to ``EXCERPT`` characters, so a
    message points at the offending text without echoing whole lines of a file (an included secret)."""
    text = text.strip()
    return repr(text) if len(text) <= EXCERPT else f"{text[:EXCERPT]!r}..."


def unescaped(text: str, char: str, start: int) -> int:
    """The offset of the first ``char`` at or after ``start`` that no backslash escapes (an even run of
    backslashes stands before it, counted back to ``start``), or -1.

    By hand, where a pattern such as ``"(?:[^"\\]|\\.)*"`` would read: Python's re keeps a backtracking
    frame for every character such a repeat takes (a 5 MB TOML string took 730 MB), and the possessive
    quantifiers that avoid it need Python 3.11.
    """
    while (found := text.find(char, start)) >= 0:
        before = found
        while before > start and text[before - 1] == "\\":
            before -= 1
        if (found - before) % 2 == 0:
            return found
        start = found + 1
    return -1


def line_starts(text: str, breaks: re.Pattern[str]) -> list[int]:
    """The offset where each line starts, for a reader that ends lines at ``breaks``."""
    return [0, *(m.end() for m in breaks.finditer(text))]


class TextIndex:
    """Maps character offsets of one file's text to ``Location`` records."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self._starts = array("q", [0])  # 8 bytes a line, not a list of int objects
        self._starts.extend(m.end() for m in _NEWLINE.finditer(text))

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._starts, offset) - 1
        return line + 1, offset - self._starts[line] + 1

    def location(self, start: int, end: int | None = None) -> Location:
        starts = self._starts
        line = bisect.bisect_right(starts, start) - 1
        end = start if end is None else end
        # most spans end on the line they start on: one search, not two
        if start <= end and (line + 1 == len(starts) or end < starts[line + 1]):
            end_line = line
        else:
            end_line = bisect.bisect_right(starts, end) - 1
        return Location(
            self.path, line + 1, start - starts[line] + 1, end_line + 1, end - starts[end_line] + 1
        )

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
