"""Issue 10, item 6: environments span files, also when only some of them are named.

pre-commit passes only the changed files. Whatever is named, fa-lint reads the environments the
named files take part in, and reports the environment findings (FAL004, FAL006) that involve them
where `fa-lint .` reports them. The verdicts: flash-attn<2.6 with !=2.5.* admits only 0.2.0 ...
2.4.3.post1, none with block_table (first in 2.5.0); 2.4.2 has none; >=2.5 excludes 2.4.2.
"""

from __future__ import annotations

from typing import Any

import pytest

from fa_lint.files import project as project_files
from fa_lint.files.discover import Target
from tests.conftest import run

UV_LOCK = 'version = 1\n\n[[package]]\nname = "flash-attn"\nversion = "{v}"\nsource = {{ registry = "https://pypi.org/simple" }}\n'


def envs(*args: str) -> list[tuple[str, int, str, tuple[str, ...]]]:
    """The environment findings: code, where, and the related locations."""
    r = run("--format", "json", *args)
    return sorted(
        (f["path"], f["line"], f["code"], tuple(f"{x['path']}:{x['line']}" for x in f["related_locations"]))
        for f in r.json["findings"]
        if f["code"] in ("FAL004", "FAL006")
    )


def test_a_named_constraints_file_gets_the_findings_of_the_file_that_includes_it(project: Any) -> None:
    project(
        {
            ".git/HEAD": "",
            "requirements.txt": "torch\nflash-attn<2.6\n-c constraints.txt\n",
            "constraints.txt": "flash-attn!=2.5.*\n",
            "docs/requirements.txt": "sphinx\n",
        }
    )
    whole = envs(".")
    assert whole == [("requirements.txt", 2, "FAL004", ("constraints.txt:1",))]
    assert envs("constraints.txt") == whole
    r = run("--format", "json", "constraints.txt")
    # the unchanged file's own warning (FAL002 on flash-attn<2.6) is left to the run that checks it
    assert {(f["path"], f["code"]) for f in r.json["findings"]} == {
        ("constraints.txt", "FAL002"),
        ("requirements.txt", "FAL004"),
    }
    assert r.json["files"] == ["constraints.txt"]  # requirements.txt was read, not checked
    assert r.code == 1


def test_includers_are_found_through_other_includers(project: Any) -> None:
    project(
        {
            "requirements/base.txt": "flash-attn<2.6\n-c ../constraints/gpu.txt\n",
            "requirements/dev.txt": "-r base.txt\npytest\n",
            "constraints/gpu.txt": "flash-attn!=2.5.*\n",
        }
    )
    whole = {(p, n, c) for p, n, c, _ in envs(".")}
    assert whole == {("requirements/base.txt", 1, "FAL004")}
    assert {(p, n, c) for p, n, c, _ in envs("constraints/gpu.txt")} == whole


def test_a_dockerfile_that_copies_and_installs_a_named_requirements_file(project: Any) -> None:
    project(
        {
            "Dockerfile": "FROM python:3.11\nCOPY requirements-gpu.txt /tmp/\n"
            'RUN pip install -r /tmp/requirements-gpu.txt "flash-attn<2.6"\n',
            "requirements-gpu.txt": "flash-attn!=2.5.*\n",
        }
    )
    whole = envs(".")
    assert [(p, n, c) for p, n, c, _ in whole] == [("requirements-gpu.txt", 1, "FAL004")]
    assert envs("requirements-gpu.txt") == whole


def test_a_named_lock_is_read_with_its_manifest_and_the_other_way_round(project: Any) -> None:
    project(
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "1"\ndependencies = ["flash-attn>=2.5"]\n',
            "uv.lock": UV_LOCK.format(v="2.4.2"),
        }
    )
    stale = [("uv.lock", 4, "FAL006", ("pyproject.toml:4",))]
    assert envs(".") == stale
    assert envs("uv.lock") == stale  # a changed lock next to an unchanged manifest
    assert envs("pyproject.toml") == stale  # a changed manifest makes its unchanged lock stale
    r = run("--format", "json", "--ignore", "FAL012", "pyproject.toml")  # a uv project: test_install.py
    assert [f["code"] for f in r.json["findings"]] == ["FAL006"]  # not the lock's own FAL001


def test_what_git_ignores_or_exclude_leaves_out_is_not_an_includer(project: Any) -> None:
    project(
        {
            ".git/HEAD": "",
            ".gitignore": "local/\n",
            "local/requirements.txt": "flash-attn<2.6\n-c ../constraints.txt\n",
            "vendor/requirements.txt": "flash-attn<2.6\n-c ../constraints.txt\n",
            "app/requirements.txt": "flash-attn<2.6\n-c ../constraints.txt\n",
            "constraints.txt": "flash-attn!=2.5.*\n",
        }
    )
    found = envs("--exclude", "vendor/*", "constraints.txt")
    assert [(p, c) for p, _, c, _ in found] == [("app/requirements.txt", "FAL004")]


def test_the_project_root_bounds_the_search(project: Any) -> None:
    root = project(
        {
            "outer/requirements.txt": "flash-attn<2.6\n-c repo/constraints.txt\n",
            "outer/repo/.git/HEAD": "",
            "outer/repo/constraints.txt": "flash-attn!=2.5.*\n",
            "outer/repo/sub/requirements.txt": "flash-attn<2.6\n-c ../constraints.txt\n",
        }
    )
    # the repository (the folder with .git) ends at outer/repo: outer/requirements.txt is not in it
    found = envs(str(root / "outer/repo/constraints.txt"))
    assert [
        (p.replace("\\", "/").endswith("outer/repo/sub/requirements.txt"), c) for p, _, c, _ in found
    ] == [(True, "FAL004")]


def test_includers_are_parsed_only_when_they_name_the_file(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"pkg{i}/requirements.txt": "numpy\n" for i in range(50)}
    files["app/requirements.txt"] = "flash-attn<2.6\n-c ../constraints.txt\n"
    project({**files, "constraints.txt": "flash-attn!=2.5.*\n"})
    parsed: list[str] = []
    real = project_files.parse_file

    def spy(path: str, source: str, data: bytes | None = None, **options: Any) -> Any:
        parsed.append(path)
        return real(path, source, data, **options)

    monkeypatch.setattr(project_files, "parse_file", spy)
    found = project_files.includers([Target("constraints.txt", "requirements", True)], [])
    assert [t.path for t in found] == ["app/requirements.txt"]
    assert parsed == ["app/requirements.txt"]
