"""Issue 42, item 7 (second part): code that asks for flash_attention_2 where the project's complete
dependencies (a lock: ``uv sync`` installs it and nothing else) hold transformers and no flash-attn of
any major. transformers raises ImportError at ``from_pretrained`` (FAL021, a warning: a README step no
file holds may add flash-attn). Anything else that could bring one keeps it unjudged.

Shape: a uv project whose training script passes ``attn_implementation="flash_attention_2"`` and whose
lock has no flash-attn (the class of 5 public threads in issue 42; our own minimal files)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import lint

PYPROJECT = (
    '[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = ["torch==2.6.0", "transformers==4.57.1"]\n'
)
LOCK = (
    'version = 1\nrequires-python = ">=3.10"\n\n'
    '[[package]]\nname = "demo"\nversion = "0.1.0"\nsource = { editable = "." }\n'
    'dependencies = [{ name = "torch" }, { name = "transformers" }]\n\n'
    '[[package]]\nname = "torch"\nversion = "2.6.0"\nsource = { registry = "https://pypi.org/simple" }\n\n'
    '[[package]]\nname = "transformers"\nversion = "4.57.1"\nsource = { registry = "https://pypi.org/simple" }\n'
)
CODE = (
    "from transformers import AutoModelForCausalLM\n"
    'model = AutoModelForCausalLM.from_pretrained("m", attn_implementation="flash_attention_2")\n'
)


def _fal021(project: Any, files: dict[str, str]) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["severity"]) for f in lint(project, files) if f["code"] == "FAL021"]


def test_a_lock_without_flash_attn(project: Any) -> None:
    files = {"pyproject.toml": PYPROJECT, "uv.lock": LOCK, "train.py": CODE}
    assert _fal021(project, files) == [("train.py", 2, "warning")]


@pytest.mark.parametrize(
    "more",
    [
        {
            "Dockerfile": "FROM python:3.11\nRUN pip install uv && uv sync\nRUN pip install flash-attn==2.8.3\n"
        },
        {"requirements-gpu.txt": "flash-attn==2.8.3\n"},
    ],
)
def test_flash_attn_installed_elsewhere(project: Any, more: dict[str, str]) -> None:
    files = {"pyproject.toml": PYPROJECT, "uv.lock": LOCK, "train.py": CODE, **more}
    assert _fal021(project, files) == []


def test_no_lock_is_not_the_whole_install(project: Any) -> None:
    assert _fal021(project, {"pyproject.toml": PYPROJECT, "train.py": CODE}) == []


def test_kernels_may_stand_in(project: Any) -> None:
    lock = (
        LOCK
        + '\n[[package]]\nname = "kernels"\nversion = "0.12.0"\nsource = { registry = "https://pypi.org/simple" }\n'
    )
    assert _fal021(project, {"pyproject.toml": PYPROJECT, "uv.lock": lock, "train.py": CODE}) == []
