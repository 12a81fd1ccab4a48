"""The real-world corpus in ../shared/corpus: fa-lint must agree with every hand-checked row."""

from __future__ import annotations

import csv
import os
from collections import defaultdict
from pathlib import Path

import pytest

from fa_lint import engine
from tests.conftest import SHARED

CORPUS = SHARED / "corpus"
BAD = {"FAL001", "FAL002", "FAL003"}

pytestmark = pytest.mark.skipif(not (CORPUS / "expected.tsv").exists(), reason="../shared/corpus is absent")


def _rows() -> dict[str, list[dict[str, str]]]:
    by_case: dict[str, list[dict[str, str]]] = defaultdict(list)
    if (CORPUS / "expected.tsv").exists():
        with open(CORPUS / "expected.tsv", newline="") as f:
            for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
                if "EXTRA ROW" not in row["note"]:
                    by_case[row["case"]].append(row)
    return by_case


ROWS = _rows()


def _agrees(verdict: str, constraint: str, codes: set[str]) -> bool:
    if verdict == "error":
        return bool(codes & {"FAL001", "FAL003"})
    if verdict == "warning":
        versionless = constraint.startswith(("url:git", "git:"))
        return "FAL002" in codes or (versionless and not codes & BAD)
    return not codes & BAD


@pytest.mark.parametrize("case", sorted(ROWS))
def test_case(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = CORPUS / "files" / case
    monkeypatch.chdir(folder)
    report = engine.check(sorted(os.listdir(folder)))
    found: dict[tuple[str, int], set[str]] = defaultdict(set)
    for f in report.findings:
        found[(os.path.normpath(f.location.path), f.location.line)].add(f.code)
    wrong = []
    for row in ROWS[case]:
        codes = found.get((os.path.normpath(row["file"]), int(row["line"])), set())
        if not _agrees(row["verdict"], row["constraint"], codes):
            wrong.append(f"{row['file']}:{row['line']} expected {row['verdict']}, got {sorted(codes)}")
    assert not wrong
    # nothing in a real project's files should be unreadable to fa-lint
    assert not [f for f in report.findings if f.code == "FAL900"]


def test_corpus_is_complete() -> None:
    assert sum(len(r) for r in ROWS.values()) == 137
    assert len(ROWS) == len(list((CORPUS / "files").iterdir()))


def test_every_corpus_file_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in sorted(Path(CORPUS / "files").iterdir()):
        monkeypatch.chdir(folder)
        report = engine.check(sorted(os.listdir(folder)))
        assert report.files, folder.name
