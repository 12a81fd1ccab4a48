"""Generators of Python code in the spellings that once hid it from the code layer (reliability 50, 51,
59): identifiers in compatibility characters Python normalises (NFKC, PEP 3131), star imports of the
modules whose exports fa-lint knows (and of others), non-ASCII comments, and coding declarations under
which the words appear only once decoded (PEP 263). Used by the fuzz run (``LINE_FORMATS["python-app"]``
in ``inputs``) and by the property tests of tests/test_code_reading.py.
"""

from __future__ import annotations

import re
import unicodedata

from hypothesis import strategies as st

_IMPORTS = [
    "from flash_attn import *\n",
    "from flash_attn.flash_attn_interface import *\n",
    "from kernels import *\n",
    "from transformers import *\n",
    "from mystery import *\n",
    "from flash_attn import flash_attn_with_kvcache, flash_attn_varlen_func\n",
    "import flash_attn\n",
    "from kernels import get_kernel\n",
    "from transformers import AutoModel\n",
]
_CALLS = [
    "flash_attn_with_kvcache(q, k, v, block_table=t)\n",
    "flash_attn_with_kvcache(q, k, v, softcap=1.0)\n",
    "flash_attn_varlen_func(q, k, v, block_table=t)\n",
    "flash_attn.flash_attn_with_kvcache(q, k, v, window_size=(1, 1))\n",
    "get_kernel('org/repo')\n",
    "get_kernel('org/repo', version=1)\n",
    "AutoModel.from_pretrained('m', attn_implementation='flash_attention_3')\n",
    "model.generate_batch(x)\n",
    "ContinuousBatchingManager(m)\n",
    "def flash_attn_with_kvcache(q, k, v):\n    pass\n",
]
_COMMENTS = ["", "# 注释\n", "# héllo wörld\n", "# \U0001f600\n"]


def _fullwidth(c: str) -> str:
    return chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c


def _math_sans(c: str) -> str:
    if "a" <= c <= "z":
        return chr(0x1D5BA + ord(c) - ord("a"))  # MATHEMATICAL SANS-SERIF SMALL A...
    if "A" <= c <= "Z":
        return chr(0x1D5A0 + ord(c) - ord("A"))
    return c


# Ways to write a letter that NFKC maps back to it (each checked by the property test below it).
_LETTER = [lambda c: c, _fullwidth, _math_sans]
_LIGATURES = {"fl": "\ufb02", "fi": "\ufb01"}


@st.composite
def respelled(draw: st.DrawFn, identifier: str) -> str:
    """``identifier`` with some letters in compatibility characters: NFKC gives it back."""
    written = identifier
    for pair, ligature in _LIGATURES.items():
        if pair in written and draw(st.booleans()):
            written = written.replace(pair, ligature)
    out = []
    for c in written:
        out.append(draw(st.sampled_from(_LETTER))(c) if c.isascii() and c.isalpha() else c)
    found = "".join(out)
    assert unicodedata.normalize("NFKC", found) == identifier
    return found


_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS = frozenset({"import", "from", "def", "pass"})  # keywords are not names: never respelled


@st.composite
def _respell_line(draw: st.DrawFn, line: str) -> str:
    """Some names of a line respelled; string literals (which Python does not normalise) kept."""
    parts = re.split(r"('[^']*')", line)
    for i in range(0, len(parts), 2):  # the even parts are outside quotes
        pieces = []
        last = 0
        for m in _WORDS.finditer(parts[i]):
            word = m.group()
            keep = word in _KEYWORDS or not draw(st.booleans())
            pieces += [parts[i][last : m.start()], word if keep else draw(respelled(word))]
            last = m.end()
        parts[i] = "".join(pieces) + parts[i][last:]
    return "".join(parts)


@st.composite
def code(draw: st.DrawFn) -> tuple[str, str]:
    """(the code as ASCII, the same code as written with respelled names and non-ASCII comments)."""
    lines = [draw(st.sampled_from(_IMPORTS)) for _ in range(draw(st.integers(1, 2)))]
    lines += [draw(st.sampled_from(_CALLS)) for _ in range(draw(st.integers(1, 3)))]
    plain, written = "", ""
    for line in lines:
        comment = draw(st.sampled_from(_COMMENTS))
        plain += comment + line
        written += comment + draw(_respell_line(line))
    return plain, written


def python_app() -> st.SearchStrategy[str]:
    """Respelled code, for the fuzz run's python-app files."""
    return code().map(lambda pair: pair[1])
