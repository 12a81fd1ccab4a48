#!/usr/bin/env python3
"""Regenerate fa_lint/kb/rocm.json: from which release flash-attn built on a ROCm torch has paged KV.

Maintainer script; fa-lint never runs it. On a ROCm torch flash-attn's setup.py builds the Composable
Kernel backend (``csrc/flash_attn_ck``) instead of the CUDA kernels, into the same ``flash_attn_2_cuda``
module, and ``flash_attn_with_kvcache`` calls that module's ``fwd_kvcache``. For every 2.x tag of a
flash-attention checkout the script reads, with line numbers:

* ``setup.py``: the first line that selects the ROCm build (``IS_ROCM``, ``flash_attn_ck``): before
  it, setup.py has no ROCm build at all;
* ``csrc/flash_attn_ck/flash_api.cpp``: the ``m.def("fwd_kvcache", ...)`` binding. A tag with a ROCm
  build but no binding has no ``fwd_kvcache`` there, so ``flash_attn_with_kvcache`` fails at its first
  call (``AttributeError``);
* ``csrc/flash_attn_ck/mha_fwd_kvcache.cpp``: the ``block_table`` argument the binding takes (paged KV).

The first tag with both is where paged KV reaches ROCm; it is recorded with its evidence, and the
releases with a ROCm build but none of it. Also, per tag, what the ROCm build accepts as a target:

* ``setup.py``'s ``allowed_archs`` list: ``GPU_ARCHS`` (default ``native``, the build machine's own
  GPU) split on ``;`` must hold only these, or ``validate_and_update_archs`` fails its assert ("One of
  GPU archs of [...] is invalid or not supported by Flash-Attention"); the runs of tags with one list;
* the first tag with ``FLASH_ATTENTION_TRITON_AMD_ENABLE``: a Triton backend instead of the Composable
  Kernel one, whose build never validates the archs.

    python scripts/build_rocm_kb.py --repo ../flash-attention [--output fa_lint/kb/rocm.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from gitrepo import git_file, release_tags
from packaging.version import Version

SETUP = "setup.py"
API = "csrc/flash_attn_ck/flash_api.cpp"
KVCACHE = "csrc/flash_attn_ck/mha_fwd_kvcache.cpp"
_ROCM_BUILD = re.compile(r"\bIS_ROCM\s*=\s*True|flash_attn_ck")
_BINDING = re.compile(r"""m\.def\(\s*"fwd_kvcache\"""")
_BLOCK_TABLE = re.compile(r"\bblock_table_?\b")
_ALLOWED = re.compile(r"^\s*allowed_archs\s*=\s*\[([^\]]*)\]")
_TRITON = re.compile(r"FLASH_ATTENTION_TRITON_AMD_ENABLE")
_GPU_ARCHS = re.compile(r"""os\.getenv\(\s*["']GPU_ARCHS["']""")


def _first(text: str | None, pattern: re.Pattern[str], tag: str, path: str) -> str | None:
    for n, line in enumerate((text or "").splitlines(), 1):
        if pattern.search(line):
            return f"{tag}:{path}:{n}: {line.strip()}"
    return None


def allowed_archs(setup: str | None, tag: str) -> tuple[list[str], str] | None:
    """The ROCm archs ``setup.py`` at ``tag`` accepts in GPU_ARCHS, and the line that lists them."""
    for n, line in enumerate((setup or "").splitlines(), 1):
        m = _ALLOWED.match(line)
        if m:
            return re.findall(r"[\"']([^\"']+)[\"']", m.group(1)), f"{tag}:{SETUP}:{n}: {line.strip()}"
    return None


def arch_runs(repo: Path, tags: list[tuple[Version, str]]) -> list[dict[str, object]]:
    """The runs of consecutive tags with one allowed_archs list: since, until (the first tag of the next
    run), the archs, and the line at the run's first tag."""
    runs: list[dict[str, object]] = []
    for version, tag in tags:
        found = allowed_archs(git_file(repo, tag, SETUP), tag)
        if found is None:
            continue
        archs, evidence = found
        if runs and runs[-1]["archs"] == archs:
            continue
        if runs:
            runs[-1]["until"] = str(version)
        runs.append({"since": str(version), "until": None, "archs": archs, "evidence": evidence})
    return runs


def tag_record(repo: Path, tag: str) -> dict[str, str | None]:
    return {
        "rocm_build": _first(git_file(repo, tag, SETUP), _ROCM_BUILD, tag, SETUP),
        "fwd_kvcache": _first(git_file(repo, tag, API), _BINDING, tag, API),
        "block_table": _first(git_file(repo, tag, KVCACHE), _BLOCK_TABLE, tag, KVCACHE),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="flash-attention git checkout (bare is fine)")
    ap.add_argument("--output", type=Path, default=Path("fa_lint/kb/rocm.json"))
    args = ap.parse_args(argv)
    tags = release_tags(args.repo, 2)
    records = {str(v): tag_record(args.repo, t) for v, t in tags}
    paged = next((v for v, r in records.items() if r["fwd_kvcache"] and r["block_table"]), None)
    if paged is None:
        print("no tag binds fwd_kvcache with a block table in the ROCm backend", file=sys.stderr)
        return 1
    later = [v for v in records if Version(v) >= Version(paged)]
    if not all(records[v]["fwd_kvcache"] and records[v]["block_table"] for v in later):
        print("a tag after the first one lost the ROCm kvcache binding: read the records", file=sys.stderr)
        return 1
    doc: dict[str, Any] = {
        "schema": 1,
        "generator": "scripts/build_rocm_kb.py",
        "source": "https://github.com/Dao-AILab/flash-attention (setup.py, csrc/flash_attn_ck at each tag)",
        "paged_kv_since": paged,
        "evidence": {k: records[paged][k] for k in ("fwd_kvcache", "block_table")},
        "rocm_build_without_kvcache": [
            v for v, r in records.items() if r["rocm_build"] and not r["fwd_kvcache"]
        ],
        "first_rocm_build": next((r["rocm_build"] for r in records.values() if r["rocm_build"]), None),
        "archs": arch_runs(args.repo, tags),
        "gpu_archs_variable": next(
            (e for _, t in tags if (e := _first(git_file(args.repo, t, SETUP), _GPU_ARCHS, t, SETUP))), None
        ),
        "triton_backend": next(
            (e for _, t in tags if (e := _first(git_file(args.repo, t, SETUP), _TRITON, t, SETUP))), None
        ),
    }
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
