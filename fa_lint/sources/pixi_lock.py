"""pixi.lock: the ``packages:`` list, conda and PyPI entries alike.

Lock format 6 names a conda package by its URL only (``.../flash-attn-2.6.3-py312h..._0.conda``:
name, version and build, split from the right); formats 4 and 5 write ``kind``, ``name`` and
``version``. Each entry is read once, scoped to the environments whose ``packages`` list its URL
(``lock; env:default env:cuda``), so an environment is held only to its own entries.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from fa_lint.model import Parsed, ParseProblem
from fa_lint.syntax import matchspec, pep508, yamllock
from fa_lint.syntax.text import TextIndex

NAME = "pixi.lock"
TOOL = "pixi"
_ENVIRONMENTS = re.compile(r"^environments:[ \t]*\r?\n((?:[ \t#].*(?:\n|$)|\r?\n)*)", re.M)
_ENV = re.compile(r"^  ([^\s#][^:]*):[ \t]*\r?$")
_USES = re.compile(r"^\s+- (?:conda|pypi):\s*['\"]?([^\s'\"]+)")


def _environments(text: str) -> dict[str, list[str]]:
    """Which environments use each package URL, from the ``environments:`` block."""
    found: dict[str, list[str]] = defaultdict(list)
    block = _ENVIRONMENTS.search(text)
    env = None
    for line in block.group(1).split("\n") if block else []:
        if m := _ENV.match(line):
            env = m.group(1).strip("'\"")
        elif (m := _USES.match(line)) and env is not None and env not in found[m.group(1)]:
            found[m.group(1)].append(env)
    return found


def _conda_file(url: str) -> tuple[str, str] | None:
    """Name and version from a conda package file name: name-version-build.conda (or .tar.bz2)."""
    base = pep508.file_name(url).removesuffix(".conda").removesuffix(".tar.bz2")
    parts = base.rsplit("-", 2)
    return (parts[0], parts[1]) if len(parts) == 3 else None


def parse(path: str, text: str) -> Iterator[Parsed]:
    index = TextIndex(path, text)
    users = _environments(text)
    for entry in yamllock.entries(index, "packages"):
        if isinstance(entry, ParseProblem):
            yield entry
            continue
        conda = entry.get("conda") or (entry.get("url") if entry.get("kind") == "conda" else None)
        url = conda or entry.get("pypi") or entry.get("url")
        name, version = entry.get("name"), entry.get("version")
        if conda and (name is None or version is None):
            found = _conda_file(conda)
            if found is None:
                continue
            name, version = found
        if name is None or version is None:
            continue
        key = next(k for k in ("name", "conda", "pypi", "kind", "url") if k in entry.fields)
        _, start, end = entry.fields[key]
        if conda:
            name = matchspec.pypi_name(name)
        envs = users.get(url or "", [])
        scope = "lock; " + " ".join(f"env:{e}" for e in envs) if envs else "lock"
        yield pep508.exact(name, version, index.location(start, end), NAME, tool=TOOL, url=url, scope=scope)
