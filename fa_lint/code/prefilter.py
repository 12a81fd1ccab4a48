"""Which files are worth parsing: one byte search for the words a use needs.

Python files are most of a repository, and nearly all say nothing about attention. Every use the
code layer reads needs one of these words in the file's bytes, so a file without any is never
decoded or parsed (its bytes are read once, the floor: docs/performance.md). The words are byte
strings, so the search needs no decoding; a file in UTF-16 names none of them and is passed over,
as Python itself would not run it without a coding declaration.
"""

from __future__ import annotations

import re

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
TRIGGER = re.compile(b"|".join(map(re.escape, WORDS)))
# Pieces one of which every word holds: a substring test each (the bytes type's own fast search, many
# times quicker than the alternation above, which tries each word at each offset), and the exact
# search only for a file that has a piece. Most files have none.
PIECES = (
    b"generate_batch",
    b"ontinuous",
    b"implementation",
    b"paged",
    b"_kernel",
    b"LayerRepository",
    b"flash_attn_",
)


def wanted(data: bytes) -> bool:
    """Whether the bytes hold a word some use needs."""
    for piece in PIECES:
        if piece in data:
            return TRIGGER.search(data) is not None
    return False
