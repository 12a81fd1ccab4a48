"""Issue 42, item 4: the GPU archs each tag's ROCm build accepts, against the archs the files target.

flash-attn's setup.py builds its Composable Kernel backend on a ROCm torch for ``GPU_ARCHS`` (default
``native``), split on ``;``, and asserts each is in ``allowed_archs`` (v2.6.2-v2.7.4.post1: gfx90a,
gfx940, gfx941, gfx942; from v2.8.0: gfx90a, gfx942, gfx950). From v2.7.1,
``FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE`` builds the Triton backend and checks no arch. Read per tag
by scripts/build_rocm_kb.py (fa_lint/kb/rocm.json). The failure is the arch, never FAL001's paged KV.

Real shapes: ROCm/flash-attention#93 and #80 (a Radeon RX 7900 XTX, gfx1100: "gfx1100 is invalid or
not supported by Flash-Attention"), chirvo/ai-docker-containers
dockerfiles/base/ubuntu_rocm_pytorch.dockerfile (``ENV PYTORCH_ROCM_ARCH="gfx1100"`` for RDNA3)."""

from __future__ import annotations

from typing import Any

import pytest
from packaging.version import Version

from fa_lint.kb import rocm
from tests.conftest import lint

IMAGE = "FROM rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0\n"


def _codes(project: Any, dockerfile: str) -> list[tuple[str, str]]:
    return sorted((f["code"], f["severity"]) for f in lint(project, {"Dockerfile": dockerfile}))


def test_each_tags_arch_list() -> None:
    facts = rocm.load()
    old, new = facts.accepted(Version("2.6.3")), facts.accepted(Version("2.8.3"))
    assert old is not None and new is not None
    assert "gfx942" in old.archs and "gfx950" not in old.archs and "gfx1100" not in old.archs
    assert "gfx950" in new.archs and "gfx940" not in new.archs
    assert old.evidence.startswith("v2.6.2:setup.py:") and "allowed_archs" in old.evidence
    assert facts.accepted(Version("2.5.9")) is None  # no ROCm build before 2.6.2
    assert facts.triton is not None and facts.triton[0] == Version("2.7.1")
    assert "GPU_ARCHS" in facts.gpu_archs


def test_gpu_archs_outside_the_list_is_the_cause(project: Any) -> None:
    dockerfile = IMAGE + "ENV GPU_ARCHS=gfx1100\nRUN pip install flash-attn==2.6.3 --no-build-isolation\n"
    assert _codes(project, dockerfile) == [("FAL013", "error")]  # not FAL001: the build fails first


def test_an_accepted_arch_leaves_fal001_its_paged_kv_finding(project: Any) -> None:
    dockerfile = IMAGE + "ENV GPU_ARCHS=gfx942\nRUN pip install flash-attn==2.6.3 --no-build-isolation\n"
    assert _codes(project, dockerfile) == [("FAL001", "error")]  # 2.6.3's ROCm build has no fwd_kvcache


@pytest.mark.parametrize(
    ("archs", "release", "expected"),
    [
        ("gfx950", "2.7.4.post1", [("FAL013", "error")]),  # gfx950 joined the list in 2.8.0
        ("gfx950", "2.8.3", []),
        ('"gfx90a;gfx942"', "2.8.3", []),
        ('"gfx90a;gfx1100"', "2.8.3", [("FAL013", "error")]),
    ],
)
def test_per_release(project: Any, archs: str, release: str, expected: list[tuple[str, str]]) -> None:
    dockerfile = (
        IMAGE + f"ENV GPU_ARCHS={archs}\nRUN pip install flash-attn=={release} --no-build-isolation\n"
    )
    assert [c for c in _codes(project, dockerfile) if c[0] in ("FAL001", "FAL013")] == expected


def test_pytorch_rocm_arch_is_the_target_but_not_what_setup_py_reads(project: Any) -> None:
    dockerfile = (
        IMAGE
        + 'ENV PYTORCH_ROCM_ARCH="gfx1100"\nRUN pip install flash-attn==2.7.4.post1 --no-build-isolation\n'
    )
    found = [f for f in lint(project, {"Dockerfile": dockerfile}) if f["code"] == "FAL013"]
    assert [f["severity"] for f in found] == ["warning"]
    assert any("never reads PYTORCH_ROCM_ARCH" in n for n in found[0]["notes"])


@pytest.mark.parametrize(("release", "expected"), [("2.7.4.post1", []), ("2.6.3", ["FAL013"])])
def test_the_triton_backend_checks_no_arch(project: Any, release: str, expected: list[str]) -> None:
    dockerfile = (
        IMAGE + "ENV GPU_ARCHS=gfx1100 FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE\n"
        f"RUN pip install flash-attn=={release} --no-build-isolation\n"
    )
    assert [c for c, _ in _codes(project, dockerfile) if c == "FAL013"] == expected


def test_not_on_rocm(project: Any) -> None:
    dockerfile = (
        "FROM pytorch/pytorch:2.4.1-cuda12.1-cudnn9-devel\nENV GPU_ARCHS=gfx1100\n"
        "RUN pip install flash-attn==2.6.3 --no-build-isolation\n"
    )
    assert [c for c, _ in _codes(project, dockerfile) if c == "FAL013"] == []
