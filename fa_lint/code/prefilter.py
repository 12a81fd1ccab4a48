"""Which files are worth parsing: one byte search for the words a use needs.

Python files are most of a repository, and nearly all say nothing about attention. Every use the
code layer reads needs one of these words in the file as Python reads it, so a file without any is
never parsed (its bytes are read once, the floor: docs/performance.md). The search sees what Python
sees: the words are searched in the bytes first (most files are ASCII, and that settles them); a file
that declares another encoding (PEP 263: ``# -*- coding: utf-7 -*-``) is searched as that codec
decodes it, and one with non-ASCII characters as NFKC-normalised text, the form Python gives every
identifier (PEP 3131: ``\ufb02ash_attn`` is ``flash_attn``; ``fa_lint.syntax.identifiers`` normalises
only a text where that can add a word). Normalising strings and comments too only
widens the search (a superset costs a parse, nothing more). A file in UTF-16 without a declaration
names none of them and is passed over, as Python itself would not run it.
"""

from __future__ import annotations

from fa_lint.syntax.identifiers import adds_word, as_python_reads, non_ascii

# Each word a reader in ``python`` or ``commands`` starts from (a superset is harmless: a file
# that has one and no use costs a parse, nothing more).
WORDS = (
    b"generate_batch",
    b"continuous_batching",
    b"ContinuousBatching",
    b"continuous-batching",
    b"cache_implementation",
    b"use_transformers_paged",
    b"attn_implementation",
    b"attn-implementation",
    b"transformers-paged",
    b"get_kernel",
    b"get_locked_kernel",
    b"get_local_kernel",
    b"LayerRepository",
    b"flash_attn_with_kvcache",
    b"flash_attn_varlen_func",
    b"flash_attn_interface",  # FA3's own module (fa_lint.code.fa3_imports)
)
# Pieces one of which every word holds, each with the words that hold it: a substring test each (the
# bytes type's own fast search, many times quicker than one pattern of the words, which tries each word
# at each offset, and on a file that holds a common piece such as "paged" cost more than reading it).
# Most files have no piece; a file with one is searched for that piece's words only.
PIECES = (
    b"generate_batch",
    b"ontinuous",
    b"implementation",
    b"paged",
    b"_kernel",
    b"LayerRepository",
    b"flash_attn_",
)
_BY_PIECE = tuple((piece, tuple(w for w in WORDS if piece in w)) for piece in PIECES)


def _holds(data: bytes) -> bool:
    # loops, not any() over generators: this runs once for each Python file of a repository
    for piece, words in _BY_PIECE:
        if piece in data:
            for word in words:
                if word in data:
                    return True
    return False


def wanted(data: bytes) -> bool:
    """Whether the file of these bytes, as Python reads it, holds a word some use needs."""
    if _holds(data):
        return True
    text = _declared(data)
    if text is None:
        if data.isascii():
            return False  # the common case: what Python reads is these bytes
        # UTF-8: the text holds a word as written where its bytes do (no ASCII byte is part of another
        # character, a replaced one included), so only normalising can add one, and only where one of
        # its characters can (found in the bytes, not decoded text)
        if not adds_word(non_ascii(data, "replace")):
            return False
        return _normalised(data.decode("utf-8", "replace"))
    return wanted_text(text)


def wanted_text(text: str) -> bool:
    """Whether decoded text holds a word some use needs, its identifiers read as Python reads them."""
    return _holds(text.encode("utf-8", "surrogatepass")) or _normalised(text)


def _normalised(text: str) -> bool:
    """Whether the text as Python reads its names holds a word the text as written does not."""
    read = as_python_reads(text)
    return read is not text and _holds(read.encode("utf-8", "surrogatepass"))


def _declared(data: bytes) -> str | None:
    """The text in the encoding the file declares (PEP 263, as ``tokenize.detect_encoding`` reads
    it), where that is not UTF-8; None where it declares none, or one Python refuses."""
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    if b"coding" not in (data if second < 0 else data[:second]):
        return None
    import io
    import tokenize

    try:
        name, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        if name.replace("_", "-").lower() in ("utf-8", "utf-8-sig"):
            return None
        return data.decode(name)
    except (SyntaxError, LookupError, UnicodeError):
        return None  # Python would not run the file either
