"""Where a shell stops at a syntax error: an unquoted ``<`` or ``>`` with no file after it.

bash and dash read a whole line (a complete command: statements joined by ``;`` or ``&``, and any
``if``, loop or function around them) before they run any of it; a syntax error in it makes them run
none of it and exit with status 2, so nothing after it runs either (``scripts/shell_syntax_stop.py``
shows it in both shells, as a file, with ``-c`` and with ``-e``). ``fa_lint.shell.walk`` hands each
command past the stop to its handler as one that never runs.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fa_lint._lazy import Lazy
from fa_lint._records import NamedTuple
from fa_lint.shell.parse import Chunk
from fa_lint.shell.redirects import Effect, read

if TYPE_CHECKING:
    from tree_sitter import Node

# An operator with nothing but blanks (or a \ continuation) before the end of the line or a list
# operator: the only way a redirect is a syntax error. The tree says whether it is an operator.
_BARE_OPERATOR = re.compile(r"([<>]+&?|&>>?)(?=[ \t]*(?:\\\n[ \t]*)*(?:$|[\n;&|()]))")
_WORD_TAIL = Lazy(r"[^\s;&|()<>]*$")
_OPERATORS = {"<", ">", ">>", "&>", "&>>", "<&", ">&", ">|", "<<", "<<-", "<<<", "<>", "<&-", ">&-"}
_REDIRECT_PARENTS = {"file_redirect", "heredoc_redirect", "herestring_redirect", "ERROR"}


def unescaped_newline(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` holds a newline that ends a line (one not after a backslash)."""
    return any(text[i] == "\n" and (i == 0 or text[i - 1] != "\\") for i in range(start, end))


class Stop(NamedTuple):
    """Where a shell stops: a syntax error, ``flash-attn<`` at the end of a line."""

    start: int  # file offsets of the word and operator that make it
    end: int
    cause: str  # as written: "flash-attn<"
    why: str  # what the shell does there (``Redirects.why``)
    op: str = ""  # the operator, as written: "<"
    operator: int = 0  # where it is in the text of the stretch that stopped (not a file offset)
    # why a command after it never runs, when that is not the same shell's stop: "the image build
    # stops at the RUN of line 4" (set by the file format that knows)
    after: str = ""

    def reason(self, start: int, line: int) -> str:
        """Why a command starting at file offset ``start`` never runs, the stop being at ``line`` in
        another command: one before it on its line (or in its ``if``) is read through, never run."""
        if self.after:
            return self.after
        if start < self.start:
            return (
                f"`{self.cause}` at line {line} is a syntax error: the shell reads the whole line (and any "
                "`if`, loop or function around it) before it runs any of it, so it runs none of it and "
                "stops (exit status 2)"
            )
        stopped = "the shell stops there (exit status 2), before it"
        return f"`{self.cause}` at line {line} is a syntax error: {stopped}"


def find(chunk: Chunk, root: Node, nodes: list[Node]) -> tuple[int, Stop | None]:
    """The first top-level statement of the line (or compound command) that holds an operator
    with no file after it, and that stop; (len(nodes), None) when there is none. bash and dash
    parse up to the newline that ends a complete command before running any of it: statements
    joined by ``;`` or ``&`` on one line fail together."""
    text = chunk.text
    for m in _BARE_OPERATOR.finditer(text):
        at = m.start() + len(m.group(1)) - 1  # the operator's last character
        token = root.descendant_for_byte_range(chunk.byte(at), chunk.byte(at) + 1)
        if token is None or token.is_named or token.type not in _OPERATORS:
            continue
        if token.parent is None or token.parent.type not in _REDIRECT_PARENTS:
            continue
        op = chunk.index(token.start_byte)
        found = read(text, op)
        if found is None or found.effect is not Effect.STOPS:
            continue
        word_start = _WORD_TAIL().search(text, 0, op)  # the word the operator ends: flash-attn<
        begin = word_start.start() if word_start else op
        stop = Stop(
            chunk.at(begin),
            chunk.at(op + len(found.text)),
            text[begin:op] + found.text,
            found.why(),
            found.text,
            op,
        )
        return _line_of(chunk, nodes, op), stop
    return len(nodes), None


def _line_of(chunk: Chunk, nodes: list[Node], at: int) -> int:
    """The first of the statements that share a line (or compound command) with offset ``at``."""
    first = 0
    for i, node in enumerate(nodes):
        start = chunk.index(node.start_byte)
        if i and unescaped_newline(chunk.text, chunk.index(nodes[i - 1].end_byte), start):
            first = i  # a newline between two statements: a new line begins
        if chunk.index(node.end_byte) > at or start >= at:
            return first
    return first
