"""Where comments start in notebooks, batch files and PowerShell scripts (``syntax.comments`` for the
rest), so that a suppression comment counts only inside a real comment of the file's own syntax.

- A notebook: a comment of the line as IPython runs it, in the JSON text. A shell line (``!``,
  ``%pip``, a ``%%bash`` cell) has the shell's comments (the shell scanner is handed in: this module
  imports no other comment scanner); a Python line's comment is a line that is one (``# ...``).
- A batch file: cmd.exe's ``REM`` and ``::`` where a command starts (the line's start after blanks
  and ``@``, or after ``&``, ``&&``, ``||`` or ``(``), outside double quotes; a ``#`` is no comment.
- PowerShell: ``#`` where a token can start, outside quotes (``'...'``, ``"..."`` with the backtick's
  escapes), and ``<# ... #>`` blocks, which may span lines; here-strings (``@" ... "@``) are text.

Scanned by hand, one pass a line: tree-sitter's grammars drop no position of a comment, but loading a
grammar to place a few comments of a file with a finding costs more than this reading.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fa_lint.model import ParseProblem
from fa_lint.syntax import notebook

Scanner = Callable[[str], dict[int, int]]  # a script's text -> {line: column} of its comments

_BATCH_OPENER = re.compile(r"(?i:rem)(?=[\s/]|$)|::")
_BATCH_BREAKS = frozenset("&|(")
_PS_TOKEN_BREAKS = frozenset(" \t;|&(){}=,")


def starts(text: str, style: str, shell: Scanner) -> dict[int, int]:
    if style == "batch":
        return _by_line(text, _batch)
    if style == "powershell":
        return _powershell(text)
    return _notebook(text, shell)


def normalized(text: str, style: str, found: dict[int, int]) -> str:
    """See ``syntax.comments.normalized``."""
    lines = text.split("\n")
    for n, col in found.items():
        if n > len(lines):
            continue
        line = lines[n - 1]
        if style == "batch":
            m = _BATCH_OPENER.match(line, col)
            if m is not None:
                line = line[:col] + "#" + " " * (m.end() - col - 1) + line[m.end() :]
        elif style == "powershell" and line.startswith("<#", col):
            line = line[:col] + " " + line[col + 1 :]
        elif style == "notebook" and line[col : col + 1] == "#" and _whole(line[:col]):
            line = " " * col + line[col:]  # a comment line of its own in a cell: at the line's start
        lines[n - 1] = line
    return "\n".join(lines)


def _whole(before: str) -> bool:
    """Whether a notebook's JSON line holds nothing before the comment but the string's opening."""
    return re.fullmatch(r'[ \t]*(?:"source"[ \t]*:[ \t]*\[?[ \t]*)?"[ \t]*', before) is not None


def _by_line(text: str, first: Callable[[str], int | None]) -> dict[int, int]:
    out = {}
    for n, line in enumerate(text.split("\n"), 1):
        col = first(line)
        if col is not None:
            out[n] = col
    return out


def _batch(line: str) -> int | None:
    """The column of a batch line's ``REM`` or ``::`` comment, where a command starts."""
    quoted = False
    command = True  # the next non-blank character starts a command
    for i, c in enumerate(line):
        if c == '"':
            quoted, command = not quoted, False
        elif quoted:
            continue
        elif c in _BATCH_BREAKS:
            command = True
        elif command and c not in " \t@":
            if _BATCH_OPENER.match(line, i):
                return i
            command = False
    return None


def _powershell(text: str) -> dict[int, int]:
    out: dict[int, int] = {}
    block = here = False
    for n, line in enumerate(text.split("\n"), 1):
        if here:
            here = not line.startswith(('"@', "'@"))
            continue
        if block:
            out[n] = 0
            block = "#>" not in line
            continue
        col = _ps_line(line)
        if col is not None:
            out[n] = col
            block = line.startswith("<#", col) and "#>" not in line[col + 2 :]
        here = line.rstrip().endswith(('@"', "@'")) and col is None
    return out


def _ps_line(line: str) -> int | None:
    """The column where a PowerShell line's comment (``#`` or ``<#``) starts, outside quotes."""
    quote = ""
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if quote:
            if c == "`" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif (c == "#" and (i == 0 or line[i - 1] in _PS_TOKEN_BREAKS)) or line.startswith("<#", i):
            return i
        i += 1
    return None


def _notebook(text: str, shell: Scanner) -> dict[int, int]:
    found = notebook.load("", text)
    if isinstance(found, ParseProblem):
        return {}
    _, cells = found
    lines = [0, *(m.end() for m in re.finditer("\n", text))]
    out: dict[int, int] = {}
    for cell in cells:
        for start, script in _scripts(cell):
            for n, col in _cell_comments(cell.text[start:], script, shell).items():
                at = _nth_line(cell.text, start, n) + col
                if at < len(cell.positions):
                    offset = cell.positions[at]
                    line = _line_of(lines, offset)
                    out.setdefault(line, offset - lines[line - 1])
    return out


def _scripts(cell: notebook.Cell) -> list[tuple[int, bool]]:
    """Where each run of a cell's text starts, and whether it is shell (else Python, with IPython's
    escapes): a ``%%bash`` cell's body is one script; other cells are read line by line."""
    if notebook.cell_magic(cell) in notebook.SHELL_CELLS:
        first = cell.text.find("\n")
        return [(len(cell.text) if first < 0 else first + 1, True)]
    return [(0, False)]


def _cell_comments(text: str, script: bool, shell: Scanner) -> dict[int, int]:
    """{line of ``text``, 1-based: column} of its comments: a shell script's, or each line's as IPython
    runs it (a ``!``/``%`` line's shell comment, a Python line that is a comment)."""
    if script:
        return shell(text)
    out: dict[int, int] = {}
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"[ \t]*(!!?|%(?:pip|conda|mamba|sx|system)\b)?", line)
        if m is not None and m.group(1):
            found = shell(line[m.end() :]).get(1)
            if found is not None:
                out[n] = m.end() + found
        elif line.lstrip().startswith("#"):
            out[n] = len(line) - len(line.lstrip())
    return out


def _nth_line(text: str, start: int, n: int) -> int:
    """The offset in ``text`` where the n-th line (1-based) after ``start`` begins."""
    at = start
    for _ in range(n - 1):
        at = text.index("\n", at) + 1
    return at


def _line_of(starts: list[int], offset: int) -> int:
    import bisect

    return bisect.bisect_right(starts, offset)
