#!/usr/bin/env python3
"""The shell readers' cost grows linearly with the input: each input at 1x and 10x, timed in one run.

    python benchmarks/scaling_shell.py [--scale S] [--repeat R]

Inputs from issue 15 ("Scaling inputs" in shared/reliability/README.md), which once took minutes:
a Dockerfile RUN continued over many lines with comment lines between them, a Dockerfile of ARGs
each used by a later RUN, and a shell script of variables each used by a later install. Each is
checked end to end (``engine.check``: parse, environments, rules) at its base size and at ten times
that (the issue's sizes: 50,000 continued lines, 20,000 ARG + RUN pairs, 20,000 variables +
installs); the ratio of the two times should stay near 10 (the target is at most 11). Timings are
this process's CPU time, the best of ``--repeat`` runs, which keeps a busy machine's noise out.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from fa_lint import engine

TARGET = 11.0


def continued_run(n: int) -> tuple[str, str]:
    lines = "".join(f"    # comment {i}\n    package-{i} \\\n" for i in range(n))
    return "Dockerfile", f"FROM python:3.11\nRUN pip install \\\n{lines}    flash-attn==2.4.2\n"


def args_and_runs(n: int) -> tuple[str, str]:
    args = "".join(f"ARG V{i}=2.{i % 9}.{i % 4}\n" for i in range(n))
    runs = "".join(f"RUN pip install flash-attn==${{V{i}}}\n" for i in range(n))
    return "Dockerfile", f"FROM python:3.11\n{args}{runs}"


def script_variables(n: int) -> tuple[str, str]:
    variables = "".join(f"V{i}=2.{i % 9}.{i % 4}\n" for i in range(n))
    installs = "".join(f'pip install "flash-attn==$V{i}"\n' for i in range(n))
    return "install.sh", f"#!/bin/sh\n{variables}{installs}"


def stage_chain(n: int) -> tuple[str, str]:
    """Issue 23: stages each FROM the one before, with an ENV and an install (n^2 in image scopes)."""
    lines = ["FROM python:3.11 AS s0", "ARG FA=2.4.2", "ENV A0=1"]
    for i in range(1, n):
        lines += [f"FROM s{i - 1} AS s{i}", f"ENV A{i}=$A{i - 1}", "RUN pip install flash-attn==$FA"]
    return "Dockerfile", "\n".join(lines) + "\n"


def doubling(n: int) -> tuple[str, str]:
    """Issue 23: variables that double each other, then more that copy the last: the expansion budget
    (exponential before; the budget is spent in the first 20 lines, at both sizes)."""
    lines = ['V0="flash-attn==2.4.2 "'] + [f'V{i}="$V{i - 1}$V{i - 1}"' for i in range(1, 24)]
    lines += [f'W{i}="$V23"' for i in range(n)] + ["pip install $V23"]
    return "install.sh", "\n".join(lines) + "\n"


def one_stage_installs(n: int) -> tuple[str, str]:
    """One stage of many installs over torch, then flash-attn: the torch it ends with is worked out
    command by command (n squared before: the set of every package installed was copied at each)."""
    installs = "".join(f"RUN pip install pkg-{i}==1.0\n" for i in range(n))
    return "Dockerfile", (
        f"FROM nvidia/cuda:12.1.1-devel-ubuntu22.04\nRUN pip install torch==2.3.1\n{installs}"
        "RUN pip install --no-build-isolation flash-attn==2.4.2\n"
    )


def error_recovery(n: int) -> tuple[str, str]:
    """Lines tree-sitter-bash recovers from at a super-linear cost (88 s for 1,000 before its parse was
    bounded): at 10x the first parse is stopped and the lines are read one at a time."""
    return "install.sh", ("echo " + "a)b " * 40 + "\n") * n + "pip install flash-attn==2.4.2\n"


def helper_calls(n: int) -> tuple[str, str]:
    """One helper called with n different arguments (issue 40 item 1): each call is followed."""
    calls = "".join(f"inst pkg-{i}==1.0\n" for i in range(n))
    return "install.sh", f'inst() {{ pip install "$@"; }}\n{calls}inst flash-attn==2.4.2\n'


def nested_functions(n: int) -> tuple[str, str]:
    """n functions, each defining another, never called (reliability/61): each body read once."""
    defs = "".join(f"outer{i}() {{\n  inner{i}() {{ pip install pkg-{i}; }}\n}}\n" for i in range(n))
    return "install.sh", f"{defs}pip install flash-attn==2.4.2\n"


def substitutions(n: int) -> tuple[str, str]:
    """n command substitutions, each run in a subshell of its own (issue 40 item 1)."""
    lines = "".join(f'V{i}="$(pip download pkg-{i} && echo `date`)"\n' for i in range(n))
    return "install.sh", f"{lines}pip install flash-attn==2.4.2\n"


INPUTS: dict[str, tuple[Callable[[int], tuple[str, str]], int]] = {  # label: (input, base size)
    "Dockerfile, continued RUN lines with comments": (continued_run, 5000),
    "Dockerfile, ARG + RUN pip install flash-attn==${Vn}": (args_and_runs, 2000),
    "shell script, variables + installs": (script_variables, 2000),
    "Dockerfile, a chain of stages (issue 23)": (stage_chain, 3000),
    "shell script, doubling variables + copies (issue 23)": (doubling, 2000),
    "shell script, lines the grammar recovers from at a cost": (error_recovery, 100),
    "Dockerfile, one stage of installs over torch": (one_stage_installs, 2000),
    "shell script, one helper called with n arguments": (helper_calls, 1000),
    "shell script, functions defining functions": (nested_functions, 1000),
    "shell script, command substitutions": (substitutions, 1000),
}


def timed(make: Callable[[int], tuple[str, str]], n: int, repeat: int) -> float:
    name, text = make(n)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text(text, encoding="utf-8")
        times = []
        for _ in range(repeat):
            start = time.process_time()  # CPU time: other processes on a busy machine do not count
            engine.check([str(path)])
            times.append(time.process_time() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the base sizes (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="best of R runs (default 3)")
    args = parser.parse_args(argv)
    name, text = script_variables(10)
    with tempfile.TemporaryDirectory() as tmp:  # imports, the grammar and the knowledge base, untimed
        (Path(tmp) / name).write_text(text, encoding="utf-8")
        engine.check([str(Path(tmp) / name)])
    # What is loaded by now stays for the whole run: keep it out of the garbage collector's full
    # passes, which otherwise rescan it a few more times at 10x and bend the ratio for no input cost.
    gc.collect()
    gc.freeze()
    worst = 0.0
    print(f"{'input':<55} {'1x':>8} {'10x':>8} {'ratio':>6}")
    for label, (make, base) in INPUTS.items():
        size = max(1, round(base * args.scale))
        small = timed(make, size, args.repeat)
        large = timed(make, size * 10, args.repeat)
        ratio = large / small
        worst = max(worst, ratio)
        print(f"{label:<55} {small:>7.2f}s {large:>7.2f}s {ratio:>5.1f}x")
    print(f"worst ratio {worst:.1f}x (target <= {TARGET:.0f}x)")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
