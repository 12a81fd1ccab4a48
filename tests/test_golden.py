"""Golden snapshots: every output format over the bundled example project, the full and concise text with
and without colour, ``--statistics`` and ``--show-fixes``, and a project with one of every finding.

Regenerate after an intended change with: FA_LINT_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py
and read the diff: each snapshot is judged by hand against the files it comes from.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fa_lint import cli
from fa_lint.model import INTERNAL
from fa_lint.report import FORMATS
from fa_lint.rules import RULES
from fa_lint.rules._text import HEADLINE
from tests.conftest import REPO, run

GOLDEN = Path(__file__).parent / "golden"
EVERY_RULE = GOLDEN / "every-rule"
CONCISE_LINE = 200

# snapshot name -> the command line, run from the repository root
CASES: dict[str, tuple[str, ...]] = {
    **{f"demo.{fmt}": ("--format", fmt, "examples/demo") for fmt in FORMATS},
    "demo-color.text": ("--color", "always", "examples/demo"),
    "demo-color.concise": ("--color", "always", "--format", "concise", "examples/demo"),
    "demo-statistics.text": ("--statistics", "examples/demo"),
    "demo-statistics.json": ("--statistics", "--format", "json", "examples/demo"),
    "demo-show-fixes.text": ("--show-fixes", "examples/demo"),
    "every-rule-show-fixes.concise": ("--show-fixes", "--format", "concise", "tests/golden/every-rule"),
    "every-rule-show-unsafe-fixes.concise": (
        "--show-fixes",
        "--unsafe-fixes",
        "--format",
        "concise",
        "tests/golden/every-rule",
    ),
    **{
        f"every-rule.{fmt}": ("--format", fmt, "tests/golden/every-rule")
        for fmt in ("text", "concise", "json", "sarif")
    },
}


def _output(name: str) -> str:
    r = run("--isolated", *CASES[name])
    assert r.code == 1, r.err  # both projects hold errors
    return r.out.replace(str(REPO), "[REPO]")  # azure's absolute paths: the same on every machine


@pytest.mark.parametrize("name", sorted(CASES))
def test_snapshot(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    path = GOLDEN / name
    out = _output(name)
    if os.environ.get("FA_LINT_UPDATE_GOLDEN"):
        path.write_text(out)
    assert out == path.read_text()


def test_every_format_has_a_snapshot() -> None:
    assert sorted(p.suffix[1:] for p in GOLDEN.glob("demo.*")) == sorted(FORMATS)
    assert set(cli.FORMATS) == set(FORMATS)
    assert sorted(GOLDEN.glob("*.*")) == sorted(GOLDEN / name for name in CASES)


def test_the_every_rule_project_holds_every_rule() -> None:
    # every rule a file can bring about: FAL902 is fa-lint's own bug, which no file should
    # (tests/test_hostile_round5.py makes one, and checks it in every format)
    doc = json.loads((GOLDEN / "every-rule.json").read_text())
    assert sorted({f["code"] for f in doc["findings"]}) == sorted(set(RULES) - {INTERNAL})


def test_headlines_fit_a_line_and_notes_are_apart() -> None:
    for name in ("demo.json", "every-rule.json"):
        for f in json.loads((GOLDEN / name).read_text())["findings"]:
            assert len(f["message"]) <= HEADLINE, f["message"]
            assert "\n" not in f["message"] and all("\n" not in n for n in f["notes"])
            assert f["help"], f  # every finding says what to do
            assert f["message"] not in f["notes"]
    for name in ("demo.concise", "every-rule.concise"):
        lines = (GOLDEN / name).read_text().splitlines()
        assert lines and all(len(line) <= CONCISE_LINE for line in lines), name


def test_colour_snapshots_differ_only_in_escapes() -> None:
    for fmt in ("text", "concise"):
        coloured = (GOLDEN / f"demo-color.{fmt}").read_text()
        assert "\033[1;31mFAL001 [error]\033[0m" in coloured  # the severity in words, in its colour
        plain = coloured
        for code in ("\033[1;31m", "\033[1;33m", "\033[1;36m", "\033[1;34m", "\033[1m", "\033[0m"):
            plain = plain.replace(code, "")
        assert plain == (GOLDEN / f"demo.{fmt}").read_text()


def test_the_golden_project_has_no_stray_files() -> None:
    names = sorted(str(p.relative_to(EVERY_RULE)) for p in EVERY_RULE.rglob("*") if p.is_file())
    doc = json.loads((GOLDEN / "every-rule.json").read_text())
    read = sorted(str(Path(f).relative_to("tests/golden/every-rule")) for f in doc["files"])
    assert [n for n in names if n not in read] == ["README.md"]
