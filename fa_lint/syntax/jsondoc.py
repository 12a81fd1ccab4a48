"""Reading JSON with the position of every object member's key (``json`` gives none), for Pipfile.lock.

``json`` decides validity and meaning; ``_jsonkeys`` places the keys in the text.
"""

from __future__ import annotations

import json
from typing import Any

from fa_lint.model import ParseProblem
from fa_lint.syntax import _jsonkeys
from fa_lint.syntax._jsonkeys import JsonPath
from fa_lint.syntax.text import Cursor

__all__ = ["JsonDoc", "JsonPath", "key_span", "load"]


class JsonDoc:
    __slots__ = ("complete", "data", "index", "keys")

    def __init__(self, data: Any, index: Cursor, keys: dict[JsonPath, int], complete: bool) -> None:
        self.data = data
        self.index = index
        self.keys = keys  # where object members' keys start (their opening quote)
        self.complete = complete  # whether ``keys`` holds every member's, at any depth


def key_span(doc: JsonDoc, path: JsonPath) -> tuple[int, int]:
    """Offsets of a member's quoted key (escapes as written), or of the nearest enclosing member's."""
    if path not in doc.keys and not doc.complete:  # deeper than ``load`` placed keys: place them all
        doc.keys, doc.complete = _jsonkeys.scanned(doc.index.text) or doc.keys, True
    while path and path not in doc.keys:
        path = path[:-1]
    start = doc.keys[path] if path else 0
    text = doc.index.text
    return start, _jsonkeys.string_end(text, start) if text.startswith('"', start) else start


def load(path: str, text: str, depth: int = 2) -> JsonDoc | ParseProblem:
    """The document, and where its keys start down to ``depth`` (the scanner may place deeper ones)."""
    index = Cursor(path, text)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return ParseProblem(index.location(exc.pos, exc.pos), f"invalid JSON: {exc.msg}")
    keys = _jsonkeys.matched(text, data, depth)
    if keys is not None:
        return JsonDoc(data, index, keys, complete=False)
    return JsonDoc(data, index, _jsonkeys.scanned(text) or {}, complete=True)
