"""The prebuilt-wheel matrix in the knowledge base: release facts, evidence that re-parses, the script.

Expectations are read from flash-attn's release workflow and setup.py at each tag (quoted in the
comments), not from fa-lint's output.
"""

from __future__ import annotations

import ast
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


def _run(tmp_path: Path, repo: Path) -> subprocess.CompletedProcess[str]:
    import json

    files = [{"upload_time": "2026-01-01T00:00:00", "packagetype": "sdist", "filename": "x", "url": "x"}]
    (tmp_path / "pypi.json").write_text(json.dumps({"releases": {"2.9.0": files}}))
    args = [
        "--repo",
        str(repo),
        "--pypi-json",
        str(tmp_path / "pypi.json"),
        "--output",
        str(tmp_path / "kb.json"),
    ]
    return subprocess.run(
        [sys.executable, str(REPO / "scripts/build_kb.py"), *args], capture_output=True, text=True
    )


def test_script_derives_the_matrix(tmp_path: Path) -> None:
    import json

    proc = _run(tmp_path, _repo(tmp_path, SETUP, WORKFLOW))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "kb.json").read_text())
    assert doc["schema"] == 2
    built = kb.from_dict(doc).get("2.9.0")
    assert built is not None and built.wheels is not None
    w = built.wheels
    assert w.torch == ("2.4", "2.5") and w.cuda == ("12",) and w.built_against("2.5") == "2.5.0.dev20240901"
    assert w.matching("2.5", ["3.10"]) == [] and len(w.matching("2.5", ["3.11"], "12.1")) == 2
    assert w.cuda_name("11.8") == "11"
    assert (
        w.evidence is not None and w.evidence["exclude"][0]["at"] == "v2.9.0:.github/workflows/publish.yml:11"
    )


@pytest.mark.parametrize(
    ("setup", "workflow", "error"),
    [
        (SETUP, WORKFLOW.replace("          exclude:", "          include:"), "matrix key 'include'"),
        (SETUP, WORKFLOW.replace("awk -F \\. {'print $1'}", "cut -d. -f1"), "no awk"),
        (SETUP.replace('parse("11.8") if', "lookup() if"), WORKFLOW, "unknown CUDA mapping"),
        (SETUP, None, "no .github/workflows/publish.yml"),
    ],
)
def test_script_refuses_shapes_it_does_not_know(
    tmp_path: Path, setup: str, workflow: str | None, error: str
) -> None:
    proc = _run(tmp_path, _repo(tmp_path, setup, workflow))
    assert proc.returncode == 1
    assert error in proc.stderr
