"""FAL015: an install of flash-attn whose setup.py cannot succeed with the stage's CUDA toolkit.

flash-attn's setup.py builds its ``CUDAExtension`` as it is read, before any command runs (every tag,
``fa_lint/kb/builds.json`` ``extension``), and torch's ``CUDAExtension`` asks for CUDA_HOME's library
folder there (``_join_cuda_home``: "CUDA_HOME environment variable is not set"); with a CUDA_HOME but
no nvcc, setup.py's own ``nvcc -V`` fails. So installing flash-attn from its sdist needs nvcc even when
setup.py goes on to download a prebuilt wheel. Then:

- nvcc below the release's floor: setup.py raises ("FlashAttention is only supported on CUDA 11.7 and
  above");
- a compile (no wheel fits, ``FLASH_ATTENTION_FORCE_BUILD``, a source build) with an nvcc whose major
  differs from torch's CUDA: torch's ``_check_cuda_version`` raises; a different minor only warns.

Without ``MAX_JOBS``, tags before 2.5.4 leave the job count to ninja (one job per core and more, each
several GB), so the note says so on a compile.
"""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.machine import toolchain
from fa_lint.model import CONDA_NVCC, SUBDIRECTORIES, Finding, Severity
from fa_lint.rules._base import Context, Rule

BUILD_TOOLCHAIN = Rule(
    "FAL015",
    "build-toolchain",
    Severity.ERROR,
    "flash-attn's setup.py runs where it cannot succeed: no nvcc in the stage, an nvcc below the "
    "release's floor, one whose CUDA major differs from torch's, or more compile jobs than the "
    "machine's memory holds.",
    also=(Severity.WARNING,),  # an nvcc of another CUDA minor than torch's (torch only warns)
)
RULES = (BUILD_TOOLCHAIN,)
PACKAGES = frozenset(SUBDIRECTORIES.values()) | toolchain.PACKAGES | CONDA_NVCC


def check(ctx: Context) -> Iterator[Finding]:
    if not (ctx.settings or any(r.name in CONDA_NVCC for r in ctx.requirements)):
        return  # nothing read about toolkits: the checks and their knowledge stay unimported
    from fa_lint.rules import _nvcc

    yield from _nvcc.check(ctx, BUILD_TOOLCHAIN)
