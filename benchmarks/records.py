#!/usr/bin/env python3
"""What the project's records cost at every start, made three ways, as whole processes (issue 45).

    python benchmarks/records.py [--repeat N]

Each child is a fresh interpreter that imports every fa-lint module a check of ``tests/golden/every-rule``
loads (the list is taken from one such check, first), with the ``NamedTuple`` of
``fa_lint/_records.py`` being, in turn:

- ``metaclass``: the project's own (``fa_lint/_records.py``, what a run uses);
- ``typing``: ``typing.NamedTuple``, which checks each field's annotation;
- ``dataclass``: each record a ``@dataclass(frozen=True, slots=True)`` of the same fields, defaults and
  body (the ``dataclasses`` module imported by the child, as it would be by the project);

beside a child that imports the same third-party and standard modules only (``deps``: what no choice of
records changes) and a bare ``python -c pass``. A child only imports: records made as dataclasses are
not tuples, so a check could not run on them. The variants stand in for the module before any fa-lint
import (``sys.modules``), so each class statement of the project runs as written.

Time is the child's CPU time (user + system, from ``wait4``), the children alternating, ``--repeat``
times; medians. On a machine shared with other jobs wall time counts the waits for a core, CPU time
does not, but it still moves by more than the records' share. ``--instructions`` counts each child's
instructions instead, once, under valgrind's callgrind (``PYTHONHASHSEED=0``): the same on every run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FOLDER = REPO / "tests" / "golden" / "every-rule"

LIST = """
import io, sys
from fa_lint.cli import main
main(['.', '--format', 'json', '--isolated'], io.StringIO(), io.StringIO())
print(' '.join(sorted(m for m in sys.modules if m.startswith('fa_lint'))))
print(' '.join(sorted(m for m in sys.modules if not m.startswith('fa_lint'))))
"""

VARIANTS = {
    "metaclass": "",
    "typing": """
import sys, types, typing
m = types.ModuleType('fa_lint._records'); m.NamedTuple = typing.NamedTuple
import fa_lint; sys.modules['fa_lint._records'] = m
""",
    "dataclass": """
import sys, types, dataclasses
class _Meta(type):
    def __new__(cls, name, bases, ns):
        for key in ns.get('__annotations__', {}):  # a mutable default, as a dataclass must have it
            if key in ns and type(ns[key]).__hash__ is None:
                ns[key] = dataclasses.field(default_factory=lambda v=ns[key]: v)
        made = type.__new__(type, name, tuple(b for b in bases if b is not NamedTuple) or (object,), ns)
        return dataclasses.dataclass(frozen=True, slots=True)(made)
NamedTuple = type.__new__(_Meta, 'NamedTuple', (), {})
m = types.ModuleType('fa_lint._records'); m.NamedTuple = NamedTuple
import fa_lint; sys.modules['fa_lint._records'] = m
""",
}


def cpu(code: str) -> float:
    """The CPU time of ``python -c code``, started afresh."""
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=FOLDER, stdout=subprocess.DEVNULL)
    _, status, use = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"a child failed: {code[:200]}")
    return use.ru_utime + use.ru_stime


def instructions(code: str) -> int:
    """The instructions ``python -c code`` runs, as callgrind counts them."""
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", code],
        cwd=FOLDER,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    (line,) = [x for x in proc.stderr.splitlines() if "Collected :" in x]
    return int(line.split(":")[-1].replace(",", ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--instructions", action="store_true", help="count instructions (valgrind)")
    args = parser.parse_args()
    listed = subprocess.run(
        [sys.executable, "-c", LIST], cwd=FOLDER, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    ours, others = listed[0].split(), listed[1].split()
    imports = "".join(f"import {m}\n" for m in ours)
    deps = f"import importlib\nfor m in {others!r}:\n    try:\n        importlib.import_module(m)\n"
    deps += "    except Exception:\n        pass\n"  # a private module that imports only through another
    children = {name: setup + imports for name, setup in VARIANTS.items()}
    children["deps"] = deps
    children["bare"] = "pass"
    if args.instructions:
        counts = {name: instructions(code) for name, code in children.items()}
        print(f"{len(ours)} fa-lint modules; millions of instructions; Python {sys.version.split()[0]}")
        for name, n in counts.items():
            own = (n - counts["deps"]) / 1e6
            print(f"{name:<10} {n / 1e6:9.1f} {own:11.1f} {n / counts['metaclass']:12.3f}x")
        return 0
    times: dict[str, list[float]] = {name: [] for name in children}
    for _ in range(args.repeat):
        for name, code in children.items():
            times[name].append(cpu(code))
    median = {name: statistics.median(t) for name, t in times.items()}
    own = median["metaclass"] - median["deps"]
    print(f"{len(ours)} fa-lint modules; CPU ms, median of {args.repeat}; Python {sys.version.split()[0]}")
    print(f"{'child':<10} {'process':>9} {'minus deps':>11} {'vs metaclass':>13}")
    for name in children:
        m = median[name]
        ratio = m / median["metaclass"]
        print(f"{name:<10} {m * 1000:9.1f} {(m - median['deps']) * 1000:11.1f} {ratio:12.3f}x")
    print(f"fa-lint's own import with the metaclass: {own * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
