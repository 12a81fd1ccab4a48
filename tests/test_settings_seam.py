"""The settings seam (issue 45): the command line is split once into the run's arguments and the
configuration overrides, a resolver gives each file one frozen settings value, and every entry point
(the linter, ``fa-lint server``, ``fa-lint wheel``, ``bot-config``) asks it, never the command line."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from fa_lint.settings.overrides import Overrides
from fa_lint.settings.resolved import Settings
from fa_lint.settings.scopes import Workspace
from tests.conftest import REPO, run

PACKAGE = REPO / "fa_lint"


def _namespace_uses(tree: ast.Module) -> list[int]:
    """Lines that import ``argparse.Namespace``, name it, or take a parameter typed with it."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "argparse":
            found += [node.lineno for a in node.names if a.name == "Namespace"]
        elif isinstance(node, ast.Attribute) and node.attr == "Namespace":
            found.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "Namespace" in node.value:
            found.append(node.lineno)  # a string annotation ("argparse.Namespace")
    return found


def test_the_argparse_namespace_never_leaves_cli() -> None:
    outside = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "cli":
            continue
        lines = _namespace_uses(ast.parse(path.read_text(encoding="utf-8")))
        outside += [f"{path.relative_to(REPO)}:{n}" for n in lines]
    assert not outside, f"argparse.Namespace outside fa_lint/cli/: {outside}"


def test_the_namespace_check_finds_each_way_in() -> None:
    for text in (
        "from argparse import Namespace\n",
        "import argparse\ndef f(args: argparse.Namespace) -> None: ...\n",
        "def f(args: 'argparse.Namespace') -> None: ...\n",
    ):
        assert _namespace_uses(ast.parse(text)), text
    assert not _namespace_uses(ast.parse("import argparse\np = argparse.ArgumentParser()\n"))


NESTED = {
    "requirements.txt": "flash-attn==2.4.2\nflash-attn>=2.0\n",
    "sub/requirements.txt": "flash-attn==2.4.2\nflash-attn>=2.0\n",
    "sub/fa-lint.toml": 'ignore = ["FAL002"]\nstrict = true\n',
}


def test_each_file_has_one_settings_value_the_command_line_over_its_configuration(project: Any) -> None:
    project(NESTED)
    space = Workspace(Overrides(), ["."])
    top, sub = space.of("requirements.txt"), space.of("sub/requirements.txt")
    assert isinstance(top, Settings) and isinstance(sub, Settings)
    assert (top.ignore, top.strict) == ((), False)
    assert (sub.ignore, sub.strict) == (("FAL002",), True)
    assert space.of("sub/requirements.txt") is sub  # made once per configuration and path
    # the command line wins over every file's configuration, --config KEY=VALUE over the files' keys
    over = Workspace(Overrides(strict=False, keys=(("ignore", ("FAL001",)),)), ["."])
    assert over.of("sub/requirements.txt")[:2] == ((), ("FAL001",))
    assert over.of("sub/requirements.txt").strict is False
    assert Workspace(Overrides(ignore=("FAL003",)), ["."]).of("sub/requirements.txt").ignore == ("FAL003",)
    # one file for every file, or none: no resolver, the run's own value for each
    isolated = Workspace(Overrides(isolated=True), ["."])
    assert isolated.found is None and isolated.of("sub/requirements.txt") == isolated.settings


def test_strict_and_new_from_rev_are_decided_once(project: Any) -> None:
    project({**NESTED, "fa-lint.toml": 'new-from-rev = "origin/main"\n'})
    space = Workspace(Overrides(), ["."])
    assert space.settings.new_from_rev == "origin/main"
    assert space.of("sub/requirements.txt").new_from_rev == "origin/main"  # the run's, in every file
    assert Workspace(Overrides(new_from_rev=""), ["."]).settings.new_from_rev == ""  # turned off
    # --show-settings prints what the run decides, from the same values
    shown = run("--show-settings", "--new-from-rev", "", "--no-respect-gitignore").out
    assert 'new-from-rev = ""  # off' in shown and "respect-gitignore = false" in shown
    assert shown.count("strict = true") == 1  # sub's configuration, not the top's


def test_fa_lint_wheel_reads_the_files_as_the_linter_does(project: Any) -> None:
    project(
        {
            "requirements.txt": "torch==2.10.0\nflash-attn==2.8.1\n",
            "legacy/requirements.txt": "torch==2.9.1\nflash-attn==2.7.4.post1\n",
        }
    )

    def environments(*argv: str) -> list[list[str]]:
        r = run("wheel", "--format", "json", "--python", "3.12", *argv)
        assert r.code in (0, 1), r.err
        return sorted(m["environments"] for m in json.loads(r.out)["machines"])

    both = environments(".")
    assert both == [["legacy/requirements.txt"], ["requirements.txt"]]
    project({"pyproject.toml": '[tool.fa-lint]\nexclude = ["legacy"]\n'})
    assert environments(".") == [["requirements.txt"]]  # the configuration's exclude, as in a lint run
    assert environments(".", "--isolated") == both
    assert environments(".", "--config", "exclude = []") == both


def test_fa_lint_server_takes_the_same_settings(project: Any) -> None:
    pytest.importorskip("pygls", reason="the server extra")
    from fa_lint.server.lsp import Server

    project({**NESTED, "pyproject.toml": '[tool.fa-lint]\nignore = ["FAL001"]\n'})
    root = str(Path.cwd())
    report = Server()._check_project(root, {})  # what a check of the project publishes
    lint = {(f["path"], f["code"]) for f in run("--format", "json").json["findings"]}
    served = {(str(Path(f.location.path).relative_to(root)), f.code) for f in report.findings}
    assert served == lint and ("requirements.txt", "FAL002") in served
    assert ("requirements.txt", "FAL001") not in served and ("sub/requirements.txt", "FAL002") not in served
