"""PowerShell scripts (``.ps1``): the installs they run, on Windows.

Read with tree-sitter-powershell, never as sh: ``#`` and ``<# ... #>`` comments, the backtick's
escapes and line continuations, ``'...'`` (as written) and ``"..."`` strings, in which ``$name``,
``${name}`` and ``$env:NAME`` are the values the script assigns them (``$name = "2.6.3"``,
``$env:MAX_JOBS = 4``; names in any case) and ``$(...)`` is a value only a run knows. ``&`` calls a
command by a name or path (``& $python -m pip install ...``: a Python, whatever the variable holds);
what follows ``||``, what sits in an ``if``/``foreach``/``while``/``switch`` or a ``catch``, and a
function's body may not run. ``Set-Location``/``cd``/``Push-Location`` move the later commands. The
script runs on Windows: a Linux wheel installed there is FAL014.
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

NAME = "powershell"
# $name, ${name}, $env:NAME (scope prefixes too: $script:name), and $(...) a run's value
_VARIABLE = re.compile(r"\$\{([^}]+)\}|\$((?:[A-Za-z]+:)?[A-Za-z_][\w]*)|\$\(")
# a value as assigned: '...' (as written), "..." (expanded), or a bare number or word
_LITERAL = re.compile(r"""'((?:[^']|'')*)'|"((?:[^"`]|`.)*)"|([\w.+-]+)""", re.S)
_ASSIGNED = re.compile(r"\$\{[^}]+\}|\$(?:[A-Za-z]+:)?[A-Za-z_]\w*")
# statements whose blocks may not run: branches, loops, handlers, and functions (run when called)
_MAYBE = frozenset(
    {
        "if_statement",
        "foreach_statement",
        "for_statement",
        "while_statement",
        "do_statement",
        "switch_statement",
        "catch_clauses",
        "trap_statement",
        "function_statement",
    }
)
_CD = frozenset({"cd", "chdir", "sl", "set-location", "pushd", "push-location", "popd", "pop-location"})


@functools.cache
def _parser() -> Parser:
    import tree_sitter

    from fa_lint.shell.parse import grammar  # (the extension module, without the package's __init__)

    return tree_sitter.Parser(tree_sitter.Language(grammar("tree_sitter_powershell")))


def parse(path: str, text: str) -> Iterator[Parsed]:
    return _windows.read(path, text, NAME, _parser(), _Walk)


class _Walk:
    def __init__(self, scanner: Scanner, chunk: Chunk) -> None:
        self.scanner = scanner
        self.chunk = chunk
        self.names = _windows.Names()
        self.state = State(self.names.scope)
        self.problems: list[ParseProblem] = []

    def run(self, root: Node) -> None:
        self.statement(root, False)

    def statement(self, node: Node, possible: bool, depth: int = 0) -> None:
        # a node with one named child is followed in a loop, not a call: an expression is a chain of
        # a dozen of them in PowerShell's grammar (logical_expression ... unary_expression)
        while True:
            kind = node.type
            if depth > _windows.MAX_DEPTH:
                if not self.problems:
                    self.problems.append(_windows.too_deep(self.scanner.index, self.chunk.span(node)[0]))
            elif kind == "command":
                self._command(node, possible)
            elif kind == "assignment_expression":
                self._assign(node, possible)
            elif kind in ("pipeline", "pipeline_chain"):
                self._chain(node, possible, depth)
            elif kind not in ("comment", "ERROR"):
                possible = possible or kind in _MAYBE
                children = node.named_children
                if len(children) == 1:
                    node, depth = children[0], depth + 1
                    continue
                for child in children:
                    self.statement(child, possible, depth + 1)
            return

    def _chain(self, node: Node, possible: bool, depth: int) -> None:
        """``a || b`` (PowerShell 7): b runs only when a fails."""
        for child in node.named_children:
            self.statement(child, possible, depth + 1)
            if child.type == "pipeline_chain_tail" and any(c.type == "||" for c in child.children):
                possible = True

    def _assign(self, node: Node, possible: bool) -> None:
        named = [c for c in node.named_children if c.type != "comment"]
        left = named[0] if named else None
        value = named[2] if len(named) >= 3 else None  # the target, the operator, the value
        written = self._source(left).strip() if left is not None else ""
        if value is None or not _ASSIGNED.fullmatch(written):
            return  # $a[0] = ..., $x.y = ...: not a variable of its own
        name = _name(written)
        text = self._value(value)
        if text is None:
            return  # a value only a run knows ((Get-Content v.txt), a function's result)
        text = self.names.assign(name, written, text, possible)
        if name.casefold().startswith("env:"):
            start, end = self.chunk.span(node)
            self.scanner.assign(name[4:].upper(), text, start, end, possible)

    def _value(self, node: Node) -> str | None:
        """A value as it is assigned: a number or a string (expanded), else unknown."""
        raw = self._source(node).strip()
        m = _LITERAL.match(raw)
        rest = raw[m.end() :].strip() if m is not None else ""
        if m is None or (rest and not rest.startswith("#")):  # (a comment may follow the value)
            return None
        if m.group(1) is not None:
            return m.group(1).replace("''", "'")
        if m.group(2) is not None:
            return self._expand(_unescape(m.group(2)))
        return m.group(3)

    def _command(self, node: Node, possible: bool) -> None:
        words = _windows.command_words(self._words(node))
        if not words:
            return
        head = words[0].text.casefold()
        if head in _CD:
            self._cd(head, words[1:])
            return
        if "$" in words[0].text and [w.text for w in words[1:3]] == ["-m", "pip"]:
            words = [Word("python", words[0].start, words[0].end), *words[1:]]  # & $python -m pip ...
        start, end = self.chunk.span(node)
        self.scanner.command(Command(words, start, end), self.state, possible, False)

    def _cd(self, head: str, args: list[Word]) -> None:
        state = self.state
        if head in ("popd", "pop-location"):
            state.cwd = state.dirs.pop() if state.dirs else state.cwd
            return
        if head in ("pushd", "push-location"):
            state.dirs.append(state.cwd)
        target = next((a for a in args if not a.text.startswith("-")), None)
        if target is not None and "$" not in target.text:
            state.cwd = posixpath.normpath(posixpath.join(state.cwd, target.text))

    def _words(self, command: Node) -> list[Word]:
        nodes = [c for c in command.named_children if c.type in ("command_name", "command_name_expr")]
        for c in command.named_children:
            if c.type == "command_elements":
                nodes += [e for e in c.named_children if e.type != "command_argument_sep"]
        words: list[Word] = []
        for n in nodes:
            start, end = self.chunk.span(n)
            raw = self._source(n)
            word = Word(self._word(raw), start, end, raw[:1] in "'\"")
            if words and words[-1].end == start:  # nothing between: one argument
                last = words[-1]
                word = Word(last.text + word.text, last.start, end, last.quoted or word.quoted)
                words[-1] = word
            else:
                words.append(word)
        return words

    def _word(self, raw: str) -> str:
        if raw[:1] == "'":
            return raw[1:-1].replace("''", "'")
        if raw[:1] == '"':
            raw = raw[1:-1]
        return self._expand(_unescape(raw)).replace("\\", "/")

    def _expand(self, raw: str) -> str:
        return _VARIABLE.sub(self._reference, raw)

    def _reference(self, m: re.Match[str]) -> str:
        written = m.group()
        if written == "$(":
            return "$("  # a subexpression: the scanner takes $(...) as a value only a run knows
        return self.names.reference(_name(written), written)

    def _source(self, node: Node) -> str:
        return self.chunk.source(node)


def _name(written: str) -> str:
    """A variable's name as PowerShell compares it: ``$env:FA`` is ``env:FA``, ``${x}`` is ``x``."""
    name = written[1:]
    return name[1:-1] if name.startswith("{") else name


def _unescape(text: str) -> str:
    """The backtick's escapes: a line continuation is nothing, any other character is itself."""
    return re.sub(r"`(\r?\n|.)", lambda m: "" if m.group(1) in ("\n", "\r\n") else m.group(1), text)
