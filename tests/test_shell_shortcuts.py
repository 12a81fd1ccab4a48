"""The shell layer's short ways give what the long ones give. ``shell.parse.Chunk``'s way from tree-sitter's bytes back to characters: a map with one entry a
run of non-ASCII characters gives what a map with one entry a character gives (the reference below,
the map it replaced), at every byte and character: inside a character of several bytes, past the end,
before the start; astral characters and lone surrogates included (the parser sees U+FFFD for those).
And what the walk reads through it the short way: a plain word (``word``), whether a stretch of text
opens a substitution (``Openers``); a simple command read once however often a function runs it
(``Commands``)."""

from __future__ import annotations

import bisect
import itertools
from typing import TYPE_CHECKING, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fa_lint.shell.nodes import OPENERS, Openers
from fa_lint.shell.parse import Chunk, Word, _quoted, tree, unquoted, word

if TYPE_CHECKING:
    from tree_sitter import Node

# every code point: ASCII, 2-, 3- and 4-byte characters, lone surrogates
_CHARACTERS = st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0x7F),
    st.characters(min_codepoint=0x80, max_codepoint=0x7FF),
    st.characters(min_codepoint=0x800, max_codepoint=0xFFFF, exclude_categories=()),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=()),
    st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF),
    st.sampled_from(" \n{$\\\"'"),
)


def _width(c: str) -> int:
    n = ord(c)
    return 1 if n < 0x80 else 2 if n < 0x800 else 3 if n < 0x10000 else 4


class _Node:
    def __init__(self, start: int, end: int) -> None:
        self.start_byte = start
        self.end_byte = end


def _check(chunk: Chunk) -> None:
    starts = list(itertools.accumulate(map(_width, chunk.seen), initial=0))  # the map it replaced
    assert starts[-1] == len(chunk.data)
    size = len(chunk.data)
    dense = not chunk.seen.isascii()

    def index(b: int) -> int:
        return min(bisect.bisect_left(starts, b) if dense else b, len(chunk.text))

    for b in range(-3, size + 4):
        assert chunk.index(b) == index(b), b
    n = len(chunk.seen)
    for i in range(-n - 1, n + 4):
        assert chunk.byte(i) == (starts[min(i, n)] if dense else i), i
    if dense:
        try:
            chunk.byte(-n - 2)
            raise AssertionError("no IndexError")
        except IndexError:
            pass
    for a in range(size + 2):  # (tree-sitter's bytes are never negative)
        for b in range(a, min(size + 2, a + 6)):
            node = cast("Node", _Node(a, b))  # (only its bytes are read)
            first, last = index(a), index(b)
            assert chunk.read(node) == (*chunk.span(node), chunk.source(node))
            if dense or chunk.positions is not None:  # (flat text is read by its own path, unchanged)
                assert chunk.source(node) == chunk.text[first:last]
                end = chunk.at(last - 1) + 1 if last > first else chunk.at(first)
                assert chunk.span(node) == (chunk.at(first), end)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.text(_CHARACTERS, max_size=40), st.integers(0, 50))
def test_sparse_map_is_the_dense_map(text: str, base: int) -> None:
    _check(Chunk(text, base))
    _check(Chunk(text, positions=[base + 2 * i for i in range(len(text))]))


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(st.text(_CHARACTERS, max_size=30), st.text(_CHARACTERS, max_size=30))
def test_parse_text_differs(text: str, seen: str) -> None:
    # what the parser reads is of the text's length; were it not, the map still is the one it replaced
    _check(Chunk(text, parse=seen))


def test_constructed() -> None:
    for text in (
        "",
        "é",
        "pip install a # é\n",
        "中文注释 and 中文\npip install 'flash-attn'\n",
        "{\U0001f600}x\ud800y\udfffz",
        "aé中\U0001f600b" * 3,
        "\U0001f600" * 5,
        "ASCII only",
    ):
        _check(Chunk(text, 7))
        _check(Chunk(text, parse=text[::-1]))


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.text(st.sampled_from("$(`<>)a \n"), max_size=30))
def test_openers_found_by_position(text: str) -> None:
    # the walk's search for a substitution in a word: by the openers' positions, not a slice searched
    found = Openers(Chunk(text))
    assert not found.within([tree(Chunk(""))])  # (found from here on)
    for start in range(len(text) + 2):
        for end in range(len(text) + 2):
            assert found.holds(start, end) == any(o in text[start:end] for o in OPENERS)


_SCRIPT = st.text(st.one_of(st.sampled_from(" \n\"'$(){}\\=;|&-ab<>`"), _CHARACTERS), max_size=40)


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(_SCRIPT, st.booleans())
def test_word_as_span_and_unquoted(text: str, placed: bool) -> None:
    # ``word``'s path for a plain word gives what the general one does, in every kind of chunk
    chunk = Chunk(text, 5) if placed else Chunk(text, positions=[3 * i for i in range(len(text))])
    openers = Openers(chunk)
    root = tree(chunk)
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        start, end = chunk.span(node)
        assert word(node, chunk) == Word(unquoted(node, chunk), start, end, _quoted(node))
        # and whether the text from a node to another opens a substitution, as the slice says
        for nodes in ([node], [node, root], [*node.children]):
            if nodes:
                first, last = min(n.start_byte for n in nodes), max(n.end_byte for n in nodes)
                text = chunk.text[chunk.index(first) : chunk.index(last)]
                assert openers.within(nodes) == any(o in text for o in OPENERS)


_FUNCTIONS = """\
#!/bin/bash
install() {
  A=1 pip install "$1" --no-build-isolation
  [ -n "$2" ] && pip install "flash-attn==$2" >log 2>&1
  cat <<END && pip install torch==$3
x
END
  bash -c "pip install 'xformers==$2'"
  echo "$(pip install einops)" | tee out
}
install flash-attn 2.5.8 2.3.0
install flash-attn 2.6.3 2.4.0
install "flash-attn>=2" "" 2.4.0
if true; then install ninja 2.7.0 2.5.0; fi
"""


def test_commands_read_once_as_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # a command in a function's body is read once however often the body runs (``Commands``): the
    # records are those of reading it at each run
    from fa_lint.shell import nodes
    from fa_lint.sources import shell

    def each_time(self: nodes.Commands, node: Node, redirects: list[Node]) -> nodes.Parts:
        args, env, every = nodes.parts(node, redirects, self.chunk)
        if not args:
            return args, env, every, [], 0, 0
        args, words = nodes.with_redirects(args, every, self.chunk)
        return (args, env, every, words, *self.chunk.span(node))

    for text in (_FUNCTIONS, _FUNCTIONS.replace("flash-attn", "flash-attn\u4e2d")):
        once = repr(list(shell.parse("install.sh", text)))
        with monkeypatch.context() as m:
            m.setattr(nodes.Commands, "read", each_time)
            assert repr(list(shell.parse("install.sh", text))) == once
        assert once.count("Requirement(") > 8
