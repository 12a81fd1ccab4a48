"""Issue 42, item 1: a project's own manifest is installed by its installer even where no script says so,
and each installer builds flash-attn's sdist (no pyproject.toml; setup.py imports torch first) where
torch can or cannot be seen by its own rules, per release (fa_lint/kb/installers.json, read from each
installer's source by scripts/build_installers_kb.py):

* pip (``pip install .``): pip 25.3 and later always build in isolation; 23.1-25.2 unless setuptools and
  wheel are installed; and even the legacy build sees only a torch installed before the command;
* uv: ``no-build-isolation-package`` (0.2.35), ``extra-build-dependencies`` (0.8.4), ``match-runtime``
  (0.8.5); uv 0.11.0 alone reads PKG-INFO's ``Dynamic:`` without case and refuses match-runtime for
  flash-attn;
* pixi: ``[pypi-options] no-build-isolation`` (0.29.0; ``true`` from 0.47.0); a pixi.toml's ``[tool]``
  table is never read (so ``[tool.pixi.pypi-options]`` there does nothing);
* PDM: isolated unless ``--no-isolation`` (``[tool.pdm.options]`` from 2.7.0); Poetry: always isolated.

The shapes are ours, each from a real file (named where it is used)."""

from __future__ import annotations

from typing import Any

import pytest
from packaging.version import Version

from fa_lint.kb import installers
from tests.conftest import lint

# GeeeekExplorer/nano-vllm pyproject.toml at bb823b3e: torch and an unpinned flash-attn in [project]
# dependencies, setuptools backend, no installer table.
PLAIN = (
    '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
    '[project]\nname = "demo"\nversion = "0.1.0"\n'
    'dependencies = [\n    "torch>=2.4.0",\n    "transformers>=4.51.0",\n    "flash-attn>=2.6.3",\n]\n'
)
# Dao-AILab/flash-attention#2561 (2026-05-13): a pixi.toml whose author put no-build-isolation under
# [tool.pixi.pypi-options] (and uv's extra-build-dependencies under [tool.uv]); pixi failed to build
# flash-attn ("No module named 'torch'").
PIXI = (
    '[workspace]\nname = "demo"\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n\n'
    '[dependencies]\npython = "3.11.*"\npytorch = ">=2.4"\n\n'
    '[pypi-dependencies]\nflash_attn = ">=2.6.3"\n'
)


def _fal012(project: Any, files: dict[str, str]) -> list[tuple[str, int, str, str]]:
    return [
        (f["path"], f["line"], f["severity"], f["message"])
        for f in lint(project, files)
        if f["code"] == "FAL012"
    ]


def _notes(project: Any, files: dict[str, str]) -> list[str]:
    return [n for f in lint(project, files) if f["code"] == "FAL012" for n in f["notes"]]


# --- the knowledge base --------------------------------------------------------------------------


def test_facts_from_each_installers_source() -> None:
    facts = installers.load()
    assert facts.pip_always_isolated == Version("25.3")
    assert facts.fact("pip.isolated_without_wheel").since == Version("23.1")
    assert facts.fact("uv.extra_build_dependencies").since == Version("0.8.4")
    assert facts.fact("uv.match_runtime").since == Version("0.8.5")
    assert [v for v, _ in facts.uv_dynamic_case_insensitive] == [Version("0.11.0")]
    assert facts.fact("pixi.no_build_isolation").since == Version("0.29.0")
    assert facts.fact("pdm.options_table").since == Version("2.7.0")
    assert facts.fact("poetry.isolated_builder").since == Version("1.4.0")
    for name, fact in facts.facts.items():
        if fact is not None:  # every fact says where: TAG:path:line: text (TAG:path: for an absence)
            assert fact.evidence.startswith(f"{fact.since}:") or fact.evidence.startswith(
                f"v{fact.since}:"
            ), name
            assert fact.evidence.count(":") >= 2, name  # an absence names the file it read


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0.11.0", "0.11.0"), ("==0.11.0", "0.11.0"), ("v0.8.3", "0.8.3"), (">=0.11.1", None), ("latest", None)],
)
def test_one_release_or_none(text: str, expected: str | None) -> None:
    found = installers.version(text)
    assert (str(found) if found else None) == expected


# --- pip install . ------------------------------------------------------------------------------


def test_plain_project_is_installed_by_pip(project: Any) -> None:
    found = _fal012(project, {"pyproject.toml": PLAIN})
    assert [(p, line, s) for p, line, s, _ in found] == [("pyproject.toml", 11, "warning")]
    notes = _notes(project, {"pyproject.toml": PLAIN})
    assert any("pip 25.3 and later build every sdist with PEP 517" in n for n in notes)
    assert any("before it installs any, torch too" in n for n in notes)


def test_setup_py_install_requires(project: Any) -> None:
    setup = 'from setuptools import setup\nsetup(name="demo", install_requires=["torch", "flash-attn==2.7.4.post1"])\n'
    assert [(p, s) for p, _, s, _ in _fal012(project, {"setup.py": setup})] == [("setup.py", "warning")]


def test_an_extra_is_not_what_pip_install_dot_brings(project: Any) -> None:
    # nanotron's fast-modeling extra (huggingface/nanotron pyproject.toml): only `pip install .[extra]` asks
    extra = (
        PLAIN.replace('    "flash-attn>=2.6.3",\n', "")
        + '\n[project.optional-dependencies]\nfa = ["flash-attn>=2.6.3"]\n'
    )
    assert _fal012(project, {"pyproject.toml": extra}) == []


def test_a_command_that_installs_the_project_is_judged_instead(project: Any) -> None:
    dockerfile = (
        "FROM python:3.11\nCOPY . /app\nWORKDIR /app\n"
        "RUN pip install torch==2.6.0 && pip install --no-build-isolation .\n"
    )
    assert _fal012(project, {"pyproject.toml": PLAIN, "Dockerfile": dockerfile}) == []


# --- uv -----------------------------------------------------------------------------------------

UV_RUNTIME = PLAIN + (
    '\n[tool.uv.extra-build-dependencies]\nflash-attn = [{ requirement = "torch", match-runtime = true }]\n'
)


def test_uv_project_with_match_runtime_is_fine(project: Any) -> None:
    assert _fal012(project, {"pyproject.toml": UV_RUNTIME}) == []


def test_uv_0_11_0_refuses_match_runtime(project: Any) -> None:
    pinned = UV_RUNTIME.replace(
        "[tool.uv.extra", '[tool.uv]\nrequired-version = "==0.11.0"\n\n[tool.uv.extra'
    )
    found = _fal012(project, {"pyproject.toml": pinned})
    assert [(s, m.split(";")[0]) for _, _, s, m in found] == [
        ("error", "uv 0.11.0 refuses match-runtime for flash-attn (`does not declare static metadata`)")
    ]
    fixed = pinned.replace("==0.11.0", ">=0.11.1")
    assert _fal012(project, {"pyproject.toml": fixed}) == []


def test_ci_setup_uv_0_11_0_is_a_warning(project: Any) -> None:
    # embeddings-benchmark/mteb#4295: CI's uv 0.11.0 printed the match-runtime error
    workflow = (
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - uses: astral-sh/setup-uv@v6\n"
        '        with:\n          version: "0.11.0"\n      - run: uv sync\n'
    )
    files = {"pyproject.toml": UV_RUNTIME, ".github/workflows/ci.yml": workflow}
    assert [s for _, _, s, _ in _fal012(project, files)] == ["warning"]
    assert _fal012(project, {**files, ".github/workflows/ci.yml": workflow.replace("0.11.0", "0.11.1")}) == []


def test_uv_before_extra_build_dependencies(project: Any) -> None:
    old = UV_RUNTIME.replace("[tool.uv.extra", '[tool.uv]\nrequired-version = "==0.8.3"\n\n[tool.uv.extra')
    found = _fal012(project, {"pyproject.toml": old})
    assert [m.split(":")[0] for _, _, _, m in found] == [
        "uv 0.8.3 has no extra-build-dependencies (from uv 0.8.4)"
    ]


# --- pixi ---------------------------------------------------------------------------------------


def test_pixi_builds_in_isolation(project: Any) -> None:
    found = _fal012(project, {"pixi.toml": PIXI})
    assert [(p, line, s) for p, line, s, _ in found] == [("pixi.toml", 11, "error")]


@pytest.mark.parametrize("value", ['["flash-attn"]', '["flash_attn"]', "true"])
def test_pixi_no_build_isolation(project: Any, value: str) -> None:
    files = {"pixi.toml": PIXI + f"\n[pypi-options]\nno-build-isolation = {value}\n"}
    assert _fal012(project, files) == []


def test_pixi_toml_tool_table_is_never_read(project: Any) -> None:
    misplaced = PIXI + '\n[tool.pixi.pypi-options]\nno-build-isolation = ["flash_attn"]\n'
    found = _fal012(project, {"pixi.toml": misplaced})
    assert [s for _, _, s, _ in found] == ["error"]
    notes = _notes(project, {"pixi.toml": misplaced})
    assert any("which pixi never reads in a pixi.toml" in n and "pixi.toml:13" in n for n in notes)


def test_pixi_in_pyproject(project: Any) -> None:
    # a [tool.pixi] table: pixi installs the [project] dependencies
    pyproject = PLAIN + '\n[tool.pixi.workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n'
    assert [m.split(";")[0] for _, _, _, m in _fal012(project, {"pyproject.toml": pyproject})] == [
        "pixi builds flash-attn in isolation, without torch"
    ]
    fixed = pyproject + '\n[tool.pixi.pypi-options]\nno-build-isolation = ["flash-attn"]\n'
    assert _fal012(project, {"pyproject.toml": fixed}) == []


# --- PDM and Poetry -----------------------------------------------------------------------------


def test_pdm_builds_in_isolation_unless_its_options_say(project: Any) -> None:
    # Dao-AILab/flash-attention#246 (a PDM user's fix: `pdm add flash-attn --no-isolation`)
    pdm = PLAIN + "\n[tool.pdm]\ndistribution = true\n"
    assert [(s, m.split(";")[0]) for _, _, s, m in _fal012(project, {"pyproject.toml": pdm})] == [
        ("warning", "PDM builds flash-attn in isolation, where torch is missing")
    ]
    fixed = pdm + '\n[tool.pdm.options]\ninstall = ["--no-isolation"]\nlock = ["--no-isolation"]\n'
    assert _fal012(project, {"pyproject.toml": fixed}) == []


def test_poetry_notes_its_installer_per_release(project: Any) -> None:
    poetry = PLAIN + "\n[tool.poetry]\npackage-mode = false\n"
    notes = _notes(project, {"pyproject.toml": poetry})
    assert any("from Poetry 1.4.0" in n and "gone from 2.0.0" in n for n in notes)
