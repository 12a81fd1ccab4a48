"""Issue 22 on fixtures of real projects' shapes (tests/data/realworld/accuracy/README.md says where
each comes from and why each verdict is what the release facts make it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import DATA, run

CASES = DATA / "realworld" / "accuracy"

# case -> (codes to look at, or () for every one; every finding as (path, line, code, severity))
EXPECTED: dict[str, tuple[tuple[str, ...], list[tuple[str, int, str, str]]]] = {
    "open-instruct-docker-c014958dc": ((), [("Dockerfile", 7, "FAL012", "error")]),
    "open-instruct-docker-7dba4c9e2": ((), []),
    "rna-llm-submodule": ((), [("Dockerfile", 8, "FAL009", "info")]),
    "rna-llm-submodule-checked-out": ((), [("Dockerfile", 8, "FAL001", "error")]),
    "skinspector-vendored": ((), [("scripts/fa3.sh", 6, "FAL022", "info")]),
    "trellis-rocm-fork": (
        (),
        [("setup.sh", 5, "FAL002", "warning"), ("setup.sh", 5, "FAL012", "warning")],
    ),
    "trellis2-rocm-fork": ((), [("setup.sh", 9, "FAL012", "warning")]),
    "open-instruct-uv-sources": ((), []),
    "simpo-conda-export": (("FAL001", "FAL002", "FAL003", "FAL900", "FAL901"), []),
    "simpo-conda-pip-step": ((), [("environment.yml", 10, "FAL012", "error")]),
    "llm-playground-conda-option": ((), [("requirements.yaml", 17, "FAL900", "error")]),
    "tgi-rocm-fork": (
        (),
        [("Makefile-fa-v2", 8, "FAL009", "info"), ("Makefile-fa-v2", 15, "FAL009", "info")],
    ),
}
# what to check in a case, when not its folder: a Makefile is read only when named
NAMED: dict[str, tuple[str, ...]] = {
    "tgi-rocm-fork": ("Makefile-fa-v2",),
}


def test_every_case_folder_is_listed() -> None:
    assert sorted(p.name for p in CASES.iterdir() if p.is_dir()) == sorted(EXPECTED)
    readme = (CASES / "README.md").read_text()
    for case in EXPECTED:
        assert f"| `{case}` |" in readme, case


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_case(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    codes, expected = EXPECTED[case]
    monkeypatch.chdir(CASES / case)
    select = ("--select", ",".join(codes)) if codes else ()
    r = run("--format", "json", "--isolated", *select, *NAMED.get(case, (".",)))
    found = sorted((str(Path(f["path"])), f["line"], f["code"], f["severity"]) for f in r.json["findings"])
    assert found == sorted(expected), r.out


def test_the_fork_build_says_which_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    # TRELLIS's ROCm build is judged as 2.6.3 of ROCm's fork: with a policy above it, FAL001 says so
    monkeypatch.chdir(CASES / "trellis-rocm-fork")
    r = run("--format", "json", "--isolated", "--min-version", "2.7.0", "--select", "FAL001", ".")
    (f,) = [f for f in r.json["findings"] if f["line"] == 10]
    assert "flash-attn 2.6.3 built from source" in f["message"]
    assert any(
        "at v2.6.3-cktile (its flash_attn/__init__.py says 2.6.3 at that tag); ROCm/flash-attention is a fork"
        in n
        for n in f["notes"]
    )


def test_the_submodule_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES / "rna-llm-submodule")
    (f,) = run("--format", "json", "--isolated", ".").json["findings"]
    assert (
        "a git submodule of https://github.com/Dao-AILab/flash-attention.git, not checked out here"
        in f["notes"][0]
    )


def test_the_rocm_clone_is_the_fork_it_clones(monkeypatch: pytest.MonkeyPatch) -> None:
    # TGI's ROCm target clones fxmarty/flash-attention-rocm into the folder its CUDA target cloned
    # HazyResearch's into: the build at line 15 is the fork's (its setup.py names flash_attn)
    monkeypatch.chdir(CASES / "tgi-rocm-fork")
    found = run("--format", "json", "--isolated", "Makefile-fa-v2").json["findings"]
    (rocm,) = [f for f in found if f["line"] == 15]
    assert rocm["notes"][0] == (
        "it builds https://github.com/fxmarty/flash-attention-rocm at commit "
        "8736558c287ff2ef28b24878e42828c595ac3e69; fxmarty/flash-attention-rocm is a fork of "
        "Dao-AILab/flash-attention"
    )
