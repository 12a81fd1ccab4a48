"""What releases a requirement, or a group of them, lets an installer pick.

Reasoning is over the set of real releases a range admits (packaging's range algebra and the
knowledge base), never over the numbers written in the specifier.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable, Iterable

from packaging.ranges import VersionRange
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from fa_lint._records import NamedTuple
from fa_lint.kb import PAGED_KV, KnowledgeBase, Release
from fa_lint.model import Requirement


class Policy(NamedTuple):
    """What counts as good enough: paged KV, and at least ``min_version``."""

    min_version: Version
    # why min_version is above the first release with paged KV where a target needs it: on ROCm, the
    # release whose Composable Kernel backend binds fwd_kvcache (fa_lint/kb/rocm.json), with its evidence
    rocm: str = ""

    @classmethod
    def default(cls, kb: KnowledgeBase) -> Policy:
        return cls(kb.first_with(PAGED_KV).version)

    def good(self, release: Release, version: Version | None = None) -> bool:
        v = version or release.version
        return release.has(PAGED_KV) and (Version(v.public) if v.local else v) >= self.min_version


class Verdict(enum.Enum):
    OK = "ok"  # everything it admits has paged KV
    BAD = "bad"  # everything it admits lacks paged KV
    MIXED = "mixed"  # it admits releases with and without
    NONE = "none"  # it admits no release, and nothing newer either
    NEWER = "newer"  # it admits only versions newer than the knowledge base
    UNKNOWN = "unknown"  # the file does not say which version


class Assessment(NamedTuple):
    verdict: Verdict
    admitted: tuple[Release, ...] = ()
    good: tuple[Release, ...] = ()
    bad: tuple[Release, ...] = ()
    newer: bool = False  # admits versions past the newest known release
    exact: Version | None = None  # the one version a URL, tag or lock fixes


def _verdict(good: int, bad: int, newer: bool) -> Verdict:
    if not good and not bad:
        return Verdict.NEWER if newer else Verdict.NONE
    if not bad:
        return Verdict.OK
    return Verdict.MIXED if good or newer else Verdict.BAD


def assess_range(rng: VersionRange, kb: KnowledgeBase, policy: Policy) -> Assessment:
    admitted = kb.admitted(rng)
    judged = [(r, policy.good(r)) for r in admitted]
    good = tuple(r for r, ok in judged if ok)
    bad = tuple(r for r, ok in judged if not ok)
    newer = kb.admits_newer(rng)
    return Assessment(_verdict(len(good), len(bad), newer), admitted, good, bad, newer)


def assess_version(version: Version, kb: KnowledgeBase, policy: Policy) -> Assessment:
    """An exact version, which may not be on PyPI at all (a fork's wheel, a local build)."""
    public = Version(version.public)
    if public > kb.newest.version:
        return Assessment(Verdict.NEWER, newer=True, exact=version)
    release = kb.at(version)
    if release is None or not policy.good(release, version):
        bad = (release,) if release else ()
        return Assessment(Verdict.BAD, bad, (), bad, exact=version)
    return Assessment(Verdict.OK, (release,), (release,), (), exact=version)


def assessed_as(req: Requirement) -> Hashable:
    """What ``assess`` reads of a requirement (keep the two together): equal keys, equal assessments,
    so a file that repeats a requirement is assessed once."""
    alternatives = tuple(map(str, req.alternatives))
    return (
        bool(req.unresolved),
        req.version,
        req.url is None,
        str(req.specifier),
        alternatives,
        req.tool == "conda",
    )


def assess(req: Requirement, kb: KnowledgeBase, policy: Policy) -> Assessment:
    if req.unresolved:
        return Assessment(Verdict.UNKNOWN)
    if req.version is not None:
        return assess_version(req.version, kb, policy)
    if req.url is not None:
        return Assessment(Verdict.UNKNOWN)
    found = assess_range(req.version_range, kb, policy)
    if found.verdict is not Verdict.NONE:
        return found
    local = _local_pin(req)
    if local is not None:
        return assess_version(local, kb, policy)
    if req.tool == "conda":
        return _conda_numbers(req.version_range, kb, policy) or found
    return found


def _local_pin(req: Requirement) -> Version | None:
    """The version of a lone ``==2.5.8+cu122`` pin: a local build, from a wheel index or --find-links.

    PyPI carries no local versions, so no release matches; the build carries its public version's code.
    """
    specs = list(req.specifier)
    if len(specs) != 1 or specs[0].operator != "==" or "*" in specs[0].version:
        return None
    try:
        version = Version(specs[0].version)
    except InvalidVersion:
        return None
    return version if version.local else None


def _conda_numbers(rng: VersionRange, kb: KnowledgeBase, policy: Policy) -> Assessment | None:
    """A conda package's version, judged by the upstream release it was built from.

    conda-forge numbers its build of a tag without PyPI's ``.postN`` (2.7.4 for PyPI's 2.7.4.post1),
    and fa-lint has no list of conda-forge's builds; so a conda spec that matches no PyPI release but
    one such number is judged as that version, rather than called uninstallable.
    """
    numbers = {Version(r.version.base_version) for r in kb.installable}
    matched = [v for v in numbers if rng.contains(v)]
    return assess_version(matched[0], kb, policy) if len(matched) == 1 else None


def intersect(reqs: Iterable[Requirement], *, builds: bool = False) -> VersionRange:
    """Versions every one of these requirements admits at once.

    ``builds`` keeps the local label of an exact version (a wheel URL's ``2.8.3+cu12torch2.4``), as
    PEP 440 matches it: that build only. Judging against the knowledge base, which lists public
    releases, drops it (the build carries its release's code); comparing with a lock keeps it.
    """
    return intersect_all(build_range(req) if builds else req.version_range for req in reqs)


def intersect_all(ranges: Iterable[VersionRange]) -> VersionRange:
    """The versions every range admits. Each distinct range once (a project repeats its pins), then
    pairwise in rounds: a range has as many pieces as the exclusions it gathered, so intersecting n
    ``!=`` constraints one after another costs n^2, and in halving rounds n log n."""
    return _rounds(ranges, VersionRange.intersection, VersionRange.full())


def union_all(ranges: Iterable[VersionRange]) -> VersionRange:
    """The versions any of the ranges admits, in rounds as ``intersect_all``."""
    return _rounds(ranges, VersionRange.union, VersionRange.empty())


def _rounds(
    ranges: Iterable[VersionRange],
    op: Callable[[VersionRange, VersionRange], VersionRange],
    empty: VersionRange,
) -> VersionRange:
    level = list(dict.fromkeys(ranges))
    while len(level) > 1:
        pairs = zip(level[::2], level[1::2], strict=False)  # an odd one out waits for the next round
        level = [op(a, b) for a, b in pairs] + level[len(level) & ~1 :]
    return level[0] if level else empty


def build_range(req: Requirement) -> VersionRange:
    """What a requirement admits under PEP 440 with local labels kept on its side too: an exact
    ``2.8.3+cu.13.0`` admits that build alone (``==2.8.3`` would admit every local build of 2.8.3)."""
    if req.version is not None and req.version.local:
        return SpecifierSet(f"=={req.version}").to_range()
    return req.version_range
