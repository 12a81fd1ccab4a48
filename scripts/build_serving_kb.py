#!/usr/bin/env python3
"""Regenerate fa_lint/kb/serving.json: which GPUs SGLang's FlashAttention backends accept, per release.

Maintainer script; fa-lint never runs it, and it never imports or runs SGLang: it reads released
``sglang-*.whl`` files (``pip download --no-deps sglang==X -d DIR``) as zip archives, and for each:

* the attention-backend flags its server declares (``--attention-backend``, and the prefill and decode
  ones where they exist) and whether ``fa3``/``fa4`` are among their choices;
* the ``assert`` that guards its ``fa3`` backend (``model_runner.py`` in older releases,
  ``layers/attention/attention_registry.py`` later), with its line, evaluated with ``ast`` for each
  compute-capability major 7 to 12, for a model with and without MLA: which GPUs start the backend.

    python scripts/build_serving_kb.py --wheels DIR [--output fa_lint/kb/serving.json]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

FLAGS = ("--attention-backend", "--prefill-attention-backend", "--decode-attention-backend")
_FA3_MESSAGE = "FlashAttention v3 Backend requires"


def _files(z: zipfile.ZipFile) -> dict[str, str]:
    return {
        n: z.read(n).decode("utf-8", "replace")
        for n in z.namelist()
        if n.startswith("sglang/srt/") and n.endswith(".py")
    }


def flags(files: dict[str, str]) -> dict[str, str]:
    """Each backend flag the server declares, with its line."""
    found: dict[str, str] = {}
    for path in sorted(files):
        if "server_args" not in path and "arg_groups" not in path:
            continue
        for n, line in enumerate(files[path].splitlines(), 1):
            for flag in FLAGS:
                field = flag.removeprefix("--").replace("-", "_")  # a typed field: its name is the flag's
                declared = f'"{flag}"' in line or re.match(rf"\s*{field}\s*:\s*A\[", line)
                if declared and flag not in found:
                    found[flag] = f"{path}:{n}: {line.strip()}"
    return found


def choices(files: dict[str, str]) -> list[str]:
    """fa3 and fa4, where the backend choices list them."""
    text = "\n".join(t for p, t in files.items() if "server_args" in p or "arg_groups" in p)
    return [c for c in ("fa3", "fa4") if re.search(rf'"{c}"', text)]


def fa3_assert(files: dict[str, str]) -> tuple[str, ast.expr] | None:
    """The assert guarding the fa3 backend, as evidence and its test expression."""
    for path in sorted(files):
        lines = files[path].splitlines()
        for n, line in enumerate(lines, 1):
            if _FA3_MESSAGE not in line:
                continue
            start = max(i for i in range(n) if lines[i].lstrip().startswith("assert "))
            snippet = "\n".join(lines[start : n + 3]).strip()
            tree = ast.parse(_dedent(snippet))
            node = next(x for x in ast.walk(tree) if isinstance(x, ast.Assert))
            return f"{path}:{start + 1}: {lines[start].strip()}", node.test
    return None


def _dedent(snippet: str) -> str:
    """The assert statement alone, parseable: up to the line whose brackets close it."""
    out, depth = [], 0
    for line in snippet.splitlines():
        out.append(line.strip())
        depth += line.count("(") - line.count(")")
        if depth <= 0 and len(out) > 1:
            break
    return " ".join(out)


def accepts(test: ast.expr, major: int, mla: bool) -> bool:
    """The assert's test, evaluated for one GPU: ``major`` and ``torch.cuda.get_device_capability()[0]``
    are the capability major, ``minor`` is 0, ``runner.use_mla_backend``/``self.use_mla_backend`` is
    ``mla``, ``_is_musa`` (another vendor's path) is False."""
    names = {"major": major, "minor": 0, "_is_musa": False}

    def ev(node: ast.expr) -> Any:
        if isinstance(node, ast.BoolOp):
            vals = [ev(v) for v in node.values]
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not ev(node.operand)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = ev(node.left), ev(node.comparators[0])
            op = type(node.ops[0])
            return {
                ast.Eq: left == right,
                ast.GtE: left >= right,
                ast.Gt: left > right,
                ast.LtE: left <= right,
                ast.Lt: left < right,
                ast.NotEq: left != right,
            }[op]
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.Attribute) and node.attr == "use_mla_backend":
            return mla
        if isinstance(node, ast.Subscript):  # torch.cuda.get_device_capability()[0]
            return major
        raise ValueError(f"cannot evaluate {ast.unparse(node)}")

    return bool(ev(test))


def release(whl: Path) -> dict[str, Any]:
    with zipfile.ZipFile(whl) as z:
        files = _files(z)
    version = whl.name.split("-")[1]
    found: dict[str, Any] = {
        "version": version,
        "wheel": whl.name,
        "flags": flags(files),
        "choices": choices(files),
    }
    guard = fa3_assert(files)
    if guard is not None:
        evidence, test = guard
        found["fa3"] = {
            "at": evidence,
            "test": ast.unparse(test),
            "accepts": {str(m): [accepts(test, m, False), accepts(test, m, True)] for m in range(7, 13)},
        }
    return found


def _key(p: Path) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", p.name.split("-")[1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--wheels", type=Path, required=True, help="a folder of sglang-*.whl from PyPI")
    ap.add_argument("--output", type=Path, default=Path("fa_lint/kb/serving.json"))
    args = ap.parse_args(argv)
    releases = [release(w) for w in sorted(args.wheels.glob("sglang-*.whl"), key=_key)]
    if not releases:
        print("no sglang wheel in the folder", file=sys.stderr)
        return 1
    doc = {
        "schema": 1,
        "generator": "scripts/build_serving_kb.py",
        "source": "sglang wheels from PyPI (python/sglang/srt in https://github.com/sgl-project/sglang)",
        "note": "accepts[major] = [a model without MLA, with MLA]: whether the fa3 backend's assert holds",
        "sglang": releases,
    }
    args.output.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
