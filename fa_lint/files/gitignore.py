"""What git leaves out of a walk: the ``.gitignore`` files, and git's index, which overrides them.

Git's rule is that ``.gitignore`` speaks only for untracked files: a file in the index (``git add -f``)
is the repository's whatever a pattern says. So in a git work tree the index is asked first
(``git ls-files``, once per repository, run by ``fa_lint.files.git`` with nothing the repository configures
able to run), and only untracked paths are matched against patterns; outside one, or without git, the
patterns alone decide.

The patterns are matched by fa-lint's own matcher (``fa_lint.files.globs``), not by pathspec: pathspec
turns each ``*`` into a backtracking regular expression group, and a 14-character line
(``*a*a*a*a*a*a*b``) then takes minutes on one long file name. A glob with at most one unbounded
wildcard (or one per folder level, none of ``**``) still becomes a regular expression, which cannot
backtrack past a linear cost; any other runs on a small automaton, step by step, a constant number of
states per character (git's own wildmatch is not exponential either). The syntax is git's
(``dir.c``, ``wildmatch.c``): ``!``, trailing ``/``, leading or inner ``/``, ``*``, ``?``, ``[...]``
with ``!``/``^``, ranges and ``[:class:]``, ``**/``, ``/**``, ``\\``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from fa_lint._records import NamedTuple
from fa_lint.files import git
from fa_lint.files.globs import Pattern, compile_line
from fa_lint.files.needles import Needles

MAX_PATTERNS = 10_000  # patterns read from one .gitignore file; a longer one is not hand-written
_INDEX_TIMEOUT_S = 60


class Rules:
    """One .gitignore file: its patterns in order; the last that matches a path decides."""

    def __init__(self, text: str) -> None:
        self.patterns: list[Pattern] = []
        for line in text.split("\n"):
            if len(self.patterns) >= MAX_PATTERNS:
                break
            pattern = compile_line(line)
            if pattern is not None:
                self.patterns.append(pattern)
        # patterns with no wildcard (most lines), by the name or path they are: looked up, not scanned
        self.names: dict[str, list[int]] = {}
        self.paths: dict[str, list[int]] = {}
        for i, p in enumerate(self.patterns):
            if p.literal is not None:
                (self.names if p.basename else self.paths).setdefault(p.literal, []).append(i)
        # the others by a piece of the text they need (a name's, or a path's): see fa_lint.files.needles
        globs = [(i, p) for i, p in enumerate(self.patterns) if p.match is not None]
        by_name = Needles((i, p.needle) for i, p in globs if p.basename)
        by_path = Needles((i, p.needle) for i, p in globs if not p.basename)
        # only the kinds this file has: most have no path patterns, and a lookup less a path counts
        # each with whether it is asked with the name (True) or the path
        self.literal = [(table, by) for table, by in ((self.names, True), (self.paths, False)) if table]
        self.globs = [(grams, by) for grams, by in ((by_name, True), (by_path, False)) if not grams.empty]

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a ``!`` line, None: no pattern speaks of it."""
        name = rel.rsplit("/", 1)[-1]
        best = -1
        patterns = self.patterns
        for literal, by_name in self.literal:
            for i in reversed(literal.get(name if by_name else rel, ())):
                if i > best and patterns[i].matches(rel, name, is_dir):
                    best = i
                    break
        for grams, by_name in self.globs:
            for i in reversed(grams.candidates(name if by_name else rel)):  # the last that matches decides
                if i <= best:
                    break
                if patterns[i].matches(rel, name, is_dir):
                    best = i
                    break
        return None if best < 0 else not self.patterns[best].negated


class _Index(NamedTuple):
    """The paths git tracks in one repository, relative to its top, and every folder that holds one."""

    files: frozenset[str]
    folders: frozenset[str]

    def holds(self, rel: str, is_dir: bool) -> bool:
        return rel in self.files or (is_dir and rel in self.folders)


def _index(top: str) -> _Index | None:
    """What git's index tracks under ``top``; None when git cannot say (not installed, not a repository
    git reads, a folder git does not trust): the patterns then decide alone."""
    try:
        out = git.run(["ls-files", "-z", "--cached"], top, isolated=True, timeout=_INDEX_TIMEOUT_S)
    except git.GitError:
        return None
    files = frozenset(os.fsdecode(p) for p in out.split(b"\0") if p)
    folders = {f.rsplit("/", 1)[0] for f in files if "/" in f}
    for start in list(folders):  # and every folder above those, each climbed to once
        folder = start
        while "/" in folder:
            folder = folder.rsplit("/", 1)[0]
            if folder in folders:
                break
            folders.add(folder)
    return _Index(files, frozenset(folders))


class GitIgnore:
    """What the repository's ``.gitignore`` files leave out, as git reads them.

    Each folder's file speaks for the paths below it, and the deepest one with a matching pattern
    decides (its ``!pattern`` included); a path in a folder that is left out is left out. The files are
    read up to the repository's top (the folder holding ``.git``), or up to the filesystem's root
    outside any repository, each folder once. A file git tracks is never left out, nor a folder that
    holds one. ``.git/info/exclude`` and the global excludes file are not read.
    """

    def __init__(self, use_index: bool = True) -> None:
        self.use_index = use_index
        self._folders: dict[str, tuple[Rules | None, bool]] = {}
        self._chains: dict[str, tuple[tuple[str, Rules], ...]] = {}
        self._left_out: dict[str, bool] = {}  # folder -> a pattern leaves it (or one above it) out
        self._tops: dict[str, str | None] = {}  # folder -> the repository top above it
        self._indexes: dict[str, _Index | None] = {}

    def _folder(self, folder: str) -> tuple[Rules | None, bool]:
        """The folder's .gitignore, and whether it is a repository's top."""
        found = self._folders.get(folder)
        if found is None:
            try:
                # O_NOFOLLOW: a .gitignore that is a symbolic link is not read, as git (2.32 and later)
                # does not read one: a committed link must not bring patterns from outside the checkout
                fd = os.open(os.path.join(folder, ".gitignore"), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
                with open(fd, encoding="utf-8", errors="replace") as f:
                    rules: Rules | None = Rules(f.read())
            except OSError:  # none there (or a folder, a loop, a link)
                rules = None
            found = self._folders[folder] = (rules, os.path.exists(os.path.join(folder, ".git")))
        return found

    def _up(self, folder: str) -> Iterator[str]:
        """``folder`` and the folders above it, up to its repository's top or the filesystem's root."""
        while True:
            yield folder
            parent = os.path.dirname(folder)
            if self._folder(folder)[1] or parent == folder:
                return
            folder = parent

    def _chain(self, folder: str) -> tuple[tuple[str, Rules], ...]:
        """The .gitignore files that speak for the paths in ``folder``, deepest first. Built from the
        top down, with a loop: a committed tree may be thousands of folders deep."""
        found = self._chains.get(folder)
        if found is not None:
            return found
        pending = []
        for f in self._up(folder):
            if f in self._chains:
                break
            pending.append(f)
        chain = self._chains.get(f, ()) if f not in pending else ()
        for f in reversed(pending):
            rules, _ = self._folder(f)
            chain = ((f, rules), *chain) if rules is not None else chain
            self._chains[f] = chain
        return self._chains[folder]

    def speaks_for(self, folder: str) -> bool:
        """Whether some ``.gitignore`` speaks for the paths in ``folder``: a walk asks once per folder,
        not once per file, when none does (most trees have a .gitignore at the top, or none)."""
        return bool(self._chain(os.path.abspath(folder)))

    def _top(self, folder: str) -> str | None:
        if folder not in self._tops:
            walked = []
            top = None
            for f in self._up(folder):
                if f in self._tops:
                    top = self._tops[f]
                    break
                walked.append(f)
                if self._folder(f)[1]:
                    top = f
                    break
            for f in walked:
                self._tops[f] = top
        return self._tops[folder]

    def _tracked(self, target: str, is_dir: bool) -> bool:
        top = self._top(os.path.dirname(target)) if self.use_index else None
        if top is None:
            return False
        if top not in self._indexes:
            self._indexes[top] = _index(top)
        index = self._indexes[top]
        return index is not None and index.holds(os.path.relpath(target, top).replace(os.sep, "/"), is_dir)

    def _matches(self, target: str, is_dir: bool) -> bool:
        for folder, rules in self._chain(os.path.dirname(target)):
            verdict = rules.verdict(os.path.relpath(target, folder).replace(os.sep, "/"), is_dir)
            if verdict is not None:
                return verdict
        return False

    def _folder_left_out(self, folder: str) -> bool:
        """Whether a pattern leaves ``folder`` out, or a folder above it (git never looks inside)."""
        found = self._left_out.get(folder)
        if found is not None:
            return found
        pending = []
        for f in self._up(folder):
            if f in self._left_out:
                break
            pending.append(f)
        above = self._left_out.get(f, False) if f not in pending else False
        for f in reversed(pending):
            top = self._folder(f)[1] or os.path.dirname(f) == f
            above = above or (not top and self._matches(f, True))
            self._left_out[f] = above
        return self._left_out[folder]

    def __call__(self, path: str, is_dir: bool = False) -> bool:
        target = os.path.abspath(path)
        if not self._chain(os.path.dirname(target)):
            return False
        if self._tracked(target, is_dir):  # git's rule, asked first: a checkout's files are all tracked
            return False
        return self._folder_left_out(os.path.dirname(target)) or self._matches(target, is_dir)
