"""A code frame: the lines around a span, with line numbers and a ``^^^`` marker under the span.

Written by hand because no well-kept Python library draws ruff's frame from a (line, column) span:
what it must get right is where a terminal puts each character. A tab shows as four spaces (as ruff
shows it), an East Asian wide character takes two cells, a combining mark none, and a control
character its visible escape; the marker is measured in the same cells, so it stays under its span.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from fa_lint._records import NamedTuple
from fa_lint.model import Location
from fa_lint.report._common import printable

CONTEXT = 2  # lines shown before and after the span, as ruff shows them
WIDTH = 120  # cells of a source line shown; a longer line is cut around the span
SPAN_LINES = 6  # a longer span shows its first and last lines
_ELLIPSIS = "..."
_LEGACY_COMMAND = re.compile(r"(?<=##)\[")

Style = Callable[[str, str], str]  # (role, text) -> text; roles: "gutter", "marker"


def plain(_role: str, text: str) -> str:
    return text


class _Cell(NamedTuple):
    text: str  # what the terminal shows for one character of the line
    width: int


def _cell(ch: str) -> _Cell:
    if ch == "\t":
        return _Cell("    ", 4)
    shown = printable(ch)
    if shown != ch:
        return _Cell(shown, len(shown))
    if ch.isascii():  # printable ASCII: one narrow cell, no need to load the Unicode database
        return _Cell(ch, 1)
    import unicodedata

    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return _Cell(ch, 0)
    return _Cell(ch, 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1)


def _cells(text: str) -> list[_Cell]:
    """The cells of a stretch of a line. ``printable`` sees one character at a time here, so the
    opening of a legacy workflow command ("##[", read anywhere in a line of a CI log) is broken here."""
    cells = [_cell(ch) for ch in text]
    for m in _LEGACY_COMMAND.finditer(text):
        shown = printable(text[m.start() - 2 : m.end()])[2:]
        cells[m.start()] = _Cell(shown, len(shown))
    return cells


def _window(cells: list[_Cell], start: int, whole: bool) -> tuple[int, int]:
    """The characters of a long line to show: ``WIDTH`` cells, keeping the span's start in view.

    ``whole`` False: ``cells`` is already a slice of a longer line.
    """
    if whole and sum(c.width for c in cells) <= WIDTH:
        return 0, len(cells)
    first, before = start, 0
    while first > 0 and before + cells[first - 1].width <= WIDTH // 4:
        first -= 1
        before += cells[first].width
    room = WIDTH - 2 * len(_ELLIPSIS)  # either end may be cut
    last, used = first, 0
    while last < len(cells) and used + cells[last].width <= room:
        used += cells[last].width
        last += 1
    return first, last


def _marked(line: str, start: int, end: int) -> tuple[str, int, int]:
    """The line as shown, and the cell where the marker starts and how many cells it covers.

    ``start``/``end`` are 0-based character offsets; either may lie past the end of the line, where the
    marker then sits just after the last character.
    """
    start = min(start, len(line))
    end = max(min(end, len(line)), start)
    # Only the characters around the span can be shown: measure those, however long the line.
    lo, hi = max(start - WIDTH, 0), min(start + 2 * WIDTH, len(line))
    cells = _cells(line[lo:hi])
    start, end = start - lo, min(end, hi) - lo
    first, last = _window(cells, start, whole=lo == 0 and hi == len(line))
    shown = "".join(c.text for c in cells[first:last])
    offset = sum(c.width for c in cells[first:start])
    if first or lo:
        shown, offset = _ELLIPSIS + shown, offset + len(_ELLIPSIS)
    if last < len(cells) or hi < len(line):
        shown += _ELLIPSIS
    width = sum(c.width for c in cells[start : min(end, last)])
    return shown, offset, max(width, 1)


def _span_lines(loc: Location, lines: Sequence[str]) -> tuple[int, int, int]:
    """The span's last line and end column, with a span that ends at the start of a line ending before it."""
    end_line, end_column = loc.end_line, loc.end_column
    if end_line > loc.line and end_column == 1:
        end_line -= 1
        end_column = len(lines[end_line - 1]) + 1 if end_line <= len(lines) else 1
    if end_line < loc.line or (end_line == loc.line and end_column < loc.column):
        end_line, end_column = loc.line, loc.column
    return end_line, end_column, min(end_line, len(lines))


def lines(text: str) -> list[str]:
    """A file's lines as fa-lint numbers them (split at '\n'), without a CRLF file's '\r'."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def draw(lines: Sequence[str], loc: Location, label: str, style: Style = plain) -> list[str]:
    """The frame for ``loc`` in a file's ``lines``; no lines when the span lies outside them."""
    if not 1 <= loc.line <= len(lines):
        return []
    end_line, end_column, last = _span_lines(loc, lines)
    shown = list(range(loc.line, last + 1))
    if len(shown) > SPAN_LINES:
        shown = [*shown[:2], 0, *shown[-2:]]  # 0: the elided middle
    before = list(range(max(loc.line - CONTEXT, 1), loc.line))
    after = list(range(last + 1, min(last + CONTEXT, len(lines)) + 1))
    while before and not lines[before[0] - 1].strip():
        before.pop(0)
    while after and not lines[after[-1] - 1].strip():
        after.pop()
    gutter = len(str(max([*before, *shown, *after])))

    def row(number: int | str, content: str = "") -> str:
        return style("gutter", f"{number!s:>{gutter}} |") + (f" {content}" if content else "")

    out = [row("")]
    out += [row(n, _marked(lines[n - 1], 0, 0)[0]) for n in before]
    for n in shown:
        if n == 0:
            out.append(style("gutter", _ELLIPSIS))
            continue
        start = loc.column - 1 if n == loc.line else 0
        end = end_column - 1 if n == end_line else len(lines[n - 1]) + 1
        source, offset, width = _marked(lines[n - 1], start, end)
        tail = f" {label}" if n == shown[-1] else ""
        out += [row(n, source), row("", " " * offset + style("marker", "^" * width + tail))]
    out += [row(n, _marked(lines[n - 1], 0, 0)[0]) for n in after]
    return [*out, row("")]
