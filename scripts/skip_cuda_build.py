#!/usr/bin/env python3
"""What ``FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE`` does to a flash-attn 2.x build, read from a clone of
Dao-AILab/flash-attention at each ``v2.*`` tag (no network; the clone is the argument).

For each tag it prints, with file:line: where setup.py reads the variable, the ``if not
SKIP_CUDA_BUILD`` that alone adds the CUDA extension (``flash_attn_2_cuda``), whether the
``bdist_wheel`` command still tries the release's prebuilt wheel first (only FORCE_BUILD skips that
download), and the line of ``flash_attn_interface.py`` that imports the extension, which ``import
flash_attn`` runs. ``fa_lint/rules/_installs.py`` (``SKIP_CUDA_BUILD``) and FAL011's note rest on it.

    python scripts/skip_cuda_build.py /path/to/flash-attention
"""

from __future__ import annotations

import re
import subprocess
import sys


def _show(repo: str, tag: str, path: str) -> list[str]:
    out = subprocess.run(
        ["git", "-C", repo, "show", f"{tag}:{path}"], check=False, capture_output=True, text=True
    )
    return out.stdout.splitlines() if out.returncode == 0 else []


def _line(lines: list[str], pattern: str) -> str:
    found = [i + 1 for i, text in enumerate(lines) if re.search(pattern, text)]
    return ",".join(map(str, found[:2])) or "-"


def main(repo: str) -> None:
    tags = subprocess.run(
        ["git", "-C", repo, "tag", "--list", "v2.*"], check=True, capture_output=True, text=True
    )
    for tag in sorted(tags.stdout.split(), key=lambda t: [int(x) for x in re.findall(r"\d+", t)]):
        setup = _show(repo, tag, "setup.py")
        interface = _show(repo, tag, "flash_attn/flash_attn_interface.py")
        run = next((i for i, t in enumerate(setup) if re.match(r"\s+def run\(self\)", t)), None)
        first = setup[run + 1].strip() if run is not None and run + 1 < len(setup) else "-"
        print(
            f"{tag}: reads setup.py:{_line(setup, r'SKIP_CUDA_BUILD = ')}"
            f" extension-only-if setup.py:{_line(setup, r'if not SKIP_CUDA_BUILD')}"
            f" bdist_wheel.run first line {first!r}"
            f" import flash_attn_interface.py:{_line(interface, r'import flash_attn_2_cuda')}"
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
