"""Issue 10, items 4, 5 and 7: the formats added (tox, nox, pixi, conda-lock, sniffed names),
what is judged or reported as not judged, and a walk that finds nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fa_lint.files.discover import candidate, classify, detect
from fa_lint.model import Group, Parsed
from tests.conftest import DATA, includes, parse, problems, reqs, run, span


def table(records: list[Parsed]) -> list[tuple[object, ...]]:
    return [(*span(r), r.constraint_text, r.kind.value, r.scope) for r in reqs(records)]


def groups(records: list[Parsed]) -> dict[str, tuple[str, ...]]:
    return {r.name: r.scopes for r in records if isinstance(r, Group)}


def findings(*args: str) -> list[tuple[str, int, str, str]]:
    # how flash-attn builds (FAL011, FAL012) is test_install.py's; here what each format installs
    # how it installs (FAL011, FAL012) and the machine (FAL013-FAL015) have tests of their own
    r = run("--format", "json", "--isolated", "--ignore", "FAL011,FAL012,FAL013,FAL014,FAL015", *args)
    return sorted((f["path"], f["line"], f["code"], f["severity"]) for f in r.json["findings"])


# --- tox.ini ---------------------------------------------------------------------------------------


def test_tox_deps_commands_and_install_command() -> None:
    records = parse("tox", DATA / "tox/tox.ini")
    assert table(records) == [
        (9, 10, 9, 27, "==2.4.2", "install", "testenv[gpu]"),
        (10, 16, 10, 31, ">=2.6", "install", "testenv[py311-gpu]"),
        (11, 11, 11, 52, ">=2.5", "install", "testenv[!gpu]"),
        (12, 5, 12, 33, "any", "install", "testenv"),  # {env:FA_VERSION}: only the run knows
        (14, 18, 14, 35, ">=2.5.6", "install", "testenv commands_pre"),  # a pip install line
    ]
    assert reqs(records)[2].marker == 'sys_platform == "linux"'
    assert reqs(records)[3].unresolved == "{env:FA_VERSION}"
    assert [(i.target, i.constraint, i.scope) for i in includes(records)] == [
        ("requirements.txt", False, "testenv"),
        ("./constraints.txt", True, "testenv install_command"),  # {toxinidir} is the file's folder
    ]
    inherited = ("testenv install_command", "testenv commands_pre", "testenv commands")
    assert groups(records) == {
        # envlist braces expanded; py311-cpu installs what py310-cpu does: one environment
        "testenv:py310-cpu": ("testenv", "testenv[!gpu]", *inherited),
        "testenv:py310-gpu": ("testenv", "testenv[gpu]", *inherited),
        "testenv:py311-gpu": ("testenv", "testenv[gpu]", "testenv[py311-gpu]", *inherited),
        "testenv:lint": ("testenv:lint", *inherited),  # its own deps replace [testenv]'s
        "testenv:docs": ("testenv:docs", "testenv", "testenv[!gpu]", *inherited),  # {[testenv]deps}
    }


@pytest.mark.parametrize(
    ("condition", "env", "applies"),
    [
        ("gpu", "py311-gpu", True),
        ("gpu", "py311-cpu", False),
        ("py311-gpu", "py310-gpu", False),
        ("cpu,gpu", "py310-gpu", True),
        ("!gpu", "py310-cpu", True),
        ("!gpu", "gpu", False),
        ("py3{10,11}-gpu", "py311-gpu", True),
    ],
)
def test_tox_factor_conditions(condition: str, env: str, applies: bool) -> None:
    from fa_lint.sources.tox import applies as applies_to

    assert applies_to(condition, env) is applies


def test_a_tox_factor_line_combines_with_the_constraints_of_install_command(project: Any) -> None:
    # gpu testenvs ask for flash-attn<2.6 and install_command says -c constraints.txt, which has
    # !=2.5.*: together 0.2.0 ... 2.4.3.post1, none with block_table (first in 2.5.0). cpu ones
    # ask for nothing of flash-attn.
    project(
        {
            "tox.ini": "[tox]\nenvlist = py311-{cpu,gpu}\n\n[testenv]\n"
            "install_command = python -m pip install -c constraints.txt {opts} {packages}\n"
            "deps =\n    pytest\n    gpu: flash-attn<2.6\n",
            "constraints.txt": "flash-attn!=2.5.*\n",
        }
    )
    r = run("--format", "json", "tox.ini")
    (env,) = [f for f in r.json["findings"] if f["code"] == "FAL004"]
    assert (env["path"], env["line"], env["environment"]) == ("tox.ini", 8, "tox.ini [testenv:py311-gpu]")
    assert [loc["path"] for loc in env["related_locations"]] == ["constraints.txt"]


def test_tox_commands_follow_their_factor_conditions(project: Any) -> None:
    # <2.6 (gpu testenvs) and !=2.5.* (cpu ones) would admit nothing with paged KV together (FAL004),
    # but no testenv has both: each is only a warning of its own.
    project(
        {
            "tox.ini": "[tox]\nenvlist = py311-{cpu,gpu}\n\n[testenv]\ndeps =\n    cpu: flash-attn!=2.5.*\n"
            'commands_pre =\n    gpu: pip install "flash-attn<2.6" \\\n        --no-build-isolation\n'
        }
    )
    assert findings("tox.ini") == [("tox.ini", 6, "FAL002", "warning"), ("tox.ini", 8, "FAL002", "warning")]


# --- noxfile.py ------------------------------------------------------------------------------------


def test_nox_sessions_read_with_ast() -> None:
    records = parse("nox", DATA / "nox/noxfile.py")
    assert table(records) == [
        (10, 21, 10, 40, "==2.4.2", "install", "session:tests"),  # f-string with a bound name
        (4, 9, 4, 24, ">=2.6", "install", "session:tests"),  # *GPU, where GPU is written
        (12, 52, 12, 69, "==2.3.6", "install", "session:tests"),  # session.run("python", "-m", "pip"...)
        (13, 21, 13, 36, "any", "install", "session:tests"),  # FLASH_ATTN_SPEC: not in the file
        (19, 43, 19, 65, ">=2.0", "install", "session:gpu-tests"),  # run_install of uv pip, "+" strings
        (20, 22, 20, 38, "==2.7.4.*", "install", "session:gpu-tests"),  # conda_install
    ]
    assert reqs(records)[3].unresolved == "FLASH_ATTN_SPEC"
    assert [(i.target, i.scope) for i in includes(records)] == [("requirements.txt", "session:tests")]


def test_nox_installs_run_in_order(project: Any) -> None:
    project(
        {
            "noxfile.py": "import nox\n\n\n@nox.session\ndef gpu(session):\n"
            '    session.install("flash-attn==2.4.2")\n'
            '    session.install("-U", "flash-attn==2.6.3")\n'
            "    session.install(FA_SPEC_FLASH_ATTN)\n"
        }
    )
    # The second install replaces the first (FAL001 stays on the first line, which still runs);
    # the third is a value only the run knows: FAL009.
    assert findings("noxfile.py") == [
        ("noxfile.py", 6, "FAL001", "error"),
        ("noxfile.py", 8, "FAL009", "info"),
    ]


def test_a_helper_inside_a_session_is_read_once(project: Any) -> None:
    project(
        {
            "noxfile.py": "import nox\n\n\n@nox.session\ndef gpu(session):\n"
            "    def install(s):\n        s.install('flash-attn==2.4.2')\n\n    install(session)\n"
        }
    )
    assert findings("noxfile.py") == [("noxfile.py", 7, "FAL001", "error")]


def test_a_noxfile_is_never_run(project: Any) -> None:
    project({"noxfile.py": "raise SystemExit('ran')\nimport nox\n", "x/noxfile.py": "def (:\n"})
    assert findings(".") == [("x/noxfile.py", 1, "FAL900", "error")]


# --- pixi ------------------------------------------------------------------------------------------


def test_pixi_manifest() -> None:
    records = parse("pixi", DATA / "pixi/pixi.toml")
    assert table(records) == [
        (10, 1, 10, 21, ">=2.3", "install", "default"),
        (13, 1, 13, 56, "==2.6.3", "install", "default"),  # [target.linux-64]: a platform marker
        (16, 1, 16, 21, "==2.5.*", "install", "feature:cuda"),  # conda's "2.5.*"
        (19, 1, 19, 86, "==2.3.6", "source", "feature:legacy"),  # git tag v2.3.6
    ]
    assert reqs(records)[1].marker == 'sys_platform == "linux"'
    assert {r.name for r in reqs(records, None)} >= {"python", "torch"}  # conda's pytorch is torch
    assert groups(records) == {
        "env:default": ("default",),
        "env:cuda": ("default", "feature:cuda"),
        "env:legacy": ("feature:legacy",),  # no-default-feature
    }


def test_pixi_lock_entries_name_their_environments() -> None:
    records = parse("pixi.lock", DATA / "pixi/pixi.lock")
    assert table(records) == [
        (17, 3, 17, 19, "==2.6.3", "lock", "lock; env:default"),
        (22, 3, 22, 19, "==2.3.6", "lock", "lock; env:legacy"),
    ]
    # format 6 names a conda package only by its URL: pytorch-2.3.1-<build>.conda is torch 2.3.1
    (torch,) = reqs(records, "torch")
    assert torch.constraint_text == "==2.3.1" and torch.tool == "pixi"


def test_pixi_environments_and_their_lock(project: Any) -> None:
    project(
        {
            "pixi.toml": (DATA / "pixi/pixi.toml").read_text(),
            "pixi.lock": (DATA / "pixi/pixi.lock").read_text(),
        }
    )
    # default: >=2.3 admits releases without paged KV (FAL002), the lock pins 2.6.3 for it: info.
    # cuda: default's >=2.3 and ==2.6.3 with cuda's 2.5.* admit nothing together (FAL004).
    # legacy: only its own git tag v2.3.6 (FAL001), and its lock entry 2.3.6 (FAL001); default's
    # requirements are not part of it, so its lock entry is not stale against them.
    assert findings(".") == [
        ("pixi.lock", 22, "FAL001", "error"),
        ("pixi.toml", 10, "FAL002", "info"),
        ("pixi.toml", 10, "FAL004", "error"),
        ("pixi.toml", 19, "FAL001", "error"),
    ]


def test_tool_pixi_in_pyproject(project: Any) -> None:
    project(
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "1"\n\n'
            '[tool.pixi.pypi-dependencies]\nflash-attn = "==2.4.2"\n\n'
            '[tool.pixi.feature.gpu.dependencies]\nflash-attn = ">=2.6"\n'
        }
    )
    assert findings(".") == [("pyproject.toml", 6, "FAL001", "error")]


# --- conda-lock ------------------------------------------------------------------------------------


def test_conda_lock_entries() -> None:
    records = parse("conda-lock", DATA / "conda_lock/conda-lock.yml")
    assert table(records) == [
        (19, 5, 19, 21, "==2.7.4", "lock", "lock; linux-64"),
        (26, 5, 26, 21, "==2.4.2", "lock", "lock; osx-arm64"),
    ]
    assert reqs(records, "torch")[0].constraint_text == "==2.3.1"  # conda's pytorch


def test_conda_lock_numbers_and_its_environment_file(project: Any) -> None:
    project(
        {
            "conda-lock.yml": (DATA / "conda_lock/conda-lock.yml").read_text(),
            "environment.yml": "dependencies:\n  - flash-attn>=2.5\n",
        }
    )
    # conda-forge's 2.7.4 is PyPI's 2.7.4.post1 (paged KV), not an unknown release; the pip entry
    # 2.4.2 has no paged KV (FAL001) and is outside the environment file's >=2.5 (FAL006).
    r = run("--format", "json", ".")
    got = sorted((f["path"], f["line"], f["code"]) for f in r.json["findings"])
    assert got == [("conda-lock.yml", 26, "FAL001"), ("conda-lock.yml", 26, "FAL006")]
    assert "conda-lock lock --update flash-attn" in r.json["findings"][0]["message"]


def test_a_merge_conflict_in_a_yaml_lock_is_located(project: Any) -> None:
    text = (
        (DATA / "conda_lock/conda-lock.yml")
        .read_text()
        .replace("  - name: flash-attn\n", "<<<<<<< HEAD\n", 1)
    )
    project({"conda-lock.yml": text})
    assert findings(".") == [("conda-lock.yml", 19, "FAL900", "error")]


# --- names and sniffing ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        ("requirements/gpu/cuda12.txt", "requirements"),
        ("requirements/base.txt", "requirements"),
        ("constraints/torch.txt", "requirements"),
        ("requirements.lock", "requirements"),
        ("requirements-dev.lock", "requirements"),
        ("tox.ini", "tox"),
        ("noxfile.py", "nox"),
        ("pixi.toml", "pixi"),
        ("pixi.lock", "pixi.lock"),
        ("conda-lock.yml", "conda-lock"),
        ("gpu.conda-lock.yml", "conda-lock"),
        (".github/workflows/conda.yml", "workflow"),
        ("docs/notes.txt", None),
        ("poetry.lock", "poetry.lock"),
    ],
)
def test_names(path: str, fmt: str | None) -> None:
    assert detect(path) == fmt


@pytest.mark.parametrize(
    ("name", "text", "fmt"),
    [
        ("dev.in", "-c constraints.txt\nflash-attn>=2.5  # for the GPU job\ntorch\n", "requirements"),
        ("base.in", "-e .\n--extra-index-url https://x\n", "requirements"),
        ("MANIFEST.in", "include README.md\nrecursive-include flash_attn *.cu\n", None),
        ("Makefile.in", "CC = @CC@\nall: build\n", None),
        ("config.h.in", "#undef HAVE_CUDA\n", None),
        ("env-gpu.yml", "name: gpu\nchannels: [conda-forge]\ndependencies:\n  - flash-attn\n", "conda"),
        ("conda/cuda.yaml", "dependencies:\n  - pip:\n    - flash-attn\n", "conda"),
        ("requirements.yaml", "# conda\ndependencies:\n  - python=3.11\n", "conda"),
        ("envs/app.yml", "services:\n  app:\n    image: x\n", None),  # a compose file by its head
        ("environment_configs/default.yaml", "- agent_type: A\n  weight: 1.0\n", None),
    ],
)
def test_sniffed_names(project: Any, name: str, text: str, fmt: str | None) -> None:
    root = project({name: text})
    assert candidate(name) is not None and detect(name) is None
    assert classify(str(root / name)) == fmt


def test_only_the_head_of_a_sniffed_file_is_read(project: Any) -> None:
    root = project({"env-big.yml": "x: " + "y" * 20000 + "\ndependencies:\n  - flash-attn==2.4.2\n"})
    assert classify(str(root / "env-big.yml")) is None


def test_sniffed_files_are_found_walking_and_named(project: Any) -> None:
    project(
        {
            "requirements/gpu/cuda12.in": "flash-attn==2.4.2\n",
            "MANIFEST.in": "include flash_attn/*.cu\n",
            "conda/env-train.yml": "dependencies:\n  - pip:\n    - flash-attn==2.4.2\n",
        }
    )
    expected = [
        ("conda/env-train.yml", 3, "FAL001", "error"),
        ("requirements/gpu/cuda12.in", 1, "FAL001", "error"),
    ]
    assert findings(".") == expected
    assert findings("MANIFEST.in", "conda/env-train.yml", "requirements/gpu/cuda12.in") == expected


# --- judged, or reported as not judged (item 5) ----------------------------------------------------


def test_an_unreadable_entry_that_is_not_flash_attn_is_a_warning(project: Any) -> None:
    project(
        {
            "requirements.txt": "torch>=2 and more\nflash-attn>=2.5 and more\n",
            "environment.yml": "dependencies:\n  - pip:\n    - git+https://github.com/org/tool\n",
            "pyproject.toml": '[project]\nname = "x"\nversion = "1"\ndependencies = ["foo>=1 --no-deps"]\n',
        }
    )
    assert findings(".") == [
        ("environment.yml", 3, "FAL901", "warning"),  # a git URL that names no package
        ("pyproject.toml", 4, "FAL901", "warning"),  # not PEP 508, not flash-attn
        ("requirements.txt", 1, "FAL901", "warning"),
        ("requirements.txt", 2, "FAL900", "error"),  # names flash-attn: an error
    ]
    r = run("environment.yml")
    assert r.code == 0 and "skipped, not checked" in r.out  # a warning does not fail the run


def test_a_setup_py_string_that_names_flash_attn_but_is_not_pep_508(project: Any) -> None:
    project(
        {
            "setup.py": "from setuptools import setup\n\nsetup(\n    name='x',\n"
            "    extras_require={'gpu': ['flash-attn --no-build-isolation'], 'io': ['README.md']},\n)\n"
        }
    )
    r = run("--format", "json", "setup.py")
    (f,) = r.json["findings"]
    assert (f["code"], f["line"], f["column"]) == ("FAL900", 5, 30)
    assert "flash-attn --no-build-isolation" in f["message"]


def test_a_url_with_its_marker_glued_on_is_judged(project: Any) -> None:
    url = "https://github.com/Dao-AILab/flash-attention/releases/download/v{v}/flash_attn-{v}+cu122torch2.2cxx11abiFALSE-cp311-cp311-linux_x86_64.whl"
    project(
        {
            "requirements.txt": f'flash-attn @ {url.format(v="2.4.2")};platform_system=="Linux"\n'
            f'flash-attn @ {url.format(v="2.5.6")};platform_system=="Linux"\n'
        }
    )
    assert findings(".") == [("requirements.txt", 1, "FAL001", "error")]


# --- a walk that finds nothing (item 7) ------------------------------------------------------------


def test_a_folder_without_dependency_files(project: Any) -> None:
    project({"docs/index.md": "pip install flash-attn==2.4.2\n", "docs/MANIFEST.in": "include x\n"})
    r = run("docs")
    assert r.code == 0 and r.out == "No dependency files found under docs\n"
    assert "All checks passed" not in r.out


def test_problems_of_the_new_readers_are_located(project: Any, tmp_path: Path) -> None:
    project({"tox.ini": "[testenv\ndeps = x\n", "pixi.toml": "[dependencies\n"})
    got = findings(".")
    assert [(p, c) for p, _, c, _ in got] == [("pixi.toml", "FAL900"), ("tox.ini", "FAL900")]
    assert problems(parse("tox", tmp_path / "tox.ini"))
