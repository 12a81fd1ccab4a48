"""Which prebuilt wheels a flash-attn release has, and which one its ``setup.py`` fetches.

PyPI carries only flash-attn's sdists. Installing one runs ``setup.py``, whose ``bdist_wheel``
command (``CachedWheelsCommand``) downloads the wheel the release workflow built for the running
torch, CUDA, C++ ABI and CPython, named
``flash_attn-{ver}+cu{cuda}torch{major.minor}cxx11abi{TRUE|FALSE}-cp{py}-cp{py}-{platform}.whl``,
and compiles from source only when that file does not exist. The wheels the tag surely has are the
workflow's build matrix less its excludes; ``scripts/build_kb.py`` reads both from each tag.

The matrix is a lower bound: since August 2025 the default branch's ``build.yml`` can build a wheel for a
release after its tag and attach it (``workflow_dispatch`` with ``release-version``), naming it as
publish.yml does. So whether a wheel exists has three answers (``Availability``): yes (the matrix built
it, or public files show it), no (the tag's workflow could have built it and did not, or no such
wheel can be named), and unknown (the torch, or that torch's wheel for that CPython, came out after the
tag: only a build after the tag could have made it, and no file fa-lint reads lists those).
"""

from __future__ import annotations

import enum
import functools
import itertools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from fa_lint._records import NamedTuple

if TYPE_CHECKING:
    from fa_lint.kb.assets import Asset, Listing

X86 = "linux_x86_64"  # the platform every release workflow's matrix builds on (ubuntu-* runners)


class Build(NamedTuple):
    """One prebuilt wheel, by the parts of its name that vary."""

    torch: str  # major.minor, as the name writes it: "2.3"
    python: str  # "3.11"
    cuda: str  # as the name writes it: "118", "122", "12"
    cxx11_abi: bool


class Availability(enum.Enum):
    """Whether a prebuilt wheel exists for an environment."""

    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"


class TorchSeries(NamedTuple):
    """When one torch major.minor reached PyPI: its first file, and its first file for each CPython."""

    released: str  # ISO 8601, UTC: "2025-10-15T15:45:59Z"
    cpython: Mapping[str, str]  # "3.12" -> the first cp312 file's upload time


class Later(NamedTuple):
    """What decides whether a release can have gained a wheel after its tag (shared by every release).

    ``since``: the first default-branch commit of the workflow that builds a release's wheel after its
    tag; ``cuda_digits``: how that workflow names CUDA (1: cu12); ``torch``: each torch series' dates.
    """

    since: str | None
    cuda_digits: int | None
    torch: Mapping[str, TorchSeries]


NO_LATER = Later(None, None, {})  # a knowledge base without the dates: nothing is judged unknown


class Wheels:
    """The prebuilt wheels of one release; ``fetched`` False: its setup.py fetches none.

    Not changed once made (what ``cached_property`` adds is worked out from the fields); equal when
    its fields are. A plain class: see ``fa_lint.machine.environments.Environment``.
    """

    __hash__ = None  # type: ignore[assignment]  # it holds dicts, as the frozen dataclass it was did

    def __init__(
        self,
        fetched: bool,
        # The release workflow's build matrix as the knowledge base holds it: axes and excludes
        matrix: Mapping[str, Any] | None = None,
        # torch major.minor -> the torch pre-release its wheels were built against, where the matrix
        # names a nightly (2.3.0.dev20240126) rather than a release of that minor
        nightly: Mapping[str, str] | None = None,
        # torch's CUDA major -> the CUDA setup.py puts in the name ("11" -> "11.8", "*" -> "12.2");
        # empty: torch's own CUDA, as is
        cuda_map: Mapping[str, str] | None = None,
        cuda_digits: int = 2,  # 2: cu118, 1: cu12
        platforms: tuple[str, ...] = (),
        evidence: Mapping[str, Any] | None = None,
        # (torch, "cuda major" or None, CUDA named instead): setup.py's special cases by torch series
        # (2.2.3.post2-2.3.5: torch 2.1 fetches the cu122 wheel)
        overrides: tuple[tuple[str, str | None, str], ...] = (),
        # wheels public files show the release has, though its matrix did not build them
        seen: frozenset[Build] = frozenset(),
        tagged: str | None = None,  # when the tagged commit was made (UTC ISO 8601); None: not known
        later: Later | None = None,
        version: str | None = None,  # the release's, as PyPI writes it: its asset listing's key
    ) -> None:
        self.fetched = fetched
        self.matrix: Mapping[str, Any] = {} if matrix is None else matrix
        self.nightly = nightly
        self.cuda_map = cuda_map
        self.cuda_digits = cuda_digits
        self.platforms = platforms
        self.evidence = evidence
        self.overrides = overrides
        self.seen = seen
        self.tagged = tagged
        self.later = later
        self.version = version

    def _fields(self) -> tuple[object, ...]:
        return (
            self.fetched,
            self.matrix,
            self.nightly,
            self.cuda_map,
            self.cuda_digits,
            self.platforms,
            self.evidence,
            self.overrides,
            self.seen,
            self.tagged,
            self.later,
            self.version,
        )

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if isinstance(other, Wheels) else NotImplemented

    def __repr__(self) -> str:
        return f"Wheels(fetched={self.fetched}, platforms={self.platforms!r}, tagged={self.tagged!r})"

    @functools.cached_property
    def builds(self) -> frozenset[Build]:
        """Every combination of the matrix its excludes leave: worked out the first time a rule asks
        (the knowledge base holds thousands, and most runs ask about one release or none)."""
        d = self.matrix
        if not d:
            return frozenset()
        axes = [
            [(t["version"], t["minor"]) for t in d["torch"]],
            d["python"],
            [(c["version"], c["name"]) for c in d["cuda"]],
            d["cxx11_abi"],
            d["os"],
        ]
        # an exclude takes out every combination that has all its (axis, value) pairs
        excludes = [frozenset(e.items()) for e in d["exclude"]]
        builds = set()
        for (torch, minor), python, (cuda, name), abi, runner in itertools.product(*axes):
            combo = {("torch", torch), ("python", python), ("cuda", cuda), ("cxx11_abi", abi), ("os", runner)}
            if not any(e <= combo for e in excludes):
                builds.add(Build(minor, python, name, abi.upper() == "TRUE"))
        return frozenset(builds)

    @functools.cached_property
    def torch(self) -> tuple[str, ...]:
        return tuple(sorted({b.torch for b in self.builds}, key=_key))

    @functools.cached_property
    def python(self) -> tuple[str, ...]:
        return tuple(sorted({b.python for b in self.builds}, key=_key))

    @functools.cached_property
    def cuda(self) -> tuple[str, ...]:
        return tuple(sorted({b.cuda for b in self.builds}, key=_key))

    def cuda_name(self, cuda: str, torch: str | None = None) -> str | None:
        """The CUDA part of the name setup.py asks for, given torch's CUDA ("12.1") and, where setup.py
        special-cases one, torch's major.minor; None: no CUDA."""
        try:
            v = Version(cuda)
        except InvalidVersion:
            return None  # a CPU or ROCm torch: setup.py names no CUDA wheel it could find
        for series, major, to in self.overrides:
            if torch == series and major in (None, str(v.major)):
                return "".join(to.split(".")[: self.cuda_digits])
        mapping = self.cuda_map or {}
        named = mapping.get(str(v.major), mapping.get("*")) if mapping else f"{v.major}.{v.minor}"
        if named is None:
            return None
        parts = named.split(".")
        return "".join(parts[: self.cuda_digits])

    def matching(
        self,
        torch: str,
        python: Iterable[str] | None = None,
        cuda: str | None = None,
        cxx11_abi: bool | None = None,
    ) -> list[Build]:
        """The builds setup.py could fetch for this environment; None leaves that part open."""
        pythons = None if python is None else set(python)
        name = None if cuda is None else self.cuda_name(cuda, torch)
        if cuda is not None and name is None:
            return []
        return [b for b in self.builds | self.seen if _fits(b, torch, pythons, name, cxx11_abi)]

    def has(
        self,
        torch: str,
        python: Iterable[str] | None = None,
        cuda: str | None = None,
        cxx11_abi: bool | None = None,
        platform: str = X86,
    ) -> Availability:
        """Whether setup.py finds a prebuilt wheel for this environment; None leaves that part open.

        A listed asset says yes; a complete listing that lacks it, no (``absent``); else the tag's matrix
        and the wheels public files show say yes, and a torch newer than the tag leaves it unknown."""
        if not self.fetched:
            return Availability.NO
        pythons = None if python is None else list(python)
        if self.assets_for(torch, pythons, cuda, cxx11_abi, platform):
            return Availability.YES
        if self.absent(torch, pythons, cuda, cxx11_abi, platform):
            return Availability.NO
        if platform == X86 and self.matching(torch, pythons, cuda, cxx11_abi):
            return Availability.YES
        return Availability.UNKNOWN if self.after_tag(torch, pythons, cuda) else Availability.NO

    @functools.cached_property
    def listed(self) -> Listing | None:
        """The release's published asset listing (fa_lint/kb/assets.json), if there is one."""
        if self.version is None:
            return None
        from fa_lint.kb import assets  # read the first time a rule asks about a listed release

        return assets.of(self.version)

    def assets_for(
        self,
        torch: str,
        python: Iterable[str] | None = None,
        cuda: str | None = None,
        cxx11_abi: bool | None = None,
        platform: str | None = X86,
    ) -> list[Asset]:
        """The listed wheels setup.py could fetch for this environment (``platform`` None: any)."""
        listing = self.listed
        name = None if cuda is None else self.cuda_name(cuda, torch)
        if listing is None or (cuda is not None and name is None):
            return []
        pythons = None if python is None else set(python)
        return [
            a
            for a in listing.assets
            if (platform is None or a.platform == platform) and _fits(a, torch, pythons, name, cxx11_abi)
        ]

    def absent(
        self,
        torch: str,
        python: Iterable[str] | None = None,
        cuda: str | None = None,
        cxx11_abi: bool | None = None,
        platform: str = X86,
    ) -> bool:
        """Whether a complete listing decides there is no such wheel: written after this torch (for these
        CPythons) reached PyPI, and, for a cxx11abiFALSE wheel, listing its TRUE twin (the listing's
        generator leaves out a FALSE wheel that has none)."""
        listing = self.listed
        if listing is None or not listing.complete or not self.listed_after(torch, python):
            return False
        if cxx11_abi is False:
            return bool(self.assets_for(torch, python, cuda, True, platform))
        return True

    def listed_after(self, torch: str, python: Iterable[str] | None = None) -> bool:
        """Whether the listing was written after torch ``torch`` (its wheel for each CPython asked
        about) reached PyPI: a wheel for it could have been attached by then."""
        listing = self.listed
        series = self.later.torch.get(torch) if self.later is not None else None
        if listing is None or series is None:
            return False  # a torch the KB's snapshot of the index does not know: newer than it
        dates = (
            list(series.cpython.values()) if python is None else [series.cpython.get(p, "") for p in python]
        )
        return all(d < listing.as_of for d in dates)  # "": no torch wheel for that CPython, ever

    def after_tag(self, torch: str, python: Iterable[str] | None = None, cuda: str | None = None) -> bool:
        """Whether a wheel for this torch (and CPython) can only have been built after the tag: the torch
        series, or its wheel for that CPython, came out after the tagged commit, and the workflow that
        builds wheels later names them the way this release's setup.py asks for them."""
        later = self.later
        if later is None or later.since is None or self.tagged is None or not self.fetched:
            return False
        if later.cuda_digits != self.cuda_digits:
            return False  # its later wheels are named cu12; this setup.py asks for cu122: never fetched
        if cuda is not None and self.cuda_name(cuda, torch) is None:
            return False
        series = later.torch.get(torch)
        if series is None:
            return True  # a torch the KB's snapshot of the index does not have yet: newer than it
        dates = (
            list(series.cpython.values()) if python is None else [series.cpython.get(p, "") for p in python]
        )
        return any(d > self.tagged for d in dates)  # "": that torch has no wheel for this CPython

    def later_torch(self) -> tuple[str, ...]:
        """The torch series whose wheels can only have come after the tag (for any CPython)."""
        if self.later is None:
            return ()
        built = set(self.torch)  # a series the matrix built (a nightly of it, say) has its wheels
        decided = self.listed is not None and self.listed.complete
        return tuple(
            t
            for t in sorted(self.later.torch, key=_key)
            if t not in built and self.after_tag(t) and not (decided and self.listed_after(t))
        )

    def built_against(self, torch: str) -> str | None:
        """The torch pre-release the ``torch`` wheels were built against, if not a release."""
        return (self.nightly or {}).get(torch)


def _fits(
    wheel: Build | Asset, torch: str, pythons: set[str] | None, cuda: str | None, cxx11_abi: bool | None
) -> bool:
    """Whether a wheel's name matches an environment; None leaves that part open. A Build is what a
    tag's matrix would make, an Asset what a release lists: the same parts of the same name."""
    return (
        wheel.torch == torch
        and (pythons is None or wheel.python in pythons)
        and (cuda is None or wheel.cuda == cuda)
        and (cxx11_abi is None or wheel.cxx11_abi == cxx11_abi)
    )


def _key(text: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in text.split("."))


def later_from_dict(doc: Mapping[str, Any]) -> Later:
    """The knowledge base's ``later_builds`` and ``torch`` sections."""
    builds = doc.get("later_builds") or {}
    minors = (doc.get("torch") or {}).get("minors", {})
    return Later(
        since=builds.get("since", {}).get("date"),
        cuda_digits=builds.get("cuda_digits"),
        torch={k: TorchSeries(v["released"], dict(v["cpython"])) for k, v in minors.items()},
    )


def from_dict(
    d: Mapping[str, Any] | None,
    tagged: str | None = None,
    later: Later | None = None,
    version: str | None = None,
) -> Wheels | None:
    if d is None:
        return None
    if not d.get("fetched"):
        return Wheels(False, evidence=d.get("evidence"), version=version)
    released = {t["minor"] for t in d["torch"] if not t["nightly"]}
    nightly = {t["minor"]: t["version"] for t in d["torch"] if t["nightly"] and t["minor"] not in released}
    rule = d["name_rule"]
    return Wheels(
        True,
        d,
        nightly,
        dict(rule["cuda_map"]),
        int(rule["cuda_digits"]),
        tuple(d["platforms"]),
        d.get("evidence"),
        tuple((o["torch"], o["cuda_major"], o["to"]) for o in rule.get("torch_overrides", ())),
        frozenset(Build(b["torch"], b["python"], b["cuda"], b["cxx11_abi"]) for b in d.get("seen", ())),
        tagged,
        later,
        version,
    )
