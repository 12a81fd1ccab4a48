"""fa_lint.syntax.identifiers: a text normalised (NFKC) only where that can add an ASCII word."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from fa_lint.code import prefilter
from fa_lint.syntax.identifiers import as_python_reads


def test_an_ascii_text_is_its_own_reading() -> None:
    text = "model = load(attn_implementation='flash_attention_2')\n"
    assert as_python_reads(text) is text


def test_comments_in_chinese_need_no_normalising() -> None:
    # full-width punctuation normalises to ASCII punctuation, which no word holds
    text = "# 加载模型\uff0c使用\uff08闪存\uff09注意力\uff1a\nx = 1\n"
    assert as_python_reads(text) is text


def test_a_ligature_is_read_as_python_reads_it() -> None:
    text = "from \ufb02ash_attn import \ufb02ash_attn_with_kvcache\n"  # "\ufb02" is "fl" to Python
    assert as_python_reads(text) == unicodedata.normalize("NFKC", text)
    assert "flash_attn_with_kvcache" in as_python_reads(text)
    assert prefilter.wanted(text.encode())


def test_full_width_letters_and_a_chinese_comment_together() -> None:
    text = "# 注意力\nmodel.set_\uff41\uff54\uff54\uff4e_implementation('sdpa')\n"
    assert "set_attn_implementation" in as_python_reads(text)
    assert prefilter.wanted_text(text)


def test_a_file_of_chinese_comments_without_a_word_is_passed_over() -> None:
    assert not prefilter.wanted("# 训练脚本\uff0c不使用任何注意力实现\nprint('完成')\n".encode())


_POOL = st.sampled_from(
    [
        "flash_attn_",
        "with_kvcache",
        "attn",
        "_implementation",
        "get_kernel",
        "\ufb02",
        "\ufb01",
        "\uff41",
        "\uff54",
        "\uff4e",
        "\uff0c",
        "\uff08",
        "注",
        "\u00e9",
        "e\u0301",
        "\u0301",
        "K",
        "\u017f",
        "\u00b2",
        "_",
        "-",
        " ",
        "\n",
        "\u207f",
        "\uff2b",
    ]
)


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(st.lists(_POOL, max_size=12).map("".join))
def test_a_word_the_normalised_text_holds_the_reading_holds(text: str) -> None:
    normalised = unicodedata.normalize("NFKC", text)
    read = as_python_reads(text)
    for word in (*prefilter.WORDS, b"attn", b"kernel"):
        if word.decode() in normalised:
            assert word.decode() in read, (text, word)
    if prefilter.wanted_text(normalised):  # what Python's reading of the file holds, the search finds
        assert prefilter.wanted_text(text), text


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.lists(_POOL, max_size=12).map("".join), st.sampled_from([b"", b"\xc3", b"\xff\xfe", b"\xe2\x82"]))
def test_the_bytes_search_agrees_with_the_text_search(text: str, junk: bytes) -> None:
    """``wanted`` on a file's bytes answers as ``wanted_text`` on its text (UTF-8, bad bytes replaced)."""
    data = junk + text.encode("utf-8") + junk
    assert prefilter.wanted(data) == prefilter.wanted_text(data.decode("utf-8", "replace"))


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(
    st.lists(st.one_of(_POOL, st.sampled_from(["\udcc3", "\udce2\udc82", "\udcff", "\udca9"])), max_size=14)
)
def test_bad_bytes_between_characters_change_no_answer(pieces: list[str]) -> None:
    """Bad bytes anywhere (here between the characters too, where taking out the ASCII bytes can join
    them into a character the text does not have): the bytes search still answers as the text search."""
    data = "".join(pieces).encode("utf-8", "surrogateescape")
    assert prefilter.wanted(data) == prefilter.wanted_text(data.decode("utf-8", "replace"))


def test_a_character_the_bad_bytes_make_costs_a_look_and_finds_no_word() -> None:
    # b"\xef" + "x" + b"\xac\x82" is no character in the text, but without the "x" it is "\ufb02" ("fl")
    data = b"\xefx\xac\x82ash_attn_with_kvcache = 1\n"
    assert "\ufb02" not in data.decode("utf-8", "replace")
    assert not prefilter.wanted(data)
    assert prefilter.wanted("\ufb02ash_attn_with_kvcache = 1\n".encode())


def test_a_lone_surrogate_is_read_past() -> None:
    # a file decoded with surrogateescape can hold lone surrogates: they give no word, a ligature does
    assert as_python_reads("x = '\udcff'\n") == "x = '\udcff'\n"
    text = "\udcff\n\ufb02ash_attn_with_kvcache()\n"
    assert "flash_attn_with_kvcache" in as_python_reads(text)
