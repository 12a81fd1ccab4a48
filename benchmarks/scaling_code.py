#!/usr/bin/env python3
"""The code layer's cost grows linearly with what a pull request commits: each input at 1x and 10x.

    python benchmarks/scaling_code.py [--only NAME ...] [--repeat N] [--keep DIR]

The inputs of shared/reliability 48, 49 and 60 (round 5), which grew with exponents 1.37 to 1.89 when
each rule question filtered every use or environment again; and a tree of Python files in the shapes
the prefilter must see through (reliability 50, 51, 59: NFKC identifiers, a coding declaration, star
imports). Each is checked by a whole fa-lint process, timed by its CPU time (``scaling.measure``); the
exponent is log(ratio) / log(10), and the target ratio is at most 11 (an exponent of about 1.04).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from scaling import Measure, measure  # the sibling script (run as a script)

Write = Callable[[Path], list[str]]


def pins_times_uses(n: int) -> Write:
    """reliability/48: n pins (each a FAL001) beside a serve.py of n generate_batch() calls."""

    def write(folder: Path) -> list[str]:
        pins = "".join(f"flash-attn==2.4.{1 + i % 2}  # {i}\n" for i in range(n))
        (folder / "requirements.txt").write_text(pins + "transformers==4.56.0\n")
        (folder / "serve.py").write_text(
            "from transformers import AutoModelForCausalLM\n" + "m.generate_batch(x)\n" * n
        )
        return ["."]

    return write


def services(n: int) -> Write:
    """reliability/49: n service folders, each with its requirements and code asking for FA3 (FAL021)."""

    def write(folder: Path) -> list[str]:
        for i in range(n):
            sub = folder / f"s{i}"
            sub.mkdir()
            (sub / "requirements.txt").write_text("flash-attn==2.6.3\ntransformers==4.56.0\n")
            (sub / "a.py").write_text(
                "from transformers import AutoModel\n"
                "AutoModel.from_pretrained('x', attn_implementation='flash_attention_3')\n"
            )
        return ["."]

    return write


def custom_kernels(n: int) -> Write:
    """reliability/60: n substitutions and n custom kernels without block_table (each a FAL019)."""

    def write(folder: Path) -> list[str]:
        (folder / "requirements.txt").write_text("flash-attn==2.6.3\ntransformers==4.56.0\n")
        body = (
            "setattr(flash_attn, 'flash_attn_with_kvcache', f)\ndef flash_attn_with_kvcache(q):\n    pass\n"
        )
        (folder / "k.py").write_text("import flash_attn\n" + body * n)
        return ["."]

    return write


def hidden_spellings(n: int) -> Write:
    """n Python files, a third each with an NFKC spelling, a coding declaration, a star import."""
    shapes = (
        "from \ufb02ash_attn import \ufb02ash_attn_with_kvcache\n"
        "\ufb02ash_attn_with_kvcache(q, k, v, softcap=1.0)\n",
        "# -*- coding: utf-7 -*-\n"
        "from flash+AF8-attn import flash+AF8-attn+AF8-with+AF8-kvcache as f\nf(q)\n",
        "from flash_attn import *\nflash_attn_with_kvcache(q, k, v, softcap=1.0)\n",
    )

    def write(folder: Path) -> list[str]:
        (folder / "requirements.txt").write_text("flash-attn==2.5.8\n")
        for i in range(n):
            sub = folder / f"d{i // 500}"
            sub.mkdir(exist_ok=True)
            text = shapes[i % 3] + "# 注释\n" * 20  # non-ASCII comments: what an ordinary file has
            (sub / f"m{i}.py").write_text(text, encoding="utf-8")
        return ["."]

    return write


CASES: dict[str, tuple[Callable[[int], Write], int]] = {
    "pins-x-uses": (pins_times_uses, 1_000),
    "services-x-envs": (services, 500),
    "customs-x-uses": (custom_kernels, 1_000),
    "hidden-spellings": (hidden_spellings, 1_000),
}
TARGET = 11.0


def run(name: str, work: Path, repeat: int) -> bool:
    make, n = CASES[name]
    measured: list[Measure] = []
    for size in (n, 10 * n):
        folder = work / name / str(size)
        folder.mkdir(parents=True)
        m = measure(folder, make(size)(folder), repeat)
        measured.append(m)
        print(f"{name:<18} {size:>8,} {m.cpu:>8.2f}s cpu {m.wall:>8.2f}s wall", flush=True)
    ratio = measured[1].cpu / measured[0].cpu
    ok = ratio <= TARGET
    exponent = math.log(ratio) / math.log(10)
    verdict = f"(target <= {TARGET}x){'' if ok else '  MISSED'}"
    print(f"{name:<18} {'ratio':>8} {ratio:>8.1f}x exponent {exponent:.2f} {verdict}")
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=list(CASES), help="run only these cases")
    ap.add_argument("--repeat", type=int, default=1, help="runs per size; the cheapest counts (default 1)")
    ap.add_argument("--keep", metavar="DIR", help="write the inputs here and keep them (default: a temp dir)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.keep or tmp)
        os.makedirs(work, exist_ok=True)
        results = [run(name, work, args.repeat) for name in CASES if not args.only or name in args.only]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
