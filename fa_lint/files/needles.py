"""Many globs against many paths, each glob tried only where a path holds a piece of its text.

A walk asks whether each of its paths matches any of a list of globs (``.gitignore`` lines, ``exclude``
and ``per-file-ignores`` globs): trying every glob on every path costs globs x paths, and a pull request
writes the globs (3,000 ``*x<i>y*`` lines over 3,000 files took 45 s where git takes 0.6 s). Most globs
hold a stretch of plain characters (``*.pyc``, ``build-*``, ``*x1y*``) that every path they match holds
too, its *needle*; each glob is filed under one piece of its needle (``GRAM`` characters, or the whole
needle when shorter), the piece the fewest globs share, and a path's candidates are the globs filed
under the pieces it holds (``GRAM`` lookups a character) with those that have no needle (``*``,
``?*``). No library indexes globs this way (pathspec and fnmatch try each pattern in turn, and an
Aho-Corasick package would be a new dependency for what three dict lookups a character do).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Sequence

GRAM = 3
SMALL = 32  # up to this many items, trying each costs less than looking pieces up (most .gitignore files)


class Needles:
    """Items (numbered) by a piece of their needle; ``candidates`` finds those a text may match."""

    def __init__(self, needles: Iterable[tuple[int, str]]) -> None:
        needles = list(needles)
        self.few = sorted(i for i, _ in needles) if len(needles) <= SMALL else None
        self.always: list[int] = []
        self.filed: dict[str, list[int]] = {}
        pieces: dict[int, set[str]] = {}
        shared: dict[str, int] = {}
        for i, needle in needles:
            if not needle:
                self.always.append(i)
                continue
            n = min(GRAM, len(needle))
            pieces[i] = {needle[k : k + n] for k in range(len(needle) - n + 1)}
            for piece in pieces[i]:
                shared[piece] = shared.get(piece, 0) + 1
        for i, found in pieces.items():
            self.filed.setdefault(min(sorted(found), key=shared.__getitem__), []).append(i)
        self.lengths = sorted({len(piece) for piece in self.filed})
        self.empty = not needles

    def candidates(self, *texts: str) -> list[int]:
        """The items that may match one of ``texts``, in their order."""
        if self.few is not None:
            return self.few
        found = set(self.always)
        filed = self.filed
        for text in texts:
            for n in self.lengths:
                for k in range(len(text) - n + 1):
                    hit = filed.get(text[k : k + n])
                    if hit is not None:
                        found.update(hit)
        return sorted(found)


class Names:
    """Globs over file names (one path segment each), filed by what every name a glob matches holds: a
    glob without wildcards under the whole name, the others under their plain text after the last
    wildcard (``*.py``: ``.py``), else before the first (``Dockerfile.*``), else under their needle
    (``Needles``), as git files its excludes (a pattern without wildcards compared whole,
    ``EXC_FLAG_ENDSWITH`` for ``*.ext``) and ripgrep's globset its globs (literal, extension, prefix
    and suffix strategies, a regex for the rest). ``candidates`` finds, with a few dict look-ups, the
    globs a name may match; the caller confirms each with its own matcher. Wildcards are ``*``, ``?``
    and ``[...]`` classes, as in the format catalogue (``fa_lint.sources``) and fnmatch."""

    def __init__(self, globs: Sequence[str]) -> None:
        self.exact: dict[str, list[int]] = {}
        self.tails: dict[int, dict[str, list[int]]] = {}  # by the length of the text after the last wildcard
        self.heads: dict[int, dict[str, list[int]]] = {}
        rest: list[tuple[int, str]] = []
        for i, glob in enumerate(globs):
            head, tail = _plain_ends(glob)
            if head == glob:
                self.exact.setdefault(glob, []).append(i)
            elif tail or head:
                by_length = self.tails if tail else self.heads
                by_length.setdefault(len(tail or head), {}).setdefault(tail or head, []).append(i)
            else:
                rest.append((i, fnmatch_needle(glob)))
        self.rest = Needles(rest) if rest else None

    def candidates(self, name: str) -> list[int]:
        """The globs that may match ``name``, in their order."""
        found = list(self.exact.get(name, ()))
        for n, table in self.tails.items():
            found += table.get(name[-n:], ()) if len(name) >= n else ()
        for n, table in self.heads.items():
            found += table.get(name[:n], ())
        if self.rest is not None:
            found += self.rest.candidates(name)
        return sorted(set(found))


def _plain_ends(glob: str) -> tuple[str, str]:
    """A glob's plain text before its first wildcard and after its last (a class ends at ``]``); the
    whole glob twice when it has none."""
    first = min((k for k in (glob.find(c) for c in "*?[") if k >= 0), default=-1)
    if first < 0:
        return glob, glob
    last = max(glob.rfind(c) for c in "*?]")
    return glob[:first], glob[last + 1 :]


def fnmatch_needle(glob: str) -> str:
    """The longest run of plain characters of an fnmatch glob before its first ``[`` (whose end
    fnmatch finds by rules of its own; a needle need only be text every match holds)."""
    head = glob.split("[", 1)[0]
    return max(head.replace("?", "*").split("*"), key=len)


class Globs:
    """fnmatch globs, as ``fnmatch.fnmatch`` (``case``: ``fnmatchcase``) matches them, indexed."""

    def __init__(self, globs: Sequence[str], case: bool = False) -> None:
        self.globs = list(globs)
        self.case = case
        self._index = Needles((i, fnmatch_needle(self._norm(g))) for i, g in enumerate(self.globs))

    def _norm(self, text: str) -> str:
        return text if self.case else os.path.normcase(text)

    def matching(self, *texts: str) -> list[int]:
        """The numbers of the globs that match one of ``texts``, in order."""
        match = fnmatch.fnmatchcase if self.case else fnmatch.fnmatch
        normed = [self._norm(t) for t in texts]
        return [i for i in self._index.candidates(*normed) if any(match(t, self.globs[i]) for t in texts)]


_COMPILED: dict[tuple[int, bool], tuple[object, Globs]] = {}


def compiled(source: object, globs: Callable[[], Sequence[str]], case: bool = False) -> Globs:
    """``Globs(globs())``, made once per ``source`` (the configuration's list): a walk asks with the
    same list at every path, and it is recognised by identity (kept here, so its id is not reused),
    not by hashing each of its globs again."""
    found = _COMPILED.get((id(source), case))
    if found is None or found[0] is not source:
        if len(_COMPILED) >= 64:
            _COMPILED.clear()
        found = _COMPILED[id(source), case] = (source, Globs(globs(), case))
    return found[1]
