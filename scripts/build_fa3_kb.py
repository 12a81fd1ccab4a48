#!/usr/bin/env python3
"""Regenerate fa_lint/kb/fa3.json: what FlashAttention 3 (``flash-attn-3``, flash-attention's ``hopper/``)
is at each point of its history, and what PyPI holds under its name.

Maintainer script; fa-lint never runs it. FA3 has no release tags: its version is ``hopper/__init__.py``'s
``__version__`` (3.0.0.b1 from the first commit, 3.0.0 from 2026-02-05), and its code changed under
one version string for a year and a half. So the script walks every commit of flash-attention's
default branch that touched ``hopper/flash_attn_interface.py``, ``hopper/setup.py`` or
``hopper/__init__.py``, oldest first, and records where each fact first holds (commit, date, file,
line, text), reading the files with ``ast`` and plain text (never importing or running them):

* ``kvcache``: ``flash_attn_interface.flash_attn_with_kvcache`` exists;
* ``kvcache_page_table``: it takes ``page_table`` (FA3's name for FA2's ``block_table``: paged KV);
* ``kvcache_block_table`` / ``varlen_page_table``: it takes ``block_table``; ``flash_attn_varlen_func``
  takes ``page_table`` (None when never);
* ``sm80``: ``setup.py`` compiles ``arch=compute_80,code=sm_80`` kernels beside sm_90a (before: Hopper only);
* ``abi3``: the extension is built with ``py_limited_api=True`` (one wheel for every later CPython);
* ``torch_stable_abi``: ``setup.py`` builds against torch's stable ABI (``TORCH_TARGET_VERSION``), so
  one wheel serves every torch from that version on.

It also records the distribution ``hopper/setup.py`` builds (``PACKAGE_NAME``: flashattn-hopper, then
flash_attn, then flash_attn_3) and its extension module (``flashattn_hopper_cuda``, ``flash_attn_3_cuda``,
then ``flash_attn_3._C``: the first to make ``flash_attn_3`` importable), each run with its first commit;
and, at every flash-attn 2 release tag, that the root ``setup.py`` lists no ``py_modules`` (FA2 ships
``flash_attn.flash_attn_interface``, never a top-level ``flash_attn_interface``).

With ``--transformers DIR`` it reads every ``transformers-*.whl`` there and records how its
``is_flash_attn_3_available`` finds FA3: the module and the distribution it asks for.

With ``--wheels DIR`` it also reads every ``flash_attn_3-*.whl`` there (``pip download --no-deps
flash-attn-3 -d DIR``: PyPI's releases) and records each one's version and whether its
``flash_attn_interface.py`` holds any code.

    python scripts/build_fa3_kb.py --repo ../flash-attention [--wheels DIR] [--transformers DIR] \
        [--output fa_lint/kb/fa3.json]
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

from gitrepo import git, git_file

API = "hopper/flash_attn_interface.py"
SETUP = "hopper/setup.py"
INIT = "hopper/__init__.py"
OUTPUT = Path(__file__).resolve().parent.parent / "fa_lint" / "kb" / "fa3.json"


def _line(text: str, pattern: str) -> tuple[int, str] | None:
    """The first line (1-based) that matches ``pattern``, and its text."""
    for i, line in enumerate(text.splitlines(), 1):
        if re.search(pattern, line):
            return i, line.strip()
    return None


def _params(text: str, function: str) -> tuple[int, list[str]] | None:
    """The line and parameter names of a module-level function, read with ``ast``."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            args = node.args
            return node.lineno, [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return None


def facts_at(repo: Path, commit: str) -> dict[str, tuple[str, int, str] | None]:
    """Each fact at one commit: (path, line, text) where it holds, None where it does not."""
    api = git_file(repo, commit, API) or ""
    setup = git_file(repo, commit, SETUP) or ""
    init = git_file(repo, commit, INIT) or ""
    out: dict[str, tuple[str, int, str] | None] = {}
    version = _line(init, r"^__version__\s*=")
    out["version"] = (INIT, *version) if version else None
    for key, function, param in (
        ("kvcache", "flash_attn_with_kvcache", None),
        ("kvcache_page_table", "flash_attn_with_kvcache", "page_table"),
        ("kvcache_block_table", "flash_attn_with_kvcache", "block_table"),
        ("varlen_page_table", "flash_attn_varlen_func", "page_table"),
    ):
        found = _params(api, function) if api else None
        if found is None or (param is not None and param not in found[1]):
            out[key] = None
            continue
        line, _ = found
        if param is not None:
            hit = _line("\n".join(api.splitlines()[line - 1 :]), rf"\b{param}\b")
            assert hit is not None
            line = line + hit[0] - 1
        out[key] = (API, line, api.splitlines()[line - 1].strip())
    for key, pattern in (
        ("sm90a", r"arch=compute_90a,code=sm_90a"),
        ("sm80", r"arch=compute_80,code=sm_80"),
        ("abi3", r"py_limited_api\s*=\s*True"),
        ("torch_stable_abi", r"-DTORCH_TARGET_VERSION=0x[0-9a-fA-F]+"),
        ("nvcc_floor", r"bare_metal_version < Version\(\"\d+\.\d+\"\)"),
    ):
        hit = _line(setup, pattern)
        out[key] = (SETUP, *hit) if hit else None
    return out


def _fact(commit: str, date: str, where: tuple[str, int, str]) -> dict[str, Any]:
    return {"commit": commit, "date": date, "at": f"{commit}:{where[0]}:{where[1]}", "text": where[2]}


def history(repo: Path) -> dict[str, Any]:
    log = git(repo, "log", "--reverse", "--format=%h %cs", "--", API, SETUP, INIT).split("\n")
    commits = [tuple(line.split()) for line in log if line.strip()]
    since: dict[str, dict[str, Any] | None] = {}
    versions: list[dict[str, Any]] = []
    last: dict[str, tuple[str, int, str] | None] = {}
    for commit, date in commits:
        now = facts_at(repo, commit)
        for key, where in now.items():
            if key == "version":
                continue
            if where is None:
                since[key] = None  # lost again (or never held): only the latest holding run counts
            elif last.get(key) is None:
                since[key] = _fact(commit, date, where)
        version = now["version"]
        if version is not None:
            value = ast.literal_eval(version[2].split("=", 1)[1].strip())
            if not versions or versions[-1]["version"] != value:
                versions.append({"version": value, **_fact(commit, date, version)})
        last = now
    head = commits[-1][0]
    stable = since.get("torch_stable_abi")
    if stable is not None:
        m = re.search(r"0x([0-9a-fA-F]{2})([0-9a-fA-F]{2})", stable["text"])
        assert m is not None
        stable["torch"] = f"{int(m.group(1), 16)}.{int(m.group(2), 16)}"
    floor = since.get("nvcc_floor")
    if floor is not None:
        head_setup = git_file(repo, head, SETUP) or ""
        hit = _line(head_setup, r"bare_metal_version < Version\(\"\d+\.\d+\"\)")
        assert hit is not None
        floor = _fact(head, commits[-1][1], (SETUP, *hit))
        floor["version"] = re.search(r"\"(\d+\.\d+)\"", hit[1]).group(1)  # type: ignore[union-attr]
        since["nvcc_floor"] = floor
    return {"head": head, "head_date": commits[-1][1], "versions": versions, "since": since}


_NAME = r'^PACKAGE_NAME\s*=\s*"([^"]+)"'
_EXT = r'^\s*name=(f?"[^"]*(?:_cuda|\._C)")'


def names(repo: Path) -> list[dict[str, Any]]:
    """The runs of commits with one (distribution, extension module) that hopper/setup.py builds."""
    log = git(repo, "log", "--reverse", "--format=%h %cs", "--", SETUP).split("\n")
    runs: list[dict[str, Any]] = []
    for commit, date in (tuple(line.split()) for line in log if line.strip()):
        setup = git_file(repo, commit, SETUP) or ""
        name, ext = _line(setup, _NAME), _line(setup, _EXT)
        if name is None:
            continue
        package = re.search(_NAME, name[1]).group(1)  # type: ignore[union-attr]
        dist = re.sub(r"[-_.]+", "-", package).lower()
        found = re.search(r'name=f?"([^"]+)"', ext[1]) if ext else None
        module = found.group(1).replace("{PACKAGE_NAME}", package) if found else ""
        if runs and (runs[-1]["distribution"], runs[-1]["extension"]) == (dist, module):
            continue
        runs.append({"distribution": dist, "extension": module, **_fact(commit, date, (SETUP, *name))})
    return runs


def names_at_tags(repo: Path) -> dict[str, str]:
    """The distribution hopper/setup.py builds at each release tag (``@TAG#subdirectory=hopper``)."""
    from gitrepo import release_tags

    found = {}
    for _, tag in release_tags(repo, 2):
        hit = _line(git_file(repo, tag, SETUP) or "", _NAME)
        if hit is not None:
            package = re.search(_NAME, hit[1]).group(1)  # type: ignore[union-attr]
            found[tag] = re.sub(r"[-_.]+", "-", package).lower()
    return found


def fa2_modules(repo: Path) -> dict[str, Any]:
    """Whether any flash-attn 2 release's setup.py lists ``py_modules`` (a top-level module)."""
    from gitrepo import release_tags

    tags = [t for _, t in release_tags(repo, 2)]
    listing = [t for t in tags if _line(git_file(repo, t, "setup.py") or "", r"\bpy_modules\s*=")]
    return {"tags_read": len(tags), "first": tags[0], "last": tags[-1], "with_py_modules": listing}


def transformers(wheels: Path) -> list[dict[str, Any]]:
    """Per transformers wheel, what ``is_flash_attn_3_available`` asks for."""
    out: list[dict[str, Any]] = []
    path = "transformers/utils/import_utils.py"
    for whl in sorted(wheels.glob("transformers-*.whl"), key=lambda p: _version(p.name)):
        with zipfile.ZipFile(whl) as z:
            text = z.read(path).decode() if path in z.namelist() else ""
        start = _line(text, r"^def is_flash_attn_3_available")
        version = whl.name.split("-")[1]
        if start is None:
            out.append(
                {"version": version, "checks": None, "at": f"{whl.name}:{path}: no is_flash_attn_3_available"}
            )
            continue
        body = "\n".join(text.splitlines()[start[0] : start[0] + 12])
        mapped = _line(body, r"(?i)distribution_mapping.*flash_attn_interface")
        hit = mapped or _line(body, r'_is_package_available\("flash_attn_3"\)')
        assert hit is not None, whl.name
        checks = (
            {"module": "flash_attn_interface", "distribution": "flash-attn-3"}
            if mapped
            else {
                "module": "flash_attn_3",
                "distribution": "flash-attn-3" if _metadata_checked(text) else None,
            }
        )
        found: dict[str, Any] = {
            "version": version,
            "checks": checks,
            "at": f"{whl.name}:{path}:{start[0] + hit[0]}: {hit[1]}",
        }
        fallback = _line(body, r"kernels_fallback_ok and ")
        if fallback:  # a Hub kernel may serve flash_attention_3 instead, where the caller allows it
            found["kernels_fallback"] = f"{whl.name}:{path}:{start[0] + fallback[0]}: {fallback[1]}"
        out.append(found)
    return out


def _metadata_checked(text: str) -> bool:
    """Whether ``_is_package_available(name)`` also asks ``importlib.metadata`` for a distribution of that
    name (4.x: ``PackageNotFoundError`` makes it False), rather than only with ``return_version`` (5.x)."""
    start = _line(text, r"^def _is_package_available")
    assert start is not None
    body = "\n".join(text.splitlines()[start[0] : start[0] + 14])
    return _line(body, r"importlib\.metadata\.version\(") is not None and not _line(
        body, r"and return_version"
    )


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", name.split("-")[1])[:3])


def pypi(wheels: Path) -> list[dict[str, Any]]:
    out = []
    for whl in sorted(wheels.glob("flash_attn_3-*.whl")):
        with zipfile.ZipFile(whl) as z:
            names = z.namelist()
            api = next((n for n in names if n.endswith("flash_attn_interface.py")), None)
            code = bool(api and z.read(api).strip())
            meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
            version = re.search(r"^Version: (.+)$", z.read(meta).decode(), re.M)
        assert version is not None
        out.append(
            {
                "version": version.group(1).strip(),
                "wheel": whl.name,
                "ships_code": code,
                "evidence": f"{whl.name}:{api}: {'code' if code else 'empty (0 bytes of code)'}",
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="a flash-attention checkout or mirror")
    parser.add_argument("--wheels", type=Path, help="a folder of flash_attn_3-*.whl from PyPI")
    parser.add_argument("--transformers", type=Path, help="a folder of transformers-*.whl from PyPI")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    doc: dict[str, Any] = {
        "schema": 1,
        "generator": "scripts/build_fa3_kb.py",
        "generated": dt.date.today().isoformat(),
        "repository": "https://github.com/Dao-AILab/flash-attention",
        **history(args.repo),
        "names": names(args.repo),
        "names_at_tags": names_at_tags(args.repo),
        "fa2_top_level_modules": fa2_modules(args.repo),
    }
    old = json.loads(args.output.read_text(encoding="utf-8")) if args.output.exists() else {}
    doc["transformers"] = (
        transformers(args.transformers) if args.transformers else old.get("transformers", [])
    )
    if args.wheels is not None:
        doc["pypi"] = pypi(args.wheels)
    elif args.output.exists():
        doc["pypi"] = json.loads(args.output.read_text(encoding="utf-8")).get("pypi", [])
    args.output.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
