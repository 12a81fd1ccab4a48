#!/usr/bin/env python3
"""Regenerate fa_lint/kb/forks.json: what each release-like tag of a flash-attention fork builds.

Maintainer script; fa-lint never runs it. A fork tags its own releases (ROCm/flash-attention:
``v2.6.3-cktile``), so a ``git checkout tags/v2.6.3-cktile`` of it builds what that tag holds. For
every tag of the fork checkout that starts with a version, it reads the tag's
``flash_attn/__init__.py`` (``__version__``, as the fork's setup.py reads it: the first
``^__version__ = ...`` line, a literal) and ``flash_attn/flash_attn_interface.py`` (the parameters of
``flash_attn_with_kvcache``, with ``ast``, never importing it), and records the tag's commit as
evidence.

It also records which distribution the fork builds: the ``name`` its ``setup.py`` gives ``setup()``
(a literal, or a module-level name bound to one, as ``PACKAGE_NAME = "flash_attn"``), read with
``ast`` at the fork's head and at each tag. A fork need not be named flash-attention
(fxmarty/flash-attention-rocm builds ``flash_attn``), and one that is need not build flash-attn
(vllm-project/flash-attention builds ``vllm-flash-attn``): fa-lint takes a clone or git URL of a
repository this file lists for what it builds, and of any other for what its name says.

    git clone --bare https://github.com/ROCm/flash-attention /tmp/rocm-fa
    python scripts/build_forks_kb.py --repo /tmp/rocm-fa --name ROCm/flash-attention [--output ...]

Each run replaces the named fork's entry and keeps the others.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Any

from gitrepo import git, git_file
from packaging.version import InvalidVersion, Version

from fa_lint.verify.probe import function_params

OUTPUT = Path(__file__).resolve().parents[1] / "fa_lint" / "kb" / "forks.json"
INIT = "flash_attn/__init__.py"
INTERFACE = "flash_attn/flash_attn_interface.py"
# a tag that starts with a version (v2.6.3-cktile, v2.5.9post1-cktile-vllm, v3.0.0.r1-cktile)
RELEASE_LIKE = re.compile(r"^v?\d+(?:\.\d+)+")
VERSION_LINE = re.compile(r"^__version__\s*=\s*(.*)$", re.M)  # upstream setup.py's get_package_version


def package(repo: Path, rev: str) -> dict[str, str] | None:
    """The distribution ``setup.py`` at ``rev`` names, and the line that says so; None without one."""
    text = git_file(repo, rev, "setup.py")
    if text is None:
        return None
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    bound = {
        t.id: (node.value.value, node.lineno)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setup"):
            continue
        for kw in node.keywords:
            if kw.arg != "name":
                continue
            if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                name, line = kw.value.value, kw.value.lineno
            elif isinstance(kw.value, ast.Name) and kw.value.id in bound:
                name, line = bound[kw.value.id]
            else:
                return None
            said = text.splitlines()[line - 1].strip()
            normalized = re.sub(r"[-_.]+", "-", name).lower()
            return {"package": normalized, "at": f"{rev}:setup.py:{line}", "text": said}
    return None


def tag_entry(repo: Path, tag: str) -> dict[str, Any] | None:
    init = git_file(repo, tag, INIT)
    m = VERSION_LINE.search(init or "")
    if m is None:
        return None
    try:
        version = str(Version(str(ast.literal_eval(m.group(1)))))
    except (ValueError, SyntaxError, InvalidVersion):
        return None
    interface = git_file(repo, tag, INTERFACE)
    params = function_params(interface).get("flash_attn_with_kvcache") if interface else None
    line = (init or "")[: m.start()].count("\n") + 1
    built = package(repo, tag)
    return {
        "tag": tag,
        "commit": git(repo, "rev-list", "-n", "1", tag).strip(),
        "version": version,
        "package": built["package"] if built else None,
        "block_table": params is not None and "block_table" in params,
        "evidence": {"at": f"{tag}:{INIT}:{line}", "text": m.group(0)},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="a (bare) clone of the fork")
    parser.add_argument("--name", required=True, help="the fork as OWNER/NAME, e.g. ROCm/flash-attention")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    tags = [t for t in git(args.repo, "tag").split() if RELEASE_LIKE.match(t)]
    entries = [e for e in (tag_entry(args.repo, t) for t in sorted(tags)) if e is not None]
    builds = package(args.repo, git(args.repo, "rev-parse", "HEAD").strip())
    if builds is None:
        print(f"no setup.py naming its distribution at the head of {args.repo}", file=sys.stderr)
        return 1
    doc: dict[str, Any] = (
        json.loads(args.output.read_text()) if args.output.exists() else {"schema": 1, "forks": {}}
    )
    doc["generator"] = "scripts/build_forks_kb.py"
    doc["forks"][args.name] = {
        "generated": dt.date.today().isoformat(),
        "head": git(args.repo, "log", "-1", "--format=%H %cs").strip(),
        "builds": builds,
        "tags": entries,
    }
    doc["forks"] = dict(sorted(doc["forks"].items()))
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{args.name}: {len(entries)} tags -> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
