"""FAL014: flash-attn where it cannot import or install: a wheel built on a newer glibc than the
machine's, a musl machine, or a Windows or macOS target.

flash-attn's release wheels are tagged ``linux_x86_64``, not manylinux (``publish.yml`` builds them on
a GitHub runner, ``get_platform()`` names them), so pip installs one on any x86_64 Linux and the import
fails where the C library is older than the runner's: ``GLIBC_2.32 not found (required by
.../flash_attn_2_cuda...so)``. There are no Windows or macOS wheels, and setup.py's build needs CUDA's
nvcc on Linux or Windows; a project that installs flash-attn there without a ``sys_platform ==
"linux"`` marker fails to install.
"""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.machine import toolchain
from fa_lint.model import SUBDIRECTORIES, Finding, Severity
from fa_lint.rules._base import Context, Rule

PLATFORM_UNSUPPORTED = Rule(
    "FAL014",
    "platform-unsupported",
    Severity.ERROR,
    "flash-attn installs where it cannot import or build: a prebuilt wheel built on a newer glibc than "
    "the machine has, a Windows or macOS target, an x86_64 wheel on an Arm host, or a driver older than "
    "torch's CUDA.",
    # a declared platform, a Windows job with a toolkit, a glibc above the reported one, a declared
    # driver older than torch's CUDA; an x86_64 wheel on a host that may be Arm
    also=(Severity.WARNING,),
)
RULES = (PLATFORM_UNSUPPORTED,)
PACKAGES = frozenset(SUBDIRECTORIES.values()) | toolchain.PACKAGES


def check(ctx: Context) -> Iterator[Finding]:
    if not ctx.settings and not any(r.marker and "platform_machine" in r.marker for r in ctx.requirements):
        return  # nothing read about platforms and C libraries: the checks and their knowledge stay unimported
    from fa_lint.rules import _arm, _driver, _platform

    yield from _platform.check(ctx, PLATFORM_UNSUPPORTED)
    yield from _arm.check(ctx, PLATFORM_UNSUPPORTED)
    yield from _driver.check(ctx, PLATFORM_UNSUPPORTED)
