#!/usr/bin/env python3
"""How fa-lint's cost grows with its input, as ratios measured in one run (issue 15's targets).

    python benchmarks/scaling.py [--only NAME ...] [--repeat N] [--keep DIR]

Each input is written here, then checked by a whole ``python -m fa_lint --format json`` in a child
process of its own, timed by the child's CPU time (user + system, which other processes on a busy
machine disturb less than wall time) and its peak memory (the child's ``ru_maxrss``). A target is a
ratio between two sizes of the same input, or a memory bound; the run exits 1 when one is missed.
The figures of the last run are in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# The child reports its own peak memory; RUSAGE_CHILDREN would give the largest child so far.
_CHILD = (
    "import os, resource, sys\n"
    "from fa_lint.cli import main\n"
    "with open(os.devnull, 'w') as out:\n"
    "    main(sys.argv[1:], out=out, err=out)\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
)
MB = 1024  # ru_maxrss is in KiB on Linux


@dataclass(frozen=True)
class Measure:
    cpu: float  # seconds
    wall: float
    peak_kib: int


def measure(folder: Path, args: list[str], repeat: int) -> Measure:
    """The cheapest of ``repeat`` runs of fa-lint in ``folder``."""
    runs = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, "--isolated", "--format", "json", *args],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"fa-lint failed in {folder}: {proc.stderr}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        runs.append(Measure(cpu, wall, int(proc.stderr.split()[-1])))
    return min(runs, key=lambda m: m.cpu)


# --- inputs: each writes its files into an empty folder and returns the arguments to check them ------


def flash_attn_lines(n: int) -> Callable[[Path], list[str]]:
    def write(folder: Path) -> list[str]:
        (folder / "requirements.txt").write_text("flash-attn==2.4.2\n" * n)
        return ["requirements.txt"]

    return write


def one_line_files(n: int) -> Callable[[Path], list[str]]:
    def write(folder: Path) -> list[str]:
        for i in range(n):
            sub = folder / f"d{i // 1000}"
            sub.mkdir(exist_ok=True)
            pin = "flash-attn==2.4.2" if i % 100 == 0 else "flash-attn==2.6.3"
            (sub / f"requirements-{i}.txt").write_text(pin + "\n")
        return ["."]

    return write


def mixed_requirements(size: int) -> Callable[[Path], list[str]]:
    """Hashed pins, extras with markers, URLs, comments; a flash-attn line every thousand."""

    def write(folder: Path) -> list[str]:
        pins = ["flash-attn==2.4.2", "flash-attn>=2.0", "flash-attn==2.6.3", "flash-attn>=2.5,<3"]
        lines, total, i = [], 0, 0
        while total < size:
            kind = i % 5
            if i % 1000 == 0:
                line = pins[i // 1000 % 4]
            elif kind == 0:
                line = f"package-{i}=={i % 7}.{i % 13}.{i % 5} \\\n    --hash=sha256:{i:064x}"
            elif kind == 1:
                line = f"# comment {i} " + "x" * 40
            elif kind == 2:
                line = f"lib_{i}[extra]>={i % 9}.0; python_version >= '3.{i % 12}'"
            elif kind == 3:
                line = f"tool-{i} @ https://example.com/tool-{i}-1.0.tar.gz"
            else:
                line = f"name{i}~={i % 4}.{i % 10}"
            lines.append(line + "\n")
            total += len(line) + 1
            i += 1
        (folder / "requirements.txt").write_text("".join(lines))
        return ["requirements.txt"]

    return write


def uv_lock(n: int) -> Callable[[Path], list[str]]:
    def write(folder: Path) -> list[str]:
        packages = "".join(f'\n[[package]]\nname = "pkg-{i}"\nversion = "1.{i % 100}.0"\n' for i in range(n))
        flash_attn = '\n[[package]]\nname = "flash-attn"\nversion = "2.4.2"\n'
        (folder / "uv.lock").write_text(f"version = 1\n{packages}{flash_attn}")
        return ["uv.lock"]

    return write


def include_chain(n: int) -> Callable[[Path], list[str]]:
    def write(folder: Path) -> list[str]:
        for i in range(n - 1):
            (folder / f"r{i}.txt").write_text(f"-r r{i + 1}.txt\n")
        (folder / f"r{n - 1}.txt").write_text("flash-attn==2.4.2\n")
        return ["r0.txt"]

    return write


def yaml_aliases(n: int) -> Callable[[Path], list[str]]:
    def write(folder: Path) -> list[str]:
        pip = "".join(f"    - flash-attn>=2.{i % 9}\n" for i in range(1000))
        (folder / "environment.yml").write_text(f"x: &p\n  pip:\n{pip}dependencies:\n" + "  - *p\n" * n)
        return ["environment.yml"]

    return write


def setup_py_line(n: int) -> Callable[[Path], list[str]]:
    """One long line of setup.py strings (a column worked out per node once cost quadratic time)."""

    def write(folder: Path) -> list[str]:
        items = "".join(f', "pkg{i}>=1"' for i in range(n))
        (folder / "setup.py").write_text(
            f'from setuptools import setup\nsetup(install_requires=["flash-attn==2.4.2"{items}])\n'
        )
        return ["setup.py"]

    return write


# ---- issue 23: what a hostile repository commits ------------------------------------------------------


def named_reverse_chain(n: int) -> Callable[[Path], list[str]]:
    """n files, each -r the next, the last named (pre-commit's way): the search for its includers."""

    def write(folder: Path) -> list[str]:
        (folder / ".git").mkdir()
        for k in range(n):
            (folder / f"r-{k:06d}.txt").write_text(f"-r r-{k + 1:06d}.txt\ntorch\n")
        (folder / f"r-{n:06d}.txt").write_text("flash-attn==2.4.2\n")
        return [f"r-{n:06d}.txt"]

    return write


def named_beside_big_files(mb: int) -> Callable[[Path], list[str]]:
    """The named file beside eight files of comments, mb MB each: read one at a time, never kept."""

    def write(folder: Path) -> list[str]:
        (folder / ".git").mkdir()
        for i in range(8):
            (folder / f"requirements-{i}.txt").write_text("# x\n" * (mb * 250_000))
        (folder / "requirements.txt").write_text("flash-attn==2.4.2\n")
        return ["requirements.txt"]

    return write


def gitignore_backtracking(n: int) -> Callable[[Path], list[str]]:
    """n files with 200-letter names under a .gitignore of alternating stars (pathspec: minutes each)."""

    def write(folder: Path) -> list[str]:
        (folder / ".git").mkdir()
        (folder / ".gitignore").write_text("*a*a*a*a*a*a*b\n**/a*a*a*a*a*/**/*a*a*a*b\n")
        for i in range(n):
            (folder / f"{'a' * 200}-{i}-requirements.txt").write_text("flash-attn==2.4.2\n")
        return ["."]

    return write


def blank_run(n: int) -> Callable[[Path], list[str]]:
    """One requirement line with n blanks before its marker (n^2 regex retries before)."""

    def write(folder: Path) -> list[str]:
        (folder / "requirements.txt").write_text(f"flash-attn>=2.0{' ' * n}; python_version >= '3'\n")
        return ["requirements.txt"]

    return write


def deep_tree(depth: int) -> Callable[[Path], list[str]]:
    """A committed folder tree ``depth`` levels deep (RecursionError from 1,000 before)."""

    def write(folder: Path) -> list[str]:
        (folder / "requirements.txt").write_text("flash-attn==2.4.2\n")
        here = os.getcwd()
        os.chdir(folder)
        try:
            for _ in range(depth):
                os.mkdir("d")
                os.chdir("d")
            Path("requirements.txt").write_text("flash-attn==2.4.2\n")
        finally:
            os.chdir(here)
        return ["."]

    return write


def setup_py_unary(n: int) -> Callable[[Path], list[str]]:
    def write(folder: Path) -> list[str]:
        (folder / "setup.py").write_text(f"x = {'-' * n}1\nfrom setuptools import setup\nsetup()\n")
        return ["setup.py"]

    return write


# ---- issue 33: slow paths (shared/reliability 33, 34, 36, 41, 42) ------------------------------------


def tox_braces(k: int) -> Callable[[Path], list[str]]:
    """An envlist of ``{a,b}`` k times (2^k names before; the budget stops at 10,000)."""

    def write(folder: Path) -> list[str]:
        (folder / "tox.ini").write_text(
            f"[tox]\nenvlist = {'{a,b}' * k}\n[testenv]\ndeps = flash-attn==2.4.2\n"
        )
        return ["tox.ini"]

    return write


def group_chain(n: int) -> Callable[[Path], list[str]]:
    """n PEP 735 groups, each including the one before (n^3 before)."""

    def write(folder: Path) -> list[str]:
        groups = "".join(f'g{i} = [{{include-group = "g{i - 1}"}}]\n' for i in range(1, n))
        (folder / "pyproject.toml").write_text(
            f'[dependency-groups]\ng0 = ["flash-attn==2.4.2", "torch==2.3.1"]\n{groups}'
        )
        return ["pyproject.toml"]

    return write


def tox_conditions(n: int) -> Callable[[Path], list[str]]:
    """n environments and n deps lines ``eI: pkgI==1.0``, one for each (n^2 before)."""

    def write(folder: Path) -> list[str]:
        deps = "".join(f"    e{i}: pkg{i}==1.0\n" for i in range(n))
        envs = ",".join(f"e{i}" for i in range(n))
        (folder / "tox.ini").write_text(
            f"[tox]\nenvlist = {envs}\n[testenv]\ndeps =\n{deps}    flash-attn==2.4.2\n"
        )
        return ["tox.ini"]

    return write


def tox_reference_chain(n: int) -> Callable[[Path], list[str]]:
    """n testenv sections, each bringing in the one before with {[testenv:x]deps} (n^2/2 scopes before
    the budget)."""

    def write(folder: Path) -> list[str]:
        sections = "".join(
            f"[testenv:e{i}]\ndeps =\n    {{[testenv{f':e{i - 1}' if i else ''}]deps}}\n    pkg{i}==1\n"
            for i in range(n)
        )
        (folder / "tox.ini").write_text(f"[tox]\n[testenv]\ndeps = flash-attn==2.4.2\n{sections}")
        return ["tox.ini"]

    return write


def diff_pairs(n: int) -> Callable[[Path], list[str]]:
    """``--diff`` of n fixable lines between distinct ones (difflib over the file: n^2 before)."""

    def write(folder: Path) -> list[str]:
        (folder / "requirements.txt").write_text(
            "".join(f"flash-attn>=2.0\npkg{i}==1.{i}\n" for i in range(n))
        )
        return ["--diff", "requirements.txt"]

    return write


def gitignore_globs(n: int) -> Callable[[Path], list[str]]:
    """A .gitignore of n patterns ``*x<i>y*`` over n files in 50 folders (patterns x paths before)."""

    def write(folder: Path) -> list[str]:
        (folder / ".git").mkdir()
        (folder / ".gitignore").write_text("".join(f"*x{i}y*\n" for i in range(n)))
        for i in range(n):
            sub = folder / f"d{i % 50}"
            sub.mkdir(exist_ok=True)
            (sub / f"requirements-{i}.txt").write_text("flash-attn==2.5.8\n")
        return ["."]

    return write


def _pyproject(deps: list[str], tail: str = "") -> str:
    listed = "".join(f'    "{d}",\n' for d in deps)
    return f'[project]\nname = "x"\nversion = "1"\ndependencies = [\n{listed}]\n{tail}'


def one_name(n: int, *args: str) -> Callable[[Path], list[str]]:
    """n entries of one name in a pyproject (issue 41: each looked through all n for a uv source,
    6.7 s at 5,000 before; --diff 8.3 s)."""

    def write(folder: Path) -> list[str]:
        (folder / "pyproject.toml").write_text(_pyproject(["flash-attn>=2.0"] * n))
        return [*args, "pyproject.toml"]

    return write


def entries_markers(n: int) -> Callable[[Path], list[str]]:
    """n entries, each with a marker of its own, beside one without: an environment splits by marker
    (each part gathered from every entry before, and each fix's target too)."""

    def write(folder: Path) -> list[str]:
        deps = ["flash-attn<2.6"] + [f"flash-attn>=2.0; python_version == '3.{i}'" for i in range(n)]
        (folder / "pyproject.toml").write_text(_pyproject(deps))
        return ["pyproject.toml"]

    return write


def entries_sources(n: int) -> Callable[[Path], list[str]]:
    """n entries with markers and n ``[tool.uv.sources]`` entries of flash-attn with markers (each
    entry tried every source, in three rules, before)."""

    def write(folder: Path) -> list[str]:
        deps = [f"flash-attn>=2.0; python_version == '3.{i}'" for i in range(n)]
        git = '{ git = "https://github.com/Dao-AILab/flash-attention", tag = "v2.6.3", marker = "%s" }'
        listed = ", ".join(git % f"python_version == '3.{i}'" for i in range(n))
        (folder / "pyproject.toml").write_text(
            _pyproject(deps, f"[tool.uv.sources]\nflash-attn = [{listed}]\n")
        )
        return ["pyproject.toml"]

    return write


def exclusions(n: int) -> Callable[[Path], list[str]]:
    """n ``!=`` constraints on flash-attn: the range they leave has a piece for each (n^2 pieces
    intersected one after another before)."""

    def write(folder: Path) -> list[str]:
        (folder / "requirements.txt").write_text("-c c.txt\nflash-attn>=2.0\n")
        (folder / "c.txt").write_text("".join(f"flash-attn!=2.{i % 9}.{i}\n" for i in range(n)))
        return ["requirements.txt"]

    return write


@dataclass(frozen=True)
class Case:
    name: str
    small: tuple[str, Callable[[Path], list[str]]] | None  # the baseline of a ratio target, if any
    big: tuple[str, Callable[[Path], list[str]]]
    max_ratio: float | None = None  # big's CPU time over small's
    max_peak_mb: int | None = None  # big's peak memory
    factor: float = 10  # big's size over small's: the exponent is log(ratio) / log(factor)


CASES = (
    Case(
        "flash-attn-lines",
        ("6,400 lines", flash_attn_lines(6_400)),
        ("64,000 lines", flash_attn_lines(64_000)),
        max_ratio=10,
    ),
    Case(
        "files",
        ("10,000 files", one_line_files(10_000)),
        ("100,000 files", one_line_files(100_000)),
        max_ratio=11,
    ),
    Case("16mb-requirements", None, ("16 MB requirements", mixed_requirements(16_000_000)), max_peak_mb=300),
    Case("uv-lock", ("20,000 packages", uv_lock(20_000)), ("200,000 packages", uv_lock(200_000))),
    Case("include-chain", ("1,000 files", include_chain(1_000)), ("10,000 files", include_chain(10_000))),
    Case(
        "setup-py-line",
        ("20,000 strings", setup_py_line(20_000)),
        ("200,000 strings", setup_py_line(200_000)),
        max_ratio=11,
    ),
    Case("yaml-aliases", ("2,000 aliases", yaml_aliases(2_000)), ("20,000 aliases", yaml_aliases(20_000))),
    Case(
        "named-chain",
        ("1,000 files", named_reverse_chain(1_000)),
        ("10,000 files", named_reverse_chain(10_000)),
        max_ratio=11,
    ),
    Case(
        "named-big-pool",
        ("8 x 1.5 MB", named_beside_big_files(1)),
        ("8 x 15 MB", named_beside_big_files(10)),
        max_ratio=11,
        max_peak_mb=80,
    ),
    Case(
        "gitignore-stars",
        ("300 long names", gitignore_backtracking(300)),
        ("3,000 long names", gitignore_backtracking(3_000)),
        max_ratio=11,
    ),
    Case(
        "blank-run",
        ("100,000 blanks", blank_run(100_000)),
        ("1,000,000 blanks", blank_run(1_000_000)),
        max_ratio=11,
    ),
    # 90 and 900: shutil.rmtree, which cleans the inputs up, recurses once a level itself
    Case("deep-tree", ("90 levels", deep_tree(90)), ("900 levels", deep_tree(900)), max_ratio=11),
    Case("tox-braces", ("{a,b} x 3", tox_braces(3)), ("{a,b} x 30", tox_braces(30)), max_ratio=11),
    Case(
        "group-chain",
        ("1,000 groups", group_chain(1_000)),
        ("10,000 groups", group_chain(10_000)),
        max_ratio=11,
    ),
    Case(
        "tox-conditions",
        ("1,000 envs x lines", tox_conditions(1_000)),
        ("10,000 envs x lines", tox_conditions(10_000)),
        max_ratio=11,
    ),
    Case(
        "tox-reference-chain",
        ("500 sections", tox_reference_chain(500)),
        ("5,000 sections", tox_reference_chain(5_000)),
        max_ratio=11,
    ),
    Case("diff", ("1,000 fixes", diff_pairs(1_000)), ("10,000 fixes", diff_pairs(10_000)), max_ratio=11),
    Case(
        "gitignore-globs",
        ("300 x 300", gitignore_globs(300)),
        ("3,000 x 3,000", gitignore_globs(3_000)),
        max_ratio=11,
    ),
    Case(
        "setup-py-unary",
        ("2,000 minus signs", setup_py_unary(2_000)),
        ("20,000 minus signs", setup_py_unary(20_000)),
        max_ratio=11,
    ),
    # issue 41: an environment indexed once, not scanned once a requirement
    Case("one-name", ("500 entries", one_name(500)), ("5,000 entries", one_name(5_000)), max_ratio=11),
    Case(
        "one-name-diff",
        ("500 entries", one_name(500, "--diff")),
        ("5,000 entries", one_name(5_000, "--diff")),
        max_ratio=11,
    ),
    Case(
        "entries-x-markers",
        ("300 markers", entries_markers(300)),
        ("3,000 markers", entries_markers(3_000)),
        max_ratio=11,
    ),
    Case(
        "entries-x-sources",
        ("300 x 300", entries_sources(300)),
        ("3,000 x 3,000", entries_sources(3_000)),
        max_ratio=11,
    ),
    Case(
        "exclusions",
        ("300 constraints", exclusions(300)),
        ("3,000 constraints", exclusions(3_000)),
        max_ratio=11,
    ),
)


def run(case: Case, work: Path, repeat: int) -> bool:
    measured: dict[str, Measure] = {}
    for size in (case.small, case.big):
        if size is None:
            continue
        label, write = size
        folder = work / case.name / label.replace(" ", "-").replace(",", "")
        folder.mkdir(parents=True)
        measured[label] = m = measure(folder, write(folder), repeat)
        figures = f"{m.cpu:>8.2f}s cpu {m.wall:>8.2f}s wall {m.peak_kib / MB:>7.0f} MB peak"
        print(f"{case.name:<18} {label:<20} {figures}", flush=True)
    ok = True
    big = measured[case.big[0]]
    if case.small is not None:
        ratio = big.cpu / measured[case.small[0]].cpu
        verdict = "" if case.max_ratio is None else f" (target <= {case.max_ratio}x)"
        ok = case.max_ratio is None or ratio <= case.max_ratio
        exponent = math.log(ratio) / math.log(case.factor)
        missed = "" if ok else "  MISSED"
        print(f"{case.name:<18} {'ratio':<20} {ratio:>8.1f}x, exponent {exponent:.2f}{verdict}{missed}")
    if case.max_peak_mb is not None:
        fits = big.peak_kib / MB <= case.max_peak_mb
        target = f"target <= {case.max_peak_mb} MB{'' if fits else '  MISSED'}"
        print(f"{case.name:<18} {'peak memory':<20} {target}")
        ok = ok and fits
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=[c.name for c in CASES], help="run only these cases")
    ap.add_argument("--repeat", type=int, default=1, help="runs per size; the cheapest counts (default 1)")
    ap.add_argument("--keep", metavar="DIR", help="write the inputs here and keep them (default: a temp dir)")
    args = ap.parse_args(argv)
    cases = [c for c in CASES if not args.only or c.name in args.only]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.keep or tmp)
        os.makedirs(work, exist_ok=True)
        results = [run(case, work, args.repeat) for case in cases]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
