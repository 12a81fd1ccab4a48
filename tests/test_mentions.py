"""Issue 10, item 5: no mention of flash-attn in a dependency position is dropped in silence.

Every line of the shared corpus and of tests/data/realworld/formats that names flash-attn,
flash_attn, flash-attn-3 or flash-attn-4 (outside comments) must be accounted for: fa-lint read a
requirement of one of those distributions there, or reported a finding there (a verdict, FAL009
for a version it cannot know, FAL900 for an entry it cannot read). The rest are listed below by
hand, each with why the line is no dependency position, so a new silent drop fails this test.
The pattern here is this test's own, kept apart from fa-lint's.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fa_lint import engine
from fa_lint.files import project as project_files
from fa_lint.files.discover import discover
from fa_lint.model import Requirement
from tests.conftest import DATA, SHARED

MENTION = re.compile(r"(?<![\w.-])flash[-_.]+attn(?:[-_.]+[34])?(?![\w]|[-.][A-Za-z])", re.I)
FAMILY = {"flash-attn", "flash-attn-3", "flash-attn-4"}
CORPUS = SHARED / "corpus" / "files"
FORMATS = DATA / "realworld" / "formats"

LOCK_DETAIL = "lock detail of an entry judged at its name line"
NOT_DEPENDENCIES: dict[tuple[str, str, int], str] = {
    ("009-scgpt-lock", "poetry.lock", 3471): "[metadata.files] hash list of the entry at line 559",
    ("009-scgpt-lock", "poetry.lock", 3472): "[metadata.files] hash list of the entry at line 559",
    ("019-languru", "poetry.lock", 991): LOCK_DETAIL,
    ("035-archercoder", "install.sh", 5): "wget downloads the wheel; the pip install of line 6 is judged",
    ("040-open-instruct", "pyproject.toml", 71): "uv build setting (no-build-isolation-package)",
    ("040-open-instruct", "pyproject.toml", 74): "uv dependency-metadata: what flash-attn declares, no pin",
    ("040-open-instruct", "uv.lock", 22): "the lock's copy of that dependency-metadata",
    ("040-open-instruct", "uv.lock", 905): LOCK_DETAIL,
    ("040-open-instruct", "uv.lock", 2326): "an edge of the project entry; the flash-attn entry is judged",
    ("040-open-instruct", "uv.lock", 2356): "the lock's copy of pyproject.toml:59, judged there",
    ("041-openrlhf-docker", "Dockerfile", 17): "pip uninstall: removes, installs nothing",
    ("042-prime-rl", "pyproject.toml", 58): "the name of an extra; its requirement on line 59 is judged",
    ("042-prime-rl", "pyproject.toml", 116): "the project's own extra, prime-rl[flash-attn]",
    ("042-prime-rl", "pyproject.toml", 119): "the project's own extra, prime-rl[flash-attn-3]",
    ("042-prime-rl", "pyproject.toml", 144): "uv build setting (no-build-isolation-package)",
    ("042-prime-rl", "pyproject.toml", 181): "a tool setting named after the module",
    ("042-prime-rl", "pyproject.toml", 255): "a uv index source: where from, not which version",
    ("042-prime-rl", "pyproject.toml", 258): "uv extra-build-dependencies: what building it needs",
    ("042-prime-rl", "pyproject.toml", 259): "uv extra-build-dependencies: what building it needs",
    ("042-prime-rl", "pyproject.toml", 263): "uv extra-build-variables",
    ("043-transformer-engine-qa", "test.sh", 57): "python -c 'import flash_attn_3': an import check",
    ("047-linguaforge", "update.sh", 6): "pip uninstall: removes, installs nothing",
    ("cosmos-curate-pixi", "pixi.lock", 8): "an environment's list of package URLs; the entry is judged",
    ("fms-hf-tuning-tox", "tox.ini", 15): "installs the project's own extra .[flash-attn]",
    ("open-r1-deps-list", "setup.py", 18): "a key of the file's table; the string it stands for is judged",
}


def _code(line: str) -> str:
    """The line without its comment (a leading '#', or ' #' after the code)."""
    return "" if line.lstrip().startswith("#") else re.split(r"\s#", line, maxsplit=1)[0]


def _unaccounted(folder: Path, paths: list[str]) -> set[tuple[str, int]]:
    targets = list(discover(paths))
    files, _, _ = project_files.load(targets)
    seen: set[tuple[str, int]] = set()
    spans = [
        r.location
        for f in files.values()
        for r in f.records
        if isinstance(r, Requirement) and r.name in FAMILY
    ]
    spans += [f.location for f in engine.check(paths).findings]
    for loc in spans:
        seen.update((os.path.normpath(loc.path), n) for n in range(loc.line, loc.end_line + 1))
    out = set()
    for path in sorted({os.path.normpath(p) for p in files}):
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        for n, line in enumerate(text.split("\n"), start=1):
            if MENTION.search(_code(line)) and (path, n) not in seen:
                out.add((path, n))
    return out


def _cases() -> list[tuple[Path, list[str]]]:
    corpus = sorted(CORPUS.iterdir()) if CORPUS.is_dir() else []
    return [(c, sorted(os.listdir(c))) for c in corpus] + [
        (c, ["."]) for c in sorted(FORMATS.iterdir()) if c.is_dir()
    ]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
def test_the_corpus_is_counted() -> None:
    assert len([c for c, _ in _cases() if c.parent == CORPUS]) == len(list(CORPUS.iterdir()))


@pytest.mark.parametrize(("folder", "paths"), _cases(), ids=lambda v: v.name if isinstance(v, Path) else "")
def test_every_mention_is_judged_or_reported(
    folder: Path, paths: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder)
    listed = {(p, n) for (case, p, n) in NOT_DEPENDENCIES if case == folder.name}
    assert _unaccounted(folder, paths) <= listed


def test_the_listed_lines_mention_flash_attn() -> None:
    # A stale entry would excuse a line that no longer says what the reason claims.
    for (case, path, line), why in NOT_DEPENDENCIES.items():
        root = FORMATS if (FORMATS / case).is_dir() else CORPUS
        if not (root / case).is_dir():
            continue
        text = (root / case / path).read_text(encoding="utf-8").split("\n")[line - 1]
        assert MENTION.search(_code(text)), (case, path, line, why)
