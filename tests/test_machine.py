"""What torch, CUDA and CPython an environment runs, read from its own files (fa_lint.machine.toolchain)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from fa_lint import kb
from fa_lint.files import project as project_files
from fa_lint.files.discover import Target, detect
from fa_lint.kb.assess import Policy
from fa_lint.machine.environments import build
from fa_lint.machine.toolchain import Toolchain, cuda_version, index_cuda
from fa_lint.model import Location
from fa_lint.rules import Context
from fa_lint.rules._base import Answers
from fa_lint.sources.dockerfile import image
from tests.conftest import SHARED, run

RELIABILITY = SHARED / "reliability"


def toolchains(files: dict[str, str], root: Path) -> dict[str, Toolchain]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    targets = [Target(name, detect(name) or "requirements", True) for name in files]
    loaded, problems, _ = project_files.load(targets)
    assert not problems
    from fa_lint.model import Requirement

    reqs = tuple(r for f in loaded.values() for r in f.records if isinstance(r, Requirement))
    base = kb.load()
    ctx = Context(base, Policy.default(base), Answers(), reqs, environments=build(loaded))
    return {env.name: ctx.toolchain(env) for env in ctx.environments}


def _value(known: Any) -> str | None:
    return None if known is None else str(known.value)


@pytest.mark.parametrize(
    ("files", "env", "torch", "cuda", "python"),
    [
        # a local label names the CUDA build
        ({"requirements.txt": "torch==2.3.1+cu118\nflash-attn\n"}, "requirements.txt", "2.3", "11.8", None),
        # a PyTorch index URL in the file that installs torch
        (
            {"requirements.txt": "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.4.1\n"},
            "requirements.txt",
            "2.4",
            "12.1",
            None,
        ),
        # an index URL given to the command that installs torch, through -r
        (
            {
                "Dockerfile": "FROM python:3.12-slim\nCOPY req.txt ./\n"
                "RUN pip install -r req.txt --index-url https://download.pytorch.org/whl/cu124\n",
                "req.txt": "torch==2.5.1\n",
            },
            "Dockerfile [stage:0]",
            "2.5",
            "12.4",
            "3.12",
        ),
        # uv's --torch-backend
        (
            {"setup.sh": "uv pip install --torch-backend cu126 torch==2.7.0\n"},
            "setup.sh",
            "2.7",
            "12.6",
            None,
        ),
        # the command's own VAR=value prefix, an export, a Dockerfile ENV and a workflow's env:
        (
            {"setup.sh": "UV_TORCH_BACKEND=cu118 uv pip install torch==2.6.0\n"},
            "setup.sh",
            "2.6",
            "11.8",
            None,
        ),
        (
            {
                "setup.sh": "export PIP_INDEX_URL=https://download.pytorch.org/whl/cu121\npip install torch==2.4.1\n"
            },
            "setup.sh",
            "2.4",
            "12.1",
            None,
        ),
        (
            {
                "Dockerfile": "FROM python:3.11\nENV PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cu118\n"
                "RUN env FOO=1 pip install torch==2.3.1\n"
            },
            "Dockerfile [stage:0]",
            "2.3",
            "11.8",
            "3.11",
        ),
        (
            {
                ".github/workflows/ci.yml": "jobs:\n  test:\n    env:\n"
                "      PIP_INDEX_URL: https://download.pytorch.org/whl/cpu\n"
                "    steps:\n      - run: pip install torch==2.5.1\n"
            },
            ".github/workflows/ci.yml [job:test]",
            "2.5",
            "cpu",
            None,
        ),
        # a variable a branch may leave unset names no one index: neither the cu118 one nor PyPI's
        # (whose torch 2.4.1 is built with CUDA 12.1)
        (
            {
                "setup.sh": 'if [ -n "$CU" ]; then export PIP_INDEX_URL=https://download.pytorch.org/whl/cu118; fi\n'
                "pip install torch==2.4.1\n"
            },
            "setup.sh",
            "2.4",
            None,
            None,
        ),
        # several CPython minors: the constraint as written
        (
            {"pyproject.toml": '[project]\nname = "x"\nversion = "0"\nrequires-python = ">=3.10"\n'},
            "pyproject.toml [project]",
            None,
            None,
            ">=3.10",
        ),
        # a pytorch/pytorch image says both
        (
            {"Dockerfile": "FROM pytorch/pytorch:2.4.0-cuda12.1-cudnn9-devel\nRUN pip install flash-attn\n"},
            "Dockerfile [stage:0]",
            "2.4",
            "12.1",
            None,
        ),
        # an nvidia/cuda image gives the toolkit; a later torch pin gives torch, and torch's CUDA is its
        # PyPI wheel's (torch-2.1.2's metadata: nvidia-cuda-runtime-cu12==12.1.105), not the toolkit's
        (
            {"Dockerfile": "FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\nRUN pip install torch==2.1.2\n"},
            "Dockerfile [stage:0]",
            "2.1",
            "12.1",
            None,
        ),
        # a range that allows one torch minor (2.3.0 and 2.3.1 on PyPI are both built with CUDA 12.1)
        ({"requirements.txt": "torch>=2.3,<2.4\n"}, "requirements.txt", "2.3", "12.1", None),
        # a later install replaces an earlier one
        (
            {"setup.sh": "pip install torch==2.3.1\npip install torch==2.4.0\n"},
            "setup.sh",
            "2.4",
            "12.1",
            None,
        ),
        # two torch pins of one install that disagree: not fa-lint's to choose
        (
            {"requirements.txt": "torch==2.3.1\n-r more.txt\n", "more.txt": "torch==2.4.0\n"},
            "requirements.txt",
            None,
            None,
            None,
        ),
        # conda: pytorch and python=
        (
            {"environment.yml": "dependencies:\n  - python=3.11\n  - pytorch=2.3.1\n"},
            "environment.yml",
            "2.3",
            None,
            "3.11",
        ),
        # the CPU build of torch
        (
            {"requirements.txt": "--index-url https://download.pytorch.org/whl/cpu\ntorch==2.4.0\n"},
            "requirements.txt",
            "2.4",
            "cpu",
            None,
        ),
        # requires-python and .python-version together
        (
            {
                "pyproject.toml": '[project]\nname = "x"\nversion = "0"\nrequires-python = ">=3.10"\n'
                'dependencies = ["torch==2.6.0"]\n',
                ".python-version": "3.12.4\n",
            },
            "pyproject.toml [project]",
            "2.6",
            None,  # a pyproject names its indexes in tables fa-lint does not read: PyPI's CUDA is not assumed
            "3.12",
        ),
        # a workflow job's setup-python
        (
            {
                ".github/workflows/ci.yml": "jobs:\n  test:\n    steps:\n      - uses: actions/setup-python@v5\n"
                "        with:\n          python-version: '3.11'\n      - run: pip install torch==2.2.2\n"
            },
            ".github/workflows/ci.yml [job:test]",
            "2.2",
            "12.1",
            "3.11",
        ),
    ],
)
def test_what_an_environment_runs(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    env: str,
    torch: str | None,
    cuda: str | None,
    python: str | None,
) -> None:
    monkeypatch.chdir(tmp_path)
    found = toolchains(files, tmp_path)[env]
    assert (_value(found.torch), _value(found.cuda), _value(found.python)) == (torch, cuda, python)


def test_python_version_file_is_not_an_images_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    found = toolchains(
        {"Dockerfile": "FROM python:3.10\nRUN pip install torch==2.4.0\n", ".python-version": "3.12\n"},
        tmp_path,
    )
    assert found["Dockerfile [stage:0]"].pythons == ("3.10",)


@pytest.mark.parametrize(
    ("tag", "cuda"),
    [("cu118", "11.8"), ("cu121", "12.1"), ("cu130", "13.0"), ("cu92", "9.2"), ("cpu", "cpu")],
)
def test_cuda_tags(tag: str, cuda: str) -> None:
    assert cuda_version(tag) == cuda
    assert index_cuda(f"https://download.pytorch.org/whl/{tag}") == cuda
    assert index_cuda(f"https://download.pytorch.org/whl/nightly/{tag}/") == cuda


def test_index_without_a_build_says_nothing() -> None:
    assert index_cuda("https://download.pytorch.org/whl/torch_stable.html") is None
    assert index_cuda("https://pypi.org/simple") is None


# --- reproducers 02 and 04 (../shared/reliability): a FROM tag in another script's digits ------------

L = Location("Dockerfile", 1, 6, 1, 20)


@pytest.mark.parametrize(
    "reference",
    [
        "python:\u06f3.1",  # 02: Extended Arabic-Indic digit three
        "pytorch/pytorch:\uff12.\uff13",  # 04: fullwidth digits
        "nvidia/cuda:\u0661\u0662.\u0661-devel",
    ],
)
def test_image_tags_in_other_digits_are_not_versions(reference: str) -> None:
    found = image(reference, L, "stage:0")
    assert (found.python, found.torch, found.cuda) == (None, None, None)


@pytest.mark.parametrize("folder", ["02-dockerfile-python-spec", "04-dockerfile-from-tag"])
def test_reliability_reproducers_end_without_an_internal_error(
    folder: str, project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = RELIABILITY / folder / "Dockerfile"
    text = source.read_text(encoding="utf-8") if source.exists() else None
    if text is None:  # CI keeps a copy of shared/; this is the reproducer's text as filed
        text = {
            "02-dockerfile-python-spec": "FROM python:\u06f3.1\nRUN pip install flash_attn-8+u-cp10-c-4.whl",
            "04-dockerfile-from-tag": "FROM pytorch/pytorch:\uff12.\uff13",
        }[folder]
    project({"Dockerfile": text})
    r = run("--format", "json", "Dockerfile")
    assert r.code in (0, 1), r.err
    assert "internal error" not in r.out + r.err


@pytest.mark.parametrize(
    ("reference", "has_torch", "python", "torch"),
    [
        # AMD's docs: "Using a Docker image with PyTorch pre-installed ... docker pull rocm/pytorch:latest"
        ("rocm/pytorch", True, None, None),
        ("rocm/pytorch:latest", True, None, None),
        ("docker.io/rocm/pytorch@sha256:0123", True, None, None),
        ("rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0", True, "3.10", "2.3.0"),
        ("rocm/pytorch:rocm5.2_ubuntu20.04_py3.7_pytorch_1.11.0_navi21", True, "3.7", "1.11.0"),
        # ROCm/pytorch#515: the rocm2.9 tags without "pytorch" in them had no torch for Python 3
        ("rocm/pytorch:rocm2.9_ubuntu18.04_py3.6", None, None, None),
        ("rocm/pytorch-nightly:latest", None, None, None),
    ],
)
def test_rocm_pytorch_images_ship_the_torch_their_tag_names(
    reference: str, has_torch: bool | None, python: str | None, torch: str | None
) -> None:
    found = image(reference, L, "stage:0")
    assert (found.has_torch, found.python, found.torch) == (
        has_torch,
        python,
        Version(torch) if torch else None,
    )
    assert found.cxx11_abi is None and found.cuda is None  # a ROCm build: no CUDA, its ABI not known


def test_a_source_build_on_rocm_pytorch_finds_torch_in_place(project: Any) -> None:
    clone = "git clone https://github.com/ROCm/flash-attention.git && cd flash-attention"
    project(
        {
            "Dockerfile": f"FROM rocm/pytorch:latest\nRUN {clone} && git checkout v2.6.3-cktile && pip install --no-build-isolation .\n"
        }
    )
    assert run("--format", "json", "--select", "FAL012").json["findings"] == []
    project(
        {
            "Dockerfile": f"FROM rocm/dev-ubuntu-22.04\nRUN {clone} && git checkout v2.6.3-cktile && pip install --no-build-isolation .\n"
        }
    )
    (f,) = run("--format", "json", "--select", "FAL012").json["findings"]
    assert "no torch is installed before it" in f["message"]
