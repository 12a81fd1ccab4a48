"""What the shell does with the ``<`` and ``>`` an unquoted requirement word runs into.

``pip install flash-attn>=2.5.8`` is ``pip install flash-attn`` with its output written to a file
named ``=2.5.8``: pip installs the newest flash-attn. ``pip install flash-attn<=2.6.3`` reads its
input from a file named ``=2.6.3``; that file is not there, so the shell reports "No such file or
directory", the command fails (status 1 in bash, 2 in dash) and pip never runs; the script goes on
to its next line. An operator with nothing after it (``flash-attn<`` at the end of the line) is a
syntax error: the shell runs nothing of that line and exits (status 2). Redirections are made left
to right, so ``flash-attn>=2.5,<2.7`` writes the file ``=2.5,`` and then fails on ``2.7``. bash 5.2
and dash 0.5.12 behave alike in each of these cases; ``scripts/shell_redirects.py`` runs them with a
stand-in ``pip`` and prints the table in the FAL007 page.

Hand-written: tree-sitter-bash parses these words, but takes an operator followed by a newline as a
redirect from the next line's first word, where the shell stops with a syntax error.
"""

from __future__ import annotations

import enum
import re

from fa_lint._records import NamedTuple


class Effect(enum.Enum):
    RUNS = "runs"  # every redirect writes (or reads a here-document): the command runs, bare word
    FAILS = "fails"  # an input redirect from a file that is not there: the command never runs
    STOPS = "stops"  # an operator with no file after it: a syntax error, nothing of the line runs


class Redirects(NamedTuple):
    text: str  # what the shell took from the word: '>=2.5,<2.7'
    effect: Effect
    files: tuple[str, ...]  # the files named, in order: ('=2.5,', '2.7')
    op: str  # the operator that decides the effect: '<' for FAILS, the one without a file for STOPS
    file: str = ""  # the file it names: the one the shell cannot open; '' for STOPS

    def why(self) -> str:
        """What the shell does instead of running the command, for FAILS and STOPS."""
        if self.effect is Effect.STOPS:
            return (
                f"`{self.op}` with no file name after it is a syntax error: the shell runs nothing of "
                "this line and stops (exit status 2)"
            )
        return (
            f"the shell opens a file named `{self.file}` as the command's standard input; unless that "
            "file exists where it runs, it reports 'No such file or directory' and the command fails "
            "(exit status 1 in bash, 2 in dash) before pip starts: nothing is installed"
        )


# Longest first. `<&` and `>&` duplicate descriptors: `<&2.6` fails ("ambiguous redirect" in bash,
# "Bad fd number" in dash); `<>`, `<<`, `<<<` open or feed standard input and let the command run.
_OPERATOR = re.compile(r"<<<|<<-|<<|<>|<&|>>|>\||>&|&>|<|>")
_INPUT = {"<", "<&"}
_WORD_END = set(" \t\n;&|()<>")
_BLANK = " \t"


def read(text: str, start: int) -> Redirects | None:
    """The redirects that begin at ``text[start]``, right where a word ends; None when none does."""
    pos = start
    files: list[str] = []
    ops: list[str] = []
    while (m := _OPERATOR.match(text, pos)) is not None:
        op, pos = m.group(), m.end()
        end = pos
        while end < len(text) and text[end] not in _WORD_END:
            end += 1
        if end == pos:  # a space, then the file as the next word; or nothing: a syntax error
            nxt = pos
            while nxt < len(text) and (text[nxt] in _BLANK or text.startswith("\\\n", nxt)):
                nxt += 2 if text[nxt] == "\\" else 1
            if nxt >= len(text) or text[nxt] in "\n;&|()<>":
                return Redirects(text[start:pos], Effect.STOPS, tuple(files), op)
            end = nxt
            while end < len(text) and text[end] not in _WORD_END:
                end += 1
            files.append(text[nxt:end])
            ops.append(op)
            return _judged(text[start:pos], files, ops)  # the file was a word of its own: stop there
        files.append(text[pos:end])
        ops.append(op)
        pos = end
    return _judged(text[start:pos], files, ops) if ops else None


def _judged(taken: str, files: list[str], ops: list[str]) -> Redirects:
    for op, file in zip(ops, files, strict=True):
        if op in _INPUT:
            return Redirects(taken, Effect.FAILS, tuple(files), op, file)
    return Redirects(taken, Effect.RUNS, tuple(files), ops[0], files[0])
