"""Reading JSON with the position of every value (``json`` gives none), for Pipfile.lock.

Like ``_toml``: ``json`` decides validity and meaning, and this scanner, run only on valid JSON,
records where each member sits, by the same key/index paths.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from fa_lint.model import ParseProblem
from fa_lint.sources._text import TextIndex
from fa_lint.sources._toml import Span, TomlPath

_WS = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_SCALAR = re.compile(r"[^\s,\]}]+")


class _Scanner:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.spans: dict[TomlPath, Span] = {}

    def _ws(self) -> None:
        m = _WS.match(self.s, self.i)
        self.i = m.end() if m else self.i

    def value(self, path: TomlPath, key_start: int) -> None:
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
                m = _STRING.match(s, kstart)
                assert m is not None
                key = json.loads(m.group())
                self.i = m.end()
                self._ws()
                self.i += 1  # ":"
                self.value((*path, key), kstart)
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
                self.value((*path, n), self.i)
                n += 1
        else:
            m = (_STRING if s[start] == '"' else _SCALAR).match(s, start)
            assert m is not None
            self.i = m.end()
        self.spans[path] = Span(key_start, start, self.i)


@dataclass(frozen=True, slots=True)
class JsonDoc:
    data: Any
    index: TextIndex
    spans: dict[TomlPath, Span]


def key_span(doc: JsonDoc, path: TomlPath) -> tuple[int, int]:
    """Offsets of a member's quoted key (escapes as written), or of the nearest enclosing member's."""
    while path and path not in doc.spans:
        path = path[:-1]
    start = doc.spans[path].key if path else 0
    m = _STRING.match(doc.index.text, start)
    return start, m.end() if m else start


def load(path: str, text: str) -> JsonDoc | ParseProblem:
    index = TextIndex(path, text)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return ParseProblem(index.location(exc.pos, exc.pos), f"invalid JSON: {exc.msg}")
    scanner = _Scanner(text)
    scanner.value((), 0)
    return JsonDoc(data, index, scanner.spans)
