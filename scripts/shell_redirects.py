#!/usr/bin/env python3
"""What the shell does with an unquoted flash-attn specifier: each case run in bash (and dash, when
it is installed), with a stand-in ``pip`` that only records its arguments. Never a real install.

Each case is a three-line script: ``echo before``, ``pip install WORD``, ``echo after``. The table
says, per shell, what pip received (or that it never ran), the exit status of the install line,
whether the next line ran, and the files the redirects left behind. ``fa_lint/shell/redirects.py``
models these outcomes; ``tests/test_shell_redirects.py`` checks the model against a fresh run and
the FAL007 page's table against this script's output.

    python scripts/shell_redirects.py            # print the table
    python scripts/shell_redirects.py --json     # the raw observations
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
from typing import Any

# The specifiers PEP 440 allows, written unquoted, and the edge where an operator has no file after it.
CASES = (
    "flash-attn>=2.5.8",
    "flash-attn>2.5.8",
    "flash-attn>=2.5.8>=2.6",
    "flash-attn<=2.6.3",
    "flash-attn<2.6",
    "flash-attn>=2.5,<2.7",
    "flash-attn<2.7,>=2.5",
    "flash-attn==2.6.3<x",
    "flash-attn<",
    "flash-attn>",
    "flash-attn!=2.6.0",
    "flash-attn~=2.6.3",
)
SHELLS = ("bash", "dash")

_PIP = '#!/bin/sh\nprintf "%s\\n" "$*" >> "$PIP_LOG"\n'


def observe(shell: str, word: str) -> dict[str, object]:
    """Run one case in a fresh folder; what pip got, the install line's status, what ran after."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bin_dir, work = root / "bin", root / "work"
        bin_dir.mkdir()
        work.mkdir()
        pip = bin_dir / "pip"
        pip.write_text(_PIP)
        pip.chmod(0o755)
        log = root / "pip.log"
        marks = root / "marks"
        script = root / "case.sh"
        # the status of the install line is recorded on the line itself, after it
        script.write_text(
            f'echo before >> "{marks}"\npip install {word}\necho "status $?" >> "{marks}"\n'
            f'echo after >> "{marks}"\n'
        )
        env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", "PIP_LOG": str(log), "LC_ALL": "C"}
        done = subprocess.run(
            [shell, str(script)], check=False, cwd=work, env=env, capture_output=True, text=True, timeout=30
        )
        lines = marks.read_text().split() if marks.exists() else []
        status = lines[lines.index("status") + 1] if "status" in lines else None
        return {
            "pip": log.read_text().strip() if log.exists() else None,
            "status": int(status) if status is not None else None,
            "after": "after" in lines,
            "exit": done.returncode,
            "files": sorted(p.name for p in work.iterdir()),
        }


def observations(shells: tuple[str, ...] | None = None) -> dict[str, dict[str, dict[str, object]]]:
    found = shells or tuple(s for s in SHELLS if shutil.which(s))
    return {shell: {word: observe(shell, word) for word in CASES} for shell in found}


def _cell(seen: dict[str, Any]) -> str:
    if seen["status"] is None:
        return f"syntax error, the script stops (exit {seen['exit']})"
    pip = f"pip gets `{seen['pip']}`" if seen["pip"] else "pip never runs"
    files = ", ".join(f"`{f}`" for f in seen["files"]) if seen["files"] else "none"
    after = "the next line runs" if seen["after"] else "the script stops"
    return f"{pip}; status {seen['status']}; files: {files}; {after}"


def table(seen: dict[str, dict[str, dict[str, object]]]) -> str:
    """The Markdown table of the FAL007 page: one row per case, one column per shell (they agree)."""
    shells = list(seen)
    rows = ["| unquoted | " + " | ".join(shells) + " |", "|---|" + "---|" * len(shells)]
    for word in CASES:
        rows.append(f"| `pip install {word}` | " + " | ".join(_cell(seen[s][word]) for s in shells) + " |")
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
