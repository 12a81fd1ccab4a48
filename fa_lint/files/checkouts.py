"""flash-attention checkouts a repository carries itself: a git submodule or a vendored copy.

``cd third_party/flash-attention && python setup.py install`` (or ``pip install ./flash-attention``)
builds whatever that folder holds, and no command of the file says what that is. The repository may:

- a **vendored copy** (or a submodule checked out, as CI with ``submodules: true`` has it) says its
  version where its own ``setup.py`` reads it: the first ``^__version__ = ...`` line of
  ``flash_attn/__init__.py``, a literal (``get_package_version``, from v1.0.9; earlier releases wrote
  ``version="1.0.0"`` in ``setup.py`` itself, read as a fallback);
- a **git submodule** not checked out is a path, a URL and maybe a ``branch`` in ``.gitmodules``; the
  commit it is pinned to is kept by git in the repository's tree, in no file, so its version is one
  fa-lint cannot tell (FAL009). Its URL says whose repository it is (``ROCm/flash-attention``: a fork).

These are read the way includes are: only inside the project root, never inside ``.git``, a file at a
time within the size limit, never run.
"""

from __future__ import annotations

import ast
import os
import posixpath
import re
from collections.abc import Collection, Iterator, MutableMapping

from packaging.version import InvalidVersion, Version

from fa_lint._records import NamedTuple
from fa_lint.files.project import off_limits, project_root
from fa_lint.files.read import read_text
from fa_lint.kb import forks
from fa_lint.model import FLASH_ATTN, SUBDIRECTORIES, FileResult, Location, Requirement, internal_error

_VERSION = re.compile(r"^__version__\s*=\s*(.*)$", re.M)  # flash-attention's setup.py, get_package_version
_SETUP_VERSION = re.compile(r"""^\s*version\s*=\s*(["'][^"'\n]+["'])""", re.M)
# where a file's relative folder is looked for besides its own: scripts and CI steps run from the root
_FROM_ROOT = {"shell", "workflow", "makefile", "tox", "nox"}


class Submodule(NamedTuple):
    path: str  # relative to the repository's top
    url: str
    branch: str | None


def resolve(files: MutableMapping[str, FileResult], roots: Collection[str]) -> None:
    """Fill in each source build of a checkout (``Requirement.checkout``) with what the repository
    holds there, in place."""
    modules: dict[str, list[Submodule]] = {}  # each folder's .gitmodules, read once
    for path, f in list(files.items()):
        if not any(isinstance(r, Requirement) and r.checkout is not None for r in f.records):
            continue
        try:
            records = tuple(
                _resolved(r, path, roots, modules)
                if isinstance(r, Requirement) and r.checkout is not None
                else r
                for r in f.records
            )
        except Exception as exc:  # fa-lint's bug: this file's checkouts stay as written, said as such
            where = Location(path, 1, 1, 1, 1)
            records = (*f.records, internal_error(where, exc, "looking for the checkouts this file builds"))
        files[path] = f._replace(records=records)


def _upward(folder: str, top: str) -> Iterator[str]:
    """``folder`` and the folders above it, up to ``top`` (the project root) and no further."""
    here = os.path.abspath(folder)
    while True:
        yield here
        parent = os.path.dirname(here)
        if os.path.normcase(here) == os.path.normcase(top) or parent == here:
            return
        here = parent


def _resolved(
    req: Requirement, path: str, roots: Collection[str], modules: dict[str, list[Submodule]]
) -> Requirement:
    inside = next((k for k, v in SUBDIRECTORIES.items() if v == req.name), "")
    written = req.checkout or ""
    if not written:
        unseen = f"{req.build}, a folder no file of the repository is known to hold"
        return req._replace(build=unseen)
    top = os.path.abspath(project_root(path))
    # a Dockerfile's paths are its build context's; a script runs from its own folder or one above
    # it (the repository's top, most often), as a CI step does
    bases = (
        list(_upward(os.path.dirname(path) or ".", top))
        if req.source in _FROM_ROOT
        else [os.path.abspath(os.path.dirname(path) or ".")]
    )
    for base in bases:
        folder = os.path.normpath(os.path.join(base, written))
        if off_limits(folder, roots) is not None:
            continue
        shown = f"the folder {os.path.relpath(folder).replace(os.sep, '/')}" + (
            f" ({inside})" if inside else ""
        )
        sub = _submodule(folder, top, roots, modules)
        origin = fork = ""
        if sub is not None:
            origin = f", a git submodule of {sub.url}" + (f" (branch {sub.branch})" if sub.branch else "")
            named = forks.fork(sub.url)
            fork = f"; {named} is a fork of Dao-AILab/flash-attention" if named else ""
        version, said = _vendored(folder, roots) if os.path.isdir(folder) else (None, "")
        if version is not None:
            return req._replace(
                version=version if req.name == FLASH_ATTN else None,
                build=f"{shown}{origin}, whose {said} says {version}{fork}",
            )
        if sub is not None:
            return req._replace(
                build=f"{shown}{origin}, not checked out here: git keeps the commit it is pinned to in "
                f"the repository's tree, not in a file{fork}",
            )
    return req._replace(
        build=f"{req.build}, which the repository does not hold (no vendored copy, no git submodule)"
    )


def _submodule(
    folder: str, top: str, roots: Collection[str], modules: dict[str, list[Submodule]]
) -> Submodule | None:
    """The submodule a ``.gitmodules`` at or above the folder declares there."""
    for here in _upward(os.path.dirname(folder), top):
        if here not in modules:
            modules[here] = list(_gitmodules(os.path.join(here, ".gitmodules"), roots))
        rel = os.path.relpath(folder, here).replace(os.sep, "/")
        found = next((m for m in modules[here] if posixpath.normpath(m.path) == rel), None)
        if found is not None:
            return found
    return None


def _vendored(folder: str, roots: Collection[str]) -> tuple[Version | None, str]:
    """The version a flash-attention folder's own files say, and which file says it."""
    for name, pattern in (("flash_attn/__init__.py", _VERSION), ("setup.py", _SETUP_VERSION)):
        file = os.path.join(folder, *name.split("/"))
        if not os.path.isfile(file) or off_limits(file, roots) is not None:
            continue
        text = read_text(file)
        m = pattern.search(text) if isinstance(text, str) else None
        if m is None:
            continue
        try:
            return Version(str(ast.literal_eval(m.group(1).strip()))), name
        except (ValueError, SyntaxError, InvalidVersion, MemoryError, RecursionError):
            continue
    return None, ""


def _gitmodules(path: str, roots: Collection[str]) -> Iterator[Submodule]:
    """The submodules a ``.gitmodules`` declares.

    By hand: it is git's config syntax, whose indented ``key = value`` lines configparser would read
    as continuations of the line before.
    """
    if not os.path.isfile(path) or off_limits(path, roots) is not None:
        return
    text = read_text(path)
    if not isinstance(text, str):
        return
    current: dict[str, str] | None = None
    sections: list[dict[str, str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = {} if re.match(r'\[\s*submodule\s+"', line, re.I) else None
            if current is not None:
                sections.append(current)
            continue
        key, eq, value = line.partition("=")
        if eq and current is not None:
            current[key.strip().lower()] = value.strip().strip('"')
    for s in sections:
        if s.get("path") and s.get("url"):
            yield Submodule(s["path"], s["url"], s.get("branch") or None)
