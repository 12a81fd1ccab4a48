"""The code stays ruff-clean, formatted and mypy-clean; CI runs only pytest, so the gate lives here."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "fa_lint", "scripts", "tests", "benchmarks"],
        ["ruff", "format", "--check", "fa_lint", "scripts", "tests", "benchmarks"],
        ["mypy"],
    ],
    ids=["ruff", "ruff-format", "mypy"],
)
def test_clean(command: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", *command], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
