"""The pre-commit hook, run by pre-commit itself against a copy of this repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fa_lint.discover import detect, pattern_regex
from tests.conftest import REPO

PRE_COMMIT = [sys.executable, "-m", "pre_commit"]


@pytest.mark.parametrize(
    "path",
    [
        "requirements.txt",
        "requirements/gpu.txt",
        "dev-requirements.in",
        "constraints.txt",
        "pyproject.toml",
        "a/setup.cfg",
        "setup.py",
        "Pipfile",
        "Pipfile.lock",
        "poetry.lock",
        "uv.lock",
        "pdm.lock",
        "pylock.toml",
        "pylock.gpu.toml",
        "environment.yml",
        "environment-cuda.yaml",
        "docker/Dockerfile",
        "Dockerfile.cuda",
        "serve.Dockerfile",
        "Containerfile",
        "scripts/install.sh",
        ".github/workflows/ci.yml",
        "README.md",
        "requirements.md",
        "notes.txt",
        "src/app.py",
        "docker-compose.yml",
        "pylock.txt",
        "conda.yml",
        ".github/actions/x.yml",
        "Makefile",
    ],
)
def test_hook_pattern_and_discovery_agree(path: str) -> None:
    assert bool(re.search(pattern_regex(), path)) is (detect(path) is not None)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_pre_commit_runs_the_hook(tmp_path: Path) -> None:
    # The hook repository: a committed copy of this working tree.
    hook_repo = tmp_path / "hook"
    shutil.copytree(
        REPO,
        hook_repo,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            "venv",
            "__pycache__",
            "*.egg-info",
            ".pytest_cache",
            ".mypy_cache",
            ".ruff_cache",
            "build",
            "dist",
            ".tools",  # Node and Renovate for tests/test_renovate.py, hundreds of MB
        ),
    )
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
    }
    for cwd in (hook_repo,):
        subprocess.run(["git", "init", "-q"], cwd=cwd, check=True, env=env)
        subprocess.run(["git", "add", "-A"], cwd=cwd, check=True, env=env)
        subprocess.run(["git", "commit", "-qm", "hook"], cwd=cwd, check=True, env=env)
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=hook_repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    # A project that uses it.
    proj = tmp_path / "proj"
    (proj / "docker").mkdir(parents=True)
    (proj / "requirements.txt").write_text("flash-attn==2.4.2\n")
    (proj / "docker/Dockerfile").write_text("FROM x\nRUN pip install 'flash-attn>=2.5'\n")
    (proj / "README.md").write_text("flash-attn==1.0.0\n")
    (proj / "vendor").mkdir()
    (proj / "vendor/requirements.txt").write_text("flash-attn==2.4.2\n")  # excluded in the config below
    (proj / "pyproject.toml").write_text('[tool.fa-lint]\nexclude = ["vendor/*"]\n')
    (proj / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo.as_uri()}\n    rev: {rev}\n    hooks:\n      - id: fa-lint\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=proj, check=True, env=env)
    proc = subprocess.run(
        [*PRE_COMMIT, "run", "--all-files", "--verbose"],
        cwd=proj,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "requirements.txt:1:1: FAL001" in out
    assert "README.md" not in out  # not a dependency file, so pre-commit never passes it
    assert "vendor/" not in out  # pre-commit names it, and the hook's --force-exclude leaves it out
    (proj / "requirements.txt").write_text("flash-attn==2.5.6\n")
    proc = subprocess.run(
        [*PRE_COMMIT, "run", "--all-files"], cwd=proj, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # With `args: [--fix]` the hook fixes the file; pre-commit fails the run because a file changed.
    (proj / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo.as_uri()}\n    rev: {rev}\n    hooks:\n"
        "      - id: fa-lint\n        args: [--fix]\n"
    )
    (proj / "requirements.txt").write_text("torch\nflash-attn>=2.0\n")
    subprocess.run(["git", "add", "-A"], cwd=proj, check=True, env=env)
    proc = subprocess.run(
        [*PRE_COMMIT, "run", "--all-files"], cwd=proj, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 1 and "files were modified by this hook" in proc.stdout, proc.stdout
    assert (proj / "requirements.txt").read_text() == "torch\nflash-attn>=2.5.0\n"
    proc = subprocess.run(
        [*PRE_COMMIT, "run", "--all-files"], cwd=proj, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
