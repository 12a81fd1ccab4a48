"""Where the keys of a valid JSON document sit (``json`` gives no positions).

In valid JSON a quote followed by ``:`` closes a key, unless it is escaped inside a string (an odd run
of backslashes before it: a notebook's output that prints JSON): one pass over the text finds them,
matched in document order to the members ``json`` read (``matched``). Should they not match one to
one (a key written twice in an object, of which ``json`` keeps one; a key that holds an escaped quote),
a scanner that walks the text token by token places them instead (``scanned``).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

from fa_lint.syntax.text import unescaped

JsonPath = tuple[str | int, ...]

_KEY_END = re.compile(r'"[ \t\r\n]*:')  # a key's closing quote, and the colon after it
_WS = re.compile(r"[ \t\r\n]*")
_SCALAR = re.compile(r"[^\s,\]}]+")


def _members(value: Any) -> Iterator[tuple[Any, Any]]:
    return iter(value.items()) if isinstance(value, dict) else enumerate(value)


def _unescaped(written: str) -> str | None:
    if "\\" not in written:
        return written
    try:
        found: str = json.loads(f'"{written}"')
    except ValueError:  # not a whole string: the quote found was an escaped one
        return None
    return found


def _count(value: Any) -> int:
    """How many object members ``value`` holds, at any depth."""
    n = len(value) if isinstance(value, dict) else 0
    for child in value.values() if isinstance(value, dict) else value:
        if isinstance(child, (dict, list)) and child:
            n += _count(child)
    return n


def matched(text: str, data: Any, depth: int) -> dict[JsonPath, int] | None:  # noqa: C901 - complexity 11: keys matched to members in one closure over the key iterator, each mismatch an early exit; split, the iterator and the keys found would travel through every part
    """Where each member's key starts, down to ``depth``: the keys the expression finds, matched in
    order to the members of ``data`` (deeper ones counted, not compared); None unless they match."""
    found = (m for m in _KEY_END.finditer(text) if _delimits(text, m.start()))
    keys: dict[JsonPath, int] = {}

    def match(value: Any, path: JsonPath) -> bool:
        for name, child in _members(value):
            if isinstance(name, str):  # an object's member; list items have no key
                m = next(found, None)
                start = text.rfind('"', 0, m.start()) if m else -1
                if m is None or _unescaped(text[start + 1 : m.start()]) != name:
                    return False
                member = (*path, name)
                keys[member] = start
            if isinstance(child, (dict, list)) and child:
                if len(path) + 1 < depth:
                    if not match(child, (*path, name)):
                        return False
                elif (n := _count(child)) and next(itertools.islice(found, n - 1, None), None) is None:
                    return False
        return True

    try:
        if isinstance(data, (dict, list)) and not match(data, ()):
            return None
    except RecursionError:  # deeper than the interpreter recurses: the scanner says so
        return None
    return keys if next(found, None) is None else None


def _delimits(text: str, quote: int) -> bool:
    """Whether the quote at ``quote`` opens or closes a string, not one escaped inside it (``\\":`` in a
    notebook's printed JSON): in valid JSON an escaped quote has an odd run of backslashes before it."""
    before = quote
    while before and text[before - 1] == "\\":
        before -= 1
    return (quote - before) % 2 == 0


def string_end(text: str, start: int) -> int:
    """Past the closing quote of the string that opens at ``start`` (the document is valid JSON)."""
    return unescaped(text, '"', start + 1) + 1


class _Scanner:
    """Every key's offset, found by walking the text token by token."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.keys: dict[JsonPath, int] = {}

    def _ws(self) -> None:
        m = _WS.match(self.s, self.i)
        self.i = m.end() if m else self.i

    def value(self, path: JsonPath) -> None:
        self._ws()
        s, start = self.s, self.i
        if s[start] == "{":
            self.i += 1
            while True:
                self._ws()
                if s[self.i] == "}":
                    self.i += 1
                    break
                if s[self.i] == ",":
                    self.i += 1
                    continue
                kstart = self.i
                self.i = string_end(s, kstart)
                key = json.loads(s[kstart : self.i])
                self._ws()
                self.i += 1  # ":"
                member = (*path, key)
                self.keys[member] = kstart
                self.value(member)
        elif s[start] == "[":
            self.i += 1
            n = 0
            while True:
                self._ws()
                if s[self.i] == "]":
                    self.i += 1
                    break
                if s[self.i] == ",":
                    self.i += 1
                    continue
                self.value((*path, n))
                n += 1
        elif s[start] == '"':
            self.i = string_end(s, start)
        else:
            m = _SCALAR.match(s, start)
            assert m is not None
            self.i = m.end()


def scanned(text: str) -> dict[JsonPath, int] | None:
    """Every member's key, placed by the scanner; None when the nesting is too deep for it."""
    scanner = _Scanner(text)
    try:
        scanner.value(())
    except RecursionError:
        return None
    return scanner.keys
