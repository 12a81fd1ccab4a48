"""Walks of a Python tree that skip what cannot hold what they look for (issue 41).

A reader that looks for a call of ``subprocess.run`` or a keyword ``instance_type=`` needs only the
parts of the tree whose lines hold that word: the word is written inside the call (the callee's
name, the keyword's), and every node's lines hold its parts' lines. So a walk may leave out each node
whose lines hold none of the word's lines, and keeps the others in their order (an ancestor of what
it looks for holds the word's line too). Two exceptions to "a node's lines hold its parts'": a
decorated ``def`` or ``class`` starts at its ``def`` line, after its decorators (its lines are taken
from the first decorator); and the nodes inside an f-string, which Python before 3.12 placed by a
second parse of the string's text, are all walked where the f-string holds a word. A node with no
position of its own (``arguments``, ``comprehension``, ``withitem``, ``match_case``) is walked into.

tests/test_pruned_walks.py compares these walks with the full ones on constructed cases.
"""

from __future__ import annotations

import ast
import bisect
from collections import deque
from collections.abc import Iterable, Iterator

from fa_lint.syntax.pyast import PythonIndex, children

# What holds statements: a walk for imports or assignments keeps these whatever their lines say.
STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)
_IDENTIFIER = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def word_lines(index: PythonIndex, words: Iterable[str], *, names: bool = True) -> list[int]:
    """Python's numbers (``ast``'s ``lineno``) of the lines where one of ``words`` is written as a name
    (no ASCII letter, digit or "_" either side; with ``names=False``, anywhere, as part of a longer
    name too), sorted. Searched in the text as Python reads its names (NFKC: a full-width ``run`` is
    ``run``); where normalising would move a line break, every line."""
    text, starts = index.reads
    if len(starts) != len(index.python_starts):
        return list(range(1, len(index.python_starts) + 1))
    found: set[int] = set()
    for word in words:
        at = text.find(word)
        while at >= 0:
            end = at + len(word)
            if not names or (
                (at == 0 or text[at - 1] not in _IDENTIFIER) and text[end : end + 1] not in _IDENTIFIER
            ):
                found.add(bisect.bisect_right(starts, at))
            at = text.find(word, end)
    return sorted(found)


def holds(lines: list[int], node: ast.AST) -> bool:
    """Whether ``node``'s lines (a decorated definition's from its first decorator) hold one of
    ``lines``; True for a node with no position of its own."""
    first = getattr(node, "lineno", None)
    if first is None:
        return True
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        first = min(first, *(d.lineno for d in decorators))
    at = bisect.bisect_left(lines, first)
    return at < len(lines) and lines[at] <= node.end_lineno  # type: ignore[attr-defined]


def walk(tree: ast.AST, lines: list[int], statements: bool = True) -> Iterator[ast.AST]:
    """Of ``pyast.walk``'s nodes, in its order: every node on one of ``lines`` (with what holds it),
    and every statement (``STATEMENTS``) unless ``statements`` is False; some others. Below a statement
    whose lines hold none of ``lines``, only its statements are looked at (its expressions hold none
    either)."""
    todo: deque[tuple[ast.AST, bool, bool]] = deque([(tree, True, False)])
    while todo:
        node, held, whole = todo.popleft()
        if whole or isinstance(node, ast.JoinedStr):
            todo.extend((c, True, True) for c in children(node))
        elif held:
            for c in children(node):
                if holds(lines, c):
                    todo.append((c, True, False))
                elif statements and isinstance(c, STATEMENTS):
                    todo.append((c, False, False))
        else:
            todo.extend((c, holds(lines, c), False) for c in _statements(node))
        yield node


_BODIES = frozenset({"body", "orelse", "handlers", "finalbody", "cases"})  # the fields of statements
_BODY_FIELDS: dict[type, tuple[str, ...]] = {}  # each class's, in the grammar's order


def _statements(node: ast.AST) -> list[ast.AST]:
    """The statements, handlers and cases right below a statement (or handler, or case), in the order
    of ``children``."""
    kind = type(node)
    fields = _BODY_FIELDS.get(kind)
    if fields is None:
        fields = _BODY_FIELDS[kind] = tuple(f for f in kind._fields if f in _BODIES)
    found: list[ast.AST] = []
    for field in fields:
        found += getattr(node, field)
    return found
