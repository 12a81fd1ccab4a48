"""Issue 35, item 17 (part): `admitted` written on one line. The JSON contract (docs/output.md) stays
version 1: the same document for any JSON reader, fewer bytes."""

from __future__ import annotations

import json
from typing import Any

from fa_lint.report._common import compact
from tests.conftest import run


def test_an_unpinned_requirement_admits_every_release_on_one_line(project: Any) -> None:
    project({f"d{i}/requirements.txt": "torch==2.3.1\nflash-attn\n" for i in range(12)})
    out = run("--isolated", "--format", "json", ".").out
    doc = json.loads(out)
    admitted = [f["admitted"] for f in doc["findings"] if f["code"] == "FAL002"]
    assert len(admitted) == 12 and all(len(a) > 70 and a[0] == "0.2.0" for a in admitted)
    lines = [line.strip() for line in out.splitlines() if '"admitted":' in line]
    assert lines.count(f'"admitted": {json.dumps(admitted[0])},') == 12
    # the same data as the indented encoder writes it, and smaller
    full = json.dumps(doc, indent=2) + "\n"
    assert json.loads(full) == doc and len(out) < len(full) - 12 * 76 * 6


def test_sarif_properties_are_on_one_line_too(project: Any) -> None:
    project(
        {"requirements.txt": "torch==2.4.1\nflash-attn\n"}
    )  # 2.8.3.post1 has a torch 2.4 wheel: FAL002 alone
    out = run("--isolated", "--format", "sarif", ".").out
    (line,) = [line.strip() for line in out.splitlines() if '"admitted":' in line]
    assert line.startswith('"admitted": ["0.2.0", "0.2.1", ') and line.endswith("],")


def test_only_the_admitted_arrays_change() -> None:
    """A string that reads like the key is escaped in JSON text, so it is never taken for one; other
    arrays keep one item a line; an empty list and null stay as they were."""
    doc = {
        "notes": ['"admitted": ["x",\n "y"]', "b"],
        "findings": [{"admitted": ["2.5.0", 'a "quoted\\" one'], "files": ["p", "q"]}, {"admitted": []}],
        "admitted": None,
    }
    text = json.dumps(doc, indent=2)
    out = compact(text)
    assert json.loads(out) == doc
    assert '"admitted": ["2.5.0", "a \\"quoted\\\\\\" one"]' in out
    assert '"files": [\n' in out and '"notes": [\n' in out
    assert out.count("\n") == text.count("\n") - 3
