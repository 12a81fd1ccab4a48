"""NGC PyTorch containers (``nvcr.io/nvidia/pytorch:YY.MM-py3``): what a release ships, as NVIDIA's
release notes or a report quoting the container say (``ngc.json``, from ``scripts/data/ngc.json``).

Every NGC PyTorch container carries its own torch, built from a source commit (``2.5.0a0+e000cf0``,
never a PyPI release), and from 23.08 a flash-attn 2 built against it; from 25.03 a pip constraints
file holds every package it ships to its own version. A field no source gives stays unknown.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from fa_lint._records import NamedTuple

_TAG = re.compile(r"^(?:nvcr\.io/)?nvidia/pytorch:(\d\d\.\d\d)-py3\b")


class NgcRelease(NamedTuple):
    tag: str  # "24.10"
    torch: str | None  # "2.5.0a0+e000cf0"
    cuda: str | None
    python: str | None
    ubuntu: str | None
    flash_attn: str | None  # the flash-attn it ships, where a source says which
    source: str  # the addresses of the sources of its fields, each once ("" for a row with none)
    cited: tuple[tuple[str, str], ...] = ()  # (field, the address of its source)

    def source_of(self, field: str) -> str:
        """The address of one field's source ("" when the field has none)."""
        return next((where for f, where in self.cited if f == field), "")


class NgcFacts(NamedTuple):
    releases: dict[str, NgcRelease]
    ships_flash_attn_since: str  # "23.08"
    ships_source: str
    constraints_since: str  # "25.03"
    constraints_path: str
    constraints_source: str

    def release(self, tag: str) -> NgcRelease:
        """The row for a release tag, or one with every field unknown."""
        return self.releases.get(tag) or NgcRelease(tag, None, None, None, None, None, "")


def tag(reference: str) -> str | None:
    """The release an image reference names (``nvcr.io/nvidia/pytorch:24.10-py3`` -> "24.10")."""
    m = _TAG.match(reference)
    return m.group(1) if m else None


def key(release: str) -> tuple[int, int]:
    year, month = release.split(".")
    return int(year), int(month)


def _url(source: str) -> str:
    """A source's address, for a note (the data keeps the quote beside it); a source with none (a public
    repository's file found by its text) is named by the words before its first quote."""
    m = re.search(r"https?://\S+?(?=[,:;)]*(?:\s|$))", source)
    return m.group(0) if m else source.split(": '", 1)[0]


def _release(tag: str, row: dict[str, list[str]], sources: dict[str, str]) -> NgcRelease:
    """A row's fields, each ``[value, source]``, and the addresses of its sources (each once)."""
    values = {field: pair[0] for field, pair in row.items()}
    where = ", ".join(dict.fromkeys(_url(sources[pair[1]]) for pair in row.values()))
    return NgcRelease(
        tag,
        values.get("torch"),
        values.get("cuda"),
        values.get("python"),
        values.get("ubuntu"),
        values.get("flash_attn"),
        where,
        tuple((field, _url(sources[pair[1]])) for field, pair in row.items()),
    )


def from_dict(doc: dict[str, Any]) -> NgcFacts:
    sources = doc["sources"]
    releases = {t: _release(t, r, sources) for t, r in doc["releases"].items()}
    ships, constraints = doc["ships_flash_attn_since"], doc["constraints_file"]
    return NgcFacts(
        releases,
        ships["release"],
        _url(sources[ships["source"]]),
        constraints["since"],
        constraints["path"],
        _url(sources[constraints["source"]]),
    )


@functools.cache
def load() -> NgcFacts:
    from fa_lint.kb import data

    return from_dict(json.loads(data("ngc.json")))


def ships_flash_attn(reference: str) -> bool:
    """Whether an image reference names an NGC PyTorch release that ships a flash-attn of its own."""
    if "nvidia/pytorch:" not in reference:
        return False
    release = tag(reference)
    return release is not None and key(release) >= key(load().ships_flash_attn_since)
