"""Arm (aarch64) hosts: FAL011 (pip compiles) and FAL014 (an x86_64 wheel does not install), and what says a host is Arm (fa_lint/machine/cpu.py).

Expectations come from the facts, not from fa-lint: flash-attn's setup.py asks for a wheel named
``linux_{platform.uname().machine}`` (``get_platform()``, v2.8.3:setup.py:73-78); the release workflow
builds its wheels on ``os: [ubuntu-22.04]`` at v2.8.3 and v2.8.3.post1 (publish.yml:45), on
``ubuntu-20.04`` before, x86_64 runners all; GitHub's ``ubuntu-24.04-arm`` runner is Arm; AWS G5g
instances have Graviton2 (Arm) CPUs; GH200 comes with a Grace (Arm) CPU; pip installs a wheel only for
its own platform.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import lint, run

INSTALL = "pip install torch==2.4.1 && pip install flash-attn==2.6.3 --no-build-isolation"


def _found(project: Any, files: dict[str, str]) -> list[tuple[str, int, str, str]]:
    found = lint(project, files, "--select", "FAL011,FAL014")
    return [(f["path"], f["line"], f["severity"], f["message"]) for f in found]


@pytest.mark.parametrize(
    ("files", "path", "line", "severity"),
    [
        (
            {
                ".github/workflows/t.yml": f"jobs:\n  t:\n    runs-on: ubuntu-24.04-arm\n    steps:\n      - run: {INSTALL}\n"
            },
            ".github/workflows/t.yml",
            5,
            "warning",
        ),
        (
            {
                "Dockerfile": f"FROM --platform=linux/arm64 nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN {INSTALL}\n"
            },
            "Dockerfile",
            2,
            "warning",
        ),
        # through a stage built FROM the Arm one
        (
            {
                "Dockerfile": "FROM --platform=linux/arm64 nvidia/cuda:12.4.1-devel-ubuntu22.04 AS base\n"
                f"FROM base\nRUN {INSTALL}\n"
            },
            "Dockerfile",
            3,
            "warning",
        ),
        ({"sky.yaml": f"resources:\n  accelerators: GH200:1\nsetup: {INSTALL}\n"}, "sky.yaml", 3, "warning"),
        (
            {"sky.yaml": f"resources:\n  instance_type: g5g.2xlarge\nsetup: {INSTALL}\n"},
            "sky.yaml",
            3,
            "warning",
        ),
        # a requirement that installs only on aarch64
        (
            {"requirements.txt": "flash-attn==2.6.3; platform_machine == 'aarch64'\n"},
            "requirements.txt",
            1,
            "warning",
        ),
        # declared, not run: one of the platforms a lock serves
        (
            {
                "pixi.toml": '[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64", "linux-aarch64"]\n'
                '[pypi-dependencies]\nflash-attn = "==2.6.3"\n'
            },
            "pixi.toml",
            5,
            "info",
        ),
    ],
)
def test_an_arm_host_compiles(
    project: Any, files: dict[str, str], path: str, line: int, severity: str
) -> None:
    found = _found(project, files)
    assert [(p, n, s) for p, n, s, _ in found] == [(path, line, severity)]
    assert "no wheel for Arm" in found[0][3]


def test_an_x86_64_wheel_on_arm_does_not_install(project: Any) -> None:
    wheel = (
        "https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
        "flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp310-cp310-linux_x86_64.whl"
    )
    wf = f"jobs:\n  t:\n    runs-on: ubuntu-24.04-arm\n    steps:\n      - run: pip install {wheel}\n"
    found = _found(project, {".github/workflows/t.yml": wf})
    assert [(s, "pip refuses it" in m) for _, _, s, m in found] == [("error", True)]


@pytest.mark.parametrize(
    "files",
    [
        {
            ".github/workflows/t.yml": f"jobs:\n  t:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: {INSTALL}\n"
        },
        {
            ".github/workflows/t.yml": f"jobs:\n  t:\n    runs-on: [self-hosted, big]\n    steps:\n      - run: {INSTALL}\n"
        },
        {"Dockerfile": f"FROM --platform=linux/amd64 nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN {INSTALL}\n"},
        # the Arm stage is another one
        {
            "Dockerfile": "FROM --platform=linux/arm64 ubuntu:22.04 AS tools\n"
            f"FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN {INSTALL}\n"
        },
        # the requirement's marker leaves Arm out
        {
            "requirements.txt": "flash-attn==2.6.3; platform_machine == 'x86_64'\n",
            "pixi.toml": '[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-aarch64"]\n',
        },
        {"sky.yaml": f"resources:\n  accelerators: H100:1\nsetup: {INSTALL}\n"},
    ],
)
def test_nothing_says_arm(project: Any, files: dict[str, str]) -> None:
    assert [m for *_, m in _found(project, files) if "Arm" in m] == []


def test_an_x86_64_fa3_wheel_on_arm(project: Any) -> None:
    wheel = "https://download.pytorch.org/whl/cu128/flash_attn_3-3.0.0-cp39-abi3-manylinux_2_28_x86_64.whl"
    found = _found(
        project, {"Dockerfile": f"FROM --platform=linux/arm64 python:3.12\nRUN pip install {wheel}\n"}
    )
    assert [(p, s) for p, _, s, m in found if "flash-attn-3 wheel is built for x86_64" in m] == [
        ("Dockerfile", "error")
    ]


def test_the_compile_is_fal011_and_the_refused_wheel_fal014(project: Any) -> None:
    wf = f"jobs:\n  t:\n    runs-on: ubuntu-24.04-arm\n    steps:\n      - run: {INSTALL}\n"
    project({".github/workflows/t.yml": wf})
    found = run("--format", "json", "--isolated", "--select", "FAL011,FAL014", ".").json["findings"]
    assert [(f["code"], f["severity"]) for f in found] == [("FAL011", "warning")]
    assert any("os: [ubuntu-20.04]" in n or "ubuntu-20.04" in n for n in found[0]["notes"])  # 2.6.3's runners
