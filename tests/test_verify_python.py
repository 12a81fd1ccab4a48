"""Which interpreter ``fa-lint verify`` probes: the project's, also when fa-lint runs from its own venv."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from fa_lint.cli import main as cli_main
from fa_lint.verify import cli as verify_cli
from tests.conftest import REPO


def _env(root: Path, conda: bool = False) -> Path:
    """An environment folder whose python is this interpreter (a link), where the probe can run."""
    python = Path(verify_cli._env_python(str(root), conda))
    python.parent.mkdir(parents=True, exist_ok=True)
    python.symlink_to(sys.executable)
    return python


def _run(*args: str) -> tuple[int, dict[str, object], str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["verify", "--format", "json", "--timeout", "60", *args], out=out, err=err)
    return code, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


@pytest.mark.skipif(os.name == "nt", reason="symlinked interpreters")
def test_an_active_virtual_environment_is_probed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python = _env(tmp_path / "project-venv")
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "project-venv"))
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    _code, doc, err = _run()
    assert doc["python"] == str(python)
    assert f"probing {python}, the active environment's (VIRTUAL_ENV)" in err
    # --python wins over the active environment
    _code, doc, _ = _run("--python", sys.executable)
    assert doc["python"] == sys.executable


@pytest.mark.skipif(os.name == "nt", reason="symlinked interpreters")
def test_an_active_conda_environment_is_probed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python = _env(tmp_path / "conda-env", conda=True)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("CONDA_PREFIX", str(tmp_path / "conda-env"))
    _code, doc, _err = _run()
    assert doc["python"] == str(python)


@pytest.mark.parametrize(
    ("prefix", "kind"),
    [
        ("/home/u/.cache/pre-commit/repoabc123/py_env-python3.12", "pre-commit"),
        ("/home/u/.local/share/pipx/venvs/fa-lint", "pipx"),
        ("/home/u/.local/share/uv/tools/fa-lint", "uv"),
        ("/home/u/project/.venv", None),
        ("/usr", None),
    ],
)
def test_fa_lints_own_isolated_environment_is_named(prefix: str, kind: str | None) -> None:
    assert verify_cli.isolated(prefix) == kind


def test_probing_its_own_isolated_environment_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    monkeypatch.setattr(sys, "prefix", "/home/u/.local/share/pipx/venvs/fa-lint")
    err = io.StringIO()
    assert verify_cli.interpreter(err) == sys.executable
    assert "warning: probing fa-lint's own interpreter" in err.getvalue()
    assert "pipx" in err.getvalue() and "--python .venv/bin/python" in err.getvalue()
    monkeypatch.setattr(sys, "prefix", "/home/u/project/.venv")
    err = io.StringIO()
    assert verify_cli.interpreter(err) == sys.executable and err.getvalue() == ""


def test_the_verify_hook_documents_passing_the_projects_interpreter() -> None:
    (hook,) = [
        h
        for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
        if h["id"] == "fa-lint-verify"
    ]
    assert hook["entry"] == "fa-lint verify"
    assert "--python" in hook["description"]
    docs = (REPO / "docs" / "verify.md").read_text()
    assert "args: [--python, .venv/bin/python]" in docs
