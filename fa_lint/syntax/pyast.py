"""Reading Python files with ``ast``, never running them: string literals located in the text, and
the values module-level names are given (``GPU = [...]``, ``reqs.append(...)``).

Shared by setup.py and noxfile.py.
"""

from __future__ import annotations

import ast
import bisect
import functools
import itertools
import re
import warnings
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator

from fa_lint.model import ParseProblem
from fa_lint.syntax.identifiers import as_python_reads
from fa_lint.syntax.text import PYTHON_LINES, TextIndex, line_starts

_QUOTE = re.compile(r"[rRuUbBfF]*('''|\"\"\"|'|\")")


def _utf8_len(char: str) -> int:
    return len(char.encode("utf-8", "surrogatepass"))


class PythonIndex(TextIndex):
    """A Python file's ``TextIndex`` that also knows where Python's own lines start: ast numbers lines
    as the tokenizer breaks them (a lone "\r" ends one, a form feed does not), fa-lint's end at "\n"
    (see ``syntax.text``), so positions cross over as offsets."""

    @functools.cached_property
    def python_starts(self) -> list[int]:
        """Where each of Python's lines starts (made when first asked: most files read have no
        position to place); where the text holds no "\r", Python's lines are ``TextIndex``'s."""
        if "\r" in self.text:
            return line_starts(self.text, PYTHON_LINES)
        return self._starts.tolist()

    @functools.cached_property
    def reads(self) -> tuple[str, list[int]]:
        """The text as Python reads its names (``identifiers.as_python_reads``: NFKC where that can
        add a word), and where Python's lines start in it."""
        text = as_python_reads(self.text)
        return text, self.python_starts if text is self.text else line_starts(text, PYTHON_LINES)

    def python_line(self, line: int) -> int:
        """The offset where Python's 1-based ``line`` starts (clamped to the text)."""
        return self.python_starts[min(max(line, 1), len(self.python_starts)) - 1]

    def column(self, line: int, byte_col: int) -> int:
        """The characters before an ast column (UTF-8 bytes) on Python's ``line``. Worked out per line
        once, not per node: a long line holds many nodes, and slicing it for each was quadratic."""
        found = self._columns.get(line)
        if found is None:
            start = self.python_line(line)
            end = self.python_starts[line] if line < len(self.python_starts) else len(self.text)
            text = self.text[start:end]
            # empty for an ASCII line, where a byte is a character; else where each character starts
            ascii_ = text.isascii()
            found = self._columns[line] = (
                [] if ascii_ else list(itertools.accumulate(map(_utf8_len, text), initial=0))
            )
        if not found:
            return byte_col
        return bisect.bisect_right(found, byte_col) - 1

    @functools.cached_property
    def _columns(self) -> dict[int, list[int]]:
        return {}


def parse(index: PythonIndex, what: str) -> ast.Module | ParseProblem:
    """The module's tree, or where Python's own parser stops (``what`` names the file kind)."""
    try:
        # '\d' in a plain string is a SyntaxWarning on 3.12+: Python's complaint, not the user's problem here
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(index.text, filename=index.path)
    except SyntaxError as exc:
        start = min(index.python_line(exc.lineno or 1) + max((exc.offset or 1) - 1, 0), len(index.text))
        return ParseProblem(index.location(start, start), f"{what} has a syntax error: {exc.msg}")
    except (MemoryError, RecursionError):
        # CPython's parser gives up on its own stack (MemoryError, "parser stack overflow") on a long
        # chain of unary operators, or its compiler's recursion on deep nesting: no line to point at.
        return ParseProblem(
            index.location(0, 0),
            f"{what} nests too deeply to read (thousands of levels of brackets or operators)",
        )


# Nodes with nothing below them but names and constants: a walk for statements, calls or assignments
# need not descend into them (fa_lint.code.python, sources.python_commands).
LEAVES = (
    ast.Constant,
    ast.Name,
    ast.expr_context,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
    ast.alias,
)


# Fields that hold no node by Python's grammar (names, numbers, flags), and the contexts and operators
# (leaves): never looked into. (3.12's TypeAlias.name is a Name, a leaf too; tests/test_code_reading.py
# compares the children with ast.iter_child_nodes' on every construct.)
_NOT_NODES = frozenset(
    {"ctx", "op", "ops", "name", "id", "attr", "arg", "module", "level", "kind", "type_comment"}
    | {"conversion", "is_async", "simple", "tag", "rest"}
)
_FIELDS: dict[type, tuple[str, ...]] = {}  # each node class's other fields, in the grammar's order


def children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes`` without the leaves, in its order, from a table of each class's fields
    (its generators were a third of the walk)."""
    kind = type(node)
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(f for f in kind._fields if f not in _NOT_NODES)
    found: list[ast.AST] = []
    for field in fields:
        value = getattr(node, field, None)
        if isinstance(value, list):
            found += [c for c in value if isinstance(c, ast.AST) and not isinstance(c, LEAVES)]
        elif isinstance(value, ast.AST) and not isinstance(value, LEAVES):
            found.append(value)
    return found


def walk(tree: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk``'s nodes in its order (breadth first), less the leaves (``children``)."""
    todo = deque([tree])
    while todo:
        node = todo.popleft()
        todo.extend(children(node))
        yield node


ADDS = ("append", "extend", "add")  # what adds to a name: ``reqs.append(...)``


class Flow:
    """Names and the expressions assigned or added to them, anywhere in the tree. ``nodes``: the
    tree's ``walk``, or the part of it that holds every statement and every call of one of ``ADDS``
    (``pylines.walk``), in its order."""

    def __init__(self, tree: ast.AST, nodes: Iterable[ast.AST] | None = None) -> None:
        self.values: dict[str, list[tuple[ast.expr, str | None]]] = defaultdict(list)
        self.functions: set[str] = set()
        for node in walk(tree) if nodes is None else nodes:  # one walk for both (issue 41)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
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
                and node.func.attr in ADDS
            ):
                for arg in node.args:
                    self.values[node.func.value.id].append((arg, None))


def offset(index: PythonIndex, line: int, byte_col: int) -> int:
    """The text offset of an ast position: Python's own line, and a column of UTF-8 bytes."""
    return index.python_line(line) + index.column(line, byte_col)


def node_span(index: PythonIndex, node: ast.expr) -> tuple[int, int]:
    """Offsets of an expression's whole text."""
    start = offset(index, node.lineno, node.col_offset)
    end = offset(index, node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)
    return start, end


def span(index: PythonIndex, node: ast.expr) -> tuple[int, int]:
    """Offsets of a string literal's text, without prefix and quotes."""
    start, end = node_span(index, node)
    m = _QUOTE.match(index.text, start)
    if m and node.lineno == node.end_lineno and index.text[end - 1 : end] == m.group(1)[-1]:
        return m.end(), end - len(m.group(1))
    return start, end
