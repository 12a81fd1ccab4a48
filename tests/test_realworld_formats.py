"""Issue 10, items 4-6, on fixtures of real projects' shapes (tests/data/realworld/formats/README.md
says where each comes from and why each verdict is what the release facts make it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import DATA, run

CASES = DATA / "realworld" / "formats"

# case -> (paths to name, or "." to walk; every finding as (path, line, code, severity))
EXPECTED: dict[str, list[tuple[tuple[str, ...], list[tuple[str, int, str, str]]]]] = {
    "pcs4esr-setup-py": [((".",), [("setup.py", 7, "FAL900", "error")])],
    "internvl-nested-requirements": [
        ((".",), [("requirements/chat_training.txt", 2, "FAL001", "error")]),
    ],
    "cosmos-curate-pixi": [
        ((".",), [("pixi.toml", 13, "FAL002", "info")]),
        (("pixi.toml",), [("pixi.toml", 13, "FAL002", "info")]),  # the lock is read beside it
        (("pixi.lock",), []),  # a changed lock: the manifest's own info is not the lock's finding
    ],
    "verl-setup-extras": [
        ((".",), [("requirements-cuda.txt", 1, "FAL002", "warning"), ("setup.py", 3, "FAL002", "warning")]),
    ],
    "open-r1-deps-list": [((".",), [])],
    "fms-hf-tuning-tox": [((".",), []), (("tox.ini",), [])],
    "instructlab-tox-constraints": [((".",), []), (("constraints-dev.txt",), [])],
    "instructlab-training-files-in": [((".",), [])],
    "instructlab-vllm-flash-attn": [((".",), [])],
    "flash-attention-manifest-in": [((".",), []), (("MANIFEST.in",), [])],
    "megatron-env-configs": [((".",), [])],
}


def test_every_case_folder_is_listed() -> None:
    assert sorted(p.name for p in CASES.iterdir() if p.is_dir()) == sorted(EXPECTED)
    readme = (CASES / "README.md").read_text()
    for case in EXPECTED:
        assert f"| `{case}` |" in readme, case


@pytest.mark.parametrize(
    ("case", "paths", "expected"),
    [(case, paths, expected) for case, runs in EXPECTED.items() for paths, expected in runs],
)
def test_case(
    case: str,
    paths: tuple[str, ...],
    expected: list[tuple[str, int, str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(CASES / case)
    r = run("--format", "json", "--isolated", *paths)
    found = sorted((str(Path(f["path"])), f["line"], f["code"], f["severity"]) for f in r.json["findings"])
    assert found == sorted(expected), r.out
    assert r.code == (1 if any(s == "error" for *_, s in expected) else 0)


@pytest.mark.parametrize("case", ["flash-attention-manifest-in", "megatron-env-configs"])
def test_sniffed_names_that_are_not_dependency_files_are_not_checked(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(CASES / case)
    r = run()
    assert r.code == 0 and r.out == "No dependency files found under .\n"
