"""The build facts (fa_lint/kb/builds.json): what each release compiles, needs and accepts.

Expectations are read from flash-attention's own files at each tag (quoted in the comments), not from
fa-lint's output; every ``at``/``text`` pair is read again from the mirror where it is on this machine.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from fa_lint.kb import builds
from tests.conftest import REPO

MIRROR = REPO.parent / ".mirror/Dao-AILab+flash-attention/repo"
DATA = json.loads((REPO / "fa_lint/kb/builds.json").read_text())


def facts(version: str) -> builds.BuildFacts:
    found = builds.load().get(Version(version))
    assert found is not None, version
    return found


@pytest.mark.parametrize(
    ("version", "archs"),
    [
        # v2.0.0.post1-v2.7.2.post1 setup.py: sm_80 always, sm_90 'if bare_metal_version >= Version("11.8")'
        ("2.5.0", {"80": None, "90": "11.8"}),
        # v2.2.4 commented the sm_90 gencode out ("# cc_flag.append(...compute_90...)")
        ("2.2.4", {"80": None}),
        ("2.2.4.post1", {"80": None, "90": "11.8"}),
        # v2.7.3+: each behind '"N" in cuda_archs()'; sm_100/sm_120 from nvcc 12.8
        ("2.8.3", {"80": None, "90": "11.8", "100": "12.8", "120": "12.8"}),
        # 1.0.x: sm_75 and sm_80 always (FlashAttention 1 ran on Turing)
        ("1.0.9", {"75": None, "80": None, "90": "11.8"}),
    ],
)
def test_gencode_archs_and_the_nvcc_each_needs(version: str, archs: dict[str, str | None]) -> None:
    got = {a.sm: (str(a.nvcc) if a.nvcc else None) for a in facts(version).archs}
    assert got == archs
    assert not any(a.ptx for a in facts(version).archs)  # code=sm_XX only: no PTX a newer GPU could JIT


def test_the_arch_variable_and_how_setup_py_reads_it() -> None:
    # v2.8.3: os.getenv("FLASH_ATTN_CUDA_ARCHS", "80;90;100;120").split(";") and '"80" in cuda_archs()'
    f = facts("2.8.3")
    assert f.variable is not None and f.variable.name == "FLASH_ATTN_CUDA_ARCHS"
    assert f.variable.elements(None) == ("80", "90", "100", "120")
    assert f.compiled(Version("12.9"), None) == ({"80", "90", "100", "120"}, set())
    assert f.compiled(Version("12.4"), None) == ({"80", "90"}, set())
    # membership of the split list: "8.6", "86", "sm_80" and a space after ";" name nothing it tests
    for value in ("86", "8.0", "sm_80", "8.0;9.0"):
        assert f.compiled(Version("12.8"), value) == (set(), set()), value
    assert f.compiled(Version("12.8"), "80; 90") == ({"80"}, set())
    assert f.compiled(None, "90") == (set(), {"90"})  # sm_90 needs nvcc 11.8: unknown nvcc
    assert facts("2.7.2.post1").variable is None  # before v2.7.3 there is no cuda_archs()
    assert facts("2.6.3").compiled(Version("11.7"), "90") == ({"80"}, set())


@pytest.mark.parametrize(
    ("version", "accepts", "refuses"),
    [
        # 'TORCH_CHECK(is_sm90 || is_sm8x, ...)': is_sm8x = major == 8, is_sm90 = major == 9 && minor == 0
        ("2.5.0", [(8, 0), (8, 6), (8, 9), (9, 0)], [(7, 5), (7, 0), (10, 0), (12, 0)]),
        ("2.7.2.post1", [(8, 0), (9, 0)], [(10, 0), (12, 0)]),
        # v2.7.3: 'bool is_sm8x_min = cc_major >= 8'
        ("2.7.3", [(8, 0), (9, 0), (10, 0), (12, 0), (12, 1)], [(7, 5), (7, 0)]),
        ("2.8.3", [(10, 3), (12, 0)], [(7, 5)]),
        # fmha_api.cpp: TORCH_CHECK(is_sm90 || is_sm8x || is_sm75)
        ("1.0.9", [(7, 5), (8, 6), (9, 0)], [(7, 0), (10, 0)]),
    ],
)
def test_the_run_time_capability_check(
    version: str, accepts: list[tuple[int, int]], refuses: list[tuple[int, int]]
) -> None:
    runtime = facts(version).runtime
    assert all(runtime.accepts(cc) for cc in accepts)
    assert not any(runtime.accepts(cc) for cc in refuses)


@pytest.mark.parametrize(
    ("version", "floor", "missing", "capped", "threads"),
    [
        ("2.0.5", "11.0", "raise", False, 4),  # "FlashAttention is only supported on CUDA 11 and above"
        ("2.0.6", "11.4", "raise", False, 4),
        ("2.1.2.post3", "11.6", "warn", False, 4),  # check_if_cuda_home_none: warnings.warn
        ("2.5.3", "11.6", "warn", False, 4),
        ("2.5.4", "11.6", "warn", True, 4),  # NinjaBuildExtension: psutil.virtual_memory() / 9 GB a job
        ("2.7.0.post2", "11.7", "warn", True, 4),
        ("2.7.4.post1", "11.7", "warn", True, 2),  # os.getenv("NVCC_THREADS") or "2"
        ("2.8.3", "11.7", "warn", True, 4),
    ],
)
def test_floor_missing_nvcc_jobs_and_threads(
    version: str, floor: str, missing: str, capped: bool, threads: int
) -> None:
    f = facts(version)
    assert (str(f.floor), f.missing_nvcc, f.max_jobs_capped, f.nvcc_threads) == (
        floor,
        missing,
        capped,
        threads,
    )


@pytest.mark.parametrize(
    ("version", "runners", "builds_"),
    [
        # publish.yml os: [ubuntu-20.04], cuda-version: ['11.8.0', '12.2.2']
        ("2.5.0", ("ubuntu-20.04",), {"11.8": ("80", "90"), "12.2": ("80", "90")}),
        # v2.7.4.post1: cuda-version ['12.4.1']: nvcc 12.4 passes neither sm_100 nor sm_120
        ("2.7.4.post1", ("ubuntu-20.04",), {"12.4": ("80", "90")}),
        # v2.8.0.post1 (and so 2.8.0.post2, the release on PyPI) moved to ubuntu-22.04 ("Using ubuntu-22.04 instead of 24.04 for more compatibility")
        ("2.8.0.post2", ("ubuntu-22.04",), {"12.9": ("80", "90", "100", "120")}),
        ("2.8.3", ("ubuntu-22.04",), {"12.9": ("80", "90", "100", "120")}),
    ],
)
def test_what_each_wheel_carries(
    version: str, runners: tuple[str, ...], builds_: dict[str, tuple[str, ...]]
) -> None:
    w = facts(version).wheels
    assert w is not None
    assert w.runners == runners
    assert {str(b.nvcc): b.sm for b in w.builds} == builds_


def test_a_release_without_a_tag_has_no_wheel_facts() -> None:
    assert facts("2.8.3.post2").wheels is None  # an sdist: no publish.yml to read
    assert facts("2.8.3.post2").runtime.accepts((12, 0))  # its flash_api.cpp is in the sdist


def test_fa3_and_fa4() -> None:
    b = builds.load()
    # hopper/setup.py: cc_flag sm_90a; *_sm80.cu files get sm_80 instead; "only supported on CUDA 12.3"
    assert b.fa3.sm == ("90a", "80") and str(b.fa3.floor) == "12.3"
    assert builds.runs(b.fa3.sm, (9, 0)) and builds.runs(b.fa3.sm, (8, 6))
    assert not builds.runs(b.fa3.sm, (10, 0)) and not builds.runs(b.fa3.sm, (12, 0))
    # flash_attn/cute/interface.py: 'assert arch // 10 in [9, 10, 11]' (beta0-4), [8, ..., 12] from beta5
    fa4 = b.fa4_at(Version("4.0.0b4"))
    assert fa4 is not None and fa4.majors == (9, 10, 11)
    fa4 = b.fa4_at(Version("4.0.0b5"))
    assert fa4 is not None and fa4.majors == (8, 9, 10, 11, 12)


def test_binary_compatibility() -> None:
    assert builds.runs(["80"], (8, 6)) and builds.runs(["80"], (8, 9))
    assert not builds.runs(["86"], (8, 0))  # a higher minor does not run on a lower one
    assert not builds.runs(["80", "90"], (10, 0))  # nor across majors
    assert builds.runs(["100"], (10, 3)) and builds.runs(["120"], (12, 1))
    assert builds.runs(["90a"], (9, 0)) and not builds.runs(["90a"], (9, 1))


def test_torch_facts() -> None:
    t = builds.load().torch.facts
    assert set(t) >= {
        "user_arch_flags",
        "arch_list_variable",
        "major_mismatch",
        "minor_mismatch",
        "no_cuda_home",
    }
    assert t["user_arch_flags"].text == "if 'arch' in flag:"


# --- evidence, read again ----------------------------------------------------------------------------


def _evidence(node: Any) -> list[tuple[str, str]]:
    out = []
    if isinstance(node, dict):
        if isinstance(node.get("at"), str) and isinstance(node.get("text"), str):
            out.append((node["at"], node["text"]))
        for v in node.values():
            out += _evidence(v)
    elif isinstance(node, list):
        for v in node:
            out += _evidence(v)
    return out


@pytest.mark.skipif(not MIRROR.exists(), reason="the flash-attention mirror is not on this machine")
def test_every_quoted_line_is_at_its_place_in_the_mirror() -> None:
    checked = 0
    for at, text in _evidence({k: v for k, v in DATA.items() if k != "torch"}):
        m = re.fullmatch(r"([^:]+):(.+):(\d+)", at)
        if m is None:
            continue  # "never sets MAX_JOBS": a fact about the whole file
        rev, path, line = m.group(1), m.group(2), int(m.group(3))
        if rev.endswith(".tar.gz"):
            continue  # an sdist's file, not in git
        proc = subprocess.run(
            ["git", "-C", str(MIRROR), "show", f"{rev}:{path}"], capture_output=True, text=True, check=True
        )
        assert proc.stdout.splitlines()[line - 1].strip() == text, at
        checked += 1
    assert checked > 900


def test_every_quoted_torch_line_is_in_the_installed_torch() -> None:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        pytest.skip("no torch installed here")
    path = Path(spec.origin).parent / "utils/cpp_extension.py"
    version = (Path(spec.origin).parent / "version.py").read_text()
    if f"__version__ = '{DATA['torch']['version']}'" not in version:
        pytest.skip("another torch than the one the facts were read from")
    lines = path.read_text().splitlines()
    for at, text in _evidence(DATA["torch"]):
        assert lines[int(at.rsplit(":", 1)[1]) - 1].strip() == text, at


@pytest.mark.skipif(not MIRROR.exists(), reason="the flash-attention mirror is not on this machine")
def test_the_script_rebuilds_the_tagged_releases(tmp_path: Path) -> None:
    # sdist-only releases need their sdists: the tagged ones (all but four) come from the mirror alone
    kb = json.loads((REPO / "fa_lint/kb/flash_attn.json").read_text())
    kb["releases"] = [r for r in kb["releases"] if r["source"].startswith("tag ")]
    (tmp_path / "kb.json").write_text(json.dumps(kb))
    out = tmp_path / "builds.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts/build_machine_kb.py"),
            "--repo",
            str(MIRROR),
            "--kb",
            str(tmp_path / "kb.json"),
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    rebuilt = json.loads(out.read_text())
    mine = {r["version"]: r for r in DATA["releases"]}
    for r in rebuilt["releases"]:
        assert r == mine[r["version"]], r["version"]
    assert rebuilt["fa3"] == DATA["fa3"] and rebuilt["fa4"] == DATA["fa4"]


def test_the_script_refuses_what_it_does_not_know() -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import build_machine_kb as script
    finally:
        sys.path.pop(0)
    with pytest.raises(script.FactsError, match="unknown condition"):
        script.gencode_archs('if os.getenv("X"):\n    cc_flag.append("arch=compute_80,code=sm_80")\n', "t")
    with pytest.raises(script.FactsError, match="else branch"):
        script.gencode_archs(
            'if bare_metal_version >= Version("11.8"):\n    pass\nelse:\n'
            '    cc_flag.append("arch=compute_80,code=sm_80")\n',
            "t",
        )
    with pytest.raises(script.FactsError, match="unknown term"):
        script.runtime_check(
            "void mha_fwd(int x) {\n    bool is_sm8x = foo();\n    TORCH_CHECK(is_sm8x);\n}\n", "t"
        )


@pytest.mark.parametrize(
    ("version", "gb"),
    [
        ("2.5.3", None),  # setup.py sets no MAX_JOBS
        ("2.5.4", 9),  # max_num_jobs_memory = int(free_memory_gb / 9)  # each JOB peak memory cost is ~8-9GB
        ("2.8.3", 9),
    ],
)
def test_the_memory_setup_py_allows_each_job(version: str, gb: int | None) -> None:
    f = facts(version)
    assert f.per_job_gb == gb
    assert (f.per_job_evidence is None) == (gb is None)
    if f.per_job_evidence is not None:
        assert f.per_job_evidence.text.startswith("max_num_jobs_memory = int(free_memory_gb / 9)")
