"""Issue 22, items 2-3: what the shell does with an unquoted ``<``/``>`` in a flash-attn word.

The expectations are bash's own behaviour: ``scripts/shell_redirects.py`` runs every case with a
stand-in ``pip`` (never a real install) and the model in ``fa_lint.shell.redirects`` must predict
each observation; the FAL007 page's table must be that script's output.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from fa_lint.rules import page
from fa_lint.shell import redirects
from fa_lint.shell.redirects import Effect
from tests.conftest import REPO, run

_spec = importlib.util.spec_from_file_location("shell_redirects", REPO / "scripts" / "shell_redirects.py")
assert _spec is not None and _spec.loader is not None
script = importlib.util.module_from_spec(_spec)
sys.modules["shell_redirects"] = script
_spec.loader.exec_module(script)


@pytest.fixture(scope="module")
def bash() -> dict[str, dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = script.observations(("bash",))["bash"]
    return seen


@pytest.mark.parametrize("word", script.CASES)
def test_the_model_predicts_what_bash_does(word: str, bash: dict[str, dict[str, Any]]) -> None:
    seen = bash[word]
    end = min((word.index(op) for op in "<>" if op in word), default=len(word))  # where the word stops
    found = redirects.read(word + "\n", end)
    if seen["status"] is None:  # a syntax error: nothing of the line ran, the script stopped
        assert found is not None and found.effect is Effect.STOPS and not seen["after"]
    elif seen["pip"] is None:  # the install line failed before pip started; the script went on
        assert found is not None and found.effect is Effect.FAILS
        assert seen["status"] != 0 and seen["after"]
        assert found.file not in seen["files"]  # the file it could not open
    elif found is None:  # no redirect: pip got the whole word
        assert seen["pip"] == f"install {word}"
    else:  # output redirects: pip got the bare name, and the shell made the files
        assert found.effect is Effect.RUNS and seen["pip"] == "install flash-attn"
        assert sorted(found.files) == seen["files"]


def test_the_page_holds_the_scripts_table(bash: dict[str, dict[str, Any]]) -> None:
    text = page("FAL007")
    rows = {line.split(" | ")[0]: line for line in text.splitlines() if line.startswith("| `pip install")}
    for word in script.CASES:  # bash's column, wherever the tests run; the whole table where dash is too
        assert f"| {script._cell(bash[word])} |" in rows[f"| `pip install {word}`"], word
    seen = script.observations()
    if set(seen) == set(script.SHELLS):
        assert script.table(seen) in text


def test_a_redirect_whose_file_is_the_next_word() -> None:
    # `flash-attn< torch`: the shell reads the file `torch`; `flash-attn<` then a newline: nothing
    found = redirects.read("pip install flash-attn< torch\n", 22)
    assert found is not None and (found.effect, found.file, found.text) == (Effect.FAILS, "torch", "<")
    found = redirects.read("pip install flash-attn<  \nnext\n", 22)
    assert found is not None and found.effect is Effect.STOPS
    assert redirects.read("pip install flash-attn 2>/dev/null\n", 22) is None


def _findings(files: dict[str, str], project: Any) -> list[tuple[str, int, str]]:
    project(files)
    return [(f["code"], f["line"], f["severity"]) for f in run("--format", "json", ".").json["findings"]]


@pytest.mark.parametrize(
    "line",
    [
        "pip install flash-attn<=2.6.3",
        "pip install flash-attn<2.6 --no-build-isolation",
        "pip install -U pip && pip install flash-attn<=2.6.3",  # the grammar hangs the redirect on the list
        "pip install flash-attn>=2.5,<2.7",
        "sudo pip install flash-attn<2.6 torch",
    ],
)
def test_an_install_that_cannot_run_is_not_judged(line: str, project: Any) -> None:
    # FAL007 says the command fails; no FAL002 "admits 51 releases", no FAL012, no FAL011
    for name, text in (
        ("install.sh", f"#!/bin/bash\n{line}\n"),
        ("Dockerfile", f"FROM python:3.11\nRUN {line}\n"),
    ):
        assert _findings({name: text}, project) == [("FAL007", 2, "warning")], name
        project({name: ""})


def test_a_failing_word_elsewhere_in_the_command(project: Any) -> None:
    found = _findings({"install.sh": "pip install flash-attn==2.4.2 torch<2.4\n"}, project)
    assert found == [("FAL007", 1, "warning")]  # not the FAL001 of a 2.4.2 that never installs
    (f,) = run("--format", "json", ".").json["findings"]
    assert "`flash-attn==2.4.2` is never installed: unquoted `torch<2.4` fails the command" in f["message"]
    assert f["fix"] is None


def test_an_output_redirect_installs_the_bare_name(project: Any) -> None:
    # `>=`: pip runs with flash-attn, unpinned: judged as such, and FAL007 says why
    found = _findings(
        {"install.sh": "pip install torch\npip install flash-attn>=2.5.8 --no-build-isolation\n"}, project
    )
    assert found == [("FAL002", 2, "warning"), ("FAL007", 2, "warning")]


def test_a_trailing_redirect_after_and_or_pipe_belongs_to_the_last_command(project: Any) -> None:
    # tree-sitter-bash gives `a && b >x` (and `a | b >x`, `! b >x`) the redirect of the whole list;
    # the shell gives it to b, so FAL007 is found however the command is chained
    for line in (
        "pip install -U pip && pip install flash-attn>=2.5.8",
        "pip install torch || pip install flash-attn>=2.5.8",
        "cat /dev/null | pip install flash-attn>=2.5.8",
        "! pip install flash-attn>=2.5.8",
    ):
        project({"install.sh": f"{line}\n"})
        codes = [f["code"] for f in run("--format", "json", "--select", "FAL007", ".").json["findings"]]
        assert codes == ["FAL007"], line


def test_the_fix_quotes_a_failing_word(project: Any) -> None:
    root = project(
        {"Dockerfile": "FROM python:3.11\nRUN pip install torch && pip install flash-attn<=2.6.3\n"}
    )
    assert run("--fix", "--select", "FAL007", ".").code == 0
    assert (root / "Dockerfile").read_text().endswith('pip install "flash-attn<=2.6.3"\n')


def test_no_fix_for_an_operator_without_a_version(project: Any) -> None:
    project({"install.sh": "pip install flash-attn<\necho done\n"})
    (f,) = run("--format", "json", ".").json["findings"]
    assert (f["code"], f["fix"]) == ("FAL007", None)
    assert "syntax error" in f["message"]


def test_the_finding_says_what_follows_in_each_kind_of_file(project: Any) -> None:
    notes = {}
    for name, text in (
        ("Dockerfile", "FROM python:3.11\nRUN pip install flash-attn<2.6\n"),
        ("install.sh", "pip install flash-attn<2.6\n"),
        ("Makefile", "all:\n\tpip install flash-attn<2.6\n"),
    ):
        project({name: text})
        (f,) = run("--format", "json", name).json["findings"]
        notes[name] = f["notes"]
        Path(name).unlink()
    assert "the image build stops there" in notes["Dockerfile"][1]
    assert "make stops at this recipe line" in notes["Makefile"][1]
    assert "`set -e`" in notes["install.sh"][1]
    assert all("opens a file named `2.6` as the command's standard input" in n[0] for n in notes.values())


@pytest.mark.parametrize("chained", [False, True])
def test_findings_on_one_span_stand_apart(chained: bool, project: Any) -> None:
    # docs/output.md, "Findings on one span": three rules, three findings on one word; ignoring one
    # code takes away that finding only
    line = (
        "pip install -U pip && pip install flash-attn>=2.5.8" if chained else "pip install flash-attn>=2.5.8"
    )
    # a base with nvcc: on python:3.11 setup.py has no toolkit, and FAL015 makes it four
    project(
        {"Dockerfile": f"FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN pip install -U pip\nRUN {line}\n"}
    )
    every = [(f["code"], f["line"], f["column"]) for f in run("--format", "json", ".").json["findings"]]
    column = 5 + line.index("flash-attn")
    assert every == [("FAL002", 3, column), ("FAL007", 3, column), ("FAL012", 3, column)]
    for code in ("FAL002", "FAL007", "FAL012"):
        left = [
            (f["code"], f["line"]) for f in run("--format", "json", "--ignore", code, ".").json["findings"]
        ]
        assert left == [(c, 3) for c, _, _ in every if c != code]
