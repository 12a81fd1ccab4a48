"""SARIF, GitHub annotations and GitLab Code Quality say what the JSON report says, in their own terms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fa_lint.report import github
from fa_lint.rules import RULES
from tests.conftest import REPO, SHARED, run

SARIF_SCHEMA = SHARED / "schemas" / "sarif-schema-2.1.0.json"


def _both(*argv: str) -> tuple[dict[str, Any], dict[str, Any]]:
    sarif = json.loads(run("--format", "sarif", "--isolated", *argv).out)
    plain = run("--format", "json", "--isolated", *argv).json
    return sarif, plain


@pytest.fixture
def demo(monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any]]:
    monkeypatch.chdir(REPO)
    return _both("examples/demo")


@pytest.mark.skipif(not SARIF_SCHEMA.exists(), reason="the SARIF schema lives in ../shared/schemas")
def test_sarif_is_valid_against_the_oasis_schema(demo: tuple[dict[str, Any], dict[str, Any]]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SARIF_SCHEMA.read_text())
    errors = list(jsonschema.Draft4Validator(schema).iter_errors(demo[0]))
    assert errors == []


@pytest.mark.skipif(
    not (SARIF_SCHEMA.exists() and (SHARED / "corpus" / "files").exists()),
    reason="the SARIF schema and the corpus live in ../shared",
)
def test_sarif_over_the_real_corpus_is_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    monkeypatch.chdir(SHARED / "corpus")
    doc = json.loads(run("--format", "sarif", "--isolated", "files").out)
    results = doc["runs"][0]["results"]
    assert len(results) > 10 and any("fixes" in r for r in results)
    schema = json.loads(SARIF_SCHEMA.read_text())
    assert list(jsonschema.Draft4Validator(schema).iter_errors(doc)) == []


def test_sarif_results_match_the_json_findings(demo: tuple[dict[str, Any], dict[str, Any]]) -> None:
    sarif, plain = demo
    (run_,) = sarif["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(RULES)
    levels = {"error": "error", "warning": "warning", "info": "note"}
    assert len(run_["results"]) == len(plain["findings"]) > 0
    for result, finding in zip(run_["results"], plain["findings"], strict=True):
        assert result["ruleId"] == finding["code"] == rules[result["ruleIndex"]]["id"]
        assert result["level"] == levels[finding["severity"]]
        assert result["message"]["text"] == finding["message"]
        (loc,) = result["locations"]
        physical = loc["physicalLocation"]
        assert physical["artifactLocation"] == {"uri": finding["path"], "uriBaseId": "%SRCROOT%"}
        region = physical["region"]
        assert (region["startLine"], region["startColumn"], region["endLine"], region["endColumn"]) == (
            finding["line"],
            finding["column"],
            finding["end_line"],
            finding["end_column"],
        )
    assert run_["properties"]["files"] == plain["files"]


def test_sarif_rule_metadata_comes_from_the_registry(demo: tuple[dict[str, Any], dict[str, Any]]) -> None:
    for descriptor in demo[0]["runs"][0]["tool"]["driver"]["rules"]:
        rule = RULES[descriptor["id"]]
        assert descriptor["name"] == rule.name
        assert descriptor["helpUri"] == rule.url
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning"}.get(
            rule.severity.value, "note"
        )


def test_sarif_related_locations_of_an_environment_finding(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("flash-attn<2.6\n-c constraints.txt\n")
    (tmp_path / "constraints.txt").write_text("flash-attn!=2.5.*\n")
    sarif, plain = _both(str(tmp_path))
    (fal004,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "FAL004"]
    (expected,) = [f for f in plain["findings"] if f["code"] == "FAL004"]
    related = fal004["relatedLocations"]
    assert related
    assert [r["id"] for r in related] == list(range(1, len(related) + 1))
    got = [
        (r["physicalLocation"]["artifactLocation"]["uri"], r["physicalLocation"]["region"]["startLine"])
        for r in related
    ]
    assert got == [(Path(x["path"]).as_uri(), x["line"]) for x in expected["related_locations"]]


def test_sarif_paths_are_relative_to_the_run_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sub = tmp_path / "deps dir"
    sub.mkdir()
    (sub / "requirements.txt").write_text("flash-attn==2.4.2\n")
    monkeypatch.chdir(tmp_path)
    for arg in (str(sub), "deps dir", "./deps dir/"):
        sarif, _ = _both(arg)
        (result,) = sarif["runs"][0]["results"]
        artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert artifact == {"uri": "deps%20dir/requirements.txt", "uriBaseId": "%SRCROOT%"}, arg


def test_sarif_fingerprint_survives_lines_moving(tmp_path: Path) -> None:
    req = tmp_path / "requirements.txt"
    req.write_text("flash-attn==2.4.2\n")
    before, _ = _both(str(req))
    req.write_text("# pinned for the cluster image\n\nflash-attn==2.4.2\n")
    after, _ = _both(str(req))
    req.write_text("flash-attn==2.3.6\n")
    other, _ = _both(str(req))
    (b,), (a,), (o,) = (s["runs"][0]["results"] for s in (before, after, other))
    assert a["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    assert a["partialFingerprints"] == b["partialFingerprints"] != o["partialFingerprints"]


def test_sarif_for_a_clean_run_has_no_results(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("flash-attn>=2.5.0\n")
    sarif, _ = _both(str(tmp_path))
    assert sarif["runs"][0]["results"] == []
    assert sarif["runs"][0]["invocations"] == [{"executionSuccessful": True}]


def test_github_annotations_one_per_finding(demo: tuple[dict[str, Any], dict[str, Any]]) -> None:
    out = run("--format", "github", "--isolated", "examples/demo").out.splitlines()
    plain = demo[1]["findings"]
    commands = {"error": "error", "warning": "warning", "info": "notice"}
    assert len(out) == len(plain) + 1 and out[-1].startswith("Found ")
    for line, f in zip(out[:-1], plain, strict=True):
        assert line.startswith(
            f"::{commands[f['severity']]} file={f['path']},line={f['line']},col={f['column']},"
            f"endLine={f['end_line']},endColumn={f['end_column']},title={f['code']} {f['name']}::"
        )
        assert line.endswith(f"::{f['code']} {f['message']}")


def test_github_escapes_what_the_runner_would_split_on(tmp_path: Path) -> None:
    folder = tmp_path / "a,b:c%d"
    folder.mkdir()
    (folder / "requirements.txt").write_text("flash-attn==2.4.2\n")
    (line, _summary) = run("--format", "github", "--isolated", str(folder)).out.splitlines()
    path = str(folder / "requirements.txt").replace("%", "%25").replace(":", "%3A").replace(",", "%2C")
    assert f"file={path},line=1," in line
    assert github._data("50%\r\nnext") == "50%25%0D%0Anext"
    assert github._property("a:b,c") == "a%3Ab%2Cc"


def test_info_findings_are_notices_and_notes(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("flash-attn @ https://example.com/flash_attn-latest.tar.gz\n")
    sarif, plain = _both(str(tmp_path))
    assert [f["severity"] for f in plain["findings"]] == ["info"]
    assert [r["level"] for r in sarif["runs"][0]["results"]] == ["note"]
    lines = run("--format", "github", "--isolated", str(tmp_path)).out.splitlines()
    assert lines[0].startswith("::notice ")


# --- GitLab Code Quality ---------------------------------------------------------------------------------


def _gitlab(*argv: str) -> list[dict[str, Any]]:
    r = run("--format", "gitlab", "--isolated", *argv)
    assert r.code in (0, 1), r.err
    issues: list[dict[str, Any]] = json.loads(r.out)
    return issues


def test_gitlab_issues_match_the_json_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    issues, plain = _gitlab("examples/demo"), run("--format", "json", "--isolated", "examples/demo").json
    severity = {"error": "major", "warning": "minor", "info": "info"}
    assert len(issues) == len(plain["findings"]) > 0
    for issue, f in zip(issues, plain["findings"], strict=True):
        assert issue["check_name"] == f"{f['code']} {f['name']}"
        assert issue["description"] == f"{f['code']} {f['message']}"
        assert issue["severity"] == severity[f["severity"]]
        assert issue["location"] == {"path": f["path"], "lines": {"begin": f["line"], "end": f["end_line"]}}
    assert len({i["fingerprint"] for i in issues}) == len(issues)


def test_gitlab_fingerprints_are_unique_and_survive_lines_moving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GitLab keeps one issue per fingerprint: the same pin twice in a file must stay two issues.
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "install.sh"
    script.write_text("pip install flash-attn==2.4.2\npip install flash-attn==2.4.2\n")
    first = _gitlab("--select", "FAL001", "install.sh")
    script.write_text("set -e\n\npip install flash-attn==2.4.2\npip install flash-attn==2.4.2\n")
    assert len({i["fingerprint"] for i in first}) == 2
    for named in (str(script), "./install.sh", "."):  # however the file is named on the command line
        moved = _gitlab("--select", "FAL001", named)
        assert [i["location"]["lines"]["begin"] for i in moved] == [3, 4]
        assert [i["location"]["path"] for i in moved] == ["install.sh", "install.sh"]
        assert [i["fingerprint"] for i in moved] == [i["fingerprint"] for i in first], named


def test_gitlab_clean_run_is_an_empty_list(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("flash-attn>=2.5.0\n")
    assert _gitlab(str(tmp_path)) == []
