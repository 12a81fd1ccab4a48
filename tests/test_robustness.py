"""Damaged input is data: no parser, and no later stage, raises on it (README: never a traceback)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from fa_lint import engine
from fa_lint.files.discover import detect
from tests.conftest import DATA, parse, run

FIXTURES = sorted(p for p in DATA.rglob("*") if p.is_file() and detect(str(p)))
# Pieces that open something a parser must see closed, or that change what a token means.
# fmt: off
HOSTILE = ['"', "'", "`", "\\", "\\\n", "[", "]", "{", "}", "(", "$(", "${", "<<EOF\n", "\n", "\r\n", "\t", "#",
           "# noqa", ";", "&&", "|", ">", "=", "==", "@", ":", "-", "--", "-r ", "-c ", "git+https://[x/",
           "https://[::1/a.whl", "flash-attn", "flash_attn==2.4.2", "; python_version<'3'", "\u00e9", "\ufeff"]
# fmt: on


def _id(path: Path) -> str:
    return str(path.relative_to(DATA))


@pytest.mark.parametrize("path", FIXTURES, ids=_id)
def test_every_prefix_of_a_fixture_parses(path: Path) -> None:
    # A file cut anywhere leaves a quote, bracket, heredoc or continuation open at the very end.
    source, text = detect(str(path)), path.read_text(encoding="utf-8-sig")
    assert source is not None
    for cut in range(len(text) + 1):
        try:
            parse(source, path, text[:cut])
        except Exception as exc:  # the failure names the cut that raised
            pytest.fail(f"{_id(path)} cut after {cut} characters: {exc!r}")


@pytest.mark.parametrize("path", FIXTURES, ids=_id)
def test_seeded_mutations_never_raise(path: Path, tmp_path: Path) -> None:
    # The whole pipeline, not only the parser: environments, rules and fixes read what parsing made.
    source, text = detect(str(path)), path.read_text(encoding="utf-8-sig")
    rng = random.Random(_id(path))
    target = tmp_path.joinpath(*path.relative_to(DATA).parts[1:])  # the name the format is known by
    target.parent.mkdir(parents=True, exist_ok=True)
    for n in range(12):
        mutated = text
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, len(mutated))
            mutated = mutated[:at] + rng.choice(HOSTILE) + mutated[at:]
        target.write_text(mutated, encoding="utf-8")
        assert detect(str(target)) == source
        report = engine.check([str(target)])
        crashed = [f.message for f in report.findings if "internal error" in f.message]
        assert crashed == [], f"mutation {n} of {_id(path)}:\n{mutated}"


def test_deep_nesting_is_a_located_problem_not_a_crash(project: Any) -> None:
    # json, tomllib and PyYAML recurse once per bracket; the pyproject.toml is also where the
    # configuration is looked for, before any file is checked.
    deep = "[" * 100_000 + "]" * 100_000
    project(
        {
            "Pipfile.lock": deep,
            "pyproject.toml": f"a = {deep}\n",
            "environment.yml": f"a: {deep}\n",
            "requirements.txt": "flash-attn==2.4.2\n",
        }
    )
    r = run("--format", "json")
    assert r.code == 1, r.err
    nested = [f["path"] for f in r.json["findings"] if f["message"].startswith("file nests too deeply")]
    assert nested == ["Pipfile.lock", "environment.yml", "pyproject.toml"]
    assert ("requirements.txt", 1, "FAL001") in r.codes()  # the other files are still checked
