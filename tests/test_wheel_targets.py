"""Wheel URLs judged by what their names say, source builds by the archs they compile, and compiles
by the memory they need (issue 42 items 5 and 6; issue 40 item 6's FLASH_ATTN_CUDA_ARCHS line).

Expectations from the facts: each release's setup.py at its tag (the -gencode flags and the nvcc each
needs: sm_100/sm_120 from nvcc 12.8; FLASH_ATTN_CUDA_ARCHS from 2.7.3; int(free_memory_gb / 9) from
2.5.4) and publish.yml (2.7.4.post1's wheels built with CUDA 12.4.1: sm_80, sm_90; 2.8.3's with 12.9.1:
sm_80-sm_120), in fa_lint/kb/builds.json; NVIDIA's compute capabilities (RTX 5090: 12.0; B200: 10.0);
pip's platform tags. Wheel names are those of flash-attn's release assets and of the community
repositories (mjun0812/flash-attention-prebuild-wheels: ``+cu128torch2.7``; kingbri1/flash-attention's
Windows builds: ``+cu124torch2.6.0cxx11abiFALSE-...-win_amd64``).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import lint

BLACKWELL = 'FROM nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04\nENV TORCH_CUDA_ARCH_LIST="12.0"\n'
RELEASES = "https://github.com/Dao-AILab/flash-attention/releases/download"
MJUN = "https://github.com/mjun0812/flash-attention-prebuild-wheels/releases/download/v0.0.8"


def found(project: Any, files: dict[str, str], select: str) -> list[tuple[str, int, str, str]]:
    return [
        (f["path"], f["line"], f["code"], f["severity"]) for f in lint(project, files, "--select", select)
    ]


@pytest.mark.parametrize(
    ("wheel", "expected"),
    [
        # the release workflow's CUDA 12 build of 2.7.4.post1 for torch 2.6: CUDA 12.4.1, sm_80 and sm_90
        (
            f"{RELEASES}/v2.7.4.post1/flash_attn-2.7.4.post1+cu12torch2.6cxx11abiFALSE-cp310-cp310-linux_x86_64.whl",
            "error",
        ),
        # 2.8.3's: CUDA 12.9.1, sm_80 to sm_120
        (f"{RELEASES}/v2.8.3/flash_attn-2.8.3+cu12torch2.6cxx11abiFALSE-cp310-cp310-linux_x86_64.whl", None),
        # a community build with nvcc 12.4: 2.7.4.post1's setup.py passes sm_120 only from nvcc 12.8
        (f"{MJUN}/flash_attn-2.7.4.post1+cu124torch2.6-cp310-cp310-linux_x86_64.whl", "error"),
        # with nvcc 12.8 it does
        (f"{MJUN}/flash_attn-2.7.4.post1+cu128torch2.6-cp310-cp310-linux_x86_64.whl", None),
        # no CUDA in the name: what it was built with is not known
        ("https://example.com/whl/flash_attn-2.7.4.post1-cp310-cp310-linux_x86_64.whl", None),
    ],
)
def test_a_wheel_url_carries_its_builds_kernels(project: Any, wheel: str, expected: str | None) -> None:
    files = {"Dockerfile": f"{BLACKWELL}RUN pip install torch==2.6.0\nRUN pip install {wheel}\n"}
    assert found(project, files, "FAL013") == ([("Dockerfile", 4, "FAL013", expected)] if expected else [])


def test_a_wheel_attached_after_the_tag_has_no_known_archs(project: Any) -> None:
    # 2.7.4.post1's setup.py fetches a torch 2.7 wheel the tag's matrix never built (attached later, by a
    # later workflow): its archs are not the tag's CUDA 12.4 build's, so nothing is claimed of them
    files = {
        "Dockerfile": 'FROM pytorch/pytorch:2.7.0-cuda12.8-cudnn9-devel\nENV TORCH_CUDA_ARCH_LIST="12.0"\n'
        "RUN pip install flash-attn==2.7.4.post1 --no-build-isolation\n"
    }
    assert found(project, files, "FAL013") == []


def test_a_wheel_of_another_cuda_major_than_torch(project: Any) -> None:
    torch = "RUN pip install torch==2.4.0 --index-url https://download.pytorch.org/whl/cu121\n"
    wheel = f"{RELEASES}/v2.6.3/flash_attn-2.6.3+cu118torch2.4cxx11abiFALSE-cp310-cp310-linux_x86_64.whl"
    same = wheel.replace("cu118", "cu123")
    files = {
        "a/Dockerfile": f"FROM python:3.10\n{torch}RUN pip install {wheel}\n",
        "b/Dockerfile": f"FROM python:3.10\n{torch}RUN pip install {same}\n",
    }
    assert found(project, files, "FAL005") == [("a/Dockerfile", 3, "FAL005", "error")]


def test_a_windows_wheel_in_a_linux_image(project: Any) -> None:
    wheel = (
        "https://github.com/kingbri1/flash-attention/releases/download/v2.7.4.post1/"
        "flash_attn-2.7.4.post1+cu124torch2.6.0cxx11abiFALSE-cp310-cp310-win_amd64.whl"
    )
    files = {"Dockerfile": f"FROM python:3.10\nRUN pip install {wheel}\n"}
    assert found(project, files, "FAL014") == [("Dockerfile", 2, "FAL014", "error")]


def test_a_windows_wheel_on_a_windows_runner_is_no_platform_finding(project: Any) -> None:
    wheel = (
        "https://github.com/kingbri1/flash-attention/releases/download/v2.7.4.post1/"
        "flash_attn-2.7.4.post1+cu124torch2.6.0cxx11abiFALSE-cp311-cp311-win_amd64.whl"
    )
    workflow = f"jobs:\n  t:\n    runs-on: windows-latest\n    steps:\n      - run: pip install {wheel}\n"
    assert found(project, {".github/workflows/t.yml": workflow}, "FAL014") == []


# --- source builds ------------------------------------------------------------------------------------

CLONE = "RUN git clone https://github.com/Dao-AILab/flash-attention && cd flash-attention && {} pip install --no-build-isolation .\n"


@pytest.mark.parametrize(
    ("arch_list", "variable", "expected"),
    [
        # xtuner's FA2 line: FLASH_ATTN_CUDA_ARCHS="90" for a machine list of 9.0 and 10.0; whichever release
        # the checkout is, sm_90 (2.7.3 and later) or sm_80/sm_90 (before): no kernel for 10.0
        ("9.0 10.0", 'FLASH_ATTN_CUDA_ARCHS="90"', "warning"),
        ("9.0", 'FLASH_ATTN_CUDA_ARCHS="90"', None),
        # 8.6: the releases before 2.7.3 compile sm_80, which runs there; which release it is, is not known
        ("8.6", 'FLASH_ATTN_CUDA_ARCHS="90"', None),
        ("10.0", "", None),  # the default compiles sm_100 from nvcc 12.8
    ],
)
def test_a_build_of_an_unknown_release(
    project: Any, arch_list: str, variable: str, expected: str | None
) -> None:
    files = {
        "Dockerfile": f'FROM nvidia/cuda:12.8.1-devel-ubuntu22.04\nENV TORCH_CUDA_ARCH_LIST="{arch_list}"\n'
        "RUN pip install torch==2.7.0\n" + CLONE.format(variable)
    }
    assert found(project, files, "FAL013") == ([("Dockerfile", 4, "FAL013", expected)] if expected else [])


def test_a_release_build_with_nvcc_12_8_compiles_sm_120(project: Any) -> None:
    files = {
        "Dockerfile": BLACKWELL + "RUN pip install torch==2.7.0\n"
        "RUN git clone -b v2.7.4.post1 https://github.com/Dao-AILab/flash-attention && cd flash-attention && "
        "pip install --no-build-isolation .\n"
    }
    assert found(project, files, "FAL013") == []


# --- memory ---------------------------------------------------------------------------------------------

SLURM = "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem={}\nmodule load cuda/12.1\npip install torch==2.4.0\n"
BUILD = "git clone -b v2.6.3 https://github.com/Dao-AILab/flash-attention\ncd flash-attention && {}pip install --no-build-isolation .\n"


@pytest.mark.parametrize(
    ("mem", "prefix", "expected"),
    [
        ("64G", "MAX_JOBS=16 ", "warning"),  # 16 jobs of about 9 GB on 64 GB
        ("64G", "MAX_JOBS=4 ", None),  # 36 GB: it holds
        ("32000", "", "warning"),  # setup.py picks its jobs from the node's memory, not the job's 31.25 GB
        ("256G", "MAX_JOBS=8 ", None),
    ],
)
def test_a_compile_on_a_slurm_job_s_memory(project: Any, mem: str, prefix: str, expected: str | None) -> None:
    files = {"job.sh": SLURM.format(mem) + BUILD.format(prefix)}
    got = [f for f in lint(project, files, "--select", "FAL015") if "memory" in f["message"]]
    assert [f["severity"] for f in got] == ([expected] if expected else [])


def test_no_memory_finding_where_a_wheel_is_fetched(project: Any) -> None:
    # 2.6.3 has a wheel for torch 2.4 (cu12, cxx11abiFALSE): setup.py fetches it, nothing compiles
    files = {"job.sh": SLURM.format("16G") + "pip install --no-build-isolation flash-attn==2.6.3\n"}
    assert [f for f in lint(project, files, "--select", "FAL015") if "memory" in f["message"]] == []


def test_a_skypilot_task_s_exact_memory(project: Any) -> None:
    # SkyPilot's resources.memory in GB: "32" is exactly that; "32+" at least, which bounds nothing
    task = (
        "resources:\n  accelerators: A100:1\n  memory: {}\n"
        "setup: |\n  pip install torch==2.4.0\n"
        "  FLASH_ATTENTION_FORCE_BUILD=TRUE MAX_JOBS=8 pip install --no-build-isolation flash-attn==2.6.3\n"
    )
    files = {"a/task.yaml": task.format("32"), "b/task.yaml": task.format("32+")}
    got = [
        (f["path"], f["severity"])
        for f in lint(project, files, "--select", "FAL015")
        if "memory" in f["message"]
    ]
    assert got == [("a/task.yaml", "warning")]
