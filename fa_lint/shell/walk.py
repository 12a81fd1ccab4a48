"""Walking a parsed script once, in the order it runs: each command it runs, certain or possible.

The walk is the shell's own semantics, cut down to what decides an install:

- ``&&``, ``;``, newlines, pipelines, subshells and ``{ }`` run in order, as certain as around them;
- after ``||``, after a test (``[[ -v X ]] && ...``), inside ``if``/``elif``/``else``/``case``
  branches and ``while``/``until``/``for`` bodies a command is only **possible**;
- variables and the working directory fork at each branch and merge after it (a variable set in
  ``if`` and ``else`` has both values, one set in a single branch may also be unset);
- a function is followed at each call with new arguments (``$1``..., a recursion a few levels deep),
  a later definition replaces it, ``unset -f`` forgets it (``shell.functions``); one never called is
  read at the end as possible, with any functions its body defines;
- a command or process substitution (``$(...)``, backticks, ``<(...)``) runs in a subshell before the
  command whose word holds it; what follows a here-document's word (``cat <<EOF && ...``) after it;
- ``bash -c '...'`` and ``sh -c`` are read as scripts of their own;
- a syntax error (an unquoted ``<`` or ``>`` with no file after it) stops the shell: bash and dash
  parse a whole line (and a whole compound command: ``if ... fi``, a function body) before running
  any of it, so nothing of that line runs, and then exit with status 2, so nothing after it runs
  either (``scripts/shell_syntax_stop.py`` shows it); those commands go to ``Handler.skipped``.

What a command does is for the ``Handler`` (``shell.scanner``); the walk knows the shell: every node
kind tree-sitter-bash makes (``shell.nodes``). An exception in it is fa-lint's bug (``Handler.internal``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from fa_lint.shell.functions import Function, Functions
from fa_lint.shell.nodes import (
    HOLDERS,
    SEQUENCES,
    STATEMENTS,
    SUBSTITUTIONS,
    WORDS,
    Commands,
    Openers,
    is_test,
    last_command,
    node_of,
    script,
    then,
)
from fa_lint.shell.parse import (
    FILE_SECONDS,
    PARSE_SECONDS,
    Chunk,
    Clock,
    Command,
    TooCostly,
    Word,
    basename,
    logical_lines,
    tree,
    unquoted,
)
from fa_lint.shell.stops import Stop
from fa_lint.shell.stops import find as find_stop
from fa_lint.shell.variables import MAX_VALUES, Expanded, State, Values, expand

if TYPE_CHECKING:
    from tree_sitter import Node

_MAX_DEPTH = 200  # nested constructs followed; deeper is reported, not a RecursionError
MAX_CALLS = 10_000  # function calls followed in one stretch of shell (each with arguments of its own)
MAX_RECURSION = 4  # a function followed inside its own body: a recursion on new arguments, so far


class Handler(Protocol):
    """What the walk hands each command that is not a shell builtin: the install scanner."""

    def command(self, cmd: Command, state: State, possible: bool, make: bool) -> Word | None:
        """Read one command; return the script of a ``bash -c SCRIPT`` it runs, to be read in place."""

    def skipped(self, cmd: Command, state: State, stop: Stop, make: bool) -> Word | None:
        """A command the shell never runs, as ``stop`` says; return a ``bash -c`` script as above."""

    def problem(self, start: int, end: int, message: str) -> None: ...

    def internal(self, start: int, end: int, exc: Exception) -> None:
        """fa-lint's own bug, met reading the statement at ``start:end``: that statement went unread."""

    def assign(self, name: str, value: str, start: int, end: int, possible: bool) -> None:
        """A variable set from here on (``A=1``, ``export A=1``), as written or expanded."""


SHELLS = {"bash", "sh", "zsh", "dash"}  # (each holds "sh": ``_command``)


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
        self.functions = Functions()
        self.calls = 0  # function calls followed (``_may_call``)
        self.too_deep = False  # reported once
        # redirects the grammar hung on a list, pipeline or `!` command, by the span of the simple
        # command the shell gives them to: the last one (`a && b >x` redirects b)
        self.trailing: dict[tuple[int, int], list[Node]] = {}
        self.openers = Openers(chunk)
        self.commands = Commands(chunk)

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
            self._guarded(node, state, possible, depth)
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
        self._uncalled(state, depth)

    def _uncalled(self, state: State, depth: int) -> None:
        """Functions never called: what they would install is only possible. A body can define more
        (``outer() { inner() { ...; }; }``), read in a round of their own, until a round finds none."""
        while waiting := self.functions.waiting():
            for fn in waiting:
                fn.called = True
                self._guarded(fn.body, state.fork(), True, depth + 1)

    def _guarded(self, node: Node, state: State, possible: bool, depth: int) -> None:
        """One top-level statement; an exception inside the walk (fa-lint's bug) costs it only."""
        try:
            self._statement(node, state, possible, depth)
        except Exception as exc:
            start, end = self.chunk.span(node)
            self.handler.internal(start, end, exc)

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
            self._too_deep_at(node)
            return
        kind = node.type
        handle = _HANDLERS.get(kind)
        if kind == "command":  # the most common statement, called directly: one frame less a level
            self._command(node, [], state, possible, depth + 1)
        elif handle is not None:
            handle(self, node, state, possible, depth + 1)
        elif kind in WORDS or kind in SUBSTITUTIONS or kind == "test_command":  # (( )), [[ ]], $( )
            self._substituted([node], state, possible, depth + 1)
        budget = state.scope.budget
        if budget.crossed and not budget.reported:  # at the innermost statement that crossed it
            budget.reported = True
            start, end = self.chunk.span(node)
            self.handler.problem(start, end, budget.message())

    def _too_deep_at(self, node: Node) -> None:
        if not self.too_deep:
            self.too_deep = True
            start, end = self.chunk.span(node)
            self.handler.problem(start, end, f"shell nested more than {_MAX_DEPTH} levels deep is not read")

    def _substituted(self, roots: Iterable[Node], state: State, possible: bool, depth: int) -> None:
        """Run the command and process substitutions in these words, as the shell does before their
        command: each a script of its own, in a subshell (a fork of the state); a statement inside a
        word is walked on its own (a here-document's ``&& cmd``), so the search stops there."""
        stack = list(roots)
        if self.stop is not None or not stack or not self.openers.within(stack):
            return  # (past a syntax error nothing runs, substitutions neither)
        stack.reverse()
        top = {(r.start_byte, r.end_byte, r.type) for r in stack}
        while stack:
            node = stack.pop()
            kind = node.type
            if kind in SUBSTITUTIONS:  # a level of its own: a shell inside the word
                self._each(node.named_children, state.fork(), possible, depth + 1)
            elif kind not in HOLDERS or (node.start_byte, node.end_byte, kind) in top:
                inner = node.named_children
                if kind == "heredoc_redirect":  # its statements run after the command (``_tails``)
                    inner = [c for c in inner if c.type not in STATEMENTS]
                stack.extend(reversed(inner))

    def _redirected(self, node: Node, state: State, possible: bool, depth: int) -> None:
        body = node.child_by_field_name("body")
        redirects = node.children_by_field_name("redirect")
        if body is not None and body.type == "command":
            self._command(body, redirects, state, possible, depth)
            return
        self._substituted(redirects, state, possible, depth)
        if body is not None:
            last = last_command(body)
            if last is not None:  # `a && b flash-attn>=2.5`: tree-sitter-bash redirects the list
                key = (last.start_byte, last.end_byte)
                self.trailing[key] = [*self.trailing.get(key, []), *redirects]
            self._statement(body, state, possible, depth)
        self._tails(redirects, state, possible, depth)

    def _tails(self, redirects: Iterable[Node], state: State, possible: bool, depth: int) -> None:
        """``cat <<EOF && pip install ...``: tree-sitter-bash hangs what follows a here-document's
        word on its redirect; it runs after the command (after ``||`` possibly)."""
        for r in redirects:
            if r.type != "heredoc_redirect":
                continue
            op = ""
            for child in r.children:
                if not child.is_named:
                    op = child.type
                elif child.type in STATEMENTS and child.type != "comment":
                    if op == "||":
                        state.merge([self._branch([child], state, depth)], exhaustive=False)
                    else:
                        self._statement(child, state, possible, depth)

    def _case(self, node: Node, state: State, possible: bool, depth: int) -> None:
        self._substituted(node.children_by_field_name("value"), state, possible, depth)
        branches, default = [], False
        for item in (c for c in node.named_children if c.type == "case_item"):
            patterns = {(v.start_byte, v.end_byte) for v in item.children_by_field_name("value")}
            runs = [c for c in item.named_children if (c.start_byte, c.end_byte) not in patterns]
            branches.append(self._branch(runs, state, depth))
            default = default or any(
                self.chunk.source(v) == "*" for v in item.children_by_field_name("value")
            )
        state.merge(branches, exhaustive=default)

    def _define(self, node: Node, state: State, possible: bool, depth: int) -> None:
        """``f() { ...; }``: from here on a call of ``f`` runs this body (``fa_lint.shell.functions``)."""
        name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
        if name is None or body is None:
            return
        self.functions.define(self.chunk.source(name), body)

    def _unset(self, node: Node, state: State, possible: bool, depth: int) -> None:
        """``unset -v A`` unsets a variable, ``unset -f f`` a function, and a bare ``unset NAME`` the
        variable, or where no variable has that name, the function (bash's ``unset``)."""
        self._substituted(node.named_children, state, possible, depth)
        flag = ""
        for child in node.named_children:
            text = self.chunk.source(child)
            if text.startswith("-"):
                flag = "f" if "f" in text else "v" if "v" in text else flag
                continue
            function = flag == "f" or (not flag and text in self.functions and state.scope.get(text) is None)
            if function and not possible:  # in a branch the function may still be there: calls follow it
                self.functions.forget(text)
            elif not function:
                state.scope.set(text, (None,))

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
            maybe = maybe or op == "||" or is_test(node, self.chunk)
            if maybe:
                state.merge([self._branch([right], state, depth)], exhaustive=False)
            else:
                self._statement(right, state, possible, depth)
            node = right

    def _if(self, node: Node, state: State, possible: bool, depth: int) -> None:
        conditions, body = then(node)
        self._each(conditions, state, possible, depth)
        branches = [self._branch(body, state, depth)]
        exhaustive = False
        for clause in node.named_children:
            if clause.type == "elif_clause":
                conditions, body = then(clause)
                branches.append(self._branch([*conditions, *body], state, depth))
            elif clause.type == "else_clause":
                branches.append(self._branch(clause.named_children, state, depth))
                exhaustive = True
        state.merge(branches, exhaustive)

    def _loop(self, node: Node, state: State, possible: bool, depth: int) -> None:
        """A loop body may run no time at all; ``for v in a b`` gives ``v`` each value. What the
        condition (``while``, ``for ((...))``) and the values run runs once, at least."""
        self._each(node.children_by_field_name("initializer"), state, possible, depth)
        self._each(node.children_by_field_name("condition"), state, possible, depth)
        fork = state.fork()
        var, values = node.child_by_field_name("variable"), node.children_by_field_name("value")
        self._substituted(values, state, possible, depth)
        self._each(node.children_by_field_name("update"), fork, True, depth)
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

    def _assign(self, node: Node, state: State, possible: bool, depth: int) -> None:
        """``A=1``, ``export A=1 B``, ``local -r C=2``: shell variables from here on (after what
        their values' substitutions run)."""
        if self.stop is not None:
            return  # past a syntax error: never set
        self._substituted([node], state, possible, depth)
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

    def _command(self, node: Node, redirects: list[Node], state: State, possible: bool, depth: int) -> None:
        if self.trailing:
            redirects = [*redirects, *self.trailing.pop((node.start_byte, node.end_byte), [])]
        args, env, every, words, start, end = self.commands.read(node, redirects)
        if not args:  # A=1 B=2 on their own set shell variables
            if self.stop is None:
                self._each(node.named_children, state, possible, depth)
            return
        cmd = Command(words, start, end, env)
        if self.stop is not None:  # past a syntax error: the shell never runs it
            script = self.handler.skipped(cmd, state, self.stop, self.make)
            if script is not None:
                self._inline(node_of(script, args, words), state, False, depth)
            return
        # a shell's script is read by its walk (each of SHELLS holds "sh": a word without it is not one)
        if not any("sh" in w.text and basename(w.text) in SHELLS for w in words):
            self._substituted([*node.named_children, *redirects], state, possible, depth)
        self._run(cmd, args, every, state, possible, depth)
        self._tails(every, state, possible, depth)

    def _run(
        self, cmd: Command, args: list[Node], redirects: list[Node], state: State, possible: bool, depth: int
    ) -> None:
        """A command that runs: ``cd``, a function the script defined, or one for the handler."""
        head = cmd.words[0].text
        if head in ("cd", "pushd", "popd"):
            state.cd(head, [w.text for w in cmd.words[1:]], self.make)
        elif head in self.functions:
            self._call(self.functions[head], cmd.words[1:], state, possible, depth)
        else:
            script = self.handler.command(cmd, state, possible, self.make)
            if script is not None:
                self._inline(node_of(script, args, cmd.words), state, possible, depth)
            elif basename(head) in SHELLS:  # bash <<EOF: the heredoc is the script
                for r in redirects:
                    for body in (c for c in r.children if c.type == "heredoc_body"):
                        self._inline(body, state, possible, depth)

    def _call(self, fn: Function, args: list[Word], state: State, possible: bool, depth: int) -> None:
        """A call runs the body with its arguments as ``$1``...: each call with arguments (and a
        certainty) not seen before, as bash runs each (``install torch; install flash-attn==2.4.2``);
        a call inside its own body (recursion) too, ``MAX_RECURSION`` deep at most."""
        caller = state.scope
        found = [expand(a.text, caller, self.make) for a in args]
        seen = (tuple(None if e.unresolved else e.texts for e in found), possible)
        if fn.active >= MAX_RECURSION or seen in fn.seen or not self._may_call():
            return
        fn.seen.add(seen)
        fn.called = True
        fn.active += 1
        try:
            self._run_body(fn, found, state, possible, depth)
        finally:  # (an exception in the body leaves the caller's variables in force, as a return does)
            fn.active -= 1
            state.scope = caller

    def _may_call(self) -> bool:
        """Whether one more call may be followed: calls with new arguments can multiply (each
        function calling the next twice), so past ``MAX_CALLS`` they are not, said once."""
        self.calls += 1
        if self.calls == MAX_CALLS + 1:
            self.handler.problem(
                self.chunk.at(0), self.chunk.at(0), f"shell function calls past {MAX_CALLS} are not followed"
            )
        return self.calls <= MAX_CALLS

    def _run_body(
        self, fn: Function, found: list[Expanded], state: State, possible: bool, depth: int
    ) -> None:
        caller = state.scope
        state.scope = caller.child()
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
        chunk = script(node, self.chunk)
        Walk(chunk, self.handler, self.make, stop=self.stop).run(state.fork(), depth)  # its own shell


# How ``Walk._statement`` reads each kind of statement (the rest are read for their substitutions).
_HANDLERS: dict[str, Callable[[Walk, Node, State, bool, int], None]] = {
    "redirected_statement": Walk._redirected,
    "list": Walk._list,
    **dict.fromkeys(SEQUENCES, lambda w, n, s, p, d: w._each(n.named_children, s, p, d)),
    "ERROR": Walk._error,
    "subshell": lambda w, n, s, p, d: w._each(n.named_children, s.fork(), p, d),  # cd, variables stay in
    "if_statement": Walk._if,
    "case_statement": Walk._case,
    **dict.fromkeys(("while_statement", "for_statement", "c_style_for_statement"), Walk._loop),
    "function_definition": Walk._define,
    **dict.fromkeys(("variable_assignment", "variable_assignments", "declaration_command"), Walk._assign),
    "unset_command": Walk._unset,
}
