"""``--new-from-rev REV``: only the findings a change brings, as golangci-lint's option of that name.

A finding is new when REV had no finding with its fingerprint (``report._common.fingerprint``: no line
numbers, so a finding that merely moved is not new), or fewer of them; and every finding on a line the
change touched (``git diff -U0 REV``) is shown, since those are the lines a reviewer looks at.

REV's dependency files come from git itself (``git ls-tree`` and ``git cat-file --batch``, never the
network), written to a temporary folder and checked there with the same settings; ``git archive``
would drop what ``.gitattributes`` marks ``export-ignore``. Every file there is one git tracks, so no
``.gitignore`` leaves one out (git's rule, as in the working tree).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import posixpath
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from fa_lint._compat import chdir
from fa_lint._records import NamedTuple
from fa_lint.engine import Report
from fa_lint.files import git
from fa_lint.files.discover import candidate, detect
from fa_lint.files.project import Names, is_git
from fa_lint.files.read import MAX_BYTES
from fa_lint.model import INTERNAL, Finding, Location
from fa_lint.report._common import fingerprint


class RevisionError(Exception):
    """Not in a git repository, git missing, or a revision git does not know: a usage error."""


@dataclass(frozen=True)
class Filtered:
    report: Report
    hidden: int  # findings REV already had, on lines the change left alone


def _git(args: Sequence[str], cwd: str, data: bytes | None = None) -> bytes:
    try:
        return git.run(args, cwd, data)
    except git.GitError as exc:
        if git.executable() is None:
            raise RevisionError(f"--new-from-rev needs git: {exc}") from None
        raise RevisionError(str(exc)) from None


def toplevel(cwd: str = ".") -> str:
    """The repository's top folder (real path); a clear error outside any repository."""
    try:
        out = _git(["rev-parse", "--show-toplevel"], cwd)
    except RevisionError as exc:
        if "needs git" in str(exc):
            raise
        raise RevisionError(
            f"--new-from-rev: {os.path.abspath(cwd)} is not inside a git repository"
        ) from None
    return os.path.realpath(os.fsdecode(out.rstrip(b"\n")))


def commit(rev: str, top: str) -> str:
    """The commit REV names; a clear error when git knows no such revision."""
    if not rev or rev.startswith("-"):  # never an option to git
        raise RevisionError(f"--new-from-rev: {rev!r} is not a revision")
    try:
        out = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], top)
    except RevisionError:
        raise RevisionError(f"--new-from-rev: unknown revision {rev!r} (fetched?)") from None
    return out.decode().strip()


class _Entry(NamedTuple):
    path: str  # relative to the top, as git names it
    mode: bytes
    blob: bytes
    size: int


def _tree(sha: str, top: str) -> list[_Entry]:
    out = []
    for entry in filter(None, _git(["ls-tree", "-r", "-z", "-l", "--full-tree", sha], top).split(b"\0")):
        meta, raw = entry.split(b"\t", 1)
        mode, kind, blob, size = meta.split()
        if kind == b"blob":  # a submodule's files are not in this repository
            out.append(_Entry(os.fsdecode(raw), mode, blob, int(size) if size != b"-" else 0))
    return out


def _materialise(sha: str, top: str, into: str, named: Collection[str] = ()) -> None:
    """Write the files of ``sha``'s tree that a check can read under ``into``: every file the
    catalogue names (and the ``*.in`` it may sniff), the paths ``named`` (relative to the top), every
    file whose name one of those mentions (what an include may reach, ``project.Names``), and what
    a link among them points at, until no more are wanted. The rest of the tree (data, images,
    models) is never read: memory and disk follow the dependency files, not the repository.

    Blobs come one at a time from one ``git cat-file --batch``. A file larger than fa-lint reads
    becomes a sparse file of its size: the check reports it as too large at REV just as it does now,
    and its bytes never need reading.
    """
    entries = _tree(sha, top)
    links = {e.path for e in entries if e.mode == b"120000"}
    entries = [e for e in entries if _writable(e.path, links)]
    by_name: dict[bytes, list[_Entry]] = {}
    for e in entries:
        by_name.setdefault(os.fsencode(posixpath.basename(e.path)), []).append(e)
    names = Names(set(by_name))
    wanted = [e for e in entries if e.path in named or detect(e.path) or candidate(e.path)]
    done: set[str] = set()
    with git.Batch(top) as batch:
        while wanted:
            e = wanted.pop()
            if e.path in done:
                continue
            done.add(e.path)
            path = os.path.join(into, *e.path.split("/"))
            try:
                wanted += _write(e, path, into, batch, by_name, names)
            except OSError:  # a name the tree holds twice (a file and a folder, a file and a link)
                continue
    os.mkdir(os.path.join(into, ".git"))  # where .gitignore lookups stop, as in the real repository


def _write(
    e: _Entry, path: str, into: str, batch: git.Batch, by_name: dict[bytes, list[_Entry]], names: Names
) -> list[_Entry]:
    """Write one entry at ``path``; the entries it makes wanted (what it names, where a link points)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not _inside(os.path.dirname(path), into):
        return []  # (cannot happen once _writable has passed the path: the last guard)
    if e.mode != b"120000" and e.size > MAX_BYTES:
        with _create(path) as f:
            f.truncate(e.size)
        return []
    body = batch.get(e.blob)
    if body is None:
        return []
    if e.mode == b"120000":  # the link is made as it is, and what it names is wanted too
        target = posixpath.normpath(posixpath.join(posixpath.dirname(e.path), os.fsdecode(body)))
        with contextlib.suppress(OSError):
            os.symlink(os.fsdecode(body), path)
        return [x for x in by_name.get(os.fsencode(posixpath.basename(target)), ()) if x.path == target]
    with _create(path) as f:
        f.write(body)
    return [x for name in names.mentioned(body) for x in by_name[name]]


def _writable(path: str, links: Collection[str]) -> bool:
    """Whether a path of REV's tree names a place inside the folder it is written to. A tree object
    may hold any name but "/" and NUL (git fsck only warns of "..", and clone and fetch take it), and
    ``ls-tree`` lists it as it is: "../x" joined onto the folder would leave it. Left out: an empty,
    ".", ".." or absolute part, any spelling of ".git" (``project.is_git``: the marker made below, and
    what git itself refuses to check out), and a path below a link of the same tree (written, the link
    would take the file wherever it points)."""
    parts = path.split("/")
    if any(p in ("", ".", "..") or is_git(p) for p in parts):
        return False
    return not any("/".join(parts[:n]) in links for n in range(1, len(parts)))


def _inside(folder: str, into: str) -> bool:
    real, top = os.path.realpath(folder), os.path.realpath(into)
    return real == top or real.startswith(top + os.sep)


def _create(path: str) -> BinaryIO:
    """A new file, never an existing one and never through a link (O_EXCL with O_CREAT refuses both)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    return os.fdopen(os.open(path, flags, 0o600), "wb")


# The diff is read by hand, not with unidiff (PyPI): what is wanted is the added lines' numbers from the
# hunk headers of a -U0 diff, a few lines, and unidiff 1.0.1 would get the names wrong here: it decodes
# the diff as UTF-8 (a file name that is no UTF-8 fails the parse) and keeps git's C-quoted names quoted,
# octal escapes and all (unidiff/patch.py:375-383), where _unquote gives the file's real bytes.
_HUNK = re.compile(rb"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _unquote(path: bytes) -> bytes:
    """git's C-style quoting of unusual file names ("a\\tb", octal UTF-8 bytes)."""
    if path.startswith(b'"') and path.endswith(b'"'):
        return codecs.escape_decode(path[1:-1])[0]
    return path


# Prefixes spelled out: diff.noprefix and diff.mnemonicPrefix in a user's config would change them.
# --no-textconv: a textconv driver of the user's config, which the checkout's .gitattributes may pick
# for any file, would run on each (and, failing, end the run). --ignore-submodules=all: a submodule's
# files are not REV's (``_tree``), and diff.submodule=diff would start a git in each submodule, whose
# own configuration names filters git.filters_off never saw.
_DIFF = (
    "diff",
    "-U0",
    "--ignore-submodules=all",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-renames",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


def touched(rev: str, top: str) -> dict[str, set[int]]:
    """The lines of each file the working tree changed since ``rev``, by real path."""
    diff = _git([*_DIFF, "--end-of-options", rev, "--"], top)
    out: dict[str, set[int]] = {}
    lines: set[int] | None = None
    left = 0  # lines of the current hunk still to skip: an added line may itself start with "+++ "
    for line in diff.split(b"\n"):
        if left:
            left -= not line.startswith(b"\\")  # "\ No newline at end of file" is no line of the hunk
            continue
        if line.startswith(b"diff --git "):
            lines = None
        elif line.startswith(b"+++ b/") or line.startswith(b'+++ "b/'):
            name = _unquote(line[4:].rstrip(b"\t"))[2:]
            lines = out.setdefault(os.path.realpath(os.path.join(top, os.fsdecode(name))), set())
        elif lines is not None and (m := _HUNK.match(line)):
            old, start, new = (int(g) if g is not None else 1 for g in m.groups())
            lines.update(range(start, start + new))
            left = old + new
    return out


def _on(loc: Location, changed: dict[str, set[int]]) -> bool:
    lines = changed.get(os.path.realpath(loc.path), set())
    return any(n in lines for n in range(loc.line, max(loc.end_line, loc.line) + 1))


Relocate = Callable[[str], str]


@dataclass(frozen=True)
class Baseline:
    """What REV had: how many findings of each fingerprint, and the lines the change touched since."""

    known: Counter[str]
    changed: dict[str, set[int]]

    def narrow(self, report: Report) -> Filtered:
        """The findings on (or naming, as a related location) a changed line, and the new ones.

        Findings alike in all but their line share a fingerprint: when a change adds one more, those on
        the lines it touched count as the new ones, and only a shortfall is made up from the last of the
        others (a copy added elsewhere, e.g. by a file-wide edit). fa-lint's own bugs (FAL902) are
        always kept: what they cost went unchecked in this run, whatever REV had.
        """
        groups: dict[str, list[int]] = {}
        for i, f in enumerate(report.findings):
            groups.setdefault(fingerprint(f), []).append(i)
        keep: set[int] = set()
        for fp, members in groups.items():
            on = [
                i for i in members if self._touches(report.findings[i]) or report.findings[i].code == INTERNAL
            ]
            rest = [i for i in members if i not in on]
            extra = len(members) - self.known[fp] - len(on)
            keep.update(on, rest[len(rest) - extra :] if extra > 0 else ())
        kept = tuple(f for i, f in enumerate(report.findings) if i in keep)
        return Filtered(report._replace(findings=kept), len(report.findings) - len(kept))

    def _touches(self, f: Finding) -> bool:
        return any(_on(loc, self.changed) for loc in (f.location, *f.related))


def against(rev: str, paths: Sequence[str], check: Callable[[list[str], Relocate], Report]) -> Baseline:
    """REV's findings, checked as the current run checks ``paths``, and the lines changed since.

    ``check(paths, relocate)`` runs the current check in REV's tree, which is the current folder while
    it runs; ``relocate`` maps an absolute path inside the repository (a config's folder) into that tree.
    """
    top = toplevel()
    sha = commit(rev, top)
    changed = touched(sha, top)
    here = os.path.relpath(os.path.realpath(os.getcwd()), top)
    named = set()  # the files named, relative to the top: checked whatever their name
    for p in paths:
        real = os.path.realpath(p)
        if not os.path.isdir(real) and real.startswith(top + os.sep):
            named.add(os.path.relpath(real, top).replace(os.sep, "/"))
    with tempfile.TemporaryDirectory(prefix="fa-lint-rev-") as tmp:
        _materialise(sha, top, tmp, named)

        def relocate(path: str) -> str:
            real = os.path.realpath(path)
            if os.path.isabs(path) and (real == top or real.startswith(top + os.sep)):
                return os.path.join(tmp, os.path.relpath(real, top))
            return path

        cwd = os.path.join(tmp, here)
        known: Counter[str] = Counter()
        if os.path.isdir(cwd):  # else the folder is new since REV, and so is every finding in it
            with chdir(cwd):
                existing = [p for p in map(relocate, paths) if os.path.lexists(p)]
                if existing:
                    known = Counter(map(fingerprint, check(existing, relocate).findings))
    return Baseline(known, changed)
