"""What FAL012 says of a conda environment file's ``pip:`` list, and of a build no torch can reach."""

from __future__ import annotations

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
