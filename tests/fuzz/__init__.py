"""What every run must keep, whatever the input: shared by the CI property tests (tests/test_fuzz.py)
and the long fuzz run (``python -m tests.fuzz``, see docs/reliability.md)."""

from __future__ import annotations

import json
import re
from typing import Any

from fa_lint.engine import Report
from fa_lint.report import FORMATS

# What no output line may hold: C0/C1 controls but tab and the final newline, Unicode line breaks,
# bidi controls. A lone surrogate fails the strict UTF-8 encode below.
_RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# The one kind of line --format github writes; anything else starting with "::" would be forged.
_ANNOTATION = re.compile(
    r"::(error|warning|notice) file=[^,:]*,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,"
    r"title=FAL\d{3} [a-z0-9-]+::FAL\d{3} "
)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def assert_safe(out: str, fmt: str, findings: int) -> None:
    """``out`` cannot forge a workflow command or a terminal sequence, and every consumer can read it."""
    out.encode("utf-8")  # strict: a lone surrogate raises here
    annotations = 0
    for line in out.split("\n"):
        assert not _RAW.search(line), f"raw control character in {fmt} output: {line!r}"
        assert "##[" not in line, f"legacy workflow command in {fmt} output: {line!r}"
        if line.lstrip().startswith("::"):
            assert fmt == "github" and _ANNOTATION.match(line), f"forged workflow command: {line!r}"
            annotations += 1
    if fmt == "github":
        assert annotations == findings
    if fmt in ("json", "sarif", "gitlab"):
        for s in _strings(json.loads(out)):
            s.encode("utf-8")  # strict parsers refuse "\ud800" escapes


def render_all(report: Report) -> dict[str, str]:
    """Every format's output for one report, each checked with ``assert_safe``."""
    outputs = {}
    for fmt, render in FORMATS.items():
        out = render(report, color=False, fixable=True)
        assert_safe(out, fmt, len(report.findings))
        outputs[fmt] = out
    return outputs
