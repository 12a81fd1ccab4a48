"""The real paged attention call, on a GPU host with flash-attn installed. Skipped elsewhere."""

from __future__ import annotations

import importlib.util
import io
import json
import sys

import pytest

from fa_lint.cli import main


def _has_cuda_and_flash_attn() -> bool:
    try:
        import torch
    except ImportError:
        return False
    installed = any(importlib.util.find_spec(m) for m in ("flash_attn", "flash_attn_interface"))
    return bool(torch.cuda.is_available() and installed)


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not _has_cuda_and_flash_attn(), reason="needs CUDA and an installed flash-attn"),
]


@pytest.mark.parametrize("page_size", [256, 512])
def test_paged_call_matches_the_reference(page_size: int) -> None:
    out = io.StringIO()
    code = main(
        [
            "verify",
            "--python",
            sys.executable,
            "--require-gpu",
            "--page-size",
            str(page_size),
            "--format",
            "json",
        ],
        out=out,
        err=io.StringIO(),
    )
    checks = {c["id"]: c for c in json.loads(out.getvalue())["checks"]}
    kernel = checks["kernel"]
    assert kernel["status"] == "pass", kernel
    # flash_attn_with_kvcache appends the new token itself; FA4's varlen entry point only reads the cache
    varlen = "flash_attn_varlen_func" in checks["signature"]["reason"]
    for result in kernel["details"]["results"]:
        assert result["max_abs_error"] <= result["tolerance"]
        assert result["cache_appended"] is (None if varlen else True)
    assert code == 0
