"""NGC PyTorch containers (fa_lint/kb/ngc.json) and FAL023.

Expectations come from the sources each row quotes, not from fa-lint: NGC 23.11 keeps flash-attn 2.0.4
(pip's own "Requirement already satisfied: flash-attn ... (2.0.4)", flash-attention#709); 23.12 is torch
2.2.0a0+81ea7a4 (flash-attention#784); 24.10 is torch 2.5.0a0+e000cf0 (the container's banner); 25.12 is
2.10.0a0+b4e4ee81d3 on CUDA 13.1.0 (NVIDIA's release notes). flash-attn's setup.py (v2.5.6, as every
2.x) asks for the wheel ``+cu12torch2.2cxx11abiTRUE`` on NGC 23.12's torch, and 2.5.6's release
workflow built torch 2.2 wheels; 2.5.0 has none for torch 2.5 (its workflow stops at 2.2).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from typing import Any

import pytest

from fa_lint.kb import ngc
from tests.conftest import REPO, lint, run

sys.path.insert(0, str(REPO / "scripts"))
import build_ngc_kb

DATA = json.loads((REPO / "scripts/data/ngc.json").read_text(encoding="utf-8"))


def test_rows() -> None:
    facts = ngc.load()
    assert facts.release("23.11").flash_attn == "2.0.4"
    assert facts.release("23.12").torch == "2.2.0a0+81ea7a4"
    assert facts.release("24.10").torch == "2.5.0a0+e000cf0"
    assert (facts.release("25.12").torch, facts.release("25.12").cuda) == ("2.10.0a0+b4e4ee81d3", "13.1.0")
    assert facts.release("25.02").torch == "2.7.0a0+6c54963f75"
    assert facts.release("25.10").cuda == "13.0.2"
    assert facts.release("24.05").torch is None  # no source read: unknown, never guessed
    assert ngc.tag("nvcr.io/nvidia/pytorch:24.10-py3") == "24.10"
    assert ngc.tag("nvcr.io/nvidia/pytorch:24.10-py3-igpu") == "24.10"
    assert ngc.tag("nvcr.io/nvidia/tritonserver:24.10-py3") is None


def test_the_kb_file_is_the_scripts() -> None:
    r = subprocess.run(
        [sys.executable, str(REPO / "scripts/build_ngc_kb.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(
    ("tag", "field", "value", "says"),
    [
        ("23.12", "torch", "2.2.0a0+81ea7a5", "torch '2.2.0a0+81ea7a5' is not in its source"),
        ("24.10", "torch", "2.5.0", "is not an NGC build"),
        ("25.12", "cuda", "12.9", "cuda '12.9' is not in its source"),
        ("23.11", "source", "rel-25-12", "its source does not name the release"),
    ],
)
def test_a_wrong_row_fails_the_script(tag: str, field: str, value: str, says: str) -> None:
    doc = copy.deepcopy(DATA)
    doc["releases"][tag][field] = value
    assert any(says in p for p in build_ngc_kb.problems(doc)), build_ngc_kb.problems(doc)


def _found(project: Any, dockerfile: str) -> list[dict[str, Any]]:
    return lint(project, {"Dockerfile": dockerfile}, "--select", "FAL023")


def test_a_wheel_for_pypis_torch_on_ngcs_torch(project: Any) -> None:
    (f,) = _found(
        project,
        "FROM nvcr.io/nvidia/pytorch:23.12-py3\nRUN pip install flash-attn==2.5.6 --no-build-isolation\n",
    )
    assert f["severity"] == "warning" and "torch 2.2, not for the container's 2.2.0a0+81ea7a4" in f["message"]
    assert any("undefined symbol" in n for n in f["notes"])


def test_through_a_stage(project: Any) -> None:
    (f,) = _found(
        project,
        "FROM nvcr.io/nvidia/pytorch:23.12-py3 AS base\nFROM base\nRUN pip install flash-attn==2.5.6 --no-build-isolation\n",
    )
    assert f["severity"] == "warning"


def test_no_wheel_for_the_torch_compiles(project: Any) -> None:
    # 2.5.0's workflow built wheels for torch up to 2.2: on 24.10's torch 2.5 setup.py compiles
    (f,) = _found(
        project,
        "FROM nvcr.io/nvidia/pytorch:24.10-py3\nRUN pip install flash-attn==2.5.0 --no-build-isolation\n",
    )
    assert f["severity"] == "info" and any(
        "compiles it against the container's torch" in n for n in f["notes"]
    )


def test_the_container_flash_attn_is_kept(project: Any) -> None:
    (f,) = _found(
        project, "FROM nvcr.io/nvidia/pytorch:23.11-py3\nRUN pip install flash-attn --no-build-isolation\n"
    )
    assert f["severity"] == "warning" and "no-op" in f["message"] and "without paged KV" in f["message"]
    # -U replaces it: not a no-op any more
    (g,) = _found(
        project, "FROM nvcr.io/nvidia/pytorch:23.11-py3\nRUN pip install -U flash-attn --no-build-isolation\n"
    )
    assert "no-op" not in g["message"]


def test_an_unpinned_install_keeps_whatever_flash_attn_the_container_ships(project: Any) -> None:
    # NGC ships a flash-attn from 23.08; pip's default strategy keeps an installed distribution that
    # satisfies the requirement, so `pip install flash-attn` (no version, no -U) builds nothing, even on
    # a release whose flash-attn version has no row (25.11): FAL023 says so, and there is no FAL012
    project({"Dockerfile": "FROM nvcr.io/nvidia/pytorch:25.11-py3\nRUN pip install flash-attn\n"})
    found = run("--format", "json", "--isolated", ".").json["findings"]
    (f,) = [f for f in found if f["code"] == "FAL023"]
    assert f["severity"] == "info" and "no-op" in f["message"]
    assert not [f for f in found if f["code"] == "FAL012"]
    # -U, or a version, asks pip for a flash-attn of its own: it builds, and FAL012 judges that
    project({"Dockerfile": "FROM nvcr.io/nvidia/pytorch:25.11-py3\nRUN pip install -U flash-attn\n"})
    found = run("--format", "json", "--isolated", ".").json["findings"]
    assert "no-op" not in next(f for f in found if f["code"] == "FAL023")["message"]
    assert [f for f in found if f["code"] == "FAL012"]


def test_an_unknown_release_is_said_not_judged(project: Any) -> None:
    (f,) = _found(
        project,
        "FROM nvcr.io/nvidia/pytorch:24.05-py3\nRUN pip install flash-attn==2.6.3 --no-build-isolation\n",
    )
    assert f["severity"] == "info" and "its torch is not known" in f["message"]
    assert any("no row for NGC 24.05" in n for n in f["notes"])


@pytest.mark.parametrize(
    "dockerfile",
    [
        # the stage installs its own torch (or vLLM pins one): the other rules judge against that torch
        "FROM nvcr.io/nvidia/pytorch:23.12-py3\nRUN pip install torch==2.4.0\nRUN pip install flash-attn==2.6.3\n",
        "FROM nvcr.io/nvidia/pytorch:25.11-py3\nRUN pip install vllm==0.15.1\nRUN pip install flash-attn==2.8.3\n",
        # a wheel file: setup.py's wheel guess does not run
        "FROM nvcr.io/nvidia/pytorch:23.12-py3\nRUN pip install https://example.com/flash_attn-2.5.6-cp310-cp310-linux_x86_64.whl\n",
        # not an NGC PyTorch container
        "FROM nvcr.io/nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN pip install torch==2.4.1 && pip install flash-attn==2.6.3\n",
    ],
)
def test_not_judged_here(project: Any, dockerfile: str) -> None:
    assert _found(project, dockerfile) == []


def test_an_uninstalled_container_flash_attn_is_not_kept(project: Any) -> None:
    (f,) = _found(
        project,
        "FROM nvcr.io/nvidia/pytorch:23.11-py3\nRUN pip uninstall -y flash_attn\n"
        "RUN pip install flash-attn --no-build-isolation\n",
    )
    assert "no-op" not in f["message"]
