"""One golden snapshot per output format, over the bundled example project.

Regenerate after an intended change with: FA_LINT_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fa_lint import cli
from fa_lint.report import FORMATS
from tests.conftest import REPO, run

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_format_snapshot(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    r = run("--format", fmt, "--isolated", "examples/demo")
    assert r.code == 1
    path = GOLDEN / f"demo.{fmt}"
    if os.environ.get("FA_LINT_UPDATE_GOLDEN"):
        path.write_text(r.out)
    assert r.out == path.read_text()


def test_every_format_has_a_snapshot() -> None:
    assert sorted(p.suffix[1:] for p in GOLDEN.glob("demo.*")) == sorted(FORMATS)
    assert set(cli.FORMATS) == set(FORMATS)
