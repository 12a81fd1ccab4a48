"""Jupyter notebooks (``.ipynb``, nbformat 4): each code cell's source, with every character placed in
the file's JSON text, and which of its lines IPython hands to a shell.

nbformat is not used: it validates and upgrades the document, and gives no positions; ``json`` reads
the document and the source strings are placed here (``syntax.jsondoc`` places the keys). A cell's
``source`` is a list of strings (one a line, each ending with ``\\n`` but the last) or one string.

IPython's input transformations (``IPython/core/inputtransformer2.py``, 8.x): a line whose first
non-blank character is ``!`` runs the rest in a shell (``!!`` too, capturing the output); ``%name`` is
a line magic, whose ``%pip``/``%conda`` run pip and conda through the shell, ``%cd`` changes the
kernel's folder and ``%env NAME=value`` sets a variable of its environment; a cell that starts with
``%%bash``, ``%%sh`` or ``%%script bash`` is a shell script. A line may go on with a ``\\`` at its end.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fa_lint._records import NamedTuple
from fa_lint.model import ParseProblem
from fa_lint.syntax import _jsonkeys, jsondoc

SHELL_CELLS = frozenset({"bash", "sh"})
_ESCAPE = re.compile(r"([ \t]*)(!!?|%{1,2})")


class Cell(NamedTuple):
    number: int  # 1-based, as Jupyter's interface counts them
    text: str  # the source, joined
    positions: tuple[int, ...]  # the file offset of each character of ``text``


class Line(NamedTuple):
    """One logical line of a code cell (its ``\\`` continuations joined), and how IPython runs it."""

    kind: str  # "shell" (!), "magic" (%name), "cell-magic" (%%name), "python"
    start: int  # offsets into the cell's text: the whole line
    end: int
    body: int  # where what follows the escape starts (the command of a ``!`` line, the magic's name)
    indented: bool  # inside a Python block (an ``if``, a ``try``): it may not run


def load(path: str, text: str) -> tuple[jsondoc.JsonDoc, list[Cell]] | ParseProblem:
    """The document (its data, and where its keys are) and its code cells, or why it cannot be read."""
    doc = jsondoc.load(path, text, depth=3)
    if isinstance(doc, ParseProblem):
        return doc
    data = doc.data
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return ParseProblem(doc.index.location(0, 0), "not a notebook: no 'cells' list (nbformat 4)")
    out = []
    for n, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source")
        if isinstance(source, str):
            source = [source]
        if not isinstance(source, list) or not all(isinstance(s, str) for s in source):
            continue
        start, _ = jsondoc.key_span(doc, ("cells", n, "source"))
        placed = _placed(text, start, source)
        out.append(Cell(n + 1, "".join(source), placed))
    return doc, out


def _placed(text: str, key: int, strings: list[str]) -> tuple[int, ...]:
    """The file offset of each character of the strings written after the key at ``key``."""
    at = _jsonkeys.string_end(text, key) if text.startswith('"', key) else key
    out: list[int] = []
    for value in strings:
        q = text.find('"', at)
        if q < 0:
            return tuple([key] * sum(map(len, strings)))
        end = _jsonkeys.string_end(text, q)
        out += string_positions(text, q, end, value)
        at = end
    return tuple(out)


def string_positions(text: str, start: int, end: int, value: str) -> list[int]:
    """The file offset of each character of a JSON string written at ``start:end`` (its quotes
    included): an escape (``\\"``, ``\\n``, ``\\u00e9``) is placed at its backslash. Where the decoding
    disagrees with ``json`` (a surrogate pair), every character is placed at the string."""
    out: list[int] = []
    i = start + 1
    while i < end - 1:
        out.append(i)
        if text[i] != "\\":
            i += 1
        else:
            i += 6 if text[i + 1 : i + 2] == "u" else 2
    return out if len(out) == len(value) else [start] * len(value)


def cell_magic(cell: Cell) -> str | None:
    """The cell magic a cell starts with (``%%bash`` -> "bash"; ``%%script bash`` -> "bash")."""
    m = re.match(r"[ \t]*%%([A-Za-z_]\w*)[ \t]*([^\n]*)", cell.text)
    if m is None:
        return None
    name, rest = m.group(1), m.group(2).split()
    if name == "script" and rest:
        return rest[0].rsplit("/", 1)[-1]
    return name


def lines(text: str) -> Iterator[Line]:
    """The cell's logical lines, each with the escape IPython reads at its start."""
    start = 0
    n = len(text)
    while start < n or start == 0:
        end = start
        while True:  # a "\" before the line break goes on (IPython joins them for ! and % lines)
            end = text.find("\n", end)
            if end < 0:
                end = n
                break
            if text[end - 1 : end] != "\\":
                break
            end += 1
        m = _ESCAPE.match(text, start, end)
        if m is None:
            yield Line("python", start, end, start, text[start:end][:1] in " \t")
        else:
            kind = {"!": "shell", "!!": "shell", "%": "magic", "%%": "cell-magic"}[m.group(2)]
            yield Line(kind, start, end, m.end(), bool(m.group(1)))
        start = end + 1
        if end >= n:
            break
