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
import warnings
from collections import defaultdict
from collections.abc import Iterator

from fa_lint.model import FLASH_ATTN, Parsed, ParseProblem, Requirement
from fa_lint.sources import _reqs
from fa_lint.sources._text import PYTHON_LINES, TextIndex, line_starts

NAME = "setup.py"
PATTERNS = ("setup.py",)
KEYWORDS = {
    "install_requires": "project",
    "setup_requires": "build-system",
    "tests_require": "tests",
    "extras_require": "extra",
}
_QUOTE = re.compile(r"[rRuUbBfF]*('''|\"\"\"|'|\")")


class _Flow:
    """Module-level names and the expressions assigned or added to them."""

    def __init__(self, tree: ast.Module) -> None:
        self.values: dict[str, list[tuple[ast.expr, str | None]]] = defaultdict(list)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        self.values[t.id].append((node.value, None))
                    elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                        key = t.slice.value if isinstance(t.slice, ast.Constant) else None
                        self.values[t.value.id].append((node.value, key if isinstance(key, str) else None))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.attr in ("append", "extend", "add")
            ):
                for arg in node.args:
                    self.values[node.func.value.id].append((arg, None))


def _strings(
    node: ast.expr, scope: str, flow: _Flow, out: dict[int, tuple[ast.Constant, str]], seen: set[str]
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


def _offset(index: TextIndex, starts: list[int], line: int, byte_col: int) -> int:
    """The offset of an ast position: Python's own line (a lone "\r" ends one) and a UTF-8 byte column."""
    start = starts[min(line, len(starts)) - 1]
    text = index.text[start : start + byte_col]  # a character is at least one byte
    return start + len(text.encode()[:byte_col].decode(errors="ignore"))


def _span(index: TextIndex, starts: list[int], node: ast.Constant) -> tuple[int, int]:
    """Offsets of a string literal's text, without prefix and quotes."""

    def offset(line: int, byte_col: int) -> int:
        return _offset(index, starts, line, byte_col)

    start = offset(node.lineno, node.col_offset)
    end = offset(node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)
    m = _QUOTE.match(index.text, start)
    if m and node.lineno == node.end_lineno and index.text[end - 1 : end] == m.group(1)[-1]:
        return m.end(), end - len(m.group(1))
    return start, end


def parse(path: str, text: str) -> Iterator[Parsed]:
    index = TextIndex(path, text)
    starts = line_starts(text, PYTHON_LINES)
    try:
        # '\d' in a plain string is a SyntaxWarning on 3.12+: Python's complaint, not the user's problem here
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        line = starts[min(exc.lineno or 1, len(starts)) - 1]
        start = min(line + max((exc.offset or 1) - 1, 0), len(text))  # a character column
        yield ParseProblem(index.location(start, start), f"setup.py has a syntax error: {exc.msg}")
        return
    flow = _Flow(tree)
    reached: dict[int, tuple[ast.Constant, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (
            getattr(node.func, "id", None) == "setup" or getattr(node.func, "attr", None) == "setup"
        ):
            for kw in node.keywords:
                if kw.arg in KEYWORDS:
                    _strings(kw.value, KEYWORDS[kw.arg], flow, reached, set())
    for const, scope in reached.values():
        start, end = _span(index, starts, const)
        rec = _reqs.at(index, start, end, NAME, scope=scope)
        # Only requirements: name-following can reach strings that are not meant as requirements
        # (a file name handed to a reader function), and those are no fault of the file.
        if isinstance(rec, Requirement):
            yield rec
    yield from _elsewhere(tree, index, starts, set(reached))


def _elsewhere(tree: ast.Module, index: TextIndex, starts: list[int], reached: set[int]) -> Iterator[Parsed]:
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
            start, end = _span(index, starts, elt)
            rec = _reqs.at(index, start, end, NAME, scope="project")
            if isinstance(rec, Requirement) and rec.name == FLASH_ATTN and (rec.specifier or rec.url):
                reached.add(id(elt))
                yield rec
