"""FAL013: flash-attn that cannot run on a GPU its files target.

Three ways it fails, each read from the release's own source (``fa_lint/kb/builds.json``):

- the kvcache entry point refuses the GPU (``TORCH_CHECK(is_sm90 || is_sm8x, "FlashAttention only
  supports Ampere GPUs or newer.")``): FA2 below compute capability 8.0 always, and before 2.7.3 any GPU
  that is neither 8.x nor 9.0;
- no kernel for it was compiled: the release wheel's CUDA build, or a source build's
  ``FLASH_ATTN_CUDA_ARCHS``/nvcc, left the GPU's arch out ("no kernel image is available for
  execution on the device"); kernels for sm_XY run on X.Z with Z >= Y only;
- FA3 (``flash-attn-3``: sm_90a and sm_80 kernels) or flash-attn-4 (the majors its forward accepts)
  off the GPUs they support.
"""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.machine import toolchain
from fa_lint.model import CONDA_NVCC, SUBDIRECTORIES, Finding, Severity
from fa_lint.rules._base import Context, Rule

GPU_ARCH_UNSUPPORTED = Rule(
    "FAL013",
    "gpu-arch-unsupported",
    Severity.ERROR,
    "flash-attn cannot run on a GPU the files target: the release refuses its compute capability, or "
    "no kernel for its architecture was compiled.",
    # one of several GPUs, a branch, a manifest elsewhere in the repository; a GPU name it cannot judge
    also=(Severity.WARNING, Severity.INFO),
)
RULES = (GPU_ARCH_UNSUPPORTED,)
PACKAGES = frozenset(SUBDIRECTORIES.values()) | toolchain.PACKAGES | CONDA_NVCC


def check(ctx: Context) -> Iterator[Finding]:
    if not ctx.settings:
        return  # nothing read about the GPUs the files target: the checks and their knowledge stay unimported
    from fa_lint.rules import _gpu, _rocm

    yield from _gpu.check(ctx, GPU_ARCH_UNSUPPORTED)
    yield from _rocm.check(ctx, GPU_ARCH_UNSUPPORTED)  # a ROCm build's archs (kb/rocm.json)
    if ctx.uses:
        from fa_lint.rules import _backend

        yield from _backend.check(ctx, GPU_ARCH_UNSUPPORTED)  # a server's fa3/fa4 backend flag
