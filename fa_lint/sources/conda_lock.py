"""conda-lock's unified lockfile (``conda-lock.yml``): one entry per package and platform.

``manager: conda`` entries carry conda-forge's numbers (2.7.4 for PyPI's 2.7.4.post1), judged by
the upstream release they were built from, as conda specs are; ``manager: pip`` entries are PyPI's.
"""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Parsed, ParseProblem
from fa_lint.syntax import matchspec, pep508, yamllock
from fa_lint.syntax.text import TextIndex

NAME = "conda-lock"
TOOL = "conda-lock"


def parse(path: str, text: str) -> Iterator[Parsed]:
    index = TextIndex(path, text)
    for entry in yamllock.entries(index, "package"):
        if isinstance(entry, ParseProblem):
            yield entry
            continue
        name, version = entry.get("name"), entry.get("version")
        if name is None or version is None:
            continue
        _, start, end = entry.fields["name"]
        if entry.get("manager") != "pip":
            name = matchspec.pypi_name(name)
        platform = entry.get("platform")
        scope = f"lock; {platform}" if platform else "lock"
        where = index.location(start, end)
        yield pep508.exact(name, version, where, NAME, tool=TOOL, url=entry.get("url"), scope=scope)
