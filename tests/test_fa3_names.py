"""Issue 42, item 2: FA3's names. What a build of flash-attention's hopper/ installs is the name its
hopper/setup.py gives it at that commit (``fa_lint/kb/fa3.json``, read by scripts/build_fa3_kb.py):
flashattn-hopper to v2.7.2.post1, flash_attn (FlashAttention 2's own name) at v2.7.3-v2.7.4.post1,
flash_attn_3 from v2.8.0 and on the default branch. transformers finds FA3 only as the flash-attn-3
distribution (4.53-4.57: module and distribution flash_attn_3; 5.0-5.3: module flash_attn_3; 5.4 and
later: module flash_attn_interface from distribution flash-attn-3, read from each release's wheel). A
``#egg=`` name that is not what the build names makes pip's resolver discard it (since pip 20.2).

Real shapes: TransformerEngine's printed FA3 install steps, copied into many public READMEs and
scripts (``pip install "git+https://github.com/Dao-AILab/flash-attention.git#egg=flashattn-hopper&
subdirectory=hopper"``, and the same ``@v2.7.2``)."""

from __future__ import annotations

from typing import Any

import pytest

from fa_lint.kb import fa3
from tests.conftest import lint

REPO = "git+https://github.com/Dao-AILab/flash-attention.git"


def _fal022(project: Any, files: dict[str, str]) -> list[tuple[int, str, str]]:
    return [(f["line"], f["severity"], f["message"]) for f in lint(project, files) if f["code"] == "FAL022"]


def test_names_per_tag_and_transformers_per_release() -> None:
    kb = fa3.load()
    assert [n.distribution for n in kb.names][:3] == ["flashattn-hopper", "flash-attn", "flash-attn-3"]
    assert kb.names_at_tags["v2.7.2"] == "flashattn-hopper"
    assert kb.names_at_tags["v2.7.4.post1"] == "flash-attn"
    assert kb.names_at_tags["v2.8.3"] == "flash-attn-3"
    old, mid, new = kb.detection("4.57.6"), kb.detection("5.2.0"), kb.detection("5.13.0")
    assert old is not None and (old.module, old.distribution) == ("flash_attn_3", "flash-attn-3")
    assert mid is not None and (mid.module, mid.distribution) == ("flash_attn_3", None)
    assert new is not None and (new.module, new.distribution) == ("flash_attn_interface", "flash-attn-3")
    assert kb.detection("4.52.4") is None  # no flash_attention_3 before 4.53
    assert kb.fa2_py_modules == ()  # no flash-attn 2 tag ships a top-level flash_attn_interface


@pytest.mark.parametrize(
    ("url", "severity", "headline"),
    [
        # the default branch builds flash_attn_3 today: the egg name asks for another project
        (f"{REPO}#egg=flashattn-hopper&subdirectory=hopper", "error", "`#egg=flashattn-hopper` is not what"),
        # at v2.7.2 the name is consistent, but transformers never finds flashattn-hopper as FA3
        (
            f"{REPO}@v2.7.2#egg=flashattn-hopper&subdirectory=hopper",
            "warning",
            "installs `flashattn-hopper`, not flash-attn-3",
        ),
        (f"{REPO}@v2.7.4.post1#subdirectory=hopper", "warning", "installs `flash-attn`, not flash-attn-3"),
        (f"{REPO}@v2.7.4.post1#egg=flash_attn_3&subdirectory=hopper", "error", "`#egg=flash_attn_3` is not"),
    ],
)
def test_hopper_build_names(project: Any, url: str, severity: str, headline: str) -> None:
    script = f'pip install torch==2.6.0\npip install "{url}" --no-build-isolation\n'
    found = _fal022(project, {"install.sh": script})
    assert [(line, s) for line, s, _ in found] == [(2, severity)]
    assert headline in found[0][2]


@pytest.mark.parametrize(
    "url",
    [
        f"{REPO}@v2.8.3#subdirectory=hopper",
        f"{REPO}#egg=flash-attn-3&subdirectory=hopper",
        f"{REPO}@0123abcd#egg=flashattn-hopper&subdirectory=hopper",  # a commit fa-lint cannot date
        "git+https://github.com/someone/flash-attention.git@v2.7.2#egg=flashattn-hopper&subdirectory=hopper",
    ],
)
def test_names_that_hold_or_cannot_be_judged(project: Any, url: str) -> None:
    script = f'pip install torch==2.6.0\npip install "{url}" --no-build-isolation\n'
    assert [s for _, s, m in _fal022(project, {"install.sh": script}) if "name" in m or "#egg" in m] == []


def test_the_code_asking_for_flash_attention_3_makes_it_an_error(project: Any) -> None:
    script = (
        f'pip install torch==2.6.0 transformers==5.13.0\npip install "{REPO}@v2.7.2#subdirectory=hopper"\n'
    )
    code = 'from transformers import AutoModel\nAutoModel.from_pretrained("m", attn_implementation="flash_attention_3")\n'
    found = lint(project, {"install.sh": script, "app.py": code})
    hits = [f for f in found if f["code"] == "FAL022"]
    assert [f["severity"] for f in hits] == ["error"]
    notes = " ".join(hits[0]["notes"])
    assert "flash_attn_interface module from the flash-attn-3 distribution" in notes
    assert "app.py:2" in notes


# --- code importing FA3's module where only flash-attn 2 is installed ------------------------------------

UNGUARDED = "import torch\nfrom flash_attn_interface import flash_attn_func\n"
GUARDED = (
    "try:\n    from flash_attn_interface import flash_attn_func\nexcept ImportError:\n    flash_attn_func = None\n"
    "if HOPPER:\n    import flash_attn_interface\n"
)


def test_an_unguarded_fa3_import_with_only_fa2_installed(project: Any) -> None:
    files = {"requirements.txt": "flash-attn==2.8.3\n", "attn.py": UNGUARDED}
    found = [(f["path"], f["line"], f["severity"]) for f in lint(project, files) if f["code"] == "FAL022"]
    assert found == [("attn.py", 2, "warning")]


@pytest.mark.parametrize(
    "files",
    [
        {"requirements.txt": "flash-attn==2.8.3\n", "attn.py": GUARDED},  # guarded: it may be missing
        {"attn.py": UNGUARDED},  # nothing says what is installed
        {
            "requirements.txt": "flash-attn==2.8.3\n",
            "attn.py": UNGUARDED,
            "install.sh": f'pip install "{REPO}@v2.8.3#subdirectory=hopper"\n',
        },
        {
            "requirements.txt": "flash-attn==2.8.3\n",
            "attn.py": UNGUARDED,
            "Dockerfile": "FROM nvcr.io/nvidia/pytorch:25.06-py3\n",
        },
        {
            "requirements.txt": "flash-attn==2.8.3\n",
            "attn.py": "from flash_attn.flash_attn_interface import flash_attn_func\n",
        },
    ],
)
def test_fa3_imports_not_judged(project: Any, files: dict[str, str]) -> None:
    assert [
        f for f in lint(project, files) if f["code"] == "FAL022" and "flash_attn_interface" in f["message"]
    ] == []
