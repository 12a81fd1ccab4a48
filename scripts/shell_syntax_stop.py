#!/usr/bin/env python3
"""What a shell runs of a script with a syntax error in it: an unquoted ``<`` (or ``>``) with no file
after it. Each case runs in bash and dash (when installed) with a stand-in ``pip`` that only records
its arguments; never a real install.

Each case is run the ways the files fa-lint reads run a script: as a file (``bash FILE``, ``dash
FILE``: a shell script), with ``-c`` (``sh -c TEXT``: a Docker RUN, whose default shell is
``["/bin/sh", "-c"]``) and as GitHub runs a ``run:`` step (``bash -e FILE``, its default shell on
Linux). The table says, per case and way, which installs pip received and the exit status.
``fa_lint.shell.walk`` models it (``Stop``); ``tests/test_shell_stop.py`` checks the model against a
fresh run.

    python scripts/shell_syntax_stop.py            # print the table
    python scripts/shell_syntax_stop.py --json     # the raw observations
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# name -> script. Each install asks for its own version, so what ran is what pip received.
CASES = {
    "a later line": "pip install flash-attn==2.5.0\npip install flash-attn<\npip install flash-attn==2.5.1\n",
    "the same line, before it": "pip install flash-attn==2.5.0 && pip install flash-attn<\n",
    "the same line, after `;`": (
        "pip install flash-attn==2.5.0; pip install flash-attn< ; pip install flash-attn==2.5.1\n"
    ),
    "an `if` around it": (
        "pip install flash-attn==2.5.0\nif true; then\n  pip install flash-attn==2.5.1\n"
        "  pip install flash-attn<\nfi\npip install flash-attn==2.5.2\n"
    ),
    "a function around it": "f() {\n  pip install flash-attn<\n}\npip install flash-attn==2.5.0\nf\n",
    "its own `bash -c`": "bash -c 'pip install flash-attn<'\npip install flash-attn==2.5.0\n",
    "the end of the file": "pip install flash-attn==2.5.0\npip install flash-attn<",
    "a continued line": "pip install flash-attn==2.5.0 \\\n  flash-attn<\npip install flash-attn==2.5.1\n",
    "a bare `>`": "pip install flash-attn==2.5.0 >\npip install flash-attn==2.5.1\n",
}
WAYS = {  # how each file format runs its script: {shell} is bash or dash
    "file": ["{shell}", "FILE"],
    "-c": ["{shell}", "-c", "TEXT"],
    "-e file": ["{shell}", "-e", "FILE"],
}
SHELLS = ("bash", "dash")

_PIP = '#!/bin/sh\nprintf "%s\\n" "$*" >> "$PIP_LOG"\n'


def observe(shell: str, way: str, script: str) -> dict[str, object]:
    """Run one case one way in a fresh folder: the installs pip received, and the exit status."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bin_dir, work = root / "bin", root / "work"
        bin_dir.mkdir()
        work.mkdir()
        pip = bin_dir / "pip"
        pip.write_text(_PIP)
        pip.chmod(0o755)
        log = root / "pip.log"
        path = root / "case.sh"
        path.write_text(script)
        argv = [a.format(shell=shell).replace("FILE", str(path)).replace("TEXT", script) for a in WAYS[way]]
        env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", "PIP_LOG": str(log), "LC_ALL": "C"}
        done = subprocess.run(
            argv, check=False, cwd=work, env=env, capture_output=True, text=True, timeout=30
        )
        ran = log.read_text().split("\n") if log.exists() else []
        return {"pip": [line for line in ran if line], "exit": done.returncode}


def observations() -> dict[str, dict[str, dict[str, dict[str, object]]]]:
    """shell -> way -> case -> what happened."""
    found = tuple(s for s in SHELLS if shutil.which(s))
    return {s: {w: {name: observe(s, w, text) for name, text in CASES.items()} for w in WAYS} for s in found}


def _cell(seen: dict[str, object]) -> str:
    pip = seen["pip"]
    assert isinstance(pip, list)
    ran = ", ".join(f"`{p.removeprefix('install ')}`" for p in pip) or "nothing"
    return f"{ran} (exit {seen['exit']})"


def table(seen: dict[str, dict[str, dict[str, dict[str, object]]]]) -> str:
    """One row per case; one column per shell and way (pip's installs, and the exit status)."""
    columns = [(s, w) for s in seen for w in WAYS]
    rows = [
        "| the `<` is in | " + " | ".join(f"{s} {w}" for s, w in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for name in CASES:
        rows.append(f"| {name} | " + " | ".join(_cell(seen[s][w][name]) for s, w in columns) + " |")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the observations as JSON")
    args = parser.parse_args(argv)
    seen = observations()
    if not seen:
        print("neither bash nor dash is installed", file=sys.stderr)
        return 1
    print(json.dumps(seen, indent=1) if args.json else table(seen), end="" if not args.json else "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
