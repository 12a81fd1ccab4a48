"""The reliability reproducers of issue 15, each rebuilt here from its input: every one ends with a
located diagnostic or the correct result, never an internal error."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fa_lint import engine
from fa_lint.files import project as project_files
from fa_lint.files import read
from fa_lint.report import FORMATS, json_format
from tests.conftest import REPO, run
from tests.fuzz import assert_safe, render_all


def _findings(*args: str) -> list[tuple[str, int, int, str, str]]:
    r = run("--format", "json", *args)
    assert "internal error" not in r.out + r.err, r.out + r.err
    return [(f["path"], f["line"], f["column"], f["code"], f["message"]) for f in r.json["findings"]]


# --- crash sites: a value of the wrong kind is a located FAL900 (FAL901 for an entry not flash-attn) --


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        # 01: pdm.lock whose url is a boolean
        ("pdm.lock", 'package=[{"name"="""""",url=true}]', [(1, 25, "package '': url must be a string")]),
        # 05: a Poetry dependency table whose markers is a boolean
        (
            "pyproject.toml",
            "tool={\"\"={},poetry={dependencies={n={v='''''',markers=true}}}}",
            [(1, 47, "Poetry dependency 'n': markers must be a string")],
        ),
        # 06: uv.lock resolution-markers that is an integer
        (
            "uv.lock",
            '[[package]]\nname=""\nresolution-markers=1',
            [(3, 1, "package '': resolution-markers must be an array of strings")],
        ),
    ],
)
def test_a_value_of_the_wrong_type_is_located(project: Any, name: str, content: str, expected: Any) -> None:
    # The entries name no flash-attn: each costs only itself, a warning (FAL901), as any entry that
    # cannot be read does; the same field of a flash-attn entry is FAL900 (below).
    project({name: content})
    found = [(line, col, code, msg) for _, line, col, code, msg in _findings(name)]
    assert found == [(line, col, "FAL901", f"skipped, not checked: {msg}") for line, col, msg in expected]


@pytest.mark.parametrize(
    ("name", "content", "where"),
    [
        ("poetry.lock", '[[package]]\nname = "flash-attn"\nversion = 2\n', (3, 1)),
        ("poetry.lock", '[[package]]\nname = "flash-attn"\nsource = {type = "git", url = 1}\n', (3, 25)),
        ("uv.lock", '[[package]]\nname = "flash-attn"\nsource = "pypi"\n', (3, 1)),
        (
            "pdm.lock",
            '[[package]]\nname = "flash-attn"\ngit = "https://x/flash-attention"\nref = 2\n',
            (4, 1),
        ),
        ("Pipfile", '[packages]\nflash-attn = {git = "https://x/flash-attention", ref = 2.5}\n', (2, 50)),
        ("pyproject.toml", '[tool.uv.sources]\nflash-attn = {git = "https://x/y", tag = true}\n', (2, 36)),
        ("Pipfile.lock", '{"default": {"flash-attn": {"version": ["==2.4.2"]}}}', (1, 29)),
        # the readers main added with issues 10 and 11: pixi, and uv's build settings
        ("pixi.toml", '[pypi-dependencies]\nflash-attn = {version = ">=2.5", extras = 3}\n', (2, 34)),
        ("pixi.toml", '[environments]\ngpu = {features = "gpu"}\n', (2, 8)),
        ("pixi.toml", '[feature.gpu]\ndependencies = ["flash-attn"]\n', (2, 1)),
        ("pyproject.toml", '[tool.uv]\nno-build-isolation-package = "flash-attn"\n', (2, 1)),
        ("pyproject.toml", "[tool.uv]\nno-build-isolation = 1\n", (2, 1)),
        ("pyproject.toml", "[tool.uv.extra-build-dependencies]\nflash-attn = [{requirement = 1}]\n", (2, 16)),
        ("pyproject.toml", '[tool.uv.sources]\nflash-attn = "v2.5.0"\n', (2, 1)),
    ],
)
def test_wrong_types_in_every_table_format_are_located(
    project: Any, name: str, content: str, where: Any
) -> None:
    project({name: content})
    found = _findings(name)
    assert [(line, col, code) for _, line, col, code, _ in found] == [(*where, "FAL900")]
    assert "must be a" in found[0][4]


@pytest.mark.parametrize("ref", ["v\u0663.3.6", "\u0662", "v2.\u0665.0"])
def test_a_tag_with_digits_of_another_script_is_no_version(project: Any, ref: str) -> None:
    # 03: "\d" matched Arabic-Indic digits, which Version() refuses; such a tag names no release.
    project(
        {
            "constraints.txt": f"n@git+@{ref}",
            "requirements.txt": f"flash-attn @ git+https://x/flash-attention@{ref}\n",
        }
    )
    assert [(p, code) for p, _, _, code, _ in _findings(".")] == [("requirements.txt", "FAL009")]


# --- configuration: a pyproject.toml nobody can read never stops the run, nor lets another stand in ----

OLD = "flash-attn==2.4.2\n"


@pytest.mark.parametrize(
    ("pyproject", "where", "words"),
    [
        (b"tool = 1\n", (1, 1), "tool must be a table"),  # 09
        (b'tool = "fa-lint"\n', (1, 1), "tool must be a table"),  # 10
        (b'[project]\nname = "\xff"\n', (2, 9), "not valid UTF-8"),  # 11
        (b"[project\n", (1, 9), "invalid TOML"),
        (b"a = " + b"[" * 50_000 + b"]" * 50_000 + b"\n", (1, 1), "nests too deeply"),
    ],
)
@pytest.mark.parametrize("args", [["requirements.txt"], []])
def test_an_unreadable_pyproject_is_a_finding_and_the_run_goes_on(
    project: Any, pyproject: bytes, where: tuple[int, int], words: str, args: list[str]
) -> None:
    project({"pyproject.toml": pyproject, "requirements.txt": OLD})
    r = run("--format", "json", *args)
    assert r.code == 1, r.err
    found = [(f["path"], f["line"], f["column"], f["code"]) for f in r.json["findings"]]
    assert found == [("pyproject.toml", *where, "FAL900"), ("requirements.txt", 1, 1, "FAL001")]
    assert words in r.json["findings"][0]["message"]


def test_an_unreadable_pyproject_ends_the_search_for_configuration(project: Any) -> None:
    # It may have been the configuration (issue 23, item 9): the configuration above it must not take
    # its place, and it cannot silence its own FAL900 either. Its files are checked with the defaults.
    root = project(
        {"pyproject.toml": '[tool.fa-lint]\nignore = ["FAL"]\n', "sub/pyproject.toml": "tool = 1\n"}
    )
    (root / "sub/requirements.txt").write_text(OLD)
    os.chdir(root / "sub")
    r = run("--format", "json", "requirements.txt")
    assert r.codes() == [("pyproject.toml", 1, "FAL900"), ("requirements.txt", 1, "FAL001")]
    assert "fa-lint read no configuration from it" in r.json["findings"][0]["message"]
    os.chdir(root)  # from above: the same, and the files above it keep their own configuration
    (root / "requirements.txt").write_text(OLD)
    r = run("--format", "json")
    assert r.codes() == [("sub/pyproject.toml", 1, "FAL900"), ("sub/requirements.txt", 1, "FAL001")]


@pytest.mark.parametrize(
    ("files", "args", "words"),
    [
        ({"pyproject.toml": "[tool]\nfa-lint = 1\n"}, [], "[tool.fa-lint] must be a table"),
        ({"pyproject.toml": "[tool.fa-lint]\nselect = [1]\n"}, [], "must be a list of strings"),
        (
            {"cfg.toml": "tool = 1\n"},
            ["--config", "cfg.toml"],
            "cfg.toml:1:1: cannot read configuration: tool",
        ),
        (
            {"cfg.toml": b"\xff"},
            ["--config", "cfg.toml"],
            "cfg.toml:1:1: cannot read configuration: file is not",
        ),
    ],
)
def test_fa_lints_own_invalid_configuration_exits_2(
    project: Any, files: dict[str, Any], args: list[str], words: str
) -> None:
    project({**files, "requirements.txt": OLD})
    r = run(*args)
    assert r.code == 2 and r.out == ""
    assert r.err.startswith("fa-lint: configuration error: ") and words in r.err, r.err


# --- output: no string can break a writer, forge a workflow command or a terminal sequence ------------

HOSTILE = [
    "x\n::error file=evil.py,line=1::INJECTED",
    "x\r::warning::INJECTED",
    "::error file=evil.py::at the start",
    "\u3000::notice::after a blank",
    "mid ##[error]legacy command ##[stop-commands]token",
    "\x1b]0;title\x07\x1b[31mred\x9b0m",
    "a\u2028b\u2029c\x0bd\x0ce\x85f",
    "lone \ud800 and \udcff",
    "\u202eevil\u202c",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_writers_escape_every_string_taken_from_input(text: str) -> None:
    from fa_lint.engine import Report
    from fa_lint.kb import load
    from fa_lint.kb.assess import Policy
    from fa_lint.model import Finding, Fix, Location, Severity

    where = Location(text, 1, 1, 1, 2)
    finding = Finding(
        "FAL001",
        "paged-kv-missing",
        Severity.ERROR,
        where,
        f"message {text}",
        package=text,
        requirement=text,
        admitted=(text,),
        environment=text,
        related=(where,),
        fix=Fix(where, "x", "y", f"title {text}"),
        notes=(text,),
        help=text,
    )
    base = load()
    report = Report((finding,), (text,), 0, base, Policy.default(base))
    outputs = render_all(report)
    for fmt in ("text", "github"):
        assert "\\n::error file=evil.py" in outputs[fmt] or "\n" not in text


@pytest.mark.parametrize(
    ("name", "content", "shown"),
    [
        # 07: a JSON key that is a lone surrogate
        ("Pipfile.lock", b'{"default": {"\\ud800": 1}}', "entry for '\\ud800' must be an object"),
        # 16: a lock package name that carries a workflow command on a line of its own
        (
            "Pipfile.lock",
            b'{"default": {"x\\n::error file=evil.py,line=1::INJECTED": 1}}',
            "entry for 'x\\n::error file=evil.py,line=1::I'... must be an object",
        ),
    ],
)
def test_hostile_names_in_files_are_printed_escaped(
    project: Any, name: str, content: bytes, shown: str
) -> None:
    project({name: content})
    for fmt in FORMATS:
        r = run("--format", fmt, name)
        assert r.code == 0 and r.err == "", r.err  # FAL901, a warning: the entry names no flash-attn
        assert_safe(r.out, fmt, 1)
    found = run("--format", "json", name).json["findings"]
    assert [(f["code"], f["message"]) for f in found] == [("FAL901", f"skipped, not checked: {shown}")]


def test_code_frames_show_a_hostile_line_escaped(project: Any) -> None:
    # The text format quotes the checked file's own lines around each finding (issue 13).
    line = "flash-attn==2.4.2 # ##[error]evil \x1b[31m\u202e\x07 ::error file=evil.py::x"
    project({"requirements.txt": f"::error file=evil.py,line=1::INJECTED\n{line}\n##[warning]x\n"})
    for args in (["--format", "text"], ["--format", "text", "--show-fixes"], ["--format", "concise"]):
        r = run(*args)
        assert r.code == 1, r.err
        assert_safe(r.out, "text", 1)
        assert (
            "flash-attn==2.4.2 # ##\\x5berror]evil \\x1b[31m\\u202e\\x07 ::error" in r.out
            or "concise" in args
        )


def test_a_folder_with_no_dependency_files_is_named_escaped(project: Any) -> None:
    name = "x\n::error file=evil.py,line=1::INJECTED ##[error]y"
    (project({}) / name).mkdir()
    for fmt in ("text", "concise", "github"):
        r = run("--format", fmt, name)
        assert r.code == 0
        assert_safe(r.out, fmt, 0)
        assert_safe(r.err, "text", 0)


def test_an_undecodable_file_name_is_escaped_and_its_uri_keeps_the_bytes(project: Any) -> None:
    # 08: the byte 0xff in a file name reaches Python as the lone surrogate \udcff.
    root = project({})
    with open(os.path.join(os.fsencode(root), b"requirements\xff.txt"), "wb") as f:
        f.write(OLD.encode())
    for fmt in FORMATS:
        r = run("--format", fmt)
        assert r.code == 1 and r.err == "", r.err
        assert_safe(r.out, fmt, 1)
    assert run("--format", "json").json["findings"][0]["path"] == "requirements\\udcff.txt"
    sarif = json.loads(run("--format", "sarif").out)["runs"][0]["results"][0]
    assert sarif["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "requirements%FF.txt"
    fingerprints = {
        json.loads(run("--format", "gitlab").out)[0]["fingerprint"],
        sarif["partialFingerprints"]["faLint/v1"],
    }
    assert len(fingerprints) == 1 and re.fullmatch("[0-9a-f]{32}", fingerprints.pop())


# --- includes: only inside the project root, never into .git -------------------------------------------


def test_includes_outside_the_project_root_are_not_read(project: Any) -> None:
    # 14: pip would read both; fa-lint must not echo their lines (VERSION_ID=..., root:*:...).
    project({"requirements.txt": "-r /etc/os-release\n-r ../../../../../../etc/shadow\nflash-attn>=2.5\n"})
    r = run("--format", "json", "requirements.txt")
    assert r.code == 0 and "VERSION_ID" not in r.out and "root:" not in r.out
    assert [(f["line"], f["code"]) for f in r.json["findings"]] == [(1, "FAL010"), (2, "FAL010")]
    assert all("outside the project root" in f["message"] for f in r.json["findings"])
    assert r.json["files"] == ["requirements.txt"]


def test_includes_into_git_are_not_read(project: Any) -> None:
    # 15: actions/checkout leaves its auth header in .git/config.
    root = project({"requirements.txt": "-r .git/config\n-r sub/.git/HEAD\nflash-attn==2.6.3\n"})
    (root / ".git").mkdir()
    (root / ".git/config").write_text('[http]\n\textraheader = "AUTHORIZATION: basic c2VjcmV0"\n')
    (root / "sub/.git").mkdir(parents=True)
    (root / "sub/.git/HEAD").write_text("ref: refs/heads/main\n")
    for fmt in FORMATS:
        assert "AUTHORIZATION" not in run("--format", fmt).out
    found = run("--format", "json").json["findings"]
    assert [(f["line"], f["code"]) for f in found] == [(1, "FAL010"), (2, "FAL010")]
    assert all("inside .git" in f["message"] for f in found)


def test_the_project_root_is_the_repository_top(project: Any) -> None:
    root = project({"base.txt": "flash-attn==2.4.2\n", "app/requirements.txt": "-r ../base.txt\n"})
    os.chdir(root / "app")
    assert run("--format", "json").codes() == [("requirements.txt", 1, "FAL010")]  # no repository: app/
    (root / ".git").mkdir()
    assert run("--format", "json").codes() == [("../base.txt", 1, "FAL001")]  # the repository's top


def test_outside_a_repository_the_root_is_the_current_folder_or_the_one_named(project: Any) -> None:
    root = project(
        {
            "work/base.txt": OLD,
            "work/app/requirements.txt": "-r ../base.txt\n",
            "base.txt": OLD,
            "outside/requirements.txt": "-r ../base.txt\n",
        }
    )
    os.chdir(root / "work")
    # a file named inside the current folder may include what is in it (pre-commit names files)
    assert run("--format", "json", "app/requirements.txt").codes() == [("base.txt", 1, "FAL001")]
    # one named outside it is bounded by its own folder
    named = str(root / "outside/requirements.txt")
    assert run("--format", "json", named).codes() == [(named, 1, "FAL010")]


def test_files_that_include_a_named_one_are_looked_for_inside_the_root_only(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reverse walk (issue 10) keeps to the bounds of includes: no symbolic link out of the
    # project root and nothing in .git is read, not even to look for the named file's name in it.
    root = project(
        {
            ".git/requirements.txt": "AUTHORIZATION: basic x\nflash-attn<2.6\n-c ../constraints.txt\n",
            "constraints.txt": "flash-attn!=2.5.*\n",
            "requirements.txt": "flash-attn<2.6\n-c constraints.txt\n",
        }
    )
    outside = root.parent / f"{root.name}-outside"
    outside.mkdir()
    (outside / "requirements.txt").write_text(
        f"SECRET-TOKEN\nflash-attn<2.6\n-c ../{root.name}/constraints.txt\n"
    )
    (root / "requirements-link.txt").symlink_to(outside / "requirements.txt")
    read: list[str] = []
    real = project_files._bytes

    def spy(path: str) -> bytes:
        read.append(path)
        return real(path)

    monkeypatch.setattr(project_files, "_bytes", spy)
    found = engine.check(["constraints.txt"]).findings
    assert sorted(read) == ["requirements.txt"]
    assert sorted((f.location.path, f.code) for f in found) == [
        ("constraints.txt", "FAL002"),
        ("requirements.txt", "FAL004"),  # the environment of the file that includes it, as with `.`
    ]


def test_a_walked_symbolic_link_out_of_the_root_is_not_read(project: Any) -> None:
    root = project({"requirements.txt": "flash-attn==2.6.3\n"})
    (root / ".git").mkdir()
    (root / ".git/config").write_text("AUTHORIZATION: basic x\n")
    (root / "requirements-os.txt").symlink_to("/etc/os-release")
    (root / "requirements-git.txt").symlink_to(root / ".git/config")
    (root / "requirements-ok.txt").symlink_to(root / "requirements.txt")
    r = run("--format", "json")
    assert "AUTHORIZATION" not in r.out and "VERSION_ID" not in r.out
    assert sorted((f["path"], f["code"]) for f in r.json["findings"]) == [
        ("requirements-git.txt", "FAL010"),
        ("requirements-os.txt", "FAL010"),
    ]
    assert sorted(r.json["files"]) == ["requirements-ok.txt", "requirements.txt"]
    # Named on the command line, a file is read wherever it is: the user asked for it.
    # (FAL901: its one line, which pip cannot parse, names no flash-attn)
    assert run("--format", "json", "requirements-git.txt").codes() == [("requirements-git.txt", 1, "FAL901")]


def test_a_diagnostic_quotes_a_short_excerpt_of_the_line(project: Any) -> None:
    secret = "AWS_SECRET_ACCESS_KEY=" + "x" * 40
    project({"requirements.txt": f"{secret}\n"})
    (f,) = run("--format", "json").json["findings"]
    # FAL901: the line pip cannot parse names no flash-attn
    assert f["code"] == "FAL901" and secret[:32] in f["message"] and secret[:33] not in f["message"]


@pytest.mark.parametrize("n", [995, 10_000])
def test_a_deep_include_chain_is_walked_without_recursion(project: Any, n: int) -> None:
    # 12: one Python frame per include level overflowed at 995.
    project({f"r{i}.txt": f"-r r{i + 1}.txt\n" for i in range(n - 1)} | {f"r{n - 1}.txt": OLD})
    assert run("--format", "json", "r0.txt").codes() == [(f"r{n - 1}.txt", 1, "FAL001")]


def test_a_long_include_cycle_is_named_in_short(project: Any) -> None:
    project({f"r{i}.txt": f"-r r{(i + 1) % 50}.txt\n" for i in range(50)})
    (f,) = run("--format", "json", "r0.txt").json["findings"]
    assert f["path"] == "r49.txt" and f["code"] == "FAL900"
    assert (
        f["message"]
        == "include cycle: r0.txt -> r1.txt -> r2.txt -> r3.txt -> ... (43 more) -> r47.txt -> r48.txt -> r49.txt -> r0.txt"
    )


# --- one line model: a line ends at "\n", for locating, suppressing and fixing alike ----------------------

ODD_BREAKS = "\u2028\u2029\x0c\x0b\x1c\x85"  # where str.splitlines() breaks, and "\n" does not
YAML_BREAKS = "\u2028\u2029\x85"  # the ones YAML 1.1 allows (it breaks lines there itself)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("requirements.txt", f"torch==2.3.0 # a{ODD_BREAKS}b\neinops\nflash-attn==2.4.2\n"),  # 17
        ("requirements.txt", f"torch==2.3.0 # a{ODD_BREAKS}b\r\neinops\r\nflash-attn==2.4.2\r\n"),
        (
            "pyproject.toml",
            f'[project]  # a{YAML_BREAKS}b\nname = "x"\ndependencies = ["flash-attn==2.4.2"]\n',
        ),
        (
            "setup.py",
            f"# a{ODD_BREAKS}b\nfrom setuptools import setup\nsetup(install_requires=['flash-attn==2.4.2'])\n",
        ),
        ("environment.yml", f'name: "a{YAML_BREAKS}b"\ndependencies:\n  - pip:\n    - flash-attn==2.4.2\n'),
        ("Dockerfile", f"# a{ODD_BREAKS}b\nFROM python:3.11\nRUN pip install flash-attn==2.4.2\n"),
        ("install.sh", f"# a{ODD_BREAKS}b\necho hi\npip install flash-attn==2.4.2\n"),
    ],
)
def test_unicode_line_breaks_do_not_shift_lines(project: Any, name: str, text: str) -> None:
    project({name: text})
    found = run("--format", "json", name).json["findings"]
    # A script or stage that builds flash-attn without torch is also FAL012, on the same line; one on
    # python:3.11, which has no nvcc, FAL015 too.
    assert {f["code"] for f in found} <= {"FAL001", "FAL012", "FAL015"}
    (f,) = [f for f in found if f["code"] == "FAL001"]
    line_no = 4 if name == "environment.yml" else 3
    assert f["line"] == line_no and all(other["line"] == line_no for other in found)
    line = text.split("\n")[line_no - 1]
    assert line[f["column"] - 1 : f["end_column"] - 1].strip("'\"") == "flash-attn==2.4.2"
    # what --fix cannot mend stays: python:3.11 has no torch, and nothing installs one before the
    # build, which fails isolated or not (FAL012, an error)
    fixed = run("--fix", "--unsafe-fixes", "--ignore", "FAL015", name)
    assert fixed.code == (1 if name == "Dockerfile" else 0)
    after = Path(name).read_bytes().decode()
    # Beside torch 2.3.0 the fix moves to the first release with a wheel built against a released torch
    # 2.3 (2.5.1.post1 to 2.5.7 were built against a nightly of it: `fa-lint releases --torch 2.3`).
    assert after == text.replace("2.4.2", "2.5.8" if "torch==2.3.0" in text else "2.5.0")


def test_pip_reads_a_unicode_line_break_as_a_new_line(project: Any) -> None:
    # pip splits requirements files with str.splitlines(): "b" after U+2028 is a requirement of its own.
    project({"requirements.txt": "einops # a\u2028flash-attn==2.4.2\n"})
    (f,) = run("--format", "json").json["findings"]
    assert (f["code"], f["line"], f["column"], f["end_column"]) == ("FAL001", 1, 12, 29)


def test_a_setup_py_with_lone_carriage_returns_is_located_by_offset(project: Any) -> None:
    # Python ends a line at a lone "\r" too; fa-lint counts "\n" lines, the way diff and GitHub do.
    text = "import x\rsetup(install_requires=['flash-attn==2.4.2'])\n"
    project({"setup.py": text})
    (f,) = run("--format", "json", "--select", "FAL001").json["findings"]
    assert (f["line"], f["column"]) == (1, text.index("flash") + 1)


# --- YAML: aliases cannot expand a small file past a budget ----------------------------------------------


def _laughs(levels: int, width: int) -> str:
    lines = ["a0: &a0 [flash-attn==2.4.2]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        # 13: 20,000 aliases to one pip: mapping of 1,000 requirements (162 KB; 20M records walked)
        (
            "environment.yml",
            "x: &p\n  pip:\n"
            + "".join(f"    - flash-attn>=2.{i % 9}\n" for i in range(1000))
            + "dependencies:\n"
            + "  - *p\n" * 20_000,
            1066,
        ),
        # the same in a workflow's steps: each alias of a 50,000-character run: script adds 50,007 (a
        # sequence, a mapping, "run" and the script, each node 1 and each character 1): the 20th crosses
        (
            ".github/workflows/ci.yml",
            "s: &s\n  - run: "
            + "x" * 50_000
            + "\njobs:\n"
            + "".join(f"  j{i}: {{steps: *s}}\n" for i in range(40)),
            3 + 20,
        ),
        # billion laughs: a0 weighs 19, each a(i) nine of a(i-1) and itself; the aliases of a5 cross
        ("environment.yml", _laughs(9, 9) + "dependencies:\n  - pip: *a8\n", 6),
        ("environment.yml", "dependencies: &d\n  - pip: *d\n", 2),  # an alias inside its own anchor
    ],
)
def test_yaml_aliases_stop_at_the_budget(project: Any, name: str, text: str, line: int) -> None:
    project({name: text})
    (f,) = run("--format", "json", name).json["findings"]
    assert (f["code"], f["line"]) == ("FAL900", line)
    assert f["message"].startswith("YAML not read: "), f["message"]


def test_yaml_aliases_within_the_budget_are_read(project: Any) -> None:
    project(
        {
            "environment.yml": "x: &pin flash-attn==2.4.2\ndependencies:\n  - pip:\n    - *pin\n",
            ".github/workflows/ci.yml": "x: &step\n  run: pip install flash-attn==2.4.2\n"
            "jobs:\n  a:\n    steps: [*step]\n  b:\n    steps: [*step]\n",
        }
    )
    assert sorted(run("--format", "json").codes()) == [
        (".github/workflows/ci.yml", 2, "FAL001"),
        (".github/workflows/ci.yml", 2, "FAL012"),  # a build of flash-attn 2.4.2 with no torch beside it
        ("environment.yml", 1, "FAL001"),
        ("environment.yml", 1, "FAL012"),  # so is conda's pip step, one `pip install -r` of the list
    ]


# --- memory follows findings: records of packages no rule reads are dropped while parsing ----------------


@pytest.mark.parametrize(
    "folder",
    [
        "examples/demo",
        "tests/golden/every-rule",
        *sorted(str(p.relative_to(REPO)) for p in (REPO / "tests/data").glob("*/") if p.is_dir()),
        *sorted(str(p.relative_to(REPO)) for p in (REPO / "tests/data/realworld").glob("*/*/") if p.is_dir()),
    ],
)
def test_dropping_packages_no_rule_reads_changes_no_finding(
    folder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A name missing from a rule family's PACKAGES would silently change what that family finds.
    monkeypatch.chdir(REPO / folder)
    filtered = [json_format.finding(f) for f in engine.check(["."]).findings]
    monkeypatch.setattr(read, "PACKAGES", None)
    assert [json_format.finding(f) for f in engine.check(["."]).findings] == filtered


def test_an_install_of_other_packages_still_counts_as_an_install(project: Any) -> None:
    # numpy is no package a rule reads, but its command is an install fa-lint read in full: torch
    # cannot have come from it, so flash-attn's build without isolation has no torch to see.
    project(
        {
            "Dockerfile": "FROM python:3.11\nRUN pip install numpy\nRUN pip install --no-build-isolation flash-attn==2.6.3\n"
        }
    )
    assert run("--format", "json", "--ignore", "FAL015").codes() == [("Dockerfile", 3, "FAL012")]


# --- python -m fa_lint does not import the checkout's own packages ---------------------------------------


def test_python_dash_m_ignores_packages_in_the_checked_folder(project: Any) -> None:
    poison = 'raise SystemExit("imported the checkout\'s {}")\n'
    project(
        {
            "packaging/__init__.py": poison.format("packaging"),
            "yaml/__init__.py": poison.format("yaml"),
            "pip_requirements_parser.py": poison.format("pip_requirements_parser"),
            "requirements.txt": OLD,
            "environment.yml": "dependencies:\n  - pip:\n    - flash-attn==2.6.3\n",
        }
    )
    proc = subprocess.run(
        [sys.executable, "-m", "fa_lint", "--format", "json", "."], capture_output=True, text=True
    )
    assert proc.returncode == 1, proc.stderr
    assert [(f["path"], f["code"]) for f in json.loads(proc.stdout)["findings"]] == [
        ("environment.yml", "FAL012"),  # conda's pip step builds it, and no torch is installed before
        ("requirements.txt", "FAL001"),
    ]


def test_json_written_a_finding_at_a_time_reads_as_json_dumps_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    from fa_lint import engine
    from fa_lint.report import json_format
    from tests.conftest import REPO

    monkeypatch.chdir(REPO)
    report = engine.check(["examples/demo"])
    out = json_format.render(report)
    assert (
        len(report.findings) > 3 and out == json_format.compact(json.dumps(json.loads(out), indent=2)) + "\n"
    )
    # the whole document at once, each finding's dict made up front: the same text
    assert out == json_format.unforgeable(
        json_format.compact(
            json.dumps(
                json_format.document(report, list(map(json_format.finding, report.findings))), indent=2
            )
        )
        + "\n"
    )


# --- found by the fuzz suite -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where"), [("\x1fname: x\n", (1, 1)), ("name: x\ndependencies: [a\x01]\n", (2, 17))]
)
def test_a_character_yaml_refuses_is_located(project: Any, text: str, where: tuple[int, int]) -> None:
    # PyYAML's reader refuses C0 controls as the loader is made, before any parse error could locate them.
    project({"environment.yml": text})
    (f,) = run("--format", "json").json["findings"]
    assert (f["code"], f["line"], f["column"]) == ("FAL900", *where)
    assert f["message"].startswith("invalid YAML: character #x00")


def test_a_brace_before_a_character_outside_the_bmp_cannot_crash_the_shell_parser(project: Any) -> None:
    # tree-sitter-bash 0.25 reads past its tables on "{" followed by a 4-byte UTF-8 character
    # (tree-sitter/tree-sitter-bash#337): a segfault, which no except clause catches (found by the
    # fuzz suite in a tox command). A child process runs it, so a crash fails this test alone.
    project(
        {
            "install.sh": "pip install flash-attn=={\U000e0001}\n",
            "tox.ini": "[testenv]\ncommands = pytest {posargs:\U0008c44e}\n",
            "Dockerfile": "FROM python:3.11\nRUN echo {\U0010fffd\n",
        }
    )
    code = "from fa_lint import engine\nfor _ in range(100):\n    engine.check(['.'])\n"
    for seed in ("0", "1"):  # where the parser reads past its tables depends on the memory layout
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
        assert r.returncode == 0, r.stderr[-2000:]


# --- no execution -------------------------------------------------------------------------------------


def test_nothing_in_a_checkout_is_run(project: Any) -> None:
    # Each of these would leave a file named "ran" behind if fa-lint executed or constructed it.
    touch = "open('ran', 'w').close()"
    root = project(
        {
            "setup.py": f"{touch}\nfrom setuptools import setup\nsetup(install_requires=['flash-attn==2.4.2'])\n",
            "conftest.py": touch,
            "noxfile.py": touch,
            "install.sh": "touch ran\npip install flash-attn==2.4.2\n",
            "Makefile": "install:\n\ttouch ran && pip install flash-attn==2.4.2\n",
            "environment.yml": "x: !!python/object/apply:os.system ['touch ran']\ndependencies:\n  - pip:\n"
            "    - flash-attn==2.4.2\n",
            "requirements.txt": '-r $(touch ran)\nflash-attn==2.4.2 ; python_version > "$(touch ran)"\n',
        }
    )
    r = run("--format", "json", ".", "Makefile", "noxfile.py")
    assert r.code == 1, r.err
    assert not (root / "ran").exists()


def test_fix_content_cannot_carry_a_legacy_workflow_command(project: Any) -> None:
    # The quoting fix for an unquoted '>' writes the shell word back as it was, "##[error]" included;
    # the JSON writers keep it exact for the tools that apply it, written as "##\u005b".
    # ("#" must not start the redirect's word: the shell would read a comment there.)
    project({"install.sh": "pip install flash_attn>2.5##[error]x 2>&1\n"})
    for fmt in FORMATS:
        # FAL002 for what pip sees, FAL007 for the redirect, FAL012 for a build without torch
        assert_safe(run("--format", fmt).out, fmt, 3)
    (f,) = [f for f in run("--format", "json").json["findings"] if f["code"] == "FAL007"]
    assert f["fix"]["edits"][0]["content"] == '"flash_attn>2.5##[error]x"'


def test_an_include_whose_name_holds_a_nul_names_no_file(project: Any) -> None:
    # UTF-16 text may hold U+0000, which os.path.realpath refuses ("embedded null byte").
    text = "[options]\ntests_require = file: requirements-te\x00t.txt\n"
    project({"setup.cfg": "\ufeff".encode("utf-16-le") + text.encode("utf-16-le")})
    (f,) = run("--format", "json").json["findings"]
    assert (f["code"], f["line"]) == ("FAL900", 2) and "does not exist" in f["message"]


# --- long strings: no regular-expression repeat that keeps a frame per character -----------------------

ESCAPED_TAB = "\\t"  # a backslash and a t: one escape in TOML and JSON strings


def _long_requirement(big: int) -> str:
    padding = " " * big
    return f'[project]\nname = "x"\ndependencies = ["flash-attn==2.4.2{padding}"]\n'


def _long_escapes(big: int) -> str:
    escapes = ESCAPED_TAB * (big // 2)
    return f'[project]\nname = "x"\ndescription = "{escapes}"\ndependencies = ["flash-attn==2.4.2"]\n'


def _blank_lines_and_comments(big: int) -> str:
    gap = "\n" * (big // 2) + "# c\n" * (big // 8)
    return f'[project]\nname = "x"\n{gap}dependencies = ["flash-attn==2.4.2"]\n'


def _long_lock_field(big: int) -> str:
    escapes = ESCAPED_TAB * (big // 2)
    return '{"_meta": {}, "default": {"flash-attn": {"version": "==2.4.2", "x": "' + escapes + '"}}}'


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("pyproject.toml", _long_requirement),
        ("pyproject.toml", _long_escapes),
        ("pyproject.toml", _blank_lines_and_comments),
        ("Pipfile.lock", _long_lock_field),
    ],
)
def test_a_long_string_is_read_in_memory_proportional_to_it(project: Any, name: str, make: Any) -> None:
    # Python's re keeps a backtracking frame per character of "(?:[^"\\]|\\.)*": a 5 MB TOML string
    # once took 730 MB to locate (found by a hostile-input check).
    import tracemalloc

    project({name: make(2_000_000)})
    tracemalloc.start()
    try:
        findings = engine.check([name]).findings
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # a pyproject's flash-attn is also built by `pip install .` (FAL012, issue 42)
    assert [f.code for f in findings if f.code != "FAL012"] == ["FAL001"]
    assert peak < 60_000_000, peak  # the text, tomllib's or json's copy, a few slices: not 300 MB


@pytest.mark.parametrize("seed", range(20))
def test_unescaped_finds_what_the_escape_patterns_found(seed: int) -> None:
    # the patterns unescaped() replaced, as the specification of where a string or a logical line ends
    import random

    from fa_lint.syntax.text import unescaped

    rng = random.Random(seed)
    string = re.compile(r'"(?:[^"\\]|\\.)*"')
    line = re.compile(r"(?:[^\n\\]|\\.)*", re.S)
    for _ in range(300):
        body = "".join(rng.choice('ab"\\\n') for _ in range(rng.randint(0, 12)))
        text = '"' + body.replace("\n", "")
        m = string.match(text)
        found = unescaped(text, '"', 1)
        assert (m.end() if m else -1) == (found + 1 if found >= 0 else -1), text
        body += "x"  # a backslash at the very end escapes nothing: the pattern stopped before it
        m = line.match(body)
        assert m is not None
        found = unescaped(body, "\n", 0)
        assert m.end() == (found if found >= 0 else len(body)), body


def test_setup_py_columns_after_wide_characters_on_a_long_line(project: Any) -> None:
    # ast columns count UTF-8 bytes; a line's characters are mapped to them once, wherever they are
    line = 'setup(install_requires=["é", "日本", ' + '"x", ' * 500 + '"flash-attn==2.4.2"])\n'
    project({"setup.py": "from setuptools import setup\n" + line})
    (f,) = run("--format", "json", "--select", "FAL001").json["findings"]
    column = line.index('"flash-attn') + 2  # 1-based, inside the quotes
    assert (f["code"], f["line"], f["column"], f["end_column"]) == ("FAL001", 2, column, column + 17)
