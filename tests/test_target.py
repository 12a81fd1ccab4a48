"""What the files say about the machine: the Setting records each reader makes, and the target the
machine model puts together from them (fa_lint/machine/target.py)."""

from __future__ import annotations

from typing import Any

import pytest

from fa_lint.files.read import parse_file
from fa_lint.machine.target import Machines, archs, platform_of
from fa_lint.model import Image, Setting
from tests.conftest import parse


def settings(source: str, name: str, text: str) -> list[tuple[Any, ...]]:
    return [
        (s.kind, s.name, s.value, s.scope, s.after, s.until, s.possible, s.location.line)
        for s in parse(source, name, text)
        if isinstance(s, Setting)
    ]


def test_dockerfile_arg_and_env() -> None:
    text = (
        "FROM nvidia/cuda:12.1.1-devel-ubuntu22.04 AS build\n"
        "ARG MAX_JOBS\n"
        'ENV TORCH_CUDA_ARCH_LIST="8.0 9.0" FLASH_ATTENTION_FORCE_BUILD=TRUE OTHER=1\n'
        "ENV CUDA_HOME /usr/local/cuda\n"
        "RUN pip install flash-attn\n"
        "ENV MAX_JOBS=2\n"
    )
    assert settings("dockerfile", "Dockerfile", text) == [
        ("env", "MAX_JOBS", "", "stage:build", 0, None, False, 2),  # set from outside: value unknown
        ("env", "TORCH_CUDA_ARCH_LIST", "8.0 9.0", "stage:build", 0, None, False, 3),
        ("env", "FLASH_ATTENTION_FORCE_BUILD", "TRUE", "stage:build", 0, None, False, 3),
        ("env", "CUDA_HOME", "/usr/local/cuda", "stage:build", 0, None, False, 4),
        ("env", "MAX_JOBS", "2", "stage:build", 1, None, False, 6),  # after the first install
    ]


def test_shell_export_prefix_and_branches() -> None:
    text = (
        "export TORCH_CUDA_ARCH_LIST=8.0\n"
        "MAX_JOBS=4 pip install flash-attn\n"
        'if [ -n "$X" ]; then export FLASH_ATTN_CUDA_ARCHS="80;90"; fi\n'
        "ARCH=9.0\nexport TORCH_CUDA_ARCH_LIST=$ARCH\n"
    )
    assert settings("shell", "install.sh", text) == [
        ("env", "TORCH_CUDA_ARCH_LIST", "8.0", "", 0, None, False, 1),
        ("env", "MAX_JOBS", "4", "", 0, 1, False, 2),  # for that one command
        ("env", "FLASH_ATTN_CUDA_ARCHS", "80;90", "", 1, None, True, 3),
        ("env", "TORCH_CUDA_ARCH_LIST", "9.0", "", 1, None, False, 5),  # expanded
    ]


def test_system_toolkits() -> None:
    text = (
        "apt-get update && apt-get install -y --no-install-recommends cuda-nvcc-12-1 git\n"
        "dnf install -y cuda-toolkit\n"
        "sudo apt install nvidia-cuda-toolkit\n"
        "apt-get install -y cuda-runtime-12-1\n"  # no compiler
    )
    assert [(k, n, v) for k, n, v, *_ in settings("shell", "s.sh", text)] == [
        ("toolkit", "apt", "12.1"),
        ("toolkit", "rpm", ""),
        ("toolkit", "apt", ""),
    ]


def test_workflow_jobs() -> None:
    text = (
        "env:\n  MAX_JOBS: 2\n"
        "jobs:\n"
        "  gpu:\n"
        "    runs-on: [self-hosted, a100]\n"
        "    container:\n      image: nvidia/cuda:12.1.1-devel-ubuntu22.04\n"
        "    steps:\n"
        "      - uses: Jimver/cuda-toolkit@v0.2.16\n        with:\n          cuda: '12.4.1'\n"
        "      - run: pip install flash-attn\n        env:\n          FLASH_ATTN_CUDA_ARCHS: '80'\n"
        "  os:\n"
        "    strategy:\n      matrix:\n        os: [ubuntu-22.04, windows-latest]\n"
        "    runs-on: ${{ matrix.os }}\n"
        "    steps:\n      - run: pip install flash-attn\n"
    )
    got = settings("workflow", ".github/workflows/ci.yml", text)
    assert got == [
        ("runner", "runs-on", "self-hosted", "job:gpu", 0, None, False, 5),
        ("runner", "runs-on", "a100", "job:gpu", 0, None, False, 5),
        ("env", "MAX_JOBS", "2", "job:gpu", 0, None, False, 2),
        ("toolkit", "Jimver/cuda-toolkit", "12.4", "job:gpu", 0, None, False, 11),
        ("env", "FLASH_ATTN_CUDA_ARCHS", "80", "job:gpu", 0, 1, False, 14),  # that step's commands
        ("runner", "runs-on", "ubuntu-22.04", "job:os", 0, None, True, 18),  # the matrix values
        ("runner", "runs-on", "windows-latest", "job:os", 0, None, True, 18),
        ("env", "MAX_JOBS", "2", "job:os", 0, None, False, 2),
    ]


def test_cluster_yaml() -> None:
    sky = "resources:\n  accelerators: ['A100:8', 'H100:8']\n  instance_type: p4d.24xlarge\nsetup: pip install flash-attn\n"
    assert [(k, n, v, p) for k, n, v, _, _, _, p, _ in settings("cluster", "sky.yaml", sky)] == [
        ("gpu", "accelerators", "A100", True),
        ("gpu", "accelerators", "H100", True),
        ("instance", "instance_type", "p4d.24xlarge", False),
    ]
    k8s = (
        "kind: Deployment\nspec:\n  template:\n    spec:\n      nodeSelector:\n"
        "        karpenter.k8s.aws/instance-gpu-name: l4\n        node.kubernetes.io/instance-type: g6.xlarge\n"
        "---\nkind: Service\n"
    )
    assert [(k, v) for k, _, v, *_ in settings("cluster", "deploy.yaml", k8s)] == [
        ("gpu", "l4"),
        ("instance", "g6.xlarge"),
    ]


def test_a_yaml_file_is_read_only_when_its_head_says_gpu(tmp_path: Any) -> None:
    from fa_lint.files.discover import classify

    (tmp_path / "sky.yaml").write_text("resources:\n  accelerators: A100\n")
    (tmp_path / "values.yaml").write_text("replicas: 2\n")
    assert classify(str(tmp_path / "sky.yaml")) == "cluster"
    assert classify(str(tmp_path / "values.yaml")) is None


def test_declared_platforms() -> None:
    pixi = '[workspace]\nplatforms = ["linux-64", "win-64"]\n[feature.cuda]\nplatforms = ["linux-64"]\n'
    assert [(v, sc) for _, _, v, sc, *_ in settings("pixi", "pixi.toml", pixi)] == [
        ("linux-64", ""),
        ("win-64", ""),
        ("linux-64", "feature:cuda"),
    ]
    uv = '[project]\nname = "x"\nversion = "1"\n[tool.uv]\nrequired-environments = ["sys_platform == \'darwin\'"]\n'
    assert [(n, v) for _, n, v, *_ in settings("pyproject", "pyproject.toml", uv)] == [
        ("uv required-environments", "sys_platform == 'darwin'")
    ]
    conda = "platforms:\n  - osx-arm64\ndependencies:\n  - python\n"
    assert [v for _, _, v, *_ in settings("conda", "environment.yml", conda)] == ["osx-arm64"]


@pytest.mark.parametrize(
    ("value", "platform"),
    [
        ("windows-2022", "windows"),
        ("win-64", "windows"),
        ("macos-14", "macos"),
        ("osx-arm64", "macos"),
        ("ubuntu-latest", "linux"),
        ("linux-aarch64", "linux"),
        ("self-hosted", None),
    ],
)
def test_platform_names(value: str, platform: str | None) -> None:
    assert platform_of(value) == platform


def test_arch_lists() -> None:
    assert archs("7.5 8.0;8.6+PTX") == ((7, 5), (8, 0), (8, 6))
    assert archs("9.0a") == ((9, 0),)
    assert archs("Ampere") == ()  # torch's named archs are not read


def _target(tmp_path: Any, text: str, name: str = "Dockerfile") -> Any:
    from fa_lint.machine.environments import build

    path = tmp_path / name
    path.write_text(text)
    files = {str(path): parse_file(str(path), "dockerfile")}
    envs = build(files)
    found = tuple(r for f in files.values() for r in f.records if isinstance(r, (Setting, Image)))
    machines = Machines(found, envs)
    return {e.name.split(" [")[-1].rstrip("]"): machines.of(e) for e in envs}


def test_nvcc_counts_from_its_step(tmp_path: Any) -> None:
    targets = _target(
        tmp_path,
        "FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04 AS a\n"
        "RUN pip install einops\nRUN apt-get install -y cuda-nvcc-12-1\nRUN pip install flash-attn\n",
    )
    t = targets["stage:a"]
    assert t.nvcc(1).value == "none"  # the base image's
    assert t.nvcc(2).value == "12.1"  # after the apt install (step 1)
    assert t.glibc is not None and t.glibc.value == "2.35"


def test_a_stage_from_another_keeps_its_image_and_settings(tmp_path: Any) -> None:
    targets = _target(
        tmp_path,
        "FROM nvidia/cuda:12.1.1-devel-ubuntu20.04 AS base\nENV MAX_JOBS=3\n"
        "FROM base AS build\nRUN pip install flash-attn\n",
    )
    t = targets["stage:build"]
    assert t.glibc is not None and t.glibc.value == "2.31"
    assert t.nvcc(1).value == "12.1"
    var = t.variable("MAX_JOBS", 1)
    assert var is not None and var.value == "3"
