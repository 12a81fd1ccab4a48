"""How each installer builds an sdist, release by release, as ``scripts/build_installers_kb.py`` read
pip's, uv's, pixi's, PDM's and Poetry's own source at every tag (``installers.json``).

flash-attn's sdist has no pyproject.toml and its setup.py imports torch first: an installer that builds
it in an isolated environment, where torch is missing, fails. Each fact is kept with the tag, file and
line that show it; a range is ``since`` (the first tag with it) up to ``until`` (the first without it).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from packaging.version import InvalidVersion, Version

from fa_lint._records import NamedTuple


class Fact(NamedTuple):
    since: Version
    until: Version | None  # the first release without it; None while the latest still has it
    evidence: str  # "0.8.4:crates/uv-settings/src/settings.rs:379: pub extra_build_dependencies: ..."
    last: str  # the same line at the last release that has it

    def holds(self, version: Version) -> bool:
        return self.since <= version and (self.until is None or version < self.until)


def _fact(d: dict[str, Any] | None) -> Fact | None:
    if d is None:
        return None
    return Fact(Version(d["since"]), Version(d["until"]) if d["until"] else None, d["evidence"], d["last"])


class Installers(NamedTuple):
    facts: dict[str, Fact | None]  # "uv.extra_build_dependencies" -> its range
    pip_always_isolated: Version  # pip's first release with no legacy setup.py path
    pip_always_evidence: str
    uv_dynamic_case_insensitive: tuple[tuple[Version, str], ...]  # the uv releases that refuse match-runtime

    def fact(self, name: str) -> Fact:
        found = self.facts.get(name)
        if found is None:
            raise KeyError(name)
        return found


def from_dict(doc: dict[str, Any]) -> Installers:
    facts: dict[str, Fact | None] = {}
    for tool in ("pip", "uv", "pixi", "pdm", "poetry"):
        for key, value in doc[tool].items():
            if value is None or (isinstance(value, dict) and "since" in value):
                facts[f"{tool}.{key}"] = _fact(value)
    pip = doc["pip"]
    return Installers(
        facts,
        Version(pip["always_isolated_since"]),
        pip["always_isolated_evidence"],
        tuple((Version(r["release"]), r["evidence"]) for r in doc["uv"]["dynamic_case_insensitive"]),
    )


@functools.cache
def load() -> Installers:
    from fa_lint.kb import data

    return from_dict(json.loads(data("installers.json")))


def version(text: str) -> Version | None:
    """The one release a version setting names: ``0.11.0``, ``==0.11.0``, ``v0.11.0``; None for a range."""
    text = text.strip().removeprefix("==").removeprefix("v").strip()
    try:
        return Version(text)
    except InvalidVersion:
        return None
