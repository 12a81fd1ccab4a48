"""The docs stay true: a page per rule, every format listed, the README's commands, the KB table."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fa_lint import kb
from fa_lint.rules import RULES, Rule, page, severity
from fa_lint.sources import SNIFFED, SOURCES
from tests.conftest import REPO

DOCS = REPO / "docs"


@pytest.mark.parametrize("code", list(RULES))
def test_every_rule_has_a_page(code: str) -> None:
    rule = RULES[code]
    page = (DOCS / "rules" / f"{code}.md").read_text()
    assert page.startswith(f"# {code} `{rule.name}`")
    assert f"**Severity:** {rule.severity.value}" in page
    assert rule.url.endswith(f"docs/rules/{code}.md")


@pytest.mark.parametrize("code", list(RULES))
def test_every_rule_page_explains_the_four_things(code: str) -> None:
    # 'fa-lint rule CODE' prints the page from the package, where an installed fa-lint finds it
    text = page(code)
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings == ["What it finds", "Why it matters", "How to fix", "Suppress"], code
    assert (DOCS / "rules" / f"{code}.md").read_text().startswith(page(code, links=""))


def test_no_page_without_a_rule() -> None:
    assert sorted(p.stem for p in (DOCS / "rules").glob("*.md")) == sorted(RULES)


def test_readme_rule_table_matches_the_registry() -> None:
    readme = (REPO / "README.md").read_text()
    rows = re.findall(
        r"^\| \[(FAL\d+)\]\(https://github\.com/fa-lint/fa-lint/blob/main/docs/rules/\1\.md\) \| ([a-z-]+) \| "
        r"([a-z ,]+) \| (.+) \|$",
        readme,
        re.M,
    )
    assert rows == [(r.code, r.name, severity(r), r.summary) for r in RULES.values()]
    docs = (DOCS / "README.md").read_text()  # the docs' index lists every rule too
    assert re.findall(r"^\| \[(FAL\d+)\]\(rules/\1\.md\) \|", docs, re.M) == list(RULES)


def test_a_rule_with_two_severities_says_so_everywhere() -> None:
    assert severity(RULES["FAL012"]) == "error or warning, by context"
    assert severity(RULES["FAL002"]) == "warning or info, by context"
    assert severity(RULES["FAL001"]) == "error"
    assert "**Severity:** error or warning, by context" in page("FAL012")


def _severities_set(module: Path) -> list[tuple[str, set[str], int]]:
    """(rule constant, the Severity members a ``RULE.finding(..., severity=...)`` call can give, line)."""
    found = []
    tree = ast.parse(module.read_text())
    for function in [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)]:
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            rule = node.func.value
            given = [k.value for k in node.keywords if k.arg == "severity"]
            if node.func.attr != "finding" or not isinstance(rule, ast.Name) or not given:
                continue
            # severity=Severity.X, an expression of them, or a variable: every Severity.X the function names
            where = function if isinstance(given[0], ast.Name) else given[0]
            names = {
                n.attr
                for n in ast.walk(where)
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "Severity"
            }
            found.append((rule.id, names, node.lineno))
    return found


def test_every_severity_a_rule_gives_is_declared() -> None:
    # A finding given a severity other than its rule's default must be declared in Rule.also, so that the
    # tables, the rule pages and SARIF's rule metadata say it (a future rule included).
    import fa_lint.rules as package

    for module in sorted(Path(package.__file__).parent.glob("*.py")):
        namespace = vars(importlib.import_module(f"fa_lint.rules.{module.stem}"))
        for constant, names, line in _severities_set(module):
            rule = namespace.get(constant)
            if not isinstance(rule, Rule):
                continue
            declared = {s.name for s in rule.severities}
            assert names <= declared | {"severity"}, (
                f"{module.name}:{line}: {rule.code} gives {names - declared}"
            )
    # ... and a field set through a dict (FAL002's fields["severity"]) is caught by the golden project
    every = json.loads((REPO / "tests" / "golden" / "every-rule.json").read_text())
    for f in every["findings"]:
        assert f["severity"] in {s.value for s in RULES[f["code"]].severities}, f


def test_formats_page_lists_every_source_and_pattern() -> None:
    page = (DOCS / "formats.md").read_text()
    for name, source in SOURCES.items():
        assert f"| `{name}` |" in page, name
        for pattern in source.patterns:
            assert f"`{pattern}`" in page, pattern
    for name, sniffed in SNIFFED.items():
        row = next(line for line in page.splitlines() if line.startswith(f"| `{name}` |"))
        for pattern in sniffed.candidates:
            assert f"`{pattern}`" in row.split("sniffed:", 1)[1], pattern


def test_readme_opens_with_the_two_commands_and_ci_runs_the_second() -> None:
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, re.S)
    run_demo, run_tests = blocks[0], blocks[1]
    assert "fa-lint examples/demo" in run_demo and "pip install" in run_demo
    assert "pytest" in run_tests and ".[test]" in run_tests
    assert readme.index(run_tests) < 600
    ci = (REPO / ".ci/run").read_text().splitlines()
    commands = [c for c in ci if c and not c.startswith(("#", "set ", "cd "))]
    assert commands == [run_tests]  # CI runs that command and nothing else


def test_knowledge_base_table_matches_the_data() -> None:
    page = (DOCS / "knowledge-base.md").read_text()
    base = kb.load()
    for feature, first in re.findall(r"^\| `([a-z-]+)` \| .*? \| \**([\d.a-z]+)\** \|$", page, re.M):
        assert str(base.first_with(feature)) == first, feature
    assert f"{len(base.installable)} as of {base.date}" in page


def test_hook_manifest_is_generated_from_the_catalogue() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts/generate.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
