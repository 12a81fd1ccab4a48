"""ruff's command-line habits: --output-format, --quiet/--silent, FORCE_COLOR and CLICOLOR_FORCE, no
abbreviated options, the subcommands in --help, shell completion, a JSON Schema for the JSON output."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fa_lint import cli
from fa_lint.rules import RULES
from tests.conftest import REPO, Tty, run

OLD = "flash-attn==2.4.2\n"
SCHEMAS = REPO / "docs" / "schemas"


def test_output_format_is_rufs_name_for_format(project: Any) -> None:
    project({"requirements.txt": OLD})
    assert run("--output-format", "json").json == run("--format", "json").json
    assert run("--output-format=concise").out == run("--format", "concise").out


@pytest.mark.parametrize("argv", [["--form", "json"], ["--sel", "FAL001"], ["--isol"], ["--stat"]])
def test_an_abbreviated_option_is_an_error(project: Any, argv: list[str]) -> None:
    project({"requirements.txt": OLD})
    r = run(*argv)
    assert r.code == 2 and "unrecognized arguments" in r.err, r.err


def test_subcommands_refuse_abbreviations_too() -> None:
    assert run("releases", "--tor", "2.4").code == 2
    assert run("bot-config", "renovate", "--isol").code == 2
    assert run("verify", "--pyth", "x").code == 2


def test_quiet_prints_the_findings_alone_and_silent_nothing(project: Any) -> None:
    project({"requirements.txt": OLD, "empty/README": "x\n"})
    full = run("--format", "concise")
    quiet = run("--format", "concise", "-q")
    assert quiet.code == full.code == 1
    assert quiet.out == full.out.split("Found ")[0] and "Found" not in quiet.out and quiet.err == ""
    assert run("-q").out.rstrip("\n") == run().out.split("\n\nFound")[0]  # the full text, no summary
    silent = run("--silent")
    assert (silent.code, silent.out, silent.err) == (1, "", "")
    nothing = run("-q", "--format", "json", "empty")
    assert nothing.err == ""  # no "no dependency files found" notice either
    assert run("-q", "-s").code == 2  # one or the other


def test_silent_still_writes_the_output_file(project: Any) -> None:
    root = project({"requirements.txt": OLD})
    r = run("--silent", "--format", "json", "-o", "report.json")
    assert (r.code, r.out) == (1, "")
    assert json.loads((root / "report.json").read_text())["findings"][0]["code"] == "FAL001"


@pytest.mark.parametrize(
    ("env", "coloured"),
    [
        ({}, False),
        ({"FORCE_COLOR": "1"}, True),
        ({"FORCE_COLOR": "0"}, True),  # force-color.org: any value
        ({"FORCE_COLOR": ""}, False),
        ({"CLICOLOR_FORCE": "1"}, True),
        ({"CLICOLOR_FORCE": "0"}, False),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),  # no-color.org: the refusal wins
    ],
)
def test_colour_is_forced_by_force_color_and_clicolor_force(
    project: Any, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], coloured: bool
) -> None:
    project({"requirements.txt": OLD})
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = io.StringIO()  # not a terminal
    cli.main([], out=out, err=io.StringIO())
    assert ("\033[1;31mFAL001 [error]" in out.getvalue()) is coloured
    out = io.StringIO()  # not a terminal
    cli.main(["--color", "never"], out=out, err=io.StringIO())  # the option wins over the variables
    assert "\033[" not in out.getvalue()


def test_clicolor_0_turns_a_terminals_colour_off(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    project({"requirements.txt": OLD})
    monkeypatch.setenv("CLICOLOR", "0")
    out = Tty()
    cli.main([], out=out, err=io.StringIO())
    assert "\033[" not in out.getvalue()


def test_help_lists_the_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--help").code == 0
    out = capsys.readouterr().out  # argparse prints --help itself
    commands = out.split("\ncommands:\n", 1)[1].split("\n\n", 1)[0]
    assert [line.split()[0] for line in commands.splitlines()] == list(cli.args.COMMANDS)
    assert "fa-lint {check,version,verify,rule,releases,bot-config,completion} ..." in out.splitlines()[1]


def test_severity_is_written_out_in_text_and_concise(project: Any) -> None:
    project({"requirements.txt": OLD + "flash-attn>=2.0\n"})
    lines = run("--format", "concise").out.splitlines()
    assert lines[0].startswith("requirements.txt:1:1: FAL001 [error] ")
    assert lines[1].startswith("requirements.txt:2:1: FAL002 [warning] [*] ")
    assert run().out.startswith("requirements.txt:1:1: FAL001 [error] ")


# --- shell completion --------------------------------------------------------------------------------


def test_completion_scripts_come_from_the_parsers() -> None:
    for shell in ("bash", "zsh", "fish"):
        r = run("completion", shell)
        assert r.code == 0 and "output-format" in r.out and "bot-config" in r.out, shell
        assert all(code in r.out for code in RULES), shell  # `fa-lint rule <Tab>` offers every rule
    assert run("completion", "tcsh").code == 2


def _complete(script: str, words: list[str]) -> list[str]:
    """What bash offers for ``words`` (the last one being typed), with the script loaded."""
    line = " ".join(words)
    probe = (
        f"{script}\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}; COMP_LINE={line!r}\n"
        "_fa_lint; printf '%s\\n' \"${COMPREPLY[@]}\""
    )
    r = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_offers_options_values_codes_and_subcommands(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "requirements.txt").write_text(OLD)
    script = run("completion", "bash").out
    assert sorted(_complete(script, ["fa-lint", "--output-f"])) == ["--output-file", "--output-format"]
    assert _complete(script, ["fa-lint", "--format", "s"]) == ["sarif"]
    assert set(_complete(script, ["fa-lint", "b"])) == {"bot-config"}
    assert _complete(script, ["fa-lint", "rule", "FAL01"]) == [c for c in RULES if c.startswith("FAL01")]
    assert _complete(script, ["fa-lint", "bot-config", "d"]) == ["dependabot"]
    assert _complete(script, ["fa-lint", "verify", "--py"]) == ["--python"]
    assert _complete(script, ["fa-lint", "requ"]) == ["requirements.txt"]  # paths
    assert _complete(script, ["fa-lint", "completion", "f"]) == ["fish"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completion_loads(tmp_path: Path) -> None:
    script = tmp_path / "fa-lint.fish"
    script.write_text(run("completion", "fish").out)
    r = subprocess.run(
        ["fish", "-c", f"source {script}; complete -C 'fa-lint --output-f'"], capture_output=True, text=True
    )
    assert "--output-format" in r.stdout, r.stdout + r.stderr


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion_parses(tmp_path: Path) -> None:
    script = tmp_path / "_fa-lint"
    script.write_text(run("completion", "zsh").out)
    assert subprocess.run(["zsh", "-n", str(script)], capture_output=True).returncode == 0


# --- the JSON output's schema ------------------------------------------------------------------------


def _validator(name: str) -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def _properties(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """Every property a schema (its $ref, allOf and non-null oneOf members included) describes."""
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    found = dict(schema.get("properties", {}))
    for sub in schema.get("allOf", []) + [s for s in schema.get("oneOf", []) if s.get("type") != "null"]:
        found.update(_properties(sub, root))
    return found


def _described(instance: Any, schema: dict[str, Any], root: dict[str, Any], where: str = "") -> list[str]:
    """Keys of the output that the schema does not describe: the contract must name every field."""
    if "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    missing = []
    if isinstance(instance, dict):
        known = _properties(schema, root)
        for key, value in instance.items():
            if key not in known:
                missing.append(f"{where}.{key}")
            else:
                missing += _described(value, known[key], root, f"{where}.{key}")
    if isinstance(instance, list) and "items" in schema:
        for item in instance:
            missing += _described(item, schema["items"], root, f"{where}[]")
    return sorted(set(missing))


@pytest.mark.parametrize("name", ["demo.json", "every-rule.json"])
def test_the_json_reports_match_their_schema(name: str) -> None:
    doc = json.loads((REPO / "tests" / "golden" / name).read_text())
    validator = _validator("report.schema.json")
    assert [e.message for e in validator.iter_errors(doc)] == []
    assert _described(doc, validator.schema, validator.schema) == []


def test_the_schema_rejects_what_the_contract_forbids() -> None:
    validator = _validator("report.schema.json")
    doc = json.loads((REPO / "tests" / "golden" / "demo.json").read_text())
    doc["findings"][0]["severity"] = "fatal"
    del doc["summary"]["info"]
    assert len(list(validator.iter_errors(doc))) == 2


def test_statistics_match_their_schema() -> None:
    doc = json.loads((REPO / "tests" / "golden" / "demo-statistics.json").read_text())
    validator = _validator("statistics.schema.json")
    assert [e.message for e in validator.iter_errors(doc)] == []
    assert _described(doc, validator.schema, validator.schema) == []
