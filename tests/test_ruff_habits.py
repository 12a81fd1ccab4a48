"""ruff's habits the rest of the way (issue 32), each side by side with what ruff does: ``--output-format
full``, the ``--extend-*`` options and ``--per-file-ignores`` on the command line, ``--config KEY=VALUE``,
``--fix-only``/``--no-fix``/``--exit-non-zero-on-fix``/``-e``, ``-v``/``--show-files``/``--show-settings``,
file-level suppression, ``rule --output-format json`` and a suggestion for a mistyped code, TERM=dumb."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from fa_lint import cli
from fa_lint.rules import RULES
from tests.conftest import Tty, run

OLD = "flash-attn==2.4.2\n"  # FAL001 (an error), no safe fix
LOOSE = "flash-attn>=2.0\n"  # FAL002 (a warning), with a safe fix: >=2.5.0
NESTED = {
    "requirements.txt": OLD + LOOSE,
    "sub/fa-lint.toml": 'ignore = ["FAL001"]\n',
    "sub/requirements.txt": OLD + LOOSE,
}


def _codes(*argv: str) -> list[tuple[str, str]]:
    r = run("--format", "json", *argv)
    assert r.code in (0, 1), r.err
    return sorted((f["path"], f["code"]) for f in r.json["findings"])


# --- --output-format full, -e ------------------------------------------------------------------------


def test_output_format_full_is_the_text_format(project: Any) -> None:
    project({"requirements.txt": OLD})
    full, text = run("--output-format", "full"), run("--format", "text")
    assert (full.code, full.out) == (text.code, text.out) == (1, text.out)
    assert "  |\n" in full.out and "^^^" in full.out  # the code frame: ruff's "full"


def test_e_is_exit_zero(project: Any) -> None:
    project({"requirements.txt": OLD})
    assert run().code == 1
    assert run("-e").code == run("--exit-zero").code == 0


# --- --extend-select, --extend-exclude, --per-file-ignores --------------------------------------------


def test_extend_select_adds_to_select_and_to_the_configurations(project: Any) -> None:
    project({"requirements.txt": OLD + LOOSE, "fa-lint.toml": 'select = ["FAL001"]\n'})
    assert _codes() == [("requirements.txt", "FAL001")]
    assert _codes("--extend-select", "FAL002") == [
        ("requirements.txt", "FAL001"),
        ("requirements.txt", "FAL002"),
    ]
    assert _codes("--select", "FAL002") == [("requirements.txt", "FAL002")]  # --select replaces
    both = _codes("--select", "FAL002", "--extend-select", "FAL001")
    assert both == [("requirements.txt", "FAL001"), ("requirements.txt", "FAL002")]
    bad = run("--extend-select", "FAL0002")
    assert bad.code == 2 and "--extend-select: unknown rule selector FAL0002" in bad.err
    assert "did you mean FAL002?" in bad.err


def test_extend_exclude_adds_to_the_configurations_exclude(project: Any) -> None:
    project(
        {
            "fa-lint.toml": 'exclude = ["a"]\n',
            "a/requirements.txt": OLD,
            "b/requirements.txt": OLD,
            "c/requirements.txt": OLD,
        }
    )
    paths = lambda *argv: sorted({p for p, _ in _codes(*argv)})  # noqa: E731
    assert paths() == ["b/requirements.txt", "c/requirements.txt"]
    assert paths("--extend-exclude", "b") == ["c/requirements.txt"]  # the configuration's, and b
    assert paths("--exclude", "b") == ["a/requirements.txt", "c/requirements.txt"]  # --exclude replaces it


def test_per_file_ignores_on_the_command_line(project: Any) -> None:
    project(
        {
            "fa-lint.toml": '[per-file-ignores]\n"docker/*" = ["FAL001"]\n',
            "docker/requirements.txt": OLD + LOOSE,
            "requirements.txt": OLD + LOOSE,
        }
    )
    everything = [
        (p, c) for p in ("docker/requirements.txt", "requirements.txt") for c in ("FAL001", "FAL002")
    ]
    assert _codes() == [e for e in everything if e != ("docker/requirements.txt", "FAL001")]
    # ruff's: the command line's mapping replaces the configuration's ...
    assert _codes("--per-file-ignores", "requirements.txt:FAL002") == [
        ("docker/requirements.txt", "FAL001"),
        ("requirements.txt", "FAL001"),
    ]  # a glob without a slash matches the name in any folder
    # ... and --extend-per-file-ignores adds to it
    assert _codes("--extend-per-file-ignores", "requirements.txt:FAL002") == [("requirements.txt", "FAL001")]
    assert _codes("--per-file-ignores", "docker/*:FAL001,FAL002") == [
        ("requirements.txt", "FAL001"),
        ("requirements.txt", "FAL002"),
    ]
    for bad in ("FAL001", "docker/*:FAL0001", ":FAL001"):
        r = run("--per-file-ignores", bad)
        assert r.code == 2 and r.out == "", (bad, r.err)


# --- --config KEY=VALUE ------------------------------------------------------------------------------


def test_config_key_value_overrides_every_files_configuration(project: Any) -> None:
    project(NESTED)
    assert _codes() == [
        ("requirements.txt", "FAL001"),
        ("requirements.txt", "FAL002"),
        ("sub/requirements.txt", "FAL002"),
    ]
    # over the defaults (requirements.txt) and over sub/fa-lint.toml's ignore alike
    assert _codes("--config", 'ignore = ["FAL002"]') == [
        ("requirements.txt", "FAL001"),
        ("sub/requirements.txt", "FAL001"),
    ]
    assert _codes("--config", 'select=["FAL002"]', "--config", "min-version = '2.6.0'") == [
        ("requirements.txt", "FAL002"),
        ("sub/requirements.txt", "FAL002"),
    ]
    # strict from an override: the warnings fail the run
    assert run("--select", "FAL002").code == 0
    assert run("--select", "FAL002", "--config", "strict = true").code == 1


def test_config_key_value_with_a_config_file_and_isolated(project: Any) -> None:
    project({**NESTED, "other.toml": 'select = ["FAL001"]\n'})
    assert _codes("--config", "other.toml") == [
        ("requirements.txt", "FAL001"),
        ("sub/requirements.txt", "FAL001"),
    ]
    with_key = _codes("--config", "other.toml", "--config", 'per-file-ignores = {"sub/*" = ["FAL001"]}')
    assert with_key == [("requirements.txt", "FAL001")]
    assert _codes("--config", 'tool.fa-lint.ignore = ["FAL002"]') == _codes("--config", 'ignore = ["FAL002"]')
    assert _codes("--isolated", "--config", 'ignore = ["FAL001"]') == [
        ("requirements.txt", "FAL002"),
        ("sub/requirements.txt", "FAL002"),
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("bogus = 1", "unknown --config key(s): bogus"),
        ('select = "FAL001"', "select must be a list"),
        ('select = ["FAL0001"]', "unknown rule selector FAL0001"),
        ("min-version = 'two'", "'two' is not a version"),
        ("select = [", "neither a file nor a TOML 'key = value'"),
        ("missing.toml", "--config missing.toml: no such file"),
        ("tool.ruff.line-length = 100", "sets no [tool.fa-lint] key"),
    ],
)
def test_a_bad_config_value_is_a_usage_error(project: Any, value: str, message: str) -> None:
    project({"requirements.txt": OLD})
    r = run("--config", value)
    assert r.code == 2 and r.out == "" and message in r.err, r.err


def test_one_config_file_at_most(project: Any) -> None:
    project({"a.toml": "", "b.toml": "", "requirements.txt": OLD})
    r = run("--config", "a.toml", "--config", "b.toml")
    assert r.code == 2 and "one configuration file" in r.err


# --- --fix-only, --no-fix, --exit-non-zero-on-fix ---------------------------------------------------


def test_fix_only_fixes_and_reports_nothing_else(project: Any) -> None:
    root = project({"requirements.txt": OLD + LOOSE})
    r = run("--fix-only")
    assert (r.code, r.out) == (0, "")  # FAL001 is left, and fails nothing (ruff's --fix-only)
    assert (root / "requirements.txt").read_text() == OLD + "flash-attn>=2.5.0\n"
    assert "fixed 1 finding in 1 file" in r.err
    (root / "requirements.txt").write_text(OLD + LOOSE)
    shown = run("--fix-only", "--show-fixes")  # the fixes made, and still nothing of what is left
    assert (
        shown.out
        == "Fixed 1 finding (1 more fix with --unsafe-fixes):\n  requirements.txt:2:1: FAL002 `flash-attn>=2.0` -> `flash-attn>=2.5.0`\n"
    )
    (root / "requirements.txt").write_text(OLD + LOOSE)
    assert run("--fix-only", "--exit-non-zero-on-fix").code == 1  # a file changed
    assert run("--fix-only", "--exit-non-zero-on-fix").code == 0  # nothing left to fix


def test_exit_non_zero_on_fix_fails_a_run_that_changed_a_file(project: Any) -> None:
    root = project({"requirements.txt": LOOSE})
    assert run("--fix").code == 0  # the one finding fixed: nothing left
    (root / "requirements.txt").write_text(LOOSE)
    assert run("--fix", "--exit-non-zero-on-fix").code == 1
    (root / "requirements.txt").write_text(LOOSE)
    assert run("--fix", "--exit-non-zero-on-fix", "--exit-zero").code == 0  # ruff's: --exit-zero wins
    assert run("--exit-non-zero-on-fix").code == 0  # without --fix it changes nothing, so fails nothing


def test_no_fix_turns_fix_off_the_last_one_wins(project: Any) -> None:
    root = project({"requirements.txt": LOOSE})
    assert run("--fix", "--no-fix", "--strict").code == 1  # the warning is still there
    assert (root / "requirements.txt").read_text() == LOOSE
    assert run("--no-fix", "--fix", "--strict").code == 0
    assert (root / "requirements.txt").read_text() == "flash-attn>=2.5.0\n"


# --- -v, --show-files, --show-settings ---------------------------------------------------------------


def test_verbose_names_each_files_configuration(project: Any) -> None:
    project(NESTED)
    r = run("-v", "--format", "concise")
    lines = [line for line in r.err.splitlines() if "configuration:" in line]
    assert lines == [
        "fa-lint: requirements.txt: configuration: no configuration file, the defaults",
        "fa-lint: sub/requirements.txt: configuration: sub/fa-lint.toml",
    ]
    assert r.out == run("--format", "concise").out  # the report itself is unchanged
    lines = [line for line in run("-v", "--isolated").err.splitlines() if "configuration:" in line]
    assert (
        lines[0]
        == "fa-lint: requirements.txt: configuration: no configuration file (--isolated), the defaults"
    )


def test_show_files_lists_what_would_be_checked_and_checks_nothing(project: Any) -> None:
    project({**NESTED, "sub/fa-lint.toml": 'exclude = ["vendor"]\n', "sub/vendor/requirements.txt": OLD})
    r = run("--show-files")
    assert (r.code, r.err) == (0, "")
    assert r.out == "requirements.txt\nsub/requirements.txt\n"  # sub/vendor is excluded by sub's config
    assert run("--show-files", "--extend-exclude", "sub").out == "requirements.txt\n"
    assert run("--show-files", "sub/requirements.txt").out == "sub/requirements.txt\n"


def test_show_settings_prints_each_configuration_with_the_command_line_over_it(project: Any) -> None:
    project(NESTED)
    r = run("--show-settings", "--extend-select", "FAL00", "--select", "FAL01", "--config", "strict = true")
    assert r.code == 0 and r.err == ""
    blocks = r.out.split("\n\n")
    assert len(blocks) == 2
    assert blocks[0].splitlines()[:4] == [
        "# Resolved settings for: requirements.txt",
        "# Settings path: no configuration file, the defaults",
        'select = ["FAL01", "FAL00"]',
        "ignore = []",
    ]
    assert blocks[1].splitlines()[:4] == [
        "# Resolved settings for: sub/requirements.txt",
        "# Settings path: sub/fa-lint.toml",
        'select = ["FAL01", "FAL00"]',
        'ignore = ["FAL001"]',
    ]
    assert "strict = true" in blocks[0] and "strict = true" in blocks[1]
    assert 'min-version = "2.5.0"' in blocks[0]  # the first release with block_table
    assert run("--show-settings", "--min-version", "2.6.3").out.count('min-version = "2.6.3"\n') == 2


# --- file-level suppression --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "kept"),
    [
        ("# fa-lint: noqa: FAL002\n", ["FAL001"]),
        ("# fa-lint: noqa: FAL001, FAL002\n", []),
        ("# fa-lint: noqa\n", []),  # every code
        ("  # FA-LINT: NOQA: fal001\n", ["FAL002"]),
        ("# ruff: noqa: FAL001\n", ["FAL002"]),  # ruff's spelling, with fa-lint's codes
        ("# ruff: noqa\n", ["FAL001", "FAL002"]),  # bare: silences ruff, not this check
        ("# ruff: noqa: E501\n", ["FAL001", "FAL002"]),  # ruff's codes, not fa-lint's
        ("# flake8: noqa\n", ["FAL001", "FAL002"]),
        ("# noqa: FAL001\n", ["FAL001", "FAL002"]),  # a line's noqa, on a line of its own: that line only
    ],
)
def test_a_file_level_noqa_exempts_the_whole_file(project: Any, head: str, kept: list[str]) -> None:
    project({"requirements.txt": head + OLD + "\n" + LOOSE})
    r = run("--format", "json")
    assert [f["code"] for f in r.json["findings"]] == kept
    assert r.json["summary"]["suppressed"] == 2 - len(kept)


def test_a_file_level_noqa_must_be_a_line_of_its_own(project: Any) -> None:
    project({"requirements.txt": OLD.rstrip("\n") + "  # fa-lint: noqa: FAL002\n" + LOOSE})
    assert [f["code"] for f in run("--format", "json").json["findings"]] == ["FAL001", "FAL002"]


def test_a_file_level_noqa_in_a_dockerfile_and_a_pyproject(project: Any) -> None:
    docker = "FROM python:3.12\nRUN pip install flash-attn==2.4.2\n"
    pyproject = '[project]\nname = "x"\ndependencies = ["flash-attn==2.4.2"]\n'
    project({"Dockerfile": docker, "pyproject.toml": pyproject})
    before = _codes()
    assert ("Dockerfile", "FAL001") in before and ("pyproject.toml", "FAL001") in before
    project(
        {
            "Dockerfile": "# fa-lint: noqa: FAL001\n" + docker,
            "pyproject.toml": "# fa-lint: noqa\n" + pyproject,
        }
    )
    after = _codes()
    assert after == [(p, c) for p, c in before if p == "Dockerfile" and c != "FAL001"]


def test_a_file_level_noqa_inside_a_string_exempts_nothing(project: Any) -> None:
    # a line of a multi-line string (Python, TOML) or a YAML block scalar is text, not a comment: the
    # file's own syntax says where comments are, as for a line's noqa
    setup = 'DOC = """\n# fa-lint: noqa\n"""\nfrom setuptools import setup\nsetup(install_requires=["flash-attn==2.4.2"])\n'
    pyproject = '[project]\nname = "x"\ndescription = """\n# fa-lint: noqa\n"""\ndependencies = ["flash-attn==2.4.2"]\n'
    project({"setup.py": setup, "pyproject.toml": pyproject})
    assert {(p, c) for p, c in _codes() if c == "FAL001"} == {
        ("setup.py", "FAL001"),
        ("pyproject.toml", "FAL001"),
    }


# --- fa-lint rule ------------------------------------------------------------------------------------


def test_rule_as_json(project: Any) -> None:
    r = run("rule", "FAL007", "--output-format", "json")
    assert r.code == 0
    rule = RULES["FAL007"]
    shown = json.loads(r.out)
    assert shown["code"] == "FAL007" and shown["name"] == rule.name == "unquoted-specifier-redirect"
    assert shown["severity"] == "warning" and shown["summary"] == rule.summary and shown["url"] == rule.url
    assert shown["explanation"] == run("rule", "FAL007").out
    every = json.loads(run("rule", "--all", "--output-format", "json").out)
    assert [x["code"] for x in every] == list(RULES)
    assert json.loads(run("rule", "paged-kv-missing", "--format", "json").out)["code"] == "FAL001"


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        ("FLA001", "did you mean FAL001?"),
        ("FAL0012", "did you mean FAL012?"),
        ("paged-kv-mising", "did you mean paged-kv-missing (FAL001)?"),
        ("FAL01", "the codes starting with it: FAL010, FAL011"),
    ],
)
def test_a_mistyped_rule_suggests_the_nearest(given: str, hint: str) -> None:
    r = run("rule", given)
    assert r.code == 2 and hint in r.err, r.err
    assert "did you mean" not in run("rule", "XYZZY").err


def test_a_mistyped_code_in_a_configuration_file_suggests_the_nearest(project: Any) -> None:
    project({"requirements.txt": OLD, "fa-lint.toml": 'ignore = ["FAL0011"]\n'})
    r = run()
    assert r.code == 2 and "fa-lint.toml:1:1: " in r.err and "(did you mean FAL011? " in r.err, r.err


# --- TERM=dumb ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "coloured"),
    [
        ({}, True),
        ({"TERM": "dumb"}, False),
        ({"TERM": "xterm-256color"}, True),
        ({"TERM": "dumb", "FORCE_COLOR": "1"}, True),
    ],
)
def test_a_dumb_terminal_gets_no_colour(
    project: Any, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], coloured: bool
) -> None:
    project({"requirements.txt": OLD})
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = Tty()
    cli.main([], out=out, err=io.StringIO())
    assert ("\033[" in out.getvalue()) is coloured


def test_the_options_complete_in_the_shell(project: Any) -> None:
    script = run("completion", "bash").out
    for option in ("--extend-select", "--per-file-ignores", "--show-settings", "--fix-only", "--no-fix"):
        assert option in script, option
    assert "full" in script  # --output-format's values


# --- --add-noqa --------------------------------------------------------------------------------------


def test_add_noqa_suppresses_each_line_and_nothing_else_changes(project: Any) -> None:
    docker = (
        'FROM python:3.12\nRUN pip install "flash-attn==2.4.2"\nRUN pip install \\\n  flash-attn==2.4.2\n'
    )
    root = project({"requirements.txt": OLD + "torch\r\n" + LOOSE, "Dockerfile": docker})
    before = run("--format", "json").json
    lines = {(f["path"], f["line"]) for f in before["findings"]}
    r = run("--add-noqa")
    assert r.code == 0 and r.out == ""  # ruff's: the findings are suppressed, the run passes
    assert f"added {len(lines)} noqa comments to 2 files" in r.err
    assert (root / "requirements.txt").read_bytes() == (
        b"flash-attn==2.4.2  # noqa: FAL001\ntorch\r\nflash-attn>=2.0  # noqa: FAL002\n"
    )
    codes = sorted({f["code"] for f in before["findings"] if f["path"] == "Dockerfile" and f["line"] == 2})
    assert (root / "Dockerfile").read_text().splitlines()[1] == (
        f'RUN pip install "flash-attn==2.4.2"  # noqa: {", ".join(codes)}'
    )
    assert (root / "Dockerfile").read_text().splitlines()[3] == "  flash-attn==2.4.2  # noqa: FAL001"
    after = run("--format", "json").json
    assert after["findings"] == [] and after["summary"]["suppressed"] == len(before["findings"])
    assert run("--add-noqa").err.endswith("added 0 noqa comments to 0 files\n")  # nothing left to add


def test_add_noqa_leaves_a_line_that_goes_on_and_a_file_without_comments(project: Any) -> None:
    continued = "flash-attn==2.4.2 \\\n    --hash=sha256:" + "0" * 64 + "\n"
    lock = '{"default": {"flash-attn": {"version": "==2.4.2"}}, "develop": {}, "_meta": {}}\n'
    root = project({"requirements.txt": continued, "Pipfile.lock": lock})
    assert {f["path"] for f in run("--format", "json").json["findings"]} == {
        "requirements.txt",
        "Pipfile.lock",
    }
    r = run("--add-noqa")
    assert r.code == 0
    assert "no noqa added: requirements.txt:1: the line goes on with a '\\'" in r.err
    assert "no noqa added: Pipfile.lock:1: the file's syntax has no comment there" in r.err
    assert (root / "requirements.txt").read_text() == continued and (
        root / "Pipfile.lock"
    ).read_text() == lock


def test_add_noqa_refuses_to_fix_too(project: Any) -> None:
    project({"requirements.txt": OLD})
    for other in ("--fix", "--diff"):
        r = run("--add-noqa", other)
        assert r.code == 2 and "--add-noqa" in r.err


# --- the first test run's npm install says what it is doing ------------------------------------------


def test_the_npm_install_says_when_it_starts_and_when_it_is_done(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import stat

    from tests import node_tools

    bin_dir, tools = tmp_path / "bin", tmp_path / "tools"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text("#!/bin/sh\nexit 0\n")  # an npm that installs nothing, quickly
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FA_LINT_TOOLS", str(tools))
    monkeypatch.delenv("FA_LINT_NO_NPM", raising=False)
    said: list[str] = []
    monkeypatch.setattr(node_tools, "announce", said.append)
    assert node_tools._ensured.__wrapped__() == ""  # the uncached function: this run's install
    assert len(said) == 2, said
    assert said[0].startswith(f"installing the npm tools some tests run into {tools}")
    assert said[1].startswith("the npm tools are installed (")
    npm.write_text("#!/bin/sh\necho 'E404 not found' >&2\nexit 1\n")
    said.clear()
    assert node_tools._ensured.__wrapped__().startswith("npm install failed: E404")
    assert said[1] == "npm install failed: E404 not found"
