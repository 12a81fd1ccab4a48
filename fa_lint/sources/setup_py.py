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

from fa_lint.model import FLASH_ATTN, Parsed, ParseProblem, Requirement, mentions_flash_attn, normalize
from fa_lint.syntax import pep508, pyast
from fa_lint.syntax.pyast import Flow, PythonIndex

NAME = "setup.py"
KEYWORDS = {
    "install_requires": "project",
    "setup_requires": "build-system",
    "tests_require": "tests",
    "extras_require": "extra",
}


class _Reacher:
    """The string literals an expression handed to ``setup()`` reaches, each with its scope."""

    def __init__(self, tree: ast.Module) -> None:
        self.flow = Flow(tree)
        self.table = _table(tree)
        self.out: dict[int, tuple[ast.Constant, str]] = {}

    def strings(self, node: ast.expr, scope: str, seen: set[str]) -> None:
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
            for arg in node.args:
                self.strings(self._looked_up(arg) if helper else arg, scope, seen)
        elif isinstance(node, ast.Name) and node.id not in seen:
            seen.add(node.id)
            for value, key in self.flow.values.get(node.id, []):
                self.strings(value, f"extra:{key}" if scope == "extra" and key is not None else scope, seen)

    def _looked_up(self, arg: ast.expr) -> ast.expr:
        """transformers' pattern: ``deps_list("torch")`` returns the ``"torch>=2.0"`` of a table."""
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return self.table.get(normalize(arg.value.strip()), arg)
        return arg


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
    reacher = _Reacher(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (
            getattr(node.func, "id", None) == "setup" or getattr(node.func, "attr", None) == "setup"
        ):
            for kw in node.keywords:
                if kw.arg in KEYWORDS:
                    reacher.strings(kw.value, KEYWORDS[kw.arg], set())
    reached = reacher.out
    for const, scope in reached.values():
        start, end = pyast.span(index, const)
        rec = pep508.at(index, start, end, NAME, scope=scope)
        # Name-following can reach strings that are not meant as requirements (a file name handed to
        # a reader function): those are no fault of the file. One that names flash-attn but is no
        # PEP 508 string ("flash-attn --no-build-isolation") makes pip fail, and is reported.
        if isinstance(rec, Requirement) or mentions_flash_attn(str(const.value)):
            yield rec
    yield from _elsewhere(tree, index, set(reached))


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
