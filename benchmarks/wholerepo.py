#!/usr/bin/env python3
"""fa-lint on whole repositories against another release of it, measured pair by pair.

    python benchmarks/wholerepo.py CLONES --base CHECKOUT [--repeat N] [--only NAME,...]

CLONES holds the repositories (``../shared/wholerepo``'s 23 clones: ``/work/clones``); CHECKOUT is a
working tree of the release to compare with (``git worktree add --detach DIR 692eb9a``). Both are
installed as ``bench.py`` installs fa-lint (the package compiled, the console script pip writes, in a
fresh virtual environment each, with this interpreter's packages as their dependencies), and each
repository is checked as ``wholerepo-check`` checks it (``fa-lint --format json .`` in its folder),
the two releases alternating, ``--repeat`` pairs, so that the load of a shared machine falls on both
alike. Time is the child's CPU time (user + system, ``wait4``); the table shows each side's fastest and
median run and the ratio of the medians; the total sums each side's per-repository minimums and
medians. Exit 0 when the total of medians is no slower than the base's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from bench import install, sample


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clones", type=Path)
    ap.add_argument("--base", type=Path, required=True, help="a working tree of the release to compare with")
    ap.add_argument("--repeat", type=int, default=5, help="pairs of runs per repository (default 5)")
    ap.add_argument("--only", default="", help="comma-separated repository names")
    args = ap.parse_args(argv)
    only = {name for name in args.only.split(",") if name}
    repos = sorted(p for p in args.clones.iterdir() if p.is_dir() and (not only or p.name in only))
    with tempfile.TemporaryDirectory() as tmp:
        ours = install(Path(tmp) / "ours").fa_lint
        base = install(Path(tmp) / "base", args.base.resolve()).fa_lint
        totals = dict.fromkeys(COLUMNS, 0.0)
        print(f"{'repository':<20} " + " ".join(f"{key:>9}" for key in COLUMNS) + "  ratio")
        for repo in repos:
            runs: dict[str, list[float]] = {"base": [], "ours": []}
            for _ in range(args.repeat):
                for side, cmd in (("base", base), ("ours", ours)):
                    runs[side].append(sample([*cmd, "--format", "json", "."], repo).cpu)
            row = {
                f"{side} {how}": f(runs[side])
                for side in ("base", "ours")
                for how, f in (("min", min), ("med", statistics.median))
            }
            for key, value in row.items():
                totals[key] += value
            print(_line(repo.name, row), flush=True)
        print(_line("total", totals))
    return 0 if totals["ours med"] <= totals["base med"] else 1


COLUMNS = ("base min", "base med", "ours min", "ours med")


def _line(name: str, row: dict[str, float]) -> str:
    figures = " ".join(f"{row[key]:>9.2f}" for key in COLUMNS)
    return f"{name:<20} {figures} {row['ours med'] / row['base med']:>5.2f}x"


if __name__ == "__main__":
    sys.exit(main())
