"""The command line: exit codes, options, configuration, suppression, includes, bad input."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from fa_lint import __version__, cli, kb
from fa_lint.files import read
from fa_lint.rules import RULES
from tests.conftest import REPO, Tty, run

OLD, MIXED, GOOD = "flash-attn==2.4.2\n", "flash-attn>=2.0\n", "flash-attn>=2.5\n"


@pytest.mark.parametrize(
    ("text", "args", "code"),
    [
        (GOOD, [], 0),
        (OLD, [], 1),
        (MIXED, [], 0),
        (MIXED, ["--strict"], 1),
        (OLD, ["--exit-zero"], 0),
        (MIXED, ["--strict", "--exit-zero"], 0),
        ("flash-attn==${V}\n", ["--strict"], 0),  # info never fails a run
    ],
)
def test_exit_codes(project: Any, text: str, args: list[str], code: int) -> None:
    project({"requirements.txt": text})
    assert run(*args).code == code


def test_strict_from_config(project: Any) -> None:
    project({"pyproject.toml": "[tool.fa-lint]\nstrict = true\n", "requirements.txt": MIXED})
    assert run().code == 1


@pytest.mark.parametrize(
    "args",
    [
        ["--format", "xml"],
        ["--no-such-option"],
        ["--min-version", "not-a-version"],
        ["missing.txt"],
        ["-o", "no-such-folder/report.json"],
    ],
)
def test_usage_errors_exit_2(project: Any, args: list[str]) -> None:
    project({"requirements.txt": OLD})
    r = run(*args)
    assert r.code == 2
    assert r.err.startswith(("usage:", "fa-lint:"))
    assert "Traceback" not in r.err


def test_an_unwritable_output_file_is_a_usage_error_with_the_reason(project: Any) -> None:
    project({"requirements.txt": OLD})
    r = run("-o", "no-such-folder/report.json")
    assert r.code == 2 and "internal error" not in r.err
    assert r.err == "fa-lint: error: cannot write no-such-folder/report.json: No such file or directory\n"


@pytest.mark.parametrize(
    "config",
    [
        "[tool.fa-lint]\nmin-versoin = '2.6'\n",  # typo'd key
        "[tool.fa-lint]\nselect = 'FAL001'\n",  # not a list
        "[tool.fa-lint]\nmin-version = 'x'\n",
        "[tool.fa-lint]\nper-file-ignores = ['FAL001']\n",  # not a table
        "[tool.fa-lint.per-file-ignores]\n'legacy/*' = 'FAL001'\n",  # codes not a list
    ],
)
def test_config_errors_exit_2(project: Any, config: str) -> None:
    project({"pyproject.toml": config, "requirements.txt": OLD})
    r = run()
    assert r.code == 2 and "configuration error" in r.err


def test_config_found_in_parent_folder(project: Any) -> None:
    root = project({"pyproject.toml": '[tool.fa-lint]\nignore = ["FAL001"]\n', "sub/requirements.txt": OLD})
    os.chdir(root / "sub")
    assert run().code == 0
    assert run("--isolated").code == 1


def test_per_file_ignores(project: Any) -> None:
    root = project(
        {
            "pyproject.toml": "[tool.fa-lint.per-file-ignores]\n"
            '"legacy/*" = ["FAL001"]\n'
            '"Pipfile.lock" = ["FAL"]\n',  # JSON has no comments to suppress with
            "legacy/requirements.txt": OLD + MIXED,
            "requirements.txt": OLD,
            "Pipfile.lock": '{"default": {"flash-attn": {"version": "==2.4.2"}}}\n',
        }
    )
    expected = [("legacy/requirements.txt", 2, "FAL002"), ("requirements.txt", 1, "FAL001")]
    assert run("--format", "json").codes() == expected
    # globs are relative to the pyproject that holds them, wherever fa-lint runs from
    os.chdir(root / "legacy")
    assert run("--format", "json", ".").codes() == [("requirements.txt", 2, "FAL002")]
    assert run("--format", "json", "--isolated", ".").codes() == [
        ("requirements.txt", 1, "FAL001"),
        ("requirements.txt", 2, "FAL002"),
    ]


def test_walks_leave_out_what_gitignore_leaves_out(project: Any) -> None:
    root = project(
        {
            ".git/HEAD": "",
            ".gitignore": "checkpoints/\nrequirements.local.txt\n",
            "requirements.txt": OLD,
            "requirements.local.txt": OLD,
            "checkpoints/requirements.txt": OLD,
            "sub/.gitignore": "vendored/\n!requirements.local.txt\n",  # the deeper file decides
            "sub/requirements.local.txt": OLD,
            "sub/vendored/requirements.txt": OLD,
        }
    )

    def paths(*args: str) -> list[str]:
        return sorted(p for p, _, _ in run("--format", "json", *args).codes())

    assert paths() == ["requirements.txt", "sub/requirements.local.txt"]
    everything = [
        "checkpoints/requirements.txt",
        "requirements.local.txt",
        "requirements.txt",
        "sub/requirements.local.txt",
        "sub/vendored/requirements.txt",
    ]
    assert paths("--no-respect-gitignore") == everything
    assert paths("checkpoints/requirements.txt") == ["checkpoints/requirements.txt"]  # named: checked
    (root / "pyproject.toml").write_text("[tool.fa-lint]\nrespect-gitignore = false\n")
    assert paths() == everything
    assert paths("--respect-gitignore") == ["requirements.txt", "sub/requirements.local.txt"]


def test_force_exclude_applies_exclude_to_named_files(project: Any) -> None:
    project({"requirements.txt": OLD, "vendor/requirements.txt": OLD})
    named = ("requirements.txt", "vendor/requirements.txt")
    assert [p for p, _, _ in run("--format", "json", "--exclude", "vendor/*", *named).codes()] == list(named)
    only = [("requirements.txt", 1, "FAL001")]
    assert run("--format", "json", "--exclude", "vendor/*", "--force-exclude", *named).codes() == only
    (Path("pyproject.toml")).write_text('[tool.fa-lint]\nexclude = ["vendor/*"]\nforce-exclude = true\n')
    assert run("--format", "json", *named).codes() == only


def test_a_gitignore_line_that_does_not_compile_is_skipped(project: Any) -> None:
    # '[a^--]' makes pathspec's regex compiler raise re.error (and '[[' warn): git skips such a line.
    project(
        {
            ".git/HEAD": "",
            ".gitignore": "[a^--]\n[[x]]\nold/\n",
            "requirements.txt": OLD,
            "old/requirements.txt": OLD,
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning leaking out would fail here
        r = run("--format", "json")
    assert r.codes() == [("requirements.txt", 1, "FAL001")] and r.err == ""


def test_gitignore_files_above_the_repository_do_not_apply(project: Any) -> None:
    files = {
        ".gitignore": "*.txt\n",
        "requirements.txt": OLD,
        "repo/.git/HEAD": "",
        "repo/requirements.txt": OLD,
    }
    root = project(files)
    os.chdir(root / "repo")
    assert run("--format", "json").codes() == [("requirements.txt", 1, "FAL001")]
    os.chdir(root)  # outside any repository a .gitignore still speaks, but not inside a nested one
    assert run("--format", "json").codes() == [("repo/requirements.txt", 1, "FAL001")]


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_standard_input_as_a_named_file(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # What an editor sends for an unsaved buffer, or `git show main:reqs.txt | fa-lint --stdin-filename reqs.txt`
    project({"sub/constraints.txt": "flash-attn<2.5\n", "sub/requirements.txt": GOOD})
    _stdin(monkeypatch, b"\xef\xbb\xbf-c constraints.txt\nflash-attn>=2.0\n")  # a BOM, as editors may send
    r = run("--format", "json", "--stdin-filename", "sub/requirements.txt")
    assert r.json["files"] == ["sub/requirements.txt", "sub/constraints.txt"]  # includes: beside NAME on disk
    assert [(f["path"], f["line"], f["code"]) for f in r.json["findings"]] == [
        ("sub/requirements.txt", 2, "FAL002"),  # what stdin says, not the file on disk (which is fine)
        ("sub/requirements.txt", 2, "FAL004"),  # with the constraint it includes: nothing good left
    ]
    _stdin(monkeypatch, b"[project]\nname = 'x'\nversion = '1'\ndependencies = ['flash-attn==2.4.2']\n")
    assert run("--format", "json", "--stdin-filename", "pyproject.toml").codes() == [
        ("pyproject.toml", 4, "FAL001"),  # the name says the format
        ("pyproject.toml", 4, "FAL012"),  # and `pip install .` builds its flash-attn (issue 42)
    ]
    _stdin(monkeypatch, OLD.encode())
    assert run("--format", "json", "-").codes() == [("-", 1, "FAL001")]  # a bare '-' reads requirements
    _stdin(monkeypatch, MIXED.encode())
    text = run("-").out  # --fix cannot take standard input, so the text offers none
    assert "[*]" not in text and "fixable" not in text and text.startswith("-:1:1: FAL002 ")
    _stdin(monkeypatch, b"flash-attn==2.4.2\n\xff\n")
    (f,) = run("--format", "json", "-").json["findings"]
    assert (f["code"], f["line"], f["message"]) == ("FAL900", 2, "file is not valid UTF-8 (byte 0xff)")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stdin-filename", "requirements.txt", "other.txt"], "give no other paths"),
        (["--stdin-filename", "requirements.txt", "--fix"], "cannot work on standard input"),
        (["-", "--diff"], "cannot work on standard input"),
    ],
)
def test_standard_input_usage_errors(
    project: Any, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    project({"other.txt": OLD})
    _stdin(monkeypatch, OLD.encode())
    r = run(*args)
    assert r.code == 2 and message in r.err


def test_no_files_is_a_clean_run_with_a_notice(project: Any) -> None:
    project({"README.md": "nothing here\n", "docs/MANIFEST.in": "include README.md\n"})
    r = run()
    assert r.code == 0
    assert r.out == "No dependency files found under .\n"  # not "All checks passed ... in 0 files"
    r = run("docs")
    assert r.code == 0 and r.out == "No dependency files found under docs\n"
    r = run("--format", "json", "docs")
    assert r.code == 0 and r.json["findings"] == [] and "no dependency files found" in r.err


def test_version_names_the_knowledge_base() -> None:
    r = run("--version")
    assert r.code == 0
    assert __version__ in r.out and kb.load().date in r.out and str(kb.load().newest) in r.out


def test_list_rules() -> None:
    r = run("--list-rules")
    assert r.code == 0
    assert [line.split()[0] for line in r.out.splitlines()] == list(RULES)


def test_python_dash_m() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "fa_lint", "--version"], capture_output=True, text=True, cwd=REPO
    )
    assert proc.returncode == 0 and proc.stdout.startswith("fa-lint ")


# --- output -------------------------------------------------------------------------------------


def test_text_format(project: Any) -> None:
    project({"requirements.txt": "torch\n" + OLD})
    summary = "Found 1 error, 0 warnings, 0 info in 1 file. 1 fixable with --fix --unsafe-fixes."
    r = run("requirements.txt")
    assert r.out.splitlines()[0].startswith("requirements.txt:2:1: FAL001 ")
    assert r.out.splitlines()[-1] == summary
    assert "\033[" not in r.out
    first, last = run("--format", "concise", "requirements.txt").out.splitlines()
    assert first == r.out.splitlines()[0] and last == summary


def test_json_contract(project: Any) -> None:
    project({"requirements.txt": OLD})
    doc = run("--format", "json").json
    assert doc["version"] == 1
    assert doc["tool"] == {"name": "fa-lint", "version": __version__}
    assert set(doc["knowledge_base"]) >= {"date", "newest", "paged_kv_since", "min_version"}
    (f,) = doc["findings"]
    assert {
        k: f[k]
        for k in (
            "code",
            "severity",
            "path",
            "line",
            "column",
            "end_line",
            "end_column",
            "package",
            "requirement",
        )
    } == {
        "code": "FAL001",
        "severity": "error",
        "path": "requirements.txt",
        "line": 1,
        "column": 1,
        "end_line": 1,
        "end_column": 18,
        "package": "flash-attn",
        "requirement": "flash-attn==2.4.2",
    }
    assert f["url"].endswith("docs/rules/FAL001.md")
    assert f["fix"] == {
        "title": "pin flash-attn==2.5.0 (an upgrade: check it)",
        "applicability": "unsafe",
        "edits": [
            {"path": "requirements.txt", "line": 1, "column": 1, "end_line": 1, "end_column": 18}
            | {"content": "flash-attn==2.5.0"}
        ],
    }
    assert doc["summary"] == {"files": 1, "error": 1, "warning": 0, "info": 0, "suppressed": 0}


def test_output_file(project: Any) -> None:
    root = project({"requirements.txt": OLD})
    r = run("--format", "json", "--output-file", "out.json")
    assert r.code == 1 and r.out == ""
    assert '"FAL001"' in (root / "out.json").read_text()


def test_colour_only_on_a_tty_and_never_with_no_color(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    project({"requirements.txt": OLD})
    out = Tty()
    cli.main([], out=out, err=io.StringIO())
    assert "\033[1;31mFAL001" in out.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    out = Tty()
    cli.main([], out=out, err=io.StringIO())
    assert "\033[" not in out.getvalue()
    out = io.StringIO()
    cli.main(["--color", "always"], out=out, err=io.StringIO())
    assert "\033[" in out.getvalue()


# --- selection and suppression --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "codes"),
    [
        ([], ["FAL001", "FAL002"]),
        (["--select", "FAL001"], ["FAL001"]),
        (["--ignore", "FAL001"], ["FAL002"]),
        (["--select", "FAL00"], ["FAL001", "FAL002"]),
        (["--select", "FAL001,FAL002", "--ignore", "FAL002"], ["FAL001"]),
        (["--select", "fal002"], ["FAL002"]),
    ],
)
def test_select_and_ignore(project: Any, args: list[str], codes: list[str]) -> None:
    project({"requirements.txt": OLD + MIXED})
    assert [f["code"] for f in run("--format", "json", *args).json["findings"]] == codes


def test_select_from_config_cli_wins(project: Any) -> None:
    project({"pyproject.toml": '[tool.fa-lint]\nselect = ["FAL002"]\n', "requirements.txt": OLD + MIXED})
    assert [f["code"] for f in run("--format", "json").json["findings"]] == ["FAL002"]
    assert [f["code"] for f in run("--format", "json", "--select", "FAL001").json["findings"]] == ["FAL001"]


@pytest.mark.parametrize(
    ("comment", "suppressed"),
    [
        ("  # noqa: FAL001", True),
        ("  # noqa:FAL002,FAL001", True),
        ("  # noqa", True),
        ("  # NOQA: FAL001", True),
        ("  # fa-lint: ignore[FAL001]", True),
        ("  # fa-lint: ignore", True),
        ("  # noqa: FAL002", False),
        ("  # fa-lint: ignore[FAL003]", False),
    ],
)
def test_suppression_comments(project: Any, comment: str, suppressed: bool) -> None:
    project({"requirements.txt": f"flash-attn==2.4.2{comment}\n"})
    doc = run("--format", "json").json
    assert (doc["findings"] == []) is suppressed
    assert doc["summary"]["suppressed"] == int(suppressed)


def test_suppression_in_toml_and_shell(project: Any) -> None:
    project(
        {
            "pyproject.toml": '[project]\nname = "x"\ndependencies = [\n  "flash-attn==2.4.2",  # noqa: FAL001\n]\n',
            "install.sh": "pip install flash-attn==2.4.2  # fa-lint: ignore[FAL001]\n",
        }
    )
    assert run().code == 0


# --- discovery and includes -----------------------------------------------------------------------


def test_walk_finds_known_names_and_skips_vendored_folders(project: Any) -> None:
    project(
        {
            "requirements/gpu.txt": OLD,
            "services/api/Dockerfile.gpu": "FROM x\nRUN pip install flash-attn==2.4.2\n",
            ".venv/lib/requirements.txt": OLD,
            "node_modules/x/requirements.txt": OLD,
            "build/requirements.txt": OLD,
            "env2/pyvenv.cfg": "",
            "env2/requirements.txt": OLD,
            "notes.txt": OLD,
        }
    )
    paths = sorted({p for p, _, _ in run("--format", "json").codes()})
    assert paths == ["requirements/gpu.txt", "services/api/Dockerfile.gpu"]


def test_exclude(project: Any) -> None:
    project({"a/requirements.txt": OLD, "b/requirements.txt": OLD})
    assert [p for p, _, _ in run("--format", "json", "--exclude", "b").codes()] == ["a/requirements.txt"]


def test_includes_followed_relative_to_the_including_file(project: Any) -> None:
    project(
        {
            "reqs/main.txt": "-r base/common.txt\n",
            "reqs/base/common.txt": OLD,
        }
    )
    assert run("--format", "json", "reqs/main.txt").codes() == [("reqs/base/common.txt", 1, "FAL001")]


def test_include_problems(project: Any) -> None:
    project(
        {
            "requirements.txt": "-r missing.txt\n-r https://example.com/r.txt\n-r loop.txt\n",
            "loop.txt": "-r requirements.txt\n" + OLD,
        }
    )
    r = run("--format", "json", "requirements.txt")
    got = sorted(r.codes())
    assert got == [
        ("loop.txt", 1, "FAL900"),
        ("loop.txt", 2, "FAL001"),
        ("requirements.txt", 1, "FAL900"),
        ("requirements.txt", 2, "FAL010"),
    ]
    messages = {(f["path"], f["line"]): f["message"] for f in r.json["findings"]}
    assert "does not exist" in messages[("requirements.txt", 1)]
    assert "include cycle" in messages[("loop.txt", 1)]


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "line", "words"),
    [
        ("requirements.txt", b"flash-attn==2.5\n\x00\x01\x02", 2, "binary"),
        ("requirements.txt", b"flash-attn==2.5\nflash-attn\xff==2\n", 2, "not valid UTF-8"),
        ("pyproject.toml", b"[project\nname='x'\n", 1, "invalid TOML"),
        ("Pipfile.lock", b"[1, 2]", 1, "must be a JSON object"),
        ("environment.yml", b"dependencies: [a\n", 2, "invalid YAML"),
        ("setup.py", b"setup(install_requires=['flash-attn==2.4.2'\n", 1, "was never closed"),
        ("Dockerfile", b"FROM x\nRUN <<EOF\npip install flash-attn\n", 2, "never closed"),
    ],
)
def test_bad_files_are_fal900_and_the_rest_is_still_checked(
    project: Any, name: str, content: bytes, line: int, words: str
) -> None:
    project({name: content, "requirements-other.txt": OLD})
    r = run("--format", "json")
    assert r.code == 1
    bad = [f for f in r.json["findings"] if f["path"] == name]
    assert [(f["code"], f["line"]) for f in bad] == [("FAL900", line)]
    assert words in bad[0]["message"]
    assert ("requirements-other.txt", 1, "FAL001") in r.codes()


def test_utf16_and_bom_files_are_read(project: Any) -> None:
    project(
        {
            "requirements.txt": "\ufeffflash-attn==2.4.2\n".encode("utf-16"),
            "requirements-b.txt": "\ufeffflash-attn==2.4.2\n".encode(),
        }
    )
    assert sorted(r[:2] for r in run("--format", "json").codes()) == [
        ("requirements-b.txt", 1),
        ("requirements.txt", 1),
    ]


def test_too_large(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "MAX_BYTES", 10)
    project({"requirements.txt": OLD})
    (f,) = run("--format", "json").json["findings"]
    assert f["code"] == "FAL900" and "too large" in f["message"]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_named_link_to_an_endless_device_is_read_up_to_the_limit(project: Any) -> None:
    # git stores symbolic links: a pull request can make requirements.txt point at /dev/zero
    project({"constraints.txt": OLD})
    os.symlink("/dev/zero", "requirements.txt")
    r = run("--format", "json", "requirements.txt", "constraints.txt")
    assert sorted(r.codes()) == [("constraints.txt", 1, "FAL001"), ("requirements.txt", 1, "FAL900")]
    (f,) = [f for f in r.json["findings"] if f["path"] == "requirements.txt"]
    assert "not a regular file" in f["message"]


@pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="needs /proc/self/fd")
def test_a_named_pipe_is_read_as_its_text(project: Any) -> None:
    # `fa-lint <(...)`: the shell names a pipe, whose size is 0 until it is read
    read, write = os.pipe()
    os.write(write, OLD.encode())
    os.close(write)
    try:
        r = run("--format", "json", f"/proc/self/fd/{read}")
    finally:
        os.close(read)
    assert [c for _, _, c in r.codes()] == ["FAL001"]


def test_parser_crash_costs_one_file_not_the_run(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from fa_lint.sources import SOURCES

    def boom(path: str, text: str) -> Any:
        raise RuntimeError("bug")

    monkeypatch.setattr(SOURCES["shell"], "parse", boom)
    project({"install.sh": "pip install x\n", "requirements.txt": OLD})
    r = run("--format", "json")
    # fa-lint's own bug (issue 40 item 1): FAL902, never FAL900 (a file to fix), and exit 2 as ruff's panic
    assert sorted(r.codes()) == [("install.sh", 1, "FAL902"), ("requirements.txt", 1, "FAL001")]
    assert r.code == 2 and "a bug in fa-lint, not in the files" in r.err


def test_explicit_unknown_names_are_still_checked(project: Any) -> None:
    project(
        {
            "deps.list": OLD,
            "Makefile.gpu": "FA := 2.3.6\ninstall:\n\tpip install flash-attn==$(FA)\n",
            "ci/build.dockerfile.j2": "FROM x\nRUN pip install flash-attn==2.4.2\n",
        }
    )
    r = run("--format", "json", "--select", "FAL001", "deps.list", "Makefile.gpu", "ci/build.dockerfile.j2")
    assert sorted(r.codes()) == [
        ("Makefile.gpu", 3, "FAL001"),
        ("ci/build.dockerfile.j2", 2, "FAL001"),
        ("deps.list", 1, "FAL001"),
    ]


# --- rule, --statistics, --show-fixes ----------------------------------------------------------------


def test_rule_prints_the_page_the_docs_have() -> None:
    r = run("rule", "FAL001")
    assert r.code == 0
    page = (REPO / "docs/rules/FAL001.md").read_text()
    docs = "https://github.com/fa-lint/fa-lint/blob/main/docs/"
    # the same text, with relative links made absolute (a terminal has no docs folder) and no generator note
    expected = page.split("\n<!-- Generated")[0].replace("](../", f"]({docs}")
    assert r.out == expected
    for heading in ("## What it finds", "## Why it matters", "## How to fix", "## Suppress"):
        assert heading in r.out
    assert run("rule", "paged-kv-missing").out == r.out  # by name too
    assert run("rule", "fal001").out == r.out


def test_rule_all_prints_every_page_in_order() -> None:
    r = run("rule", "--all")
    assert r.code == 0
    titles = [line.split()[1] for line in r.out.splitlines() if line.startswith("# FAL")]
    assert titles == list(RULES)


@pytest.mark.parametrize(("args", "message"), [(["FAL999"], "unknown rule 'FAL999'"), ([], "one rule code")])
def test_rule_usage_errors(args: list[str], message: str) -> None:
    r = run("rule", *args)
    assert r.code == 2 and message in r.err and r.out == ""


def test_statistics_counts_each_code_most_frequent_first(project: Any) -> None:
    project(
        {
            "requirements.txt": "flash-attn==2.4.2\n",  # FAL001, fix only with --unsafe-fixes
            "a/requirements.txt": "flash-attn>=2.0\n",  # FAL002, fixable
            "b/requirements.txt": "flash-attn<2.8\n",  # FAL002, fixable
            "c/requirements.txt": "flash-attn @ https://example.com/fa.tar.gz\n",  # FAL009
        }
    )
    r = run("--statistics")
    assert r.code == 1
    assert r.out.splitlines() == [
        "2\tFAL002\t[*] paged-kv-not-guaranteed",
        "1\tFAL001\t[ ] paged-kv-missing",
        "1\tFAL009\t[ ] version-not-determinable",
        "Found 1 error, 2 warnings, 1 info in 4 files. [*] 2 fixable with --fix (1 more with --unsafe-fixes).",
    ]
    assert run("--statistics", "--unsafe-fixes").out.splitlines()[1] == "1\tFAL001\t[*] paged-kv-missing"
    doc = run("--statistics", "--format", "json").json
    assert doc[0] == {
        "code": "FAL002",
        "name": "paged-kv-not-guaranteed",
        "count": 2,
        "fixable": True,
        "fixable_count": 2,
    }
    assert [d["code"] for d in doc] == ["FAL002", "FAL001", "FAL009"]
    assert run("--statistics", "--format", "sarif").code == 2


def test_statistics_of_a_clean_run_is_the_summary(project: Any) -> None:
    project({"requirements.txt": GOOD})
    r = run("--statistics")
    assert (r.code, r.out) == (0, "All checks passed: 0 errors, 0 warnings, 0 info in 1 file.\n")


def test_show_fixes_lists_what_fix_would_change_and_changes_nothing(project: Any) -> None:
    root = project(
        {"requirements.txt": "flash-attn>=2.0\n", "pins.txt": "-r requirements.txt\nflash-attn==2.4.2\n"}
    )
    r = run("--show-fixes", "--format", "concise", "requirements.txt", "pins.txt")
    assert r.code == 1
    lines = r.out.splitlines()
    start = lines.index("Would fix 1 finding (1 more fix with --unsafe-fixes):")
    assert lines[start + 1 : start + 3] == [
        "  requirements.txt:1:1: FAL002 `flash-attn>=2.0` -> `flash-attn>=2.5.0`",
        "",
    ]
    assert (root / "requirements.txt").read_text() == "flash-attn>=2.0\n"
    r = run("--show-fixes", "--unsafe-fixes", "--format", "concise", "requirements.txt", "pins.txt")
    assert "  pins.txt:2:1: FAL001 `flash-attn==2.4.2` -> `flash-attn==2.5.0` (unsafe)" in r.out.splitlines()


def test_show_fixes_with_fix_lists_what_it_changed(project: Any) -> None:
    root = project({"install.sh": "pip install flash-attn>=2.0\n"})
    r = run("--fix", "--show-fixes", "--ignore", "FAL012")  # how it builds is not fixed: test_install.py
    # the quoting (FAL007) makes the range visible, and a second pass raises its floor (FAL002)
    assert (root / "install.sh").read_text() == 'pip install "flash-attn>=2.5.0"\n'
    lines = r.out.splitlines()
    assert lines[:3] == [
        "Fixed 2 findings:",
        '  install.sh:1:13: FAL007 `flash-attn>=2.0` -> `"flash-attn>=2.0"`',
        "  install.sh:1:14: FAL002 `flash-attn>=2.0` -> `flash-attn>=2.5.0`",
    ]
    assert lines[-1] == "All checks passed: 0 errors, 0 warnings, 0 info in 1 file."
    assert r.code == 0


def test_show_fixes_when_there_are_none(project: Any) -> None:
    project({"requirements.txt": "flash-attn==${V}\n"})
    assert "No fixes available." in run("--show-fixes").out.splitlines()


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "gitlab"])
def test_show_fixes_needs_a_text_format(project: Any, fmt: str) -> None:
    project({"requirements.txt": OLD})
    r = run("--show-fixes", "--format", fmt)
    assert r.code == 2 and "--show-fixes" in r.err


def test_an_argument_that_names_a_file_is_a_path_never_an_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ../shared/reliability/47, the class: a name pre-commit passes may start with "-"; argparse would
    # read "-o../x.sh" as -o ../x.sh and "--select=X.sh" as --select X.sh. Named files are paths.
    monkeypatch.setenv("PRE_COMMIT", "1")  # what pre-commit sets for every hook it runs
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in").mkdir()
    monkeypatch.chdir(tmp_path / "in")
    for name in ("-o..", "--select=FAL9"):
        os.mkdir(name)
        Path(name, "install.sh").write_text("pip install --no-build-isolation torch flash-attn==2.4.2\n")
    out = io.StringIO()
    code = cli.main(["--format", "concise", "-o..", "-o../install.sh", "--select=FAL9/install.sh"], out=out)
    assert code == 1, out.getvalue()
    assert "-o../install.sh:1:" in out.getvalue() and "--select=FAL9/install.sh:1:" in out.getvalue()
    assert os.listdir(tmp_path) == ["in"]  # no report beside the folder
    # the value of an option stays its value, and an option naming no file is still an option
    Path("report.txt").write_text("")
    assert cli.main(["-o", "report.txt", "--select", "FAL001", "-o../install.sh"], out=io.StringIO()) == 1
    assert "-o../install.sh:1:" in Path("report.txt").read_text()
    assert "FAL012" not in Path("report.txt").read_text()


def test_outside_pre_commit_a_committed_file_named_like_an_option_changes_no_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pull request that commits a file named "--format" (or "--select") must not turn a CI job's own
    # "--format sarif" into two paths: only pre-commit's appended file names are read as paths.
    monkeypatch.delenv("PRE_COMMIT", raising=False)
    monkeypatch.chdir(tmp_path)
    Path("requirements.txt").write_text("flash-attn==2.4.2\n")
    for name in ("--format", "--select", "sarif"):
        Path(name).write_text("")
    out = io.StringIO()
    assert cli.main(["--format", "sarif", "--select", "FAL001", "requirements.txt"], out=out) == 1
    doc = json.loads(out.getvalue())
    assert [r["ruleId"] for r in doc["runs"][0]["results"]] == ["FAL001"]
