"""fa_lint.sources.python_app.installs: the bytes look for an install of flash-attn, in any case.

The names are searched in the bytes made lower case (a pattern without ``re.I`` searches fast for its
first letters); the answer must be the one a case-insensitive pattern gives on the bytes as written.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fa_lint.sources import python_app

_NAMES = re.compile(rb"flash[-_]?attn|flash-attention", re.I)  # what the sniff looks for, re.I on bytes
_POOL = st.sampled_from(
    [
        "subprocess.run(",
        "os.system(",
        "pip install ",
        "install",
        "flash",
        "FLASH",
        "Flash",
        "fLaSh",
        "-",
        "_",
        "attn",
        "ATTN",
        "Attn",
        "-attention",
        "-ATTENTION",
        "ention",
        " ",
        "\n",
        "\u017f",  # long s: re.I on bytes folds ASCII only, so its bytes are no "s"
        "\u212a",
        "\xc4\xb0",
    ]
)


@settings(max_examples=500, derandomize=True, database=None, deadline=None)
@given(st.lists(_POOL, max_size=14).map("".join))
def test_the_lower_case_search_answers_as_a_case_insensitive_one(text: str) -> None:
    data = text.encode("utf-8")
    runs = b"install" in data and any(w in data for w in (b"subprocess", b"system(", b"popen("))
    assert python_app.installs(data) == (runs and _NAMES.search(data) is not None)


def test_names_in_any_case_are_found() -> None:
    for name in (b"flash-attn", b"FLASH_ATTN", b"Flash-Attention", b"flashattn", b"fLaSh_AtTn"):
        assert python_app.installs(b'subprocess.run(["pip", "install", "' + name + b'"])\n'), name
    assert not python_app.installs(b'subprocess.run(["pip", "install", "flash"])\n')
    assert not python_app.installs(b'print("flash-attn")\n')  # no call that runs it


def test_the_text_is_looked_at_as_its_bytes_are() -> None:
    # setup.py and python-app ask of the decoded text what discovery asked of the bytes
    for text in (
        'subprocess.run(["pip", "install", "FLASH_ATTN"])\n',
        'os.system("pip install flash-attention")\n',
    ):
        assert python_app.installs_text(text) and python_app.installs(text.encode())
    assert not python_app.installs_text('print("install flash-attn")\n')  # no call that runs it
    # only ASCII letters are folded, as a requirement's name is: a long s makes no flash-attn
    assert not python_app.installs_text('subprocess.run(["pip", "install", "fla\u017fh-attn"])\n')
