#!/usr/bin/env python3
"""Regenerate fa_lint/kb/exports.json: which of the names the code layer reads a star import binds.

Maintainer script; fa-lint never runs it. ``from flash_attn import *`` binds every public name of
``flash_attn/__init__.py`` when the module has no ``__all__``, and the names ``__all__`` lists when
it has one (the Python reference, "The import statement"); a lazy module (transformers) lists its
``_import_structure``. This script reads each module as each release shipped it, with ``ast`` (never
imported), and records for each name fa-lint follows the first release that binds it and the line:

    python scripts/build_exports_kb.py --flash-attention ../flash-attention \
        --kernels-wheels kwheels/ --transformers-wheels wheels/

``--flash-attention`` is a git checkout (bare is fine) of Dao-AILab/flash-attention, read at each
``v2.*`` tag; the wheels folders hold ``kernels-X-*.whl`` and ``transformers-X-py3-none-any.whl``
(``pip download --no-deps kernels==X``).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import zipfile
from collections.abc import Iterable
from pathlib import Path

from gitrepo import git_file, release_tags
from packaging.version import Version

# The names fa_lint.code follows through an import, per module that exports them.
FOLLOWED = {
    "flash_attn": ("flash_attn_with_kvcache", "flash_attn_varlen_func"),
    "flash_attn.flash_attn_interface": ("flash_attn_with_kvcache", "flash_attn_varlen_func"),
    "kernels": (
        "get_kernel",
        "get_locked_kernel",
        "get_local_kernel",
        "LayerRepository",
        "LockedLayerRepository",
        "LocalLayerRepository",
    ),
    "transformers": ("ContinuousBatchingManager",),
}
# Where each module's body is, in its distribution.
FILES = {
    "flash_attn": "flash_attn/__init__.py",
    "flash_attn.flash_attn_interface": "flash_attn/flash_attn_interface.py",
    "kernels": "kernels/__init__.py",
    "transformers": "transformers/__init__.py",
}

Bound = dict[str, int]  # name -> the line that binds it for a star import


def _strings(node: ast.expr) -> list[tuple[str, int]]:
    if isinstance(node, (ast.List, ast.Tuple)):
        return [
            (e.value, e.lineno) for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


def _declared_all(tree: ast.Module) -> Bound | None:
    """The names ``__all__`` lists, each at its own line; None when the module has no ``__all__``."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return dict(_strings(node.value))
    return None


def _public(tree: ast.Module) -> Bound:
    """Every name the module body binds that does not start with an underscore (no ``__all__``)."""
    found: Bound = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                name = (a.asname or a.name).split(".")[0]
                found.setdefault(name, node.lineno)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(node.name, node.lineno)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    found.setdefault(t.id, node.lineno)
    return {k: v for k, v in found.items() if not k.startswith("_")}


def _lazy(tree: ast.Module) -> Bound:
    """A lazy module's names: every string in the lists of its ``_import_structure`` dict, which its
    ``_LazyModule`` makes ``__all__``."""
    found: Bound = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "_import_structure" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            for value in node.value.values:
                found.update((n, line) for n, line in _strings(value) if n not in found)
    for call in ast.walk(tree):  # _import_structure["generation"].extend([...]) and the like
        if isinstance(call, ast.Call) and _extends_structure(call):
            found.update((n, line) for n, line in _strings(call.args[0]) if n not in found)
    return found


def _extends_structure(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "extend"
        and "_import_structure" in ast.unparse(node.func.value)
        and bool(node.args)
    )


def star_names(text: str) -> Bound:
    """What ``from MODULE import *`` binds, for a module of this text."""
    tree = ast.parse(text)
    declared = _declared_all(tree)
    if declared is not None:
        return declared
    return _lazy(tree) or _public(tree)


def _wheel_texts(folder: Path, dist: str, path: str) -> Iterable[tuple[Version, str]]:
    wheels = {}
    for wheel in folder.glob(f"{dist}-*.whl"):
        wheels[Version(wheel.name.split("-")[1])] = wheel
    for version in sorted(wheels):
        with zipfile.ZipFile(wheels[version]) as z:
            if path in z.namelist():
                yield version, z.read(path).decode("utf-8", "replace")


def _tag_texts(repo: Path, path: str) -> Iterable[tuple[Version, str, str]]:
    for version, tag in release_tags(repo, 2):
        text = git_file(repo, tag, path)
        if text is not None:
            yield version, tag, text


def _record(module: str, seen: Iterable[tuple[str, str, str]]) -> dict[str, object]:
    """For each followed name: the first release that binds it, where, and the releases read."""
    names: dict[str, dict[str, object]] = {}
    read = []
    for release, where, text in seen:
        read.append(release)
        bound = star_names(text)
        for name in FOLLOWED[module]:
            if name in bound and name not in names:
                names[name] = {
                    "qualified": f"{module}.{name}",
                    "since": release,
                    "evidence": f"{where}:{FILES[module]}:{bound[name]}",
                }
    return {"read": read, "names": names}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flash-attention", type=Path, required=True)
    ap.add_argument("--kernels-wheels", type=Path, required=True)
    ap.add_argument("--transformers-wheels", type=Path, required=True)
    ap.add_argument("--output", type=Path, default=Path(__file__).parents[1] / "fa_lint/kb/exports.json")
    args = ap.parse_args(argv)
    modules = {}
    for module in ("flash_attn", "flash_attn.flash_attn_interface"):
        seen = ((str(v), tag, t) for v, tag, t in _tag_texts(args.flash_attention, FILES[module]))
        modules[module] = _record(module, seen)
    for module, folder in (("kernels", args.kernels_wheels), ("transformers", args.transformers_wheels)):
        seen = ((str(v), f"{module}-{v}", t) for v, t in _wheel_texts(folder, module, FILES[module]))
        modules[module] = _record(module, seen)
    empty = [m for m, r in modules.items() if not r["read"]]
    if empty:
        print(f"error: nothing read for {', '.join(empty)}", file=sys.stderr)
        return 1
    doc = {"schema": 1, "generator": "scripts/build_exports_kb.py", "modules": modules}
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
