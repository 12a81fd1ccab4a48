"""The documentation site builds with ``mkdocs build --strict`` (a broken link, a missing anchor or a page
left out of the navigation fails it), lists every rule, and the README, which is the package's PyPI
description, links only absolutely (PyPI shows it away from the repository, where ``docs/...`` is no
page)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from fa_lint.rules import RULES
from tests.conftest import REPO

# A Markdown link or image target: ](target) — the README's are all of this form.
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _build(tmp_path: Path, config: Path) -> subprocess.CompletedProcess[str]:
    # never -q: it drops the warnings before strict mode counts them, and the build passes
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=600,
    )


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    r = _build(tmp_path / "site", REPO / "mkdocs.yml")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "site" / "rules" / "FAL001" / "index.html").exists()
    assert (tmp_path / "site" / "index.html").exists()


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# x\n\nSee [nowhere](missing.md).\n")
    config = tmp_path / "mkdocs.yml"
    text = (REPO / "mkdocs.yml").read_text()
    text = re.sub(r"(?ms)^nav:.*", "nav:\n  - index.md\n", text).replace(
        "docs_dir: docs", f"docs_dir: {docs}"
    )
    config.write_text(text)
    r = _build(tmp_path / "site", config)
    assert r.returncode != 0 and "missing.md" in r.stdout + r.stderr


def _nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for v in nav.values() for p in _nav_pages(v)]
    if isinstance(nav, list):
        return [p for v in nav for p in _nav_pages(v)]
    return []


def test_the_navigation_lists_every_rule_and_every_page() -> None:
    # mkdocs.yml names no Python tags: the safe loader reads it as MkDocs does
    nav = _nav_pages(yaml.safe_load((REPO / "mkdocs.yml").read_text())["nav"])
    assert [p for p in nav if p.startswith("rules/")] == [f"rules/{code}.md" for code in RULES]
    pages = sorted(str(p.relative_to(REPO / "docs")) for p in (REPO / "docs").rglob("*.md"))
    assert sorted(nav) == pages


def test_the_readme_links_only_absolutely() -> None:
    relative = [t for t in LINK.findall((REPO / "README.md").read_text()) if not re.match(r"https?://|#", t)]
    assert relative == []


def test_the_docs_workflow_builds_what_the_test_builds() -> None:
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "docs.yml").read_text())
    runs = [s.get("run", "") for job in workflow["jobs"].values() for s in job.get("steps", [])]
    assert any("mkdocs build --strict" in r for r in runs)
    deploy = workflow["jobs"]["deploy"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert "pull_request" in deploy["if"]  # a pull request builds; only main publishes
