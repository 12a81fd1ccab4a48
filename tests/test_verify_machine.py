"""verify against the GPU and the C library: before the paged call, the GPU's compute capability
against the release's own check and the archs its wheel carries; an import that fails with
``GLIBC_x not found`` named for what it is. Fake probes: no GPU is needed."""

from __future__ import annotations

from typing import Any

from fa_lint.verify import machine
from fa_lint.verify.checks import Outcome, Target, Verification

RESULT = {
    "results": [
        {"dtype": "bf16", "max_abs_error": 1e-3, "tolerance": 2e-2, "cache_appended": True, "ms": 0.1}
    ],
    "device": "GPU",
}


def kernel(version: str, cc: list[int], origin: str | None = None, cuda: str = "12.4") -> Any:
    calls: list[str] = []

    def fake(step: str, args: dict[str, Any] | None = None, timeout: float | None = None) -> Outcome:
        calls.append(step)
        if step == "torch":
            return Outcome(True, {"version": "2.6.0", "cuda": cuda, "cuda_available": True, "capability": cc})
        return Outcome(True, RESULT)

    v = Verification(probe=fake)  # type: ignore[arg-type]
    v.probe.timeout = 1  # type: ignore[attr-defined]
    v.state.update(
        target=Target("flash-attn", version, "flash_attn", "flash_attn_with_kvcache", "block_table"),
        runtime_key="block_table",
        origin=origin,
    )
    return v.kernel(), calls


def test_a_gpu_below_the_floor_fails_before_the_call() -> None:
    # v2.8.3 flash_api.cpp: TORCH_CHECK(is_sm8x_min, "FlashAttention only supports Ampere GPUs or newer.")
    check, calls = kernel("2.8.3", [7, 5])
    assert check.status == "fail" and "refuses compute capability 7.5" in check.reason
    assert "8.0 (Ampere) or newer" in check.reason
    assert calls == ["torch"]  # the paged call is not made


def test_blackwell_with_a_release_that_refuses_it() -> None:
    check, _ = kernel("2.6.3", [10, 0])  # TORCH_CHECK(is_sm90 || is_sm8x, ...)
    assert check.status == "fail" and "refuses compute capability 10.0" in check.reason


def test_a_release_wheel_without_the_gpus_kernels() -> None:
    # 2.7.4.post1's wheels were built with CUDA 12.4.1: sm_80 and sm_90 only
    check, calls = kernel("2.7.4.post1", [12, 0], origin="release-wheel")
    assert check.status == "fail" and "carries sm_80, sm_90" in check.reason
    assert "no kernel for 12.0" in check.reason and "kernel" not in calls


def test_a_release_wheel_that_runs_says_so() -> None:
    check, _ = kernel("2.8.3", [12, 0], origin="release-wheel")
    assert check.status == "pass"
    assert check.reason.endswith("it runs on 12.0")


def test_a_local_build_is_said_to_be_one() -> None:
    check, _ = kernel("2.8.3", [9, 0], origin="local-build")
    assert check.status == "pass" and "local build" in check.details["arch"]


def test_glibc_import_errors() -> None:
    message = (
        "ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found "
        "(required by /usr/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so)"
    )
    said = machine.glibc("2.8.3", message, "2.31")
    assert said is not None
    assert "built on ubuntu-22.04 (glibc 2.35)" in said
    assert "flash-attn==2.7.4.post1 was built on ubuntu-20.04 and imports here" in said  # newest on 20.04
    older = machine.glibc("2.8.3", message, "2.28")
    assert older is not None and "build from source" in older
    assert machine.glibc("2.8.3", "ImportError: undefined symbol: _ZN3c10", "2.31") is None


def test_the_import_check_names_the_build_os() -> None:
    def fake(step: str, args: dict[str, Any] | None = None, timeout: float | None = None) -> Outcome:
        return Outcome(
            False, error="ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found"
        )

    v = Verification(probe=fake)  # type: ignore[arg-type]
    v.state.update(
        target=Target("flash-attn", "2.8.3", "flash_attn", "flash_attn_with_kvcache", None),
        env={"libc": ["glibc", "2.31"], "distributions": {}, "python": "3.10.12"},
    )
    check = v.import_()
    assert check.status == "fail" and "the wheel was built on a newer OS" in check.reason
    assert "2.7.4.post1" in check.details["diagnosis"]
