"""FlashAttention 3 (``flash-attn-3``): what its source says since when, and what PyPI holds under its
name, as ``scripts/build_fa3_kb.py`` read them (``fa3.json``).

FA3 is flash-attention's ``hopper/`` folder, imported as ``flash_attn_interface``. It has no release
tags: one version string (3.0.0.b1, then 3.0.0) covered a year and a half of changes, so each fact
is kept with the commit and date it first holds. Its paged KV is ``flash_attn_with_kvcache(...,
page_table=...)``, not FA2's ``block_table``. PyPI holds only a placeholder under the name; real builds
come from a source checkout or another index.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from fa_lint._records import NamedTuple


class Fact(NamedTuple):
    commit: str  # "7a802796"
    date: str  # "2025-01-07"
    at: str  # "7a802796:hopper/flash_attn_interface.py:611"
    text: str
    value: str = ""  # the fact's value where it has one: torch "2.9", nvcc "12.3"

    def __str__(self) -> str:
        return f"{self.at} ({self.date}): {self.text}"


class PypiRelease(NamedTuple):
    version: str
    wheel: str
    ships_code: bool  # False: its flash_attn_interface.py is empty
    evidence: str


class Name(NamedTuple):
    """A run of commits whose hopper/setup.py builds one distribution with one extension module."""

    distribution: str  # "flashattn-hopper", "flash-attn", "flash-attn-3"
    extension: str  # "flashattn_hopper_cuda", "flash_attn_3_cuda", "flash_attn_3._C"
    fact: Fact  # where the run starts: "7f67966c:hopper/setup.py:32"


class Detection(NamedTuple):
    """How one transformers release finds FA3 (``is_flash_attn_3_available``)."""

    version: str
    module: str  # the module it looks for: "flash_attn_3", "flash_attn_interface"
    distribution: str | None  # the distribution that module must come from; None: any
    at: str  # "transformers-5.5.1-py3-none-any.whl:transformers/utils/import_utils.py:970: ..."


class Fa3KnowledgeBase(NamedTuple):
    head: str  # the last commit read
    head_date: str
    versions: tuple[tuple[str, Fact], ...]  # each version string and where it was first set
    since: Mapping[str, Fact | None]  # kvcache, kvcache_page_table, sm80, abi3, torch_stable_abi, ...
    pypi: tuple[PypiRelease, ...]
    names: tuple[Name, ...] = ()  # oldest first: the last is what the default branch builds
    names_at_tags: Mapping[str, str] = {}  # "v2.7.4" -> "flash-attn": what @v2.7.4#subdirectory=hopper builds
    detections: tuple[Detection, ...] = ()  # transformers releases read, oldest first
    fa2_py_modules: tuple[str, ...] = ()  # flash-attn 2 tags whose setup.py lists py_modules (none)
    fa2_tags_read: str = ""  # "78 tags, v2.0.0 to v2.8.3.post1"

    def fact(self, name: str) -> Fact | None:
        return self.since.get(name)

    def detection(self, version: str) -> Detection | None:
        """How transformers ``version`` finds FA3: the newest release read at or before it (a boundary is
        as exact as the releases read); None before any release with FA3 support."""
        from packaging.version import Version

        wanted = Version(version)
        found = [d for d in self.detections if Version(d.version) <= wanted]
        return found[-1] if found and found[-1].module else None


def _fact(d: dict[str, Any] | None) -> Fact | None:
    if d is None:
        return None
    value = d.get("torch") or d.get("version") or ""
    return Fact(d["commit"], d["date"], d["at"], d["text"], value)


def from_dict(doc: dict[str, Any]) -> Fa3KnowledgeBase:
    versions = []
    for v in doc["versions"]:
        fact = _fact(v)
        assert fact is not None
        versions.append((v["version"], fact._replace(value="")))
    return Fa3KnowledgeBase(
        head=doc["head"],
        head_date=doc["head_date"],
        versions=tuple(versions),
        since={k: _fact(v) for k, v in doc["since"].items()},
        pypi=tuple(
            PypiRelease(r["version"], r["wheel"], r["ships_code"], r["evidence"]) for r in doc["pypi"]
        ),
        names=tuple(Name(n["distribution"], n["extension"], _name_fact(n)) for n in doc.get("names", ())),
        names_at_tags=dict(doc.get("names_at_tags", {})),
        detections=tuple(
            Detection(
                t["version"],
                (t["checks"] or {}).get("module", ""),
                (t["checks"] or {}).get("distribution"),
                t["at"],
            )
            for t in doc.get("transformers", ())
        ),
        fa2_py_modules=tuple(doc.get("fa2_top_level_modules", {}).get("with_py_modules", ())),
        fa2_tags_read=_tags_read(doc.get("fa2_top_level_modules", {})),
    )


def _name_fact(d: dict[str, Any]) -> Fact:
    return Fact(d["commit"], d["date"], d["at"], d["text"])


def _tags_read(d: dict[str, Any]) -> str:
    return f"{d['tags_read']} tags, {d['first']} to {d['last']}" if d else ""


@functools.cache
def load() -> Fa3KnowledgeBase:
    from fa_lint.kb import data

    return from_dict(json.loads(data("fa3.json")))
