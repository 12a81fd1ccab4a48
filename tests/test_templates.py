"""Issue 40, item 7: a Jinja template named like a dependency file is not a broken one.

The shapes are huggingface/kernels' ``kernel-builder/src/pyproject/templates/{torch,tvm_ffi}/``
(``pyproject.toml`` with an unquoted ``{{python_dependencies}}`` in a list, ``setup.py`` with a
``{% if data_globs %}`` line) at 8ac69fc542a4306eade0759ef7c45b4f2ae57df0, written here in our own
words. Jinja's delimiters are ``{{ }}`` and ``{% %}`` (jinja2.defaults); neither is TOML (a key or
value cannot start with ``{{``) nor a Python statement (``{%`` is no expression), so a file that fails
to parse at one, or holds a line that is one Jinja statement, is a template. A ``{{`` alone proves
nothing: an f-string writes a literal brace that way.
"""

from __future__ import annotations

from typing import Any

import pytest

from fa_lint.model import Location, ParseProblem
from fa_lint.syntax import templates
from tests.conftest import lint, run

TOML_TEMPLATE = (
    '[project]\nname = "{{ package }}"\nversion = "0.1.0"\ndependencies = [\n'
    '  "torch>=2.4",\n  {{ extra_dependencies }}\n]\n'
)
SETUP_TEMPLATE = (
    "from setuptools import setup\n\nsetup(\n"
    '    name="{{ package }}",\n'
    "{% if data_files %}\n"
    '    package_data={"{{ package }}": [{{ data_files }}]},\n'
    "{% endif %}\n"
    ")\n"
)


def _found(project: Any, files: dict[str, str]) -> list[tuple[str, int, str, str]]:
    return sorted((f["path"], f["line"], f["code"], f["severity"]) for f in lint(project, files))


def test_a_template_pyproject_is_an_info_that_it_was_not_read(project: Any) -> None:
    found = _found(project, {"templates/torch/pyproject.toml": TOML_TEMPLATE})
    # tomllib stops at the unquoted tag on line 6
    assert found == [("templates/torch/pyproject.toml", 6, "FAL900", "info")]


def test_a_template_setup_py_is_an_info_that_it_was_not_read(project: Any) -> None:
    assert _found(project, {"gen/setup.py": SETUP_TEMPLATE}) == [("gen/setup.py", 5, "FAL900", "info")]


def test_a_template_never_fails_the_run(project: Any) -> None:
    project({"a/pyproject.toml": TOML_TEMPLATE, "b/setup.py": SETUP_TEMPLATE})
    r = run("--isolated", ".")
    assert r.code == 0, r.out
    assert "not read: a Jinja template (`{{ extra_dependencies }}`), not a file an installer reads" in r.out
    assert "Found 0 errors, 0 warnings, 2 info" in r.out


def test_the_tag_is_named_with_its_line_where_the_parser_stopped_elsewhere(project: Any) -> None:
    # Python before 3.12 stops at an f-string nesting its own quotes, ahead of the Jinja statement
    text = 'name = f"{ops.replace(".", "/")}"\n{% if data_files %}\nx = 1\n{% endif %}\n'
    problem = ParseProblem(Location("setup.py", 1, 30, 1, 30), "setup.py has a syntax error: f-string")
    marked = templates.recognised(text, problem)
    assert marked.template == "`{% if data_files %}` at line 2"


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        # broken TOML with no Jinja at all
        ("pyproject.toml", '[project]\ndependencies = ["flash-attn>=2.5.0"\n', 3),
        # an f-string's literal braces beside a real syntax error: no template
        ("setup.py", 'msg = f"{{x}}"\nsetup(install_requires=["flash-attn>=2.5.0"]\n', 2),
    ],
)
def test_a_broken_file_without_a_jinja_tag_where_it_breaks_stays_an_error(
    project: Any, name: str, text: str, line: int
) -> None:
    assert _found(project, {name: text}) == [(name, line, "FAL900", "error")]


def test_a_template_that_parses_is_read_as_its_format(project: Any) -> None:
    # a tag inside a TOML string is valid TOML: the file is read, and its pins judged
    text = '[project]\nname = "{{ package }}"\nversion = "0"\ndependencies = ["flash-attn==2.4.2"]\n'
    found = _found(project, {"pyproject.toml": text})
    # read as TOML: its pin judged (and, as any project's own flash-attn, FAL012's `pip install .`)
    assert [f for f in found if f[2] in ("FAL001", "FAL900")] == [("pyproject.toml", 4, "FAL001", "error")]


def test_one_skipped_entry_is_never_taken_for_a_template() -> None:
    # a requirements line pip cannot read is one entry; the rest of the file was read
    problem = ParseProblem(Location("r.txt", 1, 1, 1, 1), "bad line", entry="{{ pkg }}")
    assert templates.recognised("{{ pkg }}\n", problem) is problem
