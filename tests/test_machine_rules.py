"""FAL013-FAL015: the machine an install lands on, from every place the files say it.

Each case is judged from the facts, not from fa-lint's output: the release's setup.py, flash_api.cpp
and publish.yml at its tag (fa_lint/kb/builds.json), NVIDIA's compute capabilities (gpus.json), the
base image's glibc and flavor (images.json), torch's cpp_extension.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run

MACHINE = ("--select", "FAL013,FAL014,FAL015")


def found(*paths: str) -> list[tuple[str, int, str, str]]:
    r = run("--format", "json", "--isolated", *MACHINE, *paths)
    return [(f["path"], f["line"], f["code"], f["severity"]) for f in r.json["findings"]]


def finding(code: str, *paths: str) -> dict[str, Any]:
    (f,) = [
        f
        for f in run("--format", "json", "--isolated", *MACHINE, *paths).json["findings"]
        if f["code"] == code
    ]
    return f


DEVEL = "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n"
TORCH = "RUN pip install torch==2.4.1\n"


# --- FAL013: the GPU ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("runs_on", "expected"),
    [
        # T4 is 7.5: every FA2 release checks is_sm8x (8.x) or is_sm90 / is_sm8x_min (8.0+)
        ("[self-hosted, linux, t4]", [("FAL013", "error")]),
        ("[self-hosted, gpu-v100]", [("FAL013", "error")]),
        # A10G (8.6) and H100 (9.0) are accepted, and 2.6.3's cu12 wheels (nvcc 12.3) carry sm_80 and sm_90
        ("[self-hosted, a10g]", []),
        ("[self-hosted, h100]", []),
        # a group's labels count too
        ("{group: gpus, labels: [linux, v100]}", [("FAL013", "error")]),
        ("[self-hosted, linux]", []),  # names no GPU: nothing is known
    ],
)
def test_runner_labels(project: Any, runs_on: str, expected: list[tuple[str, str]]) -> None:
    project(
        {
            ".github/workflows/gpu.yml": "jobs:\n  test:\n"
            f"    runs-on: {runs_on}\n"
            "    container: nvidia/cuda:12.4.1-devel-ubuntu22.04\n"
            "    steps:\n      - run: pip install torch==2.4.1 && pip install flash-attn==2.6.3 --no-build-isolation\n"
        }
    )
    assert [(c, s) for _, _, c, s in found(".")] == expected


def test_a_matrix_of_runners_is_one_possibility_each(project: Any) -> None:
    project(
        {
            ".github/workflows/gpu.yml": "jobs:\n  test:\n"
            "    strategy:\n      matrix:\n        gpu: [a100, t4]\n"
            "    runs-on: [self-hosted, '${{ matrix.gpu }}']\n"
            "    steps:\n      - run: pip install flash-attn==2.6.3\n"
        }
    )
    # GitHub substitutes the expression in the list item: each matrix value is one possibility
    assert [(c, s) for _, _, c, s in found(".")] == [("FAL013", "warning")]
    project(
        {
            ".github/workflows/gpu.yml": "jobs:\n  test:\n"
            "    strategy:\n      matrix:\n        runner: [a100, t4]\n"
            "    runs-on: ${{ matrix.runner }}\n"
            "    steps:\n      - run: pip install flash-attn==2.6.3\n"
        }
    )
    f = finding("FAL013", ".")
    assert f["severity"] == "warning" and "T4" in f["notes"][0]


def test_skypilot_accelerators(project: Any) -> None:
    project(
        {
            "sky/train.yaml": "resources:\n  accelerators: V100:4\n"
            "setup: |\n  pip install torch==2.4.1\n  pip install flash-attn==2.6.3 --no-build-isolation\n"
            "run: python train.py\n",
            "sky/serve.yaml": "resources:\n  accelerators: ['T4:1', 'A100:1']\nsetup: pip install flash-attn==2.6.3\n",
            "sky/good.yaml": "resources:\n  accelerators: {A100:8, H100:8}\nsetup: pip install flash-attn==2.6.3\n",
        }
    )
    assert found(".") == [
        ("sky/serve.yaml", 3, "FAL013", "warning"),  # T4 is one of two
        ("sky/train.yaml", 5, "FAL013", "error"),
    ]


def test_kubernetes_node_labels_speak_for_the_repository(project: Any) -> None:
    project(
        {
            "deploy/pod.yaml": "apiVersion: v1\nkind: Pod\nspec:\n  nodeSelector:\n"
            "    nvidia.com/gpu.product: Tesla-T4\n  containers:\n    - name: app\n      image: me/app\n",
            "requirements.txt": "torch==2.4.1\nflash-attn==2.6.3\n",
        }
    )
    # the manifest installs nothing; the repository's installs may be what runs there: a warning
    assert found(".") == [("requirements.txt", 2, "FAL013", "warning")]
    project(
        {
            "deploy/pod.yaml": "spec:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
            "        nodeSelectorTerms:\n          - matchExpressions:\n"
            "              - {key: cloud.google.com/gke-accelerator, operator: In, values: [nvidia-tesla-v100]}\n",
            "requirements.txt": "flash-attn==2.6.3\n",
        }
    )
    assert found(".") == [("requirements.txt", 1, "FAL013", "warning")]


def test_instance_types(project: Any) -> None:
    project({"sky.yaml": "resources:\n  instance_type: g4dn.xlarge\nsetup: pip install flash-attn==2.6.3\n"})
    f = finding("FAL013", ".")
    assert "T4" in f["notes"][0] and f["severity"] == "error"


def test_slurm_gpu_requests(project: Any) -> None:
    project({"job.sh": "#!/bin/bash\n#SBATCH --gres=gpu:v100:2\npip install flash-attn==2.6.3\n"})
    assert found(".") == [("job.sh", 3, "FAL013", "error")]
    project({"job.sh": "#!/bin/bash\n#SBATCH --gpus-per-task=a40:1\npip install flash-attn==2.6.3\n"})
    assert found(".") == []  # A40 is 8.6


@pytest.mark.parametrize(
    ("arch", "severity"),
    [
        ('TORCH_CUDA_ARCH_LIST="7.0 7.5"', "error"),  # only archs FA2 refuses
        ('TORCH_CUDA_ARCH_LIST="7.5;8.0;8.6+PTX"', "warning"),  # one of several
        ('TORCH_CUDA_ARCH_LIST="8.0 8.6 9.0"', None),
    ],
)
def test_an_arch_list_is_a_statement_of_the_target(project: Any, arch: str, severity: str | None) -> None:
    project(
        {
            "Dockerfile": DEVEL
            + f"ENV {arch}\n"
            + TORCH
            + "RUN pip install flash-attn==2.6.3 --no-build-isolation\n"
        }
    )
    assert [s for _, _, c, s in found("Dockerfile") if c == "FAL013"] == ([severity] if severity else [])


def test_a_release_that_refuses_blackwell(project: Any) -> None:
    # 2.6.3: TORCH_CHECK(is_sm90 || is_sm8x): a B200 (10.0) is neither
    project(
        {
            ".github/workflows/b.yml": "jobs:\n  t:\n    runs-on: [self-hosted, b200]\n    steps:\n      - run: pip install flash-attn==2.6.3\n"
        }
    )
    f = finding("FAL013", ".")
    assert "refuses compute capability 10.0" in f["message"] and f["severity"] == "error"


def test_a_wheel_without_the_gpus_kernels(project: Any) -> None:
    # 2.7.4.post1 accepts any 8.0+ (is_sm8x_min) but its only wheel build used CUDA 12.4.1, below the
    # nvcc 12.8 that setup.py needs for sm_100 and sm_120: a B200 gets no kernel
    project(
        {
            ".github/workflows/b.yml": "jobs:\n  t:\n    runs-on: [self-hosted, b200]\n"
            "    container: nvidia/cuda:12.4.1-devel-ubuntu22.04\n"
            "    steps:\n      - run: pip install torch==2.6.0 && pip install flash-attn==2.7.4.post1 --no-build-isolation\n"
        }
    )
    f = finding("FAL013", ".")
    assert "no kernel for compute capability 10.0" in f["message"]
    assert "sm_80, sm_90" in f["message"]
    # 2.8.3's wheels (CUDA 12.9.1) carry sm_100: nothing to say
    project(
        {
            ".github/workflows/b.yml": "jobs:\n  t:\n    runs-on: [self-hosted, b200]\n"
            "    container: nvidia/cuda:12.8.0-devel-ubuntu22.04\n"
            "    steps:\n      - run: pip install torch==2.6.0 && pip install flash-attn==2.8.3 --no-build-isolation\n"
        }
    )
    assert found(".") == []


@pytest.mark.parametrize(
    ("archs", "gpu", "expected"),
    [
        ('"80"', "h100", True),  # sm_80 kernels do not run on 9.0
        ('"80;90"', "h100", False),
        ('"90"', "a100", True),
        ('"86"', "a10g", False),  # names nothing setup.py tests: torch's flags decide, and none are set
        ('"80"', "a10g", False),  # sm_80 runs on 8.6
    ],
)
def test_flash_attn_cuda_archs_of_a_source_build(project: Any, archs: str, gpu: str, expected: bool) -> None:
    project(
        {
            ".github/workflows/b.yml": "jobs:\n  t:\n"
            f"    runs-on: [self-hosted, {gpu}]\n"
            "    container: nvidia/cuda:12.8.0-devel-ubuntu22.04\n"
            "    steps:\n      - run: pip install torch==2.6.0 && pip install flash-attn==2.8.3 --no-build-isolation\n"
            "        env:\n"
            f"          FLASH_ATTN_CUDA_ARCHS: {archs}\n"
            "          FLASH_ATTENTION_FORCE_BUILD: 'TRUE'\n"
        }
    )
    assert bool([c for _, _, c, _ in found(".") if c == "FAL013"]) is expected


def test_export_and_command_prefix_set_the_build(project: Any) -> None:
    script = (
        "#SBATCH --gres=gpu:h100:8\n"
        "export FLASH_ATTN_CUDA_ARCHS=80\n"
        "FLASH_ATTENTION_FORCE_BUILD=TRUE pip install flash-attn==2.8.3 --no-build-isolation\n"
    )
    project({"build.sh": script})
    # no nvcc is known in a script, so sm_90's "bare_metal_version >= 11.8" and listing decide: "80" only
    f = finding("FAL013", ".")
    assert "compiles no kernel for compute capability 9.0" in f["message"]


def test_fa3_and_fa4_off_their_gpus(project: Any) -> None:
    project({"job.sh": "#SBATCH --gres=gpu:b200:8\npip install flash-attn-3\n"})
    assert [c for _, _, c, _ in found(".")] == ["FAL013"]  # sm_90a and sm_80 kernels only
    project({"job.sh": "#SBATCH --gres=gpu:h100:8\npip install flash-attn-3\n"})
    assert found(".") == []
    project({"job.sh": "#SBATCH --gres=gpu:a100:8\npip install flash-attn-4==4.0.0b4\n"})
    assert [c for _, _, c, _ in found(".")] == ["FAL013"]  # 'assert arch // 10 in [9, 10, 11]'
    project({"job.sh": "#SBATCH --gres=gpu:a100:8\npip install flash-attn-4==4.0.0b5\n"})
    assert found(".") == []


# --- FAL014: glibc and platforms -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "version", "expected"),
    [
        # 2.8.3's wheels were built on ubuntu-22.04 (glibc 2.35); GLIBC_2.32 is reported missing below it
        ("nvidia/cuda:12.4.1-devel-ubuntu20.04", "2.8.3", "error"),  # glibc 2.31
        ("nvidia/cuda:12.4.1-devel-ubuntu22.04", "2.8.3", None),
        ("nvidia/cuda:12.4.1-devel-ubi8", "2.8.3", "error"),  # glibc 2.28
        ("nvidia/cuda:12.4.1-devel-ubuntu20.04", "2.7.4.post1", None),  # built on ubuntu-20.04
    ],
)
def test_wheels_built_on_a_newer_glibc(project: Any, base: str, version: str, expected: str | None) -> None:
    project(
        {"Dockerfile": f"FROM {base}\n{TORCH}RUN pip install flash-attn=={version} --no-build-isolation\n"}
    )
    assert [s for _, _, c, s in found("Dockerfile") if c == "FAL014"] == ([expected] if expected else [])


def test_the_glibc_finding_names_a_release_that_imports(project: Any) -> None:
    project(
        {
            "Dockerfile": f"FROM nvidia/cuda:12.4.1-devel-ubuntu20.04\n{TORCH}RUN pip install 'flash-attn>=2.8,<2.8.3.post2' --no-build-isolation\n"
        }
    )
    f = finding("FAL014", "Dockerfile")
    assert f["message"].endswith("use flash-attn==2.7.4.post1")  # the newest built on ubuntu-20.04
    assert any("GLIBC_2.32" in n for n in f["notes"])


def test_a_compile_needs_no_glibc_of_the_runner(project: Any) -> None:
    # FLASH_ATTENTION_FORCE_BUILD compiles against the image's own glibc
    project(
        {
            "Dockerfile": f"FROM nvidia/cuda:12.4.1-devel-ubuntu20.04\nENV FLASH_ATTENTION_FORCE_BUILD=TRUE\n{TORCH}RUN pip install flash-attn==2.8.3 --no-build-isolation\n"
        }
    )
    # (torch 2.4.1's CUDA 12.1 against nvcc 12.4 is FAL015's minor-mismatch warning, nothing of FAL014's)
    assert [c for _, _, c, _ in found("Dockerfile")] == ["FAL015"]


def test_musl(project: Any) -> None:
    wheel = "https://x/flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl"
    project({"Dockerfile": f"FROM python:3.11-alpine\n{TORCH}RUN pip install {wheel}\n"})
    # the wheel's file name says 2.6.3, built on ubuntu-20.04's glibc: musl loads no glibc binary
    f = finding("FAL014", "Dockerfile")
    assert f["severity"] == "error" and "musl" in f["message"]


@pytest.mark.parametrize(
    ("runs_on", "severity"),
    [
        ("windows-latest", "error"),  # no CUDA toolkit in the job: setup.py cannot build
        ("macos-14", "error"),
        ("${{ matrix.os }}", "error"),  # every matrix value runs
        ("ubuntu-22.04", None),
    ],
)
def test_workflow_platforms(project: Any, runs_on: str, severity: str | None) -> None:
    project(
        {
            ".github/workflows/ci.yml": "jobs:\n  t:\n"
            "    strategy:\n      matrix:\n        os: [ubuntu-latest, windows-latest]\n"
            f"    runs-on: {runs_on}\n"
            "    steps:\n      - run: pip install flash-attn==2.6.3\n"
        }
    )
    assert [s for _, _, c, s in found(".") if c == "FAL014"] == ([severity] if severity else [])


def test_a_marker_keeps_it_off_other_platforms(project: Any) -> None:
    project(
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "1"\n'
            "dependencies = [\"flash-attn==2.6.3; sys_platform == 'linux'\"]\n"
            "[tool.uv]\nenvironments = [\"sys_platform == 'darwin'\", \"sys_platform == 'linux'\"]\n"
        }
    )
    assert found(".") == []


@pytest.mark.parametrize(
    ("files", "line"),
    [
        (
            {
                "pyproject.toml": '[project]\nname = "x"\nversion = "1"\ndependencies = ["flash-attn==2.6.3"]\n'
                "[tool.uv]\nrequired-environments = [\"sys_platform == 'win32'\"]\n"
            },
            4,
        ),
        (
            {
                "pixi.toml": '[workspace]\nplatforms = ["linux-64", "osx-arm64"]\n[pypi-dependencies]\nflash-attn = "==2.6.3"\n'
            },
            4,
        ),
        (
            {
                "environment.yml": "platforms: [linux-64, win-64]\ndependencies:\n  - pip:\n    - flash-attn==2.6.3\n"
            },
            4,
        ),
    ],
)
def test_declared_platforms_warn(project: Any, files: dict[str, str], line: int) -> None:
    project(files)
    assert [(ln, c, s) for _, ln, c, s in found(".")] == [(line, "FAL014", "warning")]


def test_a_pixi_feature_with_its_own_platforms(project: Any) -> None:
    project(
        {
            "pixi.toml": '[workspace]\nplatforms = ["linux-64", "osx-arm64"]\n'
            '[feature.gpu]\nplatforms = ["linux-64"]\n[feature.gpu.pypi-dependencies]\nflash-attn = "==2.6.3"\n'
            "[environments]\ngpu = ['gpu']\n"
        }
    )
    assert found(".") == []


# --- FAL015: the toolkit ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        # setup.py builds CUDAExtension as it is read; torch's CUDAExtension needs CUDA_HOME: no nvcc fails
        ("nvidia/cuda:12.1.1-runtime-ubuntu22.04", ["FAL015"]),
        ("nvidia/cuda:12.1.1-base-ubuntu22.04", ["FAL015"]),
        ("pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime", ["FAL015"]),
        ("python:3.11", ["FAL015"]),
        ("nvidia/cuda:12.1.1-devel-ubuntu22.04", []),
        ("pytorch/pytorch:2.4.0-cuda12.1-cudnn9-devel", []),
        ("nvcr.io/nvidia/pytorch:24.05-py3", []),  # not in the knowledge base: unknown
        ("me/cuda-base:1", []),
    ],
)
def test_a_stage_without_nvcc(project: Any, base: str, expected: list[str]) -> None:
    project({"Dockerfile": f"FROM {base}\n{TORCH}RUN pip install flash-attn==2.6.3 --no-build-isolation\n"})
    assert [c for _, _, c, _ in found("Dockerfile") if c == "FAL015"] == expected


@pytest.mark.parametrize(
    "install",
    [
        "RUN apt-get update && apt-get install -y --no-install-recommends cuda-nvcc-12-1\n",
        "RUN apt-get install -y cuda-toolkit-12-1\n",
        "RUN conda install -y -c nvidia cuda-nvcc=12.1\n",
        "RUN sh cuda_12.1.1_530.30.02_linux.run --silent --toolkit\n",
        "COPY --from=nvidia/cuda:12.1.1-devel-ubuntu22.04 /usr/local/cuda /usr/local/cuda\n",
    ],
)
def test_a_toolkit_installed_before_the_install(project: Any, install: str) -> None:
    project(
        {
            "Dockerfile": f"FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\n{install}{TORCH}RUN pip install flash-attn==2.6.3 --no-build-isolation\n"
        }
    )
    assert [c for _, _, c, _ in found("Dockerfile") if c == "FAL015"] == []


def test_a_toolkit_installed_after_the_install_is_too_late(project: Any) -> None:
    project(
        {
            "Dockerfile": f"FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\n{TORCH}RUN pip install flash-attn==2.6.3 --no-build-isolation\nRUN apt-get install -y cuda-nvcc-12-1\n"
        }
    )
    assert [c for _, _, c, _ in found("Dockerfile")] == ["FAL015"]


def test_a_stage_inherits_its_parents_toolkit(project: Any) -> None:
    project(
        {
            "Dockerfile": "FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04 AS base\n"
            "RUN apt-get install -y cuda-nvcc-12-1\n"
            f"FROM base AS build\n{TORCH}RUN pip install flash-attn==2.6.3 --no-build-isolation\n"
        }
    )
    assert found("Dockerfile") == []


def test_a_wheel_url_needs_no_nvcc(project: Any) -> None:
    wheel = "https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl"
    project({"Dockerfile": f"FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\n{TORCH}RUN pip install {wheel}\n"})
    assert [c for _, _, c, _ in found("Dockerfile") if c == "FAL015"] == []


def test_skip_cuda_build_builds_no_extension(project: Any) -> None:
    project(
        {
            "Dockerfile": f"FROM python:3.11\nENV FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE\n{TORCH}RUN pip install flash-attn==2.6.3\n"
        }
    )
    assert [c for _, _, c, _ in found("Dockerfile") if c == "FAL015"] == []


@pytest.mark.parametrize(
    ("base", "version", "message"),
    [
        # setup.py: 'if bare_metal_version < Version("11.7"): raise RuntimeError(...)' (2.7.0 and later)
        ("nvidia/cuda:11.6.2-devel-ubuntu20.04", "2.7.4.post1", "needs nvcc 11.7 or newer"),
        # a compile (FORCE_BUILD) with nvcc 11.8 for torch's CUDA 12.1: torch raises on another major
        ("nvidia/cuda:11.8.0-devel-ubuntu22.04", "2.6.3", "torch refuses another CUDA major"),
    ],
)
def test_nvcc_versions(project: Any, base: str, version: str, message: str) -> None:
    project(
        {
            "Dockerfile": f"FROM {base}\nENV FLASH_ATTENTION_FORCE_BUILD=TRUE\n"
            "RUN pip install torch==2.4.1 --index-url https://download.pytorch.org/whl/cu121\n"
            f"RUN pip install flash-attn=={version} --no-build-isolation\n"
        }
    )
    f = finding("FAL015", "Dockerfile")
    assert message in f["message"] and f["severity"] == "error"


def test_a_minor_mismatch_only_warns(project: Any) -> None:
    project(
        {
            "Dockerfile": "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nENV FLASH_ATTENTION_FORCE_BUILD=TRUE\n"
            "RUN pip install torch==2.4.1 --index-url https://download.pytorch.org/whl/cu121\n"
            "RUN pip install flash-attn==2.6.3 --no-build-isolation\n"
        }
    )
    assert finding("FAL015", "Dockerfile")["severity"] == "warning"


def test_a_compile_without_max_jobs_on_an_old_tag_says_so(project: Any) -> None:
    # v2.5.3's setup.py never sets MAX_JOBS (NinjaBuildExtension arrives in v2.5.4)
    project(
        {
            "Dockerfile": "FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\nENV FLASH_ATTENTION_FORCE_BUILD=TRUE\n"
            "RUN pip install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu121\n"
            "RUN pip install flash-attn==2.5.3 --no-build-isolation\n"
        }
    )
    f = finding("FAL015", "Dockerfile")
    assert any(n.startswith("no MAX_JOBS") for n in f["notes"])
    project(
        {
            "Dockerfile": "FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\nENV FLASH_ATTENTION_FORCE_BUILD=TRUE MAX_JOBS=4\n"
            "RUN pip install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu121\n"
            "RUN pip install flash-attn==2.5.3 --no-build-isolation\n"
        }
    )
    assert not any(n.startswith("no MAX_JOBS") for n in finding("FAL015", "Dockerfile")["notes"])


def test_fal011_notes_the_stage_and_suggests_what_runs_there(project: Any) -> None:
    # torch 2.4 has no wheel in 2.5.x: FAL011; the runtime image has no nvcc, so the compile cannot run
    project(
        {
            "Dockerfile": "FROM nvidia/cuda:12.1.1-runtime-ubuntu20.04\n"
            "RUN pip install torch==2.4.1\nRUN pip install flash-attn==2.5.8 --no-build-isolation\n"
        }
    )
    r = run("--format", "json", "--isolated", "--select", "FAL011", "Dockerfile")
    (f,) = r.json["findings"]
    assert any("no nvcc" in n and "FAL015" in n for n in f["notes"])
    # the nearest release with a torch 2.4 wheel that also imports on glibc 2.31: built on ubuntu-20.04
    assert f["help"] in ("require flash-attn==2.6.3", "require flash-attn==2.7.4.post1"), f["help"]


# --- real files (tests/data/realworld/machine/README.md says where each comes from) -------------------

REALWORLD = Path(__file__).parent / "data/realworld/machine"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("axolotl-base/Dockerfile-base", [(19, "FAL011", "warning"), (19, "FAL013", "warning")]),
        ("skypilot-vicuna/train.yaml", [(14, "FAL002", "warning"), (14, "FAL012", "warning")]),
        ("reenvision-base-flash/Dockerfile", [(12, "FAL011", "warning")]),
        ("slurm-a100/train_a100.sh", [(10, "FAL002", "warning")]),
        ("app-ras-runtime/Dockerfile", [(9, "FAL002", "warning"), (9, "FAL015", "error")]),
        ("koble-runtime/Dockerfile", [(2, "FAL002", "warning"), (2, "FAL015", "error")]),
        ("truefoundry-micromamba/Dockerfile", [(10, "FAL001", "error"), (10, "FAL013", "warning")]),
        ("esm-pixi-macos/pyproject.toml", [(8, "FAL014", "warning")]),
        ("modal-axolotl-a100/finetune_app.py", [(20, "FAL002", "warning")]),
    ],
)
def test_realworld(path: str, expected: list[tuple[int, str, str]]) -> None:
    r = run("--format", "json", "--isolated", str(REALWORLD / path))
    assert [(f["line"], f["code"], f["severity"]) for f in r.json["findings"]] == expected
