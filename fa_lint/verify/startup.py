"""The signature check a server runs in its own process at startup, before it accepts traffic.

``fa-lint verify`` is the full proof (a subprocess per step, the paged call on the GPU); this is the
part a server can afford on every start: no subprocess, no GPU, and by default no import of torch or
flash_attn either. Importing this module costs the standard library only::

    from fa_lint.verify.startup import check_paged_kernel
    check_paged_kernel()                      # raises PagedKernelError naming the fix
    check_paged_kernel(get_kernel("org/repo", version=1))   # the kernel transformers will be given
    if not paged_kernel_ok(): ...             # the boolean form

It answers whether the ``flash_attn_with_kvcache`` the paged path will call takes a ``block_table`` or
a ``page_table``: the check transformers 5.4-5.18 make at the first decode step (``ValueError``), and
the one 5.19 and later skip, dropping the block table and decoding wrong (docs/verify.md).
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

from fa_lint.verify.probe import FLASH_DISTRIBUTIONS, KVCACHE, _distribution, _interface_file, function_params

PAGED = ("block_table", "page_table")
FIX = "install flash-attn>=2.5.0 (block_table), or flash-attn-3 (page_table)"


class PagedKernelError(RuntimeError):
    """The kernel the paged path would call cannot take a block table; the message names the fix."""


def check_paged_kernel(kernel: Any = None) -> str:
    """Raise ``PagedKernelError`` unless the ``flash_attn_with_kvcache`` the paged path would call takes
    ``block_table`` or ``page_table``; return what was checked, for a startup log line.

    ``kernel`` is what the server gives transformers: a module or object with a
    ``flash_attn_with_kvcache`` (a Hub kernel from ``kernels.get_kernel``, ``flash_attn`` itself) or the
    function. Without one, the installed flash-attn (or FA3) is read from its source with ``ast``,
    unless the process has imported it already, when the loaded function is what counts (a module put
    in its place in ``sys.modules`` is then what is checked).
    """
    if kernel is None:
        return _installed()
    function = kernel if callable(kernel) and not inspect.ismodule(kernel) else getattr(kernel, KVCACHE, None)
    name = getattr(kernel, "__name__", type(kernel).__name__)
    if function is None:
        raise PagedKernelError(f"{name} has no {KVCACHE}: the paged path cannot run on it; {FIX}")
    return _judge(f"{name}.{KVCACHE}" if function is not kernel else name, _params(function))


def paged_kernel_ok(kernel: Any = None) -> bool:
    """``check_paged_kernel`` as a boolean: True when the paged path's kernel takes a block table."""
    try:
        check_paged_kernel(kernel)
    except PagedKernelError:
        return False
    return True


def _params(function: Any) -> list[str] | None:
    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):  # a builtin without a signature: nothing to judge by
        return None


def _judge(what: str, params: list[str] | None) -> str:
    if params is None:
        return f"{what}: no signature to read; run `fa-lint verify` for the full check"
    if not any(p in params for p in PAGED):
        raise PagedKernelError(
            f"{what} takes neither block_table nor page_table: transformers' paged path raises "
            "ValueError at the first decode step (5.4-5.18) or decodes the paged cache as if it were "
            f"contiguous (5.19 and later); {FIX}"
        )
    return f"{what} takes {', '.join(p for p in PAGED if p in params)}"


def _installed() -> str:
    loaded = sys.modules.get("flash_attn")
    if loaded is not None:
        return check_paged_kernel(loaded)
    for dist_name in ("flash-attn", "flash_attn_3"):
        module, candidates = FLASH_DISTRIBUTIONS[dist_name]
        dist = _distribution(dist_name)
        if dist is None:
            continue
        path = _interface_file(dist, candidates)
        if path is None:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                params = function_params(f.read()).get(KVCACHE)
        except (OSError, SyntaxError, ValueError):
            params = None
        version = dist.metadata["Version"]
        if params is None:
            raise PagedKernelError(f"{dist_name} {version} has no {KVCACHE} in {path}; {FIX}")
        return _judge(f"{dist_name} {version} ({module}.{KVCACHE})", params)
    raise PagedKernelError(f"no flash-attn distribution is installed; {FIX}")


__all__ = ["PagedKernelError", "check_paged_kernel", "paged_kernel_ok"]
