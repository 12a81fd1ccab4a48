#!/usr/bin/env python3
"""Check scripts/data/ngc.json and write fa_lint/kb/ngc.json: what each NGC PyTorch container ships.

Maintainer script; fa-lint never runs it. NVIDIA's release notes are web pages no script of ours can
fetch, so the rows are data, each field ``[value, source]`` with its own source. The script checks what a
wrong row would break: every source key exists and its text quotes the field's value and names the
release (``24.10`` or the notes page's ``rel-24-10``), so a value copied wrong, or put on the wrong
release, fails here; torch is an NGC build (``X.Y.0a0+commit``, never a PyPI release); release keys read
``YY.MM``, and every month from 23.01 to the newest row has an entry (a month nothing could be cited for
is an empty entry: unknown, said so). Then it writes the knowledge base file, rows in release order.

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


def _field_problems(tag: str, row: dict[str, Any], sources: dict[str, str]) -> list[str]:
    out = []
    for field, pair in row.items():
        if field not in FIELDS or not (isinstance(pair, list) and len(pair) == 2):
            out.append(f"{tag}: {field!r} is not one of {FIELDS} as [value, source]")
            continue
        value, source = pair
        text = sources.get(source)
        if text is None:
            out.append(f"{tag}: {field}: unknown source {source!r}")
            continue
        if tag not in text and f"rel-{tag.replace('.', '-')}" not in text:
            out.append(f"{tag}: {field}: its source does not name the release")
        if value not in text:
            out.append(f"{tag}: {field} {value!r} is not in its source")
        if field == "torch" and not re.fullmatch(r"\d+\.\d+\.\d+a0\+[0-9a-f]+", value):
            out.append(f"{tag}: torch {value!r} is not an NGC build (X.Y.0a0+commit)")
    return out


def _months(tags: list[str]) -> list[str]:
    """The months from 23.01 to the newest release with an entry that have none."""
    newest = max((int(t[:2]), int(t[3:])) for t in tags)
    want = [f"{y:02d}.{m:02d}" for y in range(23, newest[0] + 1) for m in range(1, 13) if (y, m) <= newest]
    return [
        f"{t}: no entry (every month from 23.01 has one, empty where nothing is cited)"
        for t in want
        if t not in tags
    ]


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
            continue
        out += _field_problems(tag, row, sources)
    return out + _months([t for t in doc["releases"] if re.fullmatch(r"\d\d\.\d\d", t)])


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
