"""fa_lint._lazy: a pattern compiled when first used, once; and a plain check compiles none of those
that read what few files hold."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from fa_lint._lazy import Lazy


def test_compiled_once_when_first_used() -> None:
    lazy = Lazy(r"a+(b)", re.I)
    assert lazy._compiled is None
    first = lazy()
    assert first.flags & re.I and first.pattern == r"a+(b)"
    assert lazy() is first
    match = first.search("xAAb")
    assert match is not None and match[1] == "b"


def test_bytes_patterns_too() -> None:
    lazy = Lazy(rb"coding[:=]\s*([-\w.]+)")
    found = lazy().search(b"# -*- coding: latin-1 -*-")
    assert found is not None and found[1] == b"latin-1"


def test_a_plain_check_compiles_no_pattern_of_rare_input(tmp_path: Path) -> None:
    """In a process of its own: a test before this one may have read an Azure VM size."""
    (tmp_path / "requirements.txt").write_text("torch==2.4.0\nflash-attn==2.4.2\n", encoding="utf-8")
    script = (
        "import sys; from fa_lint import engine; from fa_lint.kb import gpus; from fa_lint.sources import notebook\n"
        "report = engine.check([sys.argv[1]])\n"
        "print(len(report.files), gpus._AZURE._compiled is None, notebook._KAGGLE._compiled is None)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["1", "True", "True"]  # the file was checked; neither pattern compiled
