"""setup.py, read with ``ast`` and never run: requirement strings handed to ``setup()``.

Strings reach ``install_requires``, ``extras_require`` and ``setup_requires`` directly or through
module-level names (``GPU = [...]``, ``extras["gpu"] = [...]``, ``reqs += [...]``). A flash-attn
string with a version or URL anywhere else in a list or call (a helper such as
``add_unique(reqs, ["flash-attn>=2.0"])``) counts too; a bare "flash_attn" outside requirement
keywords does not, since ``packages=["flash_attn"]`` names a module, not a requirement. A bare name
handed to a function of the file (transformers' ``deps_list("flash_attn")``) is a key into the
file's own table of pinned strings, and stands for the one there.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from packaging.requirements import InvalidRequirement
from packaging.requirements import Requirement as Pep508

from fa_lint.model import (
    FLASH_ATTN,
    Include,
    Parsed,
    ParseProblem,
    Requirement,
    mentions_flash_attn,
    normalize,
)
from fa_lint.sources.python_app import installs_text
from fa_lint.syntax import pep508, pyast
from fa_lint.syntax.pyast import Flow, PythonIndex

NAME = "setup.py"
KEYWORDS = {
    "install_requires": "project",
    "setup_requires": "build-system",
    "tests_require": "tests",
    "extras_require": "extra",
}


# what opens a file for reading: open(x), io.open(x), codecs.open(x), Path(x), pathlib.Path(x)
_OPENERS = frozenset({"open", "Path"})


class _Reacher:
    """The string literals an expression handed to ``setup()`` reaches, each with its scope, and the
    files whose lines it reaches (``install_requires=open("requirements.txt").read().splitlines()``)."""

    def __init__(self, tree: ast.Module) -> None:
        self.flow = Flow(tree)
        self.table = _table(tree)
        self.out: dict[int, tuple[ast.Constant, str]] = {}
        self.files: dict[int, tuple[ast.Constant, str]] = {}
        self.bound = _with_files(tree)  # `with open(X) as f`: f -> X
        self.readers = _readers(tree)  # a function of the file -> which of its parameters it opens

    def strings(self, node: ast.expr, scope: str, seen: set[str]) -> None:  # noqa: C901 - complexity 14, to split or justify (issue 45)
        opened = self._opened(node, seen)
        if opened is not None:
            self.files.setdefault(id(opened), (opened, scope))
            return
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.out.setdefault(id(node), (node, scope))
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            for elt in node.elts:
                self.strings(elt.value if isinstance(elt, ast.Starred) else elt, scope, seen)
        elif isinstance(node, ast.Starred):
            self.strings(node.value, scope, seen)
        elif isinstance(node, ast.BinOp):
            self.strings(node.left, scope, seen)
            self.strings(node.right, scope, seen)
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                key = k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
                self.strings(v, f"extra:{key}" if scope == "extra" and key is not None else scope, seen)
        elif isinstance(node, ast.Call):
            helper = isinstance(node.func, ast.Name) and node.func.id in self.flow.functions
            opens = self.readers.get(node.func.id, set()) if isinstance(node.func, ast.Name) else set()
            for i, arg in enumerate(node.args):
                name = _file_name(arg) if i in opens else None
                if name is not None:  # read_requirements("requirements.txt"), which opens its argument
                    self.files.setdefault(id(name), (name, scope))
                else:
                    self.strings(self._looked_up(arg) if helper else arg, scope, seen)
        elif isinstance(node, ast.Name) and node.id not in seen:
            seen.add(node.id)
            for value, key in self.flow.values.get(node.id, []):
                self.strings(value, f"extra:{key}" if scope == "extra" and key is not None else scope, seen)

    def _opened(self, node: ast.expr, seen: set[str]) -> ast.Constant | None:
        """The file name whose contents ``node`` is made of: at the base of a chain of calls,
        attributes and comprehensions, ``open(X)``/``Path(X)`` or a name ``with open(X) as`` binds."""
        while True:
            if isinstance(node, ast.Call):
                arg = _opener(node)
                if arg is not None:
                    return _file_name(arg)
                if not isinstance(node.func, ast.Attribute):
                    return None
                node = node.func.value
            elif isinstance(node, (ast.Attribute, ast.Subscript)):
                node = node.value
            elif isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
                node = node.generators[0].iter
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # Path(here) / "req.txt"
                return _file_name(node.right)
            elif isinstance(node, ast.Name) and node.id in self.bound:
                return self.bound[node.id]
            else:
                return None

    def _looked_up(self, arg: ast.expr) -> ast.expr:
        """transformers' pattern: ``deps_list("torch")`` returns the ``"torch>=2.0"`` of a table."""
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return self.table.get(normalize(arg.value.strip()), arg)
        return arg


def _file_name(node: ast.expr) -> ast.Constant | None:
    """A file name as written: a string, or the last part of ``os.path.join(here, "x.txt")``."""
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "join" and node.args:
        node = node.args[-1]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node
    return None


def _opener(node: ast.AST) -> ast.expr | None:
    """The argument of an ``open(X)``/``Path(X)`` call."""
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        called = (
            func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        )
        if called in _OPENERS:
            return node.args[0]
    return None


def _with_files(tree: ast.Module) -> dict[str, ast.Constant]:
    """``with open("requirements.txt") as f``: each name bound to a file opened with a written name."""
    out: dict[str, ast.Constant] = {}
    for node in ast.walk(tree):
        for item in node.items if isinstance(node, (ast.With, ast.AsyncWith)) else []:
            arg = _opener(item.context_expr)
            name = _file_name(arg) if arg is not None else None
            if name is not None and isinstance(item.optional_vars, ast.Name):
                out[item.optional_vars.id] = name
    return out


def _readers(tree: ast.Module) -> dict[str, set[int]]:
    """The file's functions that open one of their parameters (``def read(path): open(path)``)."""
    out: dict[str, set[int]] = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = [a.arg for a in fn.args.args]
        for node in ast.walk(fn):
            arg = _opener(node)
            if isinstance(arg, ast.Call) and getattr(arg.func, "attr", None) == "join" and arg.args:
                arg = arg.args[-1]
            if isinstance(arg, ast.Name) and arg.id in params:
                out.setdefault(fn.name, set()).add(params.index(arg.id))
    return out


def _table(tree: ast.Module) -> dict[str, ast.Constant]:
    """Requirement strings with a version or URL in the file's lists, by package name."""
    out: dict[str, ast.Constant] = {}
    for node in ast.walk(tree):
        for elt in node.elts if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else []:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                try:
                    req = Pep508(elt.value)
                except InvalidRequirement:
                    continue
                if req.specifier or req.url:
                    out.setdefault(normalize(req.name), elt)
    return out


def parse(path: str, text: str) -> Iterator[Parsed]:
    index = PythonIndex(path, text)
    tree = pyast.parse(index, "setup.py")
    if isinstance(tree, ParseProblem):
        yield tree
        return
    # what setup.py runs when it runs (subprocess.check_call([sys.executable, "-m", "pip", "install",
    # ...])): install commands of their own, scope "run" (fa_lint.sources.python_commands)
    commands: set[int] = set()
    if installs_text(text):
        from fa_lint.sources import python_commands  # the shell model, for the few that run pip

        yield from python_commands.parse(index, tree, NAME, commands)
    reacher = _Reacher(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (
            getattr(node.func, "id", None) == "setup" or getattr(node.func, "attr", None) == "setup"
        ):
            for kw in node.keywords:
                if kw.arg in KEYWORDS:
                    reacher.strings(kw.value, KEYWORDS[kw.arg], set())
    reached = reacher.out
    for const, scope in reacher.files.values():  # read in requirements-file syntax, as setup.cfg's file:
        start, end = pyast.span(index, const)
        yield Include(index.location(start, end), str(const.value), scope=scope, optional=True)
    for const, scope in reached.values():
        start, end = pyast.span(index, const)
        rec = pep508.at(index, start, end, NAME, scope=scope)
        # Name-following can reach strings that are not meant as requirements (a file name handed to
        # a reader function): those are no fault of the file. One that names flash-attn but is no
        # PEP 508 string ("flash-attn --no-build-isolation") makes pip fail, and is reported.
        if isinstance(rec, Requirement) or mentions_flash_attn(str(const.value)):
            yield rec
    yield from _elsewhere(tree, index, set(reached) | commands)


def _elsewhere(tree: ast.Module, index: PythonIndex, reached: set[int]) -> Iterator[Parsed]:
    """Pinned flash-attn strings in lists or call arguments that never reach setup() by name."""
    for node in ast.walk(tree):
        elts: list[ast.expr] = []
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            elts = list(node.elts)
        elif isinstance(node, ast.Call):
            elts = list(node.args)
        for elt in elts:
            if id(elt) in reached or not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
                continue
            if not re.match(r"\s*flash[-_.]attn\s*(?:[<>=!~@;\[]|$)", elt.value, re.I):
                continue
            start, end = pyast.span(index, elt)
            rec = pep508.at(index, start, end, NAME, scope="project")
            if isinstance(rec, Requirement) and rec.name == FLASH_ATTN and (rec.specifier or rec.url):
                reached.add(id(elt))
                yield rec
