"""Issue 42, item 8: no GitHub-hosted Ubuntu runner image has a CUDA toolkit, the Arm64 ones included.

scripts/build_runners_kb.py reads actions/runner-images (README.md's image table: labels and
architectures; each image's software listing, toolsets and build scripts: none names CUDA, nvcc or
NVIDIA) into fa_lint/kb/runners.json. flash-attn's setup.py builds its CUDAExtension as it is read, so
without nvcc even the fetch of a prebuilt wheel fails (FAL015). A job that installs a toolkit first (an
action that installs CUDA, apt, conda) or runs in a devel container is another machine.

Real shapes: Dao-AILab/flash-attention#1507 (a wheel workflow with ubuntu-22.04-arm in its matrix),
mjun0812/flash-attention-prebuild-wheels#46 ("created our own Action to install CUDA in the arm64
environment of GitHub Actions")."""

from __future__ import annotations

from typing import Any

import pytest

from fa_lint.kb import images
from tests.conftest import lint

STEP = "      - run: pip install torch==2.6.0 && pip install flash-attn==2.7.4.post1 --no-build-isolation\n"


def _job(runner: str, *steps: str) -> str:
    return "on: push\njobs:\n  build:\n" + f"    runs-on: {runner}\n    steps:\n" + "".join(steps) + STEP


def _fal015(project: Any, workflow: str) -> list[str]:
    found = lint(project, {".github/workflows/ci.yml": workflow})
    return [f["severity"] for f in found if f["code"] == "FAL015"]


@pytest.mark.parametrize("runner", ["ubuntu-24.04-arm", "ubuntu-22.04-arm", "ubuntu-22.04", "ubuntu-latest"])
def test_no_toolkit_on_hosted_runners(project: Any, runner: str) -> None:
    assert _fal015(project, _job(runner)) == ["error"]
    host = images.runner(runner)
    assert host is not None and host.nvcc is False and "no line names CUDA" in host.source


@pytest.mark.parametrize(
    "steps",
    [
        ("      - uses: mjun0812/setup-cuda@v1\n",),  # an action that installs CUDA, of a version not said
        ("      - uses: Jimver/cuda-toolkit@v0.2.23\n        with:\n          cuda: 12.4.1\n",),
        ("      - run: sudo apt-get install -y nvidia-cuda-toolkit\n",),
        ("      - run: conda install -y -c nvidia cuda-nvcc=12.4\n",),
    ],
)
def test_a_toolkit_installed_first(project: Any, steps: tuple[str, ...]) -> None:
    assert _fal015(project, _job("ubuntu-24.04-arm", *steps)) == []


def test_a_devel_container_is_the_machine(project: Any) -> None:
    workflow = _job("ubuntu-latest").replace(
        "    steps:\n", "    container: pytorch/pytorch:2.6.0-cuda12.4-cudnn9-devel\n    steps:\n"
    )
    assert _fal015(project, workflow) == []


def test_a_self_hosted_runner_is_unknown(project: Any) -> None:
    assert _fal015(project, _job("[self-hosted, linux, arm64]")) == []
