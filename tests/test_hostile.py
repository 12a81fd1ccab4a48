"""The hostile-repository reproducers of issue 23 (shared/reliability 19-26, 28-31), each rebuilt here
from its input: what a pull request commits can neither stop, blind, slow nor exhaust the check.

Inputs are generated, at sizes where the old code took minutes or gigabytes and the fixed one takes a
fraction of a second; speed itself is measured in benchmarks/ (scaling.py, scaling_shell.py).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fa_lint.files import git as fa_git
from fa_lint.files import project as project_files
from fa_lint.files import read
from fa_lint.files.discover import Target
from fa_lint.files.gitignore import GitIgnore, Rules
from fa_lint.shell.variables import MAX_EXPANDED
from tests.conftest import run
from tests.fuzz import assert_safe

OLD = "flash-attn==2.4.2\n"
HAS_GIT = shutil.which("git") is not None
needs_git = pytest.mark.skipif(not HAS_GIT, reason="git's own index and rules are the reference")
ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: str | Path = ".") -> str:
    proc = subprocess.run(
        ["git", *args], capture_output=True, text=True, check=True, cwd=cwd, env={**os.environ, **ENV}
    )
    return proc.stdout


def codes(*argv: str) -> list[tuple[str, int, str]]:
    r = run("--format", "json", *argv)
    assert "internal error" not in r.out + r.err, r.out + r.err
    assert r.code in (0, 1), r.err
    return r.codes()


# --- 19: variables that double each other ----------------------------------------------------------------

_BUDGET = f"variables expand past {MAX_EXPANDED:,} characters in this file"


def _doubling(n: int, assign: str, ref: str, sep: str = "\n") -> str:
    lines = [assign.format(i=0, v='"flash-attn==2.4.2 "')]
    lines += [assign.format(i=i, v=f'"{ref.format(i - 1)}{ref.format(i - 1)}"') for i in range(1, n)]
    return sep.join(lines)


@pytest.mark.parametrize("n", [24, 40])
@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("install.sh", lambda n: _doubling(n, "V{i}={v}", "$V{}") + f"\npip install $V{n - 1}\n"),
        (
            "Dockerfile",
            lambda n: (
                "FROM python:3.11\n"
                + _doubling(n, "ARG V{i}={v}", "${{V{}}}")
                + f"\nRUN pip install $V{n - 1}\n"
            ),
        ),
        (
            "Containerfile",
            lambda n: (
                "FROM python:3.11\n" + _doubling(n, "ENV V{i}={v}", "$V{}") + f"\nRUN pip install $V{n - 1}\n"
            ),
        ),
        (
            "Makefile",
            lambda n: (
                "install:\n\t" + _doubling(n, "V{i}={v}", "$$V{}", "; ") + f"; pip install $$V{n - 1}\n"
            ),
        ),
        (
            ".github/workflows/ci.yml",
            lambda n: (
                "jobs:\n  t:\n    runs-on: x\n    steps:\n      - run: |\n"
                + "".join(f"          {line}\n" for line in _doubling(n, "V{i}={v}", "$V{}").split("\n"))
                + f"          pip install $V{n - 1}\n"
            ),
        ),
    ],
)
def test_doubling_variables_stop_at_the_budget_with_a_located_problem(
    project: Any, name: str, make: Any, n: int
) -> None:
    # 24 lines took 9 s and 1.35 GB, 40 lines ran out of memory: every line doubled the stored value.
    project({name: make(n)})
    r = run("--format", "json", name)
    assert r.code == 1, r.err
    (f,) = r.json["findings"]
    assert (f["code"], f["message"][: len(_BUDGET)]) == ("FAL900", _BUDGET)
    # the line that crosses it: substitutions add 19 * 2^i characters at line i + 1
    crossing = next(i for i in range(n) if 19 * (2 ** (i + 1) - 2) > MAX_EXPANDED)
    first = {
        "install.sh": 1,
        "Dockerfile": 2,
        "Containerfile": 2,
        "Makefile": 2,
        ".github/workflows/ci.yml": 6,
    }
    assert f["line"] == (2 if name == "Makefile" else first[name] + crossing)


def test_expansion_under_the_budget_is_followed_as_before(project: Any) -> None:
    # ten doublings (a 512-character word) are read as the shell reads them: the pin is found
    lines = ["V0=x"] + [f"V{i}=$V{i - 1}$V{i - 1}" for i in range(1, 10)]
    project({"install.sh": "\n".join(lines) + '\npip install "flash-attn==2.4.2+$V9"\n'})
    assert {c for _, _, c in codes("--select", "FAL001", "install.sh")} == {"FAL001"}


# --- 20: links the walk cannot follow ------------------------------------------------------------------------


@pytest.mark.parametrize("args", [[], ["requirements.txt"], ["--format", "github", "."]])
def test_a_link_that_cannot_be_followed_costs_nothing(project: Any, args: list[str]) -> None:
    root = project({"requirements.txt": OLD, "docs/x.txt": "x\n"})
    os.symlink("self", root / "docs/self")  # ELOOP
    os.symlink("../requirements.txt/x", root / "docs/notdir")  # ENOTDIR
    os.symlink("loop-b", root / "docs/loop-a")
    os.symlink("loop-a", root / "docs/loop-b")
    os.symlink("nowhere", root / "docs/dangling")
    r = run(*(args if args[:1] == ["--format"] else ["--format", "json", *args]))
    assert r.code == 1 and "internal error" not in r.out + r.err, r.out + r.err
    if args[:1] != ["--format"]:
        assert r.codes() == [("requirements.txt", 1, "FAL001")]


def test_a_dependency_file_name_that_loops_is_a_located_problem(project: Any) -> None:
    root = project({"requirements.txt": OLD})
    os.symlink("requirements-dev.txt", root / "requirements-dev.txt")
    found = codes()
    assert found == [("requirements-dev.txt", 1, "FAL900"), ("requirements.txt", 1, "FAL001")]


def test_a_folder_that_cannot_be_listed_is_passed_over(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # EACCES (root reads every folder here, so the refusal is made by hand, where os.scandir raises)
    project({"requirements.txt": OLD, "secret/requirements.txt": OLD})
    real = os.scandir

    def scandir(path: Any = ".") -> Any:
        if os.path.basename(os.path.normpath(str(path))) == "secret":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert codes() == [("requirements.txt", 1, "FAL001")]


def test_the_filesystem_root_is_no_project_root(project: Any) -> None:
    # outside any repository, `cd / && fa-lint /tmp/x/requirements.txt` walked the whole filesystem
    root = project({"requirements.txt": OLD})
    os.chdir("/")
    assert project_files.project_root(str(root / "requirements.txt")) == os.path.realpath(root)


# --- 21: a .gitignore line that backtracks --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "ignored"),
    [
        ("*a*a*a*a*a*a*b", False),  # no "b" at the end of the name
        ("*a*a*a*a*a*a*b*", True),
        ("a*" * 30 + "b", False),
        ("*a" * 20 + "*b", False),
        ("**/a*a*a*a*a*/**/*a*a*a*a*b*", False),  # no folder of a's above it
        ("**/*a*a*a*a*a*a*a*a*b*", True),
        ("[a]*[a]*[a]*[a]*[a]*b*", True),
    ],
)
def test_a_backtracking_gitignore_pattern_is_matched_in_linear_time(
    project: Any, pattern: str, ignored: bool
) -> None:
    # (git 2.39's own wildmatch takes more than 8 minutes on the first of these: no reference here)
    name = "x/" + "a" * 200 + "-b-requirements.txt"  # 200: 60 s and more before, in the walk
    project({".git/HEAD": "", ".gitignore": pattern + "\n", name: OLD, "requirements.txt": OLD})
    expected = [("requirements.txt", 1, "FAL001")] + ([] if ignored else [(name, 1, "FAL001")])
    assert sorted(codes()) == sorted(expected)


def test_patterns_in_a_deep_tree_with_many_double_stars(project: Any) -> None:
    rules = Rules("**/a/**/a/**/a/**/b\n" * 3 + "*a*a*a*a*a*a*a*a*a*a*a*a*c\n")
    deep = "/".join(["a"] * 2000)
    assert rules.verdict(deep + "/x", False) is None
    assert rules.verdict(deep + "/b", False) is True
    assert rules.verdict("a" * 20000 + "c", False) is True


_ALPHABET = ["a", "b", "*", "?", "/", "[", "]", "[!a]", "[a-b]", "[[:alpha:]]", "**/", "/**", "!", "\\", " "]
_NAMES = ["a", "b", "ab", "ba", "aa", "a-b", "[a]", "a b", "*", "!a", "bab"]


@needs_git
@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(_ALPHABET), min_size=1, max_size=6).map("".join), min_size=1, max_size=3
    ),
    st.lists(
        st.lists(st.sampled_from(_NAMES), min_size=1, max_size=3).map("/".join), min_size=1, max_size=10
    ),
)
def test_gitignore_patterns_leave_out_what_git_leaves_out(patterns: list[str], paths: list[str]) -> None:
    # git status --ignored is the reference: the same files, for any mix of git's glob syntax
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        git("init", "-q", cwd=tmp)
        Path(tmp, ".gitignore").write_text("\n".join(patterns) + "\n")
        made = []
        for p in sorted(set(paths)):
            full = Path(tmp, p)
            try:
                full.parent.mkdir(parents=True, exist_ok=True)
                if not full.exists():
                    full.write_text("")
            except OSError:
                continue
            if full.is_file():
                made.append(p)
        out = git("status", "--porcelain", "--ignored", "-uall", "-z", cwd=tmp)
        theirs = {item[3:] for item in out.split("\0") if item.startswith("!! ")}
        ignored = GitIgnore()
        mine = {p for p in made if ignored(os.path.join(tmp, p))}
        assert mine == theirs & set(made), (patterns, made)


# --- 22: a deep committed tree ----------------------------------------------------------------------------


@pytest.mark.parametrize("args", [[], ["requirements.txt"]])
def test_a_deep_folder_tree_is_walked_without_recursion(project: Any, args: list[str]) -> None:
    root = project({"requirements.txt": OLD, ".gitignore": "*.log\n"})
    for _ in range(1500):  # 3,000 characters, under PATH_MAX; the old walk recursed once a level
        os.mkdir("a")
        os.chdir("a")
    Path("requirements.txt").write_text(OLD)
    os.chdir(root)
    try:
        found = codes(*args)
        assert ("requirements.txt", 1, "FAL001") in found
        assert len(found) == (2 if not args else 1)
    finally:
        remove_deep(root / "a")


def remove_deep(top: Path) -> None:
    """shutil.rmtree (and so pytest's clean-up) recurses once a level: down and back up, by hand."""
    here = os.getcwd()
    os.chdir(top)
    depth = 0
    while os.path.isdir("a"):
        os.chdir("a")
        depth += 1
    for name in os.listdir("."):
        os.remove(name)
    for _ in range(depth):
        os.chdir("..")
        os.rmdir("a")
    os.chdir(here)
    top.rmdir()


# --- 23 and 30: the files that include a named one ----------------------------------------------------------


def test_a_reverse_include_chain_is_searched_once(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # 1,000 files, each -r the next, the last one named (pre-commit's way): 133 s, n^3, before
    n = 1000
    files = {f"requirements-{k:05d}.txt": f"-r requirements-{k + 1:05d}.txt\ntorch\n" for k in range(n)}
    project({**files, f"requirements-{n:05d}.txt": OLD, ".git/HEAD": ""})
    parsed: list[str] = []
    real = project_files.parse_file

    def spy(path: str, source: str, data: bytes | None = None) -> Any:
        parsed.append(path)
        return real(path, source, data)

    monkeypatch.setattr(project_files, "parse_file", spy)
    named = [Target(f"requirements-{n:05d}.txt", "requirements", True)]
    found = project_files.includers(named, named)
    assert sorted(t.path for t in found) == sorted(files)  # every file of the chain takes part
    assert len(parsed) == n  # each parsed once
    assert codes(f"requirements-{n:05d}.txt") == [(f"requirements-{n:05d}.txt", 1, "FAL001")]


def test_the_search_holds_one_files_bytes_at_a_time(project: Any) -> None:
    # eight 2 MB files of comments beside the named one: all their bytes were kept until the end
    big = "# x\n" * 500_000
    project({**{f"requirements-{i}.txt": big for i in range(8)}, "requirements.txt": OLD, ".git/HEAD": ""})
    named = [Target("requirements.txt", "requirements", True)]
    tracemalloc.start()
    try:
        assert project_files.includers(named, named) == []
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(big), peak  # one file's bytes (and a copy), never eight


@pytest.mark.parametrize(
    "including",
    [
        "-rrequirements-base.txt\n",
        "--requirement=requirements-base.txt\n",
        "-r ./requirements-base.txt\n",
        '-r "requirements-base.txt"\n',
    ],
)
def test_includers_are_found_however_the_include_is_written(project: Any, including: str) -> None:
    project({"requirements.txt": including, "requirements-base.txt": "flash-attn<2.6\n", ".git/HEAD": ""})
    named = [Target("requirements-base.txt", "requirements", True)]
    assert [t.path for t in project_files.includers(named, named)] == ["requirements.txt"]


def test_many_names_hold_a_stretch_of_words_at_a_time() -> None:
    # a file of one-letter words: the list of all its words would be twenty times its size
    names = project_files.Names({f"deps{i:03d}".encode() for i in range(80)} | {b"z.txt"})
    data = b"a " * 2_000_000 + b"-rz.txt\n" + b"b " * 1_000_000
    tracemalloc.start()
    try:
        assert names.mentioned(data) == {b"z.txt"}
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(data), peak


def test_many_names_are_found_as_a_few_are() -> None:
    # past 64 names (a large tree, a folder outside any repository) the words of a file are listed
    # and intersected with the names; a few are looked for one by one: both find the same names
    import random

    rng = random.Random(23)
    shared = [f"req-{i}.txt".encode() for i in range(80)] + [b"constraints.txt", b"base.in", b"r.txt"]
    distinct = [f"deps{i:03d}".encode() for i in range(90)]  # more than 64 endings: no pattern of them
    glue = [b" ", b"\n", b"=", b"/", b'"', b"-r", b"-c", b"--requirement=", b"x", b"-", b"\t#"]
    for n in range(400):
        pool = shared if n % 2 else distinct
        data = b"".join(
            rng.choice(glue) + rng.choice(pool) + rng.choice(glue) for _ in range(rng.randint(0, 12))
        )
        names = set(rng.sample(pool, 70))
        many = project_files.Names(names)
        assert not many.few
        expected = {n for n in names if n in data and project_files._as_word(data, n)}
        assert many.mentioned(data) == expected, data
        few = set(rng.sample(sorted(names), 5))
        assert project_files.Names(few).mentioned(data) == {n for n in expected if n in few}, data


# --- 24: what git tracks is checked, whatever .gitignore says ---------------------------------------------------


@needs_git
def test_tracked_files_are_checked_whatever_gitignore_says(project: Any) -> None:
    root = project(
        {
            "requirements.txt": OLD,
            "docker/Dockerfile": "FROM python:3.11\nRUN pip install flash-attn==2.3.0\n",
            "local/requirements.txt": OLD,  # untracked and ignored: the developer's own
            ".gitignore": "requirements.txt\ndocker/\nlocal/\n",
        }
    )
    git("init", "-q")
    git("add", "-f", "requirements.txt", "docker/Dockerfile", ".gitignore")
    git("commit", "-qm", "pr")
    found = {p for p, _, _ in codes()}
    assert found == {"requirements.txt", "docker/Dockerfile"}
    assert {p for p, _, _ in codes("--no-respect-gitignore")} == found | {"local/requirements.txt"}
    # the named-file form looks for includers the same way
    (root / "docker/requirements-base.txt").write_text("-r ../requirements.txt\n")
    git("add", "-f", "docker/requirements-base.txt")
    named = [Target("requirements.txt", "requirements", True)]
    found_includers = project_files.includers(named, named, ignored=GitIgnore())
    assert [t.path for t in found_includers] == [os.path.join("docker", "requirements-base.txt")]


@needs_git
def test_without_git_the_patterns_alone_decide(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    project({"requirements.txt": OLD, "vendored/requirements.txt": OLD, ".gitignore": "vendored/\n"})
    git("init", "-q")
    git("add", "-f", ".")
    path = os.environ["PATH"]
    monkeypatch.setenv("PATH", "")  # no git: as outside a work tree, .gitignore decides
    assert codes() == [("requirements.txt", 1, "FAL001")]
    monkeypatch.setenv("PATH", path)
    assert {p for p, _, _ in codes()} == {"requirements.txt", "vendored/requirements.txt"}


@needs_git
def test_the_index_is_read_without_running_what_the_repository_configures(project: Any) -> None:
    root = project({"requirements.txt": OLD, "vendored/requirements.txt": OLD, ".gitignore": "vendored/\n"})
    git("init", "-q")
    git("add", "-f", ".")
    ran = root / "ran"
    git("config", "core.fsmonitor", f"touch {ran}")  # git ls-files runs it when it reads the index
    git("config", "core.pager", f"touch {ran}")
    git("config", "core.hooksPath", str(root / "hooks"))
    (root / "hooks").mkdir()
    for hook in ("post-index-change", "post-checkout"):
        (root / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {ran}\n")
        (root / "hooks" / hook).chmod(0o755)
    # a committed executable named git, and a PATH that would find it
    (root / "git").write_text(f"#!/bin/sh\ntouch {ran}\n")
    (root / "git").chmod(0o755)
    os.environ["PATH"] = os.pathsep.join(["", ".", os.environ["PATH"]])
    try:
        assert {p for p, _, _ in codes()} == {"requirements.txt", "vendored/requirements.txt"}
    finally:
        os.environ["PATH"] = os.environ["PATH"].split(os.pathsep, 2)[2]
    assert not ran.exists()
    assert fa_git.executable() is not None and not fa_git.executable().startswith(str(root))


# --- 25: --diff output ----------------------------------------------------------------------------------


def test_diff_quotes_file_names_and_escapes_what_a_runner_would_act_on(project: Any) -> None:
    folder = "x\n::error file=a::FORGED\n"
    project(
        {
            f"{folder}/requirements.txt": OLD,
            "requirements.txt": "flash-attn>=2.0\n::error::CONTEXT\n\x1b]0;TITLE\x07\n ::warning::X\n",
        }
    )
    r = run("--diff", "--unsafe-fixes", ".")
    assert r.code == 1, r.err
    assert_safe(r.out, "diff", 0)
    assert '--- "a/x\\n::error file=a::FORGED\\n/requirements.txt"' in r.out.split("\n")
    assert " \\x3a:error::CONTEXT" in r.out.split("\n")
    assert "--diff shows 3 line(s) of requirements.txt escaped" in r.err


@needs_git
def test_a_diff_of_plain_and_quoted_names_applies_with_git(project: Any) -> None:
    root = project(
        {
            "requirements.txt": OLD,
            "sub dir/requirements.txt": OLD,
            "ünï/requirements.txt": OLD,
            "##[x]##vso[y]/requirements.txt": OLD,
        }
    )
    git("init", "-q")
    r = run("--diff", "--unsafe-fixes", ".")
    assert r.code == 1
    assert '+++ "b/\\303\\274n\\303\\257/requirements.txt"' in r.out  # as git writes it (core.quotePath)
    # "##" in a name: quoted with "#" in octal, so no header line holds a CI command's opening
    assert '+++ "b/\\043\\043[x]\\043\\043vso[y]/requirements.txt"' in r.out
    assert "##[" not in r.out and "##vso[" not in r.out
    subprocess.run(["git", "apply", "--check", "-"], input=r.out.encode(), cwd=root, check=True)


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(
    st.text(
        st.sampled_from(
            ["a", " ", "\n", "\r", "\t", ":", "#", "[", "\x1b", "\x07", "\u2028", "\u202e", '"', "\\"]
        ),
        min_size=1,
        max_size=12,
    )
)
def test_no_file_name_or_line_can_forge_diff_output(text: str) -> None:
    import tempfile

    from fa_lint import engine
    from fa_lint.fixes import apply as fix

    name = text.replace("/", "_").strip() or "_"
    if name in (".", ".."):
        name = "_"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp, name)
        try:
            folder.mkdir()
        except OSError:
            return
        (folder / "requirements.txt").write_text(f"{text}\nflash-attn==2.4.2\n{text}\n", encoding="utf-8")
        report = engine.check([str(folder / "requirements.txt")])
        for outcome in fix.run(report.findings, unsafe=True, dry_run=True):
            if outcome.applied:
                patch = outcome.patch()[0]
                assert_safe(patch.replace("\r\n", "\n"), "diff", 0)


# --- 26: runs of blanks ------------------------------------------------------------------------------------

BLANKS = " " * 200_000


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("requirements.txt", f"torch{BLANKS}\n", []),
        ("requirements.txt", f'flash-attn>=2.0 ; python_version >= "3"{BLANKS}\n', [(1, "FAL002")]),
        ("requirements.txt", f"flash-attn{BLANKS}>=2.0\n", [(1, "FAL002")]),
        ("requirements.txt", f"flash-attn==2.4.2{BLANKS}--hash=sha256:{'a' * 64}\n", [(1, "FAL001")]),
        ("requirements.txt", f"flash-attn==2.4.2{BLANKS}\t{BLANKS}# pinned\n", [(1, "FAL001")]),
        ("pyproject.toml", f'[tool.poetry.dependencies]\nflash-attn = "{BLANKS}^2.4.2"\n', None),
        ("Pipfile", f'[packages]\nflash-attn = "{BLANKS}==2.4.2"\n', [(2, "FAL001")]),
        ("setup.cfg", f"[options]\ninstall_requires =\n    flash-attn{BLANKS}==2.4.2\n", [(3, "FAL001")]),
        ("tox.ini", f"[testenv]\ndeps =\n    flash-attn{BLANKS}==2.4.2{BLANKS}\n", [(3, "FAL001")]),
        (
            "Makefile",
            f"V ={BLANKS}2.4.2{BLANKS}\ninstall:\n\tpip install flash-attn==$(V)\n",
            [(3, "FAL001")],
        ),
    ],
)
def test_a_long_run_of_blanks_is_read_in_linear_time(
    project: Any, name: str, text: str, expected: list[tuple[int, str]] | None
) -> None:
    # 16,000 blanks took 6-8 s (n^2 regex retries), 200,000 under --fix ran for over ten minutes
    project({name: text})
    found = [(line, code) for _, line, code in codes(name)]
    if expected is not None:
        assert [f for f in found if f[1] not in ("FAL011", "FAL012")] == expected
    r = run("--diff", "--unsafe-fixes", name)
    assert r.code in (0, 1) and "internal error" not in r.err


# --- 28: a Dockerfile of chained stages ----------------------------------------------------------------------


def test_each_stage_of_a_long_chain_keeps_its_own_image(project: Any) -> None:
    n = 2000
    lines = ["FROM python:3.11 AS s0", "ARG FA=2.4.2", "ENV A0=1"]
    for i in range(1, n):
        lines += [f"FROM s{i - 1} AS s{i}", f"ENV A{i}=$A{i - 1}", "RUN pip install flash-attn==$FA"]
    project({"Dockerfile": "\n".join(lines) + "\n"})
    found = [(line, code) for _, line, code in codes("--select", "FAL001", "Dockerfile")]
    assert found == [(3 * i + 3, "FAL001") for i in range(1, n)]


# --- 29: --new-from-rev reads only what a check can read --------------------------------------------------


@needs_git
def test_new_from_rev_reads_only_the_dependency_files_of_rev(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    project(
        {
            "requirements.txt": "-r deps/base.pins\nflash-attn==2.4.2\n",
            "deps/base.pins": "flash-attn<2.6\n",  # no catalogue name: reached as an include
            "data/blob1.bin": "weights 0123456789abcdef\n" * 40_000,
            "data/notes.txt": "requirements.txt is the file to read\n",
        }
    )
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "base")
    Path("requirements.txt").write_text("-r deps/base.pins\nflash-attn==2.4.2\ntorch\n")
    asked: list[bytes] = []
    real = fa_git.Batch.get

    def spy(self: fa_git.Batch, name: bytes) -> bytes | None:
        body = real(self, name)
        asked.append(body or b"")
        return body

    monkeypatch.setattr(fa_git.Batch, "get", spy)
    r = run("--format", "json", "--isolated", "--new-from-rev", "HEAD", ".")
    assert r.code == 0 and r.json["findings"] == [], r.out + r.err
    assert sorted(asked) == sorted([b"-r deps/base.pins\nflash-attn==2.4.2\n", b"flash-attn<2.6\n"])


@needs_git
def test_a_textconv_the_checkout_selects_is_not_run(project: Any) -> None:
    project({"requirements.txt": OLD, ".gitattributes": "* diff=broken\n"})
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "base")
    git("config", "diff.broken.textconv", "false")  # fails on every file it is given
    Path("requirements.txt").write_text(OLD + "torch\n")
    r = run("--format", "json", "--isolated", "--new-from-rev", "HEAD", ".")  # was exit 2: textconv failed
    assert r.code == 0 and "left out 1 finding(s) HEAD already had" in r.err, r.err


# --- 31: what CPython's parser refuses -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["setup.py", "noxfile.py"])
@pytest.mark.parametrize("chain", ["-" * 20_000, "not " * 10_000, "~" * 10_000, "(" * 10_000])
def test_a_long_unary_chain_is_a_located_problem(project: Any, name: str, chain: str) -> None:
    head = "import nox\n" if name == "noxfile.py" else ""
    project(
        {
            name: f"{head}x = {chain}1\nfrom setuptools import setup\nsetup(install_requires=['flash-attn==2.4.2'])\n"
        }
    )
    r = run("--format", "json", name)
    assert r.code == 1 and "internal error" not in r.out, r.out
    (f,) = r.json["findings"]
    assert f["code"] == "FAL900" and ("nests too deeply" in f["message"] or "syntax error" in f["message"])


# --- numbers past int()'s digit limit (found by benchmarks/backtracking.py) -------------------------------------

DIGITS = "0" * read.DIGITS


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("requirements.txt", f"flash-attn==2.4.2{DIGITS}\n", (1, 1)),
        ("uv.lock", f'[[package]]\nname = "flash-attn"\nversion = "2.4.{DIGITS}"\n', (3, 16)),
        ("Dockerfile", f"FROM python:3.{DIGITS}\nRUN pip install flash-attn==2.4.2\n", (1, 6)),
        ("Dockerfile", f"FROM python:3.11\nARG V=2.{DIGITS}\nRUN pip install flash-attn==$V\n", (3, 17)),
        ("pyproject.toml", f'[project]\ndependencies = ["flash-attn>=2.{DIGITS}"]\n', (2, 18)),
    ],
)
def test_a_version_no_int_can_hold_is_located(
    project: Any, name: str, text: str, where: tuple[int, int]
) -> None:
    project({name: text})
    r = run("--format", "json", name)
    assert r.code == 1 and "internal error" not in r.out + r.err, r.out + r.err
    problems = [(f["line"], f["column"]) for f in r.json["findings"] if f["code"] in ("FAL900", "FAL901")]
    assert where in problems


# --- the smaller ones -------------------------------------------------------------------------------------


def test_verify_prints_an_interpreter_path_escaped() -> None:
    from fa_lint.verify.cli import main as verify

    err = io.StringIO()
    assert verify(["--python", "x\n::error::FORGED\x1b]0;T\x07"], out=io.StringIO(), err=err) == 2
    assert_safe(err.getvalue(), "text", 0)
    assert "x\\n::error::FORGED\\x1b]0;T\\x07" in err.getvalue()


def test_standard_input_is_read_no_further_than_the_limit(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Endless(io.RawIOBase):
        given = 0

        def readable(self) -> bool:
            return True

        def readinto(self, b: Any) -> int:
            n = len(b)
            b[:n] = b"a" * n
            Endless.given += n
            return n

    stream = io.BufferedReader(Endless())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stream))
    r = run("--format", "json", "--stdin-filename", "requirements.txt")
    assert r.codes() == [("requirements.txt", 1, "FAL900")]
    assert "too large" in r.json["findings"][0]["message"]
    assert Endless.given <= read.MAX_BYTES + 2 * io.DEFAULT_BUFFER_SIZE


def test_fix_leaves_read_only_and_hard_linked_files_alone(project: Any) -> None:
    root = project({"a/requirements.txt": OLD, "b/requirements.txt": OLD})
    (root / "a/requirements.txt").chmod(0o444)
    os.link(root / "b/requirements.txt", root / "b-copy.txt")
    r = run("--fix", "--unsafe-fixes", "a/requirements.txt", "b/requirements.txt")
    assert (root / "a/requirements.txt").read_text() == OLD and (
        root / "b/requirements.txt"
    ).read_text() == OLD
    assert "the file is read-only" in r.err and "other hard link(s)" in r.err
    (root / "a/requirements.txt").chmod(0o644)
    run("--fix", "--unsafe-fixes", "a/requirements.txt")
    assert (root / "a/requirements.txt").read_text() == "flash-attn==2.5.0\n"


@pytest.mark.parametrize("spelled", [".GIT/config", ".Git/config", ".git./config", "GIT~1/config"])
def test_an_include_into_git_in_any_spelling_is_not_read(project: Any, spelled: str) -> None:
    root = project(
        {".git/config": "[remote]\n\turl = https://x:TOKEN@host/r\n", "requirements.txt": f"-r {spelled}\n"}
    )
    alias = root / spelled.split("/", maxsplit=1)[0]
    if not alias.exists():
        alias.symlink_to(".git")  # what a case-insensitive disk (or Windows) opens
    r = run("--format", "json", "requirements.txt")
    assert "TOKEN" not in r.out
    assert [(f["code"], "inside .git" in f["message"]) for f in r.json["findings"]] == [("FAL010", True)]


# --- tree-sitter-bash's error recovery: a parse that meets an error is stopped at a bound ---------------


def test_a_costly_stretch_is_stopped_and_the_next_line_is_still_read(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fa_lint.shell import parse as shell_parse

    # The bounds made tiny, so that the stop comes for small inputs whatever the machine's speed.
    monkeypatch.setattr(shell_parse, "PARSE_SECONDS", 0.0)
    monkeypatch.setattr(shell_parse, "FILE_SECONDS", 0.0)
    project({"pipes.sh": "|" * 3000 + "\npip install flash-attn==2.4.2\n"})
    found = run("--format", "json", "pipes.sh").codes()
    assert ("pipes.sh", 1, "FAL900") in [f[:3] for f in found]
    assert ("pipes.sh", 2, "FAL001") in [f[:3] for f in found]  # read a line at a time past the stop


def test_a_costly_script_is_read_a_line_at_a_time(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from fa_lint.shell import parse as shell_parse

    monkeypatch.setattr(shell_parse, "PARSE_SECONDS", 0.0)  # every erroneous stretch stops at once
    script = "echo a)b a)b\n" * 20 + "pip install flash-attn==2.4.2\n"
    project({"install.sh": script})
    found = [f[:3] for f in run("--format", "json", "install.sh").codes()]
    assert ("install.sh", 21, "FAL001") in found
    assert not any(code == "FAL900" for *_, code in found)  # each line alone reads in time


def test_error_free_text_never_meets_the_bound(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from fa_lint.shell import parse as shell_parse

    monkeypatch.setattr(shell_parse, "PARSE_SECONDS", 0.0)
    monkeypatch.setattr(shell_parse, "FILE_SECONDS", 0.0)
    project({"install.sh": "set -e\n" + "echo ok && true\n" * 500 + "pip install flash-attn==2.4.2\n"})
    found = [f[:3] for f in run("--format", "json", "install.sh").codes()]
    assert found == [("install.sh", 502, "FAL001"), ("install.sh", 502, "FAL012")]


# --- issue 33, round 4: the sandbox (35, 37, 44) and suppression comments (43) --------------------------


def _tree_object(entries: list[tuple[bytes, bytes, str]]) -> str:
    """A tree object written as given (git mktree refuses ".." and ".git"; clone and fetch take them)."""
    import binascii

    data = b"".join(mode + b" " + name + b"\0" + binascii.unhexlify(sha) for mode, name, sha in entries)
    return _object("tree", data)


def _object(kind: str, data: bytes) -> str:
    proc = subprocess.run(
        ["git", "hash-object", "-t", kind, "-w", "--literally", "--stdin"],
        input=data,
        capture_output=True,
        check=True,
        env={**os.environ, **ENV},
    )
    return proc.stdout.decode().strip()


def _hostile_rev(name: str = "evil") -> None:
    """A branch whose tree holds "..", ".git", a link and a path below that link (35): each entry
    is a requirements file with an old pin, which fa-lint must never write where the path points."""
    base = git("rev-parse", "HEAD:requirements.txt").strip()
    blob = _object("blob", OLD.encode())
    inner = _tree_object([(b"100644", b"requirements.txt", blob)])
    up = _tree_object([(b"40000", b"escaped", inner)])
    link = _object("blob", b"..")
    top = _tree_object(
        [
            (b"40000", b"..", up),
            (b"40000", b".git", inner),
            (b"40000", b".GIT.", inner),
            (b"120000", b"out", link),
            (b"40000", b"out", inner),  # "out/requirements.txt", through the link: "../requirements.txt"
            (b"100644", b"requirements.txt", base),
        ]
    )
    commit = git("commit-tree", top, "-m", "evil").strip()
    git("update-ref", f"refs/heads/{name}", commit)


@needs_git
def test_new_from_rev_writes_nothing_outside_its_temporary_folder(
    project: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # ../shared/reliability/35: a tree entry ".." made _materialise write $TMPDIR/escaped/...; one named
    # ".git" ended the run (exit 2, FileExistsError).
    root = project({"repo/requirements.txt": "torch==2.3.1\n"})
    monkeypatch.chdir(root / "repo")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "base")
    _hostile_rev()
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    r = run("--format", "json", "--new-from-rev", "evil", ".")
    assert r.code == 0 and r.json["findings"] == [], r.out + r.err
    assert sorted(p.name for p in root.iterdir()) == ["repo", "temp"]  # no "escaped" beside them
    assert list(temp.iterdir()) == []  # fa-lint's own folder, removed


@needs_git
@pytest.mark.parametrize(
    "config",
    [
        "filter.evil.clean=touch RAN-CLEAN; cat",
        "filter.evil.process=touch RAN-PROCESS",  # not git's protocol: git died, exit 2
        "filter.e=vil.clean=touch RAN-ODD; cat",  # a name -c cannot spell
    ],
)
def test_new_from_rev_runs_no_filter_driver(project: Any, config: str) -> None:
    # ../shared/reliability/37: git diff ran the clean (or process) filter that the repository's own
    # .git/config defines and its committed .gitattributes selects, on each work-tree file it read.
    project({"requirements.txt": "flash-attn==2.5.8\n", ".gitattributes": "*.txt filter=evil\n"})
    git("init", "-q")
    git("-c", "core.fsmonitor=", "add", "-A")
    git("-c", "core.fsmonitor=", "commit", "-qm", "base")
    key, value = config.rsplit("=", 1) if config.count("=") > 1 else config.split("=", 1)
    if "e=vil" in config:
        key, value = "filter.e=vil.clean", "touch RAN-ODD; cat"
        Path(".gitattributes").write_text("*.txt filter=e=vil\n")
    git("config", key, value)
    git("config", key.rsplit(".", 1)[0] + ".required", "true")  # a filter that fails ends git's run
    Path("requirements.txt").write_text("flash-attn==2.6.3\n")
    r = run("--format", "json", "--new-from-rev", "HEAD", ".")
    ran = [p.name for p in Path().iterdir() if p.name.startswith("RAN")]
    assert ran == [], ran
    if "e=vil" in config:  # refused with the reason, never run
        assert r.code == 2 and "filter git cannot be told to skip" in r.err, r.err
    else:
        assert r.code == 0 and r.json["findings"] == [], r.out + r.err


@needs_git
def test_new_from_rev_runs_no_filter_of_a_submodule(project: Any, tmp_path: Path) -> None:
    # The class of 37: with diff.submodule=diff, git diff starts a git in each submodule, whose own
    # configuration defines filters the top repository's does not name.
    root = project(
        {"sub/requirements.txt": "flash-attn==2.5.8\n", "sub/.gitattributes": "*.txt filter=sub\n"}
    )
    git("init", "-q", cwd=root / "sub")
    git("add", "-A", cwd=root / "sub")
    git("commit", "-qm", "s", cwd=root / "sub")
    repo = root / "repo"
    repo.mkdir()
    (repo / "requirements.txt").write_text("torch\n")
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("-c", "protocol.file.allow=always", "submodule", "-q", "add", "../sub", "sub", cwd=repo)
    git("commit", "-qm", "base", cwd=repo)
    git("config", "diff.submodule", "diff", cwd=repo)
    git("config", "filter.sub.clean", f"touch {tmp_path}/RAN-SUB; cat", cwd=repo / "sub")
    (repo / "sub/requirements.txt").write_text("flash-attn==2.6.3\n")
    (repo / "requirements.txt").write_text("torch\nnumpy\n")
    os.chdir(repo)
    r = run("--new-from-rev", "HEAD", ".")
    assert r.code == 0, r.err
    assert not (tmp_path / "RAN-SUB").exists()


def test_git_is_run_with_every_program_the_checkout_names_turned_off() -> None:
    # The class of 37: each setting that makes git start a program is overridden on the command line or
    # in the environment, for every git fa-lint runs (the filters by name, test above).
    settings = dict(zip(fa_git.SAFE[2::2], fa_git.SAFE[2::2], strict=True))
    keys = {s.split("=", 1)[0] for s in settings}
    assert {"core.fsmonitor", "core.hooksPath", "protocol.allow"} <= keys
    assert "protocol.allow=never" in settings  # no transport: ssh, ext::, askpass, credential helpers
    assert fa_git.QUIET["GIT_OPTIONAL_LOCKS"] == "0"  # git diff writes no index back
    assert fa_git.QUIET["GIT_NO_LAZY_FETCH"] == "1"


@needs_git
@pytest.mark.parametrize(
    ("url", "allow"),
    [
        ("ssh://example.invalid/x.git", "protocol.ssh.allow"),
        ("ext::sh -c touch% {ran}/RAN-EXT", "protocol.ext.allow"),  # ext:: is never allowed by default
    ],
)
def test_a_partial_clone_fetches_nothing_and_runs_no_transport(
    project: Any, tmp_path: Path, url: str, allow: str
) -> None:
    # A missing object in a repository that says it is a partial clone: git would fetch it from the
    # promisor remote, with the ssh program the repository's own configuration names, or the command
    # of an ext:: URL it allows (protocol.<name>.allow outranks a protocol.allow given with -c).
    project({"requirements.txt": OLD})
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "base")
    blob = git("rev-parse", "HEAD:requirements.txt").strip()
    git("config", "extensions.partialClone", "origin")
    git("config", "remote.origin.url", url.format(ran=tmp_path))
    git("config", "remote.origin.promisor", "true")
    git("config", allow, "always")
    git("config", "core.sshCommand", f"touch {tmp_path}/RAN-SSH; false")
    obj = Path(".git/objects", blob[:2], blob[2:])
    obj.chmod(0o644)
    obj.unlink()
    Path("requirements.txt").write_text(OLD + "torch\n")
    r = run("--format", "json", "--new-from-rev", "HEAD", ".")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("RAN")] == []
    assert "internal error" not in r.err, r.err


def test_a_configuration_that_links_out_of_the_repository_is_not_read(project: Any) -> None:
    # ../shared/reliability/44: a committed fa-lint.toml linking to ../outside/fa-lint.toml (ignore =
    # ["FAL001"]) was read and applied: exit 0. Not read, reported where the link is, defaults apply.
    root = project({"outside/fa-lint.toml": 'ignore = ["FAL001"]\n', "repo/requirements.txt": OLD})
    (root / "outside/bad.toml").write_text("secret line\n")
    (root / "repo/.git").mkdir()
    os.chdir(root / "repo")
    for name, target in (
        ("fa-lint.toml", "../outside/fa-lint.toml"),
        (".fa-lint.toml", "../outside/bad.toml"),
    ):
        os.symlink(target, name)
        found = codes(".")
        assert (name, 1, "FAL900") in found and ("requirements.txt", 1, "FAL001") in found, found
        assert "secret" not in run(".").out and "invalid TOML" not in run(".").out
        os.unlink(name)
    Path("sub").mkdir()
    os.symlink("../../outside/fa-lint.toml", "sub/pyproject.toml")
    Path("sub/requirements.txt").write_text(OLD)
    assert ("sub/requirements.txt", 1, "FAL001") in codes(".")
    # a link that stays inside the repository is a configuration like any other
    Path("shared.toml").write_text('ignore = ["FAL001"]\n')
    os.symlink("shared.toml", "fa-lint.toml")
    os.unlink("sub/pyproject.toml")
    assert not any(code == "FAL001" for *_, code in codes("."))


def test_a_gitignore_that_is_a_link_is_not_read(project: Any) -> None:
    # git 2.32 and later read no .gitignore through a symbolic link; nor does fa-lint (44, the class)
    root = project({"outside/ignore": "*.txt\n", "repo/requirements.txt": OLD})
    os.chdir(root / "repo")
    os.symlink("../outside/ignore", ".gitignore")
    assert ("requirements.txt", 1, "FAL001") in codes(".")


@pytest.mark.parametrize(
    ("name", "text", "suppressed"),
    [
        # 43: pip's comment starts at "#" opening the line or after a blank: this is the URL's fragment
        (
            "requirements.txt",
            "flash-attn @ https://github.com/Dao-AILab/flash-attention/releases/download/v2.4.2/"
            "flash_attn-2.4.2+cu122torch2.1cxx11abiFALSE-cp310-cp310-linux_x86_64.whl#noqa\n",
            False,
        ),
        ("requirements.txt", "flash-attn==2.4.2 #noqa\n", True),
        ("requirements.txt", "flash-attn==2.4.2\t# noqa: FAL001\n", True),
        # 43: inside a quoted shell word
        ("Dockerfile", "FROM x\nRUN pip install flash-attn==2.4.2 && echo 'build #noqa'\n", False),
        ("Dockerfile", "FROM x\nRUN pip install flash-attn==2.4.2  # noqa\n", True),
        ("install.sh", 'pip install flash-attn==2.4.2 && echo "a # noqa"\n', False),
        ("install.sh", "pip install flash-attn==2.4.2 && echo a\\ #noqa\n", False),  # an escaped "#"
        ("install.sh", "pip install flash-attn==2.4.2 # noqa\n", True),
        # a here-document's body is text: its apostrophe opens no quote that would swallow the comment
        (
            "install.sh",
            "cat > notes <<'EOF'\nit's the GPU build\nEOF\npip install flash-attn==2.4.2 # noqa\n",
            True,
        ),
        ("install.sh", "cat > notes <<EOF\npip install flash-attn==2.4.2 # noqa\nEOF\n", None),
        # another entry's string on the same line
        (
            "pyproject.toml",
            '[project]\nname = "x"\ndependencies = ["flash-attn==2.4.2", "a # noqa"]\n',
            False,
        ),
        ("pyproject.toml", '[project]\nname = "x"\ndependencies = ["flash-attn==2.4.2"]  # noqa\n', True),
        (
            "setup.py",
            'from setuptools import setup\nsetup(install_requires=["flash-attn==2.4.2", "a # noqa"])\n',
            False,
        ),
        (
            "setup.py",
            'from setuptools import setup\nsetup(install_requires=["flash-attn==2.4.2"])  # noqa\n',
            True,
        ),
        (
            ".github/workflows/ci.yml",
            "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n"
            "      - run: pip install flash-attn==2.4.2 && echo '#noqa'\n",
            False,
        ),
        (
            ".github/workflows/ci.yml",
            "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: pip install flash-attn==2.4.2  # noqa\n",
            True,
        ),
    ],
)
def test_only_a_comment_of_the_files_own_syntax_suppresses(
    project: Any, name: str, text: str, suppressed: bool | None
) -> None:
    project({name: text})
    r = run("--format", "json", "--select", "FAL001", name)
    found = [f["code"] for f in r.json["findings"]]
    if suppressed is None:  # no install: nothing to find or suppress either way
        assert found == [] and r.json["summary"]["suppressed"] == 0, r.out
        return
    assert (found == [], r.json["summary"]["suppressed"]) == (suppressed, int(suppressed)), r.out


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    text=st.text(alphabet=st.sampled_from("#'\"\\\n\r\t <-(){}[]:,=$`;&|aEOF"), max_size=60),
    style=st.sampled_from(["pip", "toml", "yaml", "shell", "python", "none"]),
)
def test_a_comment_column_always_points_at_a_hash(text: str, style: str) -> None:
    from fa_lint.syntax.comments import starts

    lines = text.split("\n")
    for line, col in starts(text, style).items():
        assert lines[line - 1][col] == "#", (line, col)


def test_every_format_says_where_its_comments_are() -> None:
    from fa_lint.settings.decide import STYLES
    from fa_lint.sources import SOURCES
    from fa_lint.syntax.comments import STYLES as KNOWN

    assert set(STYLES) == set(SOURCES)  # a new format gets its comment rule here
    assert set(STYLES.values()) <= set(KNOWN)


# --- 32: a file's declared encoding, read as the tool that consumes it reads it -------------------------

_UTF7_REQUIREMENTS = (
    b"# -*- coding: utf-7 -*-\ntorch==2.3.1\n# CUDA build of the kernels +AAo-flash-attn==2.4.2\n"
)
_UTF7_SETUP = (
    b"# -*- coding: utf-7 -*-\nfrom setuptools import setup\n\n"
    b'reqs = ["torch==2.3.1"]  # GPU extras: +AAo-reqs.append("flash-attn==2.4.2")\n'
    b'setup(name="demo", version="0.1", install_requires=reqs)\n'
)


def _pip_reads(path: str) -> list[str]:
    """What pip itself reads from a requirements file (the reference for the cases below)."""
    import warnings

    with warnings.catch_warnings():  # pip's own use of pkg_resources
        warnings.simplefilter("ignore", DeprecationWarning)
        from pip._internal.network.session import PipSession
        from pip._internal.req.req_file import parse_requirements

        return [r.requirement for r in parse_requirements(path, session=PipSession())]


@pytest.mark.parametrize(
    "data",
    [
        _UTF7_REQUIREMENTS,  # the reproducer: pip decodes UTF-7, "+AAo-" is a line break
        b"#!/usr/bin/env pip\n# vim: set fileencoding=utf-7 :\n# x +AAo-flash-attn==2.4.2\n",  # line 2
        b"# -*- coding: latin-1 -*-\nflash-attn==2.4.2  # caf\xe9\n",  # not UTF-8: read as pip reads it
        b"\n\n# -*- coding: utf-7 -*-\n# x +AAo-flash-attn==2.4.2\n",  # line 3: pip reads no declaration
        b" # coding: utf-7\n# x +AAo-flash-attn==2.4.2\n",  # not at the line's start: none either
        b"# coding: utf-8\nflash-attn==2.4.2\n",
    ],
)
def test_a_requirements_file_is_decoded_as_pip_decodes_it(project: Any, data: bytes) -> None:
    project({"requirements.txt": data})
    pinned = "flash-attn==2.4.2" in _pip_reads("requirements.txt")
    found = codes("requirements.txt")
    assert not any(code == "FAL900" for *_, code in found), found
    assert any(code == "FAL001" for *_, code in found) == pinned, (found, pinned)


@pytest.mark.parametrize(
    "data",
    [
        _UTF7_SETUP,  # the reproducer
        b"#!/usr/bin/env python\n# vim: set fileencoding=utf-7 :\nfrom setuptools import setup\n"
        b"reqs = []  # +AAo-reqs.append('flash-attn==2.4.2')\nsetup(install_requires=reqs)\n",  # line 2
        b"\n\n# -*- coding: utf-7 -*-\nfrom setuptools import setup\n"
        b"setup(install_requires=[])  # +AAo-setup(install_requires=['flash-attn==2.4.2'])\n",  # line 3: none
    ],
)
def test_a_setup_py_is_decoded_as_python_decodes_it(project: Any, data: bytes) -> None:
    import ast

    project({"setup.py": data})
    # CPython honours PEP 263 on bytes: the reference for what setuptools runs
    calls = [ast.unparse(n) for n in ast.walk(ast.parse(data)) if isinstance(n, ast.Call)]
    runs_pin = any("flash-attn==2.4.2" in c for c in calls)
    found = codes("setup.py")
    assert not any(code == "FAL900" for *_, code in found), found
    assert any(code == "FAL001" for *_, code in found) == runs_pin, (found, calls)


@pytest.mark.parametrize(
    ("name", "data", "where"),
    [
        ("requirements.txt", b"# coding: nonesuch\nflash-attn==2.6.3\n", 1),
        ("requirements.txt", b"torch\n# coding=hex\nflash-attn==2.6.3\n", 2),  # bytes to bytes: no text
        ("setup.py", b"# -*- coding: nonesuch -*-\nfrom setuptools import setup\n", 1),
        ("setup.py", b"#!/usr/bin/python\n# coding: rot13\nfrom setuptools import setup\n", 2),
        ("requirements.txt", b"# coding: utf-7\nflash-attn==2.6.3  # +2AA-\n", 2),  # a lone surrogate
        (
            "requirements.txt",
            b"# coding: ascii\nflash-attn==2.6.3  # caf\xc3\xa9\n",
            2,
        ),  # pip: UnicodeDecodeError
    ],
)
def test_an_encoding_no_tool_can_decode_with_is_a_located_problem(
    project: Any, name: str, data: bytes, where: int
) -> None:
    project({name: data})
    found = codes(name)
    assert [(path, line, code) for path, line, code in found if code == "FAL900"] == [(name, where, "FAL900")]


def test_fix_leaves_a_file_that_declares_another_encoding_alone(project: Any) -> None:
    project({"requirements.txt": _UTF7_REQUIREMENTS})
    r = run("--fix", "--unsafe-fixes", "requirements.txt")
    assert "declares an encoding other than UTF-8" in r.err, r.err
    assert Path("requirements.txt").read_bytes() == _UTF7_REQUIREMENTS


# --- the sandbox invariant (issue 33): whatever a repository holds and configures, a run writes no file
# but the output the user named (-o, and the files --fix is asked to rewrite) and its own temporary
# folder (gone when it ends), and runs no program the repository names.

# Every setting of a repository's own .git/config that names a program git may start.
_PROGRAMS = (
    "filter.evil.clean",
    "filter.evil.smudge",
    "filter.evil.process",
    "diff.evil.textconv",
    "diff.evil.command",
    "diff.external",
    "core.fsmonitor",
    "core.pager",
    "pager.diff",
    "pager.ls-files",
    "core.sshCommand",
    "core.askPass",
    "core.editor",
    "sequence.editor",
    "gpg.program",
    "core.alternateRefsCommand",
)
_HOOKS = ("post-index-change", "post-checkout", "pre-commit", "reference-transaction", "pre-auto-gc")


def _snapshot(root: Path) -> dict[str, tuple[str, bytes]]:
    """Every path under ``root`` (links not followed): its kind and its bytes (a link: its target)."""
    out: dict[str, tuple[str, bytes]] = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            p = os.path.join(folder, name)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = ("link", os.fsencode(os.readlink(p)))
            elif os.path.isdir(p):
                out[rel] = ("dir", b"")
            else:
                with open(p, "rb") as f:
                    out[rel] = ("file", f.read())
    return out


def _hostile_repository(root: Path) -> Path:
    """repo/ under ``root``: links out of it, a REV with ".." and ".git" entries, "-"-names, a filter
    and diff driver its .gitattributes selects, and every program setting and hook pointing at a
    script that leaves a RAN-<name> file in root/ran."""
    ran, bin_ = root / "ran", root / "bin"
    ran.mkdir()
    bin_.mkdir()

    def script(name: str) -> str:
        path = bin_ / name.replace("/", "_")
        path.write_text(f"#!/bin/sh\ntouch '{ran}/RAN-{path.name}'\ncat\n")
        path.chmod(0o755)
        return str(path)

    (root / "outside").mkdir()
    (root / "outside/fa-lint.toml").write_text('ignore = ["FAL"]\n')
    (root / "outside/reqs.txt").write_text("flash-attn>=2.0\n")
    (root / "outside/ignore").write_text("*\n")
    repo = root / "repo"
    (repo / "-o..").mkdir(parents=True)
    (repo / "-o../install.sh").write_text("pip install --no-build-isolation flash-attn==2.4.2\n")
    (repo / "--output-file=..").mkdir()
    (repo / "--output-file=../x.sh").write_text("pip install flash-attn>=2.0\n")
    (repo / "requirements.txt").write_text("flash-attn>=2.0\n-r ../outside/reqs.txt\n")
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    os.symlink("../outside/fa-lint.toml", repo / "fa-lint.toml")
    os.symlink("../outside/reqs.txt", repo / "dev-requirements.txt")
    os.symlink("../outside/ignore", repo / ".gitignore")
    git("init", "-q", cwd=repo)
    git("-c", "core.fsmonitor=", "add", "-A", cwd=repo)
    git("-c", "core.fsmonitor=", "commit", "-qm", "base", cwd=repo)
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        _hostile_rev()
    finally:
        os.chdir(cwd)
    for key in _PROGRAMS:
        git("config", key, script(key), cwd=repo)
    git("config", "filter.evil.required", "true", cwd=repo)
    git("config", "log.showSignature", "true", cwd=repo)
    git("config", "credential.helper", "!" + script("credential.helper"), cwd=repo)
    hooks = root / "hooks"
    hooks.mkdir()
    for hook in _HOOKS:
        os.symlink(script("hook-" + hook), hooks / hook)
        os.symlink(script("git-hook-" + hook), repo / ".git/hooks" / hook)
    git("config", "core.hooksPath", str(hooks), cwd=repo)
    (repo / "requirements.txt").write_text("flash-attn>=2.0\ntorch\n-r ../outside/reqs.txt\n")  # a change
    return repo


@needs_git
def test_no_run_writes_outside_its_output_or_runs_what_the_repository_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    repo = _hostile_repository(root)
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.chdir(repo)
    # the file names as pre-commit passes them, with the variable it sets for every hook it runs (typed
    # by a person outside pre-commit, "-o../install.sh" is an option naming that person's output)
    monkeypatch.setenv("PRE_COMMIT", "1")
    names = ["-o../install.sh", "--output-file=../x.sh", "requirements.txt", "dev-requirements.txt"]
    fixable = ("requirements.txt", "-o../install.sh", "--output-file=../x.sh")  # the repository's own
    report = tmp_path / "report.json"
    runs: list[tuple[list[str], tuple[str, ...]]] = [
        (["."], ()),
        (names, ()),
        (["--format", "json", "-o", str(report), "."], ()),
        (["--new-from-rev", "evil", "."], ()),
        (["--new-from-rev", "HEAD", *names], ()),
        (["--diff", "--unsafe-fixes", *names], ()),
        (["--fix", "--unsafe-fixes", "--new-from-rev", "HEAD", *names], fixable),
        (["--fix", "--unsafe-fixes", "--isolated", "."], fixable),
    ]
    for argv, written in runs:
        before = _snapshot(root)
        r = run(*argv)
        assert "internal error" not in r.err and r.code in (0, 1), (argv, r.code, r.err)
        after = _snapshot(root)
        changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
        assert changed <= {os.path.join("repo", w) for w in written}, (argv, sorted(changed))
        assert list(temp.iterdir()) == [], argv  # its own folder, removed
        assert [p.name for p in (root / "ran").iterdir()] == [], argv  # no program ran
        assert {p.name for p in tmp_path.iterdir()} <= {"root", "temp", "report.json"}, argv
        if argv == names:  # the "-"-names were checked as files, not read as -o / --output-file
            assert "-o../install.sh:1:" in r.out and "--output-file=../x.sh:1:" in r.out, r.out
    assert json.loads(report.read_text())["findings"], "the named output holds the report"
    # a link out of the repository is neither configuration (FAL900, not "ignore everything") nor fixed
    assert Path("../outside/reqs.txt").read_text() == "flash-attn>=2.0\n"
    assert "fa-lint.toml:1:1: FAL900" in run(".").out
