"""Parsing shell with a real grammar: tree-sitter-bash, and the way from its bytes back to the file.

tree-sitter-bash (the grammar GitHub and editors use) parses the script. Chosen over the hand-written
lexer it replaced, which knew no control flow, and over bashlex, which gives up on heredocs, ``[[ ]]``
and arrays: tree-sitter is error-tolerant (a broken line becomes an ERROR node and the rest is still
read), and it gives a position for every node. The grammar is imported on first use, so only a run
that checks a shell file, a Dockerfile, a workflow or a Makefile loads it.

Here: the parser (``tree``), the positions (``Chunk``: UTF-8 bytes to file offsets), and the words a
command receives (``Word``, ``word``), quotes removed and expansions left as written.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from fa_lint._records import NamedTuple
from fa_lint.syntax.text import unescaped

if TYPE_CHECKING:
    from tree_sitter import Node, Parser


@functools.cache
def _parser() -> Parser:
    import tree_sitter

    return tree_sitter.Parser(tree_sitter.Language(grammar()))


def grammar(package: str = "tree_sitter_bash") -> object:
    """A tree-sitter grammar (bash's, or ``tree_sitter_powershell``'s, ``tree_sitter_batch``'s), from
    the extension module of the package that holds it.

    Each package's ``__init__`` imports importlib.resources for a highlight query fa-lint never reads,
    and with it zipfile, tempfile, shutil and pathlib: about 13 ms on every run that reads a script,
    more than reading a 500-line Dockerfile. So its ``_binding`` is loaded from the package's folder as
    the import system loads it, without that ``__init__``; in any other layout, the package is
    imported.
    """
    import importlib
    import importlib.machinery
    import importlib.util

    spec = importlib.util.find_spec(package)
    folders = (spec.submodule_search_locations or []) if spec else []
    for path in (
        os.path.join(f, "_binding" + s) for f in folders for s in importlib.machinery.EXTENSION_SUFFIXES
    ):
        found = importlib.util.spec_from_file_location(f"{package}._binding", path)
        if found is not None and found.loader is not None and os.path.isfile(path):
            binding = importlib.util.module_from_spec(found)
            found.loader.exec_module(binding)
            return binding.language()
    return importlib.import_module(package).language()


# --- positions -----------------------------------------------------------------------------------


# Runs of non-ASCII characters of one UTF-8 width (2, 3, 4 bytes: the group's number plus one). Between
# them a byte is a character, so a script's map from bytes to characters is one entry a run, not one a
# character (a Chinese comment is a few runs; the map per character cost a call each). Compiled when
# first met (re's cache): its classes of wide ranges cost 5 ms to compile, each run, ASCII scripts too.
_WIDE = "([\x80-\u07ff]+)|([\u0800-\uffff]+)|([\U00010000-\U0010ffff]+)"


# An escaped < or > standing alone, as in `[ "$v" \< "3.0" ]` (a string comparison).
_ESCAPED_ANGLE = re.compile(r"(?<=[ \t])\\[<>](?=[ \t])")
_ASTRAL = "[\U00010000-\U0010ffff\ud800-\udfff]"  # 4-byte UTF-8, and lone surrogates: compiled when met


class Chunk:
    """One stretch of a file handed to the parser, and the way back from its bytes to file offsets.

    tree-sitter counts UTF-8 bytes; ``TextIndex`` counts characters. ``base`` is the character
    offset of ``text`` in the file, or ``positions`` the offset of each of its characters (a script
    in a double-quoted ``bash -c "..."``, read without its escapes). ``parse``, when given, is what
    the parser reads instead: a copy of ``text`` of equal length with what the shell never sees
    blanked out (Docker's comment lines in a continued RUN, a workflow's ``${{ }}``); words are
    still read from ``text``.
    """

    def __init__(
        self, text: str, base: int = 0, parse: str | None = None, positions: list[int] | None = None
    ) -> None:
        self.text = text
        self.base = base
        self.positions = positions
        # tree-sitter-bash knows no `\<` or `\>` operator in `[ "$v" \< "3.0" ]` and runs the lines
        # after it into one command; to the parser it is `==`, a test it knows, of the same length.
        seen = text if parse is None else parse
        if "\\<" in seen or "\\>" in seen:  # (the pattern, a lookbehind first, is tried at each offset)
            seen = _ESCAPED_ANGLE.sub("==", seen)
        ascii_only = seen.isascii()
        # tree-sitter-bash 0.25 can read past its tables, and crash the process, on a "{" followed by
        # a character outside the BMP (tree-sitter/tree-sitter-bash#337). To the parser any such
        # character is U+FFFD, a word character of the same count: the words are read from ``text``.
        if not ascii_only:
            seen = re.sub(_ASTRAL, "\ufffd", seen)
        self.seen = seen
        self.data = seen.encode("utf-8", "surrogatepass")
        # the runs of ``_WIDE`` in ``seen``: where each starts, in characters and in bytes, its width,
        # where it ends in bytes, and the bytes past one a character up to there; None for ASCII text
        self._chars: list[int] | None = None
        self._bytes: list[int] = []
        self._widths: list[int] = []
        self._ends: list[int] = []
        self._shifts: list[int] = []
        if not ascii_only:
            self._chars = []
            shift = 0
            for m in re.finditer(_WIDE, seen):
                start, count, width = m.start(), m.end() - m.start(), (m.lastindex or 1) + 1
                self._chars.append(start)
                self._bytes.append(start + shift)
                self._widths.append(width)
                shift += count * (width - 1)
                self._ends.append(m.end() + shift)
                self._shifts.append(shift)
        # the last character index() gives: len(text), or (were ``parse`` longer) len(seen) + 1
        self._last = min(len(seen) + 1, len(text))
        # ASCII text placed in one stretch of the file: a byte is a character, a character base + it
        self._flat = ascii_only and positions is None

    def index(self, byte: int) -> int:
        """The character of ``text`` at a byte position of ``data`` (past its end: the end, see ``_tree``;
        inside a character of several bytes: the next one)."""
        if self._chars is None:
            return min(byte, len(self.text))
        k = bisect.bisect_right(self._bytes, byte) - 1  # the run starting at or before it
        if k < 0:
            return min(max(byte, 0), self._last)
        if byte >= self._ends[k]:  # in the ASCII after the run
            return min(byte - self._shifts[k], self._last)
        return min(self._chars[k] - (self._bytes[k] - byte) // self._widths[k], self._last)

    def byte(self, index: int) -> int:
        """The byte of ``data`` a character of ``text`` starts at (past its end: the end of ``data``;
        negative: counted from one past the end, as a list is indexed)."""
        if self._chars is None:
            return index
        size = len(self.seen)
        if index < 0:
            index += size + 1
            if index < 0:
                raise IndexError("character index out of range")
        index = min(index, size)
        k = bisect.bisect_right(self._chars, index) - 1
        if k < 0:
            return index
        if index >= self._ends[k] - self._shifts[k]:  # in the ASCII after the run
            return index + self._shifts[k]
        return self._bytes[k] + (index - self._chars[k]) * self._widths[k]

    def at(self, index: int) -> int:
        """The file offset of a character of ``text`` (``len(text)``: just past the last one)."""
        if self.positions is None:
            return self.base + index
        if index < len(self.positions):
            return self.positions[index]
        return self.positions[-1] + 1 if self.positions else self.base

    def offset(self, byte: int) -> int:
        return self.at(self.index(byte))

    def span(self, node: Node) -> tuple[int, int]:
        start, end = self.index(node.start_byte), self.index(node.end_byte)
        if self.positions is None:  # (at(i) is base + i)
            return self.base + start, self.base + max(start, end)
        return self.at(start), self.at(end - 1) + 1 if end > start else self.at(start)

    def read(self, node: Node) -> tuple[int, int, str]:
        """``span`` and ``source`` together, the node's two bytes looked up once."""
        start, end = self.index(node.start_byte), self.index(node.end_byte)
        raw = self.text[start:end]  # (as ``source``: in flat text, past the end is the end)
        if self.positions is None:
            return self.base + start, self.base + max(start, end), raw
        return self.at(start), self.at(end - 1) + 1 if end > start else self.at(start), raw

    def source(self, node: Node) -> str:
        if self._flat:  # slicing past the end stops at it, as index() does
            return self.text[node.start_byte : node.end_byte]
        return self.text[self.index(node.start_byte) : self.index(node.end_byte)]

    def part(self, start: int, end: int) -> Chunk:
        """The characters ``start:end`` of ``text`` as a chunk of their own, still placed in the file."""
        if self.positions is None:
            return Chunk(self.text[start:end], self.at(start), self.seen[start:end])
        return Chunk(self.text[start:end], parse=self.seen[start:end], positions=self.positions[start:end])


# --- words -----------------------------------------------------------------------------------------


class Word(NamedTuple):
    text: str  # after quote removal; variable references are kept as written
    start: int  # offsets into the file text
    end: int
    quoted: bool = False
    cut: str | None = None  # the redirect operator that ended this word mid-token (flash-attn>=2.5)


class Command:
    __slots__ = ("end", "env", "start", "words")

    def __init__(
        self, words: list[Word], start: int = 0, end: int = 0, env: dict[str, str] | None = None
    ) -> None:
        self.words = words
        self.start = start
        self.end = end
        self.env = {} if env is None else env  # VAR=x prefixes: set for this command only


_ESCAPE = re.compile(r"\\(\n|.)", re.S)
_DQ_ESCAPE = re.compile(r'\\([$`"\\\n])')
_QUOTED = {"string", "raw_string", "ansi_c_string", "translated_string"}


def _unescape(m: re.Match[str]) -> str:
    return "" if m.group(1) == "\n" else m.group(1)


def unquoted(node: Node, chunk: Chunk) -> str:
    """A word's text as the command receives it, expansions left as written."""
    return _unquoted(node, node.type, chunk.source(node), chunk)


def _unquoted(node: Node, kind: str, raw: str, chunk: Chunk) -> str:
    if kind == "word":
        return _ESCAPE.sub(_unescape, raw) if "\\" in raw else raw
    if kind == "raw_string":
        return raw[1:-1] if len(raw) > 1 and raw.endswith("'") else raw[1:]
    if kind in ("string", "translated_string"):
        inner = raw[raw.index('"') + 1 :]
        inner = inner[:-1] if inner.endswith('"') else inner
        return _DQ_ESCAPE.sub(_unescape, inner) if "\\" in inner else inner
    if kind == "ansi_c_string":
        return raw[2:-1]
    if kind == "concatenation":
        return "".join(unquoted(c, chunk) for c in node.children)
    return raw  # $X, ${X}, $(...), numbers: as written


def _quoted(node: Node) -> bool:
    return node.type in _QUOTED or (node.type == "concatenation" and any(_quoted(c) for c in node.children))


def word(node: Node, chunk: Chunk) -> Word:
    # every word of every command comes through here: each attribute of a tree-sitter node is a call
    # into the binding that makes a new object, so each is read once (``span``/``unquoted`` inlined
    # for the common case, a plain word placed in one stretch of the file)
    kind = node.type
    if kind == "word" and chunk.positions is None:
        first, last = node.start_byte, node.end_byte
        if not chunk._flat:
            first, last = chunk.index(first), chunk.index(last)
        raw = chunk.text[first:last]
        start = chunk.base + min(first, len(chunk.text))
        return Word(_ESCAPE.sub(_unescape, raw) if "\\" in raw else raw, start, start + len(raw))
    start, end, raw = chunk.read(node)
    return Word(_unquoted(node, kind, raw, chunk), start, end, _quoted(node))


def basename(path: str) -> str:
    """``posixpath.basename`` without its ``os.fspath`` and separator lookup: every command's name
    goes through it several times."""
    return path[path.rfind("/") + 1 :]


def logical_lines(text: str) -> Iterator[tuple[int, int]]:
    """Where each line starts and ends, a newline after an odd run of backslashes continuing it."""
    begin = 0
    while (end := unescaped(text, "\n", begin)) >= 0:
        yield begin, end
        begin = end + 1
    yield begin, len(text)


def joined(args: list[Node], words: list[Word]) -> tuple[list[Node], list[Word]]:
    """Arguments with nothing between them are one shell word. tree-sitter-bash can split one word
    in two (``x-$PY-$PY-y`` ends a concatenation at the second ``$``), so words are joined by position,
    not by the tree; each joined word keeps the node it starts with."""
    nodes: list[Node] = []
    out: list[Word] = []
    for node, w in zip(args, words, strict=True):
        if out and out[-1].end == w.start:
            last = out[-1]
            out[-1] = Word(last.text + w.text, last.start, w.end, last.quoted or w.quoted)
            continue
        nodes.append(node)
        out.append(w)
    return nodes, out


class TooCostly(Exception):
    """tree-sitter-bash's error recovery on a stretch ran past what ``Clock`` allows it."""


# tree-sitter-bash's error recovery is super-linear in erroneous text (1,000 lines of `echo a)b a)b`,
# 160 KB, take 88 s; 32,000 `|` 12 s), and py-tree-sitter can stop a parse only through a progress
# callback. Text the grammar reads without an error never meets these bounds (a 100 KB script
# parses in ~15 ms); a parse that has met an error may go on for PARSE_SECONDS of CPU, and a file's
# parses together for FILE_SECONDS, before it is stopped.
PARSE_SECONDS = 1.0
FILE_SECONDS = 4.0


class Clock:
    """CPU seconds one file's parses may still spend on error recovery."""

    __slots__ = ("left", "reported")

    def __init__(self, seconds: float | None = None) -> None:
        self.left = FILE_SECONDS if seconds is None else seconds
        self.reported = False  # the file's one diagnostic for it is written


def bounded(parser: Parser, data: bytes) -> Node:
    """A parse by another tree-sitter grammar (cmd.exe's, PowerShell's), its error recovery bounded as
    a shell script's is (``TooCostly`` past PARSE_SECONDS of it)."""
    return _parse(data, Clock(PARSE_SECONDS), parser)


def _parse(data: bytes, clock: Clock | None, grammar: Parser | None = None) -> Node:
    parser = grammar or _parser()
    if clock is None:
        return parser.parse(data).root_node
    limit = min(PARSE_SECONDS, clock.left)
    erred = False
    start = 0.0  # when the parse first met an error: only error recovery is counted, and a parse
    # that meets none (nearly all) never reads the clock

    def progress(_offset: int, has_error: bool) -> bool:  # True stops the parse
        nonlocal erred, start
        if not has_error:
            return False
        if not erred:
            erred, start = True, time.process_time()
        return time.process_time() - start > limit

    try:
        # (a progress callback is called only for a source read through a callable)
        return parser.parse(lambda at, _point: data[at : at + 65536], progress_callback=progress).root_node
    except ValueError:  # "Parsing failed": the callback stopped it
        parser.reset()
        raise TooCostly from None
    finally:
        if erred:  # only error recovery counts against the file's seconds
            clock.left = max(0.0, clock.left - (time.process_time() - start))


def tree(chunk: Chunk, clock: Clock | None = None) -> Node:
    """The parse of a chunk; an unclosed quote at its end is closed first, as the reader meant it.
    ``TooCostly`` when the parse meets an error and ``clock`` runs out."""
    root = _parse(chunk.data, clock)
    last = root.children[-1] if root.children else None
    if root.has_error and last is not None and last.type == "ERROR" and last.end_byte >= len(chunk.data):
        tail = chunk.data[last.start_byte :].lstrip()
        if tail[:1] in (b'"', b"'") and tail.count(tail[:1]) % 2 == 1:
            root = _parse(chunk.data + tail[:1], clock)
    return root
