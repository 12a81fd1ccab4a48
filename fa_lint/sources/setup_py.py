"""setup.py, read with ``ast`` and never run: requirement strings handed to ``setup()``.

Strings reach ``install_requires``, ``extras_require`` and ``setup_requires`` directly or through
module-level names (``GPU = [...]``, ``extras["gpu"] = [...]``, ``reqs += [...]``). A flash-attn
string with a version or URL anywhere else in a list or call (a helper such as
``add_unique(reqs, ["flash-attn>=2.0"])``) counts too; a bare "flash_attn" outside requirement
keywords does not, since ``packages=["flash_attn"]`` names a module, not a requirement.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fa_lint.model import FLASH_ATTN, Parsed, ParseProblem, Requirement, mentions_flash_attn
from fa_lint.sources import _pyast, _reqs
from fa_lint.sources._pyast import Flow
from fa_lint.sources._text import TextIndex

NAME = "setup.py"
PATTERNS = ("setup.py",)
KEYWORDS = {
    "install_requires": "project",
    "setup_requires": "build-system",
    "tests_require": "tests",
    "extras_require": "extra",
}


def _strings(
    node: ast.expr, scope: str, flow: Flow, out: dict[int, tuple[ast.Constant, str]], seen: set[str]
) -> None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        out.setdefault(id(node), (node, scope))
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        for elt in node.elts:
            _strings(elt.value if isinstance(elt, ast.Starred) else elt, scope, flow, out, seen)
    elif isinstance(node, ast.Starred):
        _strings(node.value, scope, flow, out, seen)
    elif isinstance(node, ast.BinOp):
        _strings(node.left, scope, flow, out, seen)
        _strings(node.right, scope, flow, out, seen)
    elif isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values, strict=True):
            key = k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None
            _strings(v, f"extra:{key}" if scope == "extra" and key is not None else scope, flow, out, seen)
    elif isinstance(node, ast.Call):
        for arg in node.args:
            _strings(arg, scope, flow, out, seen)
    elif isinstance(node, ast.Name) and node.id not in seen:
        seen.add(node.id)
        for value, key in flow.values.get(node.id, []):
            sub = f"extra:{key}" if scope == "extra" and key is not None else scope
            _strings(value, sub, flow, out, seen)


def parse(path: str, text: str) -> Iterator[Parsed]:
    index = TextIndex(path, text)
    tree = _pyast.parse(index, "setup.py")
    if isinstance(tree, ParseProblem):
        yield tree
        return
    flow = Flow(tree)
    reached: dict[int, tuple[ast.Constant, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (
            getattr(node.func, "id", None) == "setup" or getattr(node.func, "attr", None) == "setup"
        ):
            for kw in node.keywords:
                if kw.arg in KEYWORDS:
                    _strings(kw.value, KEYWORDS[kw.arg], flow, reached, set())
    for const, scope in reached.values():
        start, end = _pyast.span(index, const)
        rec = _reqs.at(index, start, end, NAME, scope=scope)
        # Name-following can reach strings that are not meant as requirements (a file name handed to
        # a reader function): those are no fault of the file. One that names flash-attn but is no
        # PEP 508 string ("flash-attn --no-build-isolation") makes pip fail, and is reported.
        if isinstance(rec, Requirement) or mentions_flash_attn(str(const.value)):
            yield rec
    yield from _elsewhere(tree, index, set(reached))


def _elsewhere(tree: ast.Module, index: TextIndex, reached: set[int]) -> Iterator[Parsed]:
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
            start, end = _pyast.span(index, elt)
            rec = _reqs.at(index, start, end, NAME, scope="project")
            if isinstance(rec, Requirement) and rec.name == FLASH_ATTN and (rec.specifier or rec.url):
                reached.add(id(elt))
                yield rec
