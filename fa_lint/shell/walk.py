"""Walking a parsed script once, in the order it runs: each command it runs, certain or possible.

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
- ``bash -c '...'`` and ``sh -c`` are read as scripts of their own;
- a syntax error (an unquoted ``<`` or ``>`` with no file after it) stops the shell: bash and dash
  parse a whole line (and a whole compound command: ``if ... fi``, a function body) before running
  any of it, so nothing of that line runs, and then exit with status 2, so nothing after it runs
  either (``scripts/shell_syntax_stop.py`` shows it); those commands go to ``Handler.skipped``.

What a command does is for the ``Handler`` (``fa_lint.shell.scanner``); the walk knows only the shell.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from fa_lint.shell.parse import (
    FILE_SECONDS,
    PARSE_SECONDS,
    Chunk,
    Clock,
    Command,
    TooCostly,
    Word,
    basename,
    joined,
    logical_lines,
    tree,
    unquoted,
    word,
)
from fa_lint.shell.stops import Stop
from fa_lint.shell.stops import find as find_stop
from fa_lint.shell.variables import MAX_VALUES, State, Values, expand

if TYPE_CHECKING:
    from tree_sitter import Node

_MAX_DEPTH = 200  # nested constructs followed; deeper is reported, not a RecursionError


class Handler(Protocol):
    """What the walk hands each command that is not a shell builtin: the install scanner."""

    def command(self, cmd: Command, state: State, possible: bool, make: bool) -> Word | None:
        """Read one command; return the script of a ``bash -c SCRIPT`` it runs, to be read in place."""

    def skipped(self, cmd: Command, state: State, stop: Stop, make: bool) -> Word | None:
        """A command the shell never runs, as ``stop`` says; return a ``bash -c`` script as above."""

    def problem(self, start: int, end: int, message: str) -> None: ...

    def assign(self, name: str, value: str, start: int, end: int, possible: bool) -> None:
        """A variable set from here on (``A=1``, ``export A=1``), as written or expanded."""


SHELLS = {"bash", "sh", "zsh", "dash"}
# A command whose failure is an answer, not an error: what follows its && runs only on some machines.
_TESTS = {"test", "[", "[[", "which", "type", "hash", "grep", "nvidia-smi", "nvcc", "lspci", "rocm-smi"}
_SEQUENCES = {"program", "compound_statement", "do_group", "pipeline", "negated_command"}


def _last_command(node: Node) -> Node | None:
    """The simple command a redirect after ``a && b``, ``a | b`` or ``! b`` belongs to: the last one
    (bash's grammar attaches a redirect to a simple command; only compound commands take one whole)."""
    while node.type in ("list", "pipeline", "negated_command"):
        parts = [c for c in node.named_children if c.type != "comment"]
        if not parts:
            return None
        node = parts[-1]
    if node.type == "redirected_statement":
        node = node.child_by_field_name("body") or node
    return node if node.type == "command" else None


class _Function:
    def __init__(self, body: Node) -> None:
        self.body = body
        self.called = False  # followed once, at its first call: later calls repeat what it did


class Walk:
    """One parsed stretch of shell, walked once in the order it runs."""

    def __init__(
        self,
        chunk: Chunk,
        handler: Handler,
        make: bool = False,
        reread: bool = False,
        stop: Stop | None = None,
    ) -> None:
        self.chunk = chunk
        self.handler = handler
        self.make = make
        self.reread = reread  # a line of a stretch the grammar could not read: never split again
        self.stop = stop  # past a syntax error (or a stop before this stretch): nothing runs
        self.stopped: Stop | None = None  # the syntax error this stretch stops at, if any
        self.functions: dict[str, _Function] = {}
        self.too_deep = False  # reported once
        # redirects the grammar hung on a list, pipeline or `!` command, by the span of the simple
        # command the shell gives them to: the last one (`a && b >x` redirects b)
        self.trailing: dict[tuple[int, int], list[Node]] = {}

    def run(self, state: State, depth: int = 0, possible: bool = False) -> None:
        clock = state.scope.budget.clock
        try:
            root = tree(self.chunk, clock)
        except TooCostly:
            self._too_costly(clock, state, depth)
            return
        nodes = root.named_children
        first, found = (len(nodes), None) if self.stop is not None else find_stop(self.chunk, root, nodes)
        for node in nodes[:first]:
            self._statement(node, state, possible, depth)
        if found is not None:
            # what the shell never runs, read again in two parts: the grammar takes an operator at
            # the end of a line as a redirect from the next line's first word, so the line without
            # its operator, then the lines after it
            self.stop = self.stopped = found
            line, op = self.chunk.index(nodes[first].start_byte), found.operator
            for a, b in ((line, op), (op + len(found.op), len(self.chunk.text))):
                Walk(self.chunk.part(a, b), self.handler, self.make, self.reread, found).run(state, depth)
        if self.stop is not None:
            return  # the shell never got to the end: a function never called stays uncalled
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

    def _statement(self, node: Node, state: State, possible: bool, depth: int) -> None:  # noqa: C901 - complexity 23, to split or justify (issue 45)
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
                last = _last_command(body)
                if last is not None:  # `a && b flash-attn>=2.5`: tree-sitter-bash redirects the list
                    key = (last.start_byte, last.end_byte)
                    self.trailing[key] = [*self.trailing.get(key, []), *redirects]
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
            self._assign(node, state, possible)
        elif kind == "unset_command":
            for child in node.named_children:
                if not self.chunk.source(child).startswith("-"):
                    state.scope.set(self.chunk.source(child), (None,))
        budget = state.scope.budget
        if budget.crossed and not budget.reported:  # at the innermost statement that crossed it
            budget.reported = True
            start, end = self.chunk.span(node)
            self.handler.problem(start, end, budget.message())

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
        head = basename(self.chunk.source(name))
        if head in _TESTS:
            return True
        if head != "command" and not head.startswith("python"):
            return False  # most commands: their arguments are not read
        args = [self.chunk.source(a) for a in node.children_by_field_name("argument")]
        return args[:1] == ["-v"] if head == "command" else "-c" in args

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
            found = [expand(unquoted(v, self.chunk), state.scope, self.make) for v in values]
            each: Values = (None,)
            if found and not any(e.unresolved for e in found):
                each = tuple(dict.fromkeys(t for e in found for t in e.texts))[:MAX_VALUES]
            fork.scope.set(self.chunk.source(var), each)
        body = node.child_by_field_name("body")
        if body is not None:
            self._statement(body, fork, True, depth)
        state.merge([fork], exhaustive=False)

    def _assign(self, node: Node, state: State, possible: bool) -> None:
        """``A=1``, ``export A=1 B``, ``local -r C=2``: shell variables from here on."""
        if self.stop is not None:
            return  # past a syntax error: never set
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
                text = "" if value is None else unquoted(value, self.chunk)
                exp = expand(text, state.scope, self.make)
                state.scope.set(name, (text,) if exp.unresolved else exp.texts)
                start, end = self.chunk.span(child)
                self.handler.assign(name, text if exp.unresolved else exp.text, start, end, possible)

    # simple commands

    def _command(self, node: Node, redirects: list[Node], state: State, possible: bool, depth: int) -> None:  # noqa: C901 - complexity 19, to split or justify (issue 45)
        if self.trailing:
            redirects = [*redirects, *self.trailing.pop((node.start_byte, node.end_byte), [])]
        args: list[Node] = []  # the command name first
        env: dict[str, str] = {}
        for child in node.named_children:
            kind = child.type  # (each read of a node's attribute makes a new object)
            if kind in ("word", "string"):
                args.append(child)
            elif kind == "variable_assignment" and not args:
                name, value = child.child_by_field_name("name"), child.child_by_field_name("value")
                if name is not None:
                    env[self.chunk.source(name)] = "" if value is None else unquoted(value, self.chunk)
            elif kind == "command_name":
                inner = child.named_children
                args.append(inner[0] if inner else child)
            elif kind.endswith("_redirect"):
                redirects = [*redirects, child]
            elif kind != "comment":
                args.append(child)
        if not args:  # A=1 B=2 on their own set shell variables
            if self.stop is None:
                self._each(node.named_children, state, possible, depth)
            return
        args, words = self._with_redirects(args, redirects)
        start, end = self.chunk.span(node)
        cmd = Command(words, start, end, env)
        if self.stop is not None:  # past a syntax error: the shell never runs it
            script = self.handler.skipped(cmd, state, self.stop, self.make)
            if script is not None:
                self._inline(
                    next(n for n, w in zip(args, words, strict=True) if w is script), state, False, depth
                )
            return
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
            elif basename(head) in SHELLS:  # bash <<EOF: the heredoc is the script
                for r in redirects:
                    for body in (c for c in r.children if c.type == "heredoc_body"):
                        self._inline(body, state, possible, depth)

    def _with_redirects(self, args: list[Node], redirects: list[Node]) -> tuple[list[Node], list[Word]]:
        """The command's words: one a redirect cut short is marked (flash-attn>=2.5), and words
        after a redirect's file are still arguments (tree-sitter-bash hangs them on the redirect)."""
        if not redirects:
            return joined(args, [word(n, self.chunk) for n in args])
        cuts: dict[int, str] = {}
        for r in redirects:
            op = next((c for c in r.children if not c.is_named), None)
            if r.type == "file_redirect" and op is not None:
                cuts[self.chunk.offset(r.start_byte)] = op.type
                args = [*args, *r.children_by_field_name("destination")[1:]]
        args, words = joined(args, [word(n, self.chunk) for n in args])
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

    def _too_costly(self, clock: Clock, state: State, depth: int) -> None:
        """A stretch whose error recovery the grammar could not finish in time: read again a line at a
        time, as ``_error`` does; a line that is itself too costly is reported, once a file."""
        text = self.chunk.text
        lines = [(b, e) for b, e in logical_lines(text) if text[b:e].strip()]
        if len(lines) > 1 and not self.reread:  # a line without an error reads whatever the clock says
            for begin, end in lines:
                Walk(self.chunk.part(begin, end), self.handler, self.make, True, self.stop).run(
                    state, depth, True
                )
            return
        if not clock.reported:
            clock.reported = True
            start, end = self.chunk.at(0), self.chunk.at(len(text))
            self.handler.problem(
                start,
                end,
                "shell text not read: tree-sitter-bash's error recovery on it ran past its time "
                f"({PARSE_SECONDS:g} s a stretch, {FILE_SECONDS:g} s a file)",
            )

    def _error(self, node: Node, state: State, possible: bool, depth: int) -> None:
        """A stretch tree-sitter-bash could not read. Its error recovery can run the lines after the
        error into one command, so a stretch over several lines is read again a line at a time
        (``\\`` continuations kept); how those lines nested is lost, so what they run is possible."""
        start, end = self.chunk.index(node.start_byte), self.chunk.index(node.end_byte)
        raw = self.chunk.text[start:end]
        if self.reread or "\n" not in raw.strip():
            self._each(node.named_children, state, possible, depth)
            return
        for begin, end in logical_lines(raw):
            if raw[begin:end].strip():
                chunk = self.chunk.part(start + begin, start + end)
                sub = Walk(chunk, self.handler, self.make, reread=True, stop=self.stop)
                sub.run(state, depth, possible=True)
                self.stop = sub.stop

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
        Walk(chunk, self.handler, self.make, stop=self.stop).run(state.fork(), depth)  # its own shell


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
