"""The shell model over the whole of bash's grammar (issue 40 item 1, reliability/61).

- The walk knows every kind of named node tree-sitter-bash makes: the list comes from the grammar the
  tests run with (``tree_sitter.Language``'s node kinds), so a grammar release that adds a kind fails
  here until the walk says what runs in it.
- Functions are defined, redefined, unset, nested and called as bash does it; command and process
  substitutions and what follows a here-document's word run. The expectation of each case is bash's
  own: the script runs in bash with a stand-in ``pip`` on PATH that logs its arguments (never a real
  install), and fa-lint must read as certain exactly what bash installed.
- The fuzz generators (tests/fuzz) make every kind of node the grammar has, so the long fuzz run and
  the CI property tests reach all of them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from fa_lint.model import ParseProblem, Requirement
from fa_lint.shell import nodes
from fa_lint.shell.parse import grammar, tree
from tests.conftest import parse, run
from tests.fuzz.constructs import bash_scripts


def _grammar_kinds() -> set[str]:
    """Every named, visible node kind of the grammar fa-lint parses with (and ERROR)."""
    import tree_sitter

    language = tree_sitter.Language(grammar())
    kinds = {
        language.node_kind_for_id(i)
        for i in range(language.node_kind_count)
        if language.node_kind_is_named(i) and language.node_kind_is_visible(i)
    }
    return {k for k in kinds if k} | {"ERROR"}


def test_the_walk_knows_every_node_kind_of_the_grammar() -> None:
    kinds = _grammar_kinds()
    assert len(kinds) >= 60  # (the list really is the grammar's: 60 kinds in tree-sitter-bash 0.25)
    assert kinds - nodes.KINDS == set(), "a kind the walk does not know: say what runs in it (shell/nodes.py)"
    assert nodes.KINDS - kinds == set(), "a kind the grammar does not make any more"
    # the sets are a partition: each kind is read one way
    parts = (nodes.STATEMENTS, nodes.PARTS, nodes.SUBSTITUTIONS, nodes.WORDS)
    assert sum(len(p) for p in parts) == len(nodes.KINDS)


def _kinds_in(text: str) -> set[str]:
    from fa_lint.shell.parse import Chunk

    found: set[str] = set()
    stack = [tree(Chunk(text))]
    while stack:
        node = stack.pop()
        if node.is_named:
            found.add(node.type)
        stack.extend(node.children)
    return found


def test_the_fuzz_generators_make_every_node_kind_of_the_grammar() -> None:
    seen: set[str] = set()

    @settings(
        max_examples=400,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(bash_scripts())
    def collect(text: str) -> None:
        seen.update(_kinds_in(text))

    collect()
    missing = _grammar_kinds() - seen
    assert missing == set(), f"no generated script holds these kinds: {sorted(missing)}"


# --- bash is the reference -------------------------------------------------------------------------------

_BASH = shutil.which("bash")


def _bash_installs(tmp_path: Path, text: str) -> list[str]:
    """What bash hands a stand-in ``pip install`` running the script (each argument after install)."""
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    log = tmp_path / "pip.log"
    pip = stubs / "pip"
    pip.write_text(
        '#!/bin/sh\n[ "$1" = install ] && shift && for a in "$@"; do echo "$a" >> "$PIP_LOG"; done\n'
    )
    pip.chmod(0o755)
    script = tmp_path / "case.sh"
    script.write_text(text)
    env = {"PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}", "PIP_LOG": str(log), "HOME": str(tmp_path)}
    subprocess.run([_BASH or "bash", str(script)], env=env, cwd=tmp_path, capture_output=True, timeout=30)
    return log.read_text().split() if log.exists() else []


def _read(text: str) -> tuple[list[str], list[str], list[ParseProblem]]:
    """The flash-attn requirements fa-lint reads as certain, as possible, and its problems."""
    records = parse("shell", "case.sh", text)
    fa = [r for r in records if isinstance(r, Requirement) and r.name == "flash-attn"]
    certain = sorted(r.raw if "$" not in r.raw else f"flash-attn{r.specifier}" for r in fa if not r.possible)
    possible = sorted(r.raw if "$" not in r.raw else f"flash-attn{r.specifier}" for r in fa if r.possible)
    return certain, possible, [r for r in records if isinstance(r, ParseProblem)]


CASES = {
    # reliability/61: an uncalled function that defines another (the crash); its body is possible
    "nested, never called": ("outer() {\n  inner() { echo hi; }\n}\npip install flash-attn==2.4.2\n", []),
    "nested, both called": (
        "outer() {\n  inner() { pip install flash-attn==2.4.2; }\n}\nouter\ninner\n",
        [],
    ),
    "inner called before outer defines it": (
        "outer() { inner() { pip install flash-attn==2.4.1; }; }\ninner\nouter\n",
        ["flash-attn==2.4.1"],
    ),
    "redefined before the call": (
        "f() { pip install flash-attn==2.4.1; }\nf() { pip install flash-attn==2.4.2; }\nf\n",
        ["flash-attn==2.4.1"],
    ),
    "redefined after a call": (
        "f() { pip install flash-attn==2.4.1; }\nf\nf() { pip install flash-attn==2.4.2; }\nf\n",
        [],
    ),
    "unset -f": ("pip() { echo no; }\nunset -f pip\npip install flash-attn==2.4.2\n", []),
    "unset of a name no variable has": ("pip() { echo no; }\nunset pip\npip install flash-attn==2.4.2\n", []),
    "unset of a name a variable has": ("pip=1\npip() { :; }\nunset pip\npip install flash-attn==2.4.2\n", []),
    "unset -v keeps the function": ("pip() { :; }\nunset -v pip\npip install flash-attn==2.4.2\n", []),
    "one helper, each call": (
        'inst() { pip install "$@"; }\ninst torch\ninst flash-attn==2.4.2\ninst flash-attn==2.4.1\n',
        [],
    ),
    "recursion on new arguments": (
        'f() { pip install flash-attn==$1; if [ "$1" = 2.4.1 ]; then f 2.4.2; fi; }\nf 2.4.1\n',
        [],
    ),
    "mutual recursion": (
        'a() { b "$1"; }\nb() { pip install flash-attn==$1; [ "$1" = 2.4.1 ] && a 2.4.2; }\na 2.4.1\n',
        [],
    ),
    "function keyword and subshell body": (
        "function g { pip install flash-attn==2.4.2; }\nh() ( pip install flash-attn==2.4.1 )\ng\nh\n",
        [],
    ),
    "command substitution": (
        'V=$(pip install flash-attn==2.4.2)\necho "$(pip install flash-attn==2.4.1)"\n',
        [],
    ),
    "backticks": ("echo `pip install flash-attn==2.4.2`\n", []),
    "process substitution": ("cat <(pip install flash-attn==2.4.2)\n", []),
    "substitution in a test and arithmetic": (
        '[[ -n "$(pip install flash-attn==2.4.2)" ]]\n(( $(pip install flash-attn==2.4.1 | wc -l) ))\n',
        [],
    ),
    "substitution in a declaration and a for list": (
        "export A=$(pip install flash-attn==2.4.2)\nfor v in $(pip install flash-attn==2.4.1); do :; done\n",
        [],
    ),
    "after a here-document's word": (
        "cat <<EOF && pip install flash-attn==2.4.2\nbody\nEOF\ncat <<EOF | pip install flash-attn==2.4.1\nx\nEOF\n",
        [],
    ),
    "a here-document's substitution": ("cat <<EOF\n$(pip install flash-attn==2.4.2)\nEOF\n", []),
}


@pytest.mark.skipif(_BASH is None, reason="bash is the reference")
@pytest.mark.parametrize("case", list(CASES))
def test_functions_and_substitutions_run_as_bash_runs_them(case: str, tmp_path: Path) -> None:
    text, only_possible = CASES[case]
    ran = sorted(a for a in _bash_installs(tmp_path, text) if "flash" in a)
    certain, possible, problems = _read(text)
    assert problems == []
    # certain is what bash ran, unless bash ran it only after a test (then it is possible)
    assert set(certain) <= set(ran) <= set(certain) | set(possible), (certain, possible, ran)
    if not any(w in text for w in ("if ", "[ ", "||")):
        assert certain == ran
    # what bash never ran is read as possible only where a function is never called (or replaced first)
    assert sorted(set(possible) - set(ran)) == sorted(only_possible)


def test_the_reproducer_reads_the_pin_after_a_nested_function(project: Any) -> None:
    """reliability/61: FAL001 on the last line; no FAL900, no internal error."""
    project(
        {"setup.sh": "#!/bin/bash\nouter() {\n  inner() { echo hi; }\n}\npip install flash-attn==2.4.2\n"}
    )
    r = run("--format", "json", "--select", "FAL001,FAL9", "setup.sh")
    assert r.code == 1 and r.codes() == [("setup.sh", 5, "FAL001")], r.out + r.err


def test_function_calls_that_multiply_stop_at_a_budget() -> None:
    """Each function calling the next with two new arguments: 2^n calls; past MAX_CALLS they are not
    followed, and the file says so once (a FAL900), in bounded work."""
    from fa_lint.shell import walk

    n = 20
    lines = [f'f{i}() {{ f{i + 1} "$1"a; f{i + 1} "$1"b; }}' for i in range(n)]
    text = "\n".join([*lines, f'f{n}() {{ echo "$1"; }}', "f0 x", "pip install flash-attn==2.4.2", ""])
    certain, _, problems = _read(text)
    assert certain == ["flash-attn==2.4.2"]
    assert [p.message for p in problems] == [f"shell function calls past {walk.MAX_CALLS} are not followed"]


def test_deep_substitutions_are_a_located_limit_not_an_internal_error() -> None:
    text = "echo " + "$( " * 400 + "pip install flash-attn==2.4.2" + " )" * 400 + "\n"
    _, _, problems = _read(text)
    assert [p.message for p in problems] == ["shell nested more than 200 levels deep is not read"]
    assert not any(p.internal for p in problems)
