"""Issue 40, item 6: the same source build of flash-attention is judged for build isolation alike in
the clone's root (flash-attn) and in its hopper/ folder (flash-attn-3).

Facts: neither the root nor hopper/ of flash-attention has a pyproject.toml on the default branch
(0251105a2fb1), and both setup.py files import torch at their top (0251105a2fb1:setup.py and
0251105a2fb1:hopper/setup.py:24), so a build that cannot see torch fails in both, and whether pip
isolates a build without ``--no-build-isolation`` depends on its version in both. The shape is
InternLM/xtuner's Dockerfile at b934f462095c1e750229de35367c50ae36caa786 (lines 70-71: ``cd hopper &&
pip wheel ... .`` then ``pip wheel ... .`` in one clone), written here in our own words.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import lint

CLONE = (
    "RUN git clone https://github.com/Dao-AILab/flash-attention.git /src/fa && "
    "cd /src/fa && git checkout v2.8.3\n"
    "WORKDIR /src/fa\n"
)


def _fal012(project: Any, base: str, flags: str) -> list[tuple[int, str, str]]:
    dockerfile = (
        f"FROM {base}\n{CLONE}"
        f"RUN cd hopper && pip wheel -w /wheels/fa3 --no-deps {flags} .\n"
        f"RUN pip wheel -w /wheels/fa2 --no-deps {flags} .\n"
    )
    return sorted(
        (f["line"], f["severity"], f["message"].split(" ", 1)[0])
        for f in lint(project, {"Dockerfile": dockerfile})
        if f["code"] == "FAL012"
    )


def test_a_pip_wheel_of_hopper_and_of_the_root_are_judged_alike(project: Any) -> None:
    # an image with torch and an unknown pip: isolation depends on pip's version, for both builds
    found = _fal012(project, "nvcr.io/nvidia/pytorch:25.03-py3", "")
    # a clone of a release tag is placed on its tag: both builds are found there
    assert found == [(2, "warning", "flash-attn"), (2, "warning", "flash-attn-3")]


def test_no_torch_at_all_is_an_error_for_both(project: Any) -> None:
    found = _fal012(project, "nvidia/cuda:12.8.1-devel-ubuntu22.04", "--no-build-isolation")
    assert found == [(2, "error", "flash-attn"), (2, "error", "flash-attn-3")]


@pytest.mark.parametrize(
    "base", ["pytorch/pytorch:2.7.0-cuda12.6-cudnn9-devel", "nvcr.io/nvidia/pytorch:25.03-py3"]
)
def test_torch_in_place_and_no_isolation_is_fine_for_both(project: Any, base: str) -> None:
    assert _fal012(project, base, "--no-build-isolation") == []


def test_the_note_says_which_setup_py_imports_torch(project: Any) -> None:
    dockerfile = f"FROM nvidia/cuda:12.8.1-devel-ubuntu22.04\n{CLONE}RUN cd hopper && pip wheel --no-deps --no-build-isolation .\n"
    (f,) = [f for f in lint(project, {"Dockerfile": dockerfile}) if f["code"] == "FAL012"]
    assert f["package"] == "flash-attn-3"
    assert f["message"].startswith("flash-attn-3 (hopper/) is built without isolation")
    assert any(
        n.startswith("flash-attention's hopper/ (flash-attn-3) has no pyproject.toml") for n in f["notes"]
    )


def test_a_clone_of_an_unknown_commit_is_judged_alike_at_each_build(project: Any) -> None:
    # xtuner's shape: the repository and commit come from a build argument, so each build is placed on
    # its own command, and the two are judged alike there
    dockerfile = (
        "FROM nvcr.io/nvidia/pytorch:25.03-py3\nARG SOURCE_URL\nWORKDIR /src\n"
        "RUN git clone $(echo ${SOURCE_URL} | cut -d '@' -f 1) && cd /src/flash-attention && "
        "git checkout $(echo ${SOURCE_URL} | cut -d '@' -f 2)\n"
        "WORKDIR /src/flash-attention\n"
        "RUN cd hopper && FLASH_ATTENTION_FORCE_BUILD=TRUE pip wheel -w /out/fa3 -v --no-deps .\n"
        "RUN FLASH_ATTENTION_FORCE_BUILD=TRUE pip wheel -w /out/fa2 -v --no-deps .\n"
    )
    found = sorted(
        (f["line"], f["severity"], f["package"])
        for f in lint(project, {"Dockerfile": dockerfile})
        if f["code"] == "FAL012"
    )
    assert found == [(6, "warning", "flash-attn-3"), (7, "warning", "flash-attn")]
