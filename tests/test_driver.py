"""What a file declares about its machine's driver (pixi ``[system-requirements] cuda``, conda's
``CONDA_OVERRIDE_CUDA``) against torch's CUDA (FAL014), and uv's torch backend.

Expectations from the facts: torch 2.11.0's wheel on PyPI is built with CUDA 13.0, 2.8.0's with 12.8
(their METADATA's nvidia-*-cu13/cu12 requirements, fa_lint/kb/torch.json); a local label ``+cu130`` and
uv's ``--torch-backend cu126`` name the build; ``auto`` lets uv pick on the machine (unknown); a CUDA
major-D driver runs D.x builds (minor version compatibility) and not D+1.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import lint

PIXI = '[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n\n[system-requirements]\ncuda = "{cuda}"\n\n'


def _found(project: Any, files: dict[str, str]) -> list[tuple[str, int, str]]:
    found = lint(project, files, "--select", "FAL014")
    return [(f["path"], f["line"], f["severity"]) for f in found if "driver" in f["message"]]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {
                "pixi.toml": PIXI.format(cuda="12")
                + '[pypi-dependencies]\ntorch = "==2.11.0+cu130"\nflash-attn = "==2.8.3"\n'
            },
            [("pixi.toml", 10, "warning")],
        ),
        # a CUDA 13 driver runs it
        (
            {
                "pixi.toml": PIXI.format(cuda="13")
                + '[pypi-dependencies]\ntorch = "==2.11.0+cu130"\nflash-attn = "==2.8.3"\n'
            },
            [],
        ),
        # torch's CUDA not known (pixi's PyPI index is not read): nothing compared
        (
            {
                "pixi.toml": PIXI.format(cuda="12")
                + '[pypi-dependencies]\ntorch = "==2.11.0"\nflash-attn = "==2.8.3"\n'
            },
            [],
        ),
        (
            {
                "Dockerfile": "FROM python:3.12\nENV CONDA_OVERRIDE_CUDA=12.4\n"
                "RUN pip install torch==2.11.0 && pip install flash-attn==2.8.3 --no-build-isolation\n"
            },
            [("Dockerfile", 3, "warning")],
        ),
        # 12.8 on a 12.4 driver: the same major runs
        (
            {
                "Dockerfile": "FROM python:3.12\nENV CONDA_OVERRIDE_CUDA=12.4\n"
                "RUN pip install torch==2.8.0 && pip install flash-attn==2.8.3 --no-build-isolation\n"
            },
            [],
        ),
        # uv's torch backend names the build; `auto` leaves it to the machine
        (
            {
                "setup.sh": "export CONDA_OVERRIDE_CUDA=11.8\nuv pip install --torch-backend cu126 torch==2.7.0\n"
                "uv pip install --no-build-isolation flash-attn==2.8.3\n"
            },
            [("setup.sh", 3, "warning")],
        ),
        (
            {
                "setup.sh": "export CONDA_OVERRIDE_CUDA=11.8\nuv pip install --torch-backend auto torch==2.7.0\n"
                "uv pip install --no-build-isolation flash-attn==2.8.3\n"
            },
            [],
        ),
    ],
)
def test_declared_driver(project: Any, files: dict[str, str], expected: list[tuple[str, int, str]]) -> None:
    assert _found(project, files) == expected
