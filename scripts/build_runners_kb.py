#!/usr/bin/env python3
"""Regenerate fa_lint/kb/runners.json: GitHub's hosted Ubuntu runner labels, and whether their images
carry a CUDA toolkit.

Maintainer script; fa-lint never runs it. It reads a git checkout of actions/runner-images (bare is
fine) at one commit: the label table of its README.md (each image, its architecture and its labels:
``ubuntu-latest`` or ``ubuntu-24.04``, ``ubuntu-24.04-arm``), and, for each image, the README that lists
its installed software plus every toolset and build script under ``images/ubuntu``. An image none of
whose files names CUDA, nvcc or an NVIDIA package has no CUDA toolkit: a flash-attn source build there
has no nvcc (FAL015), the x64 and the Arm64 images alike.

    python scripts/build_runners_kb.py --repo ../runner-images [--rev HEAD] [--output fa_lint/kb/runners.json]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

_ROW = re.compile(r"^\|\s*Ubuntu (\d\d\.\d\d)( Arm64)?[^|]*\|\s*(x64|arm64)\s*\|([^|]*)\|\s*\[([^\]]+)\]")
_LINK = re.compile(r"^\[([^\]]+)\]:\s*https://github\.com/actions/runner-images/blob/[^/]+/(\S+)$")
_CUDA = r"(?i)\b(cuda|nvcc|nvidia)"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def grep(repo: Path, rev: str, pattern: str, *paths: str) -> list[str]:
    proc = subprocess.run(
        ["git", "-C", str(repo), "grep", "-n", "-P", pattern, rev, "--", *paths],
        check=False,
        capture_output=True,
        text=True,
    )
    return proc.stdout.splitlines()


def runners(repo: Path, rev: str) -> dict[str, Any]:
    readme = git(repo, "show", f"{rev}:README.md").splitlines()
    links = {m.group(1): m.group(2) for line in readme if (m := _LINK.match(line))}
    commit = git(repo, "rev-parse", "--short=9", rev).strip()
    shared = grep(repo, rev, _CUDA, "images/ubuntu/toolsets", "images/ubuntu/scripts")
    found: dict[str, Any] = {}
    for n, line in enumerate(readme, 1):
        m = _ROW.match(line)
        if m is None:
            continue
        release, arch, labels, ref = m.group(1), m.group(3), re.findall(r"`([^`]+)`", m.group(4)), m.group(5)
        listing = links.get(ref, "")
        hits = grep(repo, rev, _CUDA, listing) if listing else ["(no software listing)"]
        nvcc = False if not hits and not shared else None
        evidence = (
            f"{commit}:{listing}: no line names CUDA, nvcc or NVIDIA (nor do images/ubuntu/toolsets and "
            "images/ubuntu/scripts)"
            if nvcc is False
            else f"{commit}: {(hits or shared)[0]}"
        )
        for label in labels:
            found[label] = {
                "distro": f"ubuntu-{release}",
                "arch": arch,
                "nvcc": nvcc,
                "label_evidence": f"{commit}:README.md:{n}",
                "evidence": evidence,
            }
    return {"commit": commit, "runners": found}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="actions/runner-images git checkout")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--output", type=Path, default=Path("fa_lint/kb/runners.json"))
    args = ap.parse_args(argv)
    doc: dict[str, Any] = {
        "schema": 1,
        "generator": "scripts/build_runners_kb.py",
        "source": "https://github.com/actions/runner-images (README.md's image table, images/ubuntu)",
        **runners(args.repo, args.rev),
    }
    if not doc["runners"]:
        print("no Ubuntu row in README.md's image table: read it", file=sys.stderr)
        return 1
    args.output.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
