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


class Fa3KnowledgeBase(NamedTuple):
    head: str  # the last commit read
    head_date: str
    versions: tuple[tuple[str, Fact], ...]  # each version string and where it was first set
    since: Mapping[str, Fact | None]  # kvcache, kvcache_page_table, sm80, abi3, torch_stable_abi, ...
    pypi: tuple[PypiRelease, ...]

    def fact(self, name: str) -> Fact | None:
        return self.since.get(name)


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
    )


@functools.cache
def load() -> Fa3KnowledgeBase:
    from fa_lint.kb import data

    return from_dict(json.loads(data("fa3.json")))
