#!/usr/bin/env python3
"""Regenerate fa_lint/kb/transformers.json: what each transformers release does with flash-attn.

Maintainer script; fa-lint never runs it. It reads released transformers wheels (zip files, never
imported) and finds, for each fact, the first release where it holds and the last one before it
where it does not, with the file and line that show it:

    pip download --no-deps transformers==5.12.1 transformers==5.13.0 ... -d wheels/
    python scripts/build_transformers_kb.py wheels/

A boundary is only as exact as the versions given: give the releases on both sides of it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from packaging.version import Version

Evidence = tuple[str, int] | None
Files = dict[str, str]


def _grep(files: Files, path_re: str, line_re: str) -> Evidence:
    pattern = re.compile(line_re)
    for path in sorted(files):
        if re.search(path_re, path):
            for n, line in enumerate(files[path].splitlines(), start=1):
                if pattern.search(line):
                    return path, n
    return None


def continuous_batching(files: Files) -> Evidence:
    return _grep(files, r"transformers/generation/continuous_batching", r"class ContinuousBatch")


def block_table_key_check(files: Files) -> Evidence:
    """get_block_table_key is *called*: a kernel without block_table/page_table raises ValueError."""
    if not _grep(files, r"continuous_batching", r"def get_block_table_key"):
        return None
    return _grep(files, r"transformers/", r"get_block_table_key\((?!self)")


def fa2_block_table_on_cuda(files: Files) -> Evidence:
    """The decode fast path (block table) is allowed for flash-attn 2 on CUDA, not only FA3."""
    admits_2 = r"is_flash_attention_requested\(config, version=\[[^\]]*\b2\b"
    return _grep(files, r"continuous_batching", admits_2)


def fa4_block_table_on_cuda(files: Files) -> Evidence:
    """flash-attn-4 takes the block-table decode path: the fast-path check admits it, with a kvcache entry.

    Every release read so far imports only flash_attn.cute's varlen function for FA4 (its
    flash_attn_with_kvcache is None, "not supported yet") and admits only FA2/FA3 to the fast path.
    """
    admitted = _grep(
        files, r"continuous_batching", r"is_flash_attention_requested\(config, version=\[[^\]]*\b4\b"
    )
    kvcache = _grep(
        files,
        r"modeling_flash_attention_utils\.py$",
        r"from flash_attn\.cute import .*flash_attn_with_kvcache",
    )
    return admitted if admitted and kvcache else None


def fa4_supported(files: Files) -> Evidence:
    """``attn_implementation="flash_attention_4"`` imports flash-attn-4 (``from flash_attn.cute import``)."""
    return _grep(files, r"modeling_flash_attention_utils\.py$", r"from flash_attn\.cute import")


def fa4_no_kvcache(files: Files) -> Evidence:
    """flash-attn-4 gets no kvcache entry point: ``flash_attn_with_kvcache = None  # not supported yet``."""
    fa4 = fa4_supported(files)
    if fa4 is None:
        return None
    lines = files[fa4[0]].splitlines()
    for n in range(fa4[1], min(fa4[1] + 6, len(lines))):  # the lines right after the FA4 import
        if re.search(r"flash_attn_with_kvcache = None", lines[n]):
            return fa4[0], n + 1
    return None


def block_table_silently_dropped(files: Files) -> Evidence:
    """Kwargs processing passes block_table or page_table only if the kernel has one; else drops it."""
    if block_table_key_check(files):
        return None
    return _grep(files, r"modeling_flash_attention_utils\.py$", r'elif supports_mapping\["page_table"\]')


def fa2_minimum(files: Files) -> tuple[str, Evidence] | None:
    """The lowest flash-attn that transformers accepts as flash_attention_2 on CUDA."""
    path = "transformers/utils/import_utils.py"
    text = files.get(path, "")
    m = re.search(r"def is_flash_attn_2_available\(.*?\n(?=@|def )", text, re.S)
    if not m:
        return None
    body = m.group()
    cuda = re.search(
        r"torch\.version\.cuda:\s*\n\s*return version\.parse\([^\n]*?\) >= "
        r"version\.parse\(\"([\d.]+)\"\)",
        body,
    )
    plain = list(re.finditer(r">= version\.parse\(\"([\d.]+)\"\)", body))
    found = cuda if cuda else (plain[0] if len({p[1] for p in plain}) == 1 else None)
    if found is None:
        return None
    # the line of the comparison itself (a comment above it may name the same version)
    line = text[: m.start()].count("\n") + body[: found.start(1)].count("\n") + 1
    return found[1], (path, line)


def fa2_kernel(files: Files) -> tuple[str, Evidence] | None:
    """The Hub kernel transformers loads for flash_attention_2 when it does not accept the installed
    flash-attn (or there is none) and the ``kernels`` package is installed: "repo" or "rocm-repo|repo"."""
    path = "transformers/modeling_utils.py"
    ev = _grep(
        files, re.escape(path) + "$", r'applicable_attn_implementation = "kernels-community/flash-attn'
    )
    if ev is not None:
        line = files[path].splitlines()[ev[1] - 1]
        return line.split('"')[1], ev
    ev = _grep(files, re.escape(path) + "$", r"applicable_attn_implementation = FLASH_ATTN_KERNEL_FALLBACK\[")
    if ev is None:
        return None
    table = re.compile(
        r'FLASH_ATTN_KERNEL_FALLBACK = \{\s*"flash_attention_2":\s*\(?\s*'
        r'(?:"(?P<rocm>[^"]+)" if is_rocm_platform\(\) else )?"(?P<repo>[^"]+)"'
    )
    for name in (path, "transformers/modeling_flash_attention_utils.py"):
        m = table.search(files.get(name, ""))
        if m:
            return (f"{m['rocm']}|{m['repo']}" if m["rocm"] else m["repo"]), ev
    return None


def kernels_range(files: Files) -> tuple[str, Evidence] | None:
    """The ``kernels`` versions transformers' is_kernels_available() accepts: "min,max" (either empty)."""
    path = "transformers/utils/import_utils.py"
    text = files.get(path, "")
    ev = _grep(files, re.escape(path) + "$", r"def is_kernels_available\(")
    if ev is None:
        return None
    lo = re.search(r'^KERNELS_MIN_VERSION = "([^"]+)"', text, re.M)
    hi = re.search(r'^KERNELS_MAX_VERSION = "([^"]+)"', text, re.M)
    if lo is not None:
        ev = (path, text[: lo.start()].count("\n") + 1)
    return f"{lo[1] if lo else ''},{hi[1] if hi else ''}", ev


def cb_counts_kernels(files: Files) -> Evidence:
    """Continuous batching switches a model to flash_attention_2 when flash-attn *or its Hub kernel* is
    available (``is_flash_attn_2_available(kernels_fallback_ok=True)``)."""
    return _grep(files, r"continuous_batching", r"is_flash_attn_2_available\(kernels_fallback_ok=True\)")


def sliding_window_no_block_table(files: Files) -> Evidence:
    """A model with sliding-window layers never takes the block-table decode path."""
    return _grep(files, r"continuous_batching", r"supports_block_table = False") or _grep(
        files, r"continuous_batching", r"Disable the decode path if the model has sliding window"
    )


def block_table_switch(files: Files) -> Evidence:
    """``ContinuousBatchingConfig(max_blocks_per_request=0)`` turns the block-table decode path off."""
    return _grep(
        files, r"generation/configuration_utils\.py$", r"Setting this to 0 disables the fast decode path"
    )


def block_table_on_by_default(files: Files) -> Evidence:
    """An unset max_blocks_per_request gets a non-zero default: the decode path is on unless turned off
    (before, an unset one meant 0: off unless asked for)."""
    return _grep(files, r"continuous_batching", r'"max_blocks_per_request": [1-9]') or _grep(
        files, r"continuous_batching", r"max_blocks_per_request = continuous_batching_config\.fallback_max"
    )


def xpu_block_table(files: Files) -> Evidence:
    """flash_attention_2 on Intel XPU (through the Hub kernel kernels-community/flash-attn2) takes the
    block-table decode path."""
    return _grep(files, r"continuous_batching", r"is_flash_attention_requested\(config, version=2\) and xpu")


def fa3_supported(files: Files) -> Evidence:
    """attn_implementation="flash_attention_3" exists: ``is_flash_attn_3_available`` is defined."""
    return _grep(files, r"utils/import_utils\.py$", r"def is_flash_attn_3_available\(")


def fa3_by_distribution(files: Files) -> Evidence:
    """FA3 counts as available only when ``flash_attn_interface`` belongs to the flash-attn-3 distribution:
    a copy of the module under another distribution's name is not FA3 to transformers."""
    return _grep(files, r"utils/import_utils\.py$", r"\"flash-attn-3\" in \[")


def fa3_page_table(files: Files) -> Evidence:
    """The block table goes to a kernel as ``page_table`` when its function has no ``block_table`` (FA3's
    flash_attn_with_kvcache, read by signature)."""
    return _grep(
        files, r"modeling_flash_attention_utils\.py$", r"flash_kwargs\[\"page_table\"\] = block_table"
    )


def cb_fa3_first(files: Files) -> Evidence:
    """Continuous batching switches an eager/SDPA model to flash_attention_3 when FA3 (or its Hub kernel)
    is available, before it tries flash_attention_2."""
    return _grep(files, r"continuous_batching", r"is_flash_attn_3_available\(kernels_fallback_ok=True\)")


def generate_batch(files: Files) -> Evidence:
    """``model.generate_batch(...)`` exists: the plainest way code takes the paged path."""
    return _grep(files, r"generation/continuous_batching", r"def generate_batch\(")


def cache_implementation_paged(files: Files) -> Evidence:
    """``generate(..., cache_implementation="paged")`` re-routes to continuous batching."""
    return _grep(files, r"generation/utils\.py$", r'cache_implementation"\) == "paged"')


def paged_prefix_deprecated(files: Files) -> Evidence:
    """A ``"paged|NAME"`` attn_implementation (but ``paged|eager``) is deprecated and taken as ``NAME``
    (before, ``paged|`` named the paged variant of an implementation)."""
    return _grep(files, r"modeling_utils\.py$", r"The `paged\|` prefix is no longer needed")


def flash_request_rule(files: Files) -> tuple[str, Evidence] | None:
    """Which ``attn_implementation`` names count as flash-attn N (the block-table path admits 2 and 3):
    the pattern ``is_flash_attention_requested`` matches, or the exact names compared before it."""
    ev = _grep(files, r"utils/generic\.py$", r're\.match\(r"\.\*flash\.\*" \+ str\(v\)')
    if ev is not None:
        return ".*flash.*{version}", ev
    ev = _grep(files, r"utils/generic\.py$", r"def is_flash_attention_requested\(")
    if ev is not None:
        return "flash substring", ev
    return None


def fa3_kernel(files: Files) -> tuple[str, Evidence] | None:
    """The Hub kernel transformers loads for ``flash_attention_3`` when FA3 is not installed."""
    path = "transformers/modeling_flash_attention_utils.py"
    m = re.search(
        r'"flash_attention_3":\s*\(?\s*(?:"(?P<rocm>[^"]+)" if is_rocm_platform\(\) else )?"(?P<repo>[^"]+)"',
        files.get(path, ""),
    )
    if m is None:
        return None
    line = files[path][: m.start()].count("\n") + 1
    return (f"{m['rocm']}|{m['repo']}" if m["rocm"] else m["repo"]), (path, line)


HUB = "transformers/integrations/hub_kernels.py"
MFAU = "transformers/modeling_flash_attention_utils.py"


def attn_kernel_version(files: Files) -> Evidence:
    """``attn_implementation="org/repo"`` without ``@rev`` loads the Hub kernel with a ``version``
    (``get_kernel(repo_id, revision=rev, version=version)``): a major version's branch, not main."""
    return _grep(files, re.escape(HUB) + "$", r"get_kernel\(repo_id, revision=rev, version=version\b")


def _assigned(text: str, name: str) -> tuple[Any, int] | None:
    """The literal a module-level ``name = ...`` assigns, and its line."""
    import ast

    for node in ast.parse(text).body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            try:
                return ast.literal_eval(node.value), node.lineno
            except ValueError:
                return None
    return None


def attn_kernel_versions(files: Files) -> tuple[str, Evidence] | None:
    """Which version that is: "repo:ORG/REPO=N;...;default=N" (a table by repository),
    "flashK=N;...;default=N" (by the flash-attn major the name asks for, ``.*flash.*K``), or None."""
    hub, mfau = files.get(HUB, ""), files.get(MFAU, "")
    default = re.search(r"FLASH_ATTN_KERNEL_VERSIONS\.get\(repo_id, (\d+)\)", hub)
    table = _assigned(mfau, "FLASH_ATTN_KERNEL_VERSIONS") if default else None
    if table is not None:
        rows = ";".join(f"repo:{repo}={n}" for repo, n in table[0].items())
        return f"{rows};default={default[1]}", (MFAU, table[1])  # type: ignore[index]
    mapping = _assigned(hub, "_FLASH_ATTN_KERNEL_VERSION_MAPPING")
    fallback = _assigned(hub, "_DEFAULT_ATTN_KERNEL_VERSION")
    if mapping is not None and fallback is not None:
        rows = ";".join(f"flash{k}={n}" for k, n in mapping[0].items())
        return f"{rows};default={fallback[0]}", (HUB, mapping[1])
    ev = _grep(files, re.escape(HUB) + "$", r"version = 0 if is_fa4 else 1\b")
    return ("flash4=0;default=1", ev) if ev else None


FACTS: dict[str, Callable[[Files], Evidence]] = {
    "attn_kernel_version": attn_kernel_version,
    "continuous_batching": continuous_batching,
    "block_table_key_check": block_table_key_check,
    "fa2_block_table_on_cuda": fa2_block_table_on_cuda,
    "block_table_silently_dropped": block_table_silently_dropped,
    "fa4_block_table_on_cuda": fa4_block_table_on_cuda,
    "fa4_supported": fa4_supported,
    "fa4_no_kvcache": fa4_no_kvcache,
    "cb_counts_kernels": cb_counts_kernels,
    "sliding_window_no_block_table": sliding_window_no_block_table,
    "block_table_switch": block_table_switch,
    "block_table_on_by_default": block_table_on_by_default,
    "xpu_block_table": xpu_block_table,
    "fa3_supported": fa3_supported,
    "fa3_by_distribution": fa3_by_distribution,
    "fa3_page_table": fa3_page_table,
    "cb_fa3_first": cb_fa3_first,
    "generate_batch": generate_batch,
    "cache_implementation_paged": cache_implementation_paged,
    "paged_prefix_deprecated": paged_prefix_deprecated,
}
# Facts with a value that can change from release to release: the value, and since when it holds.
STEPS: dict[str, Callable[[Files], tuple[str, Evidence] | None]] = {
    "fa2_minimum_on_cuda": fa2_minimum,
    "fa2_kernel_fallback": fa2_kernel,
    "kernels_range": kernels_range,
    "flash_request_rule": flash_request_rule,
    "fa3_kernel_fallback": fa3_kernel,
    "attn_kernel_versions": attn_kernel_versions,
}


def read_wheel(path: Path) -> Files:
    with zipfile.ZipFile(path) as z:
        return {
            n: z.read(n).decode("utf-8", "replace")
            for n in z.namelist()
            if n.endswith(".py")
            and (
                "generation/" in n
                or "integrations/" in n
                or n.endswith(
                    (
                        "modeling_flash_attention_utils.py",
                        "import_utils.py",
                        "modeling_utils.py",
                        "utils/generic.py",
                    )
                )
            )
        }


def main(argv: list[str] | None = None) -> int:  # noqa: C901 - complexity 11, to split or justify (issue 45)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheels", type=Path, help="folder of transformers-X-py3-none-any.whl files")
    ap.add_argument("--output", type=Path, default=Path(__file__).parents[1] / "fa_lint/kb/transformers.json")
    args = ap.parse_args(argv)

    wheels = sorted(
        args.wheels.glob("transformers-*-py3-none-any.whl"), key=lambda p: Version(p.name.split("-")[1])
    )
    if not wheels:
        print(f"error: no transformers wheels in {args.wheels}", file=sys.stderr)
        return 1
    observed: dict[str, list[tuple[str, Evidence]]] = {k: [] for k in FACTS}
    valued: dict[str, list[tuple[str, str, Evidence]]] = {k: [] for k in STEPS}
    for wheel in wheels:
        version = wheel.name.split("-")[1]
        files = read_wheel(wheel)
        for name, fact in FACTS.items():
            observed[name].append((version, fact(files)))
        for name, step in STEPS.items():
            found = step(files)
            if found:
                valued[name].append((version, found[0], found[1]))

    facts: dict[str, Any] = {}
    for name, seen in observed.items():
        first = next((i for i, (_, ev) in enumerate(seen) if ev), None)
        if first is None:
            facts[name] = {"since": None, "checked": [v for v, _ in seen]}
            continue
        later_false = [v for v, ev in seen[first:] if not ev]
        version, evidence = seen[first]
        facts[name] = {
            "since": version,
            "last_without": seen[first - 1][0] if first else None,
            "until": later_false[0] if later_false else None,
            "evidence": f"{evidence[0]}:{evidence[1]}" if evidence else None,
        }
    steps: dict[str, list[dict[str, Any]]] = {}
    for name, values in valued.items():
        steps[name] = []
        for version, value, ev in values:
            if not steps[name] or steps[name][-1]["value"] != value:
                steps[name].append(
                    {"since": version, "value": value, "evidence": f"{ev[0]}:{ev[1]}" if ev else None}
                )
    doc = {
        "schema": 2,
        "generator": "scripts/build_transformers_kb.py",
        "wheels_read": [w.name.split("-")[1] for w in wheels],
        "facts": facts,
        **steps,
    }
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.output} from {len(wheels)} wheels", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
