"""Which files to check, and which format each one is, from one catalogue of name patterns."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from fa_lint.sources import SOURCES

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", ".env", "env", "node_modules",
    "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", "build", "dist", ".eggs",
    "site-packages", "__pypackages__",
})


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    source: str  # a key of SOURCES
    explicit: bool  # named on the command line (or by pre-commit), not found by walking


def _match(pattern: str, parts: tuple[str, ...]) -> bool:
    pat = PurePosixPath(pattern).parts
    if len(pat) > len(parts):
        return False
    return all(fnmatch.fnmatchcase(p, q) for p, q in zip(parts[-len(pat):], pat, strict=True))


def detect(path: str) -> str | None:
    """The format a file's name says it is, or None when the catalogue does not know the name."""
    parts = PurePosixPath(path.replace(os.sep, "/")).parts
    for name, source in SOURCES.items():
        if any(_match(p, parts) for p in source.PATTERNS):
            return name
    return None


def _fallback(path: str) -> str:
    """A format for a file named explicitly whose name the catalogue does not know."""
    base = os.path.basename(path).lower()
    ext = os.path.splitext(base)[1]
    guesses = {".toml": "pyproject"}
    guess = guesses.get(ext)
    return guess if guess in SOURCES else "requirements"


def pattern_regex() -> str:
    """One regular expression, for pre-commit's ``files``, that matches what ``detect`` knows."""
    alts = []
    for source in SOURCES.values():
        for pattern in source.PATTERNS:
            pieces = [fnmatch.translate(p).removeprefix("(?s:").removesuffix(")\\Z") for p in pattern.split("/")]
            alts.append("/".join(pieces))
    return r"(^|/)(" + "|".join(alts) + r")$"


def is_skipped_dir(entry: os.DirEntry[str]) -> bool:
    name = entry.name
    if name in SKIP_DIRS or name.endswith(".egg-info"):
        return True
    return os.path.exists(os.path.join(entry.path, "pyvenv.cfg"))


def _walk(root: str, exclude: tuple[str, ...]) -> Iterator[Target]:
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        rel = os.path.normpath(entry.path)
        if any(fnmatch.fnmatch(rel, x) or fnmatch.fnmatch(entry.name, x) for x in exclude):
            continue
        if entry.is_dir(follow_symlinks=False):
            if not is_skipped_dir(entry):
                yield from _walk(entry.path, exclude)
        elif entry.is_file():
            fmt = detect(rel)
            if fmt is not None:
                yield Target(rel, fmt, explicit=False)


def discover(paths: Iterable[str], exclude: tuple[str, ...] = ()) -> Iterator[Target]:
    """Files as given are always checked; folders are walked for the names the catalogue knows."""
    seen: set[str] = set()
    for path in paths:
        if os.path.isdir(path):
            found: Iterable[Target] = _walk(path, exclude)
        else:
            found = [Target(path, detect(path) or _fallback(path), explicit=True)]
        for target in found:
            key = os.path.normcase(os.path.abspath(target.path))
            if key not in seen:
                seen.add(key)
                yield target

