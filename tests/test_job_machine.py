"""Issue 40, item 4: a CI job with a container runs its commands in that image, as a Dockerfile stage
runs its RUN lines in its FROM image.

The facts each case rests on:

- GitHub Actions: a job with ``container:`` (a string, or ``image:`` under it) runs every ``run:`` step
  of the job inside that container ("Running jobs in a container", docs.github.com); the runner only
  hosts it. GitLab CI: a job's ``image:`` (its own, else ``default:``'s, else the file's) is the Docker
  image its scripts run in.
- flash-attn's setup.py imports torch at its top (every release tag), so a ``--no-build-isolation``
  build needs torch in place; pip's default ``--upgrade-strategy only-if-needed`` keeps a torch that a
  later requirement admits, so a project that merely requires torch (``pip install -e .`` of a
  ``[project] dependencies`` with ``torch>=1.13.1``) says nothing of whether one is there.
- ``nvidia/cuda:*-runtime-*`` has no nvcc, ``ubuntu`` and ``python`` images have no torch,
  ``pytorch/pytorch`` has one, NGC's ``nvcr.io/nvidia/pytorch`` ships its own flash-attn
  (``fa_lint/kb/images.json``, ``fa_lint/kb/ngc.json``, with their sources).

The shape of the first case is huggingface/nanotron's ``.github/workflows/fa2_unit_tests.yaml`` at
2411b022a75fb7f7561a1bb4166706da5e1b76de (a job container ``runpod/pytorch:2.1.1-...``, then
``pip install "flash-attn>=2.5.0" --no-build-isolation`` and ``pip install -e .`` of a project that
requires torch), written here in our own words.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import lint

PROJECT = '[project]\nname = "demo"\nversion = "0"\ndependencies = ["torch>=1.13", "numpy"]\n'


def _workflow(image: str, script: str) -> str:
    return (
        "on: push\njobs:\n  unit:\n    runs-on: ubuntu-22.04\n"
        f"    container:\n      image: {image}\n      options: --gpus all\n"
        "    steps:\n    - uses: actions/checkout@v4\n"
        f"    - run: |\n        {script}\n"
    )


def _gitlab(image: str, script: str) -> str:
    return f"image: {image}\nunit:\n  script:\n    - {script}\n"


def _dockerfile(image: str, script: str) -> str:
    return f"FROM {image}\nRUN {script}\n"


WAYS = {
    ".github/workflows/unit.yml": _workflow,
    ".gitlab-ci.yml": _gitlab,
    "Dockerfile": _dockerfile,
}


def _by_file(
    project: Any, image: str, script: str, *extra: tuple[str, str]
) -> dict[str, list[tuple[str, str]]]:
    files = {name: make(image, script) for name, make in WAYS.items()}
    files.update(dict(extra))
    found: dict[str, list[tuple[str, str]]] = {name: [] for name in WAYS}
    for f in lint(project, files):
        found.setdefault(f["path"], []).append((f["code"], f["severity"]))
    return {name: sorted(v) for name, v in found.items()}


@pytest.mark.parametrize(
    ("image", "script", "expected"),
    [
        # the nanotron shape: an image fa-lint does not know, and a project that only requires torch
        (
            "runpod/pytorch:2.1.1-py3.10-cuda12.1.1-devel-ubuntu22.04",
            'pip install "flash-attn>=2.5.0" --no-build-isolation && pip install -e .',
            [],
        ),
        # a base with no torch at all: the build cannot see one, and there is no nvcc either
        (
            "ubuntu:22.04",
            "pip install flash-attn==2.6.3 --no-build-isolation",
            [("FAL012", "error"), ("FAL015", "error")],
        ),
        # torch installed first, but a runtime image has no nvcc for setup.py
        (
            "nvidia/cuda:12.1.1-runtime-ubuntu22.04",
            "pip install torch==2.4.0 && pip install flash-attn==2.6.3 --no-build-isolation",
            [("FAL015", "error")],
        ),
        # pytorch/pytorch's devel image has torch and nvcc: nothing to say
        (
            "pytorch/pytorch:2.4.0-cuda12.1-cudnn9-devel",
            "pip install flash-attn==2.6.3 --no-build-isolation",
            [],
        ),
        # NGC ships its own flash-attn: an unpinned install keeps it
        (
            "nvcr.io/nvidia/pytorch:24.05-py3",
            "pip install flash-attn",
            [("FAL002", "warning"), ("FAL023", "info")],
        ),
    ],
)
def test_a_job_container_is_the_base_of_its_commands_as_from_is(
    project: Any, image: str, script: str, expected: list[tuple[str, str]]
) -> None:
    found = _by_file(project, image, script, ("pyproject.toml", PROJECT))
    assert found == {name: expected for name in WAYS}


def test_the_container_not_the_runner_is_the_machine(project: Any) -> None:
    # runs-on: ubuntu-22.04 is GitHub's Ubuntu 22.04 image, which nothing installs nvcc on; the job's
    # container is NVIDIA's devel image, which has nvcc: setup.py runs there
    files = {
        ".github/workflows/unit.yml": _workflow(
            "nvidia/cuda:12.4.1-devel-ubuntu22.04",
            "pip install torch==2.4.0 && pip install flash-attn==2.6.3 --no-build-isolation",
        )
    }
    assert [f["code"] for f in lint(project, files) if f["code"] == "FAL015"] == []


@pytest.mark.parametrize(
    ("name", "said"), [(".github/workflows/unit.yml", "container:"), (".gitlab-ci.yml", "image:")]
)
def test_a_note_names_the_job_image_as_the_file_does(project: Any, name: str, said: str) -> None:
    image = "nvidia/cuda:12.1.1-runtime-ubuntu22.04"
    files = {
        name: WAYS[name](
            image, "pip install torch==2.4.0 && pip install flash-attn==2.6.3 --no-build-isolation"
        )
    }
    (f,) = [f for f in lint(project, files) if f["code"] == "FAL015"]
    assert any(f"no nvcc: {said} {image} ({name}:" in n for n in f["notes"]), f["notes"]


# --- what a later command says of the torch in place ------------------------------------------------


def test_a_project_that_requires_torch_says_nothing_of_the_torch_in_place(project: Any) -> None:
    # pip install -e . installs the project's dependencies only where pip finds none that fit
    files = {
        "setup.sh": 'pip install "flash-attn>=2.5.0" --no-build-isolation\npip install -e .\n',
        "pyproject.toml": PROJECT,
    }
    assert [f["code"] for f in lint(project, files) if f["code"] == "FAL012"] == []


@pytest.mark.parametrize(
    "later",
    [
        "pip install torch==2.4.0",  # the script installs torch itself, after the build
        "pip install -r requirements.txt",  # a list of what to install, torch among them
    ],
)
def test_torch_asked_for_after_the_build_still_says_it_was_missing(project: Any, later: str) -> None:
    files = {
        "setup.sh": f'pip install "flash-attn>=2.5.0" --no-build-isolation\n{later}\n',
        "requirements.txt": "torch==2.4.0\n",
    }
    found = [(f["line"], f["severity"]) for f in lint(project, files) if f["code"] == "FAL012"]
    assert found == [(1, "warning")]
