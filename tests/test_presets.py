"""The ready-made bot configs and workflow: generated from the knowledge base, and doing what they say."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from packaging.specifiers import SpecifierSet

from fa_lint import __version__, kb
from fa_lint.resolve import Policy
from tests.conftest import REPO, run

PRESETS = REPO / "presets"


def test_renovate_preset_allows_exactly_the_releases_with_paged_kv() -> None:
    preset = json.loads((PRESETS / "renovate" / "flash-attn.json").read_text())
    (rule,) = preset["packageRules"]
    assert rule["matchPackageNames"] == ["flash-attn"] and rule["matchDatasources"] == ["pypi"]
    allowed = SpecifierSet(rule["allowedVersions"])
    base = kb.load()
    policy = Policy.default(base)
    for release in base.installable:
        assert (release.version in allowed) == policy.good(release), release.version


def test_dependabot_config_ignores_exactly_the_releases_without_paged_kv() -> None:
    doc = yaml.safe_load((PRESETS / "dependabot.yml").read_text())
    assert doc["version"] == 2
    (update,) = doc["updates"]
    assert update["package-ecosystem"] == "pip" and update["directory"] == "/"
    (ignore,) = update["ignore"]
    assert ignore["dependency-name"] == "flash-attn"
    held_back = SpecifierSet(",".join(v.replace(" ", "") for v in ignore["versions"]))
    base = kb.load()
    policy = Policy.default(base)
    for release in base.installable:
        assert (release.version in held_back) != policy.good(release), release.version


def test_bot_config_prints_the_shipped_presets() -> None:
    r = run("bot-config", "renovate", "--isolated")
    assert (r.code, r.out) == (0, (PRESETS / "renovate" / "flash-attn.json").read_text())
    r = run("bot-config", "dependabot", "--isolated")
    assert (r.code, r.out) == (0, (PRESETS / "dependabot.yml").read_text())


def test_bot_config_follows_the_project_policy(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.fa-lint]\nmin-version = "2.6.3"\n')
    config = str(tmp_path / "pyproject.toml")
    preset = json.loads(run("bot-config", "renovate", "--config", config).out)
    assert preset["packageRules"][0]["allowedVersions"] == ">=2.6.3"
    assert "min-version" in preset["packageRules"][0]["description"]
    r = run(
        "bot-config",
        "dependabot",
        "--config",
        config,
        "--min-version",
        "2.7.0",
        "--ecosystem",
        "uv",
        "--ecosystem",
        "pip",
        "--directory",
        "/services/llm",
    )
    doc = yaml.safe_load(r.out)
    assert [(u["package-ecosystem"], u["directory"], u["ignore"][0]["versions"]) for u in doc["updates"]] == [
        ("uv", "/services/llm", ["< 2.7.0"]),
        ("pip", "/services/llm", ["< 2.7.0"]),
    ]


def test_bot_config_writes_a_file_and_rejects_bad_input(tmp_path: Path) -> None:
    target = tmp_path / "renovate.json"
    assert run("bot-config", "renovate", "--isolated", "-o", str(target)).code == 0
    assert json.loads(target.read_text())["packageRules"][0]["allowedVersions"] == ">=2.5.0"
    for argv in (
        ["bot-config"],
        ["bot-config", "circleci"],
        ["bot-config", "renovate", "--min-version", "two"],
    ):
        r = run(*argv)
        assert r.code == 2 and r.out == "" and "fa-lint:" in r.err, argv


def _workflow_commands() -> list[list[str]]:
    doc = yaml.safe_load((PRESETS / "github-workflow.yml").read_text())
    steps = doc["jobs"]["fa-lint"]["steps"]
    return [shlex.split(s["run"]) for s in steps if s.get("run", "").startswith("fa-lint ")]


def test_workflow_installs_this_release_and_runs_the_cli_it_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (PRESETS / "github-workflow.yml").read_text()
    assert f"@v{__version__}" in text
    shutil.copytree(REPO / "examples" / "demo", tmp_path / "repo")
    monkeypatch.chdir(tmp_path / "repo")
    sarif_step, gate = _workflow_commands()
    r = run(*sarif_step[1:])
    assert r.code == 0 and r.out == ""
    sarif = json.loads(Path("fa-lint.sarif").read_text())
    assert sarif["runs"][0]["results"], "the demo has findings"
    r = run(*gate[1:])
    assert r.code == 1
    assert "::error file=Dockerfile,line=8," in r.out


def test_gitlab_job_in_the_docs_writes_the_report_it_uploads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (REPO / "docs" / "pull-requests.md").read_text()
    block = text.split("## GitLab merge requests", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    job = yaml.safe_load(block)["fa-lint"]
    assert f"@v{__version__}" in job["script"][0]
    shutil.copytree(REPO / "examples" / "demo", tmp_path / "repo")
    monkeypatch.chdir(tmp_path / "repo")
    r = run(*shlex.split(job["script"][1])[1:])
    assert r.code == 1 and r.out == ""  # error findings fail the job; the report still gets written
    issues = json.loads(Path(job["artifacts"]["reports"]["codequality"]).read_text())
    assert {"path": "Dockerfile", "lines": {"begin": 8, "end": 8}} in [i["location"] for i in issues]
    assert job["artifacts"]["when"] == "always"
