"""Which files to check, and which format each one is, from one catalogue of name patterns."""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator

from fa_lint._records import NamedTuple
from fa_lint.code import prefilter
from fa_lint.files import shebang
from fa_lint.files.gitignore import GitIgnore
from fa_lint.files.needles import Names, compiled
from fa_lint.sources import SNIFFED, SOURCES

__all__ = ["Found", "GitIgnore", "Target", "classify", "detect", "discover", "find", "search", "walk"]

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        ".env",
        "env",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        "build",
        "dist",
        ".eggs",
        "site-packages",
        "__pypackages__",
    }
)


class Target(NamedTuple):
    path: str
    source: str  # a key of SOURCES
    explicit: bool  # named on the command line (or by pre-commit), not found by walking


def _posix(path: str) -> str:
    return path.replace(os.sep, "/")


@functools.cache
def _regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(^|/)(" + "|".join(_glob_regex(p) for p in patterns) + r")$")


@functools.cache
def _tails(patterns: tuple[str, ...]) -> tuple[str, ...]:
    """What a path must end with for a glob to match it: the glob's text after its last wildcard."""
    return tuple(re.split(r"[*?\]]", p)[-1] for p in patterns)


@functools.cache
def _suffixes(patterns: tuple[str, ...]) -> tuple[str, ...] | None:
    """The suffixes that decide every pattern, when each is ``*`` and a plain suffix (``*.py``,
    ``*.sh``): then a path matches exactly when it ends with one (its tail), and no regex is needed."""
    plain = [p[1:] for p in patterns if p.startswith("*") and not any(c in p[1:] for c in "*?[/")]
    return tuple(plain) if len(plain) == len(patterns) else None


def _matches(patterns: tuple[str, ...], posix: str) -> bool:
    # The tails first: most (format, path) pairs differ there, and need no regex compiled or run.
    if not posix.endswith(_tails(patterns)):
        return False
    if _suffixes(patterns) is not None:  # the path ends with a suffix, which holds no "/": a match
        return True
    return _regex(patterns).search(posix) is not None


@functools.cache
def _names(sniffed: bool) -> tuple[Names, tuple[str, ...], tuple[str, ...]]:
    """The last segment of every pattern of the catalogue (``sniffed``: of every candidate name),
    indexed (``fa_lint.files.needles.Names``), with the format each belongs to."""
    owners, segments = [], []
    for name, source in (SNIFFED if sniffed else SOURCES).items():
        for pattern in source.candidates if sniffed else source.patterns:
            owners.append(name)
            segments.append(pattern.rsplit("/", 1)[-1])
    return Names(segments), tuple(owners), tuple(segments)


@functools.cache
def _segment(glob: str) -> Callable[[str], bool]:
    """Whether a file name matches one segment of a pattern: a plain name, suffix or prefix compared
    as text, anything else by its regex (compiled only for such a segment, on first use)."""
    wild = [i for i, c in enumerate(glob) if c in "*?["]
    if not wild:
        return glob.__eq__
    if wild == [0] and glob[0] == "*":
        return lambda name: name.endswith(glob[1:])
    if wild == [len(glob) - 1] and glob[-1] == "*":
        return lambda name: name.startswith(glob[:-1])
    pattern = re.compile(_glob_regex(glob))
    return lambda name: pattern.fullmatch(name) is not None


@functools.lru_cache(maxsize=8192)
def _could_be(base: str, sniffed: bool) -> tuple[str, ...]:
    """The formats whose patterns (``sniffed``: candidate names) can match a file called ``base``: a
    pattern's last segment must match the name itself. Only the segments the index files under the
    name, its suffixes or its prefixes are tried (a few dict look-ups a name, however long the
    catalogue), and once per distinct file name: a repository repeats its names (``__init__.py``)."""
    index, owners, segments = _names(sniffed)
    tried = (i for i in index.candidates(base) if _segment(segments[i])(base))
    return tuple(dict.fromkeys(owners[i] for i in tried))


def detect(path: str) -> str | None:
    """The format a file's name says it is, or None when the catalogue does not know the name."""
    posix = _posix(path)
    for name in _could_be(posix.rsplit("/", 1)[-1], False):
        if _matches(SOURCES[name].patterns, posix):
            return name
    return None


def candidate(path: str) -> str | None:
    """The format a file may be, by a name that needs a look at its head to be sure (``*.in``)."""
    posix = _posix(path)
    for name in _could_be(posix.rsplit("/", 1)[-1], True):
        if _matches(SNIFFED[name].candidates, posix):
            return name
    return None


SNIFF_BYTES = 8192


PYTHON_APP = "python-app"  # the format a *.py may be: its sniff reads the whole file (_sniff_python)
# Python files larger than this are never searched whole for the code layer's words (a generated
# module, a vendored bundle): fa-lint would not read them (fa_lint.files.read.MAX_BYTES) anyway.
CODE_BYTES = 16 * 1024 * 1024


_CHUNK = 1 << 16
_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def _read_bytes(path: str) -> bytes | None:
    """A file's bytes, up to CODE_BYTES + 1, or None when it cannot be read.

    With the os calls, no file object: the Python files of a repository are read here by the thousand,
    and io.open's object and buffer cost as much as reading a small file. A first read of 64 KiB
    holds nearly every source file (no fstat to size it); a larger one is read on to the limit.
    O_NONBLOCK: a FIFO named like a Python file must not stop the run (a regular file ignores it).
    """
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return None
    try:
        data = os.read(fd, _CHUNK)
        if len(data) == _CHUNK:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return data[:SNIFF_BYTES]  # a device: its head only
            chunks = [data]
            size = len(data)
            while size <= CODE_BYTES and (more := os.read(fd, min(CODE_BYTES + 1 - size, 1 << 20))):
                chunks.append(more)
                size += len(more)
            data = b"".join(chunks)
        return data
    except OSError:  # a folder, a FIFO with no writer (EAGAIN), an I/O error
        return None
    finally:
        os.close(fd)


@functools.cache
def _python_app() -> tuple[int, tuple[bytes, ...], re.Pattern[bytes], Callable[[bytes], bool]]:
    """What the app formats' sniff looks for, loaded with the first Python file (a run with none never
    loads the module): an app framework's import, or an install command of flash-attn it runs."""
    from fa_lint.sources import python_app

    return python_app.HEAD, python_app.FRAMEWORKS, python_app.IMPORTS_BYTES, python_app.installs


def _sniff_python(path: str) -> bool:
    """Whether a ``*.py`` is worth parsing: its head imports an app framework (``python-app``), or its
    bytes hold a word one of the code layer's uses needs (``fa_lint.code.prefilter``). Read once, as
    bytes, never decoded here: most of a repository's files are Python, and most say nothing."""
    data = _read_bytes(path)
    if data is None:
        return False
    head_size, frameworks, imports, installs = _python_app()
    head = data[:head_size]
    # the app frameworks' names first, as plain substrings: the import pattern runs only where one is
    for name in frameworks:
        if name in head:
            if imports.search(head):
                return True
            break
    return len(data) <= CODE_BYTES and (prefilter.wanted(data) or installs(data))


def _sniff(path: str, fmt: str, heads: dict[str, str]) -> bool:
    """Whether the head of a candidate file shows it is the format its name suggests. An exception in
    a sniff is fa-lint's bug, not the file's: the file is read, and its reader says what it can."""
    try:
        return _sniffed(path, fmt, heads)
    except Exception:
        return True


def _sniffed(path: str, fmt: str, heads: dict[str, str]) -> bool:
    """``heads``: the head once read, for another format's look (a YAML file no other format claims
    is looked at again as a training config)."""
    if fmt == PYTHON_APP:
        return _sniff_python(path)
    head = heads.get(path)
    if head is None:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                head = heads[path] = f.read(SNIFF_BYTES)
        except OSError:
            return False
    return SNIFFED[fmt].sniff(head, complete=len(head) < SNIFF_BYTES)


# A YAML file that no other format's head claims may still be a training config (fa_lint.code).
_LAST_LOOK = "training-config"


def classify(path: str) -> str | None:
    """The format of a file found by walking: its name, or its name and head; None for the rest."""
    fmt = detect(path)
    if fmt is None:
        fmt = candidate(path)
        if fmt == PYTHON_APP:  # a *.py: no training config, no script without an extension
            return fmt if _sniff(path, fmt, {}) else None
        heads: dict[str, str] = {}
        if fmt is not None and not _sniff(path, fmt, heads):
            last = SNIFFED[_LAST_LOOK]
            looks = _matches(last.candidates, _posix(path)) and _sniff(path, _LAST_LOOK, heads)
            fmt = _LAST_LOOK if looks else None
    if fmt is None and shebang.admitted(path):
        fmt = shebang.script_format(path) or None  # a script with no extension: its first line says
    return fmt


_BY_NAME = (
    # (file-name glob, lower-cased, then format) for files named explicitly, after the catalogue
    ("*.lock", "lock"),
    ("*.toml", "pyproject"),
    ("*dockerfile*", "dockerfile"),
    ("*containerfile*", "dockerfile"),
    ("makefile*", "makefile"),
    ("*.mk", "makefile"),
    ("gnumakefile", "makefile"),
    ("*.yml", "conda"),
    ("*.yaml", "conda"),
    ("*.py", "setup.py"),
    ("*.cfg", "setup.cfg"),
    ("*.zsh", "shell"),
)


def _fallback(path: str) -> str | None:
    """A format for a file named explicitly whose name the catalogue does not know.

    Every file pre-commit or a user names is checked; its first line, its extension, then its text,
    decide how: a shell shebang makes a shell script (``train`` or ``job.txt`` with ``#!/bin/bash``);
    a name that says its format comes next; anything else is read as a pip requirements file, the most
    common unnamed format, unless a shebang says it is another interpreter's script (None: not ours).
    """
    script = shebang.script_format(path)
    if script:
        return script
    base = os.path.basename(path).lower()
    for pattern, fmt in _BY_NAME:
        if fnmatch.fnmatchcase(base, pattern):
            return _sniff_lock(path) if fmt == "lock" else fmt
    return "requirements" if script is None else None


def _sniff_lock(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return "requirements"
    if "@generated by poetry" in head.lower() or "[metadata.files]" in head:
        return "poetry.lock"
    if "[metadata]" in head and "pdm" in head.lower():
        return "pdm.lock"
    if head.lstrip().startswith("{"):
        return "pipfile.lock"
    return "uv.lock"


def _glob_regex(glob: str) -> str:
    # fnmatch.translate's output differs between Python versions and lets "*" cross "/".
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):  # any number of folders, none included
            out.append("(?:[^/]+/)*")
            i += 3
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = glob.index("]", i + 1)
            out.append(glob[i : j + 1])
            i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def pattern_regex() -> str:
    """One regular expression, for pre-commit's ``files``, that matches what ``detect`` knows and
    every ``candidate`` (fa-lint looks at the head of those it is handed, as it does when walking)."""
    patterns = [p for source in SOURCES.values() for p in source.patterns]
    patterns += [p for source in SNIFFED.values() for p in source.candidates]
    return _regex(tuple(dict.fromkeys(patterns))).pattern  # each once (*.yaml: two formats' candidate)


def is_skipped_dir(entry: os.DirEntry[str]) -> bool:
    name = entry.name
    if name in SKIP_DIRS or name.endswith(".egg-info"):
        return True
    return os.path.exists(os.path.join(entry.path, "pyvenv.cfg"))


def excluded(path: str, exclude: tuple[str, ...]) -> bool:
    """Whether an --exclude glob matches the path (as given, normalised) or its bare name."""
    if not exclude:
        return False
    rel, name = os.path.normpath(path), os.path.basename(os.path.normpath(path))
    return bool(compiled(exclude, lambda: exclude).matching(rel, name))  # indexed: fa_lint.files.needles


def _entries(folder: str) -> list[os.DirEntry[str]]:
    """A folder's entries by name; none when it cannot be listed (no permission, gone, a loop)."""
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def _kind(entry: os.DirEntry[str]) -> str | None:
    """ "dir" for a folder (never through a link), "file" for a file or a link to one, "bad" for a link
    that cannot be followed (a loop, through a file, into a folder the user cannot search), else None."""
    try:
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        return "file" if entry.is_file() else None  # a dangling link is no file, as before
    except OSError:
        return "bad"


Extensions = tuple[tuple[str, str], ...]  # (file extension, format): --extension, [tool.fa-lint] extension


def mapped(path: str, extension: Extensions) -> str | None:
    """The format ``--extension`` gives a file by its extension (ruff's: a file of a mapped extension is
    found by the walk and read as that format), or None."""
    if not extension or "." not in os.path.basename(path):
        return None
    suffix = path.rsplit(".", 1)[1].lower()
    return next((fmt for ext, fmt in reversed(extension) if ext == suffix), None)


class Found(NamedTuple):
    """What a search for files found: the targets, and how many Python files a walk passed, picked
    or not (searched for the code layer's words: a tree without Python says nothing of its code)."""

    targets: list[Target]
    python_files: int = 0


def walk(
    root: str, exclude: tuple[str, ...], ignored: GitIgnore | None, extension: Extensions = ()
) -> Iterator[Target]:
    """The dependency files under ``root`` (``search``'s targets)."""
    yield from search(root, exclude, ignored, extension).targets


def search(
    root: str, exclude: tuple[str, ...], ignored: GitIgnore | None, extension: Extensions = ()
) -> Found:
    """The dependency files under ``root``, by name, in sorted order, depth first.

    A loop of its own, not recursion: a committed tree may be thousands of folders deep. A link that
    cannot be followed is passed over, or, when its name is a dependency file's, handed on to be read
    (it then costs its own FAL900 "cannot read file", never the run).
    """
    targets: list[Target] = []
    python_files = 0
    levels = [(iter(_entries(root)), _speaking(root, ignored))]
    while levels:
        entries, here = levels[-1]
        entry = next(entries, None)
        if entry is None:
            levels.pop()
            continue
        rel = os.path.normpath(entry.path)
        if excluded(rel, exclude):
            continue
        kind = _kind(entry)
        if kind == "dir":
            if not is_skipped_dir(entry) and not (here and here(entry.path, is_dir=True)):
                levels.append((iter(_entries(entry.path)), _speaking(entry.path, ignored)))
        elif kind is not None:
            python_files += entry.name.endswith(".py")
            fmt = mapped(rel, extension) or (detect(rel) if kind == "bad" else classify(rel))
            if fmt is not None and not (here and here(entry.path)):
                targets.append(Target(rel, fmt, explicit=False))
    return Found(targets, python_files)


def _speaking(folder: str, ignored: GitIgnore | None) -> GitIgnore | None:
    # asked once for the folder, not for each entry, when no .gitignore speaks for it
    return ignored if ignored is not None and ignored.speaks_for(folder) else None


def discover(
    paths: Iterable[str],
    exclude: tuple[str, ...] = (),
    ignored: GitIgnore | None = None,
    force_exclude: bool = False,
    extension: Extensions = (),
) -> Iterator[Target]:
    """The files to check (``find``'s targets)."""
    yield from find(paths, exclude, ignored, force_exclude, extension).targets


def find(
    paths: Iterable[str],
    exclude: tuple[str, ...] = (),
    ignored: GitIgnore | None = None,
    force_exclude: bool = False,
    extension: Extensions = (),
) -> Found:
    """Files as given are checked (``force_exclude``: unless ``exclude`` matches them, as pre-commit
    passes every file); folders are walked for the names the catalogue knows.

    With ``ignored``, the walk leaves out what ``.gitignore`` leaves out, as ruff and black do.
    """
    seen: set[str] = set()
    targets: list[Target] = []
    python_files = 0
    for path in paths:
        if os.path.isdir(path):
            walked = search(path, exclude, ignored, extension)
            python_files += walked.python_files
            here = walked.targets
        elif force_exclude and excluded(path, exclude):
            continue
        else:
            fmt = mapped(path, extension)
            here = [Target(path, fmt, explicit=True)] if fmt else _named(path)
        for target in here:
            key = os.path.normcase(os.path.abspath(target.path))
            if key not in seen:
                seen.add(key)
                targets.append(target)
    return Found(targets, python_files)


def _named(path: str) -> list[Target]:
    """A file named to check, with its format (none: not one of ours)."""
    if detect(path) is None and candidate(path) is not None and os.path.isfile(path):
        fmt = classify(path)  # pre-commit hands over every *.in: a MANIFEST.in is none of ours
        if fmt is None and candidate(path) == "cluster":
            fmt = _fallback(path)  # a YAML file named explicitly that places no GPU work: as before
        elif fmt is None and fnmatch.fnmatchcase(os.path.basename(path).lower(), "setup*.py"):
            fmt = "setup.py"  # setup_gpu.py named explicitly: as before; other Python is not ours
    else:
        fmt = detect(path) or _fallback(path)
    return [] if fmt is None else [Target(path, fmt, explicit=True)]
