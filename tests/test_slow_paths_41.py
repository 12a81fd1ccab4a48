"""Issue 41's slow paths, each rebuilt here from its shape: file names classified by an index, not by
trying every pattern of the catalogue; rules that ask about an environment once, not once per
requirement. Each test counts the work (patterns tried, entries looked at), never the wall clock;
speed itself is measured in benchmarks/bench.py and benchmarks/scaling.py.
"""

from __future__ import annotations

import fnmatch
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from fa_lint.files import discover, needles

# --- file names against the format catalogue -----------------------------------------------------------


@pytest.fixture
def segments_tried(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every catalogue segment a file name is tried against, from a cold cache."""
    tried: list[str] = []
    segment = discover._segment

    class Counted:
        def __init__(self, glob: str) -> None:
            self.glob, self.pattern = glob, segment(glob)

        def fullmatch(self, name: str) -> re.Match[str] | None:
            tried.append(self.glob)
            return self.pattern.fullmatch(name)

    monkeypatch.setattr(discover, "_segment", Counted)
    discover._could_be.cache_clear()
    yield tried
    discover._could_be.cache_clear()


def test_file_names_are_tried_only_against_the_patterns_their_index_gives(segments_tried: list[str]) -> None:
    """5,000 distinct module names: each is tried against ``*.py`` (a candidate of the code layer and
    the app formats), not against the catalogue (570,000 generator steps before)."""
    n = 5_000
    for i in range(n):
        path = f"src/pkg{i // 100:02d}/mod_{i}.py"
        assert discover.detect(path) is None
        assert discover.candidate(path) == "python-app"
    assert segments_tried.count("*.py") == n
    # a glob for any name (a job script sniffed by its first line) would be tried too, and nothing else
    assert len(segments_tried) <= 3 * n


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        ("uv.lock", "uv.lock"),
        ("a/b/Dockerfile.gpu", "dockerfile"),
        ("docker/cuda.Dockerfile", "dockerfile"),
        ("env/environment-gpu.yml", "conda"),
        (".github/workflows/ci.yaml", "workflow"),
        ("ci.yaml", None),
        ("requirements/dev/extra.txt", "requirements"),
        ("notes.txt", None),
        ("pylock.dev.toml", "pylock"),
    ],
)
def test_the_index_finds_what_every_pattern_would(
    segments_tried: list[str], path: str, fmt: str | None
) -> None:
    assert discover.detect(path) == fmt
    assert len(segments_tried) <= 8  # the globs of its suffix (.yml: seven of the catalogue's)


def test_a_long_catalogue_costs_a_name_a_few_lookups() -> None:
    """Ten thousand globs of every kind the index files (whole names, suffixes, prefixes): a name's
    candidates are the few that can match, not the catalogue."""
    globs = [g for i in range(2_500) for g in (f"name{i}", f"*.ext{i}", f"pre{i}-*", f"*x{i}y*")]
    index = needles.Names(globs)
    assert [globs[i] for i in index.candidates("pre7-a.ext7")] == ["*.ext7", "pre7-*"]
    assert [globs[i] for i in index.candidates("name12")] == ["name12"]
    assert index.candidates("zzz") == []


@pytest.mark.parametrize("seed", range(3))
def test_name_candidates_hold_every_glob_that_matches(seed: int) -> None:
    """As fnmatch reads them: classes, ``]`` as text, an unclosed ``[``."""
    rnd = random.Random(seed)
    alphabet = ["a", "b", "x", ".", "*", "?", "[ab]", "[!a]", "[]a]", "[", "]", "-"]
    globs = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 6))) for _ in range(400)]
    names = ["".join(rnd.choice("abx.-[]") for _ in range(rnd.randint(0, 8))) for _ in range(400)]
    index = needles.Names(globs)
    for name in names:
        matching = {i for i, glob in enumerate(globs) if fnmatch.fnmatchcase(name, glob)}
        candidates: Any = index.candidates(name)
        assert matching <= set(candidates), name
        assert candidates == sorted(candidates)
