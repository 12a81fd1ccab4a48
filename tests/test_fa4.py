"""flash-attn-4: the knowledge base read from its wheels, how pip and uv pick a release, FAL017 and FAL003.

Expectations come from the wheels on PyPI (METADATA and flash_attn/cute/interface.py, quoted where
they decide), from running pip 23.2.1 / 26.3 and uv 0.13.9 against PyPI on 2026-12-01, and from
transformers' modeling_flash_attention_utils.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from fa_lint.kb import fa4
from fa_lint.rules._text import HEADLINE
from tests.conftest import REPO, run


@pytest.fixture(scope="module")
def base() -> fa4.Fa4KnowledgeBase:
    return fa4.load()


def found(code: str) -> list[dict[str, Any]]:
    return [f for f in run("--format", "json").json["findings"] if f["code"] == code]


def test_every_release_on_pypi(base: fa4.Fa4KnowledgeBase) -> None:
    # https://pypi.org/pypi/flash-attn-4/json: 0.0.1 (yanked), 4.0.0b3-b36 without b6
    versions = [str(r) for r in base.releases]
    assert versions[0] == "0.0.1" and versions[1] == "4.0.0b3" and versions[-1] == "4.0.0b36"
    assert "4.0.0b6" not in versions and len(versions) == 34
    assert [str(r) for r in base.releases if r.yanked] == ["0.0.1"]
    assert str(base.newest) == "4.0.0b36"


def test_what_each_release_can_do(base: fa4.Fa4KnowledgeBase) -> None:
    placeholder = base.get("0.0.1")
    assert placeholder is not None and not placeholder.ships_code and not placeholder.paged
    for release in base.releases[1:]:
        assert release.ships_code and release.paged and not release.kvcache, release
    # 4.0.0b3: "assert arch // 10 in [9, 10, 11]", "paged KV not supported on SM 9.0"
    b3 = base.get("4.0.0b3")
    assert b3 is not None and (b3.archs, b3.paged_refused, b3.paged_archs) == ((9, 10, 11), (9,), (10, 11))
    # 4.0.0b36: "assert arch // 10 in [8, 9, 10, 11, 12]", "paged KV not supported on SM 8.0",
    # "Paged KV not supported on SM 12.0 in this PR"
    b36 = base.get("4.0.0b36")
    assert b36 is not None and b36.archs == (8, 9, 10, 11, 12) and b36.paged_refused == (8, 12)
    assert b36.evidence["paged_refused_sm8"].endswith("flash_attn/cute/interface.py:1611")
    assert b36.requires == {"nvidia-cutlass-dsl": ">=4.6.2", "torch": "", "quack-kernels": ">=0.5.3"}
    assert base.get("4.0.0b20").requires["nvidia-cutlass-dsl"] == "==4.6.0.dev0"  # type: ignore[union-attr]
    assert base.first_tag == "fa4-v4.0.0.beta0" and base.first_tag_paged


@pytest.mark.parametrize(
    ("spec", "pinned", "installer", "pre", "picked"),
    [
        # pip: the yanked final 0.0.1 matches, so pre-releases stay out; then pip drops it as yanked
        ("", False, "pip", False, None),
        ("<5", False, "pip", False, None),
        ("", False, "pip", True, "4.0.0b36"),  # --pre
        (">=4.0.0b1", False, "pip", False, "4.0.0b36"),  # a specifier that names a pre-release
        # uv drops yanked releases first; every one left is a pre-release
        ("", False, "uv", False, "4.0.0b36"),
        ("<5", False, "uv", False, "4.0.0b36"),
        ("==0.0.1", True, "pip", False, "0.0.1"),  # PEP 592: an exact pin still gets it
        ("==4.0.0b6", True, "uv", False, None),  # never published
    ],
)
def test_installs_follows_each_installer(
    base: fa4.Fa4KnowledgeBase, spec: str, pinned: bool, installer: str, pre: bool, picked: str | None
) -> None:
    got = base.installs(SpecifierSet(spec), pinned, installer, pre)
    assert (str(got[-1]) if got else None) == picked


def test_unpinned_with_pip_is_an_error(project: Any) -> None:
    project({"Dockerfile": "FROM python:3.12\nRUN pip install flash-attn-4\n"})
    (f,) = found("FAL017")
    assert f["severity"] == "error"
    assert f["message"].startswith("pip finds no release for")
    assert "flash-attn-4>=4.0.0b36" in f["message"] and len(f["message"]) <= HEADLINE


@pytest.mark.parametrize(
    "files",
    [
        {"Dockerfile": "FROM python:3.12\nRUN pip install --pre flash-attn-4\n"},
        {"Dockerfile": "FROM python:3.12\nENV PIP_PRE=1\nRUN pip install flash-attn-4\n"},
        {"requirements.txt": "--pre\nflash-attn-4\n"},
        {"Dockerfile": "FROM python:3.12\nRUN uv pip install --system flash-attn-4\n"},
        {"requirements.txt": "flash-attn-4>=4.0.0b30\n"},
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn-4"]\n',
            "uv.lock": 'version = 1\n\n[[package]]\nname = "flash-attn-4"\nversion = "4.0.0b36"\n'
            'source = { registry = "https://pypi.org/simple" }\n',
        },
    ],
)
def test_pre_releases_allowed_mean_no_warning(project: Any, files: dict[str, str]) -> None:
    project(files)
    (f,) = found("FAL017")
    assert f["severity"] == "info"
    assert "paged KV only through flash_attn_varlen_func(page_table=...)" in f["message"]


def test_unknown_installer_is_a_warning(project: Any) -> None:
    project({"requirements.txt": "flash-attn-4\n"})
    (f,) = found("FAL017")
    assert f["severity"] == "warning" and "without --pre" in f["message"]
    assert any("installs 4.0.0b36" in n for n in f["notes"])


def test_no_such_release_is_fal003(project: Any) -> None:
    project({"requirements.txt": "flash-attn-4==4.0.0b6\n"})
    assert found("FAL017") == []
    (f,) = found("FAL003")
    assert "matches no flash-attn-4 release (nearest: 4.0.0b5 and 4.0.0b7)" in f["message"]
    assert f["package"] == "flash-attn-4"


def test_the_yanked_placeholder_is_an_error(project: Any) -> None:
    project({"requirements.txt": "flash-attn-4==0.0.1\n"})
    (f,) = found("FAL017")
    assert f["severity"] == "error" and "placeholder with no code" in f["message"]


def test_a_dependency_pin_no_release_accepts(project: Any) -> None:
    # 4.0.0b20-b36 require nvidia-cutlass-dsl ==4.6.0.dev0 or >=4.6.2; 4.0.0b15 is the newest with >=4.4.2
    project({"requirements.txt": "flash-attn-4>=4.0.0b20\nnvidia-cutlass-dsl==4.4.2\n"})
    (f,) = found("FAL017")
    assert f["severity"] == "error"
    assert "accepts nvidia-cutlass-dsl 4.4.2" in f["message"]
    assert "flash-attn-4==4.0.0b15" in f["help"]
    assert f["related_locations"]


def test_the_transformers_consequence(project: Any) -> None:
    project({"requirements.txt": "flash-attn-4==4.0.0b36\ntransformers==5.24.0\n"})
    (f,) = found("FAL017")
    notes = " ".join(f["notes"])
    assert "runs on SM 9.x-11.x only; SM 8.x, 12.x refuse it" in notes
    assert "transformers 5.24.0 (requirements.txt:2:1) never sends flash-attn-4 a block table" in notes
    assert "`flash_attn_with_kvcache = None  # not supported yet`" in notes
    project({"requirements.txt": "flash-attn-4==4.0.0b36\ntransformers==5.3.0\n"})
    (f,) = found("FAL017")
    assert any("has no flash_attention_4 (from 5.4.0)" in n for n in f["notes"])


def test_a_git_source_is_not_judged_by_version(project: Any) -> None:
    project(
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn-4"]\n'
            "[tool.uv.sources]\nflash-attn-4 = { git = "
            '"https://github.com/Dao-AILab/flash-attention.git", subdirectory = "flash_attn/cute", rev = "96bd151" }\n'
        }
    )
    assert found("FAL017") == [] and found("FAL003") == []


# --- the maintainer script -------------------------------------------------------------------------

INTERFACE = """\
def _flash_attn_fwd(q, k, v, page_table=None):
    arch = 90
    assert arch // 10 in [8, 9, 10], "Unsupported compute capability"
    if arch // 10 == 8:
        assert page_table is None, "paged KV not supported on SM 8.0"
    return q


def flash_attn_varlen_func(q, k, v, cu_seqlens_q=None, page_table=None):
    return _flash_attn_fwd(q, k, v, page_table)
"""
METADATA = """\
Metadata-Version: 2.4
Name: flash-attn-4
Version: {v}
Requires-Python: >=3.10
Requires-Dist: nvidia-cutlass-dsl>=4.6.2
Requires-Dist: torch
Requires-Dist: nvidia-cutlass-dsl[cu13]>=4.6.2; extra == "cu13"
"""


def _wheel(folder: Path, version: str, interface: str | None) -> dict[str, Any]:
    name = f"flash_attn_4-{version}-py3-none-any.whl"
    with zipfile.ZipFile(folder / name, "w") as z:
        z.writestr(f"flash_attn_4-{version}.dist-info/METADATA", METADATA.format(v=version))
        if interface is not None:
            z.writestr("flash_attn/cute/interface.py", interface)
    return {"packagetype": "bdist_wheel", "filename": name, "url": name, "upload_time": "2026-01-01T00:00:00"}


def test_script_reads_each_wheel(tmp_path: Path) -> None:
    pypi = {
        "releases": {
            "0.0.1": [{**_wheel(tmp_path, "0.0.1", None), "yanked": True}],
            "4.0.0b1": [_wheel(tmp_path, "4.0.0b1", INTERFACE)],
        }
    }
    (tmp_path / "pypi.json").write_text(json.dumps(pypi))
    out = tmp_path / "fa4.json"
    script = str(REPO / "scripts/build_fa4_kb.py")
    args = ["--pypi-json", str(tmp_path / "pypi.json"), "--wheels", str(tmp_path), "--output", str(out)]
    proc = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    built = fa4.from_dict(json.loads(out.read_text()))
    b1 = built.get("4.0.0b1")
    assert b1 is not None and b1.paged and not b1.kvcache
    assert (b1.archs, b1.paged_refused, b1.paged_archs) == ((8, 9, 10), (8,), (9, 10))
    assert b1.requires == {"nvidia-cutlass-dsl": ">=4.6.2", "torch": ""}
    assert b1.evidence["paged_refused_sm8"].endswith("flash_attn/cute/interface.py:5")
    placeholder = built.get(Version("0.0.1"))
    assert placeholder is not None and placeholder.yanked and not placeholder.ships_code
    # an interface whose forward pass names no compute capability: refused, never guessed
    (tmp_path / "x").mkdir()
    pypi = {
        "releases": {
            "4.0.0b2": [_wheel(tmp_path / "x", "4.0.0b2", INTERFACE.replace("assert arch", "x = arch"))]
        }
    }
    (tmp_path / "pypi.json").write_text(json.dumps(pypi))
    args[3] = str(tmp_path / "x")
    proc = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    assert proc.returncode == 1 and "asserts no compute capabilities" in proc.stderr
