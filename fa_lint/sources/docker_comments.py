"""Where a Dockerfile's comments are, as BuildKit and the shell of its ``RUN`` read them.

BuildKit takes a line whose first non-blank character is ``#`` for a comment (inside a continued
instruction too, where it drops the line); anywhere else a ``#`` is the instruction's text. A shell-form
``RUN``, ``CMD`` or ``ENTRYPOINT`` hands that text to ``/bin/sh -c``, where a word-initial ``#`` starts a
comment; an exec-form array (``RUN ["bash", "-c", "..."]``), ``ENV``, ``ARG``, ``FROM`` and ``COPY`` have
none: ``ENV A=1 # note`` sets more variables, and a ``#`` after an exec form's ``]`` makes it no JSON,
so BuildKit runs the line as a shell command instead (``parseMaybeJSON``,
frontend/dockerfile/parser/line_parsers.go). A here-document's body is text. Lines are counted as
everywhere in fa-lint: a line ends at ``\\n``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from fa_lint.model import ParseProblem
from fa_lint.sources.dockerfile import Instruction, _args_start, exec_json, instructions
from fa_lint.syntax import comments
from fa_lint.syntax.text import TextIndex

# The instructions whose shell form is run by a shell, which reads their comments.
_SHELL_FORMS = frozenset({"RUN", "CMD", "ENTRYPOINT"})


def comment_starts(text: str) -> dict[int, int]:
    """{line (1-based): column (0-based) of the ``#`` that opens its comment}, as in ``syntax.comments``."""
    index = TextIndex("", text)
    bodies: list[tuple[int, int]] = []  # here-document bodies: text, whatever they hold
    out: dict[int, int] = {}
    for ins in instructions(index):
        if isinstance(ins, ParseProblem):
            break  # (an unclosed here-document: the rest is its body)
        bodies += ins.heredocs
        out.update(_shell_comments(index, ins))
    in_body = _inside(bodies)
    offset = 0
    for n, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip(" \t")
        if stripped.startswith("#") and not in_body(offset):
            out[n] = len(line) - len(stripped)
        offset += len(line) + 1
    return out


def _shell_comments(index: TextIndex, ins: Instruction) -> dict[int, int]:
    """The shell's comments in a shell-form ``RUN``/``CMD``/``ENTRYPOINT`` (none in any other)."""
    if ins.keyword not in _SHELL_FORMS or _exec_form(ins):
        return {}
    skip = _args_start(ins.body, 0) if ins.keyword == "RUN" else 0
    script = ins.body[skip:]
    start = ins.args + skip
    script += index.text[ins.end : ins.last]  # its here-documents, as its shell reads them
    line_starts = [0, *(i + 1 for i, c in enumerate(script) if c == "\n")]
    out: dict[int, int] = {}
    for line, col in comments.starts(script, "shell").items():
        at, column = index.position(start + line_starts[line - 1] + col)
        out[at] = column - 1
    return out


def _exec_form(ins: Instruction) -> bool:
    """Whether an instruction's arguments are an exec-form JSON array (after RUN's own flags)."""
    script = ins.body[_args_start(ins.body, 0) if ins.keyword == "RUN" else 0 :]
    return script.lstrip().startswith("[") and exec_json(script) is not None


def exec_form_lines(text: str) -> set[int]:
    """The lines of instructions written as an exec-form array (``RUN ["bash", "-c", "..."]``, a
    JSON ``CMD``, ``SHELL``): text after the ``]`` makes it no JSON, and BuildKit runs the line as a
    shell command instead, so nothing may be added to them (``--add-noqa``)."""
    index = TextIndex("", text)
    lines: set[int] = set()
    for ins in instructions(index):
        if isinstance(ins, ParseProblem):
            break
        if _exec_form(ins):
            lines.update(range(index.position(ins.start)[0], index.position(ins.end)[0] + 1))
    return lines


def _inside(spans: list[tuple[int, int]]) -> Callable[[int], bool]:
    """Whether an offset lies in one of ``spans`` (in order, not overlapping)."""
    starts = [a for a, _ in spans]

    def test(offset: int) -> bool:
        i = bisect.bisect_right(starts, offset) - 1
        return i >= 0 and offset < spans[i][1]

    return test
