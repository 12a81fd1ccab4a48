"""flash-attn-4: every release on PyPI and what it can do, as ``scripts/build_fa4_kb.py`` read its wheel.

flash-attn-4 is flash-attention's CuTe DSL rewrite (``flash_attn/cute``, imported as
``flash_attn.cute``): pure Python, compiled on the GPU host at first use. Its paged KV is
``flash_attn_varlen_func(..., page_table=...)``; it has no ``flash_attn_with_kvcache``. Every release on
PyPI is a pre-release (4.0.0bN) except 0.0.1, a yanked placeholder with no code, and that one final
release changes what pip picks: see ``installs``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from fa_lint._records import NamedTuple

DISTRIBUTION = "flash-attn-4"


class Fa4Release(NamedTuple):
    version: Version
    uploaded: str
    yanked: bool
    source: str  # "wheel flash_attn_4-4.0.0b36-py3-none-any.whl"
    ships_code: bool  # False: a placeholder without flash_attn/cute/interface.py
    paged: bool  # flash_attn_varlen_func takes page_table
    kvcache: bool  # the module has flash_attn_with_kvcache
    archs: tuple[int, ...]  # compute capability majors its forward pass accepts (9: SM 9.x)
    paged_refused: tuple[int, ...]  # ... and those where it refuses a page table
    requires: Mapping[str, str]  # Requires-Dist specifiers: nvidia-cutlass-dsl, quack-kernels, torch
    requires_python: str | None
    evidence: Mapping[str, str]  # fact -> "file:line"

    @property
    def paged_archs(self) -> tuple[int, ...]:
        return tuple(a for a in self.archs if a not in self.paged_refused)

    def __str__(self) -> str:
        return str(self.version)


class Fa4KnowledgeBase(NamedTuple):
    releases: tuple[Fa4Release, ...]  # ascending, the yanked placeholder included
    generated: str
    first_tag: str | None  # the first fa4-v* tag and whether it has page_table: "fa4-v4.0.0.beta0"
    first_tag_paged: bool

    @property
    def newest(self) -> Fa4Release:
        return max((r for r in self.releases if not r.yanked), key=lambda r: r.version)

    def get(self, version: Version | str) -> Fa4Release | None:
        v = Version(str(version))
        return next((r for r in self.releases if r.version == v), None)

    def installs(self, spec: SpecifierSet, pinned: bool, installer: str, pre: bool) -> tuple[Fa4Release, ...]:
        """The releases an installer can pick for ``spec``, by its own rules for pre-releases and yanks.

        pip (and an unknown installer, judged as pip) filters every release, yanked ones included, by the
        specifier, letting pre-releases in only when it names one, ``--pre`` is given, or *no final release*
        matches; then it drops yanked releases unless the specifier pins one with ``==``. flash-attn-4's
        one final release, 0.0.1, is yanked: so for ``flash-attn-4`` or ``flash-attn-4<5`` pip keeps only
        0.0.1, drops it, and finds nothing ("No matching distribution found"; pip 23.2 and 26.3 alike).
        uv drops yanked releases first and allows pre-releases when every release left is one: it picks
        the newest beta.
        """
        ordered = sorted(self.releases, key=lambda r: r.version)
        if installer == "uv":
            pool = [r for r in ordered if not r.yanked or pinned]
            allow = pre or all(r.version.is_prerelease for r in pool) or None
            picked = set(spec.filter([r.version for r in pool], prereleases=allow))
            return tuple(r for r in pool if r.version in picked)
        picked = set(spec.filter([r.version for r in ordered], prereleases=True if pre else None))
        found = [r for r in ordered if r.version in picked]
        kept = [r for r in found if not r.yanked]
        return tuple(kept if kept or not pinned else found)


def _release(d: dict[str, Any]) -> Fa4Release:
    evidence = {}
    for key in ("varlen_page_table", "archs"):
        if d.get(key):
            evidence[key] = d[key]["at"]
    for r in d.get("paged_refused", ()):
        evidence[f"paged_refused_sm{r['sm']}"] = r["at"]
    return Fa4Release(
        version=Version(d["version"]),
        uploaded=d["uploaded"],
        yanked=bool(d["yanked"]),
        source=d["source"],
        ships_code=d["interface"] is not None,
        paged=bool(d.get("varlen_page_table")),
        kvcache=bool(d.get("kvcache")),
        archs=tuple(d["archs"]["sm"]) if d.get("archs") else (),
        paged_refused=tuple(r["sm"] for r in d.get("paged_refused", ())),
        requires=dict(d.get("requires", {})),
        requires_python=d.get("requires_python"),
        evidence=evidence,
    )


def from_dict(doc: dict[str, Any]) -> Fa4KnowledgeBase:
    tags = doc.get("tags") or []
    return Fa4KnowledgeBase(
        releases=tuple(sorted((_release(d) for d in doc["releases"]), key=lambda r: r.version)),
        generated=doc["generated"],
        first_tag=tags[0]["tag"] if tags else None,
        first_tag_paged=bool(tags and tags[0]["varlen_page_table"]),
    )


@functools.cache
def load() -> Fa4KnowledgeBase:
    from fa_lint.kb import data

    return from_dict(json.loads(data("fa4.json")))
