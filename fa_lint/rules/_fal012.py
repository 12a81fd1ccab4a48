"""FAL012's helpers: what builds nothing, what machine has no torch, what a stage installs at which
step (torch, pip, setuptools), and what it says of a conda environment file's ``pip:`` list and of a
build no torch can reach; which builds it judges (flash-attn, and a build of hopper/ as flash-attn-3)."""

from __future__ import annotations

import bisect
import itertools

from fa_lint._records import NamedTuple
from fa_lint.machine import final_torch
from fa_lint.machine.environments import Environment, Sources
from fa_lint.machine.final_torch import TORCH
from fa_lint.model import FA3, FLASH_ATTN, Finding, Kind, Requirement
from fa_lint.rules._base import Context, Memo


def keeps_any(env: Environment, req: Requirement) -> bool:
    """An install pip satisfies with any flash-attn already there: no version, no upgrade, none removed."""
    if req.upgrade or any(u.name == FLASH_ATTN for u in env.removed):
        return False
    return not str(req.specifier) and req.version is None and req.url is None


def wheel(req: Requirement) -> bool:
    """A requirement on a wheel file or URL: nothing builds."""
    return req.url is not None and req.url.split("#", 1)[0].split("?", 1)[0].endswith(".whl")


class WheelSources:
    """Whether the sources of an environment serve a requirement a wheel wherever it installs: a Poetry
    or Pipfile table on one (the requirement itself), or uv sources that apply to it, every one a wheel
    and one without a marker (where none of their markers holds, uv builds the index's sdist). Made
    once per environment, and answered once per extra or group the sources are for."""

    def __init__(self, sources: list[Requirement]) -> None:
        self.table = any(wheel(s) for s in sources if not s.scope.startswith("uv:sources"))
        self.uv = Sources(s for s in sources if s.scope.startswith("uv:sources"))
        self.scopes: dict[str, bool] = {}

    def serve(self, req: Requirement) -> bool:
        if self.table:
            return True
        if req.scope not in self.scopes:
            applying = self.uv.applying(req)
            found = bool(applying) and all(map(wheel, applying)) and not all(s.marker for s in applying)
            self.scopes[req.scope] = found
        return self.scopes[req.scope]


def torchless(env: Environment) -> bool:
    """The machine is known to start without torch: a base image without it, or a conda environment
    whose every package the file lists (an export) with no torch among them."""
    return bool(env.images) and all(i.has_torch is False for i in env.images)


NO_TORCH = (
    "flash-attn has no pyproject.toml and its setup.py imports torch first, so a build that cannot "
    "see the installed torch fails with \"ModuleNotFoundError: No module named 'torch'\""
)


def builds(env: Environment) -> tuple[Requirement, ...]:
    """What FAL012 judges: flash-attn's installs (one a later install replaces still runs, and builds),
    and source builds of flash-attention's hopper/ (FA3), whose setup.py imports torch as flash-attn's
    does: the same ``pip wheel .`` in the clone and in its hopper/ folder is judged alike. An install
    of PyPI's flash-attn-3 (an empty placeholder, FAL022) builds nothing of hopper/."""
    found = (*env.of(FLASH_ATTN), *env.of(FA3), *env.superseded)
    return tuple(r for r in found if r.name == FLASH_ATTN or (r.name == FA3 and r.build))


# hopper/setup.py imports torch at its top (0251105a2fb1:hopper/setup.py:24 `import torch`, the commit
# fa_lint/kb/builds.json's fa3 facts were read at), and hopper/ has no pyproject.toml in that tree
_HOPPER_NO_TORCH = (
    "flash-attention's hopper/ (flash-attn-3) has no pyproject.toml and its setup.py imports torch "
    "first (hopper/setup.py: `import torch`), so a build that cannot see the installed torch fails with "
    "\"ModuleNotFoundError: No module named 'torch'\""
)


def hopper(found: Finding) -> Finding:
    """FAL012 on a build of hopper/: the same judgement, said of flash-attn-3."""
    return found._replace(
        message=found.message.replace("flash-attn ", "flash-attn-3 (hopper/) ", 1),
        notes=tuple(_HOPPER_NO_TORCH if n == NO_TORCH else n for n in found.notes),
        package=FA3,
    )


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


class Stage(NamedTuple):
    """What a stage or script installs at which step, read once for all its flash-attn installs."""

    # (step, True) for each install of torch, (step, False) for each certain uninstall, ascending
    torch: tuple[tuple[int, bool], ...]
    pip: tuple[Requirement, ...]  # installs of pip itself, by step
    setuptools: int | None  # the first step that installs setuptools
    steps: frozenset[int]  # every install or uninstall command with a package fa-lint read
    unread: int  # the first command of none of them: found once, asked for each flash-attn install
    named: frozenset[int] = frozenset()  # the steps that install torch itself, by name

    @classmethod
    def of(cls, env: Environment) -> Stage:
        reqs = sorted((*env.members, *env.superseded), key=lambda r: r.step)
        setuptools = [r.step for r in reqs if r.name == "setuptools"]
        removed = [(u.step, False) for u in env.removed if u.name in TORCH and not u.possible]
        steps = frozenset(s for r in reqs for s in (r.step, r.options.step if r.options else 0)) | {
            u.step for u in env.removed
        }
        return cls(
            # torch itself, or a package that brings it (vllm, xformers, deepspeed...)
            tuple(sorted([*((r.step, True) for r in reqs if final_torch.brings_torch(r)), *removed])),
            tuple(r for r in reqs if r.name == "pip"),
            setuptools[0] if setuptools else None,
            steps,  # a wheel's build command too: installed at a later step, it was read at its own
            next(s for s in itertools.count(1) if s not in steps),
            frozenset(r.step for r in reqs if _named(r)),
        )

    def torch_before(self, step: int, image: bool) -> bool:
        """Whether torch is there when command ``step`` runs: the last torch command before it installs
        it, or there is none and the base image has torch."""
        i = bisect.bisect_left(self.torch, (step, False))
        return self.torch[i - 1][1] if i else image

    def torch_gone_before(self, step: int) -> bool:
        """Whether the last torch command before ``step`` surely uninstalls it."""
        i = bisect.bisect_left(self.torch, (step, False))
        return bool(i) and not self.torch[i - 1][1]

    def torch_named_at_or_after(self, step: int) -> bool:
        """Whether this command or a later one installs torch by name (and none before ``step`` did):
        the script expects none there yet. A package that only requires torch (liger-kernel, vllm)
        says nothing of it: pip keeps a torch in place that it accepts."""
        return any(s >= step for s in self.named)

    def torch_at(self, step: int) -> bool:
        return (step, True) in self.torch

    def opaque_before(self, step: int) -> bool:
        """An earlier install command fa-lint read nothing from (``pip install -e .``, a ``-r`` file
        it cannot see, another stage's): it may have installed torch."""
        return self.unread < step

    def pip_before(self, step: int) -> Requirement | None:
        i = bisect.bisect_left([r.step for r in self.pip], step)
        return self.pip[i - 1] if i else None


# A project's own metadata (``pip install -e .`` reads its ``[project] dependencies`` or
# ``install_requires``): its torch is what the project requires, as liger-kernel's is, not a torch the
# command asks for. pip's default upgrade strategy (only-if-needed) keeps a torch in place that the
# requirement admits, so it says nothing of whether one is there.
_PROJECT_METADATA = frozenset({"pyproject", "setup.py", "setup.cfg"})


def _named(r: Requirement) -> bool:
    """An install that asks for torch itself: in the command or a file of requirements it names."""
    return r.name in TORCH and r.kind in (Kind.INSTALL, Kind.OVERRIDE) and r.source not in _PROJECT_METADATA


def stage_of(ctx: Context, env: Environment) -> Stage:
    found = _STAGES.of(ctx)
    if env not in found:
        found[env] = Stage.of(env)
    return found[env]


_STAGES: Memo[Environment, Stage] = Memo()
