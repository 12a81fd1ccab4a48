"""Imports of FlashAttention 3's own module, ``flash_attn_interface``, that nothing guards.

FA3 (flash-attention's ``hopper/``) installs a top-level ``flash_attn_interface`` module; flash-attn 2
installs ``flash_attn.flash_attn_interface`` and never a top-level one (no release's setup.py lists
``py_modules``: ``fa_lint/kb/fa3.json``). An ``import flash_attn_interface`` (or ``from
flash_attn_interface import ...``) outside a ``try`` that catches ImportError and outside any ``if``
runs unconditionally, so with only flash-attn 2 installed it raises ModuleNotFoundError. Read only in
files whose text names the module, from the imports ``code.python``'s one walk of the tree finds
outside every guard (issue 41: not a walk of its own, and another of each guard's body).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from fa_lint.code.uses import FA3_MODULE as MODULE
from fa_lint.code.uses import IMPORT, Use
from fa_lint.syntax import pyast
from fa_lint.syntax.pyast import PythonIndex

_CATCHES = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def fa3_imports(index: PythonIndex, unguarded: list[ast.Import | ast.ImportFrom]) -> Iterator[Use]:
    """The uses among a file's unguarded imports (``code.python``'s walk tells them: outside every
    ``if`` and every ``try`` body whose handlers ``catches`` ImportError)."""
    for node in unguarded:
        if _names(node):
            start = pyast.offset(index, node.lineno, node.col_offset)
            end = pyast.offset(index, node.lineno, node.end_col_offset or node.col_offset)
            yield Use(IMPORT, index.location(start, end), name=MODULE, detail=ast.unparse(node))


def _names(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return not node.level and (node.module or "").split(".")[0] == MODULE
    return any(a.name.split(".")[0] == MODULE for a in node.names)


def catches(handler: ast.ExceptHandler) -> bool:
    """A handler of ImportError (or wider): a bare except, a name, or a tuple of names."""
    kinds = handler.type
    if kinds is None:
        return True
    names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return any(isinstance(n, ast.Name) and n.id in _CATCHES for n in names)
