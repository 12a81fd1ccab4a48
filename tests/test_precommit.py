"""The pre-commit hook, run by pre-commit itself against a copy of this repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fa_lint.files.discover import candidate, detect, pattern_regex
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
        "GNUmakefile",
        "make/cuda.mk",
        "Makefile.am",
        "justfile",
        "Justfile",
        ".gitlab-ci.yml",
        "ci/gpu.gitlab-ci.yml",
        "Dockerfile-gpu",
        "Dockerfile_gpu",
        "requirements/gpu/cuda12.txt",
        "constraints/torch.txt",
        "requirements.lock",
        "requirements-dev.lock",
        "dev.in",
        "MANIFEST.in",
        "tox.ini",
        "noxfile.py",
        "pixi.toml",
        "pixi.lock",
        "conda-lock.yml",
        "gpu.conda-lock.yml",
        "env-gpu.yml",
        "conda/cuda.yaml",
        "envs/train.yml",
        "requirements.yaml",
        "mkdocs.yml",
        ".pre-commit-config.yaml",
        "tox.toml",
        "noxfile_helpers.py",
    ],
)
def test_hook_pattern_and_discovery_agree(path: str) -> None:
    # The hook hands over every name discovery knows or would look into (a *.in, an env-*.yml).
    assert bool(re.search(pattern_regex(), path)) is (detect(path) is not None or candidate(path) is not None)


Hook = tuple[Path, str, dict[str, str]]


@pytest.fixture(scope="module")
def hook(tmp_path_factory: pytest.TempPathFactory) -> Hook:
    """The hook repository (a committed copy of this working tree), its commit, and an environment
    whose pre-commit cache the tests share, so pre-commit installs the hook once."""
    tmp_path = tmp_path_factory.mktemp("hook")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
    }
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
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "hook"]):
        subprocess.run(["git", *args], cwd=hook_repo, check=True, env=env)
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=hook_repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    return hook_repo, rev, env


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_pre_commit_runs_the_hook(tmp_path: Path, hook: Hook) -> None:
    hook_repo, rev, env = hook
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


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_a_commit_that_changes_only_the_constraints_fails(tmp_path: Path, hook: Hook) -> None:
    # requirements.txt asks for flash-attn<2.6 and says -c constraints.txt. Alone, <2.6 admits 2.5.x
    # (paged KV) as well as older releases: a warning. The commit adds !=2.5.* to the constraints:
    # together they admit only 0.2.0 ... 2.4.3.post1, none with block_table (first in 2.5.0), FAL004.
    # pre-commit passes only constraints.txt; the hook must still see the environment it is part of.
    hook_repo, rev, env = hook
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "requirements.txt").write_text("torch\nflash-attn<2.6\n-c constraints.txt\n")
    (proj / "constraints.txt").write_text("torch<3\n")
    (proj / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo.as_uri()}\n    rev: {rev}\n    hooks:\n      - id: fa-lint\n"
    )
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start", "--no-verify"]):
        subprocess.run(["git", *args], cwd=proj, check=True, env=env)
    (proj / "constraints.txt").write_text("torch<3\nflash-attn!=2.5.*\n")
    subprocess.run(["git", "add", "constraints.txt"], cwd=proj, check=True, env=env)
    proc = subprocess.run(
        [*PRE_COMMIT, "run", "--verbose"], cwd=proj, env=env, capture_output=True, text=True, timeout=600
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    # Located where `fa-lint .` puts it: the unchanged requirements.txt, constraints.txt related.
    assert "requirements.txt:2:1: FAL004" in out, out
    assert "(constraints.txt:2:1)" in out, out
    # The same commit through `pre-commit run --all-files` agrees.
    proc = subprocess.run(
        [*PRE_COMMIT, "run", "--all-files"], cwd=proj, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 1 and "requirements.txt:2:1: FAL004" in proc.stdout + proc.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_a_commit_that_adds_an_old_pin_to_a_makefile_fails(tmp_path: Path, hook: Hook) -> None:
    # issue 24: the hook's files pattern did not match a Makefile, so this commit passed.
    hook_repo, rev, env = hook
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "Makefile").write_text("install:\n\tpip install torch==2.4.0\n")
    (proj / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo.as_uri()}\n    rev: {rev}\n    hooks:\n      - id: fa-lint\n"
    )
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start", "--no-verify"]):
        subprocess.run(["git", *args], cwd=proj, check=True, env=env)
    (proj / "Makefile").write_text("install:\n\tpip install torch==2.4.0\n\tpip install flash-attn==2.4.2\n")
    (proj / "justfile").write_text('FA := "2.3.6"\ngpu:\n    pip install flash-attn=={{FA}}\n')
    subprocess.run(["git", "add", "-A"], cwd=proj, check=True, env=env)
    proc = subprocess.run(
        [*PRE_COMMIT, "run", "--verbose"], cwd=proj, env=env, capture_output=True, text=True, timeout=600
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "Makefile:3:14: FAL001 [error]" in out and "justfile:3:17: FAL001 [error]" in out, out


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_a_committed_file_name_that_reads_as_an_option_is_a_path(tmp_path: Path, hook: Hook) -> None:
    # ../shared/reliability/47: pre-commit appends file names with no "--" before them (its `args` come
    # first), so a committed folder "-o.." made "-o../install.sh" the option -o: the report went to a
    # file outside the repository and the pin inside was never read. Every glued value is the same:
    # "--exclude=*" as a folder turned the hook's own exclude list against the check.
    hook_repo, rev, env = hook
    proj = tmp_path / "proj"
    for folder in ("-o..", "--exclude=*", "--config=x"):
        (proj / folder).mkdir(parents=True)
        (proj / folder / "install.sh").write_text("pip install --no-build-isolation flash-attn==2.4.2\n")
    (proj / "requirements.txt").write_text("flash-attn==2.5.8\n")
    (proj / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo.as_uri()}\n    rev: {rev}\n    hooks:\n      - id: fa-lint\n"
        "        args: [--format, concise]\n"
    )
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start", "--no-verify"]):
        subprocess.run(["git", *args], cwd=proj, check=True, env=env)
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
    for folder in ("-o..", "--exclude=*", "--config=x"):
        assert f"{folder}/install.sh:1:34: FAL001 [error]" in out, out  # checked, as a path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj"], out  # nothing written beside it
