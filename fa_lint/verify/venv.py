"""``fa-lint verify --requirements FILE``: build a throw-away venv from the file and probe that.

flash-attn's sdist builds against the torch already installed (its setup.py imports torch), so it
needs ``--no-build-isolation`` and torch first: the install runs in two phases, as flash-attn's own
README does it. The venv lives in a temporary folder and is removed afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from fa_lint.files.discover import Target
from fa_lint.files.project import load, project_root
from fa_lint.model import FLASH_ATTN, Requirement


@dataclass(frozen=True)
class Installed:
    python: str
    log: str


class InstallError(Exception):
    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


def _lines(path: str, name: str) -> list[str]:
    files, _, _ = load([Target(path, "requirements", explicit=True)], roots=[project_root(path)])
    return [r.raw for f in files.values() for r in f.records if isinstance(r, Requirement) and r.name == name]


def _pip(python: str, args: list[str], log: list[str]) -> None:
    cmd = [python, "-m", "pip", "install", "--disable-pip-version-check", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    log.append(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}")
    if proc.returncode:
        raise InstallError(
            f"pip install failed (exit {proc.returncode}): "
            f"{(proc.stderr.strip().splitlines() or ['no output'])[-1]}",
            "\n".join(log),
        )


@contextmanager
def venv_from(requirements: str, pip_options: list[str]) -> Iterator[Installed]:
    """A fresh venv with exactly what ``requirements`` resolves to."""
    with tempfile.TemporaryDirectory(prefix="fa-lint-verify-") as tmp:
        folder = os.path.join(tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", folder], check=True, capture_output=True)
        python = os.path.join(folder, "Scripts" if os.name == "nt" else "bin", "python")
        log: list[str] = []
        torch = _lines(requirements, "torch")
        needs_build = any(not r.endswith(".whl") and "@" not in r for r in _lines(requirements, FLASH_ATTN))
        first = [*torch, *(["setuptools", "wheel", "packaging", "psutil", "ninja"] if needs_build else [])]
        if first:
            _pip(python, [*pip_options, *first], log)
        _pip(
            python,
            [*pip_options, *(["--no-build-isolation"] if needs_build else []), "-r", requirements],
            log,
        )
        yield Installed(python, "\n".join(log))
