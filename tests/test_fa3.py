"""FlashAttention 3 (flash-attn-3): its facts (fa_lint/kb/fa3.json) and FAL022.

Expectations come from flash-attention's own history, not from fa-lint: ``hopper/__init__.py`` says
3.0.0.b1 from the first FA3 commit (7f67966c, "FA3 initial code release") and 3.0.0 from e2743ab5
("[FA3] Mark current main version as v3.0.0 stable"); ``flash_attn_with_kvcache`` gained
``page_table`` in the rewrite 7a802796 ("Big refactor and update", 2025-01-07) and sm_80 kernels came
the day after (7bc3f031, "Compile for both Sm80 and Sm90"); PyPI's only flash-attn-3, 0.0.0, is a
wheel whose flash_attn_interface.py is 0 bytes (``pip download --no-deps flash-attn-3``). The
transformers facts are those of its wheels: ``is_flash_attn_3_available`` checks the "flash-attn-3"
distribution from 5.4.0, and continuous batching tries ``is_flash_attn_3_available`` before FA2 from
5.15.0 (``switch_to_cb_friendly_attn``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from fa_lint.kb import fa3
from fa_lint.kb import transformers as tf_kb
from tests.conftest import REPO, lint, run

MIRROR = REPO.parent / ".mirror" / "Dao-AILab+flash-attention" / "repo"
KB = fa3.load()


def test_versions_and_when_each_fact_first_holds() -> None:
    assert [(v, f.commit, f.date) for v, f in KB.versions] == [
        ("3.0.0.b1", "7f67966c", "2024-07-11"),
        ("3.0.0", "e2743ab5", "2026-02-04"),
    ]
    paged = KB.fact("kvcache_page_table")
    assert paged is not None and (paged.commit, paged.date) == ("7a802796", "2025-01-07")
    sm80 = KB.fact("sm80")
    assert sm80 is not None and (sm80.commit, sm80.date) == ("7bc3f031", "2025-01-08")
    stable = KB.fact("torch_stable_abi")
    assert stable is not None and stable.value == "2.9"
    floor = KB.fact("nvcc_floor")
    assert floor is not None and floor.value == "12.3"
    # FA3 never took FA2's name, and its varlen function takes no page table
    assert KB.fact("kvcache_block_table") is None and KB.fact("varlen_page_table") is None


def test_pypi_holds_only_an_empty_placeholder() -> None:
    assert [(r.version, r.ships_code) for r in KB.pypi] == [("0.0.0", False)]


def test_transformers_facts_about_fa3() -> None:
    facts = tf_kb.load()
    assert facts.fa3_by_distribution == Version("5.4.0")
    assert facts.cb_fa3_first == Version("5.15.0")
    assert facts.fa3_page_table == Version("5.19.0")
    assert facts.fa3_supported is not None and facts.fa3_supported <= Version("4.53.0")


@pytest.mark.skipif(not MIRROR.exists(), reason="the flash-attention mirror is not on this machine")
def test_the_script_reads_the_same_facts_again(tmp_path: Path) -> None:
    out = tmp_path / "fa3.json"
    committed = json.loads((REPO / "fa_lint/kb/fa3.json").read_text(encoding="utf-8"))
    out.write_text(
        json.dumps({"pypi": committed["pypi"], "transformers": committed["transformers"]})
    )  # from wheels
    subprocess.run(
        [sys.executable, str(REPO / "scripts/build_fa3_kb.py"), "--repo", str(MIRROR), "--output", str(out)],
        check=True,
        timeout=300,
    )
    again = json.loads(out.read_text(encoding="utf-8"))
    for doc in (again, committed):
        doc.pop("generated")
    assert again == committed


# --- FAL022 ------------------------------------------------------------------------------------------


def _found(project: Any, files: dict[str, str]) -> list[dict[str, Any]]:
    return lint(project, files, "--select", "FAL022")


def _brief(found: list[dict[str, Any]]) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["severity"]) for f in found]


def test_pip_install_from_pypi_installs_the_placeholder(project: Any) -> None:
    found = _found(
        project,
        {
            "Dockerfile": "FROM python:3.11\nRUN pip install torch==2.9.1 transformers==5.24.0\n"
            "RUN pip install flash-attn-3\n"
        },
    )
    assert _brief(found) == [("Dockerfile", 3, "error")]
    assert "empty placeholder" in found[0]["message"]
    assert any("5.15.0" in n and "FA3 first" in n for n in found[0]["notes"])


def test_a_real_version_is_not_on_pypi(project: Any) -> None:
    found = _found(project, {"setup.sh": "pip install flash-attn-3==3.0.0\n"})
    assert _brief(found) == [("setup.sh", 1, "error")]
    assert "matches no flash-attn-3 release on PyPI" in found[0]["message"]


@pytest.mark.parametrize(
    "files",
    [
        # another index: its releases are not known, so nothing is claimed about PyPI
        {
            "Dockerfile": "FROM python:3.11\nENV PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cu128\n"
            "RUN pip install flash-attn-3\n"
        },
        {
            "requirements.txt": "--extra-index-url https://download.pytorch.org/whl/cu128\nflash-attn-3==3.0.0\n"
        },
        # a manifest: the installer and its index are not in the files
        {"requirements.txt": "flash-attn-3==3.0.0\n"},
        {"pyproject.toml": '[project]\nname = "p"\nversion = "1"\ndependencies = ["flash-attn-3"]\n'},
    ],
)
def test_other_indexes_and_manifests_are_info(project: Any, files: dict[str, str]) -> None:
    found = _found(project, files)
    assert [f["severity"] for f in found] == ["info"]
    assert "page_table" in found[0]["message"]


def test_a_source_build_and_a_wheel(project: Any) -> None:
    found = _found(
        project,
        {
            "setup.sh": 'pip install "https://download.pytorch.org/whl/cu128/flash_attn_3-3.0.0-cp39-abi3-'
            'manylinux_2_28_x86_64.whl"\n'
            'pip install --no-build-isolation "git+https://github.com/Dao-AILab/flash-attention'
            '#subdirectory=hopper"\n'
        },
    )
    assert _brief(found) == [("setup.sh", 1, "info"), ("setup.sh", 2, "info")]
    assert any("stable ABI" in n for n in found[0]["notes"])
    assert any("hopper/" in n and "no release tags" in n for n in found[1]["notes"])


def test_a_uv_git_source_is_judged_once(project: Any) -> None:
    found = _found(
        project,
        {
            "pyproject.toml": '[project]\nname = "p"\nversion = "1"\ndependencies = ["flash-attn-3"]\n'
            "[tool.uv]\nno-build-isolation = true\n[tool.uv.sources]\n"
            'flash-attn-3 = { git = "https://github.com/Dao-AILab/flash-attention", subdirectory = "hopper" }\n'
        },
    )
    assert _brief(found) == [("pyproject.toml", 8, "info")]


def test_a_beta_wheel_may_lack_page_table(project: Any) -> None:
    found = _found(
        project,
        {"setup.sh": "pip install https://example.com/w/flash_attn_3-3.0.0b1-cp312-cp312-linux_x86_64.whl\n"},
    )
    assert _brief(found) == [("setup.sh", 1, "warning")]
    assert any("before 2025-01-07 have no page_table" in n for n in found[0]["notes"])


@pytest.mark.parametrize(
    ("pin", "says"),
    [
        ("4.52.4", "has no flash_attention_3"),
        ("5.3.0", "never sends FA3 a block table"),
        ("5.24.0", "switches to FA3 first"),
    ],
)
def test_what_the_pinned_transformers_does(project: Any, pin: str, says: str) -> None:
    found = _found(project, {"requirements.txt": f"flash-attn-3==3.0.0\ntransformers=={pin}\n"})
    assert any(says in n for n in found[0]["notes"]), found[0]["notes"]


def test_the_refused_flash_attn_note_says_fa3_comes_first(project: Any) -> None:
    # transformers 5.24.0 refuses flash-attn < 2.3.3 and loads the Hub kernel; its continuous batching
    # tries FA3 before FA2 (continuous_api.py from 5.15.0)
    project({"requirements.txt": "flash-attn==2.3.0\ntransformers==5.24.0\nkernels==0.18.2\n"})
    notes = [n for f in run("--format", "json", "--isolated", ".").json["findings"] for n in f["notes"]]
    assert any("tries flash_attention_3 first, then flash_attention_2" in n for n in notes)


def _lock(version: str, registry: str) -> str:
    return (
        'version = 1\nrequires-python = ">=3.10"\n\n[[package]]\nname = "flash-attn-3"\n'
        f'version = "{version}"\nsource = {{ registry = "{registry}" }}\n\n'
        '[[package]]\nname = "p"\nversion = "1"\nsource = { editable = "." }\n'
        'dependencies = [\n    { name = "flash-attn-3" },\n]\n'
    )


PYPROJECT = (
    '[project]\nname = "p"\nversion = "1"\nrequires-python = ">=3.10"\ndependencies = ["flash-attn-3"]\n'
)


def test_a_lock_of_the_placeholder_and_of_a_real_release(project: Any) -> None:
    found = _found(
        project, {"pyproject.toml": PYPROJECT, "uv.lock": _lock("0.0.0", "https://pypi.org/simple")}
    )
    assert _brief(found) == [("uv.lock", 5, "error")]
    found = _found(
        project,
        {"pyproject.toml": PYPROJECT, "uv.lock": _lock("3.0.0", "https://download.pytorch.org/whl/cu128")},
    )
    assert _brief(found) == [("uv.lock", 5, "info")]
    assert any("not on PyPI" in n for n in found[0]["notes"])
