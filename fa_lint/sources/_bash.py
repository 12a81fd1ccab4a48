"""Reading bash with a real grammar: the commands a script runs, in order, each certain or possible.

tree-sitter-bash (the grammar GitHub and editors use) parses the script; this module walks the tree
once. Chosen over the hand-written lexer it replaces, which knew no control flow, and over bashlex,
which gives up on heredocs, ``[[ ]]`` and arrays: tree-sitter is error-tolerant (a broken line
becomes an ERROR node and the rest is still read), and it gives a position for every node. The
grammar is imported on first use, so only a run that checks a shell file, a Dockerfile, a workflow
or a Makefile loads it.

The walk is the shell's own semantics, cut down to what decides an install:

- ``&&``, ``;``, newlines, pipelines, subshells and ``{ }`` run in order: what runs there is as
  certain as the code around it;
- after ``||``, after a test (``[[ -v X ]] && ...``), inside ``if``/``elif``/``else``/``case``
  branches and ``while``/``until``/``for`` bodies a command is only **possible**;
- variables and the working directory fork at each branch and merge after it, so a variable set in
  ``if`` and ``else`` has both values (``FA=2.6.3`` / ``FA=2.4.2``), and one set in a single branch
  may also be unset;
- a function defined and called in the same script is followed at its first call, with ``$1``...;
  one never called is read at the end as possible;
- ``bash -c '...'`` and ``sh -c`` are read as scripts of their own.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import os
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, NamedTuple, Protocol

from fa_lint.sources._text import unescaped

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

# A variable's possible values after the walk so far; None stands for "may be unset".
Values = tuple[str | None, ...]
_MAX_DEPTH = 200  # nested constructs followed; deeper is reported, not a RecursionError
_MAX_VALUES = 16  # alternatives kept per variable and per expanded word


@functools.cache
def _parser() -> Parser:
    import tree_sitter

    return tree_sitter.Parser(tree_sitter.Language(grammar()))


def grammar() -> object:
    """tree-sitter-bash's grammar, from the extension module of the package that holds it.

    The package's ``__init__`` imports importlib.resources for a highlight query fa-lint never reads,
    and with it zipfile, tempfile, shutil and pathlib: about 13 ms on every run that reads a shell
    script, more than reading a 500-line Dockerfile. So ``tree_sitter_bash._binding`` is loaded from
    the package's folder as the import system loads it, without that ``__init__``; in any other
    layout, the package is imported.
    """
    import importlib.machinery
    import importlib.util

    package = importlib.util.find_spec("tree_sitter_bash")
    folders = (package.submodule_search_locations or []) if package else []
    for path in (
        os.path.join(f, "_binding" + s) for f in folders for s in importlib.machinery.EXTENSION_SUFFIXES
    ):
        spec = importlib.util.spec_from_file_location("tree_sitter_bash._binding", path)
        if spec is not None and spec.loader is not None and os.path.isfile(path):
            binding = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(binding)
            return binding.language()
    import tree_sitter_bash

    return tree_sitter_bash.language()


# --- positions -----------------------------------------------------------------------------------


def _utf8_len(c: str) -> int:
    n = ord(c)
    return 1 if n < 0x80 else 2 if n < 0x800 else 3 if n < 0x10000 else 4


# An escaped < or > standing alone, as in `[ "$v" \< "3.0" ]` (a string comparison).
_ESCAPED_ANGLE = re.compile(r"(?<=[ \t])\\[<>](?=[ \t])")
_ASTRAL = re.compile("[\U00010000-\U0010ffff\ud800-\udfff]")  # 4-byte UTF-8, and lone surrogates


class Chunk:
    """One stretch of a file handed to the parser, and the way back from its bytes to file offsets.

    tree-sitter counts UTF-8 bytes; ``TextIndex`` counts characters. ``base`` is the character
    offset of ``text`` in the file, or ``positions`` the offset of each of its characters (a script
    in a double-quoted ``bash -c "..."``, read without its escapes). ``parse``, when given, is what
    the parser reads instead: a copy of ``text`` of equal length with what the shell never sees
    blanked out (Docker's comment lines in a continued RUN, a workflow's ``${{ }}``); words are
    still read from ``text``.
    """

    def __init__(
        self, text: str, base: int = 0, parse: str | None = None, positions: list[int] | None = None
    ) -> None:
        self.text = text
        self.base = base
        self.positions = positions
        # tree-sitter-bash knows no `\<` or `\>` operator in `[ "$v" \< "3.0" ]` and runs the lines
        # after it into one command; to the parser it is `==`, a test it knows, of the same length.
        self.seen = _ESCAPED_ANGLE.sub("==", text if parse is None else parse)
        # tree-sitter-bash 0.25 can read past its tables, and crash the process, on a "{" followed by
        # a character outside the BMP (tree-sitter/tree-sitter-bash#337). To the parser any such
        # character is U+FFFD, a word character of the same count: the words are read from ``text``.
        self.seen = _ASTRAL.sub("\ufffd", self.seen)
        seen = self.seen
        self.data = seen.encode("utf-8", "surrogatepass")
        self._starts = None if seen.isascii() else list(itertools.accumulate(map(_utf8_len, seen), initial=0))
        # ASCII text placed in one stretch of the file: a byte is a character, a character base + it
        self._flat = self._starts is None and positions is None

    def index(self, byte: int) -> int:
        """The character of ``text`` at a byte position of ``data`` (past its end: the end, see ``_tree``)."""
        chars = byte if self._starts is None else bisect.bisect_left(self._starts, byte)
        return min(chars, len(self.text))

    def at(self, index: int) -> int:
        """The file offset of a character of ``text`` (``len(text)``: just past the last one)."""
        if self.positions is None:
            return self.base + index
        if index < len(self.positions):
            return self.positions[index]
        return self.positions[-1] + 1 if self.positions else self.base

    def offset(self, byte: int) -> int:
        return self.at(self.index(byte))

    def span(self, node: Node) -> tuple[int, int]:
        start, end = self.index(node.start_byte), self.index(node.end_byte)
        if self._flat:
            return self.base + start, self.base + max(start, end)
        return self.at(start), self.at(end - 1) + 1 if end > start else self.at(start)

    def source(self, node: Node) -> str:
        if self._flat:  # slicing past the end stops at it, as index() does
            return self.text[node.start_byte : node.end_byte]
        return self.text[self.index(node.start_byte) : self.index(node.end_byte)]

    def part(self, start: int, end: int) -> Chunk:
        """The characters ``start:end`` of ``text`` as a chunk of their own, still placed in the file."""
        if self.positions is None:
            return Chunk(self.text[start:end], self.at(start), self.seen[start:end])
        return Chunk(self.text[start:end], parse=self.seen[start:end], positions=self.positions[start:end])


# --- words -----------------------------------------------------------------------------------------


class Word(NamedTuple):
    text: str  # after quote removal; variable references are kept as written
    start: int  # offsets into the file text
    end: int
    quoted: bool = False
    cut: str | None = None  # the redirect operator that ended this word mid-token (flash-attn>=2.5)


class Command:
    __slots__ = ("end", "env", "start", "words")

    def __init__(
        self, words: list[Word], start: int = 0, end: int = 0, env: dict[str, str] | None = None
    ) -> None:
        self.words = words
        self.start = start
        self.end = end
        self.env = {} if env is None else env  # VAR=x prefixes: set for this command only


_ESCAPE = re.compile(r"\\(\n|.)", re.S)
_DQ_ESCAPE = re.compile(r'\\([$`"\\\n])')
_QUOTED = {"string", "raw_string", "ansi_c_string", "translated_string"}


def _unescape(m: re.Match[str]) -> str:
    return "" if m.group(1) == "\n" else m.group(1)


def _value(node: Node, chunk: Chunk) -> str:
    """A word's text as the command receives it, expansions left as written."""
    kind = node.type
    raw = chunk.source(node)
    if kind == "word":
        return _ESCAPE.sub(_unescape, raw) if "\\" in raw else raw
    if kind == "raw_string":
        return raw[1:-1] if len(raw) > 1 and raw.endswith("'") else raw[1:]
    if kind in ("string", "translated_string"):
        inner = raw[raw.index('"') + 1 :]
        inner = inner[:-1] if inner.endswith('"') else inner
        return _DQ_ESCAPE.sub(_unescape, inner) if "\\" in inner else inner
    if kind == "ansi_c_string":
        return raw[2:-1]
    if kind == "concatenation":
        return "".join(_value(c, chunk) for c in node.children)
    return raw  # $X, ${X}, $(...), numbers: as written


def _quoted(node: Node) -> bool:
    return node.type in _QUOTED or (node.type == "concatenation" and any(_quoted(c) for c in node.children))


def word(node: Node, chunk: Chunk) -> Word:
    start, end = chunk.span(node)
    return Word(_value(node, chunk), start, end, _quoted(node))


# --- variables -------------------------------------------------------------------------------------


class Scope:
    """Shell variables, layered: a branch writes its own layer over what was set before it."""

    def __init__(self, parent: Scope | None = None, values: Mapping[str, str] | None = None) -> None:
        self.parent = parent
        self.local: dict[str, Values] = {k: (v,) for k, v in (values or {}).items()}

    def get(self, name: str) -> Values | None:
        scope: Scope | None = self
        while scope is not None:
            found = scope.local.get(name)
            if found is not None:
                return found
            scope = scope.parent
        return None

    def set(self, name: str, values: Values) -> None:
        self.local[name] = values

    def child(self) -> Scope:
        return Scope(self)


_VAR = re.compile(
    r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*|[0-9@*])(?:(:?[-=])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*|[0-9@*])"
    r"|\(([A-Za-z_][A-Za-z0-9_]*)\))"
)
# what no value can replace: a CI expression, a command substitution, ${X%%.*} and the like
_OPAQUE = re.compile(r"\$\{\{.*?\}\}|\$\(.*?\)|`[^`]*`|\$\{[^}]*\}")


class Expanded(NamedTuple):
    texts: tuple[str, ...]  # every text the word can become (one, unless a branch set it)
    unresolved: str | None  # the first reference with no value

    @property
    def text(self) -> str:
        return self.texts[0]


def expand(text: str, scope: Scope, make: bool = False) -> Expanded:
    """Substitute ``$X``, ``${X}``, ``${X:-default}`` (and ``$(X)`` in Makefiles) from known values."""
    if make:
        text = text.replace("$$", "$")  # make's escape for the shell's own $
    if "$" not in text and "`" not in text:
        return Expanded((text,), None)
    missing: list[str] = []
    pieces: list[tuple[str, ...]] = []
    pos = 0
    for m in _VAR.finditer(text):
        pieces.append((text[pos : m.start()],))
        pos = m.end()
        name = m.group(1) or m.group(4) or m.group(5)
        if m.group(5) and not make:
            missing.append(m.group())  # $(command) substitution: unknowable
            pieces.append((m.group(),))
            continue
        values = scope.get(name)
        default = m.group(3) if m.group(2) is not None else None
        options = [
            default if v is None or (v == "" and (m.group(2) or "").startswith(":")) else v
            for v in values or (None,)
        ]
        if None in options:
            missing.append(m.group())
            pieces.append((m.group(),))
        else:
            pieces.append(tuple(dict.fromkeys(o for o in options if o is not None)))
    pieces.append((text[pos:],))
    texts = tuple(itertools.islice(("".join(p) for p in itertools.product(*pieces)), _MAX_VALUES))
    if not missing:
        left = _OPAQUE.search(texts[0]) or (None if make else _VAR.search(texts[0]))
        if left:
            missing.append(left.group())  # only running it tells, or a value that was itself unknown
    return Expanded(texts, missing[0] if missing else None)


# --- the walk --------------------------------------------------------------------------------------


class State:
    """What a command sees: the variables in force and the working directory."""

    __slots__ = ("cwd", "dirs", "scope")

    def __init__(self, scope: Scope, cwd: str = ".", dirs: list[str] | None = None) -> None:
        self.scope = scope
        self.cwd = cwd
        self.dirs = [] if dirs is None else dirs  # the pushd stack

    def fork(self) -> State:
        return State(self.scope.child(), self.cwd, list(self.dirs))

    def merge(self, branches: list[State], exhaustive: bool) -> None:
        """After a branch point: each variable a branch set has the values any branch left it."""
        names = dict.fromkeys(n for b in branches for n in b.scope.local)
        for name in names:
            before = self.scope.get(name) or (None,)
            found: list[str | None] = []
            for b in branches:
                found += b.scope.local.get(name, before)
            if not exhaustive:
                found += before
            self.scope.set(name, tuple(dict.fromkeys(found))[:_MAX_VALUES])
        cwds = {b.cwd for b in branches}
        if exhaustive and len(cwds) == 1:
            self.cwd = cwds.pop()


class Handler(Protocol):
    """What the walk hands each command that is not a shell builtin: the install scanner."""

    def command(self, cmd: Command, state: State, possible: bool, make: bool) -> Word | None:
        """Read one command; return the script of a ``bash -c SCRIPT`` it runs, to be read in place."""

    def problem(self, start: int, end: int, message: str) -> None: ...


_SHELLS = {"bash", "sh", "zsh", "dash"}
# A command whose failure is an answer, not an error: what follows its && runs only on some machines.
_TESTS = {"test", "[", "[[", "which", "type", "hash", "grep", "nvidia-smi", "nvcc", "lspci", "rocm-smi"}
_SEQUENCES = {"program", "compound_statement", "do_group", "pipeline", "negated_command"}


class _Function:
    def __init__(self, body: Node) -> None:
        self.body = body
        self.called = False  # followed once, at its first call: later calls repeat what it did


class Walk:
    """One parsed stretch of shell, walked once in the order it runs."""

    def __init__(self, chunk: Chunk, handler: Handler, make: bool = False, reread: bool = False) -> None:
        self.chunk = chunk
        self.handler = handler
        self.make = make
        self.reread = reread  # a line of a stretch the grammar could not read: never split again
        self.functions: dict[str, _Function] = {}
        self.too_deep = False  # reported once

    def run(self, state: State, depth: int = 0, possible: bool = False) -> None:
        self._each(_tree(self.chunk).named_children, state, possible, depth)
        for fn in self.functions.values():  # never called: what they would install is only possible
            if not fn.called:
                fn.called = True
                self._statement(fn.body, state.fork(), True, depth + 1)

    def _each(self, nodes: Iterable[Node], state: State, possible: bool, depth: int) -> None:
        for node in nodes:
            self._statement(node, state, possible, depth)

    def _branch(self, nodes: Iterable[Node], state: State, depth: int) -> State:
        """Walk what runs only on some paths, in a fork of the state; return the fork to merge."""
        fork = state.fork()
        self._each(nodes, fork, True, depth)
        return fork

    def _statement(self, node: Node, state: State, possible: bool, depth: int) -> None:
        if depth > _MAX_DEPTH:
            if not self.too_deep:
                self.too_deep = True
                start, end = self.chunk.span(node)
                self.handler.problem(
                    start, end, f"shell nested more than {_MAX_DEPTH} levels deep is not read"
                )
            return
        kind, depth = node.type, depth + 1
        if kind == "command":
            self._command(node, [], state, possible, depth)
        elif kind == "redirected_statement":
            body = node.child_by_field_name("body")
            redirects = node.children_by_field_name("redirect")
            if body is not None and body.type == "command":
                self._command(body, redirects, state, possible, depth)
            elif body is not None:
                self._statement(body, state, possible, depth)
        elif kind == "list":
            self._list(node, state, possible, depth)
        elif kind in _SEQUENCES:
            self._each(node.named_children, state, possible, depth)
        elif kind == "ERROR":
            self._error(node, state, possible, depth)
        elif kind == "subshell":
            self._each(node.named_children, state.fork(), possible, depth)  # cd and variables stay inside
        elif kind == "if_statement":
            self._if(node, state, possible, depth)
        elif kind == "case_statement":
            branches, default = [], False
            for item in (c for c in node.named_children if c.type == "case_item"):
                patterns = {(v.start_byte, v.end_byte) for v in item.children_by_field_name("value")}
                runs = [c for c in item.named_children if (c.start_byte, c.end_byte) not in patterns]
                branches.append(self._branch(runs, state, depth))
                default = default or any(
                    self.chunk.source(v) == "*" for v in item.children_by_field_name("value")
                )
            state.merge(branches, exhaustive=default)
        elif kind in ("while_statement", "for_statement", "c_style_for_statement"):
            self._loop(node, state, possible, depth)
        elif kind == "function_definition":
            name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
            if name is not None and body is not None:
                self.functions.setdefault(self.chunk.source(name), _Function(body))
        elif kind in ("variable_assignment", "variable_assignments", "declaration_command"):
            self._assign(node, state)
        elif kind == "unset_command":
            for child in node.named_children:
                if not self.chunk.source(child).startswith("-"):
                    state.scope.set(self.chunk.source(child), (None,))

    def _list(self, node: Node, state: State, possible: bool, depth: int) -> None:
        """``a && b || c``: what runs after ``||``, or after a test's ``&&``, may not run."""
        spine: list[tuple[str, Node]] = []  # a && b || c nests to the left: no recursion per operator
        parts = [c for c in node.children if c.type != "comment"]
        while node.type == "list" and len(parts) == 3:
            spine.append((parts[1].type, parts[2]))
            node = parts[0]
            parts = [c for c in node.children if c.type != "comment"]
        if node.type == "list":  # not the a OP b shape: read its parts in order
            self._each(node.named_children, state, possible, depth)
        else:
            self._statement(node, state, possible, depth)
        maybe = False
        for op, right in reversed(spine):
            maybe = maybe or op == "||" or self._is_test(node)
            if maybe:
                state.merge([self._branch([right], state, depth)], exhaustive=False)
            else:
                self._statement(right, state, possible, depth)
            node = right

    def _is_test(self, node: Node) -> bool:
        if node.type == "redirected_statement":
            body = node.child_by_field_name("body")
            return body is not None and self._is_test(body)
        if node.type in ("test_command", "negated_command"):
            return True
        name = node.child_by_field_name("name") if node.type == "command" else None
        if name is None:
            return False
        head = posixpath.basename(self.chunk.source(name))
        args = [self.chunk.source(a) for a in node.children_by_field_name("argument")]
        if head == "command":
            return args[:1] == ["-v"]
        return head in _TESTS or (head.startswith("python") and "-c" in args)

    def _if(self, node: Node, state: State, possible: bool, depth: int) -> None:
        conditions, body = _then(node)
        self._each(conditions, state, possible, depth)
        branches = [self._branch(body, state, depth)]
        exhaustive = False
        for clause in node.named_children:
            if clause.type == "elif_clause":
                conditions, body = _then(clause)
                branches.append(self._branch([*conditions, *body], state, depth))
            elif clause.type == "else_clause":
                branches.append(self._branch(clause.named_children, state, depth))
                exhaustive = True
        state.merge(branches, exhaustive)

    def _loop(self, node: Node, state: State, possible: bool, depth: int) -> None:
        """A loop body may run no time at all; ``for v in a b`` gives ``v`` each value."""
        self._each(node.children_by_field_name("condition"), state, possible, depth)
        fork = state.fork()
        var, values = node.child_by_field_name("variable"), node.children_by_field_name("value")
        if node.type == "for_statement" and var is not None:
            found = [expand(_value(v, self.chunk), state.scope, self.make) for v in values]
            each: Values = (None,)
            if found and not any(e.unresolved for e in found):
                each = tuple(dict.fromkeys(t for e in found for t in e.texts))[:_MAX_VALUES]
            fork.scope.set(self.chunk.source(var), each)
        body = node.child_by_field_name("body")
        if body is not None:
            self._statement(body, fork, True, depth)
        state.merge([fork], exhaustive=False)

    def _assign(self, node: Node, state: State) -> None:
        """``A=1``, ``export A=1 B``, ``local -r C=2``: shell variables from here on."""
        for child in [node] if node.type == "variable_assignment" else node.named_children:
            if child.type == "variable_name":  # export A: A keeps its value
                name = self.chunk.source(child)
                state.scope.set(name, state.scope.get(name) or ("",))
            elif child.type == "variable_assignment":
                name_node, value = child.child_by_field_name("name"), child.child_by_field_name("value")
                if name_node is None:
                    continue
                name = self.chunk.source(name_node)
                if value is not None and value.type == "array":
                    state.scope.set(name, (None,))  # arrays are not followed
                    continue
                text = "" if value is None else _value(value, self.chunk)
                exp = expand(text, state.scope, self.make)
                state.scope.set(name, (text,) if exp.unresolved else exp.texts)

    # simple commands

    def _command(self, node: Node, redirects: list[Node], state: State, possible: bool, depth: int) -> None:
        args: list[Node] = []  # the command name first
        env: dict[str, str] = {}
        for child in node.named_children:
            if child.type == "variable_assignment" and not args:
                name, value = child.child_by_field_name("name"), child.child_by_field_name("value")
                if name is not None:
                    env[self.chunk.source(name)] = "" if value is None else _value(value, self.chunk)
            elif child.type == "command_name":
                args.append(child.named_children[0] if child.named_children else child)
            elif child.type.endswith("_redirect"):
                redirects = [*redirects, child]
            elif child.type != "comment":
                args.append(child)
        if not args:  # A=1 B=2 on their own set shell variables
            self._each(node.named_children, state, possible, depth)
            return
        args, words = self._with_redirects(args, redirects)
        start, end = self.chunk.span(node)
        cmd = Command(words, start, end, env)
        head = words[0].text
        if head in ("cd", "pushd", "popd"):
            self._cd(head, words[1:], state)
        elif head in self.functions:
            self._call(self.functions[head], words[1:], state, possible, depth)
        else:
            script = self.handler.command(cmd, state, possible, self.make)
            if script is not None:
                self._inline(
                    next(n for n, w in zip(args, words, strict=True) if w is script), state, possible, depth
                )
            elif posixpath.basename(head) in _SHELLS:  # bash <<EOF: the heredoc is the script
                for r in redirects:
                    for body in (c for c in r.children if c.type == "heredoc_body"):
                        self._inline(body, state, possible, depth)

    def _with_redirects(self, args: list[Node], redirects: list[Node]) -> tuple[list[Node], list[Word]]:
        """The command's words: one a redirect cut short is marked (flash-attn>=2.5), and words
        after a redirect's file are still arguments (tree-sitter-bash hangs them on the redirect)."""
        cuts: dict[int, str] = {}
        for r in redirects:
            op = next((c for c in r.children if not c.is_named), None)
            if r.type == "file_redirect" and op is not None:
                cuts[self.chunk.offset(r.start_byte)] = op.type
                args = [*args, *r.children_by_field_name("destination")[1:]]
        args, words = _joined(args, [word(n, self.chunk) for n in args])
        return args, [
            Word(w.text, w.start, w.end, w.quoted, cut=cuts[w.end]) if w.end in cuts else w for w in words
        ]

    def _cd(self, head: str, args: list[Word], state: State) -> None:
        if head == "popd":
            state.cwd = state.dirs.pop() if state.dirs else state.cwd
            return
        if head == "pushd":
            state.dirs.append(state.cwd)
        target = next((a for a in args if not a.text.startswith("-") or a.text == "-"), None)
        if target is None or target.text == "-":
            state.cwd = "~" if target is None else state.cwd
            return
        exp = expand(target.text, state.scope, self.make)
        # an unknown folder stays as written, so `cd $DIR` still meets `git clone URL $DIR`
        path = target.text if exp.unresolved or len(exp.texts) > 1 else exp.text
        state.cwd = posixpath.normpath(posixpath.join(state.cwd, path))

    def _call(self, fn: _Function, args: list[Word], state: State, possible: bool, depth: int) -> None:
        if fn.called:
            return
        fn.called = True
        caller = state.scope
        state.scope = caller.child()
        found = [expand(a.text, caller, self.make) for a in args]
        for i, exp in enumerate(found[:9], start=1):
            state.scope.set(str(i), (None,) if exp.unresolved else exp.texts)
        every: Values = (None,) if any(e.unresolved for e in found) else (" ".join(e.text for e in found),)
        state.scope.set("@", every)
        state.scope.set("*", every)
        self._statement(fn.body, state, possible, depth)
        # its assignments are global, as in bash; its positional parameters are not
        for name, values in state.scope.local.items():
            if not (name.isdigit() or name in "@*"):
                caller.set(name, values)
        state.scope = caller

    def _error(self, node: Node, state: State, possible: bool, depth: int) -> None:
        """A stretch tree-sitter-bash could not read. Its error recovery can run the lines after the
        error into one command, so a stretch over several lines is read again a line at a time
        (``\\`` continuations kept); how those lines nested is lost, so what they run is possible."""
        start, end = self.chunk.index(node.start_byte), self.chunk.index(node.end_byte)
        raw = self.chunk.text[start:end]
        if self.reread or "\n" not in raw.strip():
            self._each(node.named_children, state, possible, depth)
            return
        for begin, end in _logical_lines(raw):
            if raw[begin:end].strip():
                chunk = self.chunk.part(start + begin, start + end)
                Walk(chunk, self.handler, self.make, reread=True).run(state, depth, possible=True)

    def _inline(self, node: Node, state: State, possible: bool, depth: int) -> None:
        """``bash -c '...'`` or ``bash <<EOF``: a script of its own, read where it is written."""
        start, end = self.chunk.index(node.start_byte), self.chunk.index(node.end_byte)
        raw = self.chunk.text[start:end]
        if node.type == "string":  # what the inner shell reads: the string without its escapes
            kept: list[int] = []
            i = 1
            while i < len(raw) - (raw.endswith('"') and len(raw) > 1):
                if raw[i] == "\\" and raw[i + 1 : i + 2] in ('"', "\\", "$", "`", "\n"):
                    i += 1
                    if raw[i] == "\n":
                        i += 1
                        continue
                kept.append(i)
                i += 1
            chunk = Chunk("".join(raw[k] for k in kept), positions=[self.chunk.at(start + k) for k in kept])
        else:
            quoted = node.type == "raw_string"
            inner = raw[1 : -1 if len(raw) > 1 and raw.endswith("'") else None] if quoted else raw
            if self.chunk.positions is None:
                chunk = Chunk(inner, self.chunk.at(start + quoted))
            else:
                chunk = Chunk(inner, positions=[self.chunk.at(start + quoted + k) for k in range(len(inner))])
        Walk(chunk, self.handler, self.make).run(state.fork(), depth)


def _logical_lines(text: str) -> Iterator[tuple[int, int]]:
    """Where each line starts and ends, a newline after an odd run of backslashes continuing it."""
    begin = 0
    while (end := unescaped(text, "\n", begin)) >= 0:
        yield begin, end
        begin = end + 1
    yield begin, len(text)


def _joined(args: list[Node], words: list[Word]) -> tuple[list[Node], list[Word]]:
    """Arguments with nothing between them are one shell word. tree-sitter-bash can split one word
    in two (``x-$PY-$PY-y`` ends a concatenation at the second ``$``), so words are joined by position,
    not by the tree; each joined word keeps the node it starts with."""
    nodes: list[Node] = []
    out: list[Word] = []
    for node, w in zip(args, words, strict=True):
        if out and out[-1].end == w.start:
            last = out[-1]
            out[-1] = Word(last.text + w.text, last.start, w.end, last.quoted or w.quoted)
            continue
        nodes.append(node)
        out.append(w)
    return nodes, out


def _then(node: Node) -> tuple[list[Node], list[Node]]:
    """An if or elif clause's conditions (before ``then``) and body (after it, up to elif/else)."""
    conditions: list[Node] = []
    body: list[Node] = []
    seen = False
    for child in node.children:
        if child.type == "then":
            seen = True
        elif child.type in ("elif_clause", "else_clause"):
            break
        elif child.is_named:
            (body if seen else conditions).append(child)
    return conditions, body


def _tree(chunk: Chunk) -> Node:
    """The parse of a chunk; an unclosed quote at its end is closed first, as the reader meant it."""
    tree = _parser().parse(chunk.data)
    root = tree.root_node
    last = root.children[-1] if root.children else None
    if root.has_error and last is not None and last.type == "ERROR" and last.end_byte >= len(chunk.data):
        tail = chunk.data[last.start_byte :].lstrip()
        if tail[:1] in (b'"', b"'") and tail.count(tail[:1]) % 2 == 1:
            root = _parser().parse(chunk.data + tail[:1]).root_node
    return root
