#!/usr/bin/env python3
"""Regenerate fa_lint/kb/abi_label.json: what the ``cxx11abiTRUE|FALSE`` label of a flash-attn
release wheel says about the C++ ABI it was built with.

Maintainer script; fa-lint never runs it. For every tag of a flash-attention checkout it reads, with
line numbers:

* ``setup.py``: every assignment to ``torch._C._GLIBCXX_USE_CXX11_ABI`` (the compiler flag
  ``-D_GLIBCXX_USE_CXX11_ABI`` follows it, as the "HACK" comment beside it says). Every tag only ever
  sets it to ``True``, under ``if FORCE_CXX11_ABI:`` (``FLASH_ATTENTION_FORCE_CXX11_ABI``); none sets
  it to ``False``. So ``FLASH_ATTENTION_FORCE_CXX11_ABI=FALSE`` changes nothing: the build takes the
  ABI of the torch it builds against;
* ``.github/workflows/publish.yml``: the line that names the uploaded wheel by the matrix value
  (``tmpname=...cxx11abi${{ matrix.cxx11_abi }}``), not by the ABI the build used.

Together: a release wheel labelled ``cxx11abiFALSE`` built against a torch that uses the new ABI
(PyPI's torch from 2.7, ``fa_lint/kb/torch.json`` ``abi_change``) is a new-ABI build. A tag whose
setup.py set the flag to ``False`` would be recorded with ``forces_off`` and keep its label's meaning.

    python scripts/build_abi_label_kb.py --repo ../flash-attention [--output fa_lint/kb/abi_label.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from gitrepo import git_file, release_tags
from packaging.version import Version

SETUP = "setup.py"
WORKFLOW = ".github/workflows/publish.yml"
_ASSIGN = re.compile(r"^\s*torch\._C\._GLIBCXX_USE_CXX11_ABI\s*=\s*(\w+)")
_NAMED = re.compile(r"cxx11abi\$\{\{\s*matrix\.cxx11_abi\s*\}\}")


def tag_record(repo: Path, tag: str) -> dict[str, Any] | None:
    setup = git_file(repo, tag, SETUP)
    if setup is None:
        return None
    forces_on, forces_off = [], []
    for n, line in enumerate(setup.splitlines(), 1):
        m = _ASSIGN.match(line)
        if m is None:
            continue
        evidence = f"{tag}:{SETUP}:{n}: {line.strip()}"
        if m.group(1) == "True":
            forces_on.append(evidence)
        else:
            forces_off.append(evidence)  # False, or a value read elsewhere: the label may then mean it
    workflow = git_file(repo, tag, WORKFLOW) or ""
    named = [
        f"{tag}:{WORKFLOW}:{n}: {line.strip()}"
        for n, line in enumerate(workflow.splitlines(), 1)
        if _NAMED.search(line) and "tmpname" in line
    ]
    return {"forces_on": forces_on, "forces_off": forces_off, "named_by_matrix": named}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="flash-attention git checkout (bare is fine)")
    ap.add_argument("--output", type=Path, default=Path("fa_lint/kb/abi_label.json"))
    args = ap.parse_args(argv)
    tags: dict[str, Any] = {}
    # flash-attn 2.x: the releases whose wheels carry the label
    for version, tag in release_tags(args.repo, 2):
        record = tag_record(args.repo, tag)
        if record is not None:
            tags[str(version)] = record
    doc = {
        "schema": 1,
        "generator": "scripts/build_abi_label_kb.py",
        "source": "https://github.com/Dao-AILab/flash-attention (setup.py and publish.yml at each tag)",
        "releases": dict(sorted(tags.items(), key=lambda kv: Version(kv[0]))),
    }
    if any(r["forces_off"] for r in tags.values()):
        print("some tag sets the ABI flag to something other than True: read forces_off", file=sys.stderr)
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
