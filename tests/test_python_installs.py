"""Issue 40, item 6: install commands a Python program runs are installs.

Real shapes, written here in our own words (their sources are facts, not text):

- mosaicml/llm-foundry ``scripts/train/benchmarking/submit_benchmarks.py`` at
  8c8dd48f72168c5d51e2f7b151595892a8fba43d (lines 470-486, 534-543): ``command = ''``, then under a
  condition ``command += f\"\"\"\\n pip install flash-attn==2.4.2 --no-build-isolation ...\"\"\"``, handed
  to ``RunConfig(command=command, ...)``; mosaicml-cli 0.8.3 ``mcli/models/run_config.py:270``
  (``command: str``) runs it as the job's shell command;
- SageMaker entry scripts that install at the top (``os.system("pip install flash-attn
  --no-build-isolation")``), and helpers that call ``subprocess.check_call([sys.executable, "-m",
  "pip", "install", "flash-attn", "--no-build-isolation"])`` (common on GitHub; the find was by
  searching for those strings);
- unslothai/unsloth ``studio/backend/tests/test_training_worker_flash_attn.py`` at
  015bdef0d94a241bcd94eec7a405b1700632180d (line 501): a test that asserts a mock saw
  ``[sys.executable, "-m", "pip", "install", "flash-attn"]``: no install.

Facts: flash-attn's ``block_table`` ships in 2.5.0 (FAL001 below it); ``os.system`` and
``subprocess.*(..., shell=True)`` hand their string to ``/bin/sh -c``, other ``subprocess`` calls run
the argument list as argv (Python's library reference); SkyPilot's ``sky.Task(setup=..., run=...)``
takes shell scripts (skypilot 0.14.1 ``sky/task.py:325-326``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import lint, run


def _col(text: str, line: int, word: str = "flash-attn") -> int:
    """The 1-based column of ``word`` on 1-based ``line`` of ``text``."""
    return text.splitlines()[line - 1].index(word) + 1


def _found(project: Any, files: dict[str, str], *codes: str) -> list[tuple[str, int, int, str, str]]:
    return sorted(
        (f["path"], f["line"], f["column"], f["code"], f["severity"])
        for f in lint(project, files)
        if not codes or f["code"] in codes
    )


def test_an_argument_list_is_argv(project: Any) -> None:
    text = (
        "import subprocess\nimport sys\n\n"
        'subprocess.check_call([sys.executable, "-m", "pip", "install", "flash-attn==2.4.2"])\n'
    )
    found = _found(project, {"install_deps.py": text}, "FAL001")
    assert found == [("install_deps.py", 4, _col(text, 4), "FAL001", "error")]


def test_a_list_bound_to_a_name_is_argv_too(project: Any) -> None:
    text = (
        "import subprocess\n\ndef fa2():\n"
        '    cmd = ["pip", "install", "flash-attn==2.3.6", "--no-build-isolation"]\n'
        "    subprocess.check_call(cmd)\n"
    )
    found = _found(project, {"bootstrap.py": text}, "FAL001")
    assert found == [("bootstrap.py", 4, _col(text, 4), "FAL001", "error")]


@pytest.mark.parametrize(
    "call",
    [
        'os.system("pip install flash-attn==2.4.2 --no-build-isolation")',
        'subprocess.run("pip install flash-attn==2.4.2", shell=True, check=True)',
        'subprocess.check_call(["bash", "-c", "pip install flash-attn==2.4.2"])',
        'sp.check_output("pip install flash-attn==2.4.2", shell=True)',
        'cc("pip install flash-attn==2.4.2", shell=True)',
    ],
)
def test_a_command_line_string_is_read_by_the_shell_model(project: Any, call: str) -> None:
    text = (
        "import os\nimport subprocess\nimport subprocess as sp\nfrom subprocess import check_call as cc\n"
        f"{call}\n"
    )
    found = _found(project, {"entry.py": text}, "FAL001")
    assert [(line, code) for _, line, _, code, _ in found] == [(5, "FAL001")]
    column = found[0][2]
    assert text.splitlines()[4][column - 1 :].startswith("flash-attn==2.4.2")


def test_a_string_without_a_shell_names_a_program_not_a_command(project: Any) -> None:
    # subprocess.run("pip install ...") without shell=True looks for a program of that whole name
    text = 'import subprocess\nsubprocess.run("pip install flash-attn==2.4.2")\n'
    assert _found(project, {"entry.py": text}) == []


def test_escapes_and_concatenation_keep_the_place_of_each_word(project: Any) -> None:
    text = 'import os\nos.system("pip install " \'--no-build-isolation \\"flash-attn==2.4.2\\"\')\n'
    (found,) = _found(project, {"entry.py": text}, "FAL001")
    assert found[1] == 2
    assert text.splitlines()[1][found[2] - 1 :].startswith("flash-attn==2.4.2")


def test_an_f_string_field_is_a_value_only_the_run_knows(project: Any) -> None:
    text = (
        'import os\nVERSION = input()\nos.system(f"pip install flash-attn=={VERSION} --no-build-isolation")\n'
    )
    assert _found(project, {"entry.py": text}, "FAL001", "FAL002", "FAL009") == [
        ("entry.py", 3, _col(text, 3), "FAL009", "info")
    ]


def test_a_launchers_command_built_piece_by_piece(project: Any) -> None:
    # the llm-foundry shape: the command a job runs, built under the conditions that need it
    text = (
        "from mcli import RunConfig\n\n\ndef launch(gpu, precision):\n"
        "    command = ''\n"
        "    if gpu == 'h100' and precision == 'fp8':\n"
        '        command += f"""\n'
        "        pip install flash-attn==2.4.2 --no-build-isolation\n"
        "        pip install some-engine==0.10\n"
        '        """\n'
        '    command += f"""\n        cd repo && composer train.py --seq {gpu}\n        """\n'
        "    return RunConfig(name='bench', image=None, command=command)\n"
    )
    found = lint(project, {"launch/submit.py": text})
    assert [(f["line"], f["column"], f["code"], f["severity"]) for f in found] == [
        (8, _col(text, 8), "FAL001", "error")
    ]
    assert found[0]["environment"] == "launch/submit.py [run:RunConfig:14]"


def test_a_skypilot_task_setup_is_a_script(project: Any) -> None:
    text = 'import sky\n\ntask = sky.Task(setup="pip install flash-attn==2.4.2", run="python train.py")\n'
    found = _found(project, {"launch.py": text}, "FAL001")
    assert found == [("launch.py", 3, _col(text, 3), "FAL001", "error")]


def test_the_launchers_image_is_the_jobs_machine(project: Any) -> None:
    text = (
        "from mcli import RunConfig\n\n"
        "RunConfig(image='ubuntu:22.04', command='pip install flash-attn==2.6.3 --no-build-isolation')\n"
    )
    found = lint(project, {"submit.py": text})
    # ubuntu has no torch for the --no-build-isolation build, and no nvcc for setup.py
    assert sorted((f["code"], f["severity"]) for f in found) == [("FAL012", "error"), ("FAL015", "error")]
    (nvcc,) = [f for f in found if f["code"] == "FAL015"]
    assert any("RunConfig(image=...) ubuntu:22.04" in n for n in nvcc["notes"]), nvcc["notes"]


@pytest.mark.parametrize(
    "text",
    [
        # a message telling the user what to run: nothing runs it
        'raise ImportError("Please pip install flash-attn==2.4.2 --no-build-isolation")\n',
        'print("\\npip install --no-deps --upgrade \\"flash-attn==2.4.2\\"")\n',
        # a docstring
        'def f():\n    """Run `pip install flash-attn==2.4.2` first."""\n',
        # a list compared with, not run (the unsloth test's shape, outside a test folder)
        'import subprocess, sys\nassert calls == [[sys.executable, "-m", "pip", "install", "flash-attn==2.4.2"]]\n',
        # a call of another library's run()
        'import subprocess\nimport invoke\ninvoke.run("pip install flash-attn==2.4.2")\n',
    ],
)
def test_a_string_that_only_reads_like_a_command_is_not_read(project: Any, text: str) -> None:
    assert _found(project, {"tools.py": text}) == []


@pytest.mark.parametrize(
    "path", ["tests/test_install.py", "pkg/test_setup.py", "pkg/setup_test.py", "conftest.py"]
)
def test_a_tests_commands_are_not_the_projects_installs(project: Any, path: str) -> None:
    text = 'import subprocess, sys\nsubprocess.check_call([sys.executable, "-m", "pip", "install", "flash-attn==2.4.2"])\n'
    assert _found(project, {path: text}) == []


def test_order_says_what_is_there(project: Any) -> None:
    # torch by name after a --no-build-isolation build: the script expects none before it
    text = (
        "import os\n"
        'os.system("pip install flash-attn==2.6.3 --no-build-isolation")\n'
        'os.system("pip install torch==2.4.0")\n'
    )
    found = _found(project, {"entry.py": text}, "FAL012")
    assert found == [("entry.py", 2, _col(text, 2), "FAL012", "warning")]
    text = (
        "import os\n"
        'os.system("pip install torch==2.4.0")\n'
        'os.system("pip install flash-attn==2.6.3 --no-build-isolation")\n'
    )
    assert _found(project, {"entry.py": text}, "FAL012") == []


def test_a_setup_py_that_runs_pip(project: Any) -> None:
    text = (
        "import subprocess, sys\nfrom setuptools import setup\n\n"
        'subprocess.check_call([sys.executable, "-m", "pip", "install", "flash-attn==2.4.2"])\n'
        'setup(name="demo", install_requires=["torch", "flash-attn>=2.6.3"])\n'
    )
    found = lint(project, {"setup.py": text})
    # the command's own pin, once, in an environment of its own (no --no-build-isolation: pip may
    # isolate the build); the project's requirement has paged KV, but `pip install .` of a project
    # whose install_requires holds flash-attn builds it in isolation too (FAL012, issue 42)
    assert sorted((f["line"], f["code"], f["environment"]) for f in found) == [
        (4, "FAL001", "setup.py [run]"),
        (4, "FAL012", "setup.py [run]"),
        (5, "FAL012", "setup.py [project]"),
    ]


def test_fixes_stay_valid_python(project: Any, tmp_path: Path) -> None:
    text = (
        "import os, subprocess, sys\n"
        'subprocess.check_call([sys.executable, "-m", "pip", "install", "flash-attn==2.4.2"])\n'
        'os.system("pip install flash-attn --no-build-isolation")\n'
    )
    project({"entry.py": text})
    assert run("--isolated", "--fix", "--unsafe-fixes", ".").code in (0, 1)
    fixed = (tmp_path / "entry.py").read_text()
    # the argv word is a whole Python string: pinned to a release with paged KV
    assert '"flash-attn==2.5.0"' in fixed
    # a shell would read an unquoted >= as a redirect, and quoting inside the string is not ours to do
    assert 'os.system("pip install flash-attn --no-build-isolation")' in fixed


# --- a string literal's characters, each where the file wrote it ------------------------------------


@pytest.mark.parametrize(
    "literal",
    [
        '"pip install flash-attn"',
        "'a\\tb\\\\c\\'d'",
        'r"\\d+ \\" x"',
        '"""one\ntwo"""',
        '("a"  # a comment\n "b" \'c\')',
        '"\\N{DEGREE SIGN} \\x41\\u00e9\\101"',
        '"joined \\\nline"',
    ],
)
def test_a_constant_is_read_as_python_reads_it(literal: str) -> None:
    import ast

    from fa_lint.syntax import pyast, pystrings

    source = f"x = {literal}\n"
    node = ast.parse(source).body[0].value  # type: ignore[attr-defined]
    start, end = pyast.node_span(pyast.PythonIndex("x.py", source), node)
    found = pystrings.literal(source, node, start, end)
    assert found is not None
    text, places = found
    assert text == node.value
    # a character written plainly is at its own offset; a decoded escape at its backslash
    for c, at in zip(text, places, strict=True):
        assert source[at] == c or source[at] == "\\"


def test_an_f_strings_fields_and_braces() -> None:
    import ast

    from fa_lint.syntax import pystrings

    literal = "f\"pip install {{x}} flash-attn=={v['k']} {y!r:>{w}}\""
    source = f"{literal}\n"
    node = ast.parse(source).body[0].value  # type: ignore[attr-defined]
    text, places = pystrings.literal(source, node, 0, len(literal)) or ("", [])
    assert text == "pip install {x} flash-attn==$_______ $_________"
    assert source[places[text.index("$")] : places[text.index("$")] + 8] == "{v['k']}"


def test_a_bytes_literal_is_no_command() -> None:
    import ast

    from fa_lint.syntax import pystrings

    node = ast.parse('b"pip install flash-attn"').body[0].value  # type: ignore[attr-defined]
    assert pystrings.literal('b"pip install flash-attn"', node, 0, 25) is None


def test_deep_nesting_costs_no_recursion(project: Any) -> None:
    # the walk over calls keeps a stack of its own: a file nested as deep as Python parses is read
    depth = 150
    text = "import os\n" + "(" * depth + 'os.system("pip install flash-attn==2.4.2")' + ")" * depth + "\n"
    found = _found(project, {"deep.py": text}, "FAL001")
    assert [(f[1], f[3]) for f in found] == [(2, "FAL001")]
