from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fa_lint.cli import main
from fa_lint.model import Include, Parsed, ParseProblem, Requirement
from fa_lint.sources import SOURCES

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent
SHARED = REPO.parent / "shared"


def check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema (a test dependency) on ``files`` against one of its vendored schemas."""
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def parse(source: str, path: str | Path, text: str | None = None) -> list[Parsed]:
    path = str(path)
    if text is None:
        text = Path(path).read_text(encoding="utf-8")
    return list(SOURCES[source].parse(path, text))


def reqs(records: list[Parsed], name: str | None = "flash-attn") -> list[Requirement]:
    return [r for r in records if isinstance(r, Requirement) and (name is None or r.name == name)]


def includes(records: list[Parsed]) -> list[Include]:
    return [r for r in records if isinstance(r, Include)]


def problems(records: list[Parsed]) -> list[ParseProblem]:
    return [r for r in records if isinstance(r, ParseProblem)]


def span(r: Requirement | Include | ParseProblem) -> tuple[int, int, int, int]:
    loc = r.location
    return loc.line, loc.column, loc.end_line, loc.end_column


class Run:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.out)

    def codes(self) -> list[tuple[str, int, str]]:
        return [(f["path"], f["line"], f["code"]) for f in self.json["findings"]]


class Tty(io.StringIO):
    """An output that says it is a terminal (a plain io.StringIO says it is not)."""

    def isatty(self) -> bool:
        return True


def run(*argv: str) -> Run:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return Run(code, out.getvalue(), err.getvalue())


def lint(project: Any, files: dict[str, str], *args: str) -> list[dict[str, Any]]:
    """``files`` written by the ``project`` fixture, then ``fa-lint --isolated --format json ARGS .``
    there: its findings."""
    project(files)
    found: list[dict[str, Any]] = run("--isolated", "--format", "json", *args, ".").json["findings"]
    return found


def assert_cases_listed(cases: Path, expected: Iterable[str]) -> None:
    """The real cases under ``cases`` are exactly ``expected``, and its README.md has a row for each."""
    names = sorted(expected)
    assert sorted(p.name for p in cases.iterdir() if p.is_dir()) == names
    readme = (cases / "README.md").read_text()
    assert all(f"| {name} |" in readme for name in names)


def realworld_findings(case: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, str]]:
    """``fa-lint --isolated .`` in the real case ``case``: each finding's code, line and severity, sorted."""
    monkeypatch.chdir(case)
    found = run("--isolated", "--format", "json", ".").json["findings"]
    return sorted((f["code"], f["line"], f["severity"]) for f in found)


@pytest.fixture(autouse=True)
def _no_forced_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal's colour settings never reach a test: FORCE_COLOR in a CI's environment would colour
    every text report a test reads, and TERM=dumb (an Emacs shell) none (the tests that need them set
    them)."""
    for name in ("FORCE_COLOR", "CLICOLOR_FORCE", "CLICOLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)


def pytest_configure(config: pytest.Config) -> None:
    """tests/node_tools.py's lines (the npm install the first run makes) go to the terminal, past the
    capture that holds collection's output."""
    from tests import node_tools

    def announce(line: str) -> None:
        terminal = config.pluginmanager.get_plugin("terminalreporter")
        capture = config.pluginmanager.get_plugin("capturemanager")
        if terminal is None or capture is None:
            node_tools._stderr(line)
            return
        with capture.global_and_fixture_disabled():
            terminal.write_line(f"node_tools: {line}")

    node_tools.announce = announce


@pytest.fixture(autouse=True)
def _needs_tool(request: pytest.FixtureRequest) -> None:
    """A test marked ``needs_tool(reason)`` (tests/node_tools.py) skips for the reason a tool is missing;
    under FA_LINT_REQUIRE_TOOLS it fails instead, for a run that must not pass with the real tools unrun."""
    mark = request.node.get_closest_marker("needs_tool")
    if mark is None or not mark.args[0]:
        return
    if os.environ.get("FA_LINT_REQUIRE_TOOLS"):
        pytest.fail(f"FA_LINT_REQUIRE_TOOLS is set, but {mark.args[0]}", pytrace=False)
    pytest.skip(mark.args[0])


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A temporary project folder as the current directory; call it with {name: text} to write files."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)

    def write(files: dict[str, str | bytes]) -> Path:
        for name, content in files.items():
            p = tmp_path / name
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                p.write_bytes(content)
            else:
                p.write_text(content, encoding="utf-8")
        return tmp_path

    write.path = tmp_path  # type: ignore[attr-defined]
    yield write
    os.chdir(REPO)
