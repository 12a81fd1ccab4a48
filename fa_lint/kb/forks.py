"""Forks of flash-attention, and what their release tags build (``forks.json``, written by
``scripts/build_forks_kb.py`` from each fork's own tags).

flash-attention lives at Dao-AILab/flash-attention; HazyResearch/flash-attention is where it started
(GitHub redirects it). Any other owner's flash-attention is a fork: ROCm/flash-attention, say, tags
its releases ``v2.6.3-cktile``, and its ``flash_attn/__init__.py`` at that tag says ``2.6.3``. A fork
tag fa-lint has no entry for is read as the version it starts with (``v2.8.4.1-cktile``: 2.8.4.1):
a fork numbers its releases after the upstream release they carry.

Which distribution a repository builds is what its ``setup.py`` names, recorded per fork here; a
repository's name says nothing for sure (fxmarty/flash-attention-rocm builds flash_attn,
vllm-project/flash-attention builds vllm-flash-attn). A repository this file does not list is taken
to build flash-attn when it is named flash-attention, or when the file that installs it says so.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from packaging.version import InvalidVersion, Version

from fa_lint.model import FLASH_ATTN, FLASH_REPOS

UPSTREAM = frozenset({"dao-ailab", "hazyresearch"})
# github.com/OWNER/REPO (or another forge's host/OWNER/REPO), as clone URLs and .gitmodules write it;
# a tag that starts with a version and goes on with a fork's own word: v2.6.3-cktile,
# v2.5.9post1-cktile-vllm. Compiled on first use: most runs meet no clone and no tag.
_REPO_URL = r"^(?:git\+)?(?:[a-z][a-z0-9+.-]*://)?(?:[^@/]+@)?[^/:]+[/:](?P<owner>[^/]+)/(?P<repo>[^/#?@]+?)(?:\.git)?/?(?:[#?@].*)?$"
_FORK_TAG = r"^v?(\d+(?:\.\d+)*(?:\.?post\d+)?)[-_+][A-Za-z]"


@functools.cache
def _pattern(which: str) -> re.Pattern[str]:
    return re.compile(_REPO_URL, re.I) if which == "url" else re.compile(_FORK_TAG, re.ASCII)


def _owner_repo(url: str) -> tuple[str, str] | None:
    m = _pattern("url").match(url.strip())
    return (m["owner"], m["repo"]) if m else None


def builds(url: str) -> str | None:
    """The distribution a repository builds (PEP 503 name): what this file's entry for it says its
    ``setup.py`` names (fxmarty/flash-attention-rocm builds flash-attn, vllm-project/flash-attention
    vllm-flash-attn), else flash-attn for a repository named flash-attention; None when neither says."""
    found = _owner_repo(url)
    if found is None:
        return None
    entry = _forks().get(f"{found[0]}/{found[1]}".lower())
    if entry is not None and entry.get("builds"):
        return str(entry["builds"]["package"])
    return FLASH_ATTN if found[1].lower() in FLASH_REPOS else None


def repository(url: str) -> tuple[str, str] | None:
    """The owner and name of a repository URL that builds flash-attn, or None for any other URL."""
    found = _owner_repo(url)
    return found if found is not None and builds(url) == FLASH_ATTN else None


def fork(url: str, named: bool = False) -> str | None:
    """``OWNER/NAME`` of a flash-attn repository that is not upstream's, or None. ``named``: the file
    says the URL builds flash-attn (``flash-attn @ git+URL``, ``#egg=flash_attn``), whatever the
    repository is called."""
    found = _owner_repo(url) if named else repository(url)
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
    m = _pattern("tag").match(tag)
    if m is None:
        return None
    try:
        return Version(
            m.group(1)
        ), f"fa-lint has no record of the tag; read as the {m.group(1)} it starts with"
    except InvalidVersion:
        return None
