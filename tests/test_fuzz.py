"""Property tests: for every format, generated and mutated files never make fa-lint raise, hang on
them, print what they could use to forge output, or rewrite bytes outside a fix (tests/fuzz).

Seeded (derandomized) so CI sees the same few thousand inputs each run; ``python -m tests.fuzz`` is
the long, random run (docs/reliability.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fa_lint import engine
from fa_lint._compat import chdir
from fa_lint.sources import SOURCES
from tests.fuzz import check, render_all
from tests.fuzz.inputs import files

EXAMPLES = 200  # per format: about 3,000 in all, some 30 s


@pytest.mark.parametrize("source", list(SOURCES))
def test_no_input_breaks_a_run(source: str) -> None:
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(files(source))
    def run(case: tuple[str, bytes]) -> None:
        check(*case)

    run()


# --- layouts: what a checkout's tree can be (issue 23) ------------------------------------------------------

_FOLDERS = ["a", "b", "a/b", "docs", "build", ".venv", "x y", "a/b/c/d/e/f/g/h"]
_FILES = ["requirements.txt", "requirements-dev.txt", "Dockerfile", "environment.yml", "notes.txt"]
_LINKS = [
    "self",
    "..",
    ".",
    "/",
    "../requirements.txt/x",
    "nowhere",
    "requirements.txt",
    "../../..",
    "/etc/passwd",
]
_IGNORES = ["*", "!*.txt", "a/", "requirements*", "/build", "**/b/**", "*a*a*a*b", "[!r]*", "\\!x", "docs"]


@st.composite
def layouts(draw: st.DrawFn) -> dict[str, object]:
    """A tree of folders, dependency files, links (loops, dangling, through a file, out of the tree),
    .gitignore lines, and which files git tracks."""
    entries = draw(st.lists(st.tuples(st.sampled_from(_FOLDERS), st.sampled_from(_FILES)), max_size=8))
    links = draw(st.lists(st.tuples(st.sampled_from(_FOLDERS), st.sampled_from(_LINKS)), max_size=5))
    ignores = draw(st.lists(st.sampled_from(_IGNORES), max_size=4))
    tracked = draw(st.lists(st.booleans(), min_size=len(entries), max_size=len(entries)))
    return {"entries": entries, "links": links, "ignores": ignores, "tracked": tracked}


_GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.mark.skipif(shutil.which("git") is None, reason="which files git tracks is git's to say")
@settings(
    max_examples=60, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(layouts())
def test_no_layout_breaks_a_walk(layout: dict[str, object]) -> None:
    """Whatever the tree holds, the walk and the named-file search end, with no internal error and safe
    output; every dependency file git tracks is checked, whatever .gitignore says; no link out of the
    tree is read."""
    with tempfile.TemporaryDirectory() as tmp, chdir(tmp):
        subprocess.run(["git", "init", "-q"], check=True, env=_GIT_ENV)
        made: list[str] = []
        for folder, name in layout["entries"]:  # type: ignore[attr-defined]
            path = Path(folder, name)
            if path.exists() or path.is_symlink():
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                "flash-attn==2.4.2\n"
                if name != "Dockerfile"
                else "FROM x\nRUN pip install flash-attn==2.4.2\n"
            )
            made.append(str(path))
        for folder, target in layout["links"]:  # type: ignore[attr-defined]
            Path(folder).mkdir(parents=True, exist_ok=True)
            link = Path(folder, f"link-{len(os.listdir(folder))}")
            link.symlink_to(target)
        Path(".gitignore").write_text("\n".join(layout["ignores"]) + "\n")  # type: ignore[arg-type]
        tracked = [p for p, keep in zip(made, layout["tracked"], strict=False) if keep]  # type: ignore[call-overload]
        if tracked:
            subprocess.run(["git", "add", "-f", "--", *tracked], check=True, env=_GIT_ENV)
        for paths in (["."], made[:1]):
            if not paths:
                continue
            report = engine.check(paths)
            assert not [f.message for f in report.findings if "internal error" in f.message]
            render_all(report)
            assert not any("/etc/passwd" in f.location.path for f in report.findings)
        report = engine.check(["."])
        checked = {os.path.normpath(p) for p in report.files}
        skipped = ("build", ".venv")  # fa-lint's own skipped folders, tracked or not
        for path in tracked:
            if os.path.basename(path) != "notes.txt" and not path.startswith(skipped):
                assert os.path.normpath(path) in checked, (path, layout)
