"""fa-lint verify on the CPU: every check and failure mode, with fake flash_attn packages written here.

The paged kernel itself needs CUDA; test_verify_gpu.py runs it where there is one.
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import io
import json
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest

from fa_lint import kb
from fa_lint.cli import main as cli_main
from fa_lint.kb import transformers as tf
from fa_lint.verify import probe

torch = pytest.importorskip("torch")

OLD_SIG = "q, k_cache, v_cache, k=None, v=None, cache_seqlens=None, softmax_scale=None, causal=False"
FA2_SIG = OLD_SIG + ", block_table=None, window_size=(-1, -1)"
FA3_SIG = OLD_SIG + ", page_table=None"
INIT = "from {module}.flash_attn_interface import flash_attn_with_kvcache\n"


def fake_site(root: Path, dist: str, version: str, files: dict[str, str]) -> Path:
    """A site folder holding one distribution: its files and a dist-info with a RECORD."""
    site = root / "site"
    for name, text in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "RECORD").write_text("".join(f"{n},,\n" for n in files) + f"{info.name}/METADATA,,\n")
    return site


def fa2(
    version: str, sig: str = FA2_SIG, init: str = INIT.format(module="flash_attn")
) -> tuple[str, str, dict[str, str]]:
    return (
        "flash-attn",
        version,
        {
            "flash_attn/__init__.py": init,
            "flash_attn/flash_attn_interface.py": f"def flash_attn_with_kvcache({sig}):\n    return q\n",
        },
    )


def verify(monkeypatch: pytest.MonkeyPatch, site: Path | None, *args: str) -> tuple[int, dict[str, Any]]:
    if site is not None:
        monkeypatch.setenv("PYTHONPATH", str(site))
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["verify", "--python", sys.executable, "--format", "json", *args], out=out, err=err)
    assert "[7/7] paged attention call" in err.getvalue()  # progress is shown
    return code, {c["id"]: c for c in json.loads(out.getvalue())["checks"]}


def statuses(checks: dict[str, Any]) -> dict[str, str]:
    return {k: c["status"] for k, c in checks.items()}


def test_good_fa2_install_passes_everything_but_the_gpu_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, checks = verify(monkeypatch, fake_site(tmp_path, *fa2("2.6.3")))
    assert statuses(checks) == {
        "interpreter": "pass",
        "distributions": "pass",
        "source": "pass",
        "import": "pass",
        "signature": "pass",
        "transformers": "pass",
        "kernel": "skip",
    }
    assert code == 0
    assert "flash-attn 2.6.3 has block_table" in checks["distributions"]["reason"]
    assert "flash_attn_with_kvcache(..., block_table=...)" in checks["source"]["reason"]
    assert "block_table" in checks["transformers"]["reason"]
    assert "no CUDA device" in checks["kernel"]["reason"]


def test_require_gpu_turns_the_skip_into_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, checks = verify(monkeypatch, fake_site(tmp_path, *fa2("2.6.3")), "--require-gpu")
    assert checks["kernel"]["status"] == "fail" and code == 1


def test_old_flash_attn_fails_on_the_knowledge_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, checks = verify(monkeypatch, fake_site(tmp_path, *fa2("2.4.2", OLD_SIG)))
    assert code == 1
    assert "flash-attn 2.4.2 has no block_table (first in 2.5.0)" in checks["distributions"]["reason"]
    # every later check still gathers its own evidence
    assert statuses(checks) == {
        "interpreter": "pass",
        "distributions": "fail",
        "source": "fail",
        "import": "pass",
        "signature": "fail",
        "transformers": "fail",
        "kernel": "skip",
    }
    # transformers 5.24's kwargs processing agrees: it would drop the block table
    assert "silently drop" in checks["transformers"]["reason"]


def test_a_fork_that_claims_a_good_version_but_lacks_block_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, checks = verify(monkeypatch, fake_site(tmp_path, *fa2("2.6.3", OLD_SIG)))
    assert (
        checks["source"]["status"] == "fail"
        and "neither block_table nor page_table" in checks["source"]["reason"]
    )
    assert code == 1


def test_a_wrapper_hides_block_table_at_run_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    init = "def flash_attn_with_kvcache(*args, **kwargs):\n    return None\n"
    _code, checks = verify(monkeypatch, fake_site(tmp_path, *fa2("2.6.3", FA2_SIG, init)))
    assert checks["source"]["status"] == "pass"
    assert checks["signature"]["status"] == "fail"
    # transformers' own code agrees there is no usable parameter
    assert checks["transformers"]["status"] == "fail"
    assert "silently drop" in checks["transformers"]["reason"]
    assert "disagree" not in checks["transformers"]["reason"]


def test_fa3_with_page_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = fake_site(
        tmp_path,
        "flash_attn_3",
        "3.0.0b1",
        {"flash_attn_interface.py": f"def flash_attn_with_kvcache({FA3_SIG}):\n    return q\n"},
    )
    code, checks = verify(monkeypatch, site)
    assert code == 0, checks
    assert "page_table" in checks["source"]["reason"]
    assert "passes the block table as page_table" in checks["transformers"]["reason"]


FA4_SIG = "q, k, v, cu_seqlens_q=None, cu_seqlens_k=None, seqused_k=None, page_table=None, causal=False"


def test_fa4_paged_kv_through_the_varlen_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As the flash-attn-4 wheel lays it out: flash_attn is a namespace package, the code under cute/.
    files = {
        "flash_attn/cute/__init__.py": "from .interface import flash_attn_varlen_func\n",
        "flash_attn/cute/interface.py": f"def flash_attn_varlen_func({FA4_SIG}):\n    return q\n",
    }
    code, checks = verify(monkeypatch, fake_site(tmp_path, "flash-attn-4", "4.0.0b36", files))
    assert code == 0, checks
    assert statuses(checks)["kernel"] == "skip" and "no CUDA device" in checks["kernel"]["reason"]
    assert "flash_attn_varlen_func(..., page_table=...)" in checks["source"]["reason"]
    assert checks["signature"]["reason"] == "flash_attn_varlen_func accepts page_table"
    # transformers (through 5.24) never sends flash-attn-4 a block table: nothing to fail, and it says so
    reason = checks["transformers"]["reason"]
    assert (
        "only with flash-attn 2/3" in reason
        and "flash-attn-4 it decodes through flash_attn_varlen_func" in reason
    )


def test_undefined_symbol_is_diagnosed_as_an_abi_mismatch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    init = (
        "raise ImportError('/site/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol: "
        "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE')\n"
    )
    site = fake_site(tmp_path, *fa2("2.6.3+cu122torch2.3cxx11abiFALSE", FA2_SIG, init))
    code, checks = verify(monkeypatch, site)
    assert code == 1
    imp = checks["import"]
    assert imp["status"] == "fail"
    assert "undefined symbol" in imp["reason"] and "torch/C++ ABI mismatch" in imp["reason"]
    assert f"built for torch 2.3, installed torch is {torch.__version__}" in imp["reason"]
    assert checks["signature"]["status"] == "skip"


def test_other_import_errors_are_reported_verbatim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    init = "import einops_is_not_installed\n"
    _code, checks = verify(monkeypatch, fake_site(tmp_path, *fa2("2.6.3", FA2_SIG, init)))
    assert checks["import"]["reason"] == "ModuleNotFoundError: No module named 'einops_is_not_installed'"


def test_a_segfaulting_extension_cannot_take_fa_lint_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    init = "import ctypes\nctypes.string_at(0)\n"
    code, checks = verify(monkeypatch, fake_site(tmp_path, *fa2("2.6.3", FA2_SIG, init)))
    assert code == 1
    assert "crashed with SIGSEGV" in checks["import"]["reason"]


def test_a_hang_times_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    init = "import time\ntime.sleep(60)\n"
    _code, checks = verify(monkeypatch, fake_site(tmp_path, *fa2("2.6.3", FA2_SIG, init)), "--timeout", "3")
    assert "did not finish within 3 s" in checks["import"]["reason"]


def test_no_flash_attn_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, checks = verify(monkeypatch, None)
    assert code == 1 and checks["distributions"]["status"] == "fail"
    assert "no flash-attn distribution is installed" in checks["distributions"]["reason"]


def test_an_unwritable_output_file_is_a_usage_error(tmp_path: Path) -> None:
    err = io.StringIO()
    target = tmp_path / "missing" / "verify.json"
    args = ["verify", "--python", sys.executable, "--format", "json", "-o", str(target)]
    assert cli_main(args, out=io.StringIO(), err=err) == 2
    assert f"fa-lint verify: error: cannot write {target}: No such file or directory" in err.getvalue()


def test_text_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(fake_site(tmp_path, *fa2("2.6.3"))))
    out = io.StringIO()
    assert cli_main(["verify", "--python", sys.executable], out=out, err=io.StringIO()) == 0
    lines = out.getvalue().splitlines()
    assert lines[0] == f"fa-lint verify: {sys.executable}"
    assert lines[1].startswith("  PASS  target interpreter")
    assert lines[-1] == "Result: PASS (0 failed, 6 passed, 1 skipped)"


@pytest.mark.parametrize(
    "args",
    [["--python", "/no/such/python"], ["--page-size", "0"], ["--requirements", "nope.txt"], ["--bogus"]],
)
def test_usage_errors(args: list[str]) -> None:
    err = io.StringIO()
    assert cli_main(["verify", *args], out=io.StringIO(), err=err) == 2
    assert "Traceback" not in err.getvalue()


def _wheel(folder: Path, dist: str, version: str, files: dict[str, str]) -> Path:
    name = dist.replace("-", "_")
    info = f"{name}-{version}.dist-info"
    contents = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: fa-lint-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    contents[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, text in contents.items():
            z.writestr(path, text)
    return wheel


def test_requirements_builds_a_throwaway_venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, version, files = fa2("2.6.3")
    wheel = _wheel(tmp_path, "flash-attn", version, files)
    reqs = tmp_path / "requirements.txt"
    reqs.write_text(f"{wheel}\n")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(
        ["verify", "--requirements", str(reqs), "--pip-option=--no-index", "--format", "json"],
        out=out,
        err=err,
    )
    checks = {c["id"]: c for c in json.loads(out.getvalue())["checks"]}
    assert statuses(checks) == {
        "install": "pass",
        "interpreter": "pass",
        "distributions": "pass",
        "source": "pass",
        "import": "pass",
        "signature": "pass",
        "transformers": "skip",
        "kernel": "fail",
    }
    assert "torch is not importable" in checks["kernel"]["reason"]  # flash-attn without torch is no install
    assert "fa-lint-verify-" in checks["interpreter"]["reason"]
    assert code == 1


def test_requirements_install_failure_is_a_failed_check(tmp_path: Path) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("flash-attn-does-not-exist==1.0\n")
    out = io.StringIO()
    code = cli_main(
        ["verify", "--requirements", str(reqs), "--pip-option=--no-index", "--format", "json"],
        out=out,
        err=io.StringIO(),
    )
    (check,) = json.loads(out.getvalue())["checks"]
    assert (check["id"], check["status"], code) == ("install", "fail", 1)


# --- the reference implementation -------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_reference_matches_dense_sdpa(seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    batch = int(torch.randint(1, 4, (1,), generator=gen))
    heads_k = int(torch.randint(1, 3, (1,), generator=gen))
    group = int(torch.randint(1, 5, (1,), generator=gen))
    dim = [16, 32, 64][seed % 3]
    page = [4, 8, 16][seed % 3]
    seqlen_new = 1 + seed % 2
    lengths = [int(x) for x in torch.randint(0, 40, (batch,), generator=gen)]
    case = probe.make_case(
        batch, heads_k, group, dim, page, [n + seqlen_new for n in lengths], torch.float32, "cpu", seed
    )
    q = torch.randn(batch, seqlen_new, heads_k * group, dim, generator=gen)
    k_new = torch.randn(batch, seqlen_new, heads_k, dim, generator=gen)
    v_new = torch.randn(batch, seqlen_new, heads_k, dim, generator=gen)
    seqlens = torch.tensor(lengths, dtype=torch.int32)
    out, k_cache, v_cache = probe.paged_reference(
        q, case["k_cache"], case["v_cache"], case["block_table"], seqlens, k_new, v_new
    )
    for b in range(batch):
        total = lengths[b] + seqlen_new
        idx = torch.arange(total)
        blocks = case["block_table"][b].long()[idx // page]
        keys = k_cache[blocks, idx % page]  # (total, heads_k, dim)
        values = v_cache[blocks, idx % page]
        assert torch.equal(keys[lengths[b] :], k_new[b]) and torch.equal(values[lengths[b] :], v_new[b])
        mask = torch.ones(seqlen_new, total, dtype=torch.bool).tril(diagonal=total - seqlen_new)
        dense = torch.nn.functional.scaled_dot_product_attention(
            q[b].transpose(0, 1),
            keys.transpose(0, 1).repeat_interleave(group, 0),
            values.transpose(0, 1).repeat_interleave(group, 0),
            attn_mask=mask,
        )
        torch.testing.assert_close(out[b], dense.transpose(0, 1), rtol=1e-5, atol=1e-5)


def test_reference_leaves_its_inputs_alone() -> None:
    case = probe.make_case(2, 1, 2, 8, 4, [3, 9], torch.float32, "cpu")
    before = case["k_cache"].clone()
    probe.paged_reference(
        case["q"],
        case["k_cache"],
        case["v_cache"],
        case["block_table"],
        case["cache_seqlens"] - 1,
        case["k_new"],
        case["v_new"],
    )
    assert torch.equal(case["k_cache"], before)


# --- differential: transformers' real code against the knowledge base --------------------------------


def _function(params: tuple[str, ...]) -> Any:
    sig = ", ".join(f"{p}=None" if i >= 3 else p for i, p in enumerate(params))
    scope: dict[str, Any] = {}
    exec(f"def flash_attn_with_kvcache({sig}):\n    pass\n", scope)
    return scope["flash_attn_with_kvcache"]


def test_transformers_get_block_table_key_agrees_with_the_knowledge_base() -> None:
    cache = pytest.importorskip("transformers.generation.continuous_batching.cache")
    import types

    checked = 0
    for release in kb.load().releases:
        if release.kvcache_params is None:
            continue
        fn = _function(release.kvcache_params)
        holder = types.SimpleNamespace(_block_table_key=None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if release.has(kb.PAGED_KV):
                assert cache.PagedAttentionCache.get_block_table_key(holder, fn) == "block_table", release
            else:
                with pytest.raises(ValueError, match="does not have a block_table or page_table argument"):
                    cache.PagedAttentionCache.get_block_table_key(holder, fn)
        checked += 1
    assert checked == len([r for r in kb.load().releases if r.has(kb.KVCACHE)])


def test_newer_transformers_kwargs_processing_agrees_with_the_knowledge_base() -> None:
    utils = pytest.importorskip("transformers.modeling_flash_attention_utils")
    if not hasattr(utils, "_lazy_define_process_function"):
        pytest.skip("this transformers predates the kwargs processing")
    for release in kb.load().releases:
        if release.kvcache_params is None:
            continue
        mapping = utils._lazy_define_process_function(_function(release.kvcache_params)).keywords[
            "supports_mapping"
        ]
        assert mapping["block_table"] is release.has(kb.PAGED_KV), release


def test_installed_transformers_matches_the_transformers_facts() -> None:
    transformers = pytest.importorskip("transformers")
    from packaging.version import Version

    facts = tf.load()
    version = Version(transformers.__version__)
    from transformers.generation.continuous_batching import cache

    source = inspect.getsource(cache.PagedAttentionCache.get_block_table_key)
    assert "does not have a block_table or page_table argument" in source
    assert (version >= facts.key_check) is hasattr(cache.PagedAttentionCache, "get_block_table_key")


# --- the kernel comparison, run on the CPU against stand-in kernels ------------------------------------


def _kernel(ignore_block_table: bool = False, append: bool = True) -> Any:
    """A stand-in for flash_attn_with_kvcache built on the reference (optionally broken)."""

    def flash_attn_with_kvcache(
        q, k_cache, v_cache, k=None, v=None, cache_seqlens=None, causal=False, block_table=None
    ):
        table = block_table
        if ignore_block_table:  # what a kernel without block_table does to a paged cache
            table = torch.arange(block_table.numel(), dtype=torch.int32).view_as(block_table)
        out, k_after, v_after = probe.paged_reference(q, k_cache, v_cache, table, cache_seqlens, k, v)
        if append:
            k_cache.copy_(k_after)
            v_cache.copy_(v_after)
        return out.to(q.dtype)

    return flash_attn_with_kvcache


def test_kernel_comparison_passes_a_correct_kernel() -> None:
    (result,) = probe.kernel_results(_kernel(), "block_table", 16, "cpu", dtypes=("bfloat16",), repeats=1)
    assert result["max_abs_error"] <= result["tolerance"] and result["cache_appended"]
    assert result["shape"]["heads_q"] == 32 and result["shape"]["page_size"] == 16


def test_kernel_comparison_catches_a_lost_block_table() -> None:
    (result,) = probe.kernel_results(
        _kernel(ignore_block_table=True), "block_table", 16, "cpu", dtypes=("float16",), repeats=1
    )
    assert result["max_abs_error"] > result["tolerance"]


def _varlen(ignore_seqused: bool = False) -> Any:
    """A stand-in for FA4's flash_attn_varlen_func: reads a paged cache the caller already wrote."""

    def flash_attn_varlen_func(q, k, v, seqused_k=None, page_table=None, causal=False):
        used = seqused_k
        if ignore_seqused:  # a kernel that attends to every slot of the pages it was given
            used = torch.full_like(seqused_k, page_table.shape[1] * k.shape[1])
        out, _, _ = probe.paged_reference(q, k, v, page_table, used)
        return out.to(q.dtype), None  # (out, lse), as FA4 returns

    return flash_attn_varlen_func


def test_kernel_comparison_of_a_varlen_entry_point() -> None:
    (result,) = probe.kernel_results(
        _varlen(), "page_table", 16, "cpu", dtypes=("bfloat16",), repeats=1, varlen=True
    )
    assert result["max_abs_error"] <= result["tolerance"]
    assert result["cache_appended"] is None  # the varlen entry point appends nothing; the caller did


def test_kernel_comparison_of_a_varlen_entry_point_that_ignores_seqused_k() -> None:
    (result,) = probe.kernel_results(
        _varlen(ignore_seqused=True), "page_table", 16, "cpu", dtypes=("float16",), repeats=1, varlen=True
    )
    assert result["max_abs_error"] > result["tolerance"]


def test_kernel_comparison_catches_a_cache_not_appended() -> None:
    (result,) = probe.kernel_results(
        _kernel(append=False), "block_table", 16, "cpu", dtypes=("float16",), repeats=1
    )
    assert not result["cache_appended"]


# --- where the installed flash-attn came from, and the GPU it ran on ------------------------------------

EXT = "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so"


@pytest.mark.parametrize(
    ("extension", "direct_url", "origin", "said"),
    [
        # an index install: the extension's recorded source path tells the release workflow's runner
        (
            "\0\0/home/runner/work/flash-attention/flash-attention/csrc/flash_attn/flash_api.cpp\0",
            None,
            "release-wheel",
            "built on a GitHub runner",
        ),
        (
            "\0\0/tmp/pip-install-x1/flash-attn_0/csrc/flash_attn/flash_api.cpp\0",
            None,
            "local-build",
            "compiled outside",
        ),
        (None, None, "unknown", "no compiled extension"),
        # PEP 610: a folder, a VCS checkout, a release wheel URL
        (
            "x",
            {"url": "file:///src/flash-attention", "dir_info": {"editable": True}},
            "local-build",
            "(editable)",
        ),
        (
            "x",
            {
                "url": "https://github.com/Dao-AILab/flash-attention",
                "vcs_info": {"vcs": "git", "commit_id": "abc"},
            },
            "local-build",
            "git",
        ),
        (
            "x",
            {
                "url": "https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
                "flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl",
                "archive_info": {},
            },
            "release-wheel",
            "the release wheel flash_attn-2.6.3+cu123torch2.4",
        ),
    ],
)
def test_distributions_step_says_where_flash_attn_came_from(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    extension: str | None,
    direct_url: dict[str, Any] | None,
    origin: str,
    said: str,
) -> None:
    dist, version, files = fa2("2.6.3")
    if extension is not None:
        files = {**files, EXT: extension}
    site = fake_site(tmp_path, dist, version, files)
    if direct_url is not None:
        (site / f"flash_attn-{version}.dist-info" / "direct_url.json").write_text(json.dumps(direct_url))
    _code, checks = verify(monkeypatch, site)
    assert checks["distributions"]["details"]["origin"] == origin
    assert said in checks["distributions"]["reason"]


def test_the_origin_scan_finds_the_runner_path_across_read_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(probe, "_CHUNK", 7)
    path = tmp_path / EXT
    path.write_bytes(b"x" * 30 + probe.RUNNER_PATH + b"y" * 30)
    assert probe._holds(str(path), probe.RUNNER_PATH)
    path.write_bytes(b"x" * 30 + probe.RUNNER_PATH[:-1] + b"y" * 30)
    assert not probe._holds(str(path), probe.RUNNER_PATH)


def test_kernel_step_records_the_compute_capability() -> None:
    from fa_lint.verify.checks import Outcome, Target, Verification

    result = {
        "results": [
            {"dtype": "bf16", "max_abs_error": 1e-3, "tolerance": 2e-2, "cache_appended": True, "ms": 0.1}
        ],
        "device": "NVIDIA H200",
    }

    def fake(step: str, args: dict[str, Any] | None = None, timeout: float | None = None) -> Outcome:
        if step == "torch":
            return Outcome(
                True,
                {"version": "2.8.0", "cuda_available": True, "capability": [9, 0], "device": "NVIDIA H200"},
            )
        return Outcome(True, result)

    v = Verification(probe=fake)  # type: ignore[arg-type]
    v.probe.timeout = 1  # type: ignore[attr-defined]
    v.state.update(
        target=Target("flash-attn", "2.8.3", "flash_attn", "flash_attn_with_kvcache", "block_table"),
        runtime_key="block_table",
    )
    check = v.kernel()
    assert check.status == "pass"
    assert check.details["capability"] == "sm_90"
    assert check.reason.startswith("NVIDIA H200 (sm_90): bf16")


@pytest.mark.parametrize(
    ("version", "rocm", "multiple"),
    [
        ("2.8.3", False, 256),  # csrc/flash_attn/flash_api.cpp: page_block_size % 256 == 0
        ("2.8.3", True, 128),  # csrc/flash_attn_ck/mha_fwd_kvcache.cpp: page_block_size % 128 == 0
        ("2.7.0.post2", True, 128),  # the first release whose CK backend checks a page size
        ("2.6.3", True, 256),  # no CK paged check in the KB: flash-attn 2's own
        ("not-a-version", False, 256),
    ],
)
def test_the_page_multiple_follows_the_backend(version: str, rocm: bool, multiple: int) -> None:
    from fa_lint.verify.checks import Target, _page_multiple

    target = Target("flash-attn", version, "flash_attn", "flash_attn_with_kvcache", "block_table")
    assert _page_multiple(target, rocm)[0] == multiple
