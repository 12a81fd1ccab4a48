"""The output formats ruff has beside fa-lint's first six: json-lines, junit, rdjson, pylint, azure and
grouped. Each is checked against what the tool that reads it parses (the JUnit XML shape CI systems read,
reviewdog's DiagnosticResult message, the Azure Pipelines agent's logging-command grammar), and against
``--format json`` for the same run, so no format says something the contract does not."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from fa_lint.report import azure, rdjson
from tests.conftest import REPO, run

PIN = "flash-attn==2.4.2\n"  # FAL001, an error: no paged KV in 2.4.2
LOOSE = "flash-attn>=2.4\n"  # FAL002, a warning: admits releases with and without paged KV


def _json(*argv: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = run("--format", "json", "--isolated", *argv).json["findings"]
    return found


@pytest.fixture
def demo(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    monkeypatch.chdir(REPO)
    return _json("examples/demo")


# --- json-lines ------------------------------------------------------------------------------------------


def test_json_lines_is_the_json_findings_one_a_line(demo: list[dict[str, Any]]) -> None:
    r = run("--format", "json-lines", "--isolated", "examples/demo")
    assert r.code == 1
    lines = r.out.splitlines()
    assert [json.loads(line) for line in lines] == demo
    assert all("\n" not in line and line.isascii() for line in lines)


def test_json_lines_of_a_clean_run_is_empty(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("flash-attn>=2.5.0\n")
    r = run("--format", "json-lines", "--isolated", str(tmp_path))
    assert (r.code, r.out) == (0, "")


def test_json_lines_keeps_a_line_separator_in_a_name_on_its_line(tmp_path: Path) -> None:
    folder = tmp_path / "a\u2028b"
    folder.mkdir()
    (folder / "requirements.txt").write_text(PIN)
    out = run("--format", "json-lines", "--isolated", str(folder)).out
    assert len(out.splitlines()) == 1 == len(out.split("\n")) - 1
    # str.splitlines would split at U+2028: the escaped form keeps it out of the text
    assert "\u2028" not in out


# --- junit -----------------------------------------------------------------------------------------------


def _junit(*argv: str) -> ET.Element:
    r = run("--format", "junit", "--isolated", *argv)
    assert r.out.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ET.fromstring(r.out.split("\n", 1)[1])


def test_junit_has_a_case_per_finding_and_fails_what_the_run_fails(project: Any) -> None:
    project({"requirements.txt": PIN, "svc/requirements.txt": LOOSE})
    found = _json(".")
    root = _junit(".")
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == len(found) == int(root.get("tests", "0"))
    failing = {c.get("name") for c in cases if c.find("failure") is not None}
    assert (
        failing == {f"fa-lint.{f['code']}" for f in found if f["severity"] == "error"} == {"fa-lint.FAL001"}
    )
    assert root.get("failures") == "1"
    passing = [c for c in cases if c.find("failure") is None]
    assert passing and all(c.findtext("system-out", "").startswith("line 1, col 1, ") for c in passing)
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {f["path"] for f in found}
    for f in found:
        (case,) = [c for c in cases if c.get("file") == f["path"] and c.get("name") == f"fa-lint.{f['code']}"]
        assert (case.get("line"), case.get("column")) == (str(f["line"]), str(f["column"]))
        severity = case.find("./properties/property[@name='severity']")
        assert severity is not None and severity.get("value") == f["severity"]


def test_junit_under_strict_fails_the_warnings_too(project: Any) -> None:
    project({"requirements.txt": LOOSE})
    root = _junit("--strict", ".")
    (case,) = root.findall("./testsuite/testcase")
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "warning"
    assert root.get("failures") == "1"


def test_junit_of_a_clean_run_is_one_passing_case(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("flash-attn>=2.5.0\n")
    root = _junit(str(tmp_path))
    (case,) = root.findall("./testsuite/testcase")
    assert case.find("failure") is None and root.get("failures") == "0"


def test_junit_escapes_what_xml_cannot_hold(tmp_path: Path) -> None:
    folder = tmp_path / 'a<b>&"c\x1bd'
    folder.mkdir()
    (folder / "requirements.txt").write_text(PIN)
    root = _junit(str(folder))  # parses: every character XML 1.0 refuses was escaped before
    (case,) = root.findall("./testsuite/testcase")
    assert case.get("file") == str(folder / "requirements.txt").replace("\x1b", "\\x1b")


# --- rdjson ----------------------------------------------------------------------------------------------

# The fields reviewdog's DiagnosticResult and Diagnostic messages define (proto/rdf/reviewdog.proto):
# reviewdog reads the document with protojson, which refuses any other.
RESULT_FIELDS = {"diagnostics", "source", "severity"}
DIAGNOSTIC_FIELDS = {"message", "location", "severity", "source", "code", "suggestions", "original_output"}


def test_rdjson_holds_only_what_reviewdog_reads(demo: list[dict[str, Any]]) -> None:
    doc = json.loads(run("--format", "rdjson", "--isolated", "examples/demo").out)
    assert set(doc) <= RESULT_FIELDS and set(doc["source"]) <= {"name", "url"}
    assert len(doc["diagnostics"]) == len(demo)
    for d, f in zip(doc["diagnostics"], demo, strict=True):
        assert set(d) <= DIAGNOSTIC_FIELDS
        assert d["code"] == {"value": f["code"], "url": f["url"]}
        assert d["severity"] == f["severity"].upper()
        assert d["message"].split("\n")[0] == f["message"]
        assert d["location"]["path"] == f["path"]
        start = d["location"]["range"]["start"]
        assert (start["line"], start["column"]) == (
            f["line"],
            f["column"],
        )  # ASCII lines: bytes = code points
        fix = f["fix"]
        if fix is not None and fix["applicability"] == "safe":
            (suggestion,) = d["suggestions"]
            assert suggestion["text"] == fix["edits"][0]["content"]
        else:
            assert "suggestions" not in d


def test_rdjson_columns_count_utf8_bytes(project: Any) -> None:
    script = 'echo "ключ" && pip install flash-attn==2.4.2\n'
    project({"install.sh": script})
    (f,) = [f for f in _json(".") if f["code"] == "FAL001"]
    (d,) = [
        d
        for d in json.loads(run("--format", "rdjson", "--isolated", ".").out)["diagnostics"]
        if d["code"]["value"] == "FAL001"
    ]
    start, end = d["location"]["range"]["start"], d["location"]["range"]["end"]
    assert script[f["column"] - 1 :].startswith("flash-attn==2.4.2")  # code points
    assert script.encode()[start["column"] - 1 :].startswith(b"flash-attn==2.4.2")  # bytes
    assert start["column"] == f["column"] + len("ключ".encode()) - len("ключ")
    assert script.encode()[start["column"] - 1 : end["column"] - 1] == b"flash-attn==2.4.2"
    assert rdjson._byte_column("plain", 3) == 3


# --- pylint ----------------------------------------------------------------------------------------------


def test_pylint_lines_are_path_line_code_message(demo: list[dict[str, Any]]) -> None:
    out = run("--format", "pylint", "--isolated", "examples/demo").out.splitlines()
    assert out == [f"{f['path']}:{f['line']}: [{f['code']}] {f['message']}" for f in demo]


# --- azure -----------------------------------------------------------------------------------------------

# The agent's grammar (azure-pipelines-agent Command.TryParse): "##vso[" AREA.EVENT PROPERTIES "]" DATA,
# the properties "k=v;" pairs, ending at the first "]".
_LOGISSUE = re.compile(r"^##vso\[task\.logissue ((?:[a-z]+=[^;\]]*;)+)\](.*)$")


def _properties(line: str) -> tuple[dict[str, str], str]:
    m = _LOGISSUE.match(line)
    assert m, line
    pairs = dict(p.split("=", 1) for p in m[1].rstrip(";").split(";"))
    return pairs, m[2]


def test_azure_issues_match_the_json_findings(demo: list[dict[str, Any]]) -> None:
    out = run("--format", "azure", "--isolated", "examples/demo").out.splitlines()
    assert len(out) == len(demo)
    for line, f in zip(out, demo, strict=True):
        props, message = _properties(line)
        assert props == {
            "type": "error" if f["severity"] == "error" else "warning",
            "sourcepath": str(REPO / f["path"]),
            "linenumber": str(f["line"]),
            "columnnumber": str(f["column"]),
            "code": f["code"],
        }
        assert message == f["message"]


def test_azure_escapes_what_the_agent_splits_on(tmp_path: Path) -> None:
    folder = tmp_path / "a;b]c"
    folder.mkdir()
    (folder / "requirements.txt").write_text(PIN)
    (line,) = run("--format", "azure", "--isolated", str(folder)).out.splitlines()
    props, _ = _properties(line)
    assert props["sourcepath"] == str(folder / "requirements.txt").replace(";", "%3B").replace("]", "%5D")
    assert azure.command.__name__ and "%0A" in "\n".translate(azure._PROPERTY)


# --- grouped ---------------------------------------------------------------------------------------------


def test_grouped_names_each_file_once_with_its_findings_aligned(project: Any) -> None:
    lines = "".join(f"# {n}\n" for n in range(9))
    project({"requirements.txt": PIN, "b/requirements.txt": lines + "flash-attn>=2.4\n" + PIN})
    found = _json(".")
    out = run("--format", "grouped", "--isolated", ".").out
    blocks = out.split("\n\n")
    by_file: dict[str, list[dict[str, Any]]] = {}
    for f in found:
        by_file.setdefault(f["path"], []).append(f)
    for block, (path, fs) in zip(blocks, by_file.items(), strict=False):
        head, *rows = block.splitlines()
        assert head == f"{path}:"
        width = max(len(str(f["line"])) for f in fs)
        assert rows == [
            f"  {f['line']:>{width}}:{f['column']:<1} {f['code']} [{f['severity']}]"
            f"{' [*]' if f['fix'] and f['fix']['applicability'] == 'safe' else ''} {f['message']}"
            for f in fs
        ]
    assert blocks[-1].startswith("Found ")


# --- no format lets a file write a CI command ---------------------------------------------------------------

FORMATS = ("text", "concise", "json", "sarif", "github", "gitlab", "json-lines", "junit", "rdjson", "pylint")
FORMATS += ("azure", "grouped")


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_format_lets_a_file_name_start_a_ci_command(tmp_path: Path, fmt: str) -> None:
    folder = tmp_path / "##vso[task.setvariable variable=X]1 ##[error]y"
    folder.mkdir()
    (folder / "requirements.txt").write_text(PIN)
    out = run("--format", fmt, "--isolated", str(folder)).out
    for line in out.splitlines():
        # the Azure agent acts on "##vso[" anywhere in a line, GitHub's runner on "##[" anywhere
        rest = line.removeprefix("##vso[task.logissue ") if fmt == "azure" else line
        assert "##vso[" not in rest and "##[" not in rest, line
