"""FAL903 unused-noqa (ruff's RUF100, issue 43): a suppression comment that suppresses nothing is
reported, only when FAL903 is selected by its code, in every syntax a suppression is read from, with a
safe fix that takes away only the unused codes, or the whole comment when none is left.

Each case's expectation comes from the facts, not from fa-lint's output: ``flash-attn==2.4.2`` has no
``block_table`` (from 2.5.0), so it is a FAL001 on its line, which its ``# noqa: FAL001`` suppresses;
``numpy`` has no finding, so a ``# noqa: FAL001`` on its line suppresses nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run

OLD = "flash-attn==2.4.2"  # FAL001 on its line


def _found(*args: str) -> list[tuple[int, int, str, str]]:
    r = run("--isolated", "--format", "json", *args, ".")
    assert r.code in (0, 1), r.err
    return [(f["line"], f["column"], f["code"], f["message"]) for f in r.json["findings"]]


def _unused(*args: str) -> list[tuple[int, int, str]]:
    return [(line, col, msg) for line, col, code, msg in _found(*args) if code == "FAL903"]


def _fixed(project: Any, name: str, text: str, *args: str) -> str:
    path: Path = project({name: text}) / name
    r = run("--isolated", "--select", "FAL903", "--fix", *args, ".")
    assert r.code in (0, 1), r.err
    return path.read_bytes().decode("utf-8")


def _notebook(*lines: str) -> str:
    doc = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "metadata": {},
                "outputs": [],
                "source": list(lines),
            }
        ],
        "metadata": {"kernelspec": {"name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(doc, indent=1)


# Each syntax a suppression comment is read in: line 1 (or the line with flash-attn) has a finding its
# comment suppresses; the numpy line's comment suppresses nothing. (name, text, the text after --fix)
SYNTAXES = [
    (
        "requirements.txt",
        f"{OLD}  # noqa: FAL001\nnumpy  # noqa: FAL001\n",
        f"{OLD}  # noqa: FAL001\nnumpy\n",
    ),
    (
        "pyproject.toml",
        f'[project]\nname = "x"\ndependencies = [\n  "{OLD}",  # noqa: FAL001\n  "numpy",  # noqa: FAL001\n]\n',
        f'[project]\nname = "x"\ndependencies = [\n  "{OLD}",  # noqa: FAL001\n  "numpy",\n]\n',
    ),
    (
        "environment.yml",
        f"dependencies:\n  - pip\n  - pip:\n    - {OLD}  # noqa: FAL001\n    - numpy  # noqa: FAL001\n",
        f"dependencies:\n  - pip\n  - pip:\n    - {OLD}  # noqa: FAL001\n    - numpy\n",
    ),
    (
        "Dockerfile",
        f"FROM python:3.11\nRUN pip install {OLD}  # noqa: FAL001\nRUN pip install numpy  # noqa: FAL001\n",
        f"FROM python:3.11\nRUN pip install {OLD}  # noqa: FAL001\nRUN pip install numpy\n",
    ),
    (
        "install.sh",
        f"pip install {OLD}  # noqa: FAL001\npip install numpy  # noqa: FAL001\n",
        f"pip install {OLD}  # noqa: FAL001\npip install numpy\n",
    ),
    (
        "Makefile",
        f"install:\n\tpip install {OLD}  # noqa: FAL001\n\tpip install numpy  # noqa: FAL001\n",
        f"install:\n\tpip install {OLD}  # noqa: FAL001\n\tpip install numpy\n",
    ),
    (
        # cmd.exe has no "#" comment: REM after "&"; "& REM" alone would leave a bare "&", so REM stays
        "install.bat",
        f"pip install {OLD} & REM noqa: FAL001\r\npip install numpy & REM noqa: FAL001\r\n",
        f"pip install {OLD} & REM noqa: FAL001\r\npip install numpy & REM\r\n",
    ),
    (
        "install.ps1",
        f"pip install {OLD}  # noqa: FAL001\npip install numpy  # noqa: FAL001\n",
        f"pip install {OLD}  # noqa: FAL001\npip install numpy\n",
    ),
    (
        "setup.py",
        f'from setuptools import setup\nsetup(install_requires=[\n    "{OLD}",  # noqa: FAL001\n    "numpy",  # noqa: FAL001\n])\n',
        f'from setuptools import setup\nsetup(install_requires=[\n    "{OLD}",  # noqa: FAL001\n    "numpy",\n])\n',
    ),
    (
        "nb.ipynb",
        _notebook(f"!pip install {OLD}  # noqa: FAL001\n", "!pip install numpy  # noqa: FAL001\n"),
        _notebook(f"!pip install {OLD}  # noqa: FAL001\n", "!pip install numpy\n"),
    ),
]


def _numpy_line(text: str) -> tuple[int, int]:
    """The line and 1-based column of the suppression on numpy's line (its REM in a batch file)."""
    lines = text.split("\n")
    n = next(i for i, line in enumerate(lines) if "numpy" in line)
    line = lines[n]
    at = line.find("REM") if "REM" in line else line.find("#")
    return n + 1, at + 1


@pytest.mark.parametrize(("name", "text", "after"), SYNTAXES, ids=[s[0] for s in SYNTAXES])
def test_an_unused_code_is_reported_at_its_comment_in_every_syntax(
    project: Any, name: str, text: str, after: str
) -> None:
    project({name: text})
    assert _unused("--extend-select", "FAL903") == [
        (*_numpy_line(text), "unused suppression (unused: FAL001)")
    ]
    # the used comment still suppresses: FAL001 is not reported
    assert "FAL001" not in [code for *_, code, _ in _found("--extend-select", "FAL903")]


@pytest.mark.parametrize(("name", "text", "after"), SYNTAXES, ids=[s[0] for s in SYNTAXES])
def test_the_fix_takes_the_comment_away_and_nothing_else(
    project: Any, name: str, text: str, after: str
) -> None:
    assert _fixed(project, name, text) == after
    assert _unused("--select", "FAL903") == []
    assert _found("--select", "FAL001") == []  # the used comment stayed, and still suppresses


def test_nothing_changes_unless_fal903_is_selected_by_its_code(project: Any) -> None:
    project({"requirements.txt": "numpy  # noqa: FAL001\n", "fa-lint.toml": ""})
    assert _unused() == []  # the default selection: every rule but FAL903
    assert _unused("--select", "FAL") == _unused("--select", "FAL9") == []  # a prefix is no opt-in
    expected = [(1, 8, "unused suppression (unused: FAL001)")]
    assert _unused("--select", "FAL903") == expected
    assert _unused("--extend-select", "FAL903") == expected
    assert _unused("--select", "FAL001", "--extend-select", "FAL903") == expected
    assert _unused("--extend-select", "FAL903", "--ignore", "FAL9") == []
    assert _unused("--extend-select", "FAL903", "--per-file-ignores", "requirements.txt:FAL903") == []


def test_a_configuration_selects_it_by_its_code(project: Any) -> None:
    project({"requirements.txt": "numpy  # noqa: FAL001\n", "fa-lint.toml": 'select = ["FAL"]\n'})
    r = run("--format", "json", ".")
    assert [f["code"] for f in r.json["findings"]] == []
    project({"fa-lint.toml": 'select = ["FAL", "FAL903"]\n'})
    r = run("--format", "json", ".")
    assert [f["code"] for f in r.json["findings"]] == ["FAL903"]


def test_it_is_a_warning_that_fails_the_run_only_under_strict(project: Any) -> None:
    project({"requirements.txt": "numpy  # noqa: FAL001\n"})
    assert run("--isolated", "--select", "FAL903", ".").code == 0
    assert run("--isolated", "--select", "FAL903", "--strict", ".").code == 1


@pytest.mark.parametrize(
    ("line", "message", "after"),
    [
        # a partly used list: only the unused code goes, the separators of the rest stay
        (f"{OLD}  # noqa: FAL002, FAL001, E501", "unused: FAL002", f"{OLD}  # noqa: FAL001, E501"),
        (f"{OLD}  # noqa:FAL001,FAL002", "unused: FAL002", f"{OLD}  # noqa:FAL001"),
        (f"{OLD}  # noqa: FAL001 FAL007 FAL002", "unused: FAL007, FAL002", f"{OLD}  # noqa: FAL001"),
        (f"{OLD}  # noqa: FAL001, FAL001", "duplicated: FAL001", f"{OLD}  # noqa: FAL001"),
        (f"{OLD}  # noqa: FAL001, FAL999", "unknown: FAL999", f"{OLD}  # noqa: FAL001"),
        ("numpy  # noqa: FAL999", "unknown: FAL999", "numpy"),
        ("numpy  # noqa: FAL001, FAL999", "unused: FAL001; unknown: FAL999", "numpy"),
        (f"{OLD}  # fa-lint: ignore[FAL001, FAL002]", "unused: FAL002", f"{OLD}  # fa-lint: ignore[FAL001]"),
        # another linter's codes stay; with no code of fa-lint's left, they stay as they were
        ("numpy  # noqa: E501, FAL001", "unused: FAL001", "numpy  # noqa: E501"),
        # what follows on the line stays: a reason (still a comment), another comment
        ("numpy  # noqa: FAL001 pinned for CUDA 11", "unused: FAL001", "numpy  # pinned for CUDA 11"),
        ("numpy  # noqa: FAL001  # keep me", "unused: FAL001", "numpy  # keep me"),
        ("numpy  # pinned # noqa: FAL001", "unused: FAL001", "numpy  # pinned"),
        # a prefix that covers the finding's code is used; one that covers none is not
        (f"{OLD}  # noqa: FAL0", None, f"{OLD}  # noqa: FAL0"),
        ("numpy  # noqa: FAL0", "unused: FAL0", "numpy"),
    ],
)
def test_codes_and_what_the_fix_keeps(project: Any, line: str, message: str | None, after: str) -> None:
    text = f"{line}\nscipy\n"
    project({"requirements.txt": text})
    at = re.search(r"#\s*(noqa|fa-lint)", line)
    assert at is not None
    expected = [] if message is None else [(1, at.start() + 1, f"unused suppression ({message})")]
    assert _unused("--extend-select", "FAL903") == expected
    assert _fixed(project, "requirements.txt", text) == f"{after}\nscipy\n"


def test_no_code_of_another_linter_is_judged(project: Any) -> None:
    project(
        {
            "requirements.txt": "numpy  # noqa: E501\n",
            "setup.py": "import os  # noqa: F401\nfrom setuptools import setup\nsetup(name='x')\n",
        }
    )
    assert _unused("--select", "FAL903") == []


def test_a_blanket_comment(project: Any) -> None:
    files = {
        "requirements.txt": f"{OLD}  # noqa\nnumpy  # noqa\nscipy  # fa-lint: ignore\n",
        # a bare noqa comment in Python is ruff's and flake8's as much as fa-lint's: never judged there
        "setup.py": "import os  # noqa\nimport sys  # fa-lint: ignore\nfrom setuptools import setup\nsetup(name='x')\n",
    }
    project(files)
    r = run("--isolated", "--format", "json", "--select", "FAL903", ".")
    found = [(f["path"], f["line"], f["column"], f["message"]) for f in r.json["findings"]]
    blanket = "unused blanket suppression: it suppresses no finding"
    assert found == [
        ("requirements.txt", 2, 8, blanket),
        ("requirements.txt", 3, 8, blanket),
        ("setup.py", 2, 13, blanket),
    ]
    run("--isolated", "--select", "FAL903", "--fix", ".")
    assert (project.path / "requirements.txt").read_text() == f"{OLD}  # noqa\nnumpy\nscipy\n"
    assert (project.path / "setup.py").read_text() == files["setup.py"].replace("  # fa-lint: ignore", "")


def test_a_comment_that_names_fal903_is_never_reported(project: Any) -> None:
    project({"requirements.txt": "numpy  # noqa: FAL001, FAL903\n"})
    assert _unused("--select", "FAL903") == []


def test_file_level_comments(project: Any) -> None:
    text = f"# fa-lint: noqa: FAL002\n{OLD}\n"
    project({"requirements.txt": text})
    assert _unused("--select", "FAL903") == [(1, 1, "unused file-level suppression (unused: FAL002)")]
    # the whole line goes: "# fa-lint: noqa" left bare would exempt the file from every rule
    assert _fixed(project, "requirements.txt", text) == f"{OLD}\n"
    partly = f"# ruff: noqa: FAL001, FAL002, E501\n{OLD}\n"
    assert _fixed(project, "requirements.txt", partly) == f"# ruff: noqa: FAL001, E501\n{OLD}\n"


def test_a_file_level_exemption_makes_the_same_line_comment_unused(project: Any) -> None:
    # decide.apply reads the file-level exemption first: the line's comment suppresses nothing (ruff too)
    project({"requirements.txt": f"# fa-lint: noqa: FAL001\n{OLD}  # noqa: FAL001\n"})
    assert _unused("--select", "FAL903") == [(2, 20, "unused suppression (unused: FAL001)")]


def test_a_bare_file_level_noqa_exempts_the_file_from_fal903_too(project: Any) -> None:
    project({"requirements.txt": "# fa-lint: noqa\nnumpy  # noqa: FAL001\n"})
    assert _unused("--select", "FAL903") == []
    project({"requirements.txt": "# fa-lint: noqa: FAL903\nnumpy  # noqa: FAL001\n"})
    assert _unused("--select", "FAL903") == []


def test_a_comment_used_by_a_rule_that_is_not_selected_is_used(project: Any) -> None:
    # every rule runs; selection only chooses what is shown: the comment is still what hides FAL001
    project({"requirements.txt": f"{OLD}  # noqa: FAL001\n"})
    assert _unused("--select", "FAL903") == []
    assert _unused("--extend-select", "FAL903", "--ignore", "FAL001") == []


@pytest.mark.parametrize(
    ("text", "after"),
    [
        # a comment line of its own goes with its line break
        ("numpy\n# noqa: FAL001\nscipy\n", "numpy\nscipy\n"),
        ("numpy\n  # noqa: FAL001", "numpy\n"),
        # after a line that goes on, taking the line would join the next one to it: "#" stays
        ("numpy \\\n# noqa: FAL001\nscipy\n", "numpy \\\n#\nscipy\n"),
        # a CRLF file keeps its line endings
        ("numpy  # noqa: FAL001\r\nscipy\r\n", "numpy\r\nscipy\r\n"),
        # a "\\" after the comment is kept, whatever reads it
        ("numpy  # noqa: FAL001 \\\nscipy\n", "numpy  # \\\nscipy\n"),
    ],
)
def test_lines_and_line_endings(project: Any, text: str, after: str) -> None:
    assert _fixed(project, "requirements.txt", text) == after


def test_a_makefile_variable_keeps_the_blanks_make_puts_in_its_value(project: Any) -> None:
    # GNU make keeps the blanks before a comment in the value (`FA := 2.4.2  # c` is "2.4.2  ")
    text = "X := 1  # noqa: FAL001\ninstall:\n\tpip install numpy  # noqa: FAL001\n"
    assert _fixed(project, "Makefile", text) == "X := 1  \ninstall:\n\tpip install numpy\n"


def test_powershell_block_comments(project: Any) -> None:
    text = "pip install numpy <# noqa: FAL001 #>\n<# noqa: FAL001\n#>\npip install scipy\n"
    project({"install.ps1": text})
    assert [(line, col) for line, col, _ in _unused("--select", "FAL903")] == [
        (1, 19),
        (2, 1),
    ]  # at the block's opener
    # a block closed on its line goes whole; one that goes on keeps its "<#"
    assert _fixed(project, "install.ps1", text) == "pip install numpy\n<#\n#>\npip install scipy\n"


def test_batch_comment_lines_and_double_colons(project: Any) -> None:
    text = "@echo off\r\nREM noqa: FAL001\r\n:: noqa: FAL001 pinned\r\npip install numpy\r\n"
    project({"install.bat": text})
    assert [(line, col) for line, col, _ in _unused("--select", "FAL903")] == [(2, 1), (3, 1)]
    assert _fixed(project, "install.bat", text) == "@echo off\r\n:: pinned\r\npip install numpy\r\n"


def test_a_notebook_comment_line_stays_a_line_of_the_cell(project: Any) -> None:
    text = _notebook("# noqa: FAL001\n", "import os\n")
    after = _fixed(project, "nb.ipynb", text)
    assert after == _notebook("\n", "import os\n")
    json.loads(after)


def test_add_noqa_adds_nothing_for_fal903(project: Any) -> None:
    text = "numpy  # noqa: FAL001\n"
    path = project({"requirements.txt": text}) / "requirements.txt"
    r = run("--isolated", "--select", "FAL903", "--add-noqa", ".")
    assert r.code == 0, r.err
    assert path.read_text() == text


def test_a_comment_in_a_string_is_no_suppression_and_not_reported(project: Any) -> None:
    text = '[project]\nname = "x"\ndescription = "see # noqa: FAL001"\ndependencies = []\n'
    project({"pyproject.toml": text})
    assert _unused("--select", "FAL903") == []


def test_each_file_is_judged_by_its_own_configuration(project: Any) -> None:
    # a folder whose configuration selects FAL903 gets it; the rest of the repository keeps the default
    (project.path / ".git").mkdir()
    project(
        {
            "requirements.txt": "numpy  # noqa: FAL001\n",
            "sub/requirements.txt": "numpy  # noqa: FAL001\n",
            "sub/fa-lint.toml": 'select = ["FAL", "FAL903"]\n',
        }
    )
    r = run("--format", "json", ".")
    assert [(f["path"], f["code"]) for f in r.json["findings"]] == [("sub/requirements.txt", "FAL903")]


# Files with findings and no comment, in each syntax --add-noqa writes a comment in
BASES = {
    "requirements.txt": f"{OLD}\nnumpy\n",
    "pyproject.toml": f'[project]\nname = "x"\ndependencies = [\n  "{OLD}",\n  "numpy",\n]\n',
    "environment.yml": f"dependencies:\n  - pip\n  - pip:\n    - {OLD}\n",
    "Dockerfile": f"FROM python:3.11\nRUN pip install {OLD}\n",
    "install.sh": f"pip install {OLD}\r\npip install numpy\r\n",
    "Makefile": f"install:\n\tpip install {OLD}\n",
    "install.ps1": f"pip install {OLD}\n",
    "setup.py": f'from setuptools import setup\nsetup(install_requires=[\n    "{OLD}",\n])\n',
    "nb.ipynb": _notebook(f"!pip install {OLD}\n", "import os\n"),
}


@pytest.mark.parametrize("name", sorted(BASES))
def test_add_noqa_comments_are_used_and_the_fix_takes_stale_ones_back_out(project: Any, name: str) -> None:
    # --add-noqa's comments hide the findings, so none is unused; once their codes name nothing (a
    # code no rule has), --fix takes each away again, and the file is byte for byte what it was
    path = project({name: BASES[name]}) / name
    assert run("--isolated", "--add-noqa", ".").code == 0
    commented = path.read_bytes().decode("utf-8")  # line endings as written
    assert "# noqa: FAL001" in commented
    assert _unused("--select", "FAL903") == []
    path.write_bytes(re.sub(r"noqa: [A-Z0-9, ]+[0-9]", "noqa: FAL999", commented).encode("utf-8"))
    assert [msg for *_, msg in _unused("--select", "FAL903")] != []
    assert run("--isolated", "--select", "FAL903", "--fix", ".").code == 0
    assert path.read_bytes() == BASES[name].encode("utf-8")


def test_a_crash_judging_the_comments_is_fa_lints_bug_and_costs_that_file(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fa_lint.settings import unused

    def broken(path: str, *args: Any) -> list[Any]:
        if path.endswith("a.txt"):
            raise RuntimeError("boom")
        return real(path, *args)

    real = unused.unused
    monkeypatch.setattr(unused, "unused", broken)
    project({"a.txt": "numpy  # noqa: FAL001\n", "requirements.txt": "numpy  # noqa: FAL001\n"})
    r = run("--isolated", "--format", "json", "--select", "FAL903", "a.txt", "requirements.txt")
    assert r.code == 2  # ruff's exit status for a panic
    assert [(f["path"], f["code"]) for f in r.json["findings"]] == [
        ("a.txt", "FAL902"),
        ("requirements.txt", "FAL903"),
    ]


@pytest.mark.parametrize("selection", [["--select", "ALL"], ["--extend-select", "unused-noqa"]])
def test_all_and_the_rule_name_select_it(project: Any, selection: list[str]) -> None:
    # ALL is every rule (ruff's ALL takes in RUF100); the rule's name stands for its code
    project({"requirements.txt": "flash-attn>=2.6.3  # noqa: FAL001\n"})
    doc = run(*selection, "--format", "json", ".").json
    assert [f["code"] for f in doc["findings"]] == ["FAL903"]
