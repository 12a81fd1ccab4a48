#!/usr/bin/env python3
"""Regenerate fa_lint/kb/kernels.json: what each release of ``kernels`` (huggingface/kernels) does with
a Hub kernel loaded without a version, with a revision passed by position, and with a kernels.lock.

Maintainer script; fa-lint never runs it. It reads released kernels wheels (zip files, never imported)
and finds, for each fact, the first release where it holds and the last one before it where it does
not, with the file and line that show it:

    pip download --no-deps kernels==0.14.1 kernels==0.15.1 ... -d kwheels/
    python scripts/build_kernels_kb.py kwheels/

From 0.17 the lock is parsed by the wheel's compiled extension (``kernels._rust``, Rust source not in
the wheel): ``--probe`` loads that extension alone from each such wheel (not the package, which
imports huggingface_hub) and records what it says of an entry in the format kernels 0.16 wrote.
A boundary is only as exact as the versions given: give the releases on both sides of it.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import re
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from packaging.version import Version

Evidence = tuple[str, int] | None
Files = dict[str, str]
# An entry as kernels 0.16 writes kernels.lock (kernels/lockfile.py KernelLock: repo_id, sha, variants).
OLD_LOCK = '[{"repo_id": "kernels-community/activation", "sha": "0", "variants": {}}]'


def _grep(files: Files, path_re: str, line_re: str) -> Evidence:
    pattern = re.compile(line_re)
    for path in sorted(files):
        if re.search(path_re, path):
            for n, line in enumerate(files[path].splitlines(), start=1):
                if pattern.search(line):
                    return path, n
    return None


def _get_kernel(files: Files) -> tuple[str, ast.FunctionDef] | None:
    """Where ``def get_kernel`` is (kernels/utils.py before 0.17, kernels/load.py from it)."""
    for path in sorted(files):
        if path.count("/") != 1:  # kernels/X.py: the package's own modules, not its CLI or tests
            continue
        for node in ast.parse(files[path]).body:
            if isinstance(node, ast.FunctionDef) and node.name == "get_kernel":
                return path, node
    return None


def unpinned_raises(files: Files) -> Evidence:
    """``get_kernel(repo)`` with neither ``version`` nor ``revision`` raises ValueError."""
    found = _grep(files, r"^kernels/_versions\.py$", r'"A kernel version or revision must be specified')
    if found is None:
        return None
    lines = files[found[0]].splitlines()
    # the message is the argument of a raise on a line just above it
    raised = any("raise ValueError(" in lines[n] for n in range(max(found[1] - 3, 0), found[1]))
    return found if raised else None


def unpinned_warns(files: Files) -> Evidence:
    """... warns (FutureWarning) that a later release will require one, and loads the main branch."""
    return _grep(files, r"^kernels/_versions\.py$", r"will require specifying a kernel version or revision")


def keyword_only(files: Files) -> Evidence:
    """``revision`` and ``version`` are keyword-only: ``get_kernel(repo, "v1")`` raises TypeError."""
    found = _get_kernel(files)
    if found is None:
        return None
    path, node = found
    names = {a.arg for a in node.args.kwonlyargs}
    return (path, node.lineno) if {"revision", "version"} <= names else None


def positional_revision(files: Files) -> Evidence:
    """``get_kernel``'s second positional parameter is ``revision``."""
    found = _get_kernel(files)
    if found is None:
        return None
    path, node = found
    params = [a.arg for a in node.args.args]
    return (path, node.lineno) if params[1:2] == ["revision"] else None


def lock_repo_id(files: Files) -> Evidence:
    """kernels.lock entries are read as ``{"repo_id", "sha", "variants"}`` (kernels/lockfile.py)."""
    if _grep(files, r"^kernels/lockfile\.py$", r"^class KernelLock\b") is None:
        return None
    return _grep(files, r"^kernels/lockfile\.py$", r"^\s+repo_id: str")


def lock_dependency(files: Files) -> Evidence:
    """kernels.lock is parsed by the compiled ``KernelLocks.from_json`` (entries ``{"dependency",
    "lock"}``; ``kernels/_rust.pyi``)."""
    return _grep(files, r"^kernels/[a-z_]+\.py$", r"KernelLocks\.from_json\(")


FACTS: dict[str, Callable[[Files], Evidence]] = {
    "unpinned_raises": unpinned_raises,
    "unpinned_warns": unpinned_warns,
    "keyword_only": keyword_only,
    "positional_revision": positional_revision,
    "lock_repo_id": lock_repo_id,
    "lock_dependency": lock_dependency,
}


def read_wheel(path: Path) -> Files:
    with zipfile.ZipFile(path) as z:
        return {
            n: z.read(n).decode("utf-8", "replace")
            for n in z.namelist()
            if n.startswith("kernels/") and n.endswith((".py", ".pyi"))
        }


def probe_old_lock(wheel: Path) -> str | None:
    """What the wheel's own lock parser says of an entry in 0.16's format; None without one (or on a
    platform whose extension does not load)."""
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if re.match(r"kernels/_rust\..*(so|pyd)$", n)]
        if not names:
            return None
        with tempfile.TemporaryDirectory() as tmp:
            z.extract(names[0], tmp)
            spec = importlib.util.spec_from_file_location("kernels._rust", Path(tmp, names[0]))
            if spec is None or spec.loader is None:
                return None
            try:
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            except ImportError:
                return None
            try:
                module.KernelLocks.from_json(OLD_LOCK)
            except ValueError as exc:
                return f"ValueError: {exc}"
    return "parsed"


def _boundaries(seen: list[tuple[str, Evidence]]) -> dict[str, Any]:
    first = next((i for i, (_, ev) in enumerate(seen) if ev), None)
    if first is None:
        return {"since": None, "checked": [v for v, _ in seen]}
    later_false = [v for v, ev in seen[first:] if not ev]
    version, evidence = seen[first]
    return {
        "since": version,
        "last_without": seen[first - 1][0] if first else None,
        "until": later_false[0] if later_false else None,
        "evidence": f"{evidence[0]}:{evidence[1]}" if evidence else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheels", type=Path, help="folder of kernels-X-*.whl files")
    ap.add_argument("--probe", action="store_true", help="run each wheel's compiled lock parser (see above)")
    ap.add_argument("--output", type=Path, default=Path(__file__).parents[1] / "fa_lint/kb/kernels.json")
    args = ap.parse_args(argv)
    wheels = sorted(args.wheels.glob("kernels-*.whl"), key=lambda p: Version(p.name.split("-")[1]))
    if not wheels:
        print(f"error: no kernels wheels in {args.wheels}", file=sys.stderr)
        return 1
    observed: dict[str, list[tuple[str, Evidence]]] = {k: [] for k in FACTS}
    probes: dict[str, str] = {}
    for wheel in wheels:
        version = wheel.name.split("-")[1]
        files = read_wheel(wheel)
        for name, fact in FACTS.items():
            observed[name].append((version, fact(files)))
        said = probe_old_lock(wheel) if args.probe else None
        if said is not None:
            probes[version] = said
    facts = {name: _boundaries(seen) for name, seen in observed.items()}
    doc = {
        "schema": 1,
        "generator": "scripts/build_kernels_kb.py",
        "wheels_read": [w.name.split("-")[1] for w in wheels],
        "facts": facts,
        "old_lock_probe": {"entry": OLD_LOCK, "said": probes},
    }
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.output} from {len(wheels)} wheels", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
