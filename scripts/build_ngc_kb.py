#!/usr/bin/env python3
"""Check scripts/data/ngc.json and write fa_lint/kb/ngc.json: what each NGC PyTorch container ships.

Maintainer script; fa-lint never runs it. NVIDIA's release notes are web pages no script of ours can
fetch, so the rows are data, each with its source. The script checks what a wrong row would break:
every source key exists and its text quotes the row's values (a torch, CUDA, Python or flash-attn
version a row gives must appear in its source's text, so a row copied wrong fails here); torch is an
NGC build (``X.Y.0a0+commit``, never a PyPI release); release keys read ``YY.MM``. Then it writes the
knowledge base file, rows in release order.

    python scripts/build_ngc_kb.py            # write fa_lint/kb/ngc.json
    python scripts/build_ngc_kb.py --check    # exit 1 on a problem or a stale kb file
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "scripts" / "data" / "ngc.json"
KB = ROOT / "fa_lint" / "kb" / "ngc.json"
FIELDS = ("torch", "cuda", "python", "ubuntu", "flash_attn")


def problems(doc: dict[str, Any]) -> list[str]:
    out = []
    sources = doc["sources"]
    for key in ("ships_flash_attn_since", "constraints_file"):
        row = doc[key]
        if row["source"] not in sources or row.get("release", row.get("since")) not in sources[row["source"]]:
            out.append(f"{key}: its source does not say {row.get('release', row.get('since'))}")
    for tag, row in doc["releases"].items():
        if not re.fullmatch(r"\d\d\.\d\d", tag):
            out.append(f"{tag}: not a YY.MM release")
        text = sources.get(row["source"])
        if text is None:
            out.append(f"{tag}: unknown source {row['source']!r}")
            continue
        if tag not in text:
            out.append(f"{tag}: its source does not name the release")
        for field in FIELDS:
            if field in row and row[field] not in text:
                out.append(f"{tag}: {field} {row[field]!r} is not in its source")
        if "torch" in row and not re.fullmatch(r"\d+\.\d+\.\d+a0\+[0-9a-f]+", row["torch"]):
            out.append(f"{tag}: torch {row['torch']!r} is not an NGC build (X.Y.0a0+commit)")
    return out


def built(doc: dict[str, Any]) -> str:
    out = dict(doc)
    out["generator"] = "scripts/build_ngc_kb.py from scripts/data/ngc.json"
    out["releases"] = dict(sorted(doc["releases"].items()))
    return json.dumps(out, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    doc = json.loads(DATA.read_text(encoding="utf-8"))
    found = problems(doc)
    for p in found:
        print(f"{DATA}: {p}", file=sys.stderr)
    if found:
        return 1
    text = built(doc)
    if args.check:
        if not KB.exists() or KB.read_text(encoding="utf-8") != text:
            print(f"{KB} is stale: run scripts/build_ngc_kb.py", file=sys.stderr)
            return 1
        return 0
    KB.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
