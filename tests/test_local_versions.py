"""Issue 22, item 4: a lock compared with its manifest as PEP 440 compares versions, local labels too.

Custom indexes publish builds with local labels (``flash-attn==2.8.3+cu.13.0.torch.2.11``). PEP 440
("Local version identifiers"): a specifier without a local label matches every local build of its
version; one with a label matches that build only; ``<V``, ``>V`` and ``!=V`` never admit a local
build of V itself. packaging.specifiers implements exactly this; each expectation below is judged
from those rules, in every lock format fa-lint pairs with a manifest.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import run

BUILD = "2.8.3+cu.13.0.torch.2.11"


def wheel(version: str) -> str:
    return f"https://example.org/simple/flash-attn/flash_attn-{version}-cp312-cp312-linux_x86_64.whl"


def _pep621(spec: str) -> str:
    return f'[project]\nname = "x"\nversion = "0"\nrequires-python = ">=3.12"\ndependencies = ["flash-attn{spec}"]\n'


def uv(spec: str, locked: str) -> dict[str, str]:
    lock = (
        'version = 1\nrequires-python = ">=3.12"\n\n[[package]]\nname = "flash-attn"\n'
        f'version = "{locked}"\nsource = {{ registry = "https://example.org/simple" }}\n'
    )
    return {"pyproject.toml": _pep621(spec), "uv.lock": lock}


def poetry(spec: str, locked: str) -> dict[str, str]:
    manifest = f'[tool.poetry.dependencies]\npython = "^3.12"\nflash-attn = "{spec}"\n'
    return {
        "pyproject.toml": manifest,
        "poetry.lock": f'[[package]]\nname = "flash-attn"\nversion = "{locked}"\n',
    }


def pipenv(spec: str, locked: str) -> dict[str, str]:
    lock = json.dumps({"default": {"flash-attn": {"version": f"=={locked}"}}, "develop": {}})
    return {"Pipfile": f'[packages]\nflash-attn = "{spec}"\n', "Pipfile.lock": lock}


def pdm(spec: str, locked: str) -> dict[str, str]:
    lock = (
        '[metadata]\ngroups = ["default"]\n\n[[package]]\nname = "flash-attn"\n'
        f'version = "{locked}"\ngroups = ["default"]\n'
    )
    return {"pyproject.toml": _pep621(spec), "pdm.lock": lock}


def pylock(spec: str, locked: str) -> dict[str, str]:
    lock = (
        'lock-version = "1.0"\ncreated-by = "x"\n\n[[packages]]\nname = "flash-attn"\n'
        f'version = "{locked}"\nwheels = [{{ url = "{wheel(locked)}", hashes = {{sha256 = "bb"}} }}]\n'
    )
    return {"pyproject.toml": _pep621(spec), "pylock.toml": lock}


def pixi(spec: str, locked: str) -> dict[str, str]:
    manifest = f'[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n\n[pypi-dependencies]\nflash-attn = "{spec}"\n'
    lock = (
        "version: 6\nenvironments:\n  default:\n    channels:\n    - url: https://conda.anaconda.org/conda-forge/\n"
        f"    packages:\n      linux-64:\n      - pypi: {wheel(locked)}\npackages:\n- pypi: {wheel(locked)}\n"
        f"  name: flash-attn\n  version: {locked}\n"
    )
    return {"pixi.toml": manifest, "pixi.lock": lock}


def conda_lock(spec: str, locked: str) -> dict[str, str]:
    env = f"name: x\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.12\n  - pip:\n    - flash-attn{spec}\n"
    lock = (
        "version: 1\nmetadata:\n  platforms:\n  - linux-64\n  sources:\n  - environment.yml\npackage:\n"
        f"  - name: flash-attn\n    version: {locked}\n    manager: pip\n    platform: linux-64\n"
        f"    url: {wheel(locked)}\n    category: main\n    optional: false\n"
    )
    return {"environment.yml": env, "conda-lock.yml": lock}


FORMATS: dict[str, tuple[Callable[[str, str], dict[str, str]], str]] = {
    # format -> (files, the lock's name)
    "uv": (uv, "uv.lock"),
    "poetry": (poetry, "poetry.lock"),
    "pipenv": (pipenv, "Pipfile.lock"),
    "pdm": (pdm, "pdm.lock"),
    "pylock": (pylock, "pylock.toml"),
    "pixi": (pixi, "pixi.lock"),
    "conda-lock": (conda_lock, "conda-lock.yml"),
}

# (manifest specifier, locked version, stale?) as PEP 440 matches them
CASES = [
    (f"=={BUILD}", BUILD, False),  # the very build
    ("==2.8.3", BUILD, False),  # a public specifier ignores the candidate's label
    (">=2.8", BUILD, False),
    ("<=2.8.3", BUILD, False),
    ("==2.8.3+cu12", BUILD, True),  # another build of 2.8.3
    (f"=={BUILD}", "2.8.3", True),  # the manifest asks for the build, the lock holds the plain release
    ("<2.8.3", BUILD, True),  # no local build of V is below V
    ("!=2.8.3", BUILD, True),  # and != V excludes them all
]


def _stale(files: dict[str, str], project: Any) -> list[tuple[str, str]]:
    project(files)
    found = run("--format", "json", "--isolated", ".").json["findings"]
    return [(f["path"], f["admitted"][0]) for f in found if f["code"] == "FAL006"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("spec", "locked", "stale"), CASES)
def test_lock_and_manifest_compare_local_labels(
    fmt: str, spec: str, locked: str, stale: bool, project: Any
) -> None:
    make, lock = FORMATS[fmt]
    written = spec.removeprefix("==") if fmt == "poetry" and spec.startswith("==") else spec
    assert _stale(make(written, locked), project) == ([(lock, locked)] if stale else [])


@pytest.mark.parametrize("fmt", ["uv", "pdm", "pylock", "conda-lock"])
@pytest.mark.parametrize(
    ("locked", "stale"),
    [("2.8.3+cu12torch2.8cxx11abifalse", False), ("2.8.3+cu12torch2.4cxx11abifalse", True)],
)
def test_a_wheel_url_in_the_manifest_keeps_its_label(
    fmt: str, locked: str, stale: bool, project: Any
) -> None:
    # the wheel's file name says 2.8.3+cu12torch2.8cxx11abiFALSE (normalised to lower case): a lock
    # holding the wheel built for torch 2.4 is another build, and stale
    url = (
        " @ https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/"
        "flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl"
    )
    make, lock = FORMATS[fmt]
    assert _stale(make(url, locked), project) == ([(lock, locked)] if stale else [])


def test_the_headline_names_the_locked_build(project: Any) -> None:
    project(uv("==2.8.3+cu12", BUILD))
    (f,) = [f for f in run("--format", "json", "--isolated", ".").json["findings"] if f["code"] == "FAL006"]
    assert f"flash-attn {BUILD}, which the manifest no longer admits" in f["message"]


@pytest.mark.parametrize("fmt", ["uv", "poetry"])
def test_a_pinned_local_build_is_a_wheel_not_an_isolated_build(fmt: str, project: Any) -> None:
    # PyPI refuses uploads with local versions; the indexes that carry 2.8.3+cu.13.0.torch.2.11 carry
    # wheels, so uv and Poetry install one and build nothing: no FAL012 (an unlabelled pin still gets it)
    make, _ = FORMATS[fmt]
    project(make(f"=={BUILD}" if fmt == "uv" else BUILD, BUILD))
    assert [f["code"] for f in run("--format", "json", "--isolated", ".").json["findings"]] == []
    project(make("==2.8.3" if fmt == "uv" else "2.8.3", "2.8.3"))
    assert "FAL012" in [f["code"] for f in run("--format", "json", "--isolated", ".").json["findings"]]


def _sourced(sources: str, locked: list[tuple[str, str]]) -> dict[str, str]:
    manifest = _pep621(">=2.8.3") + f"\n[tool.uv.sources]\nflash-attn = {sources}\n"
    entries = "".join(
        f'\n[[package]]\nname = "flash-attn"\nversion = "{v}"\nsource = {source}\n' for v, source in locked
    )
    return {"pyproject.toml": manifest, "uv.lock": f'version = 1\nrequires-python = ">=3.12"\n{entries}'}


CU128 = "https://example.org/flash_attn-2.8.3+cu128torch2.10-cp312-cp312-linux_x86_64.whl"
CU130 = "https://example.org/flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl"


def test_a_list_of_sources_is_alternatives(project: Any) -> None:
    # uv takes each source under its own group (or marker, or extra), and the index where none
    # applies: a lock holding both builds and a release from the index is what the manifest says
    sources = f'[{{ url = "{CU128}", group = "cuda12" }}, {{ url = "{CU130}", group = "cuda13" }}]'
    locked = [
        ("2.8.3+cu128torch2.10", f'{{ url = "{CU128}" }}'),
        ("2.8.3+cu130torch2.10", f'{{ url = "{CU130}" }}'),
        ("2.8.3.post1", '{ registry = "https://pypi.org/simple" }'),
    ]
    assert _stale(_sourced(sources, locked), project) == []


def test_one_source_binds_the_lock_to_its_build(project: Any) -> None:
    locked = [("2.8.3+cu130torch2.10", f'{{ url = "{CU130}" }}')]
    assert _stale(_sourced(f'{{ url = "{CU128}" }}', locked), project) == [
        ("uv.lock", "2.8.3+cu130torch2.10")
    ]
    assert _stale(_sourced(f'{{ url = "{CU130}" }}', locked), project) == []
