"""The target GPU, platform and image stated in Python programs (Modal apps, SageMaker jobs, Ray tasks)
and in GitLab CI jobs (``tags:``, ``image:``, ``variables:``).

Judged from the facts: Modal's builder (modal/_image.py: ``debian_slim`` is ``FROM python:X-slim-<debian>``
with gcc, gfortran and build-essential only; ``pip_install`` runs ``python -m pip install``), the GPUs'
compute capabilities (gpus.json: T4 7.5, V100 7.0, A10G 8.6, A100 8.0, H100 9.0), each release's
kvcache check and compiled archs (builds.json), the images' flavors (images.json).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import run

MACHINE = ("--select", "FAL013,FAL014,FAL015")
CUDA_DEVEL = 'modal.Image.from_registry("nvidia/cuda:12.4.1-devel-ubuntu22.04", add_python="3.11")'


def found(*paths: str) -> list[tuple[str, int, str, str]]:
    r = run("--format", "json", "--isolated", *MACHINE, *paths)
    return [(f["path"], f["line"], f["code"], f["severity"]) for f in r.json["findings"]]


def codes(*paths: str) -> list[tuple[str, str]]:
    return [(c, s) for _, _, c, s in found(*paths)]


def modal_app(base: str, install: str, decorator: str) -> str:
    return (
        "import modal\n\n"
        f"image = (\n    {base}\n    .pip_install('torch==2.4.0', 'packaging', 'ninja')\n"
        f"    .pip_install({install}, extra_options='--no-build-isolation')\n)\n"
        "app = modal.App('x')\n\n"
        f"{decorator}\ndef f():\n    pass\n"
    )


# --- Modal ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gpu", "expected"),
    [
        ('"T4"', [("FAL013", "error")]),  # 7.5: 2.6.3 checks is_sm90 || is_sm8x
        ('"t4:2"', [("FAL013", "error")]),  # Modal upper-cases the type; ":2" is the count
        ('"A100-80GB"', []),
        ('"H100!"', []),  # "!": no automatic upgrade, still an H100
        ('["H100", "T4"]', [("FAL013", "warning")]),  # fallbacks: the function may land on either
        ("modal.gpu.T4()", [("FAL013", "error")]),  # the class API of older clients
        ('modal.gpu.A100(size="80GB")', []),
        ('"any"', []),  # whichever Modal has: says nothing
    ],
)
def test_modal_function_gpus(project: Any, gpu: str, expected: list[tuple[str, str]]) -> None:
    app = modal_app(CUDA_DEVEL, "'flash-attn==2.6.3'", f"@app.function(image=image, gpu={gpu})")
    project({"app.py": app})
    assert codes(".") == expected


def test_modal_debian_slim_has_no_nvcc(project: Any) -> None:
    # debian_slim installs gcc, gfortran and build-essential: setup.py's CUDAExtension needs CUDA_HOME
    app = modal_app(
        "modal.Image.debian_slim(python_version='3.11')",
        "'flash-attn==2.6.3'",
        "@app.function(image=image, gpu='A100')",
    )
    project({"modal_app.py": app})
    assert found(".") == [("modal_app.py", 6, "FAL015", "error")]


def test_a_modal_app_image_serves_functions_that_name_none(project: Any) -> None:
    project(
        {
            "serve.py": "import modal\n"
            f"image = {CUDA_DEVEL}.pip_install('torch==2.4.0').pip_install("
            "'flash-attn==2.6.3', extra_options='--no-build-isolation')\n"
            "app = modal.App('serve', image=image)\n"
            "@app.cls(gpu='V100')\nclass Model:\n    pass\n"
        }
    )
    assert codes(".") == [("FAL013", "error")]


def test_a_derived_image_is_judged_on_its_own_gpu(project: Any) -> None:
    # the base builds nothing of flash-attn; the image built on it runs on an A10G (8.6): the
    # 2.6.3 cu123/torch 2.4 wheel carries sm_80 and sm_90, and sm_80 runs on 8.6
    project(
        {
            "app.py": "import modal\nfrom modal import Image\n"
            "base = Image.from_registry('nvidia/cuda:12.4.1-devel-ubuntu22.04', add_python='3.11')\n"
            "base = base.pip_install('torch==2.4.0')\n"
            "train = base.pip_install('flash-attn==2.6.3', extra_options='--no-build-isolation')\n"
            "app = modal.App('t')\n"
            "@app.function(image=train, gpu='A10G')\ndef a(): ...\n"
            "@app.function(image=train, gpu='T4')\ndef b(): ...\n"
        }
    )
    # each function certainly runs on its own GPU: the T4 one fails whatever the other does
    assert codes(".") == [("FAL013", "error")]


def test_modal_env_sets_the_build(project: Any) -> None:
    # FLASH_ATTN_CUDA_ARCHS=80 at 2.8.3: only "-gencode arch=compute_80,code=sm_80", which an H100 (9.0)
    # cannot run; nvcc 12.4 from the devel image, torch 2.6.0's CUDA 12.4 from PyPI
    project(
        {
            "app.py": "import modal\n"
            f"image = ({CUDA_DEVEL}\n"
            "    .pip_install('torch==2.6.0', 'ninja', 'packaging')\n"
            "    .env({'FLASH_ATTENTION_FORCE_BUILD': 'TRUE', 'FLASH_ATTN_CUDA_ARCHS': '80', 'MAX_JOBS': '8'})\n"
            "    .pip_install('flash-attn==2.8.3', extra_options='--no-build-isolation'))\n"
            "app = modal.App('t')\n"
            "@app.function(image=image, gpu='H100')\ndef a(): ...\n"
        }
    )
    r = run("--format", "json", "--isolated", *MACHINE, ".")
    (f,) = r.json["findings"]
    assert (f["code"], f["severity"]) == ("FAL013", "error")
    assert "compiles no kernel for compute capability 9.0" in f["message"]


def test_modal_requirements_file_is_part_of_the_image(project: Any) -> None:
    project(
        {
            "app.py": "import modal\n"
            f"image = {CUDA_DEVEL}.pip_install('torch==2.4.0')"
            ".pip_install_from_requirements('requirements.txt')\n"
            "app = modal.App('t')\n"
            "@app.function(image=image, gpu='T4')\ndef a(): ...\n",
            "requirements.txt": "flash-attn==2.6.3\n",
        }
    )
    assert ("FAL013", "error") in codes(".")


def test_python_that_imports_no_launcher_is_not_read(project: Any) -> None:
    project(
        {
            "train.py": "# pip install flash-attn==2.6.3 on a T4\nimport torch\nINSTANCE = 'ml.p3.2xlarge'\n",
            "requirements.txt": "flash-attn==2.6.3\n",
        }
    )
    assert found(".") == []
    r = run("--format", "json", "--isolated", ".")
    assert {f["path"] for f in r.json["findings"]} <= {"requirements.txt"}


def test_an_unreadable_modal_file_is_a_diagnostic(project: Any) -> None:
    project({"app.py": "import modal\nimage = modal.Image.debian_slim(\n"})
    r = run("--format", "json", "--isolated", ".")
    assert [f["code"] for f in r.json["findings"]] == ["FAL900"]
    assert r.json["findings"][0]["path"] == "app.py"


# --- SageMaker and Ray -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("launcher", "expected"),
    [
        # ml.p3 is V100 (7.0), ml.g5 is A10G (8.6); a job's requirements come from its source_dir
        (
            "from sagemaker.huggingface import HuggingFace\n"
            "HuggingFace(entry_point='t.py', source_dir='.', instance_type='ml.p3.2xlarge')\n",
            [("FAL013", "warning")],
        ),
        (
            "import sagemaker\nINSTANCE = 'ml.g5.12xlarge'\n"
            "sagemaker.estimator.Estimator(image_uri='x', instance_type=INSTANCE)\n",
            [],
        ),
        # ray.util.accelerators: NVIDIA_TESLA_T4 = "T4"
        (
            "import ray\nfrom ray.util.accelerators import NVIDIA_TESLA_T4\n"
            "@ray.remote(num_gpus=1, accelerator_type=NVIDIA_TESLA_T4)\ndef f(): ...\n",
            [("FAL013", "warning")],
        ),
        (
            "import ray\n@ray.remote(resources={'accelerator_type:V100': 0.01})\ndef f(): ...\n",
            [("FAL013", "warning")],
        ),
        ("import ray\n@ray.remote(num_gpus=1)\ndef f(): ...\n", []),  # how many, not which
    ],
)
def test_launchers_name_the_gpu_of_the_repository(
    project: Any, launcher: str, expected: list[tuple[str, str]]
) -> None:
    # the launcher installs nothing: its GPU is one the repository's installs may run on
    project({"launch.py": launcher, "requirements.txt": "flash-attn==2.6.3\n"})
    assert codes(".") == expected


# --- GitLab CI ---------------------------------------------------------------------------------------


def gitlab(job: str, default: str = "") -> str:
    return f"{default}train:\n{job}  script:\n    - pip install torch==2.6.0\n    - pip install flash-attn==2.8.3 --no-build-isolation\n"


@pytest.mark.parametrize(
    ("job", "default", "expected"),
    [
        # GitLab's GPU runners: saas-linux-medium-amd64-gpu-standard is a Tesla T4 (gitlab-org/gitlab#358026)
        (
            "  tags: [saas-linux-medium-amd64-gpu-standard]\n  image: nvidia/cuda:12.4.1-devel-ubuntu22.04\n",
            "",
            [("FAL013", "error")],
        ),
        ("  tags: [gpu, a100]\n  image: nvidia/cuda:12.4.1-devel-ubuntu22.04\n", "", []),
        # a runtime image has no nvcc, and setup.py needs one even to fetch the wheel
        ("  image: nvidia/cuda:12.4.1-runtime-ubuntu22.04\n", "", [("FAL015", "error")]),
        # default: gives the image of a job that names none; 2.8.3's wheels need ubuntu-22.04's glibc
        ("", "default:\n  image: nvidia/cuda:12.4.1-devel-ubuntu20.04\n", [("FAL014", "error")]),
        ("", "image: nvidia/cuda:12.4.1-devel-ubuntu20.04\n", [("FAL014", "error")]),
        ("  image:\n    name: nvidia/cuda:12.4.1-devel-ubuntu20.04\n", "", [("FAL014", "error")]),
        # a Windows runner: no wheels, and no CUDA toolkit in the job
        ("  tags: [saas-windows-medium-amd64]\n", "", [("FAL014", "error")]),
        ("  tags: [shared-windows, windows]\n", "", [("FAL014", "error")]),
    ],
)
def test_gitlab_jobs(project: Any, job: str, default: str, expected: list[tuple[str, str]]) -> None:
    project({".gitlab-ci.yml": gitlab(job, default)})
    assert codes(".") == expected


def test_gitlab_variables_set_the_build(project: Any) -> None:
    job = "  tags: [h100]\n  image: nvidia/cuda:12.8.0-devel-ubuntu22.04\n  variables:\n"
    job += "    FLASH_ATTN_CUDA_ARCHS: '80'\n    FLASH_ATTENTION_FORCE_BUILD: 'TRUE'\n"
    project({".gitlab-ci.yml": gitlab(job)})
    # sm_80 only: no kernel for 9.0; and torch 2.6.0 from PyPI is CUDA 12.4, nvcc 12.8: torch warns
    assert codes(".") == [("FAL013", "error"), ("FAL015", "warning")]


def test_each_gitlab_job_is_its_own_machine(project: Any) -> None:
    text = gitlab("  tags: [v100]\n") + gitlab("  tags: [a100]\n").replace("train:", "other:")
    project({".gitlab-ci.yml": text})
    r = run("--format", "json", "--isolated", *MACHINE, ".")
    assert [(f["code"], f["environment"]) for f in r.json["findings"]] == [
        ("FAL013", ".gitlab-ci.yml [job:train]")
    ]


# --- FAL014's advice fits the file --------------------------------------------------------------------


def fal014(*paths: str) -> dict[str, Any]:
    (f,) = [
        f
        for f in run("--format", "json", "--isolated", *MACHINE, *paths).json["findings"]
        if f["code"] == "FAL014"
    ]
    return f


WINDOWS_JOB = "jobs:\n  t:\n    runs-on: {runs_on}\n{matrix}    steps:\n      - run: {run}\n"


def test_a_workflow_command_is_kept_to_linux_by_a_condition(project: Any) -> None:
    # "; sys_platform == 'linux'" appended to a run: line ends the shell command there
    matrix = "    strategy:\n      matrix:\n        os: [ubuntu-latest, windows-latest]\n"
    run_ = "pip install flash-attn==2.6.3"
    project(
        {".github/workflows/ci.yml": WINDOWS_JOB.format(runs_on="${{ matrix.os }}", matrix=matrix, run=run_)}
    )
    f = fal014(".")
    assert "add ; sys_platform" not in f["message"] and "if: runner.os == 'Linux'" in f["message"]
    assert "strategy.matrix.exclude" in f["help"]
    # pip reads a quoted requirement's marker and skips it elsewhere ("Ignoring flash-attn: markers ...")
    assert "\"flash-attn==2.6.3; sys_platform == 'linux'\"" in f["help"]


def test_a_fixed_windows_runner_is_told_to_use_linux(project: Any) -> None:
    run_ = "pip install flash-attn==2.6.3"
    project({".github/workflows/ci.yml": WINDOWS_JOB.format(runs_on="windows-2022", matrix="", run=run_)})
    f = fal014(".")
    assert "use a Linux runner" in f["help"] and "matrix" not in f["help"]


def test_a_requirement_line_gets_a_marker(project: Any) -> None:
    # the install command is the workflow's, the line is a requirements file's: that line takes the marker
    project(
        {
            ".github/workflows/ci.yml": WINDOWS_JOB.format(
                runs_on="windows-latest", matrix="", run="pip install -r requirements.txt"
            ),
            "requirements.txt": "flash-attn==2.6.3\n",
        }
    )
    f = fal014(".")
    assert f["path"] == "requirements.txt"
    assert f["message"].endswith("add ; sys_platform == 'linux' to the requirement")
    assert f["help"] == "require it on Linux only: flash-attn==2.6.3; sys_platform == 'linux'"


def test_an_existing_marker_is_kept(project: Any) -> None:
    project(
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "1"\n'
            "dependencies = [\"flash-attn==2.6.3; python_version >= '3.10'\"]\n"
            "[tool.uv]\nrequired-environments = [\"sys_platform == 'win32'\"]\n"
        }
    )
    f = fal014(".")
    assert f["help"].endswith('flash-attn==2.6.3; (python_version >= "3.10") and sys_platform == "linux"'), f[
        "help"
    ]


@pytest.mark.parametrize(
    ("files", "phrase"),
    [
        (
            {
                "pixi.toml": '[workspace]\nplatforms = ["linux-64", "osx-arm64"]\n[pypi-dependencies]\nflash-attn = "==2.6.3"\n'
            },
            "[target.linux-64.pypi-dependencies]",
        ),
        (
            {
                ".gitlab-ci.yml": "t:\n  tags: [saas-macos-medium-m1]\n  script:\n    - pip install flash-attn==2.6.3\n"
            },
            "Linux runner's tags",
        ),
    ],
)
def test_advice_in_the_files_own_terms(project: Any, files: dict[str, str], phrase: str) -> None:
    project(files)
    assert phrase in fal014(".")["help"]


def test_a_step_reads_files_from_its_working_directory(project: Any) -> None:
    # a run: step starts in the checkout ($GITHUB_WORKSPACE), or in its working-directory there
    workflow = (
        "defaults:\n  run:\n    working-directory: backend\n"
        "jobs:\n  t:\n    runs-on: macos-14\n    steps:\n      - run: pip install -r requirements.txt\n"
    )
    project(
        {
            ".github/workflows/ci.yml": workflow,
            "backend/requirements.txt": "flash-attn==2.6.3\n",
            "requirements.txt": "torch==2.4.0\n",
        }
    )
    f = fal014(".")
    assert (f["path"], f["severity"]) == ("backend/requirements.txt", "error")  # macOS: no CUDA at all


# --- an arch list that selects nothing (FAL015) -------------------------------------------------------
# At 2.8.3 setup.py passes "-gencode arch=compute_80,code=sm_80" only when "80" in cuda_archs() (a list
# split on ";"), sm_90 when "90" is and nvcc >= 11.8, sm_100/sm_120 when listed and nvcc >= 12.8. With
# none passed, torch's _get_cuda_arch_flags picks: TORCH_CUDA_ARCH_LIST, else the visible GPUs, and with
# none of those `arch_list[-1] += '+PTX'` raises IndexError.

BUILD = "RUN pip install torch==2.6.0 && pip install flash-attn==2.8.3 --no-build-isolation\n"


@pytest.mark.parametrize(
    ("base", "env", "expected"),
    [
        ("nvidia/cuda:12.4.1-devel-ubuntu22.04", "FLASH_ATTN_CUDA_ARCHS=86", [("FAL015", "error")]),
        ("nvidia/cuda:12.4.1-devel-ubuntu22.04", 'FLASH_ATTN_CUDA_ARCHS="8.6"', [("FAL015", "error")]),
        ("nvidia/cuda:12.4.1-devel-ubuntu22.04", "FLASH_ATTN_CUDA_ARCHS=sm_80", [("FAL015", "error")]),
        # sm_100 needs nvcc 12.8: with 12.4 "100" selects nothing; with 12.8 it builds sm_100
        ("nvidia/cuda:12.4.1-devel-ubuntu22.04", "FLASH_ATTN_CUDA_ARCHS=100", [("FAL015", "error")]),
        ("nvidia/cuda:12.8.0-devel-ubuntu22.04", "FLASH_ATTN_CUDA_ARCHS=100", [("FAL015", "warning")]),
        ("nvidia/cuda:12.4.1-devel-ubuntu22.04", 'FLASH_ATTN_CUDA_ARCHS="80;90"', []),
        # torch's list decides then, and it names an arch: nothing fails in the build
        (
            "nvidia/cuda:12.4.1-devel-ubuntu22.04",
            'FLASH_ATTN_CUDA_ARCHS=86 TORCH_CUDA_ARCH_LIST="8.6"',
            [],
        ),
    ],
)
def test_an_arch_list_that_selects_nothing(
    project: Any, base: str, env: str, expected: list[tuple[str, str]]
) -> None:
    # (nvcc 12.8 against torch 2.6.0's CUDA 12.4 is FAL015's minor-mismatch warning, a finding of its own)
    project({"Dockerfile": f"FROM {base}\nENV {env} FLASH_ATTENTION_FORCE_BUILD=TRUE MAX_JOBS=4\n{BUILD}"})
    got = codes("Dockerfile")
    assert got == expected
    if got and got[0] == ("FAL015", "error"):
        f = run("--format", "json", "--isolated", *MACHINE, "Dockerfile").json["findings"][0]
        assert "IndexError" in f["message"] and any("arch_list[-1]" in n for n in f["notes"])


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("", [("FAL015", "warning")]),  # whether the machine that runs it has a GPU: unknown
        ("#SBATCH --gres=gpu:a100:1\n", []),  # torch compiles for the A100 it sees there
    ],
)
def test_a_script_builds_for_the_gpus_it_sees(
    project: Any, script: str, expected: list[tuple[str, str]]
) -> None:
    project(
        {
            "build.sh": f"#!/bin/bash\n{script}export FLASH_ATTN_CUDA_ARCHS=86\n"
            "FLASH_ATTENTION_FORCE_BUILD=TRUE pip install flash-attn==2.8.3 --no-build-isolation\n"
        }
    )
    assert codes(".") == expected


@pytest.mark.parametrize(
    ("runs_on", "severity"), [("ubuntu-22.04", "error"), ("[self-hosted, linux]", "warning")]
)
def test_a_hosted_runner_has_no_gpu(project: Any, runs_on: str, severity: str) -> None:
    project(
        {
            ".github/workflows/b.yml": f"jobs:\n  b:\n    runs-on: {runs_on}\n"
            "    container: nvidia/cuda:12.4.1-devel-ubuntu22.04\n"
            "    env:\n      FLASH_ATTN_CUDA_ARCHS: '86'\n      FLASH_ATTENTION_FORCE_BUILD: 'TRUE'\n"
            "    steps:\n      - run: pip install torch==2.6.0 && pip install flash-attn==2.8.3 --no-build-isolation\n"
        }
    )
    assert codes(".") == [("FAL015", severity)]


def test_a_modal_image_builds_without_a_gpu(project: Any) -> None:
    project(
        {
            "app.py": "import modal\n"
            f"image = {CUDA_DEVEL}.pip_install('torch==2.6.0').env({{'FLASH_ATTN_CUDA_ARCHS': '8.6', "
            "'FLASH_ATTENTION_FORCE_BUILD': 'TRUE'}).pip_install('flash-attn==2.8.3', extra_options='--no-build-isolation')\n"
        }
    )
    assert codes(".") == [("FAL015", "error")]


def test_a_modal_step_that_asks_for_a_gpu_builds_on_one(project: Any) -> None:
    # pip_install(..., gpu="A100"): Modal attaches the GPU to the builder container, so torch sees it
    project(
        {
            "app.py": "import modal\n"
            f"image = {CUDA_DEVEL}.pip_install('torch==2.6.0').env({{'FLASH_ATTN_CUDA_ARCHS': '8.6', "
            "'FLASH_ATTENTION_FORCE_BUILD': 'TRUE'}).pip_install('flash-attn==2.8.3', "
            "extra_options='--no-build-isolation', gpu='A100')\n"
        }
    )
    assert codes(".") == [("FAL015", "warning")]


def test_releases_without_the_variable_are_not_judged(project: Any) -> None:
    # 2.6.3's setup.py always passes sm_80 (and sm_90 from nvcc 11.8): FLASH_ATTN_CUDA_ARCHS is not read
    project(
        {
            "Dockerfile": "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nENV FLASH_ATTN_CUDA_ARCHS=86 "
            "FLASH_ATTENTION_FORCE_BUILD=TRUE MAX_JOBS=4\n"
            "RUN pip install torch==2.4.0 && pip install flash-attn==2.6.3 --no-build-isolation\n"
        }
    )
    # what remains is torch 2.4.0's CUDA 12.1 (PyPI) against nvcc 12.4: the minor mismatch torch warns of
    (f,) = run("--format", "json", "--isolated", *MACHINE, "Dockerfile").json["findings"]
    assert (f["code"], f["severity"]) == ("FAL015", "warning") and "minor mismatch" in f["message"]


def test_hostile_modal_files_are_read_without_harm(project: Any) -> None:
    # an unclosed quote in extra_options, a name bound to itself, a long chain of reassignments
    project(
        {
            "a.py": "import modal\ngpu = gpu\nimage = modal.Image.debian_slim()\n"
            + "image = image.pip_install('einops')\n" * 300
            + "image = image.pip_install('flash-attn==2.6.3', extra_options=\"--no-build-isolation 'x\")\n"
            "@app.function(image=image, gpu=gpu)\ndef f(): ...\n"
        }
    )
    r = run("--format", "json", "--isolated", *MACHINE, ".")
    assert r.code in (0, 1) and "Traceback" not in r.err
    # past 256 steps the chain is not followed: no image, so nothing is judged for it
    assert r.json["findings"] == []
