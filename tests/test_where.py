"""Issue 35, part A: every command judged in the environment it really runs in, and what is there.

Each expectation is worked out from how the tools behave, not from fa-lint's output:

- pip's default ``--upgrade-strategy`` is ``only-if-needed``: a package's dependency already installed
  and satisfying its requirement is left alone (pip's ``--upgrade-strategy`` help text); liger-kernel's
  metadata asks ``torch>=2.1.2``, vllm 0.6.5's ``torch==2.5.1`` (``fa_lint/kb/torch.json``);
- flash-attn's setup.py imports torch at its top, so a ``--no-build-isolation`` build needs torch in
  place; on a machine the files do not describe, whether it is there is unknown.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import assert_cases_listed, realworld_findings, run


def found(code: str, *args: str) -> list[tuple[int, str]]:
    return [
        (f["line"], f["severity"])
        for f in run("--format", "json", *args).json["findings"]
        if f["code"] == code
    ]


# --- class 2: pip keeps a torch the command accepts ---------------------------------------------------


@pytest.mark.parametrize(
    "image",
    [
        "lmsysorg/sglang:v0.5.6.post2",  # an image fa-lint does not know: its torch is unknown
        "nvcr.io/nvidia/pytorch:25.11-py3",  # an NGC release whose torch the data may not hold
    ],
)
def test_a_package_that_accepts_the_torch_in_place_does_not_move_it(project: Any, image: str) -> None:
    project(
        {
            "Dockerfile": f"FROM {image}\nRUN pip install --no-build-isolation flash_attn==2.8.1\n"
            "RUN pip3 install nvtx matplotlib liger_kernel\n"
        }
    )
    assert found("FAL005") == []


def test_a_known_torch_that_the_package_accepts_stays(project: Any) -> None:
    project(
        {
            "Dockerfile": "FROM python:3.10\nRUN pip install torch==2.5.1\n"
            "RUN pip install --no-build-isolation flash-attn==2.6.3\nRUN pip install liger-kernel\n"
        }
    )
    assert found("FAL005") == []


def test_a_package_that_allows_one_torch_moves_an_unknown_one(project: Any) -> None:
    # vllm 0.6.5 requires torch==2.5.1: whatever torch was in place, 2.5.1 is there afterwards, and a
    # flash-attn built before for the torch in place may be built for another one
    project(
        {
            "Dockerfile": "FROM lmsysorg/sglang:v0.5.6.post2\nRUN pip install --no-build-isolation flash-attn==2.6.3\n"
            "RUN pip install vllm==0.6.5\n"
        }
    )
    assert found("FAL005") == [(2, "warning")]


def test_upgrading_the_package_is_still_only_if_needed_but_force_reinstall_is_not(project: Any) -> None:
    # --force-reinstall reinstalls every dependency at the newest release that fits: torch moves
    project(
        {
            "Dockerfile": "FROM python:3.10\nRUN pip install torch==2.4.0\n"
            "RUN pip install --no-build-isolation flash-attn==2.6.3\n"
            "RUN pip install --force-reinstall vllm==0.6.5\n"
        }
    )
    # built for torch 2.4, then torch 2.5.1: a build for an older torch, which may still load (FAL005)
    assert found("FAL005") == [(3, "warning")]


# --- class 3: unknown is not absent --------------------------------------------------------------------


@pytest.mark.parametrize(
    "files",
    [
        {
            "Dockerfile": "FROM lmsysorg/sglang:v0.5.6.post2\nRUN pip install --no-build-isolation flash-attn==2.8.1\n"
        },
        {"run.sh": "pip install --no-build-isolation flash-attn==2.8.1\ndeepspeed train.py\n"},
        {
            "train.sh": "pip install flash-attn==2.8.1 --no-build-isolation\ntorchrun --nproc_per_node 8 train.py\n"
        },
        {
            ".github/workflows/ci.yml": "on: push\njobs:\n  t:\n    runs-on: [self-hosted, gpu]\n    steps:\n"
            "      - run: pip install --no-build-isolation flash-attn==2.8.1\n"
        },
    ],
)
def test_no_build_isolation_on_a_machine_fa_lint_cannot_see_is_not_torchless(
    project: Any, files: dict[str, str]
) -> None:
    project(files)
    assert found("FAL012") == []


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # a base image known to have no torch: the build fails for certain
        (
            {"Dockerfile": "FROM python:3.11\nRUN pip install --no-build-isolation flash-attn==2.8.1\n"},
            [(2, "error")],
        ),
        # the script installs torch only after the build: it expects none before
        (
            {"setup.sh": "pip install --no-build-isolation flash-attn==2.8.1\npip install torch==2.5.1\n"},
            [(1, "warning")],
        ),
        # torch in the same command: pip reads flash-attn's setup.py before it installs any of them
        ({"setup.sh": "pip install --no-build-isolation torch==2.5.1 flash-attn==2.8.1\n"}, [(1, "warning")]),
        # torch uninstalled before it
        (
            {"setup.sh": "pip uninstall -y torch\npip install --no-build-isolation flash-attn==2.8.1\n"},
            [(2, "warning")],
        ),
    ],
)
def test_the_files_themselves_say_torch_is_missing(
    project: Any, files: dict[str, str], expected: list[tuple[int, str]]
) -> None:
    project(files)
    assert found("FAL012") == expected


# --- class 1: a wheel a builder stage makes is built with the builder's toolchain ------------------------

BUILDER = (
    "FROM nvidia/cuda:12.4.1-{builder}-ubuntu22.04 AS builder\n"
    "RUN apt-get update && apt-get install -y python3-pip git\n"
    "RUN pip install {torch}packaging ninja wheel\n"
    "RUN pip wheel --no-build-isolation --no-deps flash-attn==2.7.4.post1 -w /wheels\n"
    "\n"
    "FROM {runtime}\n"
    "{copy}\n"
)
COPY = "COPY --from=builder /wheels /wheels\nRUN pip install /wheels/*.whl"
MOUNT = "RUN --mount=type=bind,from=builder,src=/wheels,target=/wheels pip install /wheels/*.whl"


@pytest.mark.parametrize("copy", [COPY, MOUNT])
def test_a_wheel_built_in_a_devel_stage_installs_in_a_runtime_stage(project: Any, copy: str) -> None:
    # the compile (or setup.py's download of the release wheel for torch 2.5: 2.7.4.post1 has one) ran in
    # the builder, with its nvcc and torch; the runtime stage installs a wheel file and needs neither
    project(
        {
            "Dockerfile": BUILDER.format(
                builder="devel",
                torch="torch==2.5.1 ",
                runtime="pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
                copy=copy,
            )
        }
    )
    assert [(c, line) for c in ("FAL011", "FAL012", "FAL015") for line, _ in found(c)] == []


def test_the_builders_toolchain_is_the_one_judged(project: Any) -> None:
    # a runtime builder has no nvcc: setup.py fails there, whatever the installing stage has
    project(
        {
            "Dockerfile": BUILDER.format(
                builder="runtime",
                torch="torch==2.5.1 ",
                runtime="nvidia/cuda:12.4.1-devel-ubuntu22.04",
                copy=COPY,
            )
        }
    )
    assert found("FAL015") == [(4, "error")]
    # a builder without torch cannot build with --no-build-isolation, though the installing image has torch
    project(
        {
            "Dockerfile": BUILDER.format(
                builder="devel",
                torch="",
                runtime="pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
                copy=COPY,
            )
        }
    )
    assert found("FAL012") == [(4, "error")]


def test_a_clone_built_with_setup_py_bdist_wheel_in_a_builder(project: Any) -> None:
    project(
        {
            "Dockerfile": "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04 AS builder\n"
            "RUN pip install torch==2.5.1 packaging ninja wheel setuptools\n"
            "RUN git clone --branch v2.7.4.post1 https://github.com/Dao-AILab/flash-attention.git /fa\n"
            "WORKDIR /fa\n"
            "RUN MAX_JOBS=4 python3 setup.py bdist_wheel\n"
            "\n"
            "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n"
            "RUN pip install torch==2.5.1\n"
            "COPY --from=builder /fa/dist /tmp/dist\n"
            "RUN pip install /tmp/dist/*.whl\n"
        }
    )
    assert found("FAL015") == [] and found("FAL012") == []


# --- class 8: folders that are not this repository -------------------------------------------------------

OWN = {"requirements.txt": "flash-attn\n"}  # this repository's own file: unpinned, FAL002 on itself


@pytest.mark.parametrize(
    "script",
    [
        "git clone https://github.com/someone/Y.git /root/Y && cd /root/Y && pip install -r requirements.txt\n",
        "git clone https://github.com/someone/Y.git\ncd Y\npip install -r requirements.txt\n",
        "git clone https://github.com/someone/Y.git /root/Y\npip install -r /root/Y/requirements.txt\n",
        "wget https://example.com/y.tar.gz && tar -xzf y.tar.gz -C /opt/y && cd /opt/y && pip install -r requirements.txt\n",
        "curl -L https://example.com/r.txt -o /tmp/requirements.txt && pip install -r /tmp/requirements.txt\n",
        "wget -P /opt/y https://example.com/requirements.txt && pip install -r /opt/y/requirements.txt\n",
    ],
)
def test_a_file_of_a_clone_or_a_download_is_not_this_repositorys(project: Any, script: str) -> None:
    project({**OWN, "setup.sh": script})
    # the script's install reads another project's file: no finding is placed on the script's line
    assert [f for f in run("--format", "json").json["findings"] if f["path"] == "setup.sh"] == []


@pytest.mark.parametrize(
    "script",
    [
        "mkdir -p build\ntar -czf out.tgz src\npip install -r requirements.txt\n",
        # wget -P puts one file in the folder: the folder's other files are what they were
        "wget -P . https://example.com/weights.bin\npip install -r requirements.txt\n",
    ],
)
def test_this_repositorys_file_is_still_read(project: Any, script: str) -> None:
    project({**OWN, "setup.sh": script})
    assert [f["code"] for f in run("--format", "json").json["findings"] if f["path"] == "setup.sh"] == [
        "FAL012"
    ]


# --- class 9: comments and Make words ----------------------------------------------------------------


def test_a_comment_in_a_python_install_list_is_no_mention(project: Any) -> None:
    project(
        {
            "app.py": "import modal\n\nimage = (\n    modal.Image.debian_slim(python_version='3.11')\n"
            '    .apt_install(["git",  # for flash-attn\n                  "build-essential"])\n'
            '    .pip_install("torch==2.5.1")\n)\napp = modal.App("x", image=image)\n'
        }
    )
    assert run("--format", "json").json["findings"] == []


def test_a_list_that_names_flash_attn_in_code_is_still_reported_as_not_judged(project: Any) -> None:
    project(
        {
            "app.py": "import modal\n\nimage = modal.Image.debian_slim().pip_install(*get_pkgs('flash-attn'))\n"
            'app = modal.App("x", image=image)\n'
        }
    )
    assert [f["code"] for f in run("--format", "json").json["findings"]] == ["FAL009"]


@pytest.mark.parametrize(
    "define",
    ["UV ?= $(shell which uv)", "UV := $(shell command -v uv 2>/dev/null)", "UV = ${shell which uv}"],
)
def test_make_variable_that_finds_a_tool_runs_that_tool(project: Any, define: str) -> None:
    project(
        {"Makefile": f'{define}\n\ninstall:\n\t$(UV) pip install "flash-attn==2.3.6" --no-build-isolation\n'}
    )
    assert found("FAL001", "Makefile") == [(4, "error")]


# --- class 4: conda env create, then pip --------------------------------------------------------------

ENV_YML = (
    "name: myenv\nchannels:\n  - pytorch\n  - nvidia\ndependencies:\n  - python=3.10\n  - pytorch=2.5.1\n"
    "  - pytorch-cuda=12.4\n  - pip\n"
)
W24 = (
    "https://github.com/Dao-AILab/flash-attention/releases/download/v2.7.4.post1/"
    "flash_attn-2.7.4.post1+cu12torch2.4cxx11abiFALSE-cp310-cp310-linux_x86_64.whl"
)


@pytest.mark.parametrize(
    "create",
    [
        "conda env create -f environment.yml",
        "mamba env create --file=environment.yml -n myenv",
        "micromamba create -y -f environment.yml",
        "conda env update -n myenv --file environment.yml",
    ],
)
def test_an_environment_file_a_script_creates_installs_its_torch_first(project: Any, create: str) -> None:
    # conda installs pytorch 2.5.1 before the pip commands after it run: a torch 2.4 wheel does not fit
    # (a build for an older torch: a warning, since such a pair can load, FAL005's page)
    project(
        {"environment.yml": ENV_YML, "install.sh": f"{create}\nconda activate myenv\npip install {W24}\n"}
    )
    assert found("FAL005") == [(3, "warning")]


def test_torch_from_the_environment_file_is_there_for_a_build(project: Any) -> None:
    # miniconda3 has no torch; the environment file the stage creates from brings pytorch 2.5.1
    dockerfile = (
        "FROM continuumio/miniconda3\nCOPY environment.yml /tmp/environment.yml\n"
        "RUN conda env create -f /tmp/environment.yml\n"
        'SHELL ["conda", "run", "-n", "myenv", "/bin/bash", "-c"]\n'
        "RUN pip install --no-build-isolation flash-attn==2.7.4.post1\n"
    )
    project({"environment.yml": ENV_YML, "Dockerfile": dockerfile})
    assert found("FAL012") == []
    project({"environment.yml": ENV_YML.replace("  - pytorch=2.5.1\n", ""), "Dockerfile": dockerfile})
    assert found("FAL012") == [(5, "error")]


def test_conda_create_with_specs_installs_them(project: Any) -> None:
    project({"install.sh": f"conda create -y -n x python=3.10 pytorch=2.5.1 -c pytorch\npip install {W24}\n"})
    assert found("FAL005") == [(2, "warning")]  # a torch 2.4 build on torch 2.5.1: older, may load


# --- class 13: flash-attn installed through the project's own dependencies ---------------------------

PYPROJECT = (
    '[project]\nname = "x"\nversion = "0"\ndependencies = ["torch==2.5.1", "flash-attn==2.7.4.post1"]\n'
    '[project.optional-dependencies]\ndev = ["pytest"]\n'
)


def test_pip_install_dot_builds_the_projects_flash_attn_in_isolation(project: Any) -> None:
    # pip installs the dependencies of '.', building flash-attn's sdist in an isolated environment
    # (no --no-build-isolation), where its setup.py cannot import torch
    project(
        {
            "pyproject.toml": PYPROJECT,
            "Dockerfile": "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nCOPY . /app\nWORKDIR /app\n"
            "RUN pip install .[dev]\n",
        }
    )
    assert found("FAL012") == [(4, "error")]


def test_the_documented_steps_install_torch_and_flash_attn_first(project: Any) -> None:
    # torch, then flash-attn without isolation, then the project: pip keeps the flash-attn in place
    project(
        {
            "pyproject.toml": PYPROJECT,
            "Dockerfile": "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nCOPY . /app\nWORKDIR /app\n"
            "RUN pip install torch==2.5.1\nRUN pip install --no-build-isolation flash-attn==2.7.4.post1\n"
            "RUN pip install -e .\n",
        }
    )
    assert found("FAL012") == []


def test_a_projects_build_system_and_other_extras_are_not_installed(project: Any) -> None:
    project(
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = []\n'
            '[project.optional-dependencies]\ngpu = ["flash-attn==2.7.4.post1"]\n',
            "Dockerfile": "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nCOPY . /app\nWORKDIR /app\n"
            "RUN pip install .\n",
        }
    )
    assert found("FAL012") == []


def test_a_clones_project_is_not_this_one(project: Any) -> None:
    project(
        {
            "pyproject.toml": PYPROJECT,
            "setup.sh": "git clone https://github.com/org/other.git && cd other && pip install .\n",
        }
    )
    assert [f for f in run("--format", "json").json["findings"] if f["path"] == "setup.sh"] == []


# --- class 14: build arguments from elsewhere -------------------------------------------------------------

DOCKERFILE = (
    "FROM pytorch/pytorch:2.5.1-cuda12.4-cudnn9-devel\nARG FLASH_ATTN_VERSION\n"
    "RUN pip install flash-attn==${FLASH_ATTN_VERSION} --no-build-isolation\n"
)


@pytest.mark.parametrize(
    "files",
    [
        {"build.sh": "docker build --build-arg FLASH_ATTN_VERSION=2.3.6 -f docker/Dockerfile -t x .\n"},
        {
            "build.sh": "VER=2.3.6\ndocker buildx build --build-arg=FLASH_ATTN_VERSION=$VER --file docker/Dockerfile .\n"
        },
        {
            "scripts/build.sh": "docker build --build-arg FLASH_ATTN_VERSION=2.3.6 -f ../docker/Dockerfile ..\n"
        },
        {"Makefile": "image:\n\tdocker build --build-arg FLASH_ATTN_VERSION=2.3.6 docker\n"},
        {
            ".github/workflows/image.yml": "on: push\njobs:\n  b:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - run: docker build -t x --build-arg FLASH_ATTN_VERSION=2.3.6 -f docker/Dockerfile .\n"
        },
    ],
)
def test_a_build_argument_from_another_file_sets_the_arg(project: Any, files: dict[str, str]) -> None:
    # flash-attn 2.3.6 predates block_table (2.5.0): the image the command builds lacks paged KV
    project({"docker/Dockerfile": DOCKERFILE, **files})
    args = ["Makefile", "docker/Dockerfile"] if "Makefile" in files else []
    assert found("FAL001", *args) == [(3, "error")]
    assert found("FAL009", *args) == []


def test_build_push_action_build_args(project: Any) -> None:
    project(
        {
            "docker/Dockerfile": DOCKERFILE,
            ".github/workflows/image.yml": "on: push\njobs:\n  b:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - uses: docker/build-push-action@v6\n        with:\n          context: .\n"
            "          file: docker/Dockerfile\n          build-args: |\n            CUDA=12.4\n"
            "            FLASH_ATTN_VERSION=2.3.6\n",
        }
    )
    assert found("FAL001") == [(3, "error")]


@pytest.mark.parametrize(
    "args",
    [
        '      args:\n        FLASH_ATTN_VERSION: "2.3.6"\n',
        "      args:\n        - FLASH_ATTN_VERSION=2.3.6\n",
    ],
)
def test_compose_build_args(project: Any, args: str) -> None:
    compose = (
        "services:\n  train:\n    build:\n      context: .\n      dockerfile: docker/Dockerfile\n"
        + args
        + "  web:\n    build: ./web\n"
    )
    project({"docker/Dockerfile": DOCKERFILE, "docker-compose.yml": compose})
    assert found("FAL001") == [(3, "error")]
    # a value compose takes from the shell or a .env file is not known here
    project({"docker/Dockerfile": DOCKERFILE, "docker-compose.yml": compose.replace("2.3.6", "${VER}")})
    assert found("FAL009") == [(3, "info")]


def test_every_value_it_is_built_with_counts(project: Any) -> None:
    project(
        {
            "docker/Dockerfile": DOCKERFILE,
            "build.sh": "docker build --build-arg FLASH_ATTN_VERSION=2.7.4.post1 -f docker/Dockerfile .\n"
            "docker build --build-arg FLASH_ATTN_VERSION=2.3.6 -f docker/Dockerfile .\n",
        }
    )
    # one of the two builds installs 2.3.6, which has no paged KV; the other 2.7.4.post1, which has
    assert found("FAL001") == [] and found("FAL002") == [(3, "warning")]


def test_an_arg_with_a_default_or_no_build_command_stays_as_it_was(project: Any) -> None:
    project({"docker/Dockerfile": DOCKERFILE})
    assert found("FAL009") == [(3, "info")]
    project(
        {
            "docker/Dockerfile": DOCKERFILE.replace(
                "ARG FLASH_ATTN_VERSION\n", "ARG FLASH_ATTN_VERSION=2.7.4.post1\n"
            ),
            "build.sh": "docker build --build-arg OTHER=1 -f docker/Dockerfile .\n",
        }
    )
    assert found("FAL001") == [] and found("FAL009") == []


# --- real files ----------------------------------------------------------------------------------------

REALWORLD = Path(__file__).parent / "data" / "realworld" / "where"
EXPECTED: dict[str, list[tuple[str, int, str]]] = {
    "verl-stable-sglang": [],
    "cornserve-eric": [("FAL002", 3, "warning")],
    # NGC 25.11 ships a flash-attn: the unpinned install is a no-op (FAL023 info), nothing is built
    "verl-vllm012exp": [("FAL002", 2, "warning"), ("FAL023", 2, "info")],
}


def test_every_real_case_is_listed() -> None:
    assert_cases_listed(REALWORLD, EXPECTED)


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_realworld(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert realworld_findings(REALWORLD / case, monkeypatch) == sorted(EXPECTED[case])
