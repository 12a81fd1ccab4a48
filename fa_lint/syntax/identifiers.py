"""Python's words as Python reads them: identifiers are NFKC-normalised (PEP 3131), so ``\ufb02ash_attn``
is ``flash_attn``. A search for an ASCII word in a file's text must search the normalised text, and
normalising a whole file is costly (a megabyte of comments in Chinese); this settles, from the
file's distinct non-ASCII characters, whether normalising can add a word at all.
"""

from __future__ import annotations

from collections.abc import Iterable

# What a word searched for is made of: ASCII letters, digits, "_" and "-" (command-line flags).
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_ASCII = bytes(range(128))
# A non-ASCII character -> whether its NFKC form holds a word character ("\ufb02" -> "fl": yes; a CJK
# ideograph or "\uff0c", a full-width comma: no). Unicode bounds it.
_GIVES_WORD: dict[str, bool] = {}


def as_python_reads(text: str) -> str:
    """``text``, or its NFKC form where that can hold an ASCII word the text as written does not.

    Normalising never takes an ASCII character away from between two others (no character's
    decomposition is empty, and what composes is an ASCII letter with a mark into one that is not
    ASCII), so only a non-ASCII character whose own NFKC form holds a word character can add a
    word; a text with none is its own answer.
    """
    if text.isascii():
        return text
    if adds_word(non_ascii(text.encode("utf-8", "surrogatepass"), "surrogatepass")):
        import unicodedata

        return unicodedata.normalize("NFKC", text)
    return text


def non_ascii(data: bytes, errors: str) -> set[str]:
    """The non-ASCII characters of UTF-8 bytes: the bytes without their ASCII ones (a C-speed deletion,
    where taking them out of decoded text is a pattern's work; a character of several bytes holds no
    ASCII byte, so each comes through whole), decoded. In bytes that are not UTF-8, bad bytes may join
    into a character the text does not have: a superset, which costs a look at the text."""
    return set(data.translate(None, _ASCII).decode("utf-8", errors))


def adds_word(chars: Iterable[str]) -> bool:
    """Whether one of these characters is one whose NFKC form holds a word character."""
    for c in chars:
        gives = _GIVES_WORD.get(c)
        if gives is None:
            import unicodedata  # only for a text that is not ASCII

            gives = _GIVES_WORD[c] = not _WORD.isdisjoint(unicodedata.normalize("NFKC", c))
        if gives:
            return True
    return False
