"""Windows batch files (``.bat``, ``.cmd``): the installs cmd.exe runs, on Windows.

Read with tree-sitter-batch (cmd.exe's grammar: ``^`` continuations and escapes, ``&``, ``&&``,
``||``, ``( ... )`` blocks, ``if``/``for``, ``REM`` and ``::`` comments, ``set NAME=value`` and
``set "NAME=value"``), never as sh. ``%NAME%`` (and ``!NAME!`` under delayed expansion) is the value a
``set`` above gave it, names in any case; ``%1`` and ``%%v`` are the values of a call or a loop,
not known. What follows ``||``, or sits in an ``if``/``for`` or after the first label (a subroutine,
run when called), may not run. ``cd``/``pushd``/``popd`` move the later commands (``cd /d``);
``%~dp0`` is the script's own folder. A ``>`` or ``<`` that touches a word is cmd.exe's redirect,
as the shell's (FAL007). The script runs on Windows: a Linux wheel installed there is FAL014.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from fa_lint.model import Parsed, ParseProblem
from fa_lint.shell.parse import Chunk, Command, Word
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import State
from fa_lint.sources import _windows

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

NAME = "batch"
_VARIABLE = re.compile(r"%(~dp0|[A-Za-z_][\w.-]*)%|!([A-Za-z_][\w.-]*)!|%(~?[\w]*\d)|%%(\w)")
_BODIES = frozenset({"if_stmt", "for_stmt"})  # what runs in them may not run


@functools.cache
def _parser() -> Parser:
    import tree_sitter

    from fa_lint.shell.parse import grammar  # (the extension module, without the package's __init__)

    return tree_sitter.Parser(tree_sitter.Language(grammar("tree_sitter_batch")))


def parse(path: str, text: str) -> Iterator[Parsed]:
    return _windows.read(path, text, NAME, _parser(), _Walk)


class _Walk:
    def __init__(self, scanner: Scanner, chunk: Chunk) -> None:
        self.scanner = scanner
        self.chunk = chunk
        self.names = _windows.Names()
        self.state = State(self.names.scope)
        self.subroutines = False  # past the first label: code a ``call`` runs, if any
        self.problems: list[ParseProblem] = []

    def run(self, root: Node) -> None:
        for node in root.named_children:
            self.statement(node, False)

    def statement(self, node: Node, possible: bool, depth: int = 0) -> None:
        kind = node.type
        possible = possible or self.subroutines
        if depth > _windows.MAX_DEPTH:
            if not self.problems:
                self.problems.append(_windows.too_deep(self.scanner.index, self.chunk.span(node)[0]))
        elif kind == "label":
            self.subroutines = True
        elif kind == "variable_assignment":
            self._set(node, possible)
        elif kind in ("cmd", "call_stmt", "redirect_stmt"):
            self._command(node, possible)
        elif kind == "cond_exec":
            self._either(node, possible, depth)
        else:
            inner = possible or kind in _BODIES
            for child in node.named_children:
                self.statement(child, inner, depth + 1)

    def _either(self, node: Node, possible: bool, depth: int) -> None:
        """``a || b``: b runs only when a fails; ``a && b``: b when a succeeds (certain as a's)."""
        after_or = False
        for child in node.children:
            if child.type == "||":
                after_or = True
            elif child.is_named:
                self.statement(child, possible or after_or, depth + 1)

    def _set(self, node: Node, possible: bool) -> None:
        name = next((c for c in node.named_children if c.type == "variable_name"), None)
        value = next((c for c in node.named_children if c.type.endswith("assignment_value")), None)
        if name is None:
            return  # set /a, set /p: arithmetic or the user's input
        key = self._source(name)
        raw = self._source(value) if value is not None else ""
        if value is not None and value.type == "quoted_assignment_value":
            raw = raw.strip('"')
        text = self.names.assign(key, f"%{key}%", self._expand(raw.rstrip(" \t")), possible)
        start, end = self.chunk.span(name)[0], self.chunk.span(value or name)[1]
        self.scanner.assign(key.upper(), text, start, end, possible)

    def _command(self, node: Node, possible: bool) -> None:
        cmd = next((c for c in [node, *node.named_children] if c.type in ("cmd", "call_stmt")), None)
        if cmd is None:
            return
        words = _windows.command_words(self._words(cmd, node))
        if not words:
            return
        head = words[0].text.casefold()
        if head in ("cd", "chdir", "pushd", "popd"):
            self._cd(head, words[1:])
            return
        start, end = self.chunk.span(node)
        self.scanner.command(Command(words, start, end), self.state, possible, False)

    def _cd(self, head: str, args: list[Word]) -> None:
        state = self.state
        if head == "popd":
            state.cwd = state.dirs.pop() if state.dirs else state.cwd
            return
        if head == "pushd":
            state.dirs.append(state.cwd)
        target = next((a for a in args if not a.text.startswith("/")), None)
        if target is not None and "$" not in target.text:
            state.cwd = posixpath.normpath(posixpath.join(state.cwd, target.text))

    def _words(self, cmd: Node, whole: Node) -> list[Word]:
        """The command's words, each after cmd.exe removes its quotes and carets; a word a redirect
        touches (``flash-attn>=2.5``) marked with the operator that cut it."""
        nodes = [c for c in cmd.named_children if c.type == "command_name"]
        for c in cmd.named_children:
            if c.type == "argument_list":
                nodes += c.named_children
        cuts = {}
        for r in (c for c in whole.named_children if c.type == "redirection"):
            op = r.named_children[0] if r.named_children else None
            if op is not None:
                cuts[self.chunk.span(r)[0]] = self._source(op)
        words: list[Word] = []
        for n in nodes:
            raw = self._source(n)
            quoted = raw.startswith('"')
            text = self._expand(raw.replace('"', "") if quoted else raw.replace("^", ""))
            start, end = self.chunk.span(n)
            word = Word(text.replace("\\", "/"), start, end, quoted, cuts.get(end))
            if words and words[-1].end == word.start:  # nothing between: one argument
                last = words[-1]
                word = Word(last.text + word.text, last.start, word.end, last.quoted or quoted, word.cut)
                words[-1] = word
            else:
                words.append(word)
        return words

    def _expand(self, raw: str) -> str:
        return _VARIABLE.sub(self._reference, raw)

    def _reference(self, m: re.Match[str]) -> str:
        if m.group(1) == "~dp0":
            return "./"  # the script's own folder, with its trailing separator
        name = m.group(1) or m.group(2)
        if name is not None:
            return self.names.reference(name, m.group())
        return self.names.reference(m.group(), m.group())  # %1, %%v: a call's or a loop's value

    def _source(self, node: Node) -> str:
        return self.chunk.source(node)
