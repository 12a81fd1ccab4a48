"""Install commands a Python program runs, read with ``ast`` and never run.

A script that installs as it goes (``subprocess.check_call([sys.executable, "-m", "pip", "install",
"flash-attn==2.4.2"])``, ``os.system("pip install flash-attn --no-build-isolation")``), a setup.py that
does the same, or a launcher that hands a job a shell script to run (MosaicML's ``RunConfig(command=
...)``, SkyPilot's ``sky.Task(setup=..., run=...)``) installs what those commands say. Each is read as
the shell reader reads a command:

- a list or tuple of arguments (a call's first argument, or a name bound to one list) is argv, one
  word each, as Docker's exec form is: ``sys.executable`` (or any program followed by ``-m``) is
  ``python``, a string literal is its text, a value only the run knows is a word fa-lint cannot read
  (an install of one that names flash-attn is reported as not judged, FAL009);
- a string (``os.system``, ``os.popen``, ``subprocess.getoutput``, a ``subprocess`` call with
  ``shell=True``, a launcher's script) is a shell command line, fed through the shell model, each
  character placed where the file wrote it (``fa_lint.syntax.pystrings``); an f-string's fields are
  values only the run knows.

Only these calls count: a string that merely reads like a command (an error message saying ``pip
install flash-attn``, a docstring, a list a test compares with) is not run by anything, and is not
read. A command inside a function, a branch, a loop or a ``try`` is possible (it may not run); one
at the top of the module (or under ``if __name__ == "__main__":``) is certain. The program's own
commands are scope ``run``; each launcher's script is its own machine, scope ``run:NAME:LINE``.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator

from fa_lint.model import Parsed, Requirement
from fa_lint.shell.parse import Chunk, Command, Word
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import Scope, State
from fa_lint.sources.nox import _Reader as _Words  # arguments as located words, as nox reads them
from fa_lint.syntax import pyast, pylines, pystrings
from fa_lint.syntax.pyast import Flow, PythonIndex

RUN = "run"
# The calls that run a command line through a shell: its argument is one string (Python's library
# reference: os.system, os.popen, subprocess.getoutput/getstatusoutput, asyncio.create_subprocess_shell)
_SHELL = frozenset(
    {
        ("os", "system"),
        ("os", "popen"),
        ("subprocess", "getoutput"),
        ("subprocess", "getstatusoutput"),
        ("asyncio", "create_subprocess_shell"),
    }
)
# The calls that run a program with arguments: a sequence of them, or one string with shell=True
_ARGV = frozenset({("subprocess", f) for f in ("run", "call", "check_call", "check_output", "Popen")})
# Launchers whose keyword is a shell script run on the job's machine: mosaicml-cli 0.8.3
# mcli/models/run_config.py:270 `command: str = ''` (with `image:` at :258, the job's image);
# skypilot 0.14.1 sky/task.py:325-326 `setup: Optional[Union[str, List[str]]]`, `run: ...`
_LAUNCHERS = {("mcli", "RunConfig"): ("command",), ("sky", "Task"): ("setup", "run")}
_READ = _SHELL | _ARGV | _LAUNCHERS.keys()  # a call of anything else is passed over
_IMPORT = ("import",)  # what every import statement is written with
_IMAGE = {("mcli", "RunConfig"): "image"}
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# What may not run: a branch, a loop's body, an exception handler (a try's own body runs)
_BRANCHES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.IfExp, ast.BoolOp)


def parse(
    index: PythonIndex, tree: ast.Module, source: str, read: set[int] | None = None
) -> Iterator[Parsed]:
    """The records of the file's install commands (``source``: the file's format). ``read``, when
    given, gets the ``id`` of each argument node read as a command's word: a setup.py's reader of
    requirement strings leaves those to this one."""
    reader = _Reader(index, tree, source)
    for call, possible, frame in _calls(tree, pylines.word_lines(index, reader.callees())):
        yield from reader.call(call, possible, frame)
    yield from reader.scanner.finish()
    if read is not None:
        read.update(reader.read)


def _calls(tree: ast.Module, lines: list[int]) -> Iterator[tuple[ast.Call, bool, ast.AST]]:
    """Each call in source order, whether it may not run, and the function it is in (or the module);
    of the calls, all those on ``lines`` (where the callees read are named) and some others, in the
    order of all (``pylines``: the parts whose lines hold none are not walked). With a stack, not
    recursion: a file nests as deep as it likes."""
    pending: list[tuple[ast.AST, bool, ast.AST, bool]] = [(tree, False, tree, False)]
    while pending:
        node, possible, frame, whole = pending.pop()
        if isinstance(node, ast.Call):
            yield node, possible, frame
        inner = possible or (isinstance(node, _BRANCHES) and not _main_guard(node))
        here = node if isinstance(node, _FUNCTIONS) else frame
        inner = inner or isinstance(node, _FUNCTIONS)
        whole = whole or isinstance(node, ast.JoinedStr)  # pylines.walk's f-strings, walked whole
        children = pyast.children(node)  # no leaf holds a call
        pending.extend(
            (c, inner, here, whole) for c in reversed(children) if whole or pylines.holds(lines, c)
        )


def _main_guard(node: ast.AST) -> bool:
    """``if __name__ == "__main__":``: the script's own body, run whenever the script is."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    names = [test.left, *test.comparators]
    return any(isinstance(n, ast.Name) and n.id == "__name__" for n in names) and any(
        isinstance(n, ast.Constant) and n.value == "__main__" for n in names
    )


class _Reader:
    def __init__(self, index: PythonIndex, tree: ast.Module, source: str) -> None:
        self.index = index
        self.tree = tree
        # an import's lines hold its "import": only what holds those lines is walked (pylines)
        self.imports = _imports(
            list(pylines.walk(tree, pylines.word_lines(index, _IMPORT), statements=False))
        )
        self.scanner = Scanner(index, source, scope=RUN)
        self.read: set[int] = set()  # the argument nodes read as words

    @functools.cached_property
    def flow(self) -> Flow:
        """The file's names and their values, for the calls read (a file with none needs no walk of
        its statements): assignments are statements, and what Flow adds with .append() is on a line
        that names it, so only those are walked (pylines)."""
        return Flow(self.tree, pylines.walk(self.tree, pylines.word_lines(self.index, pyast.ADDS)))

    @functools.cached_property
    def words(self) -> _Words:
        return _Words(self.index, self.flow)

    def callees(self) -> set[str]:
        """The names a call read here is written with: the function's (``run``, ``Popen``), or what
        the file imported it as (``from subprocess import run as sh``: ``sh``)."""
        names = {name for _, name in _READ}
        names.update(k for k, (module, name) in self.imports.items() if (module.split(".")[0], name) in _READ)
        return names

    def _state(self) -> State:
        """What a command starts with: the file's names bound to one string. Each call is a new
        process: what one command line's ``cd`` or ``export`` did is gone for the next."""
        return State(Scope(values=dict(self.words.known)))

    def call(self, call: ast.Call, possible: bool, frame: ast.AST) -> Iterator[Parsed]:
        callee = _callee(call.func, self.imports)
        if callee is None:
            return
        self.scanner.scope = RUN
        if callee in _SHELL and call.args:
            self._string(call.args[0], possible)
        elif callee in _ARGV:
            self._argv(call, possible)
        elif callee in _LAUNCHERS:
            yield from self._launcher(call, callee, possible, frame)
        yield from self._unread()

    def _unread(self) -> list[Parsed]:
        return self.scanner.drain()

    # --- a program and its arguments ---------------------------------------------------------------

    def _argv(self, call: ast.Call, possible: bool) -> None:
        given = {k.arg: k.value for k in call.keywords if k.arg}
        first = call.args[0] if call.args else given.get("args")
        if first is None:
            return
        if _true(given.get("shell")):
            self._string(first, possible)
            return
        items = self.words._list(first)
        if items is None:
            return
        self.read.update(map(id, items))
        words = self._program([w for item in items for w in self.words._words(item)], items)
        source = self.scanner.source
        self.scanner.records += [
            r._replace(source=source)
            for r in self.words._unjudged(words, self.scanner.scope)
            if isinstance(r, Requirement)
        ]
        words = [w for w in words if w.text != "\0"]
        if not words:
            return
        command = Command(words, words[0].start, words[-1].end)
        script = self.scanner.command(command, self._state(), possible, False)
        if script is not None:  # ["bash", "-c", "pip install ..."]: the string is a script
            node = next((n for n in items if pyast.node_span(self.index, n)[1] >= script.end), None)
            if node is not None:
                self._string(node, possible)

    @staticmethod
    def _program(words: list[Word], items: list[ast.expr]) -> list[Word]:
        """``sys.executable`` (any program given as a value, followed by ``-m``) runs Python."""
        if len(words) > 1 and words[1].text == "-m" and not isinstance(items[0], ast.Constant):
            return [Word("python", words[0].start, words[0].end), *words[1:]]
        return words

    # --- a shell command line ----------------------------------------------------------------------

    def _string(self, node: ast.expr, possible: bool) -> None:
        for value, maybe in self._strings(node):
            start, end = pyast.node_span(self.index, value)
            found = pystrings.literal(self.index.text, value, start, end)
            if found is not None:
                text, places = found
                self.scanner.script(Chunk(text, positions=places), self._state(), possible=possible or maybe)

    def _strings(self, node: ast.expr) -> list[tuple[ast.expr, bool]]:
        """A literal, or the one literal a name is bound to anywhere in the file."""
        if isinstance(node, ast.Name):
            values = self.flow.values.get(node.id, [])
            return [(values[0][0], False)] if len(values) == 1 else []
        if isinstance(node, (ast.List, ast.Tuple)):  # SkyPilot takes a list of lines too
            return [(e, False) for e in node.elts if isinstance(e, (ast.Constant, ast.JoinedStr))]
        return [(node, False)]

    # --- a launcher's script -----------------------------------------------------------------------

    def _launcher(
        self, call: ast.Call, callee: tuple[str, str], possible: bool, frame: ast.AST
    ) -> Iterator[Parsed]:
        self.scanner.scope = f"{RUN}:{callee[1]}:{call.lineno}"
        given = {k.arg: k.value for k in call.keywords if k.arg}
        image = given.get(_IMAGE.get(callee, ""))
        if isinstance(image, ast.Constant) and isinstance(image.value, str):
            from fa_lint.sources.dockerfile import image as registry_image

            a, b = pyast.span(self.index, image)
            yield registry_image(image.value, self.index.location(a, b), self.scanner.scope)._replace(
                said=f"{callee[1]}(image=...)"
            )
        for keyword in _LAUNCHERS[callee]:
            value = given.get(keyword)
            pieces = _pieces(value, frame, call) if isinstance(value, ast.Name) else [(value, False)]
            for piece, maybe in pieces:
                if piece is not None:
                    for node, _ in self._strings(piece):
                        self._string_at(node, possible or maybe)

    def _string_at(self, node: ast.expr, possible: bool) -> None:
        if isinstance(node, (ast.Constant, ast.JoinedStr)):
            self._string(node, possible)


def _pieces(name: ast.Name, frame: ast.AST, call: ast.Call) -> list[tuple[ast.expr, bool]]:
    """What a name holds where a launcher is handed it, in the function it is built in: an ``=``
    starts it again, each ``+=`` adds a piece (llm-foundry's benchmark launcher builds its command
    so: ``command = ''``, then ``command += f\"\"\"...\"\"\"`` under the conditions that need it);
    a piece under a condition may not be there."""
    found: list[tuple[ast.expr, bool]] = []
    for node, nested in _statements(frame):
        if node.lineno >= call.lineno:
            break
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name.id for t in node.targets
        ):
            if not nested:
                found = []  # the name starts again from here
            found.append((node.value, nested))
        elif (
            isinstance(node, ast.AugAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == name.id
        ):
            found.append((node.value, nested))
    return found


def _statements(frame: ast.AST) -> Iterator[tuple[ast.stmt, bool]]:
    """The statements of a function (or module) body in source order, each with whether it sits
    under a branch, a loop or a ``try``; not those of functions defined inside it."""
    pending: list[tuple[ast.AST, bool]] = [(s, False) for s in reversed(getattr(frame, "body", []))]
    while pending:
        node, nested = pending.pop()
        if isinstance(node, ast.stmt):
            yield node, nested
        if isinstance(node, _FUNCTIONS):
            continue
        inner = nested or isinstance(node, _BRANCHES)
        for child in reversed(list(ast.iter_child_nodes(node))):
            if isinstance(child, (ast.stmt, ast.ExceptHandler)):
                pending.append((child, inner))


def _imports(nodes: list[ast.AST]) -> dict[str, tuple[str, str]]:
    """Each name the file imports: a module (``import subprocess as sp``: sp -> ("subprocess", ""))
    or a function or class of one (``from subprocess import run``: run -> ("subprocess", "run")).
    ``nodes``: ``pyast.walk``'s, or a part of them that holds every import, in its order (a later
    import wins)."""
    names: dict[str, tuple[str, str]] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], "")
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = (node.module, a.name)
    return names


def _callee(func: ast.expr, imports: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    """(top-level module, name) of what a call calls, where the file imported it."""
    if isinstance(func, ast.Name):
        module, name = imports.get(func.id, ("", ""))
        return (module.split(".")[0], name) if name else None
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or not parts:
        return None
    module, name = imports.get(func.id, ("", ""))
    root = module.split(".")[0] if module and not name else None
    return (root, parts[0]) if root else None


def _true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True
