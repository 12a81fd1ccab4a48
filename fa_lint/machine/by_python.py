"""One resolve per Python where environment markers split requirements by Python.

``torch==2.3.1; python_version < '3.12'`` beside ``torch==2.5.1; python_version >= '3.12'``: each
Python installs only the lines whose markers hold there, so two lines that never hold on one Python
never conflict. What the environment ends with is every torch some Python ends with; a conflict on any
Python is one. The resolve itself is the caller's (``final_torch``), passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from packaging.ranges import VersionRange

from fa_lint.kb import torch as torch_kb
from fa_lint.model import Requirement

S = TypeVar("S")
Resolve = Callable[[list[Requirement], list[Requirement], Sequence[str]], tuple[VersionRange, list[S], Any]]


def resolve_each(
    resolve: Resolve[S], torches: list[Requirement], packages: list[Requirement], pys: Sequence[str]
) -> tuple[VersionRange, list[S], Any]:
    """``resolve(torches, packages, pythons)`` once for all Pythons where no marker tells them apart,
    else once per Python over the lines that hold there; the sources of every Python, each once."""
    marked = [r for r in (*torches, *packages) if r.marker and "python" in r.marker]
    worlds = {py: tuple(r for r in marked if torch_kb.holds(r.marker, py, frozenset())) for py in pys}
    if len(set(worlds.values())) < 2:
        return resolve(torches, packages, pys)
    final = VersionRange.empty()
    sources: dict[int, S] = {}
    split = set(map(id, marked))
    for py in pys:
        held = set(map(id, worlds[py]))
        mine = [r for r in torches if id(r) not in split or id(r) in held]
        theirs = [r for r in packages if id(r) not in split or id(r) in held]
        if not mine and not theirs:
            continue
        got, said, conflict = resolve(mine, theirs, (py,))
        if conflict is not None:
            return got, said, conflict
        final = final.union(got)
        for source in said:
            req = getattr(source, "requirement", None)
            sources.setdefault(id(req) if req is not None else id(source), source)
    return final, list(sources.values()), None
