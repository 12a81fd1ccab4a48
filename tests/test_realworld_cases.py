"""The fifty hand-judged real cases in ../shared/realworld, scored by their own tool: all must pass.

``../shared/tools/realworld-check`` runs fa-lint on each case folder (real files from public
repositories, byte for byte) and compares its JSON with the case's ``expect.json``, judged by hand from
flash-attn's source and published metadata, never from fa-lint's output. It runs this checkout's
fa-lint (``python -m fa_lint`` with the checkout first on the path), as a user would.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

from tests.conftest import REPO, SHARED

CASES = SHARED / "realworld"
TOOL = SHARED / "tools" / "realworld-check"

pytestmark = pytest.mark.skipif(
    not (TOOL.exists() and CASES.is_dir()), reason="../shared/realworld or its tool is absent"
)


def test_every_realworld_case_passes() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH")))),
    }
    fa_lint = shlex.join([sys.executable, "-m", "fa_lint"])  # the tool splits it as a shell would
    proc = subprocess.run(
        [sys.executable, str(TOOL), "--fa-lint", fa_lint, str(CASES)],
        capture_output=True,
        text=True,
        env=env,
        timeout=30 * 60,  # the tool gives each case 30 s; fifty of them never take this long
    )
    out = proc.stdout + proc.stderr
    score = re.search(r"realworld: (\d+)/(\d+) cases pass", out)
    assert score is not None, out[-2000:]
    cases = sum(1 for d in CASES.iterdir() if (d / "expect.json").exists())
    assert int(score[2]) == cases >= 50  # every case was scored, none skipped
    assert (int(score[1]), proc.returncode) == (cases, 0), out[-4000:]
