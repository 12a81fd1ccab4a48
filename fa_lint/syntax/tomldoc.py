"""Reading TOML with the position of every value.

``tomllib`` gives values but no positions, and no maintained TOML library exposes source spans
(tomlkit keeps formatting, not offsets). So the document is parsed twice: ``tomllib`` decides what
it means and whether it is valid; a small scanner (``_tomlspans``), which runs only on text ``tomllib``
accepted, records where each key and value sits. Paths are tuples of keys and array indices, the same way
the ``tomllib`` result is indexed: ``("project", "dependencies", 3)``, ``("package", 12, "name")``.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from fa_lint.model import ParseProblem
from fa_lint.syntax._tomlspans import Span, TomlPath, spans, string_at
from fa_lint.syntax.text import TextIndex

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["Span", "TomlDoc", "TomlPath", "load", "spans", "string_at"]


class TomlDoc:
    """A parsed document, and where its keys and values are: scanned when a location is first asked
    for (a configuration read for its [tool] table asks for none)."""

    __slots__ = ("_spans", "data", "index")

    def __init__(self, data: dict[str, Any], index: TextIndex) -> None:
        self.data = data
        self.index = index
        self._spans: dict[TomlPath, Span] | None = None

    @property
    def spans(self) -> dict[TomlPath, Span]:
        if self._spans is None:
            self._spans = spans(self.index.text)
        return self._spans

    def key_location(self, path: TomlPath) -> tuple[int, int]:
        """Offsets of a key-value pair, from the key to the end of its value."""
        span = self._nearest(path)
        return span.key, span.end

    def value_location(self, path: TomlPath) -> tuple[int, int]:
        """Offsets of a value; a string's without its quotes."""
        span = self._nearest(path)
        return span.inner(self.index.text)

    def _nearest(self, path: TomlPath) -> Span:
        found = self.spans
        while path and path not in found:
            path = path[:-1]
        return found.get(path, Span(0, 0, 0))


# Documents the configuration lookup parsed (each folder's pyproject.toml, for its [tool] table), by
# their text: the lint pass takes the one it would otherwise parse a second time. Each is taken once.
_kept: dict[str, TomlDoc] = {}


def load(path: str, text: str, *, keep: bool = False) -> TomlDoc | ParseProblem:
    """Parse TOML; invalid TOML is a located ``ParseProblem``, never an exception. ``keep``: the lint
    pass will read this file too, so the document waits for it."""
    kept = _kept.pop(text, None)
    doc = kept if kept is not None and kept.index.path == path else _parse(path, text)
    if keep and isinstance(doc, TomlDoc):
        _kept[text] = doc
    return doc


def _parse(path: str, text: str) -> TomlDoc | ParseProblem:
    index = TextIndex(path, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line, col = getattr(exc, "lineno", None), getattr(exc, "colno", None)
        if line is None:  # Python < 3.14 puts the position only in the message
            m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
            line, col = (int(m.group(1)), int(m.group(2))) if m else (1, 1)
        msg = getattr(exc, "msg", None) or re.sub(
            r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(exc)
        )
        start = len(text) if "end of document" in str(exc) else index.offset(line, col or 1)
        return ParseProblem(index.location(start, start), f"invalid TOML: {msg}")
    return TomlDoc(data, index)
