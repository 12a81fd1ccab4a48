"""FAL014 where a file declares the machine's driver CUDA (pixi ``[system-requirements] cuda``, conda's
``CONDA_OVERRIDE_CUDA``) and torch (with the flash-attn built for it) needs a newer CUDA major.

setup.py fetches the flash-attn wheel of torch's CUDA major, and a source build links torch's CUDA
runtime: both need a driver of that major or later. A driver declared for CUDA 12 does not run a CUDA
13 torch or flash-attn ("CUDA driver version is insufficient for CUDA runtime version").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fa_lint.machine.driver import Driver, cuda_version
from fa_lint.model import FA3, FLASH_ATTN, Finding, Kind, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._installs import Install, installs


def check(ctx: Context, unsupported: Rule) -> Iterator[Finding]:
    """``unsupported``: FAL014's rule, handed in by rules.platform (which imports this module)."""
    for inst in installs(ctx):
        if inst.req.name not in (FLASH_ATTN, FA3) or inst.req.kind is Kind.LOCK:
            continue
        found = _judge(inst, unsupported)
        if found is not None:
            yield found


def _declared(inst: Install) -> list[Driver]:
    out = list(inst.target.drivers)
    override = inst.target.variable("CONDA_OVERRIDE_CUDA", inst.step)
    if override is not None and cuda_version(override.value):
        out.append(Driver(override.value, f"{override.where} (CONDA_OVERRIDE_CUDA={override.value})", False))
    return out


def _judge(inst: Install, unsupported: Rule) -> Finding | None:
    cuda = inst.tools.cuda
    if cuda is None or not re.match(r"^\d+\.\d+", cuda.value):
        return None  # torch's CUDA not known (or a CPU/ROCm build): nothing to compare
    major = int(cuda.value.split(".")[0])
    below = [d for d in _declared(inst) if d.major < major]
    if not below:
        return None
    d = below[0]
    return unsupported.finding(
        inst.req.location,
        f"torch here is a CUDA {cuda.value} build, newer than the CUDA {d.cuda} driver the files declare: "
        f"{inst.req.name} built for it needs a CUDA {major} driver",
        severity=Severity.WARNING,
        **inst.fields,
        notes=(
            f"the driver: CUDA {d.cuda}, declared at {d.where}",
            f"torch's CUDA: {cuda.value}, from {cuda.where}; setup.py fetches the flash-attn wheel of that "
            "CUDA major (a source build links the same runtime)",
            f"a CUDA {d.major} driver runs CUDA {d.major}.x builds and older, not CUDA {major}: 'CUDA driver "
            "version is insufficient for CUDA runtime version'",
        ),
        help=f"install torch's CUDA {d.major} build (an index such as download.pytorch.org/whl/cu12x), or "
        f"declare the CUDA {major} driver the machine has",
    )
