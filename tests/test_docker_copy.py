"""Issue 22, item 1: a Dockerfile's ``pip install -r FILE`` reads the file COPY put there, whatever
form the COPY takes, so FAL012 (and every rule) sees what the file pins.

Docker's rules (the Dockerfile reference, COPY): a relative DEST is relative to WORKDIR; a DEST ending
in ``/``, or an existing folder (``.``, a WORKDIR), receives each SRC under its own name; with several
SRC or a wildcard DEST must be a folder; otherwise DEST is the file's new name. A folder SRC copies
its contents, not itself. A new stage (FROM) starts from its own image, without the files the last
one copied. flash-attn's setup.py imports torch, so building it in isolation fails (FAL012's page).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import lint, run

REQS = "flash-attn==2.6.3\n"


def _found(project: Any, dockerfile: str, files: dict[str, str] | None = None) -> list[tuple[str, int, str]]:
    out = lint(
        project, {"Dockerfile": dockerfile, **(files or {"requirements.txt": REQS})}, "--select", "FAL012"
    )
    return [(f["path"], f["line"], f["severity"]) for f in out]


@pytest.mark.parametrize(
    ("copy", "install"),
    [
        ("COPY requirements.txt .", "pip install -r requirements.txt"),
        ("COPY requirements.txt ./", "pip install -r ./requirements.txt"),
        ("COPY requirements.txt /app", "pip install -r /app/requirements.txt"),  # /app is the WORKDIR
        ("COPY requirements.txt /app/", "pip install -r requirements.txt"),
        ('COPY ["requirements.txt", "./"]', "pip install -r requirements.txt"),
        ("COPY --chown=1000:1000 requirements.txt .", "pip install -r requirements.txt"),
        ("COPY requirements*.txt /tmp/", "pip install -r /tmp/requirements.txt"),
        ("COPY requirements.txt /tmp/r.txt", "pip install -r /tmp/r.txt"),  # a new name
        ("COPY . .", "pip install -r requirements.txt"),
        ("COPY deps/ /deps/", "pip install -r /deps/requirements.txt"),
        ("COPY deps /deps", "pip install -r /deps/requirements.txt"),  # a folder's contents
    ],
)
def test_the_copied_file_is_read(copy: str, install: str, project: Any) -> None:
    # python:3.11 has setuptools and wheel, so whether pip isolates depends on its version; but it has
    # no torch and nothing installs one before: flash-attn's setup.py (`import torch` at its top) fails
    # isolated or not, as pip reads it before installing anything: an error
    files = {"deps/requirements.txt" if "deps" in copy else "requirements.txt": REQS}
    dockerfile = f"FROM python:3.11\nWORKDIR /app\n{copy}\nRUN {install}\n"
    assert _found(project, dockerfile, files) == [("Dockerfile", 4, "error")]


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        ("", [("Dockerfile", 3, "error")]),  # no torch at all: isolated or not, setup.py fails
        ("RUN pip install torch==2.4.1\n", [("Dockerfile", 4, "warning")]),  # isolation hides it
        ("RUN pip install -U pip\n", [("Dockerfile", 4, "error")]),  # the newest pip always isolates
    ],
)
def test_with_or_without_torch_before(
    before: str, expected: list[tuple[str, int, str]], project: Any
) -> None:
    dockerfile = f"FROM python:3.11\n{before}COPY requirements.txt .\nRUN pip install -r requirements.txt\n"
    assert _found(project, dockerfile) == expected


def test_python_312_has_no_setuptools_so_the_build_is_isolated(project: Any) -> None:
    dockerfile = "FROM python:3.12\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n"
    assert _found(project, dockerfile) == [("Dockerfile", 3, "error")]


def test_no_build_isolation_after_torch_is_fine(project: Any) -> None:
    dockerfile = (
        "FROM python:3.11\nRUN pip install torch==2.4.1\nCOPY requirements.txt .\n"
        "RUN pip install --no-build-isolation -r requirements.txt\n"
    )
    assert _found(project, dockerfile) == []


def test_an_install_already_satisfied_builds_nothing(project: Any) -> None:
    # allenai/open-instruct's pattern: flash-attn==X with --no-build-isolation first, the same X in the file
    dockerfile = (
        "FROM python:3.11\nRUN pip install torch==2.4.1\nRUN pip install flash-attn==2.6.3 --no-build-isolation\n"
        "COPY requirements.txt .\nRUN pip install -r requirements.txt\n"
    )
    assert _found(project, dockerfile) == []
    # another version in the file replaces it: that one is built, in isolation
    assert _found(project, dockerfile, {"requirements.txt": "flash-attn==2.7.4.post1\n"}) == [
        ("Dockerfile", 5, "warning")
    ]


def test_a_new_stage_has_not_the_files_of_the_last(project: Any) -> None:
    dockerfile = (
        "FROM python:3.11 AS deps\nCOPY requirements.txt .\n"
        "FROM python:3.11\nRUN pip install -r requirements.txt\n"
    )
    assert _found(project, dockerfile) == []


def test_the_version_is_judged_through_the_copy(project: Any) -> None:
    project(
        {
            "Dockerfile": "FROM python:3.11\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n",
            "requirements.txt": "flash-attn==2.4.2\n",
        }
    )
    out = run("--format", "json", "--isolated", "Dockerfile").json
    assert out["files"] == ["Dockerfile", "requirements.txt"]
    assert [(f["code"], f["path"], f["environment"]) for f in out["findings"] if f["code"] == "FAL001"] == [
        ("FAL001", "requirements.txt", "Dockerfile [stage:0]")
    ]
