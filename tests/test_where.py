"""Issue 35, part A: every command judged in the environment it really runs in, and what is there.

Each expectation is worked out from how the tools behave, not from fa-lint's output:

- pip's default ``--upgrade-strategy`` is ``only-if-needed``: a package's dependency already installed
  and satisfying its requirement is left alone (pip's ``--upgrade-strategy`` help text); liger-kernel's
  metadata asks ``torch>=2.1.2``, vllm 0.6.5's ``torch==2.5.1`` (``fa_lint/kb/torch.json``);
- flash-attn's setup.py imports torch at its top, so a ``--no-build-isolation`` build needs torch in
  place; on a machine the files do not describe, whether it is there is unknown.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import run


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
    assert found("FAL005") == [(3, "error")]


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
