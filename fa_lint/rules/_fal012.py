"""FAL012's helpers: what builds nothing, what machine has no torch, and what it says of a conda
environment file's ``pip:`` list and of a build no torch can reach."""

from __future__ import annotations

from fa_lint.environments import Environment, source_applies
from fa_lint.model import Requirement


def wheel(req: Requirement) -> bool:
    """A requirement on a wheel file or URL: nothing builds."""
    return req.url is not None and req.url.split("#", 1)[0].split("?", 1)[0].endswith(".whl")


def wheel_sources(req: Requirement, sources: list[Requirement]) -> bool:
    """Whether the sources of an environment serve ``req`` a wheel wherever it installs: a Poetry or
    Pipfile table on one (the requirement itself), or uv sources that apply to it, every one a wheel
    and one without a marker (where none of their markers holds, uv builds the index's sdist)."""
    if any(wheel(s) for s in sources if not s.scope.startswith("uv:sources")):
        return True
    applying = [s for s in sources if s.scope.startswith("uv:sources") and source_applies(s, req)]
    return bool(applying) and all(map(wheel, applying)) and not all(s.marker for s in applying)


def torchless(env: Environment) -> bool:
    """The machine is known to start without torch: a base image without it, or a conda environment
    whose every package the file lists (an export) with no torch among them."""
    return bool(env.images) and all(i.has_torch is False for i in env.images)


# A conda environment file's pip: list (its scope, fa_lint.sources.conda): conda env create runs one
# `python -m pip install -U -r FILE` over it after its own packages (conda/env/installers/pip.py),
# and sets the file's variables: only after that (conda/cli/install.py).
CONDA_PIP = "pip"
CONDA_PIP_STEP = (
    "conda env create runs one 'pip install -U -r' over the pip: list, after its own packages: no "
    "--no-build-isolation can be given there (pip refuses it in a requirements file), the file's "
    "variables: are set only after pip has run, and torch from the same list is not installed yet when "
    "flash-attn builds"
)
NONE_BEFORE = (
    "no torch is installed before this command, and the machine has none (its base image, or the "
    "conda packages an environment export lists): pip reads flash-attn's "
    "setup.py before it installs anything the command asks for, so the legacy, non-isolated build "
    "fails as the isolated one does"
)
CONDA_TORCH = "conda installs torch before its pip step: a legacy, non-isolated build would see it"
CONDA_NO_TORCH = (
    "nothing installs torch before conda's pip step, so the build fails isolated or not (unless a "
    "conda package brings pytorch with it)"
)
CONDA_FIX = (
    "leave flash-attn out of the pip: list and install it once the environment exists, after torch: "
    "'conda run -n ENV pip install --no-build-isolation flash-attn'; or take conda-forge's flash-attn "
    "package, or a release wheel URL"
)


def conda_pip_step(notes: tuple[str, ...], torch_before: bool) -> tuple[str, str, tuple[str, ...]]:
    """The action, the help and the notes of FAL012 on a conda environment file's ``pip:`` list."""
    seen = CONDA_TORCH if torch_before else CONDA_NO_TORCH
    told = (*notes, CONDA_PIP_STEP) + (() if NONE_BEFORE in notes else (seen,))
    return "install it after conda env create, torch first", CONDA_FIX, told
