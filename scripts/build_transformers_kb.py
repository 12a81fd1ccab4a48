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
    plain = re.findall(r">= version\.parse\(\"([\d.]+)\"\)", body)
    found = cuda.group(1) if cuda else (plain[0] if len(set(plain)) == 1 else None)
    if found is None:
        return None
    line = text[: m.start()].count("\n") + body[: body.index(found)].count("\n") + 1
    return found, (path, line)


FACTS: dict[str, Callable[[Files], Evidence]] = {
    "continuous_batching": continuous_batching,
    "block_table_key_check": block_table_key_check,
    "fa2_block_table_on_cuda": fa2_block_table_on_cuda,
    "block_table_silently_dropped": block_table_silently_dropped,
    "fa4_block_table_on_cuda": fa4_block_table_on_cuda,
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
                or n.endswith(("modeling_flash_attention_utils.py", "import_utils.py"))
            )
        }


def main(argv: list[str] | None = None) -> int:
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
    minimums: list[tuple[str, str, Evidence]] = []
    for wheel in wheels:
        version = wheel.name.split("-")[1]
        files = read_wheel(wheel)
        for name, fact in FACTS.items():
            observed[name].append((version, fact(files)))
        mini = fa2_minimum(files)
        if mini:
            minimums.append((version, mini[0], mini[1]))

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
    steps: list[dict[str, Any]] = []
    for version, minimum, ev in minimums:
        if not steps or steps[-1]["flash_attn_min"] != minimum:
            steps.append(
                {"since": version, "flash_attn_min": minimum, "evidence": f"{ev[0]}:{ev[1]}" if ev else None}
            )
    doc = {
        "schema": 1,
        "generator": "scripts/build_transformers_kb.py",
        "wheels_read": [w.name.split("-")[1] for w in wheels],
        "facts": facts,
        "fa2_minimum_on_cuda": steps,
    }
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.output} from {len(wheels)} wheels", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
