"""What every run must keep, whatever the input: shared by the CI property tests (tests/test_fuzz.py)
and the long fuzz run (``python -m tests.fuzz``, see docs/reliability.md)."""

from __future__ import annotations

import codecs
import contextlib
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from fa_lint import engine
from fa_lint._compat import chdir
from fa_lint.engine import Report
from fa_lint.files import read
from fa_lint.fixes import apply as fix
from fa_lint.report import FORMATS, renderer
from fa_lint.settings import config

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
    for fmt in FORMATS:
        out = renderer(fmt)(report, color=False, fixable=True)
        assert_safe(out, fmt, len(report.findings))
        outputs[fmt] = out
    return outputs


def _fixes_keep_every_other_byte(report: Report) -> None:
    """--fix changes only its spans, and what it writes reads again without an internal error."""
    for outcome in fix.run(report.findings, unsafe=True, dry_run=True):
        if not outcome.applied:
            continue
        bom = codecs.BOM_UTF8 if outcome.before.startswith(codecs.BOM_UTF8) else b""
        text = outcome.before[len(bom) :].decode("utf-8")
        starts = [0, *(i + 1 for i, c in enumerate(text) if c == "\n")]  # the line model, done by hand
        expected, end = [], 0
        for f in outcome.applied:  # in file order, without overlaps
            a = starts[f.location.line - 1] + f.location.column - 1
            b = starts[f.location.end_line - 1] + f.location.end_column - 1
            assert a >= end and text[a:b] == f.old
            expected += [text[end:a], f.new]
            end = b
        assert outcome.after == bom + ("".join(expected) + text[end:]).encode("utf-8")
        again = read.parse_file(outcome.path, outcome.applied[0].source, outcome.after)
        assert not any("internal error" in getattr(r, "message", "") for r in again.records)


def _diff_is_safe(report: Report) -> None:
    """--diff: file names quoted and lines escaped, so no patch line forges a command or a sequence
    (a CRLF file's line ends are the patch's own, and kept)."""
    for outcome in fix.run(report.findings, unsafe=True, dry_run=True):
        if outcome.applied:
            assert_safe(outcome.patch()[0].replace("\r\n", "\n"), "diff", 0)


def check(name: str, data: bytes) -> Report:
    """The whole run over one file: no internal error, safe output in every format, fixes in place,
    and the configuration read from it (a pyproject.toml) raising nothing but a configuration error."""
    with tempfile.TemporaryDirectory() as tmp, chdir(tmp):
        path = Path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        report = engine.check([name])
        crashed = [f.message for f in report.findings if "internal error" in f.message]
        assert crashed == [], crashed
        render_all(report)
        _fixes_keep_every_other_byte(report)
        _diff_is_safe(report)
        if name == "pyproject.toml":
            config.find(".")
            with contextlib.suppress(config.ConfigError):
                config.load(name)
    return report
