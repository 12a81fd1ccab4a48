"""The CUDA the machine's driver is declared to provide, where a file says it.

- pixi ``[system-requirements] cuda = "12"``: pixi's ``__cuda`` virtual package, the driver CUDA its
  environments are solved for and need (a feature's own: one of the machines);
- ``CONDA_OVERRIDE_CUDA=12.4`` in force at an install: conda's ``__cuda``, set where the solve runs on a
  machine without that driver (a docker build, CI).

A driver of CUDA major D runs builds of CUDA D.x (minor version compatibility) and older, not D+1.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fa_lint._records import NamedTuple
from fa_lint.model import Setting

_CUDA = re.compile(r"\d+(?:\.\d+)*")  # "12", "12.4": a CUDA version a driver is declared for


def cuda_version(value: str) -> bool:
    """Whether a declared driver value is a CUDA version (not a variable or a word)."""
    return _CUDA.fullmatch(value) is not None


class Driver(NamedTuple):
    cuda: str  # "12", "12.4"
    where: str
    possible: bool

    @property
    def major(self) -> int:
        return int(self.cuda.split(".")[0])


def drivers(settings: Iterable[Setting]) -> tuple[Driver, ...]:
    """pixi's declared driver CUDA among an environment's settings (``CONDA_OVERRIDE_CUDA`` is a build
    variable, read per install step through ``Target.variable``)."""
    return tuple(
        Driver(s.value, f"{s.location} ({s.name}: cuda = {s.value!r})", s.possible)
        for s in settings
        if s.kind == "driver" and cuda_version(s.value)
    )
