"""Issue 41's slow paths, each rebuilt here from its shape: file names classified by an index, not by
trying every pattern of the catalogue; rules that ask about an environment once, not once per
requirement. Each test counts the work (patterns tried, entries looked at), never the wall clock;
speed itself is measured in benchmarks/bench.py and benchmarks/scaling.py.
"""

from __future__ import annotations

import fnmatch
import json
import random
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from packaging.ranges import VersionRange

from fa_lint.files import discover, needles
from fa_lint.machine.environments import Sources, source_applies
from fa_lint.model import Location, Requirement
from fa_lint.sources import SNIFFED, SOURCES
from tests.test_slow_paths import codes

# --- file names against the format catalogue -----------------------------------------------------------


@pytest.fixture
def segments_tried(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every catalogue segment a file name is tried against, from a cold cache."""
    tried: list[str] = []
    segment = discover._segment

    def counted(glob: str) -> Callable[[str], bool]:
        def match(name: str) -> bool:
            tried.append(glob)
            return segment(glob)(name)

        return match

    monkeypatch.setattr(discover, "_segment", counted)
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


@pytest.mark.parametrize("seed", range(2))
def test_the_index_says_what_trying_every_pattern_says(seed: int) -> None:
    """Names made from the catalogue's own patterns and random ones: the formats the index keeps for a
    name are those whose patterns' last segments match it, in the catalogue's order."""
    rnd = random.Random(seed)
    patterns = {
        sniffed: [
            (name, re.compile(discover._glob_regex(p.rsplit("/", 1)[-1])))
            for name, source in (SNIFFED if sniffed else SOURCES).items()
            for p in (source.candidates if sniffed else source.patterns)
        ]
        for sniffed in (False, True)
    }
    names = {
        p.rsplit("/", 1)[-1].replace("[-_.]", rnd.choice("-_.")).replace("*", fill).replace("?", "q")
        for source in SOURCES.values()
        for p in (*source.patterns, *source.candidates)
        for fill in ("", "x", "gpu", ".", "a.b", "env", "requirements")
    }
    names |= {
        "".join(rnd.choice("abcdeilmnoqrstuvxyDEPR.-_") for _ in range(rnd.randint(1, 14)))
        for _ in range(3000)
    }
    discover._could_be.cache_clear()
    for name in names:
        for sniffed, listed in patterns.items():
            expected = tuple(dict.fromkeys(fmt for fmt, regex in listed if regex.fullmatch(name)))
            assert discover._could_be(name, sniffed) == expected, name


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


# --- rules: an environment indexed once, not scanned once a requirement --------------------------------


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often the rules read a requirement's kind, marker, scope and step: a scan of an environment
    once a requirement reads them n^2 times."""
    counts = dict.fromkeys(("kind", "marker", "scope", "step"), 0)
    for field in counts:
        i = Requirement._fields.index(field)

        def get(self: Requirement, i: int = i, field: str = field) -> Any:
            counts[field] += 1
            return tuple.__getitem__(self, i)

        monkeypatch.setattr(Requirement, field, property(get))
    return counts


def _pyproject(deps: list[str], tail: str = "") -> str:
    listed = "".join(f"    {json.dumps(d)},\n" for d in deps)
    return f'[project]\nname = "x"\nversion = "1"\ndependencies = [\n{listed}]\n{tail}'


def test_entries_of_one_name_are_judged_without_a_scan_each(project: Any, reads: dict[str, int]) -> None:
    """A pyproject of 1,500 ``flash-attn>=2.0``: each looked for a uv source among all 1,500 (6.7 s for
    5,000 before)."""
    n = 1_500
    project({"pyproject.toml": _pyproject(["flash-attn>=2.0"] * n)})
    # FAL012 too: pip install . builds flash-attn in isolation (no command installs the project)
    assert [c for c in codes("pyproject.toml") if c[0] == "FAL002"] == [
        ("FAL002", line) for line in range(5, 5 + n)
    ]
    assert sum(reads.values()) <= 50 * n  # 41 a requirement (500 to 4,500); 2.2 million reads of kind before


def test_entries_times_markers_group_each_marker_once(project: Any, reads: dict[str, int]) -> None:
    """1,000 entries, each with its own marker, beside one without: an environment splits by marker,
    and each part was gathered, and each fix target worked out, from every entry."""
    n = 1_000
    deps = ["flash-attn<2.6"] + [f"flash-attn>=2.0; python_version == '3.{i}'" for i in range(n)]
    project({"pyproject.toml": _pyproject(deps)})
    found = [c for c in codes("pyproject.toml") if c[0] == "FAL002"]  # and pip install .'s FAL012
    assert found.count(("FAL002", 5)) == 1 and len(found) == n + 1
    assert sum(reads.values()) <= 60 * n  # 9 million before


def test_entries_times_sources_look_up_each_scope_once(project: Any, reads: dict[str, int]) -> None:
    """1,000 entries with markers and 1,000 uv sources of flash-attn with markers: each entry tried
    every source (source_applies), in two rules."""
    n = 1_000
    deps = [f"flash-attn>=2.0; python_version == '3.{i}'" for i in range(n)]
    git = '{ git = "https://github.com/Dao-AILab/flash-attention", tag = "v2.6.3", marker = "python_version == \'3.%d\'" }'
    sources = "[tool.uv.sources]\nflash-attn = [" + ", ".join(git % i for i in range(n)) + "]\n"
    project({"pyproject.toml": _pyproject(deps, sources)})
    assert [c for c in codes("pyproject.toml") if c[0] == "FAL002"] == [
        ("FAL002", i) for i in range(5, 5 + n)
    ]
    assert reads["scope"] <= 20 * n  # 4 million before


def test_exclusions_intersect_in_rounds(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """1,000 ``!=`` constraints: the range they leave has a piece for each, and intersecting them one
    after another went through every piece gathered so far (n^2 pieces)."""
    pieces = [0]
    intersection = VersionRange.intersection

    def counted(self: VersionRange, other: VersionRange) -> VersionRange:
        pieces[0] += str(self).count("|") + str(other).count("|") + 2
        return intersection(self, other)

    monkeypatch.setattr(VersionRange, "intersection", counted)
    n = 1_000
    constraints = "".join(f"flash-attn!=2.{i % 9}.{i}\n" for i in range(n))
    project({"requirements.txt": "-c c.txt\nflash-attn>=2.0\n", "c.txt": constraints})
    assert ("FAL002", 2) in codes(".")
    assert pieces[0] <= 40 * n  # 500,000 before


def test_a_flash_attn_entry_finds_the_transformers_beside_it_once(
    project: Any, reads: dict[str, int]
) -> None:
    """1,000 flash-attn entries beside 1,000 transformers entries: each finding's note gathered every
    transformers requirement of its environments again (entries x entries of another name)."""
    n = 1_000
    text = "".join(f"transformers>=4.{i}\nflash-attn>=2.{i % 5}\n" for i in range(n))
    project({"requirements.txt": text})
    assert len(codes("requirements.txt")) >= n
    assert reads["kind"] <= 60 * n  # 2 million before


@pytest.mark.parametrize("seed", range(3))
def test_sources_by_scope_are_those_that_apply(seed: int) -> None:
    """``Sources`` files each source by the one extra or group it is for: the same as asking
    ``source_applies`` of each."""
    rnd = random.Random(seed)
    scopes = ["project", "extra:GPU", "extra:gpu", "group:dev", "group:Dev_Tools", "extra:cpu"]
    filters = [
        "",
        " extra:gpu",
        " group:dev",
        " group:dev-tools",
        " extra:gpu group:dev",
        " extra:cpu extra:cpu",
    ]

    def req(scope: str) -> Requirement:
        return Requirement("flash-attn", "flash-attn", Location("p", 1, 1, 1, 2), "pyproject", scope=scope)

    sources = [req("uv:sources" + rnd.choice(filters)) for _ in range(30)]
    index = Sources(sources)
    for scope in scopes:
        wanted = [s for s in sources if source_applies(s, req(scope))]
        assert sorted(map(id, index.applying(req(scope)))) == sorted(map(id, wanted))
        assert index.any_applies(req(scope)) == bool(wanted)
