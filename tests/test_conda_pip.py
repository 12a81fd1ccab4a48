"""FAL012 on a conda environment file's ``pip:`` list.

Facts, from conda's and pip's own source: ``conda env create`` installs the file's conda packages,
then writes the ``pip:`` list to a requirements file and runs ``python -m pip install -U -r FILE
--exists-action=b`` once (conda/env/installers/pip.py, called from conda/cli/install.py), and writes
the file's ``variables:`` to the environment only after that. pip reads a requirements file with the
options of ``SUPPORTED_OPTIONS`` (pip/_internal/req/req_file.py: no ``--no-build-isolation``) and a
requirement line with ``--hash`` and ``--config-settings`` only; anything else stops it with "no
such option". pip reads every sdist's setup.py before it installs anything of the command, so torch
from the same list is never there when flash-attn builds; a conda ``pytorch`` is. pip >= 25.3
always isolates the build; before it, pip may take the legacy path.
"""

from __future__ import annotations

from typing import Any

from tests.conftest import lint


def _found(project: Any, files: dict[str, str]) -> list[dict[str, Any]]:
    return lint(project, files)


def _codes(findings: list[dict[str, Any]]) -> list[tuple[str, int, str, str]]:
    return sorted((f["path"], f["line"], f["code"], f["severity"]) for f in findings)


def _env(conda: list[str], pip: list[str], extra: str = "") -> str:
    lines = [
        "name: x",
        "dependencies:",
        *(f"  - {c}" for c in conda),
        "  - pip:",
        *(f"    - {p}" for p in pip),
    ]
    return "\n".join(lines) + "\n" + extra


def test_torch_in_the_same_list_is_not_there_when_flash_attn_builds(project: Any) -> None:
    found = _found(
        project, {"environment.yml": _env(["python=3.10", "pip"], ["torch==2.3.0", "flash-attn==2.6.3"])}
    )
    assert _codes(found) == [("environment.yml", 7, "FAL012", "warning")]  # the pip version decides
    (f,) = found
    assert "install it after conda env create, torch first" in f["message"]
    assert any("nothing installs torch before conda's pip step" in n for n in f["notes"])
    assert "conda run -n ENV pip install --no-build-isolation flash-attn" in f["help"]


def test_a_conda_pip_at_25_3_or_later_always_isolates(project: Any) -> None:
    for pip in ("pip>=25.3", "pip=25.3", "pip==26.0.1"):
        found = _found(project, {"environment.yml": _env([pip], ["flash-attn==2.6.3"])})
        assert _codes(found) == [("environment.yml", 5, "FAL012", "error")], pip
    # conda's `pip=24.0` is any 24.0.x: before 25.3, the legacy path may run
    found = _found(project, {"environment.yml": _env(["pip=24.0"], ["flash-attn==2.6.3"])})
    assert _codes(found) == [("environment.yml", 5, "FAL012", "warning")]


def test_a_conda_pytorch_is_installed_before_the_pip_step(project: Any) -> None:
    env = _env(["pytorch=2.3.0", "pip"], ["flash-attn==2.6.3"])
    (f,) = _found(project, {"environment.yml": env})
    assert (f["code"], f["severity"]) == ("FAL012", "warning")
    assert any("conda installs torch before its pip step" in n for n in f["notes"])


def test_a_file_the_list_includes_is_installed_by_that_pip(project: Any) -> None:
    env = _env(["pip>=25.3"], ["-r requirements-gpu.txt"])
    found = _found(project, {"environment.yml": env, "requirements-gpu.txt": "torch\nflash-attn==2.6.3\n"})
    # reported where the environment file runs it, as a Dockerfile's `pip install -r` is
    assert _codes(found) == [("environment.yml", 5, "FAL012", "error")]


def test_the_environment_variables_do_not_reach_pip(project: Any) -> None:
    env = _env(["pip>=25.3"], ["flash-attn==2.6.3"], extra='variables:\n  PIP_NO_BUILD_ISOLATION: "0"\n')
    assert _codes(_found(project, {"environment.yml": env})) == [("environment.yml", 5, "FAL012", "error")]


def test_what_builds_nothing_is_not_reported(project: Any) -> None:
    wheel = (
        "https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
        "flash_attn-2.6.3+cu123torch2.3cxx11abiFALSE-cp310-cp310-linux_x86_64.whl"
    )
    assert _found(project, {"environment.yml": _env(["pip>=25.3"], [wheel])}) == []
    # conda-forge's package is a build: nothing compiles
    assert _found(project, {"environment.yml": _env(["flash-attn=2.6.3", "pip>=25.3"], ["einops"])}) == []


def test_an_option_pip_refuses_in_a_requirements_file_stops_the_pip_step(project: Any) -> None:
    env = _env(["pip"], ["--no-build-isolation", "einops"])
    (f,) = _found(project, {"environment.yml": env})
    assert (f["code"], f["line"]) == ("FAL901", 5)  # the line names no package
    assert "pip takes no '--no-build-isolation' in a requirements file" in f["message"]
    # on the flash-attn line itself it is an error: the requirement is not read, and pip stops there
    (f,) = _found(project, {"environment.yml": _env(["pip"], ["flash-attn==2.6.3 --no-build-isolation"])})
    assert (f["code"], f["line"], f["severity"]) == ("FAL900", 5, "error")


def test_the_options_pip_takes_are_read_as_pip_reads_them(project: Any) -> None:
    pip = [
        "--extra-index https://download.pytorch.org/whl/cu121",  # a prefix optparse completes
        "--pre",
        "-f https://example.org/wheels",
        "--prefer-binary",
        "flash-attn==2.4.2 --hash=sha256:" + "0" * 64,
    ]
    found = _found(project, {"environment.yml": _env(["pip>=25.3"], pip)})
    # no parse problem: the requirement is read past its --hash, and judged (2.4.2 lacks block_table)
    assert [f["code"] for f in found if f["line"] == 9] == ["FAL001", "FAL012"]
    assert not [f for f in found if f["code"] in ("FAL900", "FAL901")]


def test_an_export_without_torch_has_none_when_its_pip_step_runs(project: Any) -> None:
    # `conda env export` lists every package with its build: none of them is torch, so flash-attn's
    # setup.py fails whatever the pip version (isolated: no torch; legacy: the list's torch comes later)
    conda = ["_libgcc_mutex=0.1=main", "python=3.10.14=h955ad1f_0", "setuptools=68.2.2=py310h06a4308_0"]
    (f,) = _found(project, {"environment.yml": _env(conda, ["flash-attn==2.5.7", "torch==2.2.2"])})
    assert (f["code"], f["line"], f["severity"]) == ("FAL012", 7, "error")
    assert f["message"].startswith("flash-attn is built before any torch is installed")
    # a torch package among them (or one that brings it) is there before pip runs: the pip version decides
    for torchy in ("pytorch=2.2.2=py3.10_cuda12.1_cudnn8.9.2_0", "torchvision=0.17.2=py310_cu121"):
        (f,) = _found(project, {"environment.yml": _env([*conda, torchy], ["flash-attn==2.5.7"])})
        assert (f["code"], f["severity"]) == ("FAL012", "warning"), torchy
    # a hand-written file without builds does not list every package: the pip version decides
    (f,) = _found(project, {"environment.yml": _env(["python=3.10", "setuptools"], ["flash-attn==2.5.7"])})
    assert (f["code"], f["severity"]) == ("FAL012", "warning")
