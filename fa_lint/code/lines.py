"""The lines of a Python file the code layer's walk descends to (issue 41).

A use is a node whose own lines name what makes it one: a word of ``prefilter.WORDS``
(``attn_implementation=``, ``flash_attn_with_kvcache(``, ``get_kernel(``), or one of ``_OTHERS``,
which the reader needs from lines that hold no word: the imports (the names every call is followed
through), a script's ``add_argument`` options (an ``attn_implementation=args.attn``'s default),
``from_pretrained`` (a model loaded onto the CPU keeps off the paged path), ``sys.modules`` and
``setattr`` (a substitute kernel put in place by a name). The one name a use can be written with
that holds none of these is an import renamed with ``as`` (``from flash_attn import
flash_attn_with_kvcache as kv``): its lines are added once the imports are known
(``code.python``). A node whose lines hold none is neither a use nor above one, and is not walked:
most of a file is such code, and its walk cost as much as Python's parse of the file.
``fa_lint.syntax.pylines.holds`` says which nodes hold a line.

A superset is harmless (a line holding ``important`` is walked for nothing), so the search is a
plain substring search (``pylines.word_lines(..., names=False)``: a word is part of longer names,
``init_continuous_batching``), strings and comments included.
"""

from __future__ import annotations

from fa_lint.code.prefilter import WORDS

_OTHERS = ("import", "add_argument", "from_pretrained", "modules", "setattr")
NEEDLES = (*(w.decode() for w in WORDS), *_OTHERS)


def named(name: str) -> bool:
    """Whether an imported name holds a needle (renamed with ``as``, its uses no longer show it)."""
    return any(needle in name for needle in NEEDLES)
