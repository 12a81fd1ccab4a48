"""The ready-made bot configs and workflow: generated from the knowledge base, and doing what they say."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.specifiers import SpecifierSet

from fa_lint import __version__, kb
from fa_lint.kb.assess import Policy
from tests.conftest import REPO, check_jsonschema, run

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


def test_dependabot_configs_are_valid_under_dependabots_schema(tmp_path: Path) -> None:
    written = [PRESETS / "dependabot.yml"]
    for i, argv in enumerate(
        (
            ["--ecosystem", "uv", "--directory", "/", "--directory", "/services/*"],
            ["--versioning-strategy", "auto", "--directory", "/ml"],
            ["--versioning-strategy", "increase-if-necessary", "--ecosystem", "pip", "--ecosystem", "uv"],
        )
    ):
        target = tmp_path / f"dependabot-{i}.yml"
        assert run("bot-config", "dependabot", "--isolated", *argv, "-o", str(target)).code == 0
        written.append(target)
    r = check_jsonschema("vendor.dependabot", *written)
    assert r.returncode == 0, r.stdout + r.stderr
    bad = tmp_path / "bad.yml"
    bad.write_text((PRESETS / "dependabot.yml").read_text().replace('"increase"', '"sideways"'))
    assert check_jsonschema("vendor.dependabot", bad).returncode == 1


def test_dependabot_raises_floors_and_takes_globbed_directories() -> None:
    doc = yaml.safe_load((PRESETS / "dependabot.yml").read_text())
    assert doc["updates"][0]["versioning-strategy"] == "increase"  # what moves 'flash-attn>=2.3' up
    r = run("bot-config", "dependabot", "--isolated", "--directory", "/", "--directory", "/services/*")
    (update,) = yaml.safe_load(r.out)["updates"]
    assert update["directories"] == ["/", "/services/*"] and "directory" not in update
    r = run("bot-config", "dependabot", "--isolated", "--directory", "/ml/*", "--versioning-strategy", "auto")
    (update,) = yaml.safe_load(r.out)["updates"]
    assert update["directories"] == ["/ml/*"] and "versioning-strategy" not in update
    r = run("bot-config", "dependabot", "--isolated", "--versioning-strategy", "sideways")
    assert r.code == 2 and r.out == ""


GITLAB = PRESETS / "gitlab-ci.yml"


def _gitlab_job() -> dict[str, Any]:
    job: dict[str, Any] = yaml.safe_load(GITLAB.read_text())["fa-lint"]
    return job


def test_gitlab_job_is_valid_and_is_the_one_the_docs_show() -> None:
    r = check_jsonschema("vendor.gitlab-ci", GITLAB)
    assert r.returncode == 0, r.stdout + r.stderr
    docs = (REPO / "docs" / "pull-requests.md").read_text()
    block = docs.split("## GitLab merge requests", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    assert block == GITLAB.read_text()


def test_gitlab_job_runs_in_a_stock_image() -> None:
    job = _gitlab_job()
    assert job["image"] == "python:3.12-slim"
    setup = " ; ".join(job["before_script"])
    assert f"pip install --quiet --disable-pip-version-check fa-lint=={__version__}" in setup
    assert "git+" not in setup  # the slim image has no git to install from a repository with
    assert "apt-get install -qq -y --no-install-recommends git" in setup  # but --new-from-rev needs git
    assert job["artifacts"]["when"] == "always"


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash")
def test_gitlab_job_reports_every_finding_and_fails_on_new_ones(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "examples" / "demo", repo)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # this fa-lint
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env, capture_output=True)
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    job = _gitlab_job()

    def script(**variables: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-ec", "\n".join(job["script"])],
            cwd=repo,
            env={**env, **variables},
            capture_output=True,
            text=True,
            timeout=300,
        )

    # A merge request that changes nothing about flash-attn: the job passes, the report has every finding.
    (repo / "README.md").write_text("docs only\n")
    r = script(CI_MERGE_REQUEST_DIFF_BASE_SHA=base)
    assert r.returncode == 0, r.stdout + r.stderr
    issues = json.loads((repo / job["artifacts"]["reports"]["codequality"]).read_text())
    assert {i["location"]["path"] for i in issues} >= {"Dockerfile", "requirements.txt"}
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    # One that adds an old pin fails; so does the default branch, on every error finding.
    (repo / "constraints-gpu.txt").write_text("flash-attn==2.4.2\n")
    r = script(CI_MERGE_REQUEST_DIFF_BASE_SHA=base)
    assert (
        r.returncode == 1 and "constraints-gpu.txt:1:1: FAL001" in r.stdout and "Dockerfile" not in r.stdout
    )
    (repo / "constraints-gpu.txt").unlink()
    r = script()
    assert r.returncode == 1 and "Dockerfile:" in r.stdout
