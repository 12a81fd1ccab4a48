"""Where fa-lint may read a file for one it checks: inside the project roots, never in ``.git``."""

from __future__ import annotations

import os
import re
from collections.abc import Collection

from fa_lint.files.discover import Target


def off_limits(path: str, roots: Collection[str], folders: dict[str, str] | None = None) -> str | None:
    """Where ``path`` lies when fa-lint must not read it for a file it checks (outside the project
    roots, inside .git), or None: the bound every file read for a checked one keeps to, includes and
    checkouts alike.

    pip reads any path an include names; a pull request could name ``/etc/shadow`` or ``.git/config``
    (where actions/checkout keeps its token) and have the lines fa-lint cannot parse echoed into CI
    logs. So files are read only inside the project root, never in ``.git``, symbolic links resolved.
    ``folders`` keeps each folder resolved, for the next path in it (see ``_realpath``).
    """
    if "\0" in path:  # no file name holds one (realpath raises on it): it names nothing to read
        return None
    real = _realpath(path, folders) if folders is not None else os.path.realpath(path)
    root = next((r for r in roots if _within(real, r)), None)
    if root is None:
        return "outside the project root"
    absolute = os.path.abspath(path)
    if not _MAYBE_GIT.search(absolute) and not _MAYBE_GIT.search(real):  # the common case: no such part
        return None
    named = os.path.relpath(absolute, root).split(os.sep)
    if any(map(is_git, named)) or any(map(is_git, os.path.relpath(real, root).split(os.sep))):
        return "inside .git"
    return None


# A name that a case-insensitive disk (macOS, Windows) or Windows' own rules may open as ".git": any
# case, trailing dots and blanks (Windows drops them), and its 8.3 short name; git refuses all of these
# as path names in a tree for that reason (core.protectHFS, core.protectNTFS).
_MAYBE_GIT = re.compile(r"\.git|git~1", re.I)


def is_git(name: str) -> bool:
    """Whether a disk may open a path part of this name as ``.git``."""
    folded = name.casefold()
    return folded.rstrip(". ") == ".git" or folded == "git~1"


def _within(real: str, root: str) -> bool:
    """Whether a resolved path is ``root`` or below it; the plain prefix test first, as it mostly is."""
    return real.startswith(root.rstrip(os.sep) + os.sep) or os.path.commonpath([real, root]) == root


def _realpath(path: str, folders: dict[str, str]) -> str:
    """``os.path.realpath(path)``, its folder resolved once for every path in it: realpath looks at
    each component of a path in turn (a system call each), and a project's includes name files in
    the same few folders. Only the file itself is then looked at, in case it is a link."""
    folder, name = os.path.split(path)
    if name in ("", ".", "..") or os.path.islink(path):
        return os.path.realpath(path)
    if folder not in folders:
        folders[folder] = os.path.realpath(folder)
    return os.path.join(folders[folder], name)


def walked_link_off_limits(t: Target, roots: Collection[str]) -> str | None:
    """Where a file found by walking a folder lies, when it is a symbolic link out of ``roots``: a
    walk never leaves the folder it was given but through one."""
    return off_limits(t.path, roots) if not t.explicit and os.path.islink(t.path) else None
