"""Configuration: each file's nearest .fa-lint.toml, fa-lint.toml or pyproject.toml [tool.fa-lint], found
at or above it and never above its repository's top; unknown rule codes refused with the file and line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fa_lint.settings import config
from tests.conftest import SHARED, run

OLD = "flash-attn==2.4.2\n"
MID = "flash-attn==2.5.8\n"  # paged KV; below a min-version of 2.6.3


def _git(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _codes(*args: str) -> list[tuple[str, str]]:
    return [(p, c) for p, _, c in run("--format", "json", *args).codes()]


# --- issue 23, item 9: configuration from outside the repository never applies ----------------------


@needs_git
def test_a_pyproject_above_the_repository_is_never_read(project: Any) -> None:
    # ../shared/reliability/27: a shared parent folder's pyproject.toml silenced the repository's pins.
    root = project({"pyproject.toml": '[tool.fa-lint]\nignore = ["FAL"]\n'})
    repo = root / "repo"
    repo.mkdir()
    _git(repo)
    (repo / "requirements.txt").write_text(OLD)
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["flash-attn==2.3.0"]\n')
    os.chdir(repo)
    r = run("--format", "concise", ".")
    assert r.code == 1 and r.out.count("FAL001") == 2, r.out
    os.chdir(root)  # named from above, the same
    assert sorted(_codes("repo")) == [
        ("repo/pyproject.toml", "FAL001"),
        ("repo/pyproject.toml", "FAL012"),  # `pip install .` builds its flash-attn (issue 42)
        ("repo/requirements.txt", "FAL001"),
    ]
    for name in ("fa-lint.toml", ".fa-lint.toml"):  # fa-lint's own files above it neither
        (root / name).write_text('ignore = ["FAL"]\n')
        os.chdir(repo)
        assert run("--format", "concise", ".").code == 1
        (root / name).unlink()


@pytest.mark.skipif(
    not (SHARED / "reliability" / "27-config-found-above-repository-root").exists(), reason="../shared"
)
@needs_git
def test_the_reproducer_ends_with_both_findings(project: Any) -> None:
    root = project({})
    script = SHARED / "reliability" / "27-config-found-above-repository-root" / "make.sh"
    subprocess.run(["sh", str(script)], cwd=root, check=True)
    os.chdir(root / "repo")
    r = run("--format", "concise", ".")
    assert r.code == 1 and "Found 2 errors" in r.out, r.out


@needs_git
def test_an_unreadable_repository_pyproject_is_not_passed_over(project: Any) -> None:
    root = project({"pyproject.toml": '[tool.fa-lint]\nignore = ["FAL"]\n'})
    repo = root / "repo"
    (repo / "sub").mkdir(parents=True)
    _git(repo)
    (repo / "pyproject.toml").write_text('[tool.fa-lint]\nignore = ["FAL001"]\n')
    (repo / "sub" / "pyproject.toml").write_text("[tool.fa-lint\n")  # broken: the search ends here
    (repo / "sub" / "requirements.txt").write_text(OLD)
    os.chdir(repo)
    assert sorted(_codes()) == [("sub/pyproject.toml", "FAL900"), ("sub/requirements.txt", "FAL001")]


def test_outside_a_repository_only_the_users_own_files_count(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project({"pyproject.toml": '[tool.fa-lint]\nignore = ["FAL001"]\n', "sub/requirements.txt": OLD})
    os.chdir(root / "sub")
    assert _codes() == []  # our own file, above: ruff's nearest configuration
    monkeypatch.setattr(os, "getuid", lambda: os.stat(root / "pyproject.toml").st_uid + 1)
    assert _codes() == [("requirements.txt", "FAL001")]  # someone else's (a shared /tmp): passed over


# --- the nearest configuration to each file -----------------------------------------------------------


@needs_git
def test_each_file_has_its_nearest_configuration(project: Any) -> None:
    root = project(
        {
            "pyproject.toml": '[tool.fa-lint]\nignore = ["FAL001"]\n',
            "requirements.txt": OLD,
            "svc/fa-lint.toml": 'min-version = "2.6.3"\n',  # no [tool.fa-lint] header in fa-lint's own file
            "svc/requirements.txt": MID,
            "svc/deep/requirements.txt": OLD,
            "lib/pyproject.toml": '[project]\nname = "lib"\n',  # no [tool.fa-lint]: the search goes on
            "lib/requirements.txt": OLD,
        }
    )
    _git(root)
    found = run("--format", "json")
    assert sorted(found.codes()) == [
        ("svc/deep/requirements.txt", 1, "FAL001"),  # svc's configuration: FAL001 not ignored there
        ("svc/requirements.txt", 1, "FAL001"),  # 2.5.8 is below svc's min-version
    ]
    messages = {f["path"]: f["message"] for f in found.json["findings"]}
    assert "flash-attn>=2.6.3" in messages["svc/requirements.txt"]
    os.chdir(root / "svc")  # wherever the run starts
    assert sorted(_codes()) == [("deep/requirements.txt", "FAL001"), ("requirements.txt", "FAL001")]
    os.chdir(root.parent)  # cd /tmp && fa-lint sub/: sub's own settings
    name = root.name
    assert sorted(_codes(name)) == [
        (f"{name}/svc/deep/requirements.txt", "FAL001"),
        (f"{name}/svc/requirements.txt", "FAL001"),
    ]


def test_in_one_folder_fa_lints_own_file_wins(project: Any) -> None:
    project(
        {
            "pyproject.toml": '[tool.fa-lint]\nignore = ["FAL001"]\n',
            "fa-lint.toml": 'ignore = ["FAL002"]\n',
            "requirements.txt": OLD + "flash-attn>=2.0\n",
        }
    )
    assert _codes() == [("requirements.txt", "FAL001")]  # fa-lint.toml over pyproject.toml
    Path(".fa-lint.toml").write_text("ignore = []\n")  # .fa-lint.toml over both (ruff's order)
    assert sorted(c for _, c in _codes()) == ["FAL001", "FAL002"]
    assert config.NAMES == (".fa-lint.toml", "fa-lint.toml", "pyproject.toml")


def test_per_file_settings_strict_and_exclude_follow_each_files_configuration(project: Any) -> None:
    root = project(
        {
            "requirements.txt": "flash-attn>=2.0\n",  # a warning: passes unless strict
            "strict/fa-lint.toml": "strict = true\n",
            "strict/requirements.txt": "flash-attn>=2.0\n",
            "vendored/fa-lint.toml": 'exclude = ["third_party"]\n',
            "vendored/third_party/requirements.txt": OLD,
            "vendored/requirements.txt": MID,
        }
    )
    r = run("--format", "json", ".")
    assert sorted(r.codes()) == [("requirements.txt", 1, "FAL002"), ("strict/requirements.txt", 1, "FAL002")]
    assert r.code == 1  # strict/'s warning fails the run
    assert run("--format", "json", "requirements.txt").code == 0  # the root file alone: not strict
    assert run("--format", "json", "--exit-zero", ".").code == 0
    assert root.exists()


def test_the_command_line_wins_over_every_configuration(project: Any) -> None:
    project({"a/fa-lint.toml": 'ignore = ["FAL001"]\n', "a/requirements.txt": OLD, "b/requirements.txt": OLD})
    assert _codes() == [("b/requirements.txt", "FAL001")]
    assert sorted(_codes("--ignore", "FAL002")) == [
        ("a/requirements.txt", "FAL001"),
        ("b/requirements.txt", "FAL001"),
    ]
    assert sorted(_codes("--isolated")) == [
        ("a/requirements.txt", "FAL001"),
        ("b/requirements.txt", "FAL001"),
    ]
    assert _codes("--config", "a/fa-lint.toml") == []  # one file for every file


# --- unknown rule codes: ruff's "unknown rule selector", exit 2 -------------------------------------


@pytest.mark.parametrize("args", [["--select", "FAL999"], ["--ignore", "FAL0,XYZ1"], ["--select", "FAL01X"]])
def test_an_unknown_code_on_the_command_line_is_a_usage_error(project: Any, args: list[str]) -> None:
    project({"requirements.txt": OLD})
    r = run(*args)
    assert r.code == 2 and r.out == "" and "unknown rule selector" in r.err, r.err


def test_a_prefix_that_selects_some_rule_is_fine(project: Any) -> None:
    project({"requirements.txt": OLD})
    for selector in ("FAL", "FAL0", "FAL00", "FAL001", "fal9", "FAL90"):
        assert run("--select", selector).code in (0, 1), selector


@pytest.mark.parametrize(
    ("files", "where"),
    [
        (
            {"pyproject.toml": '[tool.fa-lint]\nselect = ["FAL001"]\nignore = ["FAL999"]\n'},
            "pyproject.toml:3:1",
        ),
        ({"fa-lint.toml": '# ours\nselect = ["FAL9999"]\n'}, "fa-lint.toml:2:1"),
        ({".fa-lint.toml": '[per-file-ignores]\n"legacy/*" = ["NOPE"]\n'}, ".fa-lint.toml:2:1"),
    ],
)
def test_an_unknown_code_in_configuration_is_a_located_configuration_error(
    project: Any, files: dict[str, str], where: str
) -> None:
    project({**files, "requirements.txt": OLD})
    r = run()
    assert r.code == 2 and r.out == "", r.err
    assert (
        r.err.startswith(f"fa-lint: configuration error: {where}: ") and "unknown rule selector" in r.err
    ), r.err


def test_an_invalid_fa_lint_toml_is_a_configuration_error(project: Any) -> None:
    project({"fa-lint.toml": "[tool.fa-lint]\nignore = []\n", "requirements.txt": OLD})
    r = run()
    assert r.code == 2 and "fa-lint.toml:1:1: unknown fa-lint.toml key(s): tool" in r.err, r.err
