"""A syntax error stops the shell: what runs before and after an unquoted ``<`` with no file after it.

The expectations are the shells' own behaviour: ``scripts/shell_syntax_stop.py`` runs every case in
bash and dash (with a stand-in ``pip``, never a real install), as a file, with ``-c`` (a Docker
RUN's ``/bin/sh -c``) and with ``-e`` (GitHub's ``bash -e {0}``); fa-lint must install exactly what
pip received there, in a script, a Dockerfile ``RUN <<EOF`` and a workflow ``run:`` step. Beyond the
script: a RUN that fails fails the image build, so no later instruction of its stage runs (Docker
runs each RUN with ``/bin/sh -c`` and stops at a non-zero status); a failed step fails its job, and
a later step runs only if its ``if:`` calls always(), failure() or cancelled(), unless the failed
step has ``continue-on-error: true`` (GitHub's workflow syntax, ``steps[*].if`` and
``steps[*].continue-on-error``).
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import pytest

from fa_lint.model import NotRun, Requirement
from tests.conftest import REPO, parse, run

_spec = importlib.util.spec_from_file_location("shell_syntax_stop", REPO / "scripts" / "shell_syntax_stop.py")
assert _spec is not None and _spec.loader is not None
script = importlib.util.module_from_spec(_spec)
sys.modules["shell_syntax_stop"] = script
_spec.loader.exec_module(script)


@pytest.fixture(scope="module")
def seen() -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    found: dict[str, dict[str, dict[str, dict[str, Any]]]] = script.observations()
    assert "bash" in found  # bash is installed wherever the tests run
    return found


def _installed(records: list[Any]) -> tuple[list[str], list[str]]:
    """The flash-attn installs fa-lint has run, and those it keeps as never run."""
    ran = [r.raw for r in records if isinstance(r, Requirement) and r.name == "flash-attn"]
    never = [r.requirement.raw + (r.requirement.redirected or "") for r in records if isinstance(r, NotRun)]
    return ran, never


def _asked(text: str) -> list[str]:
    """Every flash-attn word the case writes, as the shell splits them."""
    words = text.replace("\\\n", " ").replace(";", " ").replace("'", " ").split()
    return [w for w in words if w.startswith("flash-attn")]


def _expect(observed: dict[str, Any]) -> list[str]:
    return [p.removeprefix("install ") for p in observed["pip"]]


@pytest.mark.parametrize("case", list(script.CASES))
def test_a_script_runs_what_the_shell_runs(case: str, seen: dict[str, Any]) -> None:
    text = script.CASES[case]
    ran, never = _installed(parse("shell", "case.sh", text))
    for shell in seen:
        for way in ("file", "-c"):
            assert ran == _expect(seen[shell][way][case]), (shell, way)
    # every other flash-attn word of the case is kept, as never run (for FAL007)
    assert sorted(ran + never) == sorted(_asked(text))


@pytest.mark.parametrize("case", list(script.CASES))
def test_a_docker_run_heredoc_runs_what_sh_c_runs(case: str, seen: dict[str, Any]) -> None:
    text = script.CASES[case].rstrip("\n") + "\n"
    ran, _ = _installed(parse("dockerfile", "Dockerfile", f"FROM python:3.11\nRUN <<EOF\n{text}EOF\n"))
    shell = "dash" if "dash" in seen else "bash"  # /bin/sh of Debian-based images is dash
    assert ran == _expect(seen[shell]["-c"][case])


@pytest.mark.parametrize("case", [c for c in script.CASES if "bash -c" not in c])
def test_a_workflow_step_runs_what_bash_e_runs(case: str, seen: dict[str, Any]) -> None:
    # (a failing `bash -c` under -e stops the step too: a failed command, which fa-lint does not
    # follow under `set -e`; that case is left out)
    body = "".join(f"          {line}\n" for line in script.CASES[case].rstrip("\n").split("\n"))
    workflow = f"on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n{body}"
    ran, _ = _installed(parse("workflow", ".github/workflows/ci.yml", workflow))
    assert ran == _expect(seen["bash"]["-e file"][case])


def _found(project: Any, files: dict[str, str]) -> list[tuple[str, int, str]]:
    project(files)
    out = run("--format", "json", "--isolated", ".").json["findings"]
    return sorted((f["path"], f["line"], f["code"]) for f in out)


def test_later_installs_are_said_never_to_run(project: Any) -> None:
    found = _found(
        project, {"setup.sh": "pip install torch\npip install einops<\npip install flash-attn==2.4.2\n"}
    )
    # not FAL001 on 2.4.2: that install never runs; FAL007 says why, where the flash-attn line is
    assert found == [("setup.sh", 3, "FAL007")]
    (f,) = run("--format", "json", "--isolated", ".").json["findings"]
    assert f["message"].startswith(
        "`flash-attn==2.4.2` is never installed: the shell stops at the syntax error `einops<`"
    )
    assert f["related_locations"][0]["line"] == 2


def test_a_run_that_stops_stops_its_stage(project: Any) -> None:
    dockerfile = (
        "FROM python:3.11 AS base\nRUN pip install einops<\nRUN pip install flash-attn==2.4.2\n"
        'RUN ["pip", "install", "flash-attn==2.4.2"]\n'
        "FROM base AS gpu\nRUN pip install flash-attn==2.4.2\n"
        "FROM python:3.11\nRUN pip install flash-attn==2.4.2\n"
    )
    found = _found(project, {"Dockerfile": dockerfile})
    # lines 3, 4 (its stage) and 6 (a stage built on it) never run; line 8's stage builds on its own
    assert [(line, code) for _, line, code in found if code in ("FAL001", "FAL007")] == [
        (3, "FAL007"),
        (4, "FAL007"),
        (6, "FAL007"),
        (8, "FAL001"),
    ]


def test_a_step_that_stops_fails_its_job(project: Any) -> None:
    steps = (
        "      - run: pip install einops<\n"
        "      - run: pip install flash-attn==2.4.2\n"
        "      - if: ${{ always() }}\n        run: pip install flash-attn==2.4.2\n"
    )
    other = "  b:\n    runs-on: x\n    steps:\n      - run: pip install einops<\n        continue-on-error: true\n"
    other += "      - run: pip install flash-attn==2.4.2\n"
    workflow = f"on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n{steps}{other}"
    found = _found(project, {".github/workflows/ci.yml": workflow})
    # line 7 never runs (the job failed); line 9 runs with always(); in job b the failure is let go
    assert [(line, code) for _, line, code in found if code in ("FAL001", "FAL007")] == [
        (7, "FAL007"),
        (9, "FAL001"),
        (15, "FAL001"),
    ]


def test_nothing_of_the_line_runs(project: Any) -> None:
    # torch and flash-attn on the line before the error: neither installs, so nothing is judged
    found = _found(
        project, {"setup.sh": "pip install torch && pip install flash-attn==2.4.2 && pip install x<\n"}
    )
    assert found == [("setup.sh", 1, "FAL007")]


def test_the_page_holds_the_scripts_table(seen: dict[str, Any]) -> None:
    from fa_lint.rules import page

    text = page("FAL007")
    table = script.table(seen).splitlines()
    if set(seen) == set(script.SHELLS):  # the whole table where both shells are installed
        assert all(f"  {line}" in text for line in table)
    else:  # bash's cells, wherever the tests run
        for name in script.CASES:
            row = next(line for line in text.splitlines() if line.startswith(f"  | {name} |"))
            for way in script.WAYS:
                assert script._cell(seen["bash"][way][name]) in row
