"""``--new-from-rev REV``: only what a change brings, judged against a real git repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any

import pytest

from tests.conftest import run

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="--new-from-rev reads git")
# How flash-attn builds (FAL011, FAL012) is test_install.py's; here which findings a change brings.
QUIET = ("--ignore", "FAL011,FAL012,FAL015")

ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str) -> str:
    proc = subprocess.run(
        ["git", *args], capture_output=True, text=True, check=True, env={**os.environ, **ENV}
    )
    return proc.stdout.strip()


@pytest.fixture
def repo(project: Any) -> Any:
    """The project folder as a git repository; call it with {name: text} and a message to commit."""
    git("init", "-q", "-b", "main")

    def commit(files: dict[str, str], message: str = "c") -> str:
        project(files)
        git("add", "-A")
        git("commit", "-qm", message)
        return git("rev-parse", "HEAD")

    commit.path = project.path  # type: ignore[attr-defined]
    commit.write = project  # type: ignore[attr-defined]
    return commit


def fingerprints() -> list[str]:
    doc = json.loads(run("--format", "sarif", "--isolated", *QUIET).out)
    return [r["partialFingerprints"]["faLint/v1"] for r in doc["runs"][0]["results"]]


def findings(*argv: str) -> list[tuple[str, int, str]]:
    r = run("--format", "json", "--isolated", *QUIET, *argv)
    assert r.code in (0, 1), r.err
    return r.codes()


def test_only_findings_the_change_brings(repo: Any) -> None:
    base = repo(
        {"requirements.txt": "torch\nflash-attn==2.4.2\n", "install.sh": "pip install flash-attn==2.3.6\n"}
    )
    # The old pin moves down two lines (not new); the script gains an unquoted, too-wide spec (new).
    repo.write(
        {
            "requirements.txt": "# GPU image\n\ntorch\nflash-attn==2.4.2\n",
            "install.sh": "pip install flash-attn==2.3.6\npip install 'flash-attn>=2.0'\n",
        }
    )
    everything = findings()
    assert ("requirements.txt", 4, "FAL001") in everything and ("install.sh", 1, "FAL001") in everything
    assert findings("--new-from-rev", base) == [("install.sh", 2, "FAL002")]
    assert findings("--new-from-rev", "main") == [("install.sh", 2, "FAL002")]  # any name git knows
    r = run("--isolated", *QUIET, "--new-from-rev", base)
    assert r.code == 0  # the only new finding is a warning: an old error fails no pull request
    assert "left out 2 finding(s)" in r.err


def test_an_old_finding_on_a_touched_line_is_shown(repo: Any) -> None:
    base = repo({"requirements.txt": "torch\nflash-attn==2.4.2\n"})
    before = fingerprints()
    repo.write({"requirements.txt": "torch\nflash-attn==2.4.2  # keep for the old cluster\n"})
    assert fingerprints() == before  # the same finding: shown because its line changed
    r = run("--format", "json", "--isolated", *QUIET, "--new-from-rev", base)
    assert r.code == 1 and r.codes() == [("requirements.txt", 2, "FAL001")]
    repo.write({"requirements.txt": "torch>=2\nflash-attn==2.4.2\n"})  # a neighbouring line only
    assert findings("--new-from-rev", base) == []


def test_a_finding_whose_related_line_changed_is_shown(repo: Any) -> None:
    files = {
        "requirements.txt": "flash-attn<2.6\n-c constraints.txt\n",
        "constraints.txt": "flash-attn!=2.5.*\n",
    }
    base = repo(files)
    assert ("requirements.txt", 1, "FAL004") in findings()
    repo.write({"constraints.txt": "flash-attn!=2.5.*  # broken wheels\n"})
    assert ("requirements.txt", 1, "FAL004") in findings("--new-from-rev", base)
    repo.write({"constraints.txt": "# cluster\nflash-attn!=2.5.*\n"})  # only moved: nothing new
    assert findings("--new-from-rev", base) == []


def test_one_more_copy_of_an_old_finding_is_new(repo: Any) -> None:
    base = repo({"install.sh": "pip install flash-attn==2.4.2\n"})
    repo.write({"install.sh": "pip install flash-attn==2.4.2\npip install flash-attn==2.4.2\n"})
    assert findings("--new-from-rev", base) == [("install.sh", 2, "FAL001")]
    # Added above the old one: the added line is the new finding, not the old one that moved down.
    repo.write({"install.sh": "pip install flash-attn==2.4.2\necho\npip install flash-attn==2.4.2\n"})
    git("add", "-A")
    git("commit", "-qm", "two")
    two = git("rev-parse", "HEAD")
    repo.write({"install.sh": "pip install flash-attn==2.4.2\npip install flash-attn==2.4.2\necho\n"})
    assert findings("--new-from-rev", two) == []  # same count, one moved
    assert findings("--new-from-rev", base) == [("install.sh", 2, "FAL001")]


def test_new_and_untracked_files_are_new(repo: Any) -> None:
    base = repo({"requirements.txt": "flash-attn>=2.5\n"})
    repo.write({"docker/Dockerfile": "FROM python:3.11\nRUN pip install flash-attn==2.4.2\n"})
    assert findings("--new-from-rev", base) == [("docker/Dockerfile", 2, "FAL001")]
    git("add", "-A")
    assert findings("--new-from-rev", base) == [("docker/Dockerfile", 2, "FAL001")]


def test_a_finding_fixed_by_the_change_is_simply_gone(repo: Any) -> None:
    base = repo({"requirements.txt": "flash-attn==2.4.2\n"})
    repo.write({"requirements.txt": "flash-attn==2.5.6\n"})
    r = run("--isolated", *QUIET, "--new-from-rev", base)
    assert r.code == 0 and r.out.startswith("All checks passed")


def test_from_a_subfolder_and_with_named_files(repo: Any) -> None:
    base = repo({"svc/requirements.txt": "flash-attn==2.4.2\n", "svc/other.txt": "x\n"})
    repo.write({"svc/requirements.txt": "flash-attn==2.4.2\nflash-attn<2.5\n"})
    os.chdir(repo.path / "svc")
    assert findings("--new-from-rev", base) == [("requirements.txt", 2, "FAL001")]
    assert findings("--new-from-rev", base, "requirements.txt") == [("requirements.txt", 2, "FAL001")]
    absolute = str(repo.path / "svc" / "requirements.txt")
    assert findings("--new-from-rev", base, absolute) == [(absolute, 2, "FAL001")]


def test_rev_files_are_read_even_where_gitattributes_leave_them_out_of_archives(repo: Any) -> None:
    base = repo(
        {"requirements.txt": "flash-attn==2.4.2\n", ".gitattributes": "requirements.txt export-ignore\n"}
    )
    repo.write({"requirements.txt": "# moved\nflash-attn==2.4.2\n"})
    assert findings("--new-from-rev", base) == []


def test_unusual_file_names_in_the_diff(repo: Any) -> None:
    name = "deps dir/requirements-\u00fc\tx.txt"
    base = repo({name: "flash-attn==2.4.2\n"})
    before = fingerprints()
    repo.write({name: "flash-attn==2.4.2  # touched\n"})
    assert fingerprints() == before  # git quotes the name in its diff; the line still counts as touched
    assert findings("--new-from-rev", base) == [(name, 1, "FAL001")]


def test_an_added_line_that_looks_like_a_diff_header(repo: Any) -> None:
    # With -U0 an added line '++ x' prints as '+++ x': it must not start a new file in the parse.
    base = repo({"install.sh": "echo\npip install flash-attn==2.4.2\n"})
    before = fingerprints()
    repo.write({"install.sh": "++ b/other.sh\necho\npip install flash-attn==2.4.2  # x\n"})
    assert fingerprints() == before
    assert findings("--new-from-rev", base) == [("install.sh", 3, "FAL001")]


@pytest.mark.parametrize("fmt", ["sarif", "github", "gitlab", "text"])
def test_every_format_reports_only_the_new_findings(repo: Any, fmt: str) -> None:
    base = repo({"requirements.txt": "flash-attn==2.4.2\n"})
    repo.write({"requirements.txt": "flash-attn==2.4.2\n", "install.sh": "pip install flash-attn==2.3.6\n"})
    r = run("--format", fmt, "--isolated", *QUIET, "--new-from-rev", base)
    assert r.code == 1
    text = r.out
    if fmt == "sarif":
        (result,) = json.loads(text)["runs"][0]["results"]
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "install.sh"
    elif fmt == "gitlab":
        assert [i["location"]["path"] for i in json.loads(text)] == ["install.sh"]
    else:
        assert "install.sh" in text and "requirements.txt:" not in text and "requirements.txt," not in text


def test_fix_touches_only_the_new_findings(repo: Any) -> None:
    base = repo({"requirements.txt": "flash-attn>=2.0\n"})
    repo.write({"requirements.txt": "flash-attn>=2.0\n", "constraints.txt": "flash-attn>=2.1\n"})
    r = run("--isolated", *QUIET, "--new-from-rev", base, "--fix")
    assert (repo.path / "constraints.txt").read_text() == "flash-attn>=2.5.0\n", r.err
    assert (repo.path / "requirements.txt").read_text() == "flash-attn>=2.0\n"


def test_config_key_and_an_empty_option_to_turn_it_off(repo: Any) -> None:
    base = repo({"requirements.txt": "flash-attn==2.4.2\n"})
    repo.write({"pyproject.toml": f'[tool.fa-lint]\nnew-from-rev = "{base}"\n'})
    r = run("--format", "json")
    assert r.code == 0 and r.json["findings"] == []
    r = run("--format", "json", "--new-from-rev", "")
    assert r.codes() == [("requirements.txt", 1, "FAL001")]


def test_usage_errors(
    repo: Any, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo({"requirements.txt": "flash-attn==2.4.2\n"})
    for rev, why in (("no-such-branch", "unknown revision 'no-such-branch'"), ("--all", "not a revision")):
        r = run("--isolated", *QUIET, f"--new-from-rev={rev}")
        assert r.code == 2 and r.out == "" and why in r.err, r.err
    r = run("--isolated", *QUIET, "--new-from-rev", "HEAD", "--stdin-filename", "requirements.txt")
    assert r.code == 2 and "standard input" in r.err
    outside = tmp_path_factory.mktemp("plain")
    (outside / "requirements.txt").write_text("flash-attn==2.4.2\n")
    os.chdir(outside)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(outside.parent))
    r = run("--isolated", *QUIET, "--new-from-rev", "HEAD")
    assert r.code == 2 and "not inside a git repository" in r.err and r.out == "", r.err
    monkeypatch.setenv("PATH", str(outside))  # no git at all
    r = run("--isolated", *QUIET, "--new-from-rev", "HEAD")
    assert r.code == 2 and "needs git" in r.err, r.err
