#!/usr/bin/env python3
"""Validate and rewrite fa_lint/kb/gpus.json: NVIDIA GPUs by name, and their compute capability.

Maintainer script; fa-lint never runs it. NVIDIA publishes the table as a web page
(https://developer.nvidia.com/cuda-gpus) that no script of ours can fetch reliably, so gpus.json is
data: every row names its source (a key of ``sources``) and the architecture family of its chip
(``arch``). This script is what keeps the data honest:

* every row's capability is one its family has (``architectures``: NVIDIA's compute capability per
  architecture, with its own source), so a row copied wrong (a Turing card at 8.6) fails here;
* every source key exists, every capability reads ``X.Y``, every pattern compiles;
* no two rows claim one spelling: each row's own name, in the spellings files use (``RTX 2070``,
  ``rtx2070``, ``RTX-2070``, ``nvidia-geforce-rtx-2070``, ``rtx_2070`` as a Slurm gres type), maps
  to that row and no other;
* rows are written in one order (capability, newest first; then name) so a diff shows only the change.

    python scripts/build_gpus_kb.py            # rewrite gpus.json in canonical order
    python scripts/build_gpus_kb.py --check    # exit 1 on a problem or a file that is not canonical
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

KB = Path(__file__).resolve().parent.parent / "fa_lint" / "kb" / "gpus.json"


def _normal(text: str) -> str:
    # the same normalisation as fa_lint.kb.gpus: lower case, any run of space _ . / - as one -
    return re.sub(r"[\s_./-]+", "-", text.lower())


def _matches(row: dict[str, Any], text: str) -> bool:
    norm = _normal(text)
    return any(re.search(rf"(?<![a-z0-9])(?:{m})(?![a-z0-9])", norm) for m in row["match"])


def spellings(name: str) -> list[str]:
    """How files write a GPU's name: the product name, without the brand, glued, dashed, GKE-style."""
    # "Quadro" stays: a bare "RTX 6000" is Quadro RTX 6000 or RTX 6000 Ada, and names neither
    short = re.sub(r"^(?:NVIDIA|GeForce|Tesla|Jetson)\s+", "", name)
    out = [name, short, short.replace(" ", "-"), short.replace(" ", "_")]
    if short.count(" ") == 1:  # two words glue: RTX2070, TITANRTX (not RTXPRO6000Blackwell)
        out.append(short.replace(" ", ""))
    out.append("nvidia-" + _normal(name).removeprefix("nvidia-"))
    return list(dict.fromkeys(out))


def problems(doc: dict[str, Any]) -> list[str]:  # noqa: C901 - complexity 17, to split or justify (issue 45)
    out: list[str] = []
    families = {k: set(v["cc"]) for k, v in doc["architectures"].items()}
    for key, arch in doc["architectures"].items():
        if arch["source"] not in doc["sources"]:
            out.append(f"architecture {key}: unknown source {arch['source']!r}")
    rows = doc["gpus"]
    for row in rows:
        name = row["name"]
        if row["source"] not in doc["sources"]:
            out.append(f"{name}: unknown source {row['source']!r}")
        if not re.fullmatch(r"\d+\.\d", row["cc"]):
            out.append(f"{name}: capability {row['cc']!r} is not X.Y")
        if row.get("arch") not in families:
            out.append(f"{name}: unknown architecture {row.get('arch')!r}")
        elif row["cc"] not in families[row["arch"]]:
            has = sorted(families[row["arch"]])
            out.append(f"{name}: {row['arch']} GPUs have compute capability {has}, not {row['cc']}")
        for m in row["match"]:
            try:
                re.compile(m)
            except re.error as e:
                out.append(f"{name}: pattern {m!r}: {e}")
                continue
        for text in spellings(name):
            hits = [r["name"] for r in rows if _matches(r, text)]
            if hits != [name]:
                out.append(f"{name}: {text!r} matches {hits or 'no row'}")
    for row in rows:
        if "cpu" in row and row.get("cpu_source") not in doc["sources"]:
            out.append(f"{row['name']}: its cpu has no source")
    for row in doc["instances"] + doc.get("runner_tags", []):
        if row["source"] not in doc["sources"]:
            out.append(f"{row}: unknown source")
        if row["gpu"] not in {r["name"] for r in rows}:
            out.append(f"{row}: no GPU row named {row['gpu']!r}")
    return out


def canonical(doc: dict[str, Any]) -> str:
    doc = dict(doc)
    doc["gpus"] = sorted(doc["gpus"], key=lambda r: (tuple(-int(p) for p in r["cc"].split(".")), r["name"]))
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 on a problem")
    parser.add_argument("--kb", type=Path, default=KB)
    args = parser.parse_args(argv)
    text = args.kb.read_text(encoding="utf-8")
    doc = json.loads(text)
    found = problems(doc)
    for p in found:
        print(f"{args.kb}: {p}", file=sys.stderr)
    if found:
        return 1
    want = canonical(doc)
    if args.check:
        if want != text:
            print(f"{args.kb}: not in canonical order; run scripts/build_gpus_kb.py", file=sys.stderr)
            return 1
        return 0
    args.kb.write_text(want, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
