"""The functions a script defines, as bash keeps them: a table by name, looked up when a call runs.

A definition replaces the one before it; ``unset -f`` forgets one (``fa_lint.shell.walk`` reads the
commands). The walk follows a function at each call with arguments it has not seen; the bodies never
called, those replaced before any call included, are what it reads at the end as possible
(``waiting``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node


class Function:
    __slots__ = ("active", "body", "called", "seen")

    def __init__(self, body: Node) -> None:
        self.body = body
        self.called = False  # followed at least once
        self.active = 0  # calls being followed now: one from inside its body is recursion
        # the calls followed: (each argument's values, or None where unknown; whether possible)
        self.seen: set[tuple[tuple[tuple[str, ...] | None, ...], bool]] = set()


class Functions:
    def __init__(self) -> None:
        self.named: dict[str, Function] = {}  # as a call would find them now
        self.replaced: list[Function] = []  # defined, then defined again before any call

    def __contains__(self, name: str) -> bool:
        return name in self.named

    def __getitem__(self, name: str) -> Function:
        return self.named[name]

    def define(self, name: str, body: Node) -> None:
        old = self.named.get(name)
        if old is not None and (old.body.start_byte, old.body.end_byte) == (body.start_byte, body.end_byte):
            return  # the same definition read again: its body is already known, called or not
        if old is not None and not old.called:
            self.replaced.append(old)
        self.named[name] = Function(body)

    def forget(self, name: str) -> None:
        """``unset -f``: later calls run a command of that name. A body unset before any call never
        runs, and is not read."""
        self.named.pop(name, None)

    def waiting(self) -> list[Function]:
        """The bodies never called yet, in the order they were defined."""
        return [fn for fn in (*self.replaced, *self.named.values()) if not fn.called]
