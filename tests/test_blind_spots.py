"""The blind spots of issue 33 (shared/reliability 38-40, 45, 46): a real flash-attn pin that passed
without a finding. Each reproducer is rebuilt here from its input, with other members of its class:
every file installs flash-attn 2.4.x (no paged KV, so FAL001 is the truth, whatever fa-lint said before).
"""

from __future__ import annotations

from typing import Any

import pytest

from fa_lint.shell.commands import shell_script
from tests.conftest import run

NGC = "FROM nvcr.io/nvidia/pytorch:24.01-py3\n"


def findings(*argv: str) -> list[tuple[str, int, int, str]]:
    r = run("--format", "json", *argv)
    assert "internal error" not in r.out + r.err, r.out + r.err
    assert r.code in (0, 1), r.err
    return [(f["path"], f["line"], f["column"], f["code"]) for f in r.json["findings"]]


def fal001(*argv: str) -> list[tuple[str, int, int]]:
    return [(p, line, col) for p, line, col, code in findings(*argv) if code == "FAL001"]


# --- 39: a continuation `\` followed by blanks ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        NGC + "RUN pip install --no-build-isolation \\   \n    flash-attn==2.4.2\n",  # the reproducer
        NGC + "RUN pip install --no-build-isolation \\\t\n    flash-attn==2.4.2\n",
        NGC + "RUN pip install --no-build-isolation \\ \t \n  # a comment\n\n    flash-attn==2.4.2\n",
        NGC + "RUN pip install --no-build-isolation \\  \r\n    flash-attn==2.4.2\r\n",
        "# escape=`\n" + NGC + "RUN pip install --no-build-isolation `  \n    flash-attn==2.4.2\n",
    ],
)
def test_a_continuation_followed_by_blanks_continues(project: Any, text: str) -> None:
    project({"Dockerfile": text})
    assert fal001("Dockerfile") == [("Dockerfile", text.count("\n"), 5)]  # the pin's line, the last


def test_an_escaped_escape_ends_the_instruction(project: Any) -> None:
    # `\\` at a line's end is an escaped backslash for BuildKit (lineContinuationRegex needs a
    # character other than the escape before it): the next line is an instruction of its own
    project(
        {"Dockerfile": NGC + "RUN echo done \\\\\nRUN pip install --no-build-isolation flash-attn==2.4.2\n"}
    )
    assert fal001("Dockerfile") == [("Dockerfile", 3, 38)]


@pytest.mark.parametrize(
    ("directives", "continues"),
    [
        ("# escape=`\n", True),
        ("# syntax=docker/dockerfile:1\n# ESCAPE = `\n", True),
        ("\n# escape=`\n", False),  # a blank line ends the directives
        ("# hello\n# escape=`\n", False),  # so does a comment
        ("# foo=bar\n# escape=`\n", False),  # and an unknown directive
    ],
)
def test_the_escape_directive_is_read_as_buildkit_reads_it(
    project: Any, directives: str, continues: bool
) -> None:
    project(
        {"Dockerfile": directives + NGC + "RUN pip install --no-build-isolation `\n    flash-attn==2.4.2\n"}
    )
    line = directives.count("\n") + 3
    # with the backtick escape the second line continues the RUN; without it, it is no instruction
    assert fal001("Dockerfile") == ([("Dockerfile", line, 5)] if continues else [])


# --- 40: an exec-form shell with -c -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "script"),
    [
        (["bash", "-c", "S"], 2),
        (["/bin/sh", "-lc", "S"], 2),
        (["bash", "-e", "-c", "S"], 3),
        (["bash", "-o", "pipefail", "-c", "S"], 4),
        (["bash", "-eo", "pipefail", "-c", "S"], 4),
        (["bash", "--norc", "-c", "S", "name", "arg"], 3),
        (["bash", "--rcfile", "x", "-xc", "S"], 4),
        (["bash", "script.sh", "-c"], None),  # a script file, not a -c string
        (["bash", "-e"], None),
        (["bash", "-c"], None),  # no script given
        (["sh", "+o", "errexit", "-c", "S"], 4),
    ],
)
def test_a_shells_c_script_is_the_first_argument_after_its_options(
    argv: list[str], script: int | None
) -> None:
    assert shell_script(argv) == script


@pytest.mark.parametrize(
    "run_line",
    [
        'RUN ["/bin/bash", "-c", "pip install --no-build-isolation flash-attn==2.4.2"]',  # the reproducer
        'RUN ["sh", "-c", "pip install --no-build-isolation flash-attn==2.4.2"]',
        'RUN ["bash", "-lc", "pip install --no-build-isolation flash-attn==2.4.2"]',
        'RUN ["/bin/bash", "-o", "pipefail", "-ec", "pip install --no-build-isolation flash-attn==2.4.2"]',
        'RUN ["/bin/dash", "-e", "-c", "cd /tmp && pip install --no-build-isolation flash-attn==2.4.2"]',
        'RUN --mount=type=cache,target=/root/.cache ["bash", "-c", "pip install --no-build-isolation flash-attn==2.4.2"]',
    ],
)
def test_an_exec_form_shell_script_is_read_and_located(project: Any, run_line: str) -> None:
    project({"Dockerfile": NGC + run_line + "\n"})
    assert fal001("Dockerfile") == [("Dockerfile", 2, run_line.index("flash-attn==") + 1)]


def test_an_exec_form_script_with_json_escapes_maps_back_to_the_file(project: Any) -> None:
    # \" and \u0020 are one character each to the shell; the continuation joins the two lines
    project(
        {
            "Dockerfile": NGC + 'RUN ["bash", "-c", "pip install \\"torch==2.3.1\\" &&\\u0020\\\n'
            ' pip install --no-build-isolation flash-attn==2.4.2"]\n'
        }
    )
    assert fal001("Dockerfile") == [("Dockerfile", 3, 35)]


def test_an_exec_form_command_that_is_no_shell_script_is_not_read_as_one(project: Any) -> None:
    # `bash script.sh ARG` runs a file; its argument is no command: nothing installs here
    project({"Dockerfile": NGC + 'RUN ["bash", "install.sh", "pip install flash-attn==2.4.2"]\n'})
    assert fal001("Dockerfile") == []


def test_a_shell_instruction_leaves_shell_form_runs_read(project: Any) -> None:
    project(
        {
            "Dockerfile": NGC + 'SHELL ["/bin/bash", "-o", "pipefail", "-c"]\n'
            "RUN pip install --no-build-isolation flash-attn==2.4.2 | tee log\n"
        }
    )
    assert fal001("Dockerfile") == [("Dockerfile", 3, 38)]


def test_a_shell_form_shell_with_options_before_c_is_read(project: Any) -> None:
    line = "RUN bash -o pipefail -c 'pip install --no-build-isolation flash-attn==2.4.2'"
    project({"Dockerfile": NGC + line + "\n", "install.sh": line[4:] + "\n"})
    assert fal001("Dockerfile", "install.sh") == [
        ("Dockerfile", 2, line.index("flash") + 1),
        ("install.sh", 1, line.index("flash") - 3),
    ]
