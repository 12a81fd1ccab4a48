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
        'RUN ["/usr/bin/env", "bash", "-c", "pip install --no-build-isolation flash-attn==2.4.2"]',
        'RUN ["env", "MAX_JOBS=4", "sh", "-ec", "pip install --no-build-isolation flash-attn==2.4.2"]',
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


# --- 38: a variable whose value names another variable -------------------------------------------------------

MAKE_INSTALL = "install:\n\tpip install torch==2.3.1\n\tpip install --no-build-isolation $(FA_SPEC)\n"


@pytest.mark.parametrize(
    "definitions",
    [
        "FA_VERSION := 2.4.2\nFA_SPEC = flash-attn==$(FA_VERSION)\n",  # the reproducer
        "FA_VERSION := 2.4.2\nFA_SPEC := flash-attn==$(FA_VERSION)\n",
        "FA_SPEC = flash-attn==$(FA_VERSION)\nFA_VERSION = 2.4.2\n",  # `=` expands when used: any order
        "FA_SPEC = flash-attn==${MAJOR}.$(MINOR)\nMAJOR = 2\nMINOR = $(M).$(P)\nM = 4\nP = 2\n",
        # `:=` expands at its line: the later value of FA_VERSION is not the one FA_SPEC holds
        "FA_VERSION := 2.4.2\nFA_SPEC := flash-attn==$(FA_VERSION)\nFA_VERSION := 2.6.3\n",
        "FA_VERSION ?= 2.4.2\nFA_VERSION ?= 2.6.3\nFA_SPEC = flash-attn==$(FA_VERSION)\n",
        "V = 2.4.2\nFA_SPEC := torch==2.3.1\nFA_SPEC += flash-attn==$(V)\n",  # += then split in words
        "export FA_VERSION ?= 2.4.2\noverride FA_SPEC = flash-attn==$(FA_VERSION)\n",
    ],
)
def test_a_makefile_variable_naming_another_is_expanded_as_make_does(project: Any, definitions: str) -> None:
    project({"Makefile": definitions + "\n" + MAKE_INSTALL})
    line = definitions.count("\n") + 4
    assert fal001("Makefile") == [("Makefile", line, 35)]


def test_a_make_variable_defined_after_a_simple_one_read_it_is_not_taken(project: Any) -> None:
    # FA_SPEC := expands at its line, where FA_VERSION is 2.6.3 (paged KV): the later 2.4.2 is not it
    project(
        {
            "Makefile": "FA_VERSION := 2.6.3\nFA_SPEC := flash-attn==$(FA_VERSION)\nFA_VERSION := 2.4.2\n\n"
            + MAKE_INSTALL
        }
    )
    assert fal001("Makefile") == []


@pytest.mark.parametrize(
    "definitions",
    [
        "FA_SPEC = flash-attn==$(shell cat version.txt)\n",
        "FA_SPEC = flash-attn==$(A)\nA = $(B)\nB = $(A)\n",  # a cycle: make stops with an error
        # := expands at its line, where V is not defined (make's environment may set it): never the later 2.4.2
        "FA_SPEC := flash-attn==$(V)\nV = 2.4.2\n",
    ],
)
def test_a_make_value_that_cannot_be_followed_is_a_fal009(project: Any, definitions: str) -> None:
    project({"Makefile": definitions + "\n" + MAKE_INSTALL})
    line = definitions.count("\n") + 4
    assert [f for f in findings("Makefile") if f[3] != "FAL012"] == [("Makefile", line, 35, "FAL009")]


def test_a_chain_of_make_variables_deeper_than_the_bound_is_a_fal009(project: Any) -> None:
    chain = "".join(f"V{k} = $(V{k - 1})\n" for k in range(200, 0, -1)) + "V0 = 2.4.2\n"
    project({"Makefile": chain + "FA_SPEC = flash-attn==$(V200)\n\n" + MAKE_INSTALL})
    assert [f[3] for f in findings("Makefile") if f[3] != "FAL012"] == ["FAL009"]


def test_make_variables_that_double_each_other_stay_within_the_budget(project: Any) -> None:
    # V40 would be 2**40 characters: every expansion counts against the file's budget (reliability/19)
    chain = "V0 = x\n" + "".join(f"V{k} = $(V{k - 1})$(V{k - 1})\n" for k in range(1, 41))
    chain += "E0 =\n" + "".join(f"E{k} = $(E{k - 1})$(E{k - 1})\n" for k in range(1, 61))  # empty ones too
    project({"Makefile": chain + "FA_SPEC = flash-attn==2.4.2$(V40)$(E60)\n\n" + MAKE_INSTALL})
    r = run("--format", "json", "Makefile")  # said, not passed: the file's one FAL900 for its budget
    assert [(f["code"], f["message"][:24]) for f in r.json["findings"]] == [
        ("FAL900", "variables expand past 16")
    ]


@pytest.mark.parametrize(
    ("variables", "job_variables"),
    [
        ("  FA_VERSION: '2.4.2'\n  FA_SPEC: 'flash-attn==${FA_VERSION}'\n", ""),  # the reproducer
        ("  FA_VERSION: '2.4.2'\n", "    FA_SPEC: flash-attn==$FA_VERSION\n"),  # a job's naming the file's
        ("  FA_SPEC: flash-attn==${MAJOR}.${MINOR}\n  MAJOR: '2'\n", "    MINOR: '4.2'\n"),
        (
            "  FA_VERSION:\n    value: '2.4.2'\n    description: the pin\n  FA_SPEC: flash-attn==$FA_VERSION\n",
            "",
        ),
    ],
)
def test_a_gitlab_variable_inside_a_variable_is_expanded(
    project: Any, variables: str, job_variables: str
) -> None:
    job = "test:\n  image: nvcr.io/nvidia/pytorch:24.01-py3\n"
    job += ("  variables:\n" + job_variables) if job_variables else ""
    job += '  script:\n    - pip install --no-build-isolation "$FA_SPEC"\n'
    text = "variables:\n" + variables + job
    project({".gitlab-ci.yml": text})
    assert fal001(".gitlab-ci.yml") == [(".gitlab-ci.yml", text.count("\n"), 41)]


def test_a_gitlab_variable_not_to_expand_is_not_expanded(project: Any) -> None:
    # `expand: false`: the shell gets `flash-attn==$FA_VERSION` as written, which pip cannot read
    text = (
        "variables:\n  FA_VERSION: '2.4.2'\n  FA_SPEC:\n    value: flash-attn==$FA_VERSION\n    expand: false\n"
        'test:\n  script:\n    - pip install --no-build-isolation "$FA_SPEC"\n'
    )
    project({".gitlab-ci.yml": text})
    assert [f[3] for f in findings(".gitlab-ci.yml") if f[3] in ("FAL001", "FAL009")] == ["FAL009"]


@pytest.mark.parametrize(
    "assignments",
    [
        'fa_version := "2.4.2"\nfa_spec := "flash-attn==" + fa_version\n',  # the reproducer's Justfile
        "fa_spec := 'flash-attn==' + major + \".4.2\"  # later names are fine\nmajor := '2'\n",
        'export fa_version := "2.4.2"\nfa_spec := "flash-attn==" + fa_version\n',
    ],
)
def test_a_justfile_expression_naming_variables_is_evaluated(project: Any, assignments: str) -> None:
    text = (
        assignments
        + "\ninstall:\n    pip install torch==2.3.1\n    pip install --no-build-isolation {{fa_spec}}\n"
    )
    project({"justfile": text})
    assert fal001("justfile") == [("justfile", text.count("\n"), 38)]


def test_a_justfile_value_partly_unknown_is_a_fal009(project: Any) -> None:
    text = (
        'fa_spec := "flash-attn==" + `cat v`\n\ninstall:\n    pip install --no-build-isolation {{fa_spec}}\n'
    )
    project({"justfile": text})
    assert [f[3] for f in findings("justfile") if f[3] in ("FAL001", "FAL009")] == ["FAL009"]


@pytest.mark.parametrize(
    ("top", "job", "step", "use"),
    [
        ("FA_VERSION: 2.4.2", "FA_SPEC: flash-attn==${{ env.FA_VERSION }}", "", '"$FA_SPEC"'),
        ("FA_VERSION: 2.4.2", "", "FA_SPEC: flash-attn==${{ env.FA_VERSION }}", "$FA_SPEC"),
        ("FA_VERSION: 2.4.2", "", "FA_SPEC: flash-attn==${{ env.fa_version }}", "$FA_SPEC"),  # any case
        ("V: 2.4.2", "FA_VERSION: ${{ env.V }}", "FA_SPEC: flash-attn==${{ env['FA_VERSION'] }}", "$FA_SPEC"),
    ],
)
def test_a_workflow_env_value_naming_the_env_context_is_evaluated(
    project: Any, top: str, job: str, step: str, use: str
) -> None:
    text = (
        f"on: push\nenv:\n  {top}\njobs:\n  build:\n    runs-on: ubuntu-latest\n"
        + (f"    env:\n      {job}\n" if job else "")
        + "    steps:\n      - "
        + (f"env:\n          {step}\n        " if step else "")
        + f"run: pip install torch==2.3.1 && pip install --no-build-isolation {use}\n"
    )
    project({".github/workflows/ci.yml": text})
    found = fal001(".github/workflows/ci.yml")
    assert [(p, line) for p, line, _ in found] == [(".github/workflows/ci.yml", text.count("\n"))]


def test_a_workflow_env_value_naming_an_unknown_env_is_a_fal009(project: Any) -> None:
    text = (
        "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    env:\n      FA_SPEC: flash-attn==${{ env.NOPE }}\n"
        '    steps:\n      - run: pip install --no-build-isolation "$FA_SPEC"\n'
    )
    project({".github/workflows/ci.yml": text})
    assert [f[3] for f in findings(".github/workflows/ci.yml") if f[3] in ("FAL001", "FAL009")] == ["FAL009"]


# --- 45: [tool.setuptools.dynamic] requirements from files -------------------------------------------------

PROJECT = '[project]\nname = "demo"\nversion = "0.1"\n'


@pytest.mark.parametrize(
    ("dynamic", "table"),
    [
        ('["dependencies"]', 'dependencies = {file = ["deps/runtime.pins"]}'),  # the reproducer
        ('["dependencies"]', 'dependencies = {file = "deps/runtime.pins"}'),  # one name, a string
        ('["version", "dependencies"]', 'dependencies = { file = ["deps/base.pins", "deps/runtime.pins"] }'),
        ('["optional-dependencies"]', 'optional-dependencies.gpu = {file = ["deps/runtime.pins"]}'),
        (
            '["optional-dependencies"]',
            '[tool.setuptools.dynamic.optional-dependencies]\ngpu = {file = ["deps/runtime.pins"]}',
        ),
    ],
)
def test_setuptools_dynamic_requirement_files_are_read(project: Any, dynamic: str, table: str) -> None:
    header = "" if table.startswith("[") else "[tool.setuptools.dynamic]\n"
    project(
        {
            "pyproject.toml": PROJECT + f"dynamic = {dynamic}\n\n{header}{table}\n",
            "deps/base.pins": "torch==2.3.1\n",
            "deps/runtime.pins": "# the runtime pins\nflash-attn==2.4.2\n",
        }
    )
    assert fal001(".") == [("deps/runtime.pins", 2, 1)]
    assert fal001("pyproject.toml") == [("deps/runtime.pins", 2, 1)]


def test_setuptools_files_for_a_field_not_dynamic_are_not_read(project: Any) -> None:
    # setuptools reads [tool.setuptools.dynamic] only for the fields [project] dynamic lists
    project(
        {
            "pyproject.toml": PROJECT + 'dependencies = ["torch"]\n\n[tool.setuptools.dynamic]\n'
            'dependencies = {file = ["deps/runtime.pins"]}\n',
            "deps/runtime.pins": "flash-attn==2.4.2\n",
        }
    )
    assert fal001("pyproject.toml") == []


def test_setuptools_files_missing_or_outside_the_repository_are_findings(project: Any) -> None:
    project(
        {
            "pyproject.toml": PROJECT + 'dynamic = ["dependencies"]\n\n[tool.setuptools.dynamic]\n'
            'dependencies = {file = ["deps/missing.pins", "../outside.pins"]}\n',
        }
    )
    assert findings("pyproject.toml") == [
        ("pyproject.toml", 7, 26, "FAL900"),  # the missing file, located at its name
        ("pyproject.toml", 7, 47, "FAL010"),  # not read: outside the project
    ]


# --- 46: version overrides ---------------------------------------------------------------------------------

PDM = "[project]\nname = 'demo'\nversion = '0.1'\ndependencies = ['torch==2.3.1', 'flash-attn>=2.5.8']\n\n"


@pytest.mark.parametrize(
    ("table", "column"),
    [
        ("[tool.pdm.resolution.overrides]\nflash-attn = '==2.4.2'\n", 1),  # the reproducer
        ("[tool.pdm.resolution.overrides]\nflash-attn = '2.4.2'\n", 1),  # a bare version is ==
        ("[tool.pdm.resolution.overrides]\nFlash_Attn = '>=2.0,<2.5'\n", 1),
        ("[tool.pdm.resolution]\noverrides = {flash-attn = '==2.4.2'}\n", 14),
        ("[tool.pdm.overrides]\nflash-attn = '==2.4.2'\n", 1),  # PDM 1's table
    ],
)
def test_a_pdm_override_decides_the_version(project: Any, table: str, column: int) -> None:
    project({"pyproject.toml": PDM + table})
    assert fal001("pyproject.toml") == [("pyproject.toml", 7, column)]


def test_a_good_pdm_override_of_a_good_requirement_is_no_finding(project: Any) -> None:
    project({"pyproject.toml": PDM + "[tool.pdm.resolution.overrides]\nflash-attn = '2.6.3'\n"})
    assert [f for f in findings("pyproject.toml") if f[3] in ("FAL001", "FAL002", "FAL004")] == []


DOCKER_OVERRIDE = NGC + "COPY overrides.pins /tmp/overrides.pins\n"


@pytest.mark.parametrize(
    "lines",
    [
        "RUN uv pip install --system --override /tmp/overrides.pins --no-build-isolation 'flash-attn>=2.5.8'\n",
        "RUN uv pip install --system --override=/tmp/overrides.pins --no-build-isolation 'flash-attn>=2.5.8'\n",
        "RUN uv pip install --system --overrides /tmp/overrides.pins --no-build-isolation 'flash-attn>=2.5.8'\n",
        "ENV UV_OVERRIDE=/tmp/overrides.pins\nRUN uv pip install --system --no-build-isolation 'flash-attn>=2.5.8'\n",
        "RUN UV_OVERRIDE=/tmp/overrides.pins uv pip install --system --no-build-isolation 'flash-attn>=2.5.8'\n",
    ],
)
def test_a_uv_override_file_decides_the_version(project: Any, lines: str) -> None:
    project({"Dockerfile": DOCKER_OVERRIDE + lines, "overrides.pins": "flash-attn==2.4.2\n"})
    # the override is what installs: judged where it is written; the request it replaces is not
    assert fal001("Dockerfile") == [("overrides.pins", 1, 1)]


def test_a_request_a_good_override_replaces_is_no_finding(project: Any) -> None:
    line = (
        "RUN uv pip install --system --override /tmp/overrides.pins --no-build-isolation 'flash-attn<2.5'\n"
    )
    project({"Dockerfile": DOCKER_OVERRIDE + line, "overrides.pins": "flash-attn==2.6.3\n"})
    assert [f for f in findings("Dockerfile") if f[3] in ("FAL001", "FAL002", "FAL004")] == []


def test_pip_knows_no_override(project: Any) -> None:
    # pip has no --override: its value is no file it reads (the install fails on the unknown option)
    line = "RUN pip install --override /tmp/overrides.pins --no-build-isolation 'flash-attn>=2.5.8'\n"
    project({"Dockerfile": DOCKER_OVERRIDE + line, "overrides.pins": "flash-attn==2.4.2\n"})
    assert fal001("Dockerfile") == []


@pytest.mark.parametrize(
    ("files", "argv"),
    [
        (
            {
                "Dockerfile": NGC
                + "COPY c.txt /c.txt\nENV PIP_CONSTRAINT=/c.txt\nRUN pip install --no-build-isolation flash-attn\n"
            },
            ["Dockerfile"],
        ),
        ({"install.sh": "export UV_CONSTRAINT=c.txt\nuv pip install --system flash-attn\n"}, ["install.sh"]),
        ({"install.sh": "PIP_CONSTRAINT=c.txt pip install flash-attn\n"}, ["install.sh"]),
        (
            {
                ".github/workflows/ci.yml": "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    env:\n"
                "      PIP_CONSTRAINT: c.txt\n    steps:\n      - run: pip install flash-attn\n"
            },
            [".github/workflows/ci.yml"],
        ),
    ],
)
def test_constraint_files_named_by_variables_limit_the_install(
    project: Any, files: dict[str, str], argv: list[str]
) -> None:
    project({**files, "c.txt": "flash-attn<2.5\n"})
    assert "FAL004" in [f[3] for f in findings(*argv)]  # the unpinned request and the constraint together


def test_uv_reads_no_pip_constraint(project: Any) -> None:
    project(
        {
            "install.sh": "PIP_CONSTRAINT=c.txt uv pip install --system flash-attn\n",
            "c.txt": "flash-attn<2.5\n",
        }
    )
    assert "FAL004" not in [f[3] for f in findings("install.sh")]


def test_a_workflow_env_naming_a_long_value_many_times_stays_within_the_budget(project: Any) -> None:
    # 1,000 references to a 100,000-character value in each of 20 steps would be 2 GB of text
    ref = "${{ env.X }}" * 1000
    steps = "".join(f'      - env:\n          Z: "{ref}"\n        run: pip install "$Z"\n' for _ in range(20))
    text = (
        f"on: push\nenv:\n  X: {'a' * 100_000}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"
    )
    project({".github/workflows/ci.yml": text})
    r = run("--format", "json", ".github/workflows/ci.yml")
    assert [f["code"] for f in r.json["findings"]] == ["FAL900"]  # said once, where the walk met it


@pytest.mark.parametrize(
    ("use", "env"),
    [
        ("${{ env.FA_SPEC }}", ""),  # the pin in the variable GitHub puts in the script
        ('"flash-attn==${{ env.V }}"', "        env:\n          V: 2.4.2\n"),
        ("\"flash-attn==${{ env['V'] }}\"", "        env:\n          V: 2.4.2\n"),
    ],
)
def test_a_run_script_naming_the_env_context_is_read(project: Any, use: str, env: str) -> None:
    text = (
        "on: push\nenv:\n  FA_SPEC: flash-attn==2.4.2\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n"
        f"      - run: pip install --no-build-isolation {use}\n{env}"
    )
    project({".github/workflows/ci.yml": text})
    column = 47 + use.startswith('"')  # a quoted word is located inside its quotes
    assert fal001(".github/workflows/ci.yml") == [(".github/workflows/ci.yml", 8, column)]


@pytest.mark.parametrize(
    ("dynamic", "table"),
    [
        ('["dependencies"]', '[tool.hatch.metadata.hooks.requirements_txt]\nfiles = ["deps/runtime.pins"]'),
        (
            '["dependencies", "optional-dependencies"]',
            '[tool.hatch.metadata.hooks.requirements_txt.optional-dependencies]\ngpu = ["deps/runtime.pins"]',
        ),
    ],
)
def test_hatch_requirements_txt_files_are_read(project: Any, dynamic: str, table: str) -> None:
    # the hatch-requirements-txt plugin, the other common way to take requirements from a file
    project(
        {
            "pyproject.toml": PROJECT + f"dynamic = {dynamic}\n\n{table}\n",
            "deps/runtime.pins": "flash-attn==2.4.2\n",
        }
    )
    assert fal001("pyproject.toml") == [("deps/runtime.pins", 1, 1)]


def test_a_dynamic_entry_that_names_no_files_is_a_located_warning(project: Any) -> None:
    project(
        {
            "pyproject.toml": PROJECT + 'dynamic = ["dependencies"]\n\n[tool.setuptools.dynamic]\n'
            'dependencies = {attr = "pkg.DEPS"}\n'
        }
    )
    assert findings("pyproject.toml") == [("pyproject.toml", 7, 1, "FAL901")]


def test_a_quoted_word_in_an_exec_form_script_is_located_inside_its_escaped_quotes(project: Any) -> None:
    line = 'RUN ["bash", "-c", "pip install --no-build-isolation \\"flash-attn==2.4.2\\""]'
    project({"Dockerfile": NGC + line + "\n"})
    assert fal001("Dockerfile") == [("Dockerfile", 2, line.index("flash") + 1)]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("Makefile", "PKGS := torch==2.3.1\nPKGS += flash-attn==2.4.2\ninstall:\n\tpip install $(PKGS)\n"),
        ("install.sh", 'PKGS="torch==2.3.1 flash-attn==2.4.2"\npip install $PKGS\n'),
    ],
)
def test_an_unquoted_expansion_of_several_words_is_that_many_arguments(
    project: Any, name: str, text: str
) -> None:
    project({name: text})
    line = text.count("\n")
    assert fal001(name) == [(name, line, text.split("\n")[-2].index("$") + 1)]


def test_a_quoted_expansion_of_several_words_is_one_argument(project: Any) -> None:
    # "$PKGS" is one argument, `torch==2.3.1 flash-attn==2.4.2`, which pip refuses: nothing installs
    project({"install.sh": 'PKGS="torch==2.3.1 flash-attn==2.4.2"\npip install "$PKGS"\n'})
    assert fal001("install.sh") == []


@pytest.mark.parametrize(
    "setup",
    [
        'from setuptools import setup\nsetup(name="x", install_requires=open("deps.pins").read().splitlines())\n',
        "from pathlib import Path\nfrom setuptools import setup\n"
        'setup(name="x", install_requires=(Path(__file__).parent / "deps.pins").read_text().splitlines())\n',
        'from setuptools import setup\nwith open("deps.pins") as f:\n    reqs = [l.strip() for l in f]\n'
        'setup(name="x", install_requires=reqs)\n',
        "import os\nfrom setuptools import setup\ndef read_requirements(path):\n"
        "    with open(os.path.join(os.path.dirname(__file__), path)) as f:\n        return f.read().splitlines()\n"
        'setup(name="x", extras_require={"gpu": read_requirements("deps.pins")})\n',
    ],
)
def test_a_setup_py_reading_its_requirements_from_a_file_is_followed(project: Any, setup: str) -> None:
    # the setup.py form of reliability 45: the file's lines are what install_requires holds
    project({"setup.py": setup, "deps.pins": "torch==2.3.1\nflash-attn==2.4.2\n"})
    assert fal001("setup.py") == [("deps.pins", 2, 1)]


def test_a_setup_py_reading_a_file_for_something_else_does_not_read_it_as_requirements(project: Any) -> None:
    setup = (
        'from setuptools import setup\nsetup(name="x", long_description=open("deps.pins").read(), '
        'install_requires=["torch"])\n'
    )
    project({"setup.py": setup, "deps.pins": "flash-attn==2.4.2\n"})
    assert fal001("setup.py") == []


def test_a_variable_that_expands_to_nothing_is_empty() -> None:
    # GNU make: `A =` then `B = $(A)` makes B empty, not the text "$(A)"
    from fa_lint.shell.variables import Budget, Definitions

    found = Definitions(Budget(), make=True)
    found.define("A", "")
    found.define("B", "$(A)")
    found.define("C", "x$(A)y")
    assert found.values() == {"A": "", "B": "", "C": "xy"}
