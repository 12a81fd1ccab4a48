"""The slow paths of issue 33 (shared/reliability 33, 34, 36, 41, 42), each rebuilt here from its input:
what a pull request commits costs work linear in its size. Each test counts the work (calls, steps,
names made), never the wall clock; speed itself is measured in benchmarks/scaling*.py.
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import os
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fa_lint.code import command_lines as commands
from fa_lint.files import gitignore, needles
from fa_lint.files.gitignore import GitIgnore
from fa_lint.fixes import apply as fix
from fa_lint.fixes import diff as patch
from fa_lint.model import Group, ParseProblem, Requirement
from fa_lint.rules import versions
from fa_lint.settings import decide
from fa_lint.sources import pyproject, tox
from fa_lint.syntax import comments, tables
from tests.conftest import run

OLD = "flash-attn==2.4.2\n"


def codes(*argv: str) -> list[tuple[str, int]]:
    r = run("--format", "json", "--isolated", *argv)
    assert r.code in (0, 1), r.err
    return [(f["code"], f["line"]) for f in r.json["findings"]]


# --- 34: PEP 735 include-group chains ----------------------------------------------------------------------


def _chain(n: int, *, cycle: bool = False) -> str:
    first = '{include-group = "g' + str(n - 1) + '"}' if cycle else '"flash-attn==2.4.2", "torch==2.3.1"'
    rest = "".join(f'g{i} = [{{include-group = "g{i - 1}"}}]\n' for i in range(1, n))
    return f"[dependency-groups]\ng0 = [{first}]\n{rest}"


def test_an_include_group_chain_is_resolved_once_a_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """reliability/34: each group of a 3,000-group chain installs g0's two pins, and each group's
    strings are read once for each group that installs them (n^2/2 reads, n^3 name comparisons and,
    in packaging's resolver, a RecursionError before)."""
    reads: list[tuple[str, ...]] = []
    strings = tables.strings

    def counted(doc: Any, path: tuple[str, ...], *args: Any, **kwargs: Any) -> Any:
        reads.append(path)
        return strings(doc, path, *args, **kwargs)

    monkeypatch.setattr(pyproject, "strings", counted)
    n = 3_000
    records = list(pyproject.parse("pyproject.toml", _chain(n)))
    assert not [r for r in records if isinstance(r, ParseProblem)]
    groups = [r for r in records if isinstance(r, Requirement) and r.scope.startswith("group:")]
    assert len(groups) == 2 * n
    assert {(r.name, r.location.line) for r in groups} == {("flash-attn", 2), ("torch", 2)}
    assert {r.scope for r in groups} == {f"group:g{i}" for i in range(n)}
    assert len([p for p in reads if p[0] == "dependency-groups"]) == n  # g0's strings, once a group


def test_every_group_of_a_long_cycle_is_a_located_problem() -> None:
    """PEP 735: a cycle is an error; each group in it (or reaching it) says so at its own line."""
    n = 2_000
    records = list(pyproject.parse("pyproject.toml", _chain(n, cycle=True)))
    problems = [r for r in records if isinstance(r, ParseProblem)]
    assert [p.location.line for p in problems] == list(range(2, n + 2))
    assert all("Cyclic dependency group include while resolving" in p.message for p in problems)
    assert not [r for r in records if isinstance(r, Requirement)]


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        (
            'a = [{include-group = "b"}]\nb = [{include-group = "a"}]\n',
            ["a: a -> b, b -> a", "b: b -> a, a -> b"],
        ),
        ('s = [{include-group = "s"}]\n', ["s: s includes itself"]),
        (
            'a = [{include-group = "b"}]\nb = [{include-group = "c"}]\nc = [{include-group = "a"}]\n'
            'd = ["flash-attn", {include-group = "A"}]\n',
            [
                "a: a -> b, which includes a again through other groups",
                "b: b -> c, which includes b again through other groups",
                "c: c -> a, which includes c again through other groups",
                "d: a -> b, which includes a again through other groups",
            ],
        ),
    ],
)
def test_a_cycle_names_the_groups_in_it(groups: str, expected: list[str]) -> None:
    records = list(pyproject.parse("pyproject.toml", "[dependency-groups]\n" + groups))
    assert [p.message.split("while resolving ")[1] for p in records if isinstance(p, ParseProblem)] == [
        e.replace(": ", ": ", 1) for e in expected
    ]


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        (
            'd = [{include-group = "zz"}]\ne = [{include-group = "d"}]\n',
            ["Dependency group 'zz' not found"] * 2,
        ),
        ('f = ["!!bad"]\nh = [{include-group = "f"}]\n', ["Expected package name"] * 2),
    ],
)
def test_a_group_including_a_bad_one_reports_its_problem(groups: str, expected: list[str]) -> None:
    records = list(pyproject.parse("pyproject.toml", "[dependency-groups]\n" + groups))
    problems = [r.message for r in records if isinstance(r, ParseProblem)]
    assert len(problems) == len(expected) and all(e in p for p, e in zip(problems, expected, strict=True))


def test_a_group_installs_its_own_strings_then_those_it_includes(project: Any) -> None:
    text = '[dependency-groups]\nt = ["flash-attn==2.4.2", {include-group = "U"}]\nu = ["torch==2.3.1"]\n'
    records = [r for r in pyproject.parse("pyproject.toml", text) if isinstance(r, Requirement)]
    assert [(r.name, r.location.line, r.scope) for r in records] == [
        ("flash-attn", 2, "group:t"),
        ("torch", 3, "group:t"),
        ("torch", 3, "group:u"),
    ]


# --- 33: tox generative names; 36: environments x conditional lines ------------------------------------


def _counting_braces(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    made: list[int] = []
    braces = tox.braces

    def counted(text: str, budget: Any = None) -> list[str]:
        names = braces(text, budget)
        made.append(len(names))
        return names

    monkeypatch.setattr(tox, "braces", counted)
    return made


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[tox]\nenvlist = " + "{a,b}" * 26 + "\n\n[testenv]\ndeps =\n    flash-attn==2.4.2\n", 2),
        ("[tox]\n[testenv:" + "{a,b}" * 26 + "]\ndeps =\n    flash-attn==2.4.2\n", 2),
        ("[tox]\nenvlist = a\n\n[testenv]\ndeps =\n    " + "{a,b}" * 26 + ": flash-attn==2.4.2\n", 6),
    ],
)
def test_tox_braces_stop_at_the_budget_with_a_located_problem(
    monkeypatch: pytest.MonkeyPatch, text: str, line: int
) -> None:
    """reliability/33: ``{a,b}`` 26 times is 67 million names (tox makes them all; 592 MB at 22 before):
    fa-lint makes at most its budget, says so where it stops, and still reads the flash-attn line."""
    made = _counting_braces(monkeypatch)
    records = list(tox.parse("tox.ini", text))
    (problem,) = [r for r in records if isinstance(r, ParseProblem)]
    assert problem.location.line == line
    assert "tox braces not all expanded" in problem.message and "67,108,864" in problem.message
    assert [r.name for r in records if isinstance(r, Requirement)] == ["flash-attn"]
    assert sum(made) <= tox.MAX_NAMES + tox.MAX_ALTERNATIVES


def test_a_budget_crossed_in_a_tox_file_is_reported_once(project: Any) -> None:
    text = (
        "[tox]\nenvlist = " + "{a,b}" * 20 + ", " + "{c,d}" * 20 + "\n[testenv]\ndeps = flash-attn==2.4.2\n"
    )
    project({"tox.ini": text})
    assert codes("tox.ini") == [("FAL900", 2), ("FAL001", 4)]


def test_tox_environments_and_conditional_lines_are_joined_by_an_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """reliability/36: n environments and n lines ``eI: pkgI==1.0``: each condition is expanded once
    and each environment gets its own line (n^2 ``applies`` calls before, each expanding again)."""
    made = _counting_braces(monkeypatch)
    n = 3_000
    deps = "".join(f"    e{i}: pkg{i}==1.0\n" for i in range(n))
    text = f"[tox]\nenvlist = {','.join(f'e{i}' for i in range(n))}\n[testenv]\ndeps =\n{deps}    flash-attn==2.4.2\n"
    groups = [r for r in tox.parse("tox.ini", text) if isinstance(r, Group)]
    assert [g.scopes for g in groups] == [("testenv", f"testenv[e{i}]") for i in range(n)]
    assert len(made) <= 2 * n


def test_tox_conditions_select_as_before_from_the_index() -> None:
    text = (
        "[tox]\nenvlist = py{310,311}-{cpu,gpu}, lint\n[testenv]\ndeps =\n    pytest\n"
        "    gpu: flash-attn==2.4.2\n    !gpu: torch\n    py310-!cpu: y\n    {[testenv:lint]deps}\n"
        "    cpu: {[testenv:extra]deps}\ncommands =\n    gpu: pip install flash-attn\n    pytest\n"
        "[testenv:lint]\ndeps = ruff\n    gpu: z\n[testenv:extra]\ndeps = q\n    py311: flash-attn>=2\n"
    )
    groups = {g.name: g.scopes for g in tox.parse("tox.ini", text) if isinstance(g, Group)}
    lint = ("testenv:lint", "testenv:lint[gpu]")
    assert groups == {
        "testenv:py310-cpu": ("testenv", "testenv[!gpu]", *lint[:1], "testenv:extra", "testenv commands"),
        "testenv:py310-gpu": (
            "testenv",
            "testenv[gpu]",
            "testenv[py310-!cpu]",
            *lint,
            "testenv commands[gpu]",
            "testenv commands",
        ),
        "testenv:py311-cpu": (
            "testenv",
            "testenv[!gpu]",
            *lint[:1],
            "testenv:extra",
            "testenv:extra[py311]",
            "testenv commands",
        ),
        "testenv:py311-gpu": ("testenv", "testenv[gpu]", *lint, "testenv commands[gpu]", "testenv commands"),
        "testenv:lint": ("testenv:lint", "testenv commands"),  # commands come from [testenv]
        "testenv:extra": ("testenv:extra", "testenv commands"),  # a section is an environment too
    }


# --- 41: --diff built from the fixes' spans ---------------------------------------------------------------


def _reference(before: str, after: str) -> str:
    """What ``--diff`` printed before (difflib over the whole file): the reference for normal files."""
    lines = difflib.unified_diff(patch._lines(before), patch._lines(after), "a/r.txt", "b/r.txt")
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def _apply(before: str, diff: str) -> str:
    """The patch applied to ``before``, hunk by hunk (as patch(1) would, with no fuzz)."""
    old = patch._lines(before)
    out: list[str] = []
    at, last = 0, ""
    lines = [line + "\n" for line in diff.split("\n")[2:-1]]
    for line in lines:
        hunk = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@\n", line)
        if hunk:
            start = int(hunk[1]) - (hunk[2] != "0")
            assert start >= at
            out += old[at:start]
            at = start
        elif line.startswith("\\"):  # the line before has no line end (in the file it came from)
            if last in " +":
                out[-1] = out[-1].removesuffix("\n")
        else:
            last, text = line[0], line[1:]
            if last in " -":
                assert old[at].removesuffix("\n") == text.removesuffix("\n")
                at += 1
            if last in " +":
                out.append(text)
    return "".join(out + old[at:])


def _edited(text: str, edits: list[tuple[int, int, str]]) -> str:
    pieces, at = [], 0
    for start, end, new in edits:
        pieces += [text[at:start], new]
        at = end
    return "".join([*pieces, text[at:]])


def test_diff_is_built_from_the_spans_not_by_diffing_the_file(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """reliability/41: 5,000 fixable lines between distinct ones (difflib over the whole file, 41 s at
    10,000 before): difflib sees only a changed stretch at a time, and the patch is the one it printed."""
    seen: list[int] = []
    matcher = difflib.SequenceMatcher

    def counted(junk: Any, a: list[str], b: list[str]) -> difflib.SequenceMatcher[str]:
        seen.append(len(a) + len(b))
        return matcher(junk, a, b)

    monkeypatch.setattr(difflib, "SequenceMatcher", counted)
    n = 5_000
    text = "".join(f"flash-attn>=2.0\npkg{i}==1.{i}\n" for i in range(n))
    project({"requirements.txt": text})
    r = run("--diff", "--isolated", "requirements.txt")
    assert r.code == 1 and f"{n} fixes in 1 file would be applied" in r.err
    assert max(seen) <= 2 * patch.LOCAL and len(seen) <= n
    after = text.replace("flash-attn>=2.0\n", "flash-attn>=2.5.0\n")
    assert r.out == _reference(text, after).replace("a/r.txt", "a/requirements.txt").replace(
        "b/r.txt", "b/requirements.txt"
    )


@pytest.mark.parametrize("seed", range(4))
def test_diff_of_edits_inside_lines_is_difflibs(seed: int) -> None:
    """Fixes replace text inside a line; where the file's lines differ from each other the patch is
    the one difflib makes of the whole file, hunk for hunk."""
    rnd = random.Random(seed)
    words = ["flash-attn>=2.0", "torch", "pkg==1", "", "flash-attn==2.5.8", "# c"]
    for _ in range(500):
        lines = [f"{rnd.choice(words)} # {i}" for i in range(rnd.randint(1, 40))]
        text = "\n".join(lines) + ("\n" if rnd.random() < 0.8 else "")
        edits, offset = [], 0
        for line in lines:
            if rnd.random() < 0.3:
                start = rnd.randint(0, len(line))
                end = rnd.randint(start, len(line))
                edits.append((offset + start, offset + end, rnd.choice(["", ">=2.5.8", "torch", "x"])))
            offset += len(line) + 1
        after = _edited(text, edits)
        outcome = fix.Outcome("r.txt", text.encode(), after.encode(), edits=tuple(edits))
        assert outcome.patch()[0] == _reference(text, after)


@pytest.mark.parametrize("seed", range(4))
def test_any_edits_make_a_patch_that_applies(seed: int) -> None:
    """Edits across lines, of line ends, at the end of the file, empty ones: the patch turns the
    file into the fixed one."""
    rnd = random.Random(seed)
    words = ["flash-attn>=2.0", "torch", "", "x"]
    for _ in range(500):
        text = "\n".join(rnd.choice(words) for _ in range(rnd.randint(0, 30)))
        text += "\n" if text and rnd.random() < 0.8 else ""
        edits: list[tuple[int, int, str]] = []
        at = 0
        while at <= len(text) and rnd.random() < 0.7:
            start = rnd.randint(at, min(len(text), at + 40))
            end = rnd.randint(start, min(len(text), start + rnd.choice([0, 3, 10, 30])))
            edits.append((start, end, rnd.choice(["", "flash-attn>=2.5.8", "a\nb", "\n", "x\n"])))
            at = end + 1
        after = _edited(text, edits)
        diff = fix.Outcome("r.txt", text.encode(), after.encode(), edits=tuple(edits)).patch()[0]
        assert (diff == "") == (text == after)
        assert _apply(text, diff) == after


# --- 42: .gitignore patterns x paths ----------------------------------------------------------------------


def test_many_gitignore_patterns_are_tried_only_where_a_path_holds_their_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """reliability/42: 3,000 patterns ``*x<i>y*`` over 3,000 paths (each path tried against every
    pattern before, 3.6 us a pair): a path is tried only against the patterns filed under a piece of
    its name, a handful."""
    tried: list[str] = []
    matches = gitignore.Pattern.matches

    def counted(self: gitignore.Pattern, rel: str, name: str, is_dir: bool) -> bool:
        tried.append(rel)
        return matches(self, rel, name, is_dir)

    monkeypatch.setattr(gitignore.Pattern, "matches", counted)
    n = 3_000
    (tmp_path / ".gitignore").write_text("".join(f"*x{i}y*\n" for i in range(n)) + "!*x700y*\n")
    ignored = GitIgnore(use_index=False)
    left_out = [i for i in range(n) if ignored(str(tmp_path / f"requirements-{i}.txt"))]
    named = [ignored(str(tmp_path / f"a-x{i}y-b.txt")) for i in range(0, n, 100)]
    assert left_out == [] and named == [i != 700 for i in range(0, n, 100)]
    assert len(tried) <= 10 * (n + n // 100)  # a few patterns share a piece of a name (x10y and x100y: "10y")


def _git_tree(rnd: random.Random, folder: Path) -> list[str]:
    """A tree of files and .gitignore files of every kind of pattern, many of them."""
    parts = [
        "a",
        "b",
        "ab",
        "x1",
        "x2y",
        "build",
        "req",
        "dist",
        "c.txt",
        "d.py",
        "e.pyc",
        "f.in",
    ]  # folders, files

    def pattern() -> str:
        kind = rnd.randrange(9)
        word = rnd.choice(parts) if rnd.random() < 0.05 else f"z{rnd.randrange(500)}.q"  # most match nothing
        glob = [
            word,
            f"*.{word.rsplit('.', 1)[-1]}",
            f"*{word}*",
            f"{word}*",
            f"/{word}",
            f"{rnd.choice(parts)}/{word}",
            f"**/{word}",
            f"{word}?",
            f"[a-c]*{word[-1]}",
        ][kind]
        return ("!" if rnd.random() < 0.15 else "") + glob + ("/" if rnd.random() < 0.15 else "")

    folders, leaves = parts[:8], [*parts[8:], "req.txt", "g"]
    files = sorted(
        {
            "/".join([*(rnd.choice(folders) for _ in range(rnd.randint(0, 2))), rnd.choice(leaves)])
            for _ in range(150)
        }
    )
    made = []
    for rel in files:
        path = folder / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                path.write_text("x\n")
        except OSError:  # a name that is a file at one place and a folder at another
            continue
        if path.is_file():
            made.append(rel)
    (folder / ".gitignore").write_text("".join(pattern() + "\n" for _ in range(200)))
    for sub in {rel.split("/")[0] for rel in made if "/" in rel}:
        if rnd.random() < 0.5 and (folder / sub).is_dir():
            (folder / sub / ".gitignore").write_text("".join(pattern() + "\n" for _ in range(30)))
    return made


@pytest.mark.skipif(shutil.which("git") is None, reason="git itself is the reference")
@pytest.mark.parametrize("seed", range(6))
def test_gitignore_index_leaves_out_what_git_leaves_out(tmp_path: Path, seed: int) -> None:
    """Differential: the files git's own ``ls-files --others --ignored --exclude-standard`` lists in a
    generated tree (negations, dir-only, anchored, nested files) are those fa-lint leaves out."""
    made = _git_tree(random.Random(seed), tmp_path)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True, env=env)
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--others", "--ignored", "--exclude-standard"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        env=env,
    ).stdout.decode()
    theirs = {p for p in listed.split("\0") if p and not p.endswith(".gitignore")}
    ignored = GitIgnore()
    mine = {rel for rel in made if ignored(str(tmp_path / rel))}
    assert mine == theirs & set(made)
    assert theirs  # the tree leaves something out, and keeps something
    assert set(made) - theirs


# --- 42, other glob lists: exclude and per-file-ignores ------------------------------------------------


def test_per_file_ignore_globs_are_tried_only_where_a_path_holds_their_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tried: list[str] = []
    fnmatchcase = fnmatch.fnmatchcase

    def counted(name: str, pat: str) -> bool:
        tried.append(pat)
        return fnmatchcase(name, pat)

    monkeypatch.setattr(fnmatch, "fnmatchcase", counted)
    n = 3_000
    per_file = tuple((f"*x{i}y*", (f"FAL{i % 10:03d}",)) for i in range(n))
    found = [decide.file_ignores(f"/r/requirements-{i}.txt", per_file, "/r") for i in range(n)]
    assert found == [()] * n
    assert decide.file_ignores("/r/sub/a-x17y.txt", per_file, "/r") == ("FAL007",)
    assert len(tried) <= 10 * n  # about 3,000 a file before


@pytest.mark.parametrize("seed", range(3))
def test_indexed_globs_match_as_fnmatch_does(seed: int) -> None:
    rnd = random.Random(seed)
    alphabet = ["a", "b", "x", ".", "/", "*", "?", "[ab]", "[!a]", "[", "]", "-"]
    globs = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 6))) for _ in range(300)]
    texts = ["".join(rnd.choice("abx./-[]") for _ in range(rnd.randint(0, 8))) for _ in range(300)]
    for case in (True, False):
        index = needles.Globs(globs, case)
        match = fnmatch.fnmatchcase if case else fnmatch.fnmatch
        for text in texts:
            assert index.matching(text) == [i for i, g in enumerate(globs) if match(text, g)], text


class _Counted(str):
    """A text that adds up how many characters ``count`` looks at."""

    scanned = 0

    def count(self, sub: str, start: Any = None, end: Any = None) -> int:
        begin = 0 if start is None else start
        _Counted.scanned += (len(self) if end is None else end) - begin
        return super().count(sub, begin, len(self) if end is None else end)


def test_file_level_noqa_lines_are_counted_once_not_from_the_top() -> None:
    n = 3_000
    text = "flash-attn==2.5.0  # x\n# ruff: noqa: E501\n" * n + "# fa-lint: noqa: FAL001\n"
    starts = comments.starts(text, "pip")
    _Counted.scanned = 0
    assert decide.file_suppressions(_Counted(text), starts) == {"E501", "FAL001"}
    assert _Counted.scanned <= len(text)  # each match's line found from the one before: about n^2/2 before
    # each comment is judged by its own line's entry: the last line's, then the even lines'
    assert decide.file_suppressions(text, {k: v for k, v in starts.items() if k != 2 * n + 1}) == {"E501"}
    assert decide.file_suppressions(text, {k: v for k, v in starts.items() if k % 2}) == {"FAL001"}


def test_a_stale_lock_indexes_each_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []

    class Counted(commands.TextIndex):
        def __init__(self, path: str, text: str) -> None:
            made.append(path)
            super().__init__(path, text)

    monkeypatch.setattr(commands, "TextIndex", Counted)
    n = 2_000
    lock = json.dumps([{"repo_id": f"org/k{i}"} for i in range(n)], indent=2)
    asked = '[tool.kernels.dependencies]\n"org/a" = 1\n"org/k3" = 1\n'
    found = commands.stale_lock("pyproject.toml", asked, "kernels.lock", lock)
    assert [(u.location.path, u.location.line) for u in found[:2]] == [
        ("pyproject.toml", 2),
        ("kernels.lock", 3),
    ]
    assert len(found) == n
    assert sorted(made) == ["kernels.lock", "pyproject.toml"]  # once a file: once a repository before


def test_exclude_globs_leave_out_what_they_match(project: Any) -> None:
    project({"a/requirements.txt": OLD, "b/requirements.txt": OLD, "c/requirements-x1y.txt": OLD})
    excluded = ["*x1y*", "b/*", *(f"*z{i}q*" for i in range(2_000))]
    assert [c for c in codes(".", *(a for x in excluded for a in ("--exclude", x)))] == [("FAL001", 1)]


def test_a_line_every_group_installs_is_judged_once(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """reliability/34, the rules' side: g0's line is a record in each of 2,000 groups, and each record
    was judged against every environment of the line (2,000 x 2,000): the line is judged once."""
    judged: list[int] = []
    judge = versions.judge

    def counted(req: Requirement, *args: Any) -> Any:
        judged.append(req.location.line)
        return judge(req, *args)

    monkeypatch.setattr(versions, "judge", counted)
    project({"pyproject.toml": _chain(2_000)})
    assert codes("pyproject.toml") == [("FAL001", 2)]
    assert judged == [2]


def test_a_chain_of_tox_references_stops_at_the_scope_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ``[testenv:eI]`` brings in the one before (``{[testenv:eI-1]deps}``): each environment is its
    whole chain, n^2/2 scopes in all. Past MAX_SCOPES the references are not followed, said once."""
    monkeypatch.setattr(tox, "MAX_SCOPES", 5_000)
    n = 1_000
    text = "[tox]\n[testenv]\ndeps = flash-attn==2.4.2\n" + "".join(
        f"[testenv:e{i}]\ndeps =\n    {{[testenv{f':e{i - 1}' if i else ''}]deps}}\n    pkg{i}==1\n"
        for i in range(n)
    )
    records = list(tox.parse("tox.ini", text))
    groups = [r for r in records if isinstance(r, Group)]
    (problem,) = [r for r in records if isinstance(r, ParseProblem)]
    assert "tox environments not all composed" in problem.message
    assert len(groups) == n  # every environment is still there
    assert groups[0].scopes == ("testenv:e0", "testenv")  # the first ones whole
    assert groups[-1].scopes == (f"testenv:e{n - 1}",)  # the last ones their own lines
    assert sum(len(g.scopes) for g in groups) <= 5_000 + n
    assert next(r.name for r in records if isinstance(r, Requirement)) == "flash-attn"


def test_conditions_without_braces_still_select_past_the_budget() -> None:
    text = (
        "[tox]\nenvlist = py-gpu, py-cpu\n[testenv]\ndeps =\n    "
        + "{a,b}" * 26
        + ": torch\n    gpu: flash-attn==2.4.2\n    {py,x}-cpu: flash-attn>=2.6\n"
    )
    records = list(tox.parse("tox.ini", text))
    assert [p.location.line for p in records if isinstance(p, ParseProblem)] == [5]
    groups = {g.name: g.scopes for g in records if isinstance(g, Group)}
    # the plain condition is read; the braced one after the budget selects nothing, as the first
    assert groups == {"testenv:py-gpu": ("testenv", "testenv[gpu]"), "testenv:py-cpu": ("testenv",)}
