"""Which prebuilt wheels a flash-attn release has, and which one its ``setup.py`` fetches.

PyPI carries only flash-attn's sdists. Installing one runs ``setup.py``, whose ``bdist_wheel``
command (``CachedWheelsCommand``) downloads the wheel the release workflow built for the running
torch, CUDA, C++ ABI and CPython, named
``flash_attn-{ver}+cu{cuda}torch{major.minor}cxx11abi{TRUE|FALSE}-cp{py}-cp{py}-{platform}.whl``,
and compiles from source only when that file does not exist. The wheels that exist are the
workflow's build matrix less its excludes; ``scripts/build_kb.py`` reads both from each tag.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from packaging.version import InvalidVersion, Version


class Build(NamedTuple):
    """One prebuilt wheel, by the parts of its name that vary."""

    torch: str  # major.minor, as the name writes it: "2.3"
    python: str  # "3.11"
    cuda: str  # as the name writes it: "118", "122", "12"
    cxx11_abi: bool


@dataclass(frozen=True)
class Wheels:
    """The prebuilt wheels of one release; ``fetched`` False: its setup.py fetches none."""

    fetched: bool
    # The release workflow's build matrix as the knowledge base holds it: axes and excludes
    matrix: Mapping[str, Any] = field(default_factory=dict, repr=False)
    # torch major.minor -> the torch pre-release its wheels were built against, where the matrix
    # names a nightly (2.3.0.dev20240126) rather than a release of that minor
    nightly: Mapping[str, str] | None = None
    # torch's CUDA major -> the CUDA setup.py puts in the name ("11" -> "11.8", "*" -> "12.2");
    # empty: torch's own CUDA, as is
    cuda_map: Mapping[str, str] | None = None
    cuda_digits: int = 2  # 2: cu118, 1: cu12
    platforms: tuple[str, ...] = ()
    evidence: Mapping[str, Any] | None = None

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

    def cuda_name(self, cuda: str) -> str | None:
        """The CUDA part of the name setup.py asks for, given torch's CUDA ("12.1"); None: no CUDA."""
        try:
            v = Version(cuda)
        except InvalidVersion:
            return None  # a CPU or ROCm torch: setup.py names no CUDA wheel it could find
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
        name = None if cuda is None else self.cuda_name(cuda)
        if cuda is not None and name is None:
            return []
        return [
            b
            for b in self.builds
            if b.torch == torch
            and (pythons is None or b.python in pythons)
            and (name is None or b.cuda == name)
            and (cxx11_abi is None or b.cxx11_abi == cxx11_abi)
        ]

    def built_against(self, torch: str) -> str | None:
        """The torch pre-release the ``torch`` wheels were built against, if not a release."""
        return (self.nightly or {}).get(torch)


def _key(text: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in text.split("."))


def from_dict(d: Mapping[str, Any] | None) -> Wheels | None:
    if d is None:
        return None
    if not d.get("fetched"):
        return Wheels(False, evidence=d.get("evidence"))
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
    )
