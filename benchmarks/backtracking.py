#!/usr/bin/env python3
"""A sweep for regular expressions that backtrack: one filler character repeated at every place of
each format's small template, at two sizes; a cost that grows faster than the input is printed.

    python benchmarks/backtracking.py [--small N] [--factor F] [--only FORMAT] [--fillers CHARS]

Each input is read end to end in this process (``engine.check``: parse, environments, rules), then
its fixes are built and applied in memory (``fix.run(dry_run=True)``), as ``--diff`` does. A run of n
characters that some pattern retries from each of its places costs n^2: at ``--factor`` times the
size it costs factor^2 times as much, where a linear reader costs factor times. An input is flagged
when the ratio passes ``factor * 2.5`` (and its larger run takes over 0.2 s); the exit status is 1
when any is. Issue 23 found blanks and tabs quadratic in two places (requirements lines, the fix
builder); this is that sweep, kept.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from fa_lint import engine
from fa_lint.fixes import apply as fix

# Each template marks with "|" the places a filler goes (one at a time).
TEMPLATES: dict[str, list[str]] = {
    "requirements.txt": [
        "flash-attn|==2.4.2|\n",
        "flash-attn>=2.0|;| python_version >= '3'|\n",
        "-r| other.txt|\nflash-attn==2.4.2 |--hash=sha256:|0\n",
        "flash-attn @ |git+https://x/flash-attention@v2.4.2|\n",
    ],
    "pyproject.toml": [
        '[project]\ndependencies = ["flash-attn|==2.4.2|"]\n',
        '[tool.poetry.dependencies]\nflash-attn = "|^2.4.2|"\n',
        '[tool.uv.sources]\nflash-attn = { git = "https://x|", tag = "v2.4.2|" }\n',
    ],
    "Pipfile": ['[packages]\nflash-attn = "|==2.4.2|"\n'],
    "setup.py": ['from setuptools import setup\nsetup(install_requires=["flash-attn|==2.4.2|"])|\n'],
    "setup.cfg": ["[options]\ninstall_requires =\n    flash-attn|==2.4.2|\n"],
    "environment.yml": ["dependencies:\n  - pip:\n    - flash-attn|==2.4.2|\n"],
    "tox.ini": ["[testenv]\ndeps =\n    flash-attn|==2.4.2|\ncommands = pip install |flash-attn|\n"],
    "Dockerfile": [
        "FROM python:3.11|\nARG V=|2.4.2|\nRUN pip install |flash-attn==$V|\n",
        "FROM |python:3.11 AS base|\nRUN pip install flash-attn==2.4.2 |&& \\\n   echo ok|\n",
    ],
    "install.sh": ['V="|2.4.2|"\npip install "flash-attn==$V|"| && echo| done\n'],
    "Makefile": ["V = |2.4.2|\ninstall:\n\tpip install flash-attn==$(V)|\n"],
    ".github/workflows/ci.yml": [
        "jobs:\n  t:\n    steps:\n      - run: pip install |flash-attn==2.4.2|\n",
    ],
    "noxfile.py": ['import nox\n@nox.session\ndef t(s):\n    s.install("flash-attn|==2.4.2|")\n'],
    "uv.lock": ['[[package]]\nname = "flash-attn|"\nversion = "2.4.2|"\n'],
    "poetry.lock": ['[[package]]\nname = "flash-attn"\nversion = "|2.4.2|"\n'],
    "Pipfile.lock": ['{"default": {"flash-attn": {"version": "|==2.4.2|"}}}\n'],
    "pixi.toml": ['[pypi-dependencies]\nflash-attn = "|==2.4.2|"\n'],
}
FILLERS = " \t-=#\"'[{($\\/,;.0a*:@<>~|"


def cost(name: str, text: str, folder: Path) -> float:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    start = time.process_time()
    report = engine.check([str(path)])
    fix.run(report.findings, unsafe=True, dry_run=True)
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--small", type=int, default=2000, help="characters in the smaller run")
    p.add_argument("--factor", type=int, default=8, help="how much larger the second run is")
    p.add_argument("--only", action="append", help="a template's file name (repeatable)")
    p.add_argument("--fillers", default=FILLERS)
    args = p.parse_args(argv)
    flagged = tried = 0
    with tempfile.TemporaryDirectory(prefix="fa-lint-sweep-") as tmp:
        for name, templates in TEMPLATES.items():
            if args.only and name not in args.only:
                continue
            for t, template in enumerate(templates):
                pieces = template.split("|")
                for at in range(1, len(pieces)):
                    for filler in args.fillers:
                        before, after = "".join(pieces[:at]), "".join(pieces[at:])
                        tried += 1
                        try:
                            small = cost(name, before + filler * args.small + after, Path(tmp) / "s")
                            large = cost(
                                name, before + filler * (args.small * args.factor) + after, Path(tmp) / "l"
                            )
                        except Exception as exc:  # a crash is a finding of the sweep too
                            flagged += 1
                            print(f"{name} #{t} place {at} {filler!r}: {type(exc).__name__}: {exc}"[:300])
                            continue
                        ratio = large / max(small, 1e-3)
                        if ratio > args.factor * 2.5 and large > 0.2:
                            flagged += 1
                            where = f"{name} #{t} place {at} {filler!r}"
                            print(f"{where}: {small:.3f} s -> {large:.3f} s ({ratio:.0f}x)")
    print(f"{tried} inputs, {flagged} super-linear")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
