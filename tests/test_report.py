"""SARIF, GitHub annotations and GitLab Code Quality say what the JSON report says, in their own terms."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from fa_lint.model import INTERNAL
from fa_lint.report import github
from fa_lint.rules import RULES, page
from tests import node_tools
from tests.conftest import REPO, SHARED, run

SARIF_SCHEMA = REPO / "tests" / "data" / "schemas" / "sarif-schema-2.1.0.json"  # OASIS's (SOURCES.md there)


def _escaped(message: str) -> str:
    return message.replace("[", "\\[").replace("]", "\\]")


def _both(*argv: str) -> tuple[dict[str, Any], dict[str, Any]]:
    sarif = json.loads(run("--format", "sarif", "--isolated", *argv).out)
    plain = run("--format", "json", "--isolated", *argv).json
    return sarif, plain


@pytest.fixture
def demo(monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any]]:
    monkeypatch.chdir(REPO)
    return _both("examples/demo")


def test_sarif_is_valid_against_the_oasis_schema(demo: tuple[dict[str, Any], dict[str, Any]]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SARIF_SCHEMA.read_text())
    errors = list(jsonschema.Draft4Validator(schema).iter_errors(demo[0]))
    assert errors == []


def test_sarif_with_every_rule_notes_and_help_is_valid() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads((REPO / "tests/golden/every-rule.sarif").read_text())
    # every rule but fa-lint's own bug (FAL902: tests/test_hostile_round5.py validates one)
    assert {r["ruleId"] for r in doc["runs"][0]["results"]} == set(RULES) - {INTERNAL}
    schema = json.loads(SARIF_SCHEMA.read_text())
    assert list(jsonschema.Draft4Validator(schema).iter_errors(doc)) == []


@pytest.mark.skipif(not (SHARED / "corpus" / "files").exists(), reason="the corpus lives in ../shared")
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
        text = _escaped(finding["message"])
        assert result["message"]["text"] == text
        notes = "".join(f"\n- {n}" for n in finding["notes"])
        assert result["message"]["markdown"] == f"{text}\n{notes}\n\nhelp: {finding['help']}"
        assert result["properties"]["notes"] == finding["notes"]
        assert result["properties"]["help"] == finding["help"]
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
        assert descriptor["help"]["markdown"] == page(rule.code)  # GitHub shows it with the alert
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
    # Code scanning shows a related location only where the message links it: '[text](id)'.
    links = re.findall(r"(?<!\\)\[((?:[^\]\\]|\\.)*)\]\((\d+)\)", fal004["message"]["text"])
    assert [int(i) for _, i in links] == [r["id"] for r in related]
    assert [text for text, _ in links] == [f"{x['path']}:{x['line']}" for x in expected["related_locations"]]
    assert fal004["message"]["text"].startswith(_escaped(expected["message"]))


def test_sarif_related_links_name_paths_relative_to_the_run_folder(project: Any) -> None:
    project(
        {"requirements.txt": "flash-attn<2.6\n-c constraints.txt\n", "constraints.txt": "flash-attn!=2.5.*\n"}
    )
    sarif, _ = _both(".")
    (fal004,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "FAL004"]
    assert fal004["message"]["text"].endswith(" Related: [constraints.txt:1](1).")
    (related,) = fal004["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"] == {
        "uri": "constraints.txt",
        "uriBaseId": "%SRCROOT%",
    }


def test_sarif_escapes_brackets_that_would_read_as_links(project: Any) -> None:
    project({"requirements.txt": "flash-attn[cuda](1)==2.4.2\n"})
    sarif, plain = _both(".")
    (result,) = sarif["runs"][0]["results"]
    assert "[cuda](1)" in plain["findings"][0]["message"]
    assert "\\[cuda\\](1)" in result["message"]["text"]
    assert re.search(r"(?<!\\)\[", result["message"]["text"]) is None


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


def test_sarif_fingerprints_are_unique_and_survive_lines_moving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Code scanning merges results that share a fingerprint: the same pin twice must stay two alerts.
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "install.sh"
    script.write_text("pip install flash-attn==2.4.2\npip install flash-attn==2.4.2\n")
    only = ("--select", "FAL001", "install.sh")  # the pins' own findings (FAL012 has its own per line)
    first = [r["partialFingerprints"]["faLint/v1"] for r in _both(*only)[0]["runs"][0]["results"]]
    assert len(set(first)) == 2
    script.write_text("set -e\n\npip install flash-attn==2.4.2\npip install flash-attn==2.4.2\n")
    moved = _both(*only)[0]["runs"][0]["results"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in moved] == [3, 4]
    assert [r["partialFingerprints"]["faLint/v1"] for r in moved] == first
    gitlab = [i["fingerprint"] for i in _gitlab(*only)]
    assert gitlab == first  # one identity for a finding, whichever report carries it


def test_fingerprint_of_a_finding_that_names_other_lines_survives_them_moving(project: Any) -> None:
    # FAL004's message says where the other requirement is; that position moves with the lines too.
    project(
        {"requirements.txt": "flash-attn<2.6\n-c constraints.txt\n", "constraints.txt": "flash-attn!=2.5.*\n"}
    )
    (before,) = [i for i in _gitlab(".") if i["check_name"].startswith("FAL004")]
    project({"constraints.txt": "# cluster pins\n\nflash-attn!=2.5.*\n"})
    (after,) = [i for i in _gitlab(".") if i["check_name"].startswith("FAL004")]
    assert after["fingerprint"] == before["fingerprint"]
    project({"constraints.txt": "flash-attn!=2.5.*,!=2.5.9.post1\n"})
    (other,) = [i for i in _gitlab(".") if i["check_name"].startswith("FAL004")]
    assert other["fingerprint"] != before["fingerprint"]


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
        body = "\n".join(
            [f"{f['code']} {f['message']}", *(f"note: {n}" for n in f["notes"]), f"help: {f['help']}"]
        )
        assert line.endswith("::" + body.replace("%", "%25").replace("\n", "%0A"))


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
        notes = "".join(f"- {n}\n" for n in f["notes"])
        assert issue["content"] == {"body": f"{notes}\nhelp: {f['help']}"}
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


# --- SARIF for GitHub code scanning: what its ingestion asks of each rule and result ------------------


def test_every_rule_carries_what_code_scanning_requires() -> None:
    doc = json.loads((REPO / "tests/golden/every-rule.sarif").read_text())
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(RULES)  # from the registry: a new rule is listed as it lands
    for r in rules:
        rule = RULES[r["id"]]
        assert r["name"] == rule.name and r["shortDescription"]["text"] == rule.summary
        full = r["fullDescription"]["text"]
        assert full and full != rule.summary and "\n" not in full and not full.endswith(":"), r["id"]
        assert "](" not in full  # plain text: a link's text without its target
        assert r["helpUri"] == rule.url and r["help"]["markdown"] == page(rule.code)
        assert r["help"]["text"].startswith(full) and rule.url in r["help"]["text"]
        assert (
            r["defaultConfiguration"]["level"]
            == {"error": "error", "warning": "warning", "info": "note"}[rule.severity.value]
        )


def test_every_result_quotes_its_region_and_the_lines_around_it(project: Any) -> None:
    project({"requirements.txt": "# GPU\ntorch==2.4.0\nflash-attn==2.4.2  # old\n\n"})
    doc = json.loads(run("--format", "sarif", "--isolated", "--select", "FAL001").out)
    (result,) = doc["runs"][0]["results"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["region"]["snippet"] == {"text": "flash-attn==2.4.2"}
    assert physical["contextRegion"] == {
        "startLine": 1,
        "endLine": 4,  # two lines either side, within the file
        "snippet": {"text": "# GPU\ntorch==2.4.0\nflash-attn==2.4.2  # old\n\n"},
    }


def test_a_snippet_is_escaped_as_every_output_escapes_a_file(project: Any) -> None:
    project({"requirements.txt": "flash-attn==2.4.2 # \x1b]0;t\x07\n"})
    doc = json.loads(run("--format", "sarif", "--isolated").out)
    context = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["contextRegion"]
    assert "\x1b" not in context["snippet"]["text"] and "\\x1b" in context["snippet"]["text"]


def _git_repo(root: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(root)], check=True)


def test_paths_are_relative_to_the_repository_top_wherever_fa_lint_runs(project: Any) -> None:
    # Code scanning, GitLab and the annotations resolve a path from the repository's top: a job that runs
    # fa-lint in a subfolder (working-directory: services/api) must still name services/api/....
    root = project({"services/api/requirements.txt": "flash-attn==2.4.2\n"})
    _git_repo(root)
    os.chdir(root / "services" / "api")
    sarif = json.loads(run("--format", "sarif", "--isolated").out)
    location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "services/api/requirements.txt", "uriBaseId": "%SRCROOT%"}
    gitlab = json.loads(run("--format", "gitlab", "--isolated").out)
    assert gitlab[0]["location"]["path"] == "services/api/requirements.txt"
    annotations = run("--format", "github", "--isolated").out
    assert annotations.startswith("::error file=services/api/requirements.txt,line=1,")
    # The JSON and text reports keep the path as it was given (docs/output.md).
    assert run("--format", "json", "--isolated").json["findings"][0]["path"] == "requirements.txt"


def test_outside_any_repository_paths_are_relative_to_the_run(project: Any) -> None:
    root = project({"sub/requirements.txt": "flash-attn==2.4.2\n"})
    sarif = json.loads(run("--format", "sarif", "--isolated", "sub").out)
    location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "sub/requirements.txt", "uriBaseId": "%SRCROOT%"}
    assert root.exists()


def _multitool() -> list[str] | str:
    try:
        return [
            str(node_tools.multitool()),
            "validate",
            "--rule-kind",
            "Gh;Sarif",
            "--level",
            "Error;Warning",
        ]
    except LookupError as exc:
        return f"Microsoft's SARIF multitool: {exc}"


MULTITOOL = _multitool()


@node_tools.needs(MULTITOOL)
def test_the_sarif_multitool_with_githubs_rules_reports_no_error_or_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    assert not isinstance(MULTITOOL, str)
    monkeypatch.chdir(REPO)
    logs = {
        "demo.sarif": run("--format", "sarif", "--isolated", "examples/demo").out,
        "every-rule.sarif": run("--format", "sarif", "--isolated", "tests/golden/every-rule").out,
    }
    broken = json.loads(logs["demo.sarif"])
    for rule in broken["runs"][0]["tool"]["driver"]["rules"]:
        del rule["fullDescription"]  # what fa-lint 0.1.0 wrote: GH2012 for every rule
    logs["broken.sarif"] = json.dumps(broken)
    found = {}
    for name, text in logs.items():
        (tmp_path / name).write_text(text)
        out = tmp_path / f"{name}.validation"
        r = subprocess.run(
            [*MULTITOOL, "-o", str(out), str(tmp_path / name)], capture_output=True, text=True, timeout=600
        )
        assert r.returncode == 0, r.stdout + r.stderr
        results = json.loads(out.read_text())["runs"][0]["results"]
        found[name] = sorted({f"{x['ruleId']} {x['level']}" for x in results})
    assert found["demo.sarif"] == [] and found["every-rule.sarif"] == [], found
    assert found["broken.sarif"] == ["GH2012 error"]  # it really applies GitHub's rules


# --- SARIF for every code-scanning host (GitHub, GitHub Advanced Security for Azure DevOps) -------------

# Azure Pipelines' predefined variables for one run (learn.microsoft.com, "Use predefined variables"),
# made up: an organization "contoso", a project and a job (phase) of their GUID form.
AZURE = {
    "TF_BUILD": "True",
    "SYSTEM_COLLECTIONURI": "https://dev.azure.com/contoso/",
    "SYSTEM_TEAMPROJECTID": "11111111-1111-1111-1111-111111111111",
    "BUILD_DEFINITIONID": "1234",
    "BUILD_DEFINITIONNAME": "Nightly Build",
    "BUILD_BUILDID": "98765",
    "SYSTEM_PHASEID": "22222222-2222-2222-2222-222222222222",
    "SYSTEM_PHASENAME": "Build",
    "BUILD_SOURCEBRANCH": "refs/heads/main",
}


def _sarif_run(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> dict[str, Any]:
    for name in AZURE:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    doc: dict[str, Any] = json.loads(run("--format", "sarif", "--isolated").out)["runs"][0]
    return doc


def test_sarif_names_the_tool_in_full_and_leaves_the_category_to_github(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    project({"requirements.txt": "flash-attn==2.4.2\n"})
    sarif = _sarif_run(monkeypatch, {})
    from fa_lint import __version__

    assert sarif["tool"]["driver"]["fullName"] == f"fa-lint {__version__}"
    # upload-sarif fills in its category (the workflow and job, or its input) only where a run has no
    # automationDetails: outside Azure Pipelines fa-lint writes none
    assert "automationDetails" not in sarif


def test_sarif_in_an_azure_pipeline_names_the_run_as_azure_devops_wants(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    project({"requirements.txt": "flash-attn==2.4.2\n"})
    details = _sarif_run(monkeypatch, AZURE)["automationDetails"]
    # azuredevops/pipeline/build/<org>/<projectId>/<buildDefinitionId>/<phaseId>/<branch>/<buildId>
    assert details["id"] == (
        "azuredevops/pipeline/build/contoso/11111111-1111-1111-1111-111111111111/1234/"
        "22222222-2222-2222-2222-222222222222/refs/heads/main/98765"
    )
    assert details["properties"] == {
        "azuredevops/pipeline/build/buildDefinitionId": "1234",
        "azuredevops/pipeline/build/buildDefinitionName": "Nightly Build",
        "azuredevops/pipeline/build/phaseId": "22222222-2222-2222-2222-222222222222",
        "azuredevops/pipeline/build/phaseName": "Build",
    }
    old_host = _sarif_run(monkeypatch, {**AZURE, "SYSTEM_COLLECTIONURI": "https://contoso.visualstudio.com/"})
    assert old_host["automationDetails"]["id"] == details["id"]
    # a partial or made-up pipeline identity is worse than none
    for broken in ({"SYSTEM_PHASEID": "build"}, {"BUILD_BUILDID": ""}, {"TF_BUILD": "False"}):
        assert "automationDetails" not in _sarif_run(monkeypatch, {**AZURE, **broken}), broken


def test_a_finding_at_a_point_shows_its_line_in_sarif(project: Any) -> None:
    text = "name: broken\ndependencies:\n  - pip:\n    - flash-attn>=2.5\n   - torch\n"
    project({"environment.yml": text})
    concise = run("--format", "concise", "--isolated").out
    assert concise.startswith("environment.yml:5:4: FAL900")  # where the YAML parser stopped: a point
    (result,) = [r for r in json.loads(run("--format", "sarif", "--isolated").out)["runs"][0]["results"]]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region == {
        "startLine": 5,
        "startColumn": 1,
        "endLine": 5,
        "endColumn": len("   - torch") + 1,
        "snippet": {"text": "   - torch"},
    }


@node_tools.needs(MULTITOOL)
def test_the_sarif_multitool_with_azure_devops_rules_reports_no_error_in_a_pipeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    assert not isinstance(MULTITOOL, str)
    monkeypatch.chdir(REPO)
    logs = {"every-rule.sarif": AZURE, "outside.sarif": {}}
    found = {}
    for name, env in logs.items():
        for key in AZURE:
            monkeypatch.delenv(key, raising=False)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        (tmp_path / name).write_text(run("--format", "sarif", "--isolated", "tests/golden/every-rule").out)
        out = tmp_path / f"{name}.validation"
        kinds = ["--rule-kind", "GHAzDO;Gh;Sarif", "--level", "Error;Warning;Note"]
        r = subprocess.run(
            [*MULTITOOL[:2], *kinds, "-o", str(out), str(tmp_path / name)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0, r.stdout + r.stderr
        results = json.loads(out.read_text())["runs"][0]["results"]
        found[name] = sorted(
            {x["ruleId"] for x in results if x["level"] != "note" or x["ruleId"] == "SARIF2010"}
        )
    assert found["every-rule.sarif"] == [], found  # no error, no warning, and a snippet for every region
    assert found["outside.sarif"] == ["GHAzDO1014"]  # it really applies Azure DevOps' rules
