"""The major.minor series a version range reaches into (torch's, CPython's).

Below ``final_torch`` and ``toolchain``, which both read it, so that neither imports the other.
"""

from __future__ import annotations

import functools

from packaging.ranges import VersionRange
from packaging.specifiers import SpecifierSet


@functools.lru_cache(maxsize=1024)
def minors(rng: VersionRange, majors: tuple[int, ...] = (1, 2, 3)) -> tuple[str, ...]:
    """The major.minor series a range reaches into (``>=3.10,<3.12`` -> 3.10, 3.11); a project's
    environments ask about the same few ranges over and over, so each is worked out once (a
    monorepo's hundred ``requires-python = ">=3.10"`` cost 160 tests each before). (``is_disjoint`` is
    packaging's ``intersection(...).is_empty`` without building the intersection.)"""
    return tuple(
        f"{major}.{minor}"
        for major in majors
        if not rng.is_disjoint(_series(major))
        for minor in range(40)
        if not rng.is_disjoint(_series(major, minor))
    )


@functools.cache
def _series(major: int, minor: int | None = None) -> VersionRange:
    return SpecifierSet(f"=={major}.*" if minor is None else f"=={major}.{minor}.*").to_range()
