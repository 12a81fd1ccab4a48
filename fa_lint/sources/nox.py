"""noxfile.py, read with ``ast`` and never run: what each session installs.

``session.install(...)``, ``session.conda_install(...)``, and ``session.run(...)`` or
``session.run_install(...)`` of ``pip install``, ``uv pip install``, ``python -m pip install`` or
``conda install``: the arguments are the words of an install command, read as a shell script's
are. String literals, f-strings, ``+`` of strings and names bound to strings in the file are read;
any other argument that names flash-attn is reported as not judged (FAL009).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fa_lint.model import FLASH_ATTN, Parsed, ParseProblem, Requirement
from fa_lint.shell.parse import Word
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import Scope, State
from fa_lint.syntax import pyast
from fa_lint.syntax.pyast import Flow, PythonIndex

NAME = "nox"
_PREFIX = {"install": ("pip", "install"), "conda_install": ("conda", "install"), "run": (), "run_install": ()}
_NAMES_FLASH_ATTN = re.compile(r"flash[-_.]?attn", re.I)  # in a variable's name too: FLASH_ATTN_SPEC


def parse(path: str, text: str) -> Iterator[Parsed]:
    index = PythonIndex(path, text)
    tree = pyast.parse(index, "noxfile.py")
    if isinstance(tree, ParseProblem):
        yield tree
        return
    reader = _Reader(index, Flow(tree))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.args.args:
            yield from reader.function(node)


class _Reader:
    def __init__(self, index: PythonIndex, flow: Flow) -> None:
        self.index = index
        self.flow = flow
        # Names the file binds to one string, and only ever that one: their value is known.
        self.known = {
            name: value.value
            for name, values in flow.values.items()
            if len(values) == 1
            and isinstance(value := values[0][0], ast.Constant)
            and isinstance(value.value, str)
        }

    def function(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[Parsed]:
        session = func.args.args[0].arg
        scanner = Scanner(self.index, NAME, scope=f"session:{_name(func)}")
        state = State(Scope(values=self.known))
        for node in _own_nodes(func):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == session
                and node.func.attr in _PREFIX
            ):
                start, end = pyast.node_span(self.index, node.func)
                words = [Word(w, start, end) for w in _PREFIX[node.func.attr]]
                for arg in node.args:
                    words += self._words(arg)
                yield from self._unjudged(words, scanner.scope)
                scanner.exec_form([w for w in words if w.text != "\0"], state)
                yield from scanner.drain()
        yield from scanner.finish()

    def _words(self, arg: ast.expr) -> list[Word]:
        if isinstance(arg, ast.Starred):
            values = self._list(arg.value)
            if values is not None:
                return [w for v in values for w in self._words(v)]
            return [self._opaque(arg)]
        text = self._render(arg)
        literal = isinstance(arg, ast.Constant)
        start, end = (pyast.span if literal else pyast.node_span)(self.index, arg)
        return [Word(text, start, end)]

    def _list(self, node: ast.expr) -> list[ast.expr] | None:
        if isinstance(node, (ast.List, ast.Tuple)):
            return list(node.elts)
        if isinstance(node, ast.Name) and len(self.flow.values.get(node.id, [])) == 1:
            return self._list(self.flow.values[node.id][0][0])
        return None

    def _render(self, node: ast.expr) -> str:
        """The argument's text, with ``${NAME}`` (or ``${{ expression }}``) where a value only the run
        knows goes: the shell reader reports those as not judged."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.known.get(node.id, f"${{{node.id}}}")
        if isinstance(node, ast.JoinedStr):
            return "".join(
                self._render(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._render(node.left) + self._render(node.right)
        return f"${{{{ {ast.unparse(node)} }}}}"

    def _opaque(self, node: ast.expr) -> Word:
        start, end = pyast.node_span(self.index, node)
        return Word("\0", start, end)

    def _unjudged(self, words: list[Word], scope: str) -> Iterator[Parsed]:
        """An argument that is all run-time value, and names flash-attn: say it is not judged."""
        for w in words:
            if w.text == "\0" or w.text.startswith("${"):
                written = self.index.text[w.start : w.end]
                if _NAMES_FLASH_ATTN.search(_code(w.text, written)):
                    where = self.index.location(w.start, w.end)
                    yield Requirement(FLASH_ATTN, written, where, NAME, unresolved=written, scope=scope)


def _code(word: str, written: str) -> str:
    """What an argument's code says, without its comments: ``["git",  # for flash-attn`` names git
    only. A run-time value's word is the expression as ``ast`` reads it (``${{ expr }}``, or a name's
    ``${NAME}``); an opaque one (``*packages``) is its text, read by ``ast`` where it parses alone."""
    if word != "\0":
        return word
    try:
        return ast.unparse(ast.parse(written.lstrip().removeprefix("*"), mode="eval"))
    except SyntaxError:
        return written


def _own_nodes(func: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """The nodes of a function's body in source order (installs run in that order), not those of
    functions or classes defined inside it."""
    pending: list[ast.AST] = list(reversed(func.body))
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            pending.extend(reversed(list(ast.iter_child_nodes(node))))


def _name(func: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The session's name: ``@nox.session(name="x")``, else the function's."""
    for deco in func.decorator_list:
        for kw in deco.keywords if isinstance(deco, ast.Call) else []:
            if kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                return kw.value.value
    return func.name
