"""Issue 35, item 7: which source uv really installs, and what uv's build variables make of the build.

* ``[tool.uv] default-groups`` (``["dev"]`` unless set; uv 0.4.27's release notes) are the groups ``uv
  sync`` installs; a ``[tool.uv.sources]`` entry for a group applies where that group is installed. A
  lock's index entry of flash-attn that a default group's URL source replaces is installed only by
  ``uv sync --no-default-groups`` (or ``--no-group``): FAL011 says so as info, never as a warning.
* ``[tool.uv.extra-build-variables] flash-attn = {...}`` is the environment of flash-attn's own build.
  flash-attn's setup.py adds its CUDA extension only when FLASH_ATTENTION_SKIP_CUDA_BUILD is not "TRUE"
  (v2.8.3.post1 setup.py:62, :163), and still fetches a prebuilt wheel first (setup.py:479-508): with
  no wheel for the torch, it installs a flash_attn whose import fails (flash_attn_interface.py:15).
  ``scripts/skip_cuda_build.py`` prints those lines at every 2.x tag.

The real case (open-instruct) is in tests/data/realworld/precision (test_precision.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import lint, run

WHEEL = "https://example.com/flash_attn-2.8.3+{cu}torch2.10-cp312-cp312-linux_x86_64.whl"


def _groups_project(defaults: str, marker: str = "") -> dict[str, str]:
    """A uv project whose cuda12 and cuda13 groups take flash-attn from wheel URLs, and whose lock also
    holds the index flash-attn for installs with neither group (as uv locks `conflicts` forks)."""
    more = f', marker = "{marker}"' if marker else ""
    pyproject = (
        '[project]\nname = "demo"\nversion = "0"\nrequires-python = "==3.12.*"\n'
        'dependencies = ["torch==2.10.0", "flash-attn>=2.8.3"]\n\n'
        '[dependency-groups]\ncuda12 = ["flash-attn>=2.8.3"]\ncuda13 = ["flash-attn>=2.8.3"]\n\n'
        f'[tool.uv]\n{defaults}conflicts = [[{{ group = "cuda12" }}, {{ group = "cuda13" }}]]\n\n'
        "[tool.uv.sources]\nflash-attn = [\n"
        f'  {{ url = "{WHEEL.format(cu="cu128")}", group = "cuda12"{more} }},\n'
        f'  {{ url = "{WHEEL.format(cu="cu130")}", group = "cuda13" }},\n]\n\n'
        '[tool.uv.extra-build-dependencies]\nflash-attn = [{ requirement = "torch", match-runtime = true }]\n'
    )
    lock = (
        'version = 1\nrequires-python = "==3.12.*"\n'
        'conflicts = [[{ package = "demo", group = "cuda12" }, { package = "demo", group = "cuda13" }]]\n\n'
        '[[package]]\nname = "flash-attn"\nversion = "2.8.3+cu128torch2.10"\n'
        f'source = {{ url = "{WHEEL.format(cu="cu128")}" }}\n\n'
        '[[package]]\nname = "flash-attn"\nversion = "2.8.3+cu130torch2.10"\n'
        f'source = {{ url = "{WHEEL.format(cu="cu130")}" }}\n\n'
        '[[package]]\nname = "flash-attn"\nversion = "2.8.3.post1"\nsource = { registry = "https://pypi.org/simple" }\n\n'
        '[[package]]\nname = "torch"\nversion = "2.10.0"\nsource = { registry = "https://pypi.org/simple" }\n'
    )
    return {"pyproject.toml": pyproject, "uv.lock": lock}


def _findings(project: Any, files: dict[str, str], code: str) -> list[dict[str, Any]]:
    return [f for f in lint(project, files) if f["code"] == code]


# --- default-groups and group sources --------------------------------------------------------------


@pytest.mark.parametrize(
    ("defaults", "severity"),
    [
        ('default-groups = ["dev", "cuda12"]\n', "info"),  # uv sync installs cuda12's wheel URL
        ('default-groups = "all"\n', "info"),
        ("", "warning"),  # uv's default is ["dev"]: uv sync installs the index flash-attn and compiles it
        ('default-groups = ["dev"]\n', "warning"),
        ('default-groups = ["dev", "cuda13"]\n', "info"),
    ],
)
def test_a_default_groups_source_replaces_the_index_entry(project: Any, defaults: str, severity: str) -> None:
    (f,) = _findings(project, _groups_project(defaults), "FAL011")
    assert (f["path"], f["line"], f["severity"]) == ("uv.lock", 16, severity)
    aside = [n for n in f["notes"] if n.startswith("`uv sync` installs the default groups")]
    assert len(aside) == (1 if severity == "info" else 0)


def test_the_note_names_the_group_and_its_source(project: Any) -> None:
    (f,) = _findings(project, _groups_project('default-groups = ["dev", "cuda12"]\n'), "FAL011")
    (note,) = [n for n in f["notes"] if n.startswith("`uv sync` installs the default groups")]
    assert 'default-groups = ["dev", "cuda12"] (pyproject.toml:11:1)' in note
    assert WHEEL.format(cu="cu128") in note and "--no-group cuda12" in note


def test_a_source_with_a_marker_is_not_taken_for_every_platform(project: Any) -> None:
    """A marker limits the source to some platforms; elsewhere the index entry is what installs."""
    files = _groups_project('default-groups = ["dev", "cuda12"]\n', marker="sys_platform == 'win32'")
    (f,) = _findings(project, files, "FAL011")
    assert f["severity"] == "warning"


# --- extra-build-variables -------------------------------------------------------------------------

OLD_TORCH = (
    '[project]\nname = "demo"\nversion = "0"\nrequires-python = "==3.11.*"\n'
    'dependencies = ["torch=={torch}", "flash-attn==2.8.3"]\n\n'
    '[tool.uv.extra-build-dependencies]\nflash-attn = [{{ requirement = "torch", match-runtime = true }}]\n'
)
OLD_LOCK = (
    'version = 1\nrequires-python = "==3.11.*"\n\n'
    '[[package]]\nname = "flash-attn"\nversion = "2.8.3"\nsource = { registry = "https://pypi.org/simple" }\n\n'
    '[[package]]\nname = "torch"\nversion = "{torch}"\nsource = { registry = "https://pypi.org/simple" }\n'
)
V100 = "#SBATCH --gres=gpu:v100:8\nuv sync\n"  # a Volta GPU: flash-attn 2 refuses compute capability 7.0


def _variables_project(variables: str, torch: str = "2.3.1") -> dict[str, str]:
    return {
        "pyproject.toml": OLD_TORCH.format(torch=torch) + variables,
        "uv.lock": OLD_LOCK.replace("{torch}", torch),
        "train.sh": V100,
    }


SKIP = '\n[tool.uv.extra-build-variables]\nflash-attn = { FLASH_ATTENTION_SKIP_CUDA_BUILD = "TRUE" }\n'


def test_skip_cuda_build_installs_without_kernels(project: Any) -> None:
    """2.8.3 has no wheel for torch 2.3 (its workflow built 2.4-2.8): setup.py builds, and with
    SKIP_CUDA_BUILD builds nothing: no compile, no kernel for any GPU, an import that fails."""
    files = _variables_project(SKIP)
    found = _findings(project, files, "FAL011")
    assert sorted((f["path"], f["severity"]) for f in found) == [
        ("pyproject.toml", "warning"),
        ("uv.lock", "warning"),
    ]
    for f in found:
        assert "it installs without kernels" in f["message"] and "pip compiles" not in f["message"]
        assert any(
            "No module named 'flash_attn_2_cuda'" in n and "pyproject.toml:11:16" in n for n in f["notes"]
        )
    assert _findings(project, files, "FAL013") == []


def test_without_the_variable_it_compiles_and_the_gpu_is_judged(project: Any) -> None:
    files = _variables_project("")
    assert all("pip compiles it" in f["message"] for f in _findings(project, files, "FAL011"))
    assert len(_findings(project, files, "FAL013")) == 2


@pytest.mark.parametrize(
    "variables",
    [
        # setup.py compares with "TRUE" exactly: "1" builds the extension
        '\n[tool.uv.extra-build-variables]\nflash-attn = { FLASH_ATTENTION_SKIP_CUDA_BUILD = "1" }\n',
        # another package's build variables are that build's
        '\n[tool.uv.extra-build-variables]\nflash-attn-3 = { FLASH_ATTENTION_SKIP_CUDA_BUILD = "TRUE" }\n',
    ],
)
def test_variables_that_do_not_skip_the_build(project: Any, variables: str) -> None:
    found = _findings(project, _variables_project(variables), "FAL011")
    assert len(found) == 2 and all("pip compiles it" in f["message"] for f in found)


def test_skip_cuda_build_still_fetches_a_prebuilt_wheel(project: Any) -> None:
    """2.8.3 has a wheel for torch 2.6: setup.py downloads it before it looks at the variable, so the
    install has kernels, and the Volta GPU is still judged."""
    files = _variables_project(SKIP, torch="2.6.0")
    assert _findings(project, files, "FAL011") == []
    assert len(_findings(project, files, "FAL013")) == 2


@pytest.mark.parametrize(
    "table",
    [
        '[tool.uv]\nextra-build-variables = "TRUE"\n',
        "[tool.uv.extra-build-variables]\nflash-attn = 1\n",
        "[tool.uv.extra-build-variables]\nflash-attn = { FLASH_ATTENTION_SKIP_CUDA_BUILD = true }\n",
        "[tool.uv]\ndefault-groups = 3\n",
    ],
)
def test_odd_tables_are_no_traceback(project: Any, table: str) -> None:
    project(
        {
            "pyproject.toml": '[project]\nname = "demo"\nversion = "0"\ndependencies = ["flash-attn>=2.6"]\n\n'
            + table
        }
    )
    result = run("--isolated", "--format", "json", ".")
    assert "Traceback" not in result.err and result.json["findings"] is not None


@pytest.mark.parametrize(
    ("defaults", "judged"), [('default-groups = ["dev", "cuda12"]\n', False), ("", True)]
)
def test_the_machine_rules_judge_what_uv_sync_installs(project: Any, defaults: str, judged: bool) -> None:
    """A Volta GPU (7.0) runs no FlashAttention 2: the lock's index entry is judged for it only where
    `uv sync` installs that entry, not where a default group's wheel URL replaces it."""
    files = {**_groups_project(defaults), "train.sh": V100}
    lines = [f["line"] for f in _findings(project, files, "FAL013") if f["path"] == "uv.lock"]
    assert lines == ([6, 11, 16] if judged else [6, 11])
