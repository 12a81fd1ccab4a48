"""Issue 22, item 8: valid conda MatchSpecs never get FAL901; what is not flash-attn is skipped.

conda's MatchSpec (conda's own docs, "Package match specifications"): ``name``, then a version
spec, then a build string, written ``name=version=build``, ``name==version=build`` or
``name version build``, with an optional ``channel::`` (or ``channel/subdir::``) and a
``[key=value]`` bracket. conda's versions are not PEP 440's: ``1.1.1w`` (openssl), ``2023c``
(tzdata), ``1.1.alpha19`` (pplacer, prefix-matched by ``=``) are all valid conda. ``conda env
export`` writes such lines; ``conda list --export`` writes them one a line under
``# $ conda create --name <env> --file <this file>``, ``conda list --explicit`` package URLs under
``@EXPLICIT``.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import lint, run

VALID_OTHERS = [
    "pplacer=1.1.alpha19=h9ee0642_2",
    "bioconda::pplacer==1.1.alpha19=h9ee0642_2",
    "pplacer 1.1.alpha19 h9ee0642_2",
    "openssl=1.1.1w=h7f8727e_0",
    "tzdata=2023c=h04d1e81_0",
    "_libgcc_mutex=0.1=conda_forge",
    "libgcc-ng=11.2.0=h1234567_1",
    "python=3.10.13=hd12c33a_0_cpython",
    "pytorch=2.1.0=py3.10_cuda12.1_cudnn8.9.2_0",
    "conda-forge/linux-64::cudatoolkit=11.8.0",
    "numpy[version='>=1.20,<2',build=py*]",
    "ca-certificates",
]


def _found(project: Any, files: dict[str, str]) -> list[tuple[str, int, str]]:
    return [(f["code"], f["line"], f["severity"]) for f in lint(project, files)]


@pytest.mark.parametrize("spec", VALID_OTHERS)
def test_a_valid_spec_of_another_package_is_skipped_silently(spec: str, project: Any) -> None:
    env = f'name: x\nchannels:\n  - conda-forge\ndependencies:\n  - "{spec}"\n'
    assert _found(project, {"environment.yml": env}) == []


def test_an_exported_environment_judges_only_flash_attn(project: Any) -> None:
    env = (
        "name: x\ndependencies:\n"
        + "".join(f'  - "{s}"\n' for s in VALID_OTHERS)
        + ("  - flash-attn=2.3.6=py310h1234567_0\n  - pip:\n    - flash-attn==2.6.3\n")
    )
    # the conda build 2.3.6 lacks block_table (FAL001); pip's 2.6.3 replaces it, and has it, but
    # conda's pip step builds it from the sdist, isolated or not as its pip version decides (FAL012)
    assert _found(project, {"environment.yml": env}) == [
        ("FAL001", 3 + len(VALID_OTHERS), "error"),
        ("FAL012", 5 + len(VALID_OTHERS), "warning"),
    ]


def test_invalid_syntax_still_says_so(project: Any) -> None:
    env = "name: x\ndependencies:\n  - 'numpy >=1.0 (oops'\n  - 'flash-attn=2.x.y=h1'\n"
    found = _found(project, {"environment.yml": env})
    assert ("FAL900", 4, "error") in found  # flash-attn, unreadable: not judged, so said


def test_a_conda_list_export_is_a_conda_spec_file(project: Any) -> None:
    text = (
        "# This file may be used to create an environment using:\n"
        "# $ conda create --name <env> --file <this file>\n# platform: linux-64\n"
        "_libgcc_mutex=0.1=main\npplacer=1.1.alpha19=h9ee0642_2\nopenssl=1.1.1w=h7f8727e_0\n"
        "flash-attn=2.3.6=pypi_0\ntorch=2.1.0=pypi_0\n"
    )
    assert _found(project, {"requirements.txt": text}) == [("FAL001", 7, "error")]


def test_a_conda_list_explicit_file(project: Any) -> None:
    text = (
        "# This file may be used to create an environment using:\n"
        "# $ conda create --name <env> --file <this file>\n# platform: linux-64\n@EXPLICIT\n"
        "https://conda.anaconda.org/conda-forge/linux-64/_libgcc_mutex-0.1-conda_forge.tar.bz2\n"
        "https://conda.anaconda.org/bioconda/linux-64/pplacer-1.1.alpha19-h9ee0642_2.tar.bz2\n"
        "https://conda.anaconda.org/conda-forge/linux-64/flash-attn-2.4.2-py311h0123456_0.conda#abc\n"
        "https://conda.anaconda.org/conda-forge/linux-64/flash-attn-2.6.3-py311h0123456_0.conda\n"
    )
    project({"requirements.txt": text})
    out = run("--format", "json", "--isolated", ".").json["findings"]
    assert [(f["code"], f["line"], f["fix"]) for f in out] == [("FAL001", 7, None)]  # a URL: no edit


def test_pip_requirements_are_still_pip(project: Any) -> None:
    # the conda header is what tells the formats apart, not the "=" (pip refuses flash-attn=2.6.3)
    assert [c for c, *_ in _found(project, {"requirements.txt": "flash-attn=2.6.3\n"})] == ["FAL900"]


def test_pixi_conda_dependencies_with_conda_versions(project: Any) -> None:
    pixi = '[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n\n[dependencies]\nopenssl = "1.1.1w"\ntzdata = "2023c"\n'
    assert _found(project, {"pixi.toml": pixi}) == []
