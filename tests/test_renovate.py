"""The Renovate preset, judged by Renovate's own code where it is installed, and its regexes by Python's.

Renovate (npm package ``renovate``) needs Node >= 24: tests/node_tools.py says where these tests look
for both, and how to install them. Without them the tests that run Renovate skip, saying why (CI, with
FA_LINT_REQUIRE_TOOLS, fails instead); the regex tests always run.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from fa_lint import kb
from fa_lint.cli import bots
from fa_lint.kb.assess import Policy
from tests import node_tools
from tests.conftest import REPO

PRESET = REPO / "presets" / "renovate" / "flash-attn.json"
PROBE = Path(__file__).parent / "renovate" / "probe.mjs"


def _renovate() -> tuple[str, Path] | str:
    """(node, renovate's package folder), or why they cannot be had."""
    try:
        node = node_tools.node(24)
        return node, node_tools.package("renovate", "dist/config-validator.js", "renovate-config-validator")
    except LookupError as exc:
        return f"Renovate: {exc}"


FOUND = _renovate()
needs_renovate = node_tools.needs(FOUND)


class Probe:
    """Renovate's own functions, through tests/renovate/probe.mjs, one JSON request a line."""

    def __init__(self, node: str, package: Path) -> None:
        self.proc = subprocess.Popen(
            [node, str(PROBE), str(package)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # Renovate's notes about its logger and regex engine
            text=True,
        )

    def __call__(self, op: str, **args: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())


@pytest.fixture(scope="module")
def renovate() -> Iterator[Probe]:
    if isinstance(FOUND, str):
        pytest.skip(FOUND)  # the test's own mark says why (or fails under FA_LINT_REQUIRE_TOOLS)
    probe = Probe(*FOUND)
    yield probe
    assert probe.proc.stdin is not None
    probe.proc.stdin.close()
    probe.proc.wait(timeout=60)


def _preset() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(PRESET.read_text())
    return doc


def _managers() -> dict[str, dict[str, Any]]:
    """The preset's custom managers by the MATCH key of their one match string."""
    by_patterns = {v: k for k, v in bots.MATCH.items()}
    return {by_patterns[tuple(m["matchStrings"])]: m for m in _preset()["customManagers"]}


# (manager, file, line, the value Renovate should read, or None where it must read nothing)
CASES = [
    ("docker-arg", "Dockerfile", "ARG FLASH_ATTN_VERSION=2.4.2", "2.4.2"),
    ("docker-arg", "Dockerfile", "ARG FLASH_ATTN_VERSION=2.7.4.post1", "2.7.4.post1"),
    ("docker-arg", "docker/Dockerfile.cuda", 'ARG FLASH_ATTN_VERSION="2.5.6"', "2.5.6"),
    ("docker-arg", "Containerfile", "ENV FLASH_ATTENTION_VERSION 2.3.6", "2.3.6"),
    ("docker-arg", "serve.Dockerfile", "  env flash_attn_version=2.6.3", "2.6.3"),
    ("docker-arg", "Dockerfile", "ARG FLASH_ATTN_CUDA_ARCHS=90", None),  # no version
    ("docker-arg", "Dockerfile", "ARG FLASH_ATTN_3_VERSION=3.0.0b1", None),  # flash-attn-3, another package
    ("docker-arg", "Dockerfile", 'ARG FLASH_ATTN_WHEEL_URL="https://example.com/fa.whl"', None),
    ("docker-arg", "Dockerfile", "ARG FLASH_ATTN_VERSION", None),  # no default
    ("docker-arg", "Dockerfile", "ARG FLASH_ATTN_VERSION=${FA}", None),
    # Renovate's own convention, for any variable: the comment on the line above
    (
        "docker-arg",
        "Dockerfile",
        "# renovate: datasource=pypi depName=flash-attn\nARG FA_VERSION=2.4.2",
        "2.4.2",
    ),
    ("docker-arg", "Dockerfile", "# renovate: datasource=pypi depName=flash_attn\nENV FAV 2.5.6", "2.5.6"),
    (
        "docker-arg",
        "install.sh",
        "# renovate: datasource=pypi depName=flash-attn\nexport FA_VER=2.6.3",
        "2.6.3",
    ),
    (
        "docker-arg",
        "install.sh",
        "  # renovate: datasource=pypi depName=flash-attn versioning=pep440\nFA=2.6.3",
        "2.6.3",
    ),
    (
        "docker-arg",
        "Dockerfile",
        "# renovate: datasource=pypi depName=flash-attn\nARG FLASH_ATTN_VERSION=2.4.2",
        "2.4.2",  # once, although both forms fit
    ),
    ("docker-arg", "Dockerfile", "# renovate: datasource=pypi depName=torch\nARG TORCH_VERSION=2.4.0", None),
    (
        "docker-arg",
        "Dockerfile",
        "# renovate: datasource=pypi depName=flash-attn\n\nARG FA_VERSION=2.4.2",
        None,
    ),
    ("docker-arg", "Dockerfile", "ARG FA_VERSION=2.4.2", None),  # no comment, and not this manager's name
    ("pip-install", "Dockerfile", "RUN pip install flash-attn==2.4.2 --no-build-isolation", "2.4.2"),
    ("pip-install", "Dockerfile", "RUN pip install --no-cache-dir 'flash-attn>=2.3'", "2.3"),
    # a range whose floor has no paged KV: Renovate would move only its top ('<2.6' to '<2.9'); fa-lint --fix
    ("pip-install", "Dockerfile", 'RUN python -m pip install "flash_attn>=2.3,<2.6"', None),
    ("pip-install", "Dockerfile", 'RUN python -m pip install "flash_attn>=2.6.3,<2.8"', ">=2.6.3,<2.8"),
    (
        "pip-install",
        "Dockerfile",
        "RUN pip3 install -U \\\n    torch==2.3.1 \\\n    flash-attn==2.5.8",
        "2.5.8",
    ),
    ("pip-install", "Dockerfile", "RUN uv pip install --system 'flash-attn[cuda]~=2.4.0'", None),
    ("pip-install", "Dockerfile", "RUN uv pip install --system 'flash-attn[cuda]~=2.6.0'", "~=2.6.0"),
    ("pip-install", "scripts/install.sh", "pip install flash-attn==2.3.6 --no-build-isolation", "2.3.6"),
    ("pip-install", "Dockerfile", "RUN pip install flash-attn==${FLASH_ATTN_VERSION}", None),
    ("pip-install", "Dockerfile", "RUN pip install my-flash-attn==1.0", None),
    ("pip-install", "Dockerfile", "RUN pip install torch\nflash-attn==2.4.2", None),  # not one command
    ("pip-install", "Dockerfile", "RUN pip install flash-attn-3==3.0.0", None),
    ("pip-install", "Dockerfile", "RUN pip install 'flash-attn==2.5.*'", "==2.5.*"),
    ("pip-install", "Dockerfile", 'RUN pip install "flash-attn >=2.3 ,<3"', None),
    ("pip-install", "Dockerfile", 'RUN pip install "flash-attn >=2.5.6 ,<3"', ">=2.5.6 ,<3"),
    ("pip-install", "Dockerfile", "RUN pip install 'flash-attn>2.3'", None),
    ("pip-install", "Dockerfile", "RUN pip install 'flash-attn>2.5'", ">2.5"),
    ("pip-install", "Dockerfile", "RUN pip install flash-attn===2.5.8", "===2.5.8"),
    ("pip-install", "Dockerfile", "RUN pip install 'flash-attn<2.6'", None),
    ("pip-install", "install.sh", "pip install flash-attn>=2.5.6;", "2.5.6"),
    ("constraint", "constraints.txt", "flash-attn==2.4.2", "2.4.2"),
    ("constraint", "requirements/constraints-gpu.txt", "flash_attn>=2.3  # cluster", "2.3"),
    ("constraint", "constraints.in", "Flash-Attn<2.6,>=2.3 ; sys_platform == 'linux'", None),
    ("constraint", "constraints.in", "Flash-Attn<2.9,>=2.6.3 ; sys_platform == 'linux'", "<2.9,>=2.6.3"),
    ("constraint", "constraints.txt", "flash-attn<2.6", None),  # the issue's: '<2.9' admits old ones too
    ("constraint", "constraints.txt", "flash-attn==2.*", None),  # 2.0 ... 2.4 in it
    ("constraint", "constraints.txt", "flash-attn==2.7.*", "==2.7.*"),
    ("constraint", "constraints.txt", "flash-attn==2.4.2 --hash=sha256:" + "0" * 64, None),  # stale hash
    ("constraint", "constraints.txt", "flash-attn==2.4.2 \\\n    --hash=sha256:" + "0" * 64, None),
    ("constraint", "constraints.txt", "flash-attn-3==3.0.0", None),
    ("constraint", "constraints.txt", "flash-attn ~= 2.4", None),
    ("constraint", "constraints.txt", "flash-attn ~= 2.6", "~= 2.6"),
    ("constraint", "constraints.txt", "flash-attn!=2.5.0", None),
    ("constraint", "constraints.txt", "# flash-attn==2.4.2", None),
]


def _python(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern.replace("(?<", "(?P<"))  # the one spelling Python's re lacks


@pytest.mark.parametrize(("manager", "file", "line", "value"), CASES)
def test_each_regex_reads_the_version_from_real_looking_lines(
    manager: str, file: str, line: str, value: str | None
) -> None:
    content = f"# before\n{line}\n# after\n"
    # One value, by exactly one of the manager's match strings, as Renovate applies them all.
    assert _values(manager, content) == ([] if value is None else [value])
    assert _values(manager, content.replace("\n", "\r\n")) == _values(manager, content)


def _values(manager: str, text: str) -> list[str]:
    return [m.group("currentValue") for p in bots.MATCH[manager] for m in _python(p).finditer(text)]


# FA_VERSION is flash-attn's only where the Dockerfile installs flash-attn with it (Font Awesome's is named
# so too): Renovate's "recursive" strategy, the file's ARG to its use, then the ARG's line.
USED = [
    ('ARG FA_VERSION=2.3.6\nFROM python:3.11\nRUN pip install "flash-attn==${FA_VERSION}"\n', "2.3.6"),
    (
        "FROM x\nARG FA_VERSION=2.4.2\nARG TORCH=2.4.0\nRUN pip install flash_attn==$FA_VERSION torch\n",
        "2.4.2",
    ),
    ("ARG FA2_VERSION=2.5.8\nRUN uv pip install flash-attn>=${FA2_VERSION}\n", "2.5.8"),
    ("ARG FA_VERSION=7.0.0\nRUN curl -LO fontawesome-free-${FA_VERSION}-web.zip\n", None),  # Font Awesome
    ("ARG FA_VERSION=2.4.2\nRUN pip install flash-attn-3==${FA_VERSION}\n", None),  # another package
    ('RUN pip install "flash-attn==${FA_VERSION}"\nARG FA_VERSION=2.4.2\n', None),  # set after its use
]


def _recursive(manager: str, text: str) -> list[str]:
    """Renovate's recursive strategy: each match string applied within the previous one's matches."""
    regions = [text]
    for pattern in bots.MATCH[manager]:
        regions = [m.group(0) for r in regions for m in _python(pattern).finditer(r)]
    return [_python(bots.MATCH[manager][-1]).search(r).group("currentValue") for r in regions]  # type: ignore[union-attr]


@pytest.mark.parametrize(("text", "value"), USED)
def test_fa_version_is_read_where_flash_attn_is_installed_with_it(text: str, value: str | None) -> None:
    assert _recursive("docker-arg-used", text) == ([] if value is None else [value])


@needs_renovate
@pytest.mark.parametrize(("text", "value"), USED)
def test_renovate_reads_fa_version_where_flash_attn_is_installed_with_it(
    renovate: Probe, text: str, value: str | None
) -> None:
    deps = renovate("extract", config=_managers()["docker-arg-used"], file="Dockerfile", content=text)
    assert [d["currentValue"] for d in deps] == ([] if value is None else [value])
    for d in deps:  # the replacement is made in the ARG's line alone
        assert d["replaceString"].startswith("ARG ") and "\n" not in d["replaceString"], d


def test_a_range_is_read_only_with_a_floor_at_or_above_the_policy() -> None:
    from packaging.version import Version

    at = re.compile(f"^{bots.at_least(Version('2.6.3'))}$")
    for version, above in [
        ("2.6.2", False),
        ("2.6.3", True),
        ("2.6.3.post1", True),
        ("2.6.10", True),
        ("2.7", True),
        ("2.6", False),
        ("3", True),
        ("2.6.3rc1", False),
        ("12.0", True),
    ]:
        assert bool(at.match(version)) is above, version
    base = kb.load()
    for floor in ("2.5.0", "2.6.3", "2.8.3.post2", "10.1"):  # against packaging, for every known release
        at = re.compile(f"^{bots.at_least(Version(floor))}$")
        for r in base.installable:
            assert bool(at.match(str(r.version))) is (r.version >= Version(floor)), (floor, r.version)


def test_the_regexes_use_only_what_re2_and_javascript_both_accept() -> None:
    for pattern in (p for patterns in bots.MATCH.values() for p in patterns):
        assert not re.search(r"\(\?[=!]|\(\?<[=!]|\\[1-9]|\(\?P", pattern), pattern  # lookarounds, backrefs


def test_two_pins_in_one_file_are_two_updates() -> None:
    text = "flash-attn==2.4.2 ; python_version < '3.11'\nflash-attn==2.5.6 ; python_version >= '3.11'\n"
    assert _values("constraint", text) == ["2.4.2", "2.5.6"]


def test_the_preset_is_generated_from_the_knowledge_base() -> None:
    (rule,) = _preset()["packageRules"]
    assert rule["matchPackageNames"] == ["flash-attn"] and rule["matchDatasources"] == ["pypi"]
    assert rule["rangeStrategy"] == "bump"
    assert {m["depNameTemplate"] for m in _preset()["customManagers"]} == {"flash-attn"}
    assert set(_managers()) == set(bots.MATCH)


@needs_renovate
def test_renovate_config_validator_accepts_the_preset(tmp_path: Path) -> None:
    assert not isinstance(FOUND, str)
    node, package = FOUND
    validator = [node, str(package / "dist" / "config-validator.js"), "--no-global", "--strict"]
    proc = subprocess.run([*validator, str(PRESET)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "validated successfully" in proc.stdout + proc.stderr
    broken = _preset()
    broken["customManagers"][0]["matchStrings"] = ["(?<currentValue>unclosed"]
    (tmp_path / "renovate.json").write_text(json.dumps(broken))
    proc = subprocess.run(
        [*validator, str(tmp_path / "renovate.json")], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode != 0  # the validator really checks the regexes


@needs_renovate
def test_allowed_versions_by_renovates_pep440(renovate: Probe) -> None:
    (rule,) = _preset()["packageRules"]
    assert renovate("isValid", value=rule["allowedVersions"]) is True
    base = kb.load()
    policy = Policy.default(base)
    for release in base.installable:
        assert renovate(
            "matches", version=str(release.version), range=rule["allowedVersions"]
        ) is policy.good(release), release.version


@needs_renovate
@pytest.mark.parametrize(
    "current",
    [">=2.3", ">=2.0,<3", ">=2.4.2", "~=2.4", "==2.4.2", ">=2.3,!=2.4.0", "<2.6,>=2.3", ">=1.0.9"],
)
def test_bump_leaves_no_release_without_paged_kv(renovate: Probe, current: str) -> None:
    base = kb.load()
    policy = Policy.default(base)
    newest = str(
        base.newest.version
    )  # what Renovate proposes: the newest release allowedVersions lets through
    assert any(not policy.good(r) for r in base.installable if r.version in SpecifierSet(current))
    replaced = renovate(
        "newValue", currentValue=current, rangeStrategy="replace", currentVersion="2.3.0", newVersion=newest
    )
    bumped = renovate(
        "newValue", currentValue=current, rangeStrategy="bump", currentVersion="2.3.0", newVersion=newest
    )
    if current in (">=2.3", ">=2.4.2", ">=1.0.9"):
        assert replaced == current  # Renovate's default strategy leaves a low floor alone: hence bump
    admitted = [r for r in base.installable if r.version in SpecifierSet(bumped)]
    assert Version(newest) in {r.version for r in admitted}, bumped
    assert all(policy.good(r) for r in admitted), (current, bumped)


@needs_renovate
@pytest.mark.parametrize(("manager", "file", "line", "value"), CASES)
def test_renovates_regex_manager_reads_the_same_lines(
    renovate: Probe, manager: str, file: str, line: str, value: str | None
) -> None:
    config = _managers()[manager]
    assert renovate("files", config=config, files=[file]) == [file]
    deps = renovate("extract", config=config, file=file, content=f"# before\n{line}\n# after\n")
    if value is None:
        assert deps == []
        return
    (dep,) = deps
    assert (dep["depName"], dep["packageName"], dep["datasource"], dep["versioning"]) == (
        "flash-attn",
        "flash-attn",
        "pypi",
        "pep440",
    )
    assert dep["currentValue"] == value
    assert "skipReason" not in dep


@needs_renovate
def test_managers_look_only_at_their_files(renovate: Probe) -> None:
    files = [
        "Dockerfile",
        "docker/Dockerfile.gpu",
        "build.dockerfile",
        "Containerfile",
        "install.sh",
        "scripts/setup.bash",
        "constraints.txt",
        "ci/constraints-cuda.in",
        "requirements.txt",
        "pyproject.toml",
        "docs/Dockerfile.md",
        "constraints.md",
    ]
    m = _managers()
    docker = [
        "Dockerfile",
        "docker/Dockerfile.gpu",
        "build.dockerfile",
        "Containerfile",
        "docs/Dockerfile.md",
    ]
    assert sorted(renovate("files", config=m["docker-arg"], files=files)) == sorted(
        [*docker, "install.sh", "scripts/setup.bash"]
    )
    assert sorted(renovate("files", config=m["docker-arg-used"], files=files)) == sorted(docker)
    assert sorted(renovate("files", config=m["pip-install"], files=files)) == sorted(
        [*docker, "install.sh", "scripts/setup.bash"]
    )
    assert sorted(renovate("files", config=m["constraint"], files=files)) == [
        "ci/constraints-cuda.in",
        "constraints.txt",
    ]


@needs_renovate
def test_bump_leaves_a_strict_floor_alone(renovate: Probe) -> None:
    # Renovate's pep440 bump does not move '>' (docs/pull-requests.md says so): fa-lint --fix does.
    newest = str(kb.load().newest.version)
    bumped = renovate(
        "newValue", currentValue=">2.3", rangeStrategy="bump", currentVersion="2.3.1", newVersion=newest
    )
    assert bumped == ">2.3"


@needs_renovate
def test_renovate_keeps_the_workflow_presets_pin_current(renovate: Probe) -> None:
    """The workflow preset pins fa-lint's action to a commit with the tag in a comment: Renovate's
    github-actions manager reads both and would write the next release as the same pair."""
    workflow = REPO / "presets" / "github-workflow.yml"
    deps = renovate("workflow", file=".github/workflows/fa-lint.yml", content=workflow.read_text())
    (dep,) = [d for d in deps if d["depName"] == "fa-lint/fa-lint"]
    m = re.search(r"fa-lint/fa-lint@([0-9a-f]{40})  # (v\S+)", workflow.read_text())
    assert m is not None
    assert (dep["currentDigest"], dep["currentValue"]) == (m[1], m[2])
    assert dep["datasource"] == "github-tags" and "skipReason" not in dep
    # how an update is written: the new commit, and its tag in the comment
    assert dep["autoReplaceStringTemplate"].startswith(
        "{{depName}}@{{#if newDigest}}{{newDigest}}{{#if newValue}}  # {{newValue}}"
    )
    # every other action of the preset is pinned the same way
    assert all(d.get("currentDigest") for d in deps if d["depType"] == "action"), deps
