"""Forks of flash-attention, and what their release tags build (``forks.json``, written by
``scripts/build_forks_kb.py`` from each fork's own tags).

flash-attention lives at Dao-AILab/flash-attention; HazyResearch/flash-attention is where it started
(GitHub redirects it). Any other owner's flash-attention is a fork: ROCm/flash-attention, say, tags
its releases ``v2.6.3-cktile``, and its ``flash_attn/__init__.py`` at that tag says ``2.6.3``. A fork
tag fa-lint has no entry for is read as the version it starts with (``v2.8.4.1-cktile``: 2.8.4.1):
a fork numbers its releases after the upstream release they carry.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from packaging.version import InvalidVersion, Version

from fa_lint.model import FLASH_REPOS

UPSTREAM = frozenset({"dao-ailab", "hazyresearch"})
# github.com/OWNER/REPO (or another forge's host/OWNER/REPO), as clone URLs and .gitmodules write it
# (Both patterns compiled on first use: most runs meet no clone URL and no fork's tag.)
_REPO_URL = r"^(?:git\+)?(?:[a-z][a-z0-9+.-]*://)?(?:[^@/]+@)?[^/:]+[/:](?P<owner>[^/]+)/(?P<repo>[^/#?@]+?)(?:\.git)?/?(?:[#?@].*)?$"
# a tag that starts with a version and goes on with a fork's own word: v2.6.3-cktile, v2.5.9post1-cktile-vllm
_FORK_TAG = r"^v?(\d+(?:\.\d+)*(?:\.?post\d+)?)[-_+][A-Za-z]"


def repository(url: str) -> tuple[str, str] | None:
    """The owner and name of a flash-attention repository URL, or None for any other URL."""
    m = re.match(_REPO_URL, url.strip(), re.I)
    if m is None or m["repo"].lower() not in FLASH_REPOS:
        return None
    return m["owner"], m["repo"]


def fork(url: str) -> str | None:
    """``OWNER/NAME`` of a flash-attention repository that is not upstream's, or None."""
    found = repository(url)
    if found is None or found[0].lower() in UPSTREAM:
        return None
    return f"{found[0]}/{found[1]}"


@functools.cache
def _forks() -> dict[str, Any]:
    from fa_lint.kb import data  # the package's data reader

    forks: dict[str, Any] = json.loads(data("forks.json"))["forks"]
    return {name.lower(): entry for name, entry in forks.items()}


def tag_version(name: str, tag: str) -> tuple[Version, str] | None:
    """The version a fork's tag builds, and how fa-lint knows it; None for a tag that names none."""
    tag = tag.removeprefix("refs/tags/").removeprefix("tags/")
    for entry in _forks().get(name.lower(), {}).get("tags", ()):
        if entry["tag"] == tag:
            return Version(
                entry["version"]
            ), f"its flash_attn/__init__.py says {entry['version']} at that tag"
    m = re.match(_FORK_TAG, tag, re.ASCII)
    if m is None:
        return None
    try:
        return Version(
            m.group(1)
        ), f"fa-lint has no record of the tag; read as the {m.group(1)} it starts with"
    except InvalidVersion:
        return None
