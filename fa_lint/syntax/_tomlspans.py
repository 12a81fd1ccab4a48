"""Where every key and value of a valid TOML document sits: a small scanner over text ``tomllib``
already accepted (no maintained TOML library exposes source spans; tomlkit keeps formatting, not
offsets). Paths are tuples of keys and array indices, the way the ``tomllib`` result is indexed:
``("project", "dependencies", 3)``, ``("package", 12, "name")``.
"""

from __future__ import annotations

import re
import sys

from fa_lint._lazy import Lazy
from fa_lint._records import NamedTuple
from fa_lint.syntax.text import unescaped

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

TomlPath = tuple[str | int, ...]

_SPACE = re.compile(r"[ \t\r\n]*")
_BLANK = re.compile(r"[ \t]*")
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_LITERAL = Lazy(r"'[^'\n]*'")
_SCALAR = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:[0-9:.]+(?:[Zz]|[+-]\d{2}:\d{2})?|[^\s,\]}#]+")


class Span(NamedTuple):
    key: int  # offset where the key starts (the value's own start for array items)
    start: int  # value start (the opening quote of a string)
    end: int  # value end, exclusive

    def inner(self, text: str) -> tuple[int, int]:
        """Offsets of a string value without its quotes (triple quotes included)."""
        q = 3 if text.startswith(('"""', "'''"), self.start) else 1
        if text[self.start] not in "\"'":
            return self.start, self.end
        return self.start + q, self.end - q


class _Scanner:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.spans: dict[TomlPath, Span] = {}
        self.arrays: dict[TomlPath, int] = {}

    def run(self) -> dict[TomlPath, Span]:
        s = self.s
        current: TomlPath = ()
        while True:
            self._skip()
            if self.i >= len(s):
                return self.spans
            start = self.i
            if s.startswith("[[", self.i):
                self.i += 2
                keys = self._keys()
                self.i += 2
                current = self._header(keys, array=True)
                self.spans[current] = Span(start, start, self.i)
            elif s[self.i] == "[":
                self.i += 1
                keys = self._keys()
                self.i += 1
                current = self._header(keys, array=False)
                self.spans.setdefault(current, Span(start, start, self.i))
            else:
                keys = self._keys()
                self._blank()
                self.i += 1  # "="
                self._blank()
                self._value(current + keys, start)

    def _header(self, keys: tuple[str, ...], *, array: bool) -> TomlPath:
        # A header names a table inside the *last* element of every array of tables on its way.
        path: TomlPath = ()
        for n, key in enumerate(keys):
            path += (key,)
            last = n == len(keys) - 1
            if path in self.arrays and not (array and last):
                path += (self.arrays[path] - 1,)
        if array:
            index = self.arrays.get(path, 0)
            self.arrays[path] = index + 1
            path += (index,)
        return path

    def _skip(self) -> None:
        """Past blanks, line breaks and comments. A loop, not one (blank|comment)* pattern: Python's
        re keeps a frame per repetition, and a file can hold millions of blank lines."""
        s = self.s
        while True:
            m = _SPACE.match(s, self.i)
            self.i = m.end() if m else self.i
            if not s.startswith("#", self.i):
                return
            end = s.find("\n", self.i)
            self.i = len(s) if end < 0 else end

    def _blank(self) -> None:
        m = _BLANK.match(self.s, self.i)
        self.i = m.end() if m else self.i

    def _keys(self) -> tuple[str, ...]:
        keys: list[str] = []
        while True:
            self._blank()
            c = self.s[self.i]
            if c == '"':
                end = _basic_end(self.s, self.i)
                assert end is not None
                keys.append(tomllib.loads(f"k = {self.s[self.i : end]}")["k"])
                self.i = end
            else:
                m = (_LITERAL() if c == "'" else _BARE).match(self.s, self.i)
                assert m is not None
                # "name", "version": one string each, not one a key
                keys.append(m.group()[1:-1] if c == "'" else sys.intern(m.group()))
                self.i = m.end()
            self._blank()
            if self.s.startswith(".", self.i):
                self.i += 1
                continue
            return tuple(keys)

    def _value(self, path: TomlPath, key_start: int) -> None:  # noqa: C901 - complexity 17: a dispatch over the kinds of TOML value (three string forms, array, inline table, scalar) in a hand scanner; a table would hide their order of precedence
        s = self.s
        start = self.i
        c = s[start]
        if s.startswith('"""', start):
            end = start + 3
            while True:
                end = s.index('"""', end)
                backslashes = 0
                while s[end - 1 - backslashes] == "\\":
                    backslashes += 1
                if backslashes % 2:
                    end += 1
                    continue
                break
            while s.startswith('"', end + 3):  # up to two quotes may close the content
                end += 1
            self.i = end + 3
        elif s.startswith("'''", start):
            end = s.index("'''", start + 3)
            while s.startswith("'", end + 3):
                end += 1
            self.i = end + 3
        elif c in "\"'":
            closed = string_at(s, start)
            assert closed is not None
            self.i = closed
        elif c == "[":
            self.i += 1
            n = 0
            while True:
                self._skip()
                if s[self.i] == "]":
                    self.i += 1
                    break
                self._value((*path, n), self.i)
                n += 1
                self._skip()
                if s[self.i] == ",":
                    self.i += 1
        elif c == "{":
            self.i += 1
            while True:
                self._skip()
                if s[self.i] == "}":
                    self.i += 1
                    break
                kstart = self.i
                keys = self._keys()
                self.i += 1  # "="
                self._skip()
                self._value(path + keys, kstart)
                self._skip()
                if s[self.i] == ",":
                    self.i += 1
        else:
            m = _SCALAR.match(s, start)
            assert m is not None
            self.i = m.end()
        self.spans[path] = Span(key_start, start, self.i)


def string_at(text: str, start: int) -> int | None:
    """Where the one-line basic or literal string that starts at ``start`` ends (after its quote)."""
    if text.startswith('"', start):
        return _basic_end(text, start)
    m = _LITERAL().match(text, start)
    return m.end() if m else None


def _basic_end(text: str, start: int) -> int | None:
    """The end of the one-line basic string that opens at ``start``: past its first unescaped quote."""
    close = unescaped(text, '"', start + 1)
    if close < 0 or text.find("\n", start, close) >= 0:
        return None
    return close + 1


def spans(text: str) -> dict[TomlPath, Span]:
    """Where every key and value of a valid TOML document sits."""
    return _Scanner(text).run()
