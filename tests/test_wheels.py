"""The prebuilt-wheel matrix in the knowledge base: release facts, evidence that re-parses, the script.

Expectations are read from flash-attn's release workflow and setup.py at each tag (quoted in the
comments), not from fa-lint's output.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fa_lint import kb
from tests.conftest import REPO

# the bare flash-attention mirror beside the checkout, where there is one (never in CI)
MIRROR = REPO.parent / ".mirror/Dao-AILab+flash-attention/repo"


@pytest.fixture(scope="module")
def base() -> kb.KnowledgeBase:
    return kb.load()


def wheels(base: kb.KnowledgeBase, version: str) -> kb.Wheels:
    release = base.get(version)
    assert release is not None and release.wheels is not None, version
    return release.wheels


@pytest.mark.parametrize(
    ("version", "torch", "python", "cuda"),
    [
        # v2.5.0 publish.yml: torch-version ['1.12.1', '1.13.1', '2.0.1', '2.1.1', '2.2.0.dev20231130'],
        # python-version 3.7-3.11, cuda-version ['11.8.0', '12.2.2'] named by awk $1 $2
        ("2.5.0", ("1.12", "1.13", "2.0", "2.1", "2.2"), ("3.7", "3.11"), ("118", "122")),
        # v2.5.1.post1 adds '2.3.0.dev20240126'
        ("2.5.1.post1", ("1.12", "1.13", "2.0", "2.1", "2.2", "2.3"), ("3.7", "3.11"), ("118", "122")),
        ("2.6.3", ("2.0", "2.1", "2.2", "2.3", "2.4"), ("3.8", "3.12"), ("118", "123")),
        # v2.7.4.post1: cuda-version ['12.4.1'], named by awk $1 (WHEEL_CUDA_VERSION)
        ("2.7.4.post1", ("2.2", "2.3", "2.4", "2.5", "2.6"), ("3.9", "3.13"), ("12",)),
        ("2.8.3", ("2.4", "2.5", "2.6", "2.7", "2.8"), ("3.9", "3.13"), ("12",)),
    ],
)
def test_matrix_facts(
    base: kb.KnowledgeBase,
    version: str,
    torch: tuple[str, ...],
    python: tuple[str, str],
    cuda: tuple[str, ...],
) -> None:
    w = wheels(base, version)
    assert w.fetched
    assert w.torch == torch
    assert (w.python[0], w.python[-1]) == python
    assert w.cuda == cuda
    assert w.platforms == ("linux_x86_64",)


def test_nightly_builds_are_marked(base: kb.KnowledgeBase) -> None:
    assert wheels(base, "2.5.0").built_against("2.2") == "2.2.0.dev20231130"
    assert wheels(base, "2.5.1.post1").built_against("2.3") == "2.3.0.dev20240126"
    assert wheels(base, "2.5.8").built_against("2.3") is None  # the released 2.3.0
    assert wheels(base, "2.5.8").built_against("2.2") is None


def test_excludes_remove_combinations(base: kb.KnowledgeBase) -> None:
    w = wheels(base, "2.5.8")
    # "- torch-version: '1.12.1' python-version: '3.11'" and "torch <= 2.0 only CUDA <= 11.8"
    assert w.matching("1.12", ["3.11"]) == []
    assert w.matching("1.12", ["3.10"], "12.1") == []
    assert w.matching("1.12", ["3.10"], "11.7")
    assert {b.cxx11_abi for b in w.matching("2.3", ["3.11"], "12.1")} == {True, False}
    # v2.8.3: "Pytorch < 2.5 does not support Python 3.13"
    assert wheels(base, "2.8.3").matching("2.4", ["3.13"]) == []
    assert wheels(base, "2.8.3").matching("2.5", ["3.13"], "12.4")


@pytest.mark.parametrize(
    ("version", "torch_cuda", "named"),
    [
        ("2.3.5", "12.1", "121"),  # f"{major}{minor}" of torch.version.cuda, no mapping
        ("2.3.5", "11.7", "117"),
        ("2.5.0", "12.1", "122"),  # parse("11.8") if major == 11 else parse("12.2")
        ("2.5.0", "11.6", "118"),
        ("2.6.3", "12.4", "123"),  # ... else parse("12.3")
        ("2.8.3", "11.8", "11"),  # f"{major}": cu11 -- no such wheel is built
        ("2.8.3", "12.8", "12"),
        ("2.8.3.post1", "13.0", "13"),  # if/elif: 11 -> 11.8, 12 -> 12.3, else 13.0
        ("2.8.3", "cpu", None),
    ],
)
def test_setup_py_name_rule(base: kb.KnowledgeBase, version: str, torch_cuda: str, named: str | None) -> None:
    assert wheels(base, version).cuda_name(torch_cuda) == named


@pytest.mark.parametrize(
    ("version", "torch_cuda", "named"),
    [
        # v2.2.3.post2-v2.3.1: "if torch_version_raw.major == 2 and torch_version_raw.minor == 1:
        #     torch_cuda_version = parse("12.2")": every torch 2.1, even a CUDA 11.8 one
        ("2.2.3.post2", "12.1", "122"),
        ("2.3.0", "11.8", "122"),
        # v2.3.1.post1-v2.3.5 add "and torch_cuda_version.major == 12"
        ("2.3.1.post1", "12.1", "122"),
        ("2.3.5", "11.8", "118"),
        ("2.2.2", "12.1", "121"),  # before the special case: torch's own CUDA
    ],
)
def test_setup_py_special_cases_torch_2_1(
    base: kb.KnowledgeBase, version: str, torch_cuda: str, named: str
) -> None:
    w = wheels(base, version)
    assert w.cuda_name(torch_cuda, "2.1") == named
    assert w.cuda_name(torch_cuda, "2.0") == torch_cuda.replace(".", "")  # other torch series: as is
    if named == "122":
        assert w.has("2.1", ["3.10"], torch_cuda) is kb.Availability.YES


def test_torch_series_dates_come_from_pypi_upload_times(base: kb.KnowledgeBase) -> None:
    # https://pypi.org/pypi/torch/json: torch-2.9.0's first file 2025-10-15T15:45:59Z; torch 2.4 shipped
    # no cp313 wheels (2.5.0 was the first with them)
    torch = base.later.torch
    assert torch["2.9"].released == "2025-10-15T15:45:59Z"
    assert torch["2.10"].released.startswith("2026-01-21")
    assert "3.13" not in torch["2.4"].cpython and "3.13" in torch["2.5"].cpython
    assert base.later.since == "2025-08-29T21:00:41Z" and base.later.cuda_digits == 1


@pytest.mark.parametrize(
    ("version", "torch", "python", "cuda", "answer"),
    [
        ("2.8.3", "2.8", ["3.12"], "12.8", "yes"),  # the matrix
        ("2.8.3", "2.9", ["3.12"], "12.8", "yes"),  # seen: attached after the tag
        # torch 2.9 (2025-10-15) came after the tag (2025-08-14), but the release's complete asset listing
        # (2026-03-12, fa_lint/kb/assets.json) has its torch 2.9 wheel for cp312 only
        ("2.8.3", "2.9", ["3.11"], "12.8", "no"),
        ("2.8.3", "2.10", ["3.12"], "12.8", "no"),  # torch 2.10 (2026-01-21): not in that listing either
        ("2.8.3", "2.11", ["3.12"], "12.8", "unknown"),  # torch 2.11 (2026-03-23) came after the listing
        ("2.8.3", "2.12", None, None, "unknown"),
        ("2.8.3", "2.9", ["3.12"], "cpu", "no"),  # setup.py names no CUDA wheel for a CPU torch
        ("2.8.3", "2.8", ["3.14"], None, "no"),  # torch 2.8 never had a cp314 wheel
        ("2.8.3.post1", "2.9", ["3.12"], None, "no"),  # tagged 2026-06-10, after torch 2.9: not built
        ("2.8.3.post1", "2.13", ["3.12"], None, "unknown"),  # torch 2.13: 2026-07-08
        ("2.7.4.post1", "2.7", ["3.10"], "12.6", "yes"),  # seen
        ("2.5.8", "2.6", ["3.11"], "12.4", "no"),  # later wheels are cu12; its setup.py asks cu122
        ("2.0.4", "2.0", ["3.10"], None, "no"),  # no BASE_WHEEL_URL: nothing is ever fetched
    ],
)
def test_a_wheel_is_yes_no_or_unknown(
    base: kb.KnowledgeBase, version: str, torch: str, python: list[str] | None, cuda: str | None, answer: str
) -> None:
    assert wheels(base, version).has(torch, python, cuda).value == answer


def test_a_torch_the_index_snapshot_lacks_is_unknown(base: kb.KnowledgeBase) -> None:
    # newer than the KB's copy of torch's index: after every tag, and later wheels would be cu12
    assert wheels(base, "2.8.3").has("2.99", ["3.12"]) is kb.Availability.UNKNOWN
    assert wheels(base, "2.6.3").has("2.99", ["3.12"]) is kb.Availability.NO


def test_seen_wheels_have_their_source(base: kb.KnowledgeBase) -> None:
    doc = json.loads((REPO / "scripts/data/flash_attn_wheels_seen.json").read_text())
    assert doc["wheels"] and all(w["source"] and "code index id" in w["source"] for w in doc["wheels"])
    for entry in doc["wheels"]:
        version = entry["file"].split("-")[1].split("+")[0]
        assert wheels(base, version).seen, entry


@pytest.mark.skipif(not MIRROR.exists(), reason="the flash-attention mirror is not on this machine")
def test_later_build_evidence_is_at_its_line() -> None:
    doc = json.loads((REPO / "fa_lint/kb/flash_attn.json").read_text())
    later = doc["later_builds"]
    for entry in (later["since"], later["evidence"]["wheel_cuda"], later["evidence"]["wheel_cuda"]["used"]):
        commit, path, line = entry["at"].split(":")
        text = subprocess.run(
            ["git", "-C", str(MIRROR), "show", f"{commit}:{path}"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        assert text[int(line) - 1].strip() == entry["text"]
    for release in doc["releases"]:
        if release.get("tagged"):
            tagged = subprocess.run(
                ["git", "-C", str(MIRROR), "log", "-1", "--format=%ct", f"v{release['version']}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            import datetime as dt

            when = dt.datetime.fromtimestamp(int(tagged), dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            assert when == release["tagged"], release["version"]


def test_unknown_and_unfetched_releases(base: kb.KnowledgeBase) -> None:
    # no tag, but the sdist's setup.py has no BASE_WHEEL_URL (checked by hand in each sdist): pip compiles
    for version in ("0.2.0", "0.2.6.post1", "2.0.0.post1"):
        w = wheels(base, version)
        assert not w.fetched
        assert w.evidence == {
            "setup": {"at": f"flash_attn-{version}.tar.gz:setup.py", "text": "no BASE_WHEEL_URL"}
        }
    # no tag, and its sdist's setup.py fetches wheels: which ones its workflow built is not known
    release = base.get("2.8.3.post2")
    assert release is not None and release.wheels is None
    # before v2.0.6 setup.py has no BASE_WHEEL_URL: pip always compiles
    assert not wheels(base, "2.0.4").fetched
    assert wheels(base, "2.0.6").fetched
    for release in base.releases:
        if release.source.startswith("tag ") and release.version >= base.get("2.0.6").version:  # type: ignore[union-attr]
            assert release.wheels is not None and release.wheels.fetched, release


def _axis(text: str) -> list[str]:
    (values,) = yaml.safe_load(text).values()
    return [str(v) for v in values]


def test_evidence_reparses_to_the_recorded_facts() -> None:
    # Runs in CI without the flash-attention checkout: the workflow lines kept as evidence must
    # still say what the KB says.
    doc = kb.load()
    checked = 0
    for release in doc.releases:
        w = release.wheels
        if w is None or not w.fetched:
            continue
        ev = w.evidence
        assert ev is not None
        torch = _axis(ev["torch"]["text"])
        assert (
            tuple(
                sorted(
                    {".".join(t.split(".")[:2]) for t in torch}, key=lambda s: tuple(map(int, s.split(".")))
                )
            )
            == w.torch
        )
        assert set(_axis(ev["python"]["text"])) >= set(w.python)
        awk = re.search(r"awk -F \\\. \{'print ([^']*)'\}", ev["wheel_cuda"]["text"])
        assert awk is not None
        fields = [t for t in awk.group(1).split() if t.startswith("$")]
        names = {"".join(c.split(".")[int(f[1:]) - 1] for f in fields) for c in _axis(ev["cuda"]["text"])}
        assert set(w.cuda) <= names, release  # an exclude can drop a CUDA for every torch
        for entry in ev.get("exclude", []):
            (item,) = yaml.safe_load(entry["text"])
            assert set(item) <= {"torch-version", "python-version", "cuda-version", "cxx11_abi", "os"}
        mapped = ev.get("cuda_map")
        for value in (w.cuda_map or {}).values():
            assert mapped is not None and f'parse("{value}")' in mapped["text"]
        digits = ast.unparse(ast.parse(ev["cuda_digits"]["text"]))
        assert digits.count("torch_cuda_version.") == w.cuda_digits
        checked += 1
    assert checked > 40


@pytest.mark.skipif(not MIRROR.exists(), reason="the flash-attention mirror is not on this machine")
@pytest.mark.parametrize(
    "version", ["2.0.6", "2.3.5", "2.5.0", "2.5.8", "2.6.3", "2.7.4.post1", "2.8.3.post1"]
)
def test_evidence_is_at_its_line_in_the_tag(version: str) -> None:
    release = kb.load().get(version)
    assert release is not None and release.wheels is not None and release.wheels.evidence
    for key, item in release.wheels.evidence.items():
        for entry in item if isinstance(item, list) else [item]:
            tag, path, line = entry["at"].split(":")
            text = subprocess.run(
                ["git", "-C", str(MIRROR), "show", f"{tag}:{path}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.splitlines()
            first = entry["text"].splitlines()[0].strip()
            assert text[int(line) - 1].strip() == first, (key, entry)


# --- the maintainer script -------------------------------------------------------------------------

WORKFLOW = """\
jobs:
  build_wheels:
    strategy:
      matrix:
          os: [ubuntu-22.04]
          python-version: ['3.10', '3.11']
          torch-version: ['2.4.0', '2.5.0.dev20240901']
          cuda-version: ['12.4.1']
          cxx11_abi: ['FALSE', 'TRUE']
          exclude:
            - torch-version: '2.5.0.dev20240901'
              python-version: '3.10'
    steps:
      - run: |
          echo "WHEEL_CUDA_VERSION=$(echo ${{ matrix.cuda-version }} | awk -F \\. {'print $1'})" >> $GITHUB_ENV
          tmpname=cu${WHEEL_CUDA_VERSION}torch${MATRIX_TORCH_VERSION}cxx11abi${{ matrix.cxx11_abi }}
"""
SETUP = """\
BASE_WHEEL_URL = "https://example/{tag_name}/{wheel_name}"
def get_wheel_url():
    torch_cuda_version = parse(torch.version.cuda)
    torch_cuda_version = parse("11.8") if torch_cuda_version.major == 11 else parse("12.3")
    cuda_version = f"{torch_cuda_version.major}"
    wheel_filename = f"x"
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _repo(tmp_path: Path, setup: str, workflow: str | None) -> Path:
    repo = tmp_path / "fa"
    (repo / ".github/workflows").mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / "setup.py").write_text(setup)
    if workflow is not None:
        (repo / ".github/workflows/publish.yml").write_text(workflow)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "x")
    _git(repo, "tag", "v2.9.0")
    return repo


def _run(tmp_path: Path, repo: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    files = [{"upload_time": "2026-01-01T00:00:00", "packagetype": "sdist", "filename": "x", "url": "x"}]
    (tmp_path / "pypi.json").write_text(json.dumps({"releases": {"2.9.0": files}}))
    args = [
        "--repo",
        str(repo),
        "--pypi-json",
        str(tmp_path / "pypi.json"),
        "--output",
        str(tmp_path / "kb.json"),
        *extra,
    ]
    return subprocess.run(
        [sys.executable, str(REPO / "scripts/build_kb.py"), *args], capture_output=True, text=True
    )


def test_script_derives_the_matrix(tmp_path: Path) -> None:
    proc = _run(tmp_path, _repo(tmp_path, SETUP, WORKFLOW))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "kb.json").read_text())
    assert doc["schema"] == 3
    assert doc["later_builds"] is None  # no build.yml with workflow_dispatch: no wheel comes later
    built = kb.from_dict(doc).get("2.9.0")
    assert built is not None and built.wheels is not None
    w = built.wheels
    assert w.torch == ("2.4", "2.5") and w.cuda == ("12",) and w.built_against("2.5") == "2.5.0.dev20240901"
    assert w.matching("2.5", ["3.10"]) == [] and len(w.matching("2.5", ["3.11"], "12.1")) == 2
    assert w.cuda_name("11.8") == "11"
    assert (
        w.evidence is not None and w.evidence["exclude"][0]["at"] == "v2.9.0:.github/workflows/publish.yml:11"
    )


LATER = """\
on:
  workflow_dispatch:
    inputs:
      torch-version:
        type: string
      upload-to-release:
        type: boolean
      release-version:
        type: string
jobs:
  build:
    uses: ./.github/workflows/_build.yml
"""
TEMPLATE = """\
jobs:
  build-wheel:
    steps:
      - run: |
          echo "WHEEL_CUDA_VERSION=$(echo ${{ inputs.cuda-version }} | awk -F \\. {'print $1'})" >> $GITHUB_ENV
          tmpname=cu${WHEEL_CUDA_VERSION}torch${MATRIX_TORCH_VERSION}cxx11abi${{ inputs.cxx11_abi }}
"""


def _torch_json(path: Path) -> None:
    def files(when: str, *pythons: str) -> list[dict[str, str]]:
        return [{"upload_time_iso_8601": when, "python_version": f"cp{p.replace('.', '')}"} for p in pythons]

    doc = {
        "releases": {
            # the test's tag is made now: torch 2.4 came out before it, 2.6 after it
            "2.4.0": files("2020-12-01T00:00:00Z", "3.10", "3.11"),
            "2.6.0": files("2099-03-01T10:00:00+00:00", "3.10", "3.11"),
            "2.6.1": files("2099-04-01T00:00:00Z", "3.12"),  # a later patch adds CPython 3.12
            "2.7.0rc1": files("2099-04-02T00:00:00Z", "3.12"),  # pre-releases are not releases
        }
    }
    path.write_text(json.dumps(doc))


def test_script_derives_when_a_wheel_is_unknown(tmp_path: Path) -> None:
    repo = _repo(tmp_path, SETUP, WORKFLOW)
    (repo / ".github/workflows/build.yml").write_text(LATER)
    (repo / ".github/workflows/_build.yml").write_text(TEMPLATE)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "later builds")
    _torch_json(tmp_path / "torch.json")
    seen = tmp_path / "seen.json"
    name = "flash_attn-2.9.0+cu12torch2.6cxx11abiTRUE-cp311-cp311-linux_x86_64.whl"
    seen.write_text(json.dumps({"wheels": [{"file": name, "source": "a log"}]}))
    proc = _run(tmp_path, repo, "--torch-json", str(tmp_path / "torch.json"), "--seen", str(seen))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "kb.json").read_text())
    assert doc["later_builds"]["since"]["at"].endswith(":.github/workflows/build.yml:6")
    assert doc["later_builds"]["cuda_digits"] == 1
    assert doc["torch"]["minors"]["2.6"] == {
        "first": "2.6.0",
        "released": "2099-03-01T10:00:00Z",
        "cpython": {
            "3.10": "2099-03-01T10:00:00Z",
            "3.11": "2099-03-01T10:00:00Z",
            "3.12": "2099-04-01T00:00:00Z",
        },
    }
    assert "2.7" not in doc["torch"]["minors"]
    built = kb.from_dict(doc).get("2.9.0")
    assert built is not None and built.wheels is not None
    w = built.wheels
    assert w.has("2.4", ["3.11"]) is kb.Availability.YES  # the matrix
    assert w.has("2.4", ["3.12"]) is kb.Availability.NO  # torch 2.4 has no cp312 wheel at all
    assert w.has("2.6", ["3.11"], "12.4", True) is kb.Availability.YES  # seen
    assert w.has("2.6", ["3.10"]) is kb.Availability.UNKNOWN  # torch 2.6 came out after the tag
    assert w.later_torch() == ("2.6",)
    # a seen wheel the matrix already has is refused: the data file must say something new
    seen.write_text(json.dumps({"wheels": [{"file": name.replace("torch2.6", "torch2.4"), "source": "x"}]}))
    proc = _run(tmp_path, repo, "--torch-json", str(tmp_path / "torch.json"), "--seen", str(seen))
    assert proc.returncode == 1 and "in v2.9.0's matrix already" in proc.stderr


@pytest.mark.parametrize(
    ("setup", "workflow", "error"),
    [
        (SETUP, WORKFLOW.replace("          exclude:", "          include:"), "matrix key 'include'"),
        (SETUP, WORKFLOW.replace("awk -F \\. {'print $1'}", "cut -d. -f1"), "no awk"),
        (SETUP.replace('parse("11.8") if', "lookup() if"), WORKFLOW, "unknown CUDA mapping"),
        (SETUP, None, "no .github/workflows/publish.yml"),
        (
            SETUP.replace(
                "    cuda_version =",
                '    if torch_version_raw.minor > 1:\n        torch_cuda_version = parse("12.2")\n    cuda_version =',
            ),
            WORKFLOW,
            "torch_cuda_version set under an unknown test",
        ),
    ],
)
def test_script_refuses_shapes_it_does_not_know(
    tmp_path: Path, setup: str, workflow: str | None, error: str
) -> None:
    proc = _run(tmp_path, _repo(tmp_path, setup, workflow))
    assert proc.returncode == 1
    assert error in proc.stderr
