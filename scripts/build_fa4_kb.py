#!/usr/bin/env python3
"""Regenerate fa_lint/kb/fa4.json: every flash-attn-4 release on PyPI and what it can do.

Maintainer script; fa-lint never runs it. flash-attn-4 (the CuTe DSL kernels in flash-attention's
``flash_attn/cute``, imported as ``flash_attn.cute``) is pure Python: each release's wheel carries the
interface that runs. For every release the script reads the wheel's METADATA (Requires-Python and
Requires-Dist: nvidia-cutlass-dsl, quack-kernels...) and parses ``flash_attn/cute/interface.py`` with
``ast`` (never importing it):

* paged KV: whether ``flash_attn_varlen_func`` takes ``page_table``, and whether the module has a
  ``flash_attn_with_kvcache`` at all;
* the compute capabilities the forward pass accepts (``assert arch // 10 in [...]`` in
  ``_flash_attn_fwd``) and those where it refuses a page table (``assert page_table is None`` under
  ``if arch // 10 == N``).

Each fact keeps the file and line it was read from. With ``--repo`` (a flash-attention checkout) the
``fa4-v*`` tags are read the same way, from their source, as a cross-check and for the tags PyPI has
no release of.

    python scripts/build_fa4_kb.py --pypi-json flash-attn-4.json --wheels wheels/ [--download] \\
        [--repo ../flash-attention] [--output fa_lint/kb/fa4.json]
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import email.parser
import json
import re
import subprocess
import sys
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

PYPI_JSON = "https://pypi.org/pypi/flash-attn-4/json"
INTERFACE = "flash_attn/cute/interface.py"
PYPROJECT = "flash_attn/cute/pyproject.toml"
FORWARD = "_flash_attn_fwd"  # the function every entry point's forward pass goes through
VARLEN = "flash_attn_varlen_func"
KVCACHE = "flash_attn_with_kvcache"
TAG = re.compile(r"fa4-v(?P<version>.+)")
# the requirements that decide whether a release installs beside the rest of an environment
WATCHED = ("nvidia-cutlass-dsl", "quack-kernels", "torch")


class FactsError(Exception):
    """An interface shaped in a way this script does not know: never guess."""


def _params(fn: ast.FunctionDef) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


def _archs(test: ast.expr) -> list[int] | None:
    """``arch // 10 == N`` or ``arch // 10 in [..]`` -> the compute capability majors it names."""
    if not (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.BinOp)
        and isinstance(test.left.op, ast.FloorDiv)
        and isinstance(test.left.left, ast.Name)
        and test.left.left.id == "arch"
        and len(test.ops) == 1
    ):
        return None
    c = test.comparators[0]
    if isinstance(test.ops[0], ast.Eq) and isinstance(c, ast.Constant) and isinstance(c.value, int):
        return [c.value]
    if isinstance(test.ops[0], ast.In) and isinstance(c, (ast.List, ast.Tuple)):
        values = [e.value for e in c.elts if isinstance(e, ast.Constant) and isinstance(e.value, int)]
        return sorted(values) if len(values) == len(c.elts) else None
    return None


def _line(text: str, lineno: int) -> str:
    return text.splitlines()[lineno - 1].strip()


def interface_facts(text: str, where: str) -> dict[str, Any]:
    """What one interface.py can do, each fact with ``where:line`` and the line's text."""
    tree = ast.parse(text)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    varlen = functions.get(VARLEN)
    if varlen is None:
        raise FactsError(f"{where}: no module-level {VARLEN}")
    page = next((p for p in _params(varlen) if p.arg == "page_table"), None)
    forward = functions.get(FORWARD)
    if forward is None:
        raise FactsError(f"{where}: no module-level {FORWARD}")
    supported: dict[str, Any] | None = None
    refused: list[dict[str, Any]] = []
    for node in ast.walk(forward):
        if isinstance(node, ast.Assert) and supported is None and (archs := _archs(node.test)):
            supported = {"sm": archs, "at": f"{where}:{node.lineno}", "text": _line(text, node.lineno)}
        if isinstance(node, ast.If) and (archs := _archs(node.test)):
            for st in node.body:
                if isinstance(st, ast.Assert) and ast.unparse(st.test) == "page_table is None":
                    refused += [
                        {"sm": sm, "at": f"{where}:{st.lineno}", "text": _line(text, st.lineno)}
                        for sm in archs
                    ]
    if supported is None:
        raise FactsError(f"{where}: {FORWARD} asserts no compute capabilities")
    return {
        "varlen_page_table": (
            {"at": f"{where}:{page.lineno}", "text": _line(text, page.lineno)} if page is not None else None
        ),
        "kvcache": KVCACHE in functions,
        "archs": supported,
        "paged_refused": sorted(refused, key=lambda r: r["sm"]),
    }


def metadata_facts(text: str) -> dict[str, Any]:
    """Requires-Python, and the watched Requires-Dist (base and per extra) of a METADATA file."""
    msg = email.parser.Parser().parsestr(text)
    requires: dict[str, str] = {}
    extras: dict[str, list[str]] = {}
    for line in msg.get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement as exc:
            raise FactsError(f"METADATA: {line!r}: {exc}") from exc
        marker = str(req.marker) if req.marker else ""
        m = re.fullmatch(r'extra == "([^"]+)"', marker)
        if m:
            extras.setdefault(m[1], []).append(str(req).split(";")[0].strip())
        elif req.name in WATCHED and not marker:
            requires[req.name] = str(req.specifier)
    return {"requires_python": msg.get("Requires-Python"), "requires": requires, "extras": extras}


def wheel_facts(path: Path) -> dict[str, Any]:
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        meta = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        if meta is None:
            raise FactsError(f"{path.name}: no METADATA")
        facts: dict[str, Any] = metadata_facts(z.read(meta).decode("utf-8"))
        if INTERFACE in names:
            facts.update(interface_facts(z.read(INTERFACE).decode("utf-8"), f"{path.name}:{INTERFACE}"))
            facts["interface"] = INTERFACE
        else:
            facts["interface"] = None  # a placeholder: no flash_attn.cute at all
    return facts


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def tag_facts(repo: Path) -> list[dict[str, Any]]:
    """Every ``fa4-v*`` tag: its version, date, the distribution name its pyproject gives, and paged KV."""
    out = []
    for tag in _git(repo, "tag", "--list", "fa4-v*").split():
        m = TAG.fullmatch(tag)
        try:
            version = Version(m["version"]) if m else None
        except InvalidVersion:
            version = None
        if version is None:
            raise FactsError(f"tag {tag}: no version in its name")
        show = subprocess.run(
            ["git", "-C", str(repo), "show", f"{tag}:{INTERFACE}"],
            capture_output=True,
            text=True,
            check=False,
        )
        if show.returncode != 0:
            raise FactsError(f"tag {tag}: no {INTERFACE}")
        facts = interface_facts(show.stdout, f"{tag}:{INTERFACE}")
        pyproject = _git(repo, "show", f"{tag}:{PYPROJECT}")
        name = re.search(r'^name = "([^"]+)"', pyproject, re.M)
        out.append(
            {
                "tag": tag,
                "version": str(version),
                "date": _git(repo, "log", "-1", "--format=%cs", tag).strip(),
                "distribution": name[1] if name else None,
                "varlen_page_table": facts["varlen_page_table"] is not None,
                "kvcache": facts["kvcache"],
            }
        )
    return sorted(out, key=lambda t: Version(t["version"]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--pypi-json", type=Path, help="saved copy of " + PYPI_JSON)
    src.add_argument("--fetch-pypi", action="store_true", help="fetch " + PYPI_JSON)
    ap.add_argument("--wheels", type=Path, required=True, help="folder of flash_attn_4-*.whl files")
    ap.add_argument("--download", action="store_true", help="download missing wheels into --wheels")
    ap.add_argument("--repo", type=Path, help="flash-attention checkout, for the fa4-v* tags")
    ap.add_argument("--output", type=Path, default=Path(__file__).parents[1] / "fa_lint/kb/fa4.json")
    args = ap.parse_args(argv)
    if args.fetch_pypi:
        with urllib.request.urlopen(PYPI_JSON, timeout=60) as resp:
            pypi = json.load(resp)
    else:
        pypi = json.loads(args.pypi_json.read_text())
    try:
        releases = _releases(pypi, args)
        tags = tag_facts(args.repo) if args.repo else []
    except FactsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if isinstance(releases, str):
        print(f"error: {releases}", file=sys.stderr)
        return 1
    doc = {
        "schema": 1,
        "generated": dt.date.today().isoformat(),
        "generator": "scripts/build_fa4_kb.py",
        "distribution": "flash-attn-4",
        "module": "flash_attn.cute",
        "releases": releases,
        "tags": tags,
    }
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.output}: {len(releases)} releases, {len(tags)} tags", file=sys.stderr)
    return 0


def _releases(pypi: dict[str, Any], args: argparse.Namespace) -> list[dict[str, Any]] | str:
    out = []
    for version, files in sorted(pypi["releases"].items(), key=lambda kv: Version(kv[0])):
        wheel = next((f for f in files if f["packagetype"] == "bdist_wheel"), None)
        if wheel is None:
            if files:
                return f"{version} has no wheel to read"
            continue
        path = args.wheels / wheel["filename"]
        if not path.exists():
            if not args.download:
                return f"{path} missing (use --download)"
            args.wheels.mkdir(parents=True, exist_ok=True)
            urllib.request.urlretrieve(urllib.parse.urljoin(PYPI_JSON, wheel["url"]), path)
        out.append(
            {
                "version": version,
                "uploaded": min(f["upload_time"] for f in files)[:10],
                "yanked": all(f.get("yanked") for f in files),
                "source": f"wheel {wheel['filename']}",
                **wheel_facts(path),
            }
        )
    return out


if __name__ == "__main__":
    sys.exit(main())
