"""The probe fa-lint verify runs inside the *target* interpreter, one step per process.

    python probe.py STEP [JSON-ARGS]     ->  one JSON object on stdout

It is run by file path, so it needs nothing but the standard library of the target Python (3.8 or
later) at import time; torch, transformers and flash_attn are imported inside the steps that need
them. A step that crashes or hangs costs only its own process. The pure-PyTorch reference of paged
attention lives here too, so the kernel step and fa-lint's CPU tests check against the same code.
"""

from __future__ import annotations

import ast
import json
import os
import platform
import sys
import time
import traceback
import types
import warnings
from typing import Any, Dict, List, Optional, Tuple

# distribution name -> (import module, file of the interface inside the distribution)
FLASH_DISTRIBUTIONS = {
    "flash-attn": ("flash_attn", ("flash_attn/flash_attn_interface.py",)),
    "flash_attn_3": (
        "flash_attn_interface",
        ("flash_attn_interface.py", "flash_attn_3/flash_attn_interface.py"),
    ),
    "vllm-flash-attn": ("vllm_flash_attn", ("vllm_flash_attn/flash_attn_interface.py",)),
    "flash-attn-4": ("flash_attn.cute", ("flash_attn/cute/interface.py",)),
}
OTHER_DISTRIBUTIONS = ("torch", "transformers")
KVCACHE = "flash_attn_with_kvcache"
VARLEN = "flash_attn_varlen_func"


def _distribution(name: str) -> Any:
    from importlib import metadata

    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def step_env(_: Dict[str, Any]) -> Dict[str, Any]:
    """The interpreter and the installed distributions, from metadata only (nothing imported)."""
    dists: Dict[str, Any] = {}
    for name in (*FLASH_DISTRIBUTIONS, *OTHER_DISTRIBUTIONS):
        dist = _distribution(name)
        if dist is None:
            continue
        direct = dist.read_text("direct_url.json")
        wheel = dist.read_text("WHEEL") or ""
        dists[name] = {
            "version": dist.version,
            "direct_url": json.loads(direct).get("url") if direct else None,
            "wheel_tags": [
                line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")
            ],
        }
    return {
        "executable": sys.executable,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "libc": list(platform.libc_ver()),  # ("glibc", "2.31"); empty on musl and other platforms
        "distributions": dists,
    }


# flash-attn's release workflow builds its wheels on GitHub-hosted runners, whose checkout is
# /home/runner/work/<repo>/<repo>: the compiler records source paths (TORCH_CHECK messages carry
# __FILE__), so a release-built extension holds that path and a local build holds its own.
RUNNER_PATH = b"/home/runner/work/"
_CHUNK = 1 << 24


def _holds(path: str, needle: bytes) -> bool:
    with open(path, "rb") as f:
        tail = b""
        while True:
            block = f.read(_CHUNK)
            if not block:
                return False
            seen = tail + block
            if needle in seen:
                return True
            tail = seen[-(len(needle) - 1) :]  # a needle split across two reads


def step_origin(args: Dict[str, Any]) -> Dict[str, Any]:
    """Where an installed distribution came from: direct_url.json, WHEEL, and its compiled extensions."""
    dist = _distribution(args["name"])
    if dist is None:
        return {}
    direct = dist.read_text("direct_url.json")
    wheel = dist.read_text("WHEEL") or ""
    fields = dict(line.split(":", 1) for line in wheel.splitlines() if ":" in line)
    extensions = [
        str(dist.locate_file(rel)) for rel in dist.files or () if str(rel).endswith((".so", ".pyd"))
    ]
    found = [path for path in extensions if os.path.isfile(path)]
    return {
        "direct_url": json.loads(direct) if direct else None,
        "wheel": {
            k.strip(): v.strip() for k, v in fields.items() if k.strip() in ("Generator", "Root-Is-Purelib")
        },
        "extensions": [os.path.basename(p) for p in found],
        "built_on_runner": any(_holds(p, RUNNER_PATH) for p in found) if found else None,
    }


def function_params(source: str) -> Dict[str, List[str]]:
    """Parameter names of every module-level function, by function name, read with ast."""
    out: Dict[str, List[str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            a = node.args
            out[node.name] = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    return out


def _interface_file(dist: Any, candidates: Tuple[str, ...]) -> Optional[str]:
    for rel in dist.files or ():
        text = str(rel).replace(os.sep, "/")
        if any(text.endswith(c) for c in candidates):
            return str(dist.locate_file(rel))
    for c in candidates:  # distributions without a RECORD
        path = str(dist.locate_file(c))
        if os.path.isfile(path):
            return path
    return None


def step_source(_: Dict[str, Any]) -> Dict[str, Any]:
    """Read each installed interface file with ast, without importing it."""
    found: Dict[str, Any] = {}
    for name, (_module, candidates) in FLASH_DISTRIBUTIONS.items():
        dist = _distribution(name)
        if dist is None:
            continue
        path = _interface_file(dist, candidates)
        if path is None:
            found[name] = {"file": None}
            continue
        with open(path, encoding="utf-8") as f:
            functions = function_params(f.read())
        found[name] = {"file": path, "kvcache": functions.get(KVCACHE), "varlen": functions.get(VARLEN)}
    return found


def step_torch(_: Dict[str, Any]) -> Dict[str, Any]:
    import torch

    info: Dict[str, Any] = {
        "version": torch.__version__,
        "cuda": torch.version.cuda,
        "hip": getattr(torch.version, "hip", None),  # a ROCm build: flash-attn runs its CK backend
        "cxx11_abi": bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", False)),
        "cuda_available": torch.cuda.is_available(),
    }
    if info["cuda_available"]:
        info["device"] = torch.cuda.get_device_name(0)
        info["capability"] = list(torch.cuda.get_device_capability(0))
    return info


def _function(module: str, name: str) -> Any:
    import importlib

    return getattr(importlib.import_module(module), name)


def step_import(args: Dict[str, Any]) -> Dict[str, Any]:
    import importlib

    mod = importlib.import_module(args["module"])
    return {"file": getattr(mod, "__file__", None), "has": [n for n in (KVCACHE, VARLEN) if hasattr(mod, n)]}


def step_signature(args: Dict[str, Any]) -> Dict[str, Any]:
    import inspect

    fn = _function(args["module"], args["function"])
    out: Dict[str, Any] = {"params": list(inspect.signature(fn).parameters)}
    out["transformers"] = _transformers_view(fn)
    return out


def _transformers_view(fn: Any) -> Optional[Dict[str, Any]]:
    """What the installed transformers does with this function when it decodes with a block table."""
    if _distribution("transformers") is None:
        return None
    view: Dict[str, Any] = {"version": _distribution("transformers").version}
    import importlib

    cache_cls: Any = None
    try:
        cache_cls = importlib.import_module(
            "transformers.generation.continuous_batching.cache"
        ).PagedAttentionCache
    except Exception as exc:  # transformers without continuous batching, or a broken install
        view["cache_error"] = f"{type(exc).__name__}: {exc}"
    if cache_cls is not None and hasattr(cache_cls, "get_block_table_key"):
        holder = types.SimpleNamespace(_block_table_key=None)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                view["block_table_key"] = cache_cls.get_block_table_key(holder, fn)
        except ValueError as exc:
            view["block_table_key_error"] = str(exc)
    try:
        utils = importlib.import_module("transformers.modeling_flash_attention_utils")
    except ImportError:
        return view
    process: Any = getattr(utils, "_lazy_define_process_function", None)
    if process is not None:
        mapping = process(fn).keywords.get("supports_mapping", {})
        view["supports"] = {k: bool(mapping.get(k)) for k in ("block_table", "page_table")}
    return view


# --- paged attention ---------------------------------------------------------------------------------


def paged_reference(
    q: Any,
    k_cache: Any,
    v_cache: Any,
    block_table: Any,
    cache_seqlens: Any,
    k_new: Any = None,
    v_new: Any = None,
    softmax_scale: Optional[float] = None,
    causal: bool = True,
) -> Any:
    """Paged attention in plain PyTorch, in fp32: gather each sequence's pages, attend, softmax.

    q: (batch, seqlen_q, heads_q, dim); k_cache, v_cache: (num_blocks, page_size, heads_k, dim);
    block_table: (batch, max_blocks) int; cache_seqlens: (batch,) tokens already cached. With k_new and
    v_new (batch, seqlen_new, heads_k, dim) they are first written after the cached tokens, as
    flash_attn_with_kvcache does in place. Causal masking is aligned to the end of each sequence.
    Returns (out in fp32, k_cache, v_cache), the caches being updated copies.
    """
    import torch

    k_cache, v_cache = k_cache.clone(), v_cache.clone()
    batch, seqlen_q, heads_q, dim = q.shape
    page = k_cache.shape[1]
    heads_k = k_cache.shape[2]
    scale = softmax_scale if softmax_scale is not None else dim**-0.5
    out = torch.empty(batch, seqlen_q, heads_q, dim, dtype=torch.float32, device=q.device)
    for b in range(batch):
        length = int(cache_seqlens[b])
        if k_new is not None:
            for t in range(k_new.shape[1]):
                pos = length + t
                block = int(block_table[b, pos // page])
                k_cache[block, pos % page] = k_new[b, t]
                v_cache[block, pos % page] = v_new[b, t]
            length += k_new.shape[1]
        idx = torch.arange(length, device=q.device)
        blocks = block_table[b].long()[idx // page]
        keys = k_cache[blocks, idx % page].float().repeat_interleave(heads_q // heads_k, dim=1)
        values = v_cache[blocks, idx % page].float().repeat_interleave(heads_q // heads_k, dim=1)
        scores = torch.einsum("qhd,khd->hqk", q[b].float(), keys) * scale
        if causal:
            query_pos = torch.arange(seqlen_q, device=q.device) + (length - seqlen_q)
            scores = scores.masked_fill(idx[None, None, :] > query_pos[None, :, None], float("-inf"))
        out[b] = torch.einsum("hqk,khd->qhd", torch.softmax(scores, dim=-1), values)
    return out, k_cache, v_cache


def make_case(
    batch: int,
    heads_k: int,
    group: int,
    dim: int,
    page: int,
    lengths: List[int],
    dtype: Any,
    device: str,
    seed: int = 0,
) -> Dict[str, Any]:
    """A paged decode batch with a shuffled block table and ragged lengths (one new token each)."""
    import torch

    gen = torch.Generator(device="cpu").manual_seed(seed)
    max_blocks = max((n + 1 + page - 1) // page for n in lengths)
    num_blocks = batch * max_blocks + 3
    order = torch.randperm(num_blocks, generator=gen)[: batch * max_blocks]
    block_table = order.view(batch, max_blocks).to(torch.int32)

    def rand(*shape: int) -> Any:
        return torch.randn(*shape, generator=gen).to(dtype=dtype, device=device)

    return {
        "q": rand(batch, 1, heads_k * group, dim),
        "k_cache": rand(num_blocks, page, heads_k, dim),
        "v_cache": rand(num_blocks, page, heads_k, dim),
        "k_new": rand(batch, 1, heads_k, dim),
        "v_new": rand(batch, 1, heads_k, dim),
        "block_table": block_table.to(device),
        "cache_seqlens": torch.tensor(lengths, dtype=torch.int32, device=device),
    }


TOLERANCE = {"bfloat16": 2e-2, "float16": 4e-3}


def _paged_call(fn: Any, key: str, case: Dict[str, Any], k_cache: Any, v_cache: Any, varlen: bool) -> Any:
    if varlen:
        # flash_attn_varlen_func (FA4) only reads the paged cache: the caller has already written the
        # new token's k/v there, so every sequence now holds one more token than cache_seqlens says.
        extra: Dict[str, Any] = {"seqused_k": case["cache_seqlens"] + 1}
    else:
        extra = {"k": case["k_new"], "v": case["v_new"], "cache_seqlens": case["cache_seqlens"]}
    res = fn(case["q"], k_cache, v_cache, causal=True, **extra, **{key: case["block_table"]})
    return res[0] if isinstance(res, tuple) else res


def kernel_results(
    fn: Any,
    key: str,
    page: int,
    device: str,
    dtypes: Tuple[str, ...] = ("bfloat16", "float16"),
    repeats: int = 10,
    varlen: bool = False,
) -> List[Dict[str, Any]]:
    """Run ``fn`` on paged decode batches and compare it with paged_reference, per dtype.

    ``fn`` is flash_attn_with_kvcache, which appends the new k/v itself, or with ``varlen`` a
    flash_attn_varlen_func that reads a cache the new k/v were written to beforehand; then
    ``cache_appended`` is None, there being no append to check.
    """
    import torch

    def sync() -> None:
        if device == "cuda":
            torch.cuda.synchronize()

    results: List[Dict[str, Any]] = []
    for name in dtypes:
        lengths = [1, page - 1, page + 37, 3 * page]
        case = make_case(4, 4, 8, 128, page, lengths, getattr(torch, name), device, seed=len(results))
        expected, k_after, v_after = paged_reference(
            case["q"],
            case["k_cache"],
            case["v_cache"],
            case["block_table"],
            case["cache_seqlens"],
            case["k_new"],
            case["v_new"],
        )
        before = (k_after, v_after) if varlen else (case["k_cache"], case["v_cache"])
        k_cache, v_cache = before[0].clone(), before[1].clone()
        got = _paged_call(fn, key, case, k_cache, v_cache, varlen)
        sync()
        timings = []
        for _ in range(repeats):
            kc, vc = before[0].clone(), before[1].clone()
            sync()
            start = time.perf_counter()
            _paged_call(fn, key, case, kc, vc, varlen)
            sync()
            timings.append((time.perf_counter() - start) * 1e3)
        results.append(
            {
                "dtype": name,
                "max_abs_error": (got.float() - expected).abs().max().item(),
                "tolerance": TOLERANCE[name],
                "cache_appended": None
                if varlen
                else bool(torch.equal(k_cache, k_after) and torch.equal(v_cache, v_after)),
                "ms": sorted(timings)[len(timings) // 2] if timings else 0.0,
                "shape": {
                    "batch": 4,
                    "heads_q": 32,
                    "heads_k": 4,
                    "dim": 128,
                    "page_size": page,
                    "cache_seqlens": lengths,
                },
            }
        )
    return results


def step_kernel(args: Dict[str, Any]) -> Dict[str, Any]:
    """A real paged call on CUDA, compared with paged_reference (kvcache: new k/v appended in place)."""
    import torch

    if not torch.cuda.is_available():
        return {"skipped": "CUDA is not available to torch " + torch.__version__}
    fn = _function(args["module"], args["function"])
    varlen = args["function"] == "flash_attn_varlen_func"
    results = kernel_results(fn, args["key"], int(args["page_size"]), "cuda", varlen=varlen)
    return {"device": torch.cuda.get_device_name(0), "results": results}


STEPS = {
    "env": step_env,
    "origin": step_origin,
    "source": step_source,
    "torch": step_torch,
    "import": step_import,
    "signature": step_signature,
    "kernel": step_kernel,
}


def main(argv: List[str]) -> int:
    step = argv[0] if argv else ""
    args = json.loads(argv[1]) if len(argv) > 1 else {}
    try:
        result = {"ok": True, "result": STEPS[step](args)}
    except BaseException as exc:  # everything is reported; the caller decides what it means
        result = {
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(limit=8),
        }
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
