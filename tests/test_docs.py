"""The docs stay true: a page per rule, every format listed, the README's commands, the KB table."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from fa_lint import kb
from fa_lint.rules import RULES, page
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
    rows = re.findall(r"^\| \[(FAL\d+)\]\(docs/rules/\1\.md\) \| ([a-z-]+) \| (\w+) \|$", readme, re.M)
    assert rows == [(r.code, r.name, r.severity.value) for r in RULES.values()]


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
    ci = (REPO / ".ci/run").read_text()
    assert run_tests in ci


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
