"""Which files a check reads: the targets, what they include (never outside the project root or in
``.git``), the files of the project that include a named one, and the locks beside its manifests.
"""

from __future__ import annotations

import codecs
import os
import stat
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping

from fa_lint._records import NamedTuple
from fa_lint.files.bounds import off_limits, walked_link_off_limits
from fa_lint.files.discover import GitIgnore, Target, classify, detect, search
from fa_lint.files.includes import cycles, include_path
from fa_lint.files.read import MAX_BYTES, Keep, parse_file
from fa_lint.model import BuildArg, FileResult, Include, Kind, Location, ParseProblem, Requirement
from fa_lint.sources import LOCKS, locks_of
from fa_lint.syntax.text import excerpt


def companions(targets: list[Target], ignored: GitIgnore | None = None) -> list[Target]:
    """Lockfiles beside the manifests being checked: they say what really installs.

    They are read for context only; findings in them are reported when they are checked themselves.
    A lock that ``ignored`` says git leaves out is local state, not what the project installs.
    """
    named = {os.path.normpath(t.path) for t in targets}
    out = []
    listed: dict[str, list[str]] = {}  # each folder is listed once
    for t in targets:
        locks = locks_of(t.source)
        if not locks:
            continue
        folder = os.path.dirname(t.path)
        if folder not in listed:
            try:
                listed[folder] = sorted(os.listdir(folder or "."))
            except OSError:
                listed[folder] = []
        for name in listed[folder]:
            path = os.path.join(folder, name)
            fmt = detect(path)
            if (
                fmt in locks
                and os.path.normpath(path) not in named
                and os.path.isfile(path)
                and not (ignored and ignored(path))
            ):
                named.add(os.path.normpath(path))
                out.append(Target(path, fmt, explicit=False))
    return out


def project_root(path: str = ".") -> str:
    """The folder a checked path's includes may reach, and where the files that include a named one
    are looked for: the top of the git repository that holds it (the folder with ``.git``); outside
    any repository the current folder when the path is inside it (and it is not the filesystem's root),
    else the folder named (a file's own).
    """
    return _root(_folder(path))


class Roots:
    """``project_root`` for one run, each folder's answer kept (files named together share folders,
    and the search up to the filesystem's root costs two system calls a level)."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        folder = _folder(path)
        if folder not in self._known:
            self._known[folder] = _root(folder)
        return self._known[folder]


def _folder(path: str) -> str:
    return path if os.path.isdir(path) else os.path.dirname(path) or "."


def _root(folder: str) -> str:
    start = os.path.realpath(folder)
    here = start
    while not os.path.exists(os.path.join(here, ".git")):
        parent = os.path.dirname(here)
        if parent == here:
            cwd = os.path.realpath(os.getcwd())
            # the filesystem's root is no project's (a container's working folder often is "/")
            inside = os.path.commonpath([start, cwd]) == cwd and os.path.dirname(cwd) != cwd
            return cwd if inside else start
        here = parent
    return here


def _key(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


class Includers(NamedTuple):
    """The files of the project that include a named one (``targets``), and those of them already
    parsed (``parsed``: for ``load`` to reuse)."""

    targets: list[Target]
    parsed: dict[str, FileResult]


def includers(
    named: list[Target],
    known: list[Target],
    exclude: tuple[str, ...] = (),
    ignored: GitIgnore | None = None,
    walked: Iterable[str] = (),
    roots: Callable[[str], str] = project_root,
    keep: Keep = None,
) -> list[Target]:
    """``including``'s targets."""
    return including(named, known, exclude, ignored, walked, roots, keep).targets


def including(
    named: list[Target],
    known: list[Target],
    exclude: tuple[str, ...] = (),
    ignored: GitIgnore | None = None,
    walked: Iterable[str] = (),
    roots: Callable[[str], str] = project_root,
    keep: Keep = None,
) -> Includers:
    """Files of the project that include a named file, directly or through others, and the
    manifests beside a named lockfile: the environments a named file takes part in.

    pre-commit names only the changed files; a requirements file that says ``-c constraints.txt``
    is not among them when only the constraints changed. Each project root (``roots``: a run's
    ``Roots``) is walked once (not at all when inside a folder that was ``walked`` already: what is
    there is in ``known``).

    Linear in the project, one file's bytes in memory at a time: each file of the project is read
    once for the names of project files it mentions (``Names``), and dropped; a file is parsed
    only when a name it mentions becomes wanted, once, and what it includes kept as an index from
    each included file to its includers. ``keep`` is ``parse_file``'s.
    """
    taken = {_key(t.path) for t in known}
    out = _manifests_beside(named, taken, ignored)
    pool = [t for t in _pool(named, exclude, ignored, walked, roots) if _key(t.path) not in taken]
    if not pool:
        return Includers(out, {})
    names = Names({os.fsencode(os.path.basename(t.path)) for t in (*pool, *named)})
    mentioning: dict[bytes, list[Target]] = {}  # a file name -> the pool files that mention it
    for t in pool:
        for name in names.mentioned(_bytes(t.path)):
            mentioning.setdefault(name, []).append(t)
    found = _Including(named, taken, keep)
    while found.todo:  # a file that includes one that includes a named file is in its environments too
        found.next(mentioning)
    out += [Target(t.path, t.source, explicit=False) for t in pool if _key(t.path) in found.found]
    return Includers(out, found.parsed)


class _Including:
    """The search for includers, breadth first from the named files (a plain class: each file parsed
    changes it)."""

    __slots__ = ("by_target", "found", "keep", "parsed", "seen", "taken", "todo", "wanted")

    def __init__(self, named: list[Target], taken: set[str], keep: Keep) -> None:
        self.taken = taken
        self.keep = keep
        self.by_target: dict[str, list[Target]] = {}  # an included file -> the parsed files that include it
        self.seen: set[str] = set()  # pool files parsed
        self.wanted = {_key(t.path) for t in named}  # and every includer found
        self.found: set[str] = set()
        self.todo = deque(self.wanted)
        self.parsed: dict[str, FileResult] = {}  # includers parsed: load reads them from here

    def next(self, mentioning: dict[bytes, list[Target]]) -> None:
        """Parse the pool files that mention the next wanted file; those that include it are wanted."""
        key = self.todo.popleft()
        for t in mentioning.pop(os.fsencode(os.path.basename(key)), ()):
            if t.path not in self.seen:
                self.seen.add(t.path)
                self._parse(t)
        for t in self.by_target.pop(key, ()):
            k = _key(t.path)
            if k not in self.taken and k not in self.wanted:
                self.wanted.add(k)
                self.found.add(k)
                self.todo.append(k)

    def _parse(self, t: Target) -> None:
        result = parse_file(t.path, t.source, keep=self.keep)
        inside = [_key(include_path(t.path, r.target)) for r in result.records if isinstance(r, Include)]
        if any(k in self.wanted for k in inside):
            self.parsed[t.path] = result  # an includer already
        for k in inside:
            self.by_target.setdefault(k, []).append(t)


# Where a file name ends as a word: blanks, quotes, "=", ",", ":", brackets, shell operators, slashes.
_DELIMITER = frozenset(b" \t\n\r\x0b\x0c\"'`=,;:()[]{}<>|&$/\\")
# Each delimiter made a blank, so that ``bytes.split()`` lists the words (it splits at the six ASCII
# blanks only): a split in C, where a pattern would try every byte in the interpreter's regex engine.
_BLANKS = bytes.maketrans(bytes(sorted(_DELIMITER)), b" " * len(_DELIMITER))
_TAIL = 4  # the last bytes of a name a word must end with to be looked up at all
_STRETCH = 1 << 20


class Names:
    """The file names a project's files may mention, and how to find them in a file's bytes.

    For a few names (most projects), each is looked for as bytes (a memchr pass), and only a name
    found is checked to stand as a word; for many (a large tree, a folder outside any repository),
    a file holding one of their endings has its words listed and intersected with the names: the
    split, the intersection and the option's glue are all done in C, byte by byte once.
    """

    _FEW = 64

    def __init__(self, names: set[bytes]) -> None:
        self.names = names
        self.few = len(names) <= self._FEW
        tails = {n[-_TAIL:] for n in names}
        self.tails = tuple(sorted(tails)) if len(tails) <= self._FEW else ()

    def mentioned(self, data: bytes) -> set[bytes]:
        """The names ``data`` holds as a word, or glued to an option (``-rrequirements.txt``)."""
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # read as pip reads such a file
            data = data.decode("utf-16", "replace").encode("utf-8", "replace")
        if self.few:
            return {n for n in self.names if n in data and _as_word(data, n)}
        if self.tails and not any(t in data for t in self.tails):
            return set()
        spaced = b" " + data.translate(_BLANKS)
        found: set[bytes] = set()
        start = 0
        while start < len(spaced):  # a stretch of words at a time: a list of them all may be 20x the file
            end = spaced.find(b" ", start + _STRETCH) if start + _STRETCH < len(spaced) else -1
            end = len(spaced) if end < 0 else end
            part = spaced[start:end]  # it starts at a blank, and no word is cut
            found.update(self.names.intersection(part.split()))
            if b" -" in part:  # a word glued to a one-letter option: what follows its first two bytes
                glued = (p[1:].split(None, 1)[0] for p in part.split(b" -")[1:] if p[1:2].strip())
                found.update(self.names.intersection(glued))
            start = end
        return found


def _as_word(data: bytes, name: bytes) -> bool:
    """Whether ``name`` stands in ``data`` as a word of its own, or after a glued option (``-r``)."""
    at = data.find(name)
    while at >= 0:
        end = at + len(name)
        if end == len(data) or data[end] in _DELIMITER:
            if at == 0 or data[at - 1] in _DELIMITER:
                return True
            if at >= 2 and data[at - 2] == 0x2D and (at == 2 or data[at - 3] in _DELIMITER):  # "-r"
                return True
        at = data.find(name, at + 1)
    return False


def _manifests_beside(named: list[Target], taken: set[str], ignored: GitIgnore | None) -> list[Target]:
    """The manifests a named lockfile pins, in its folder (``companions`` the other way round)."""
    out = []
    for t in named:
        if t.source not in LOCKS:
            continue
        folder = os.path.dirname(t.path) or "."
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            path = os.path.join(folder, name) if folder != "." else name
            fmt = classify(path) if os.path.isfile(path) and _key(path) not in taken else None
            if fmt is not None and t.source in locks_of(fmt) and not (ignored and ignored(path)):
                taken.add(_key(path))
                out.append(Target(path, fmt, explicit=False))
    return out


def _pool(
    named: list[Target],
    exclude: tuple[str, ...],
    ignored: GitIgnore | None,
    walked: Iterable[str],
    roots_of: Callable[[str], str],
) -> Iterator[Target]:
    """Every dependency file of the named files' projects, one walk per project root (``project_root``,
    the bound of includes too), without the symbolic links out of it that ``load`` would not read."""
    done = [_key(w).rstrip(os.sep) for w in walked]
    # each root once, its paths written as the first named file in it is (absolute or relative),
    # so that an include resolves to the very path the named file was loaded under
    roots: dict[str, bool] = {}
    for t in named:
        roots.setdefault(roots_of(t.path), os.path.isabs(t.path))
    for root, absolute in roots.items():
        key = _key(root)
        if not any(key == w or key.startswith(w + os.sep) for w in done):
            found = search(root if absolute else os.path.relpath(root), exclude, ignored).targets
            yield from (t for t in found if walked_link_off_limits(t, [root]) is None)


def _bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            # read(n) sets n bytes aside first: a regular file's own size, not the limit (16 MB a file)
            st = os.fstat(f.fileno())
            return f.read(min(st.st_size, MAX_BYTES) + 1 if stat.S_ISREG(st.st_mode) else MAX_BYTES + 1)
    except OSError:
        return b""


def reached(files: Mapping[str, FileResult], roots: Iterable[str]) -> set[str]:
    """The files the given ones include, transitively, and themselves."""
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        path = stack.pop()
        if path in seen or path not in files:
            continue
        seen.add(path)
        stack += [
            include_path(path, r.target)
            for r in files[path].records
            if isinstance(r, Include) and "://" not in r.target
        ]
    return seen


def load(
    targets: Iterable[Target],
    given: Mapping[str, bytes] | None = None,
    parsed: Mapping[str, FileResult] | None = None,
    roots: Collection[str] = (),
    keep: Keep = None,
) -> tuple[dict[str, FileResult], list[ParseProblem], list[tuple[Include, str]]]:
    """Parse every target and, transitively, every file they include (each file once).

    ``given`` holds bytes to use instead of reading a path (standard input, for one); ``parsed``
    holds files already parsed. Includes are followed only inside ``roots`` (the ``project_root`` of
    the current folder by default); the ones left are returned with the reason. A file found by
    walking a folder is left the same way when it is a symbolic link out of them; a file named on
    the command line is read wherever it is. ``keep``: the packages whose requirements are kept
    (``fa_lint.files.read.Keep``).
    """
    given = given or {}
    parsed = parsed or {}
    roots = [os.path.realpath(r) for r in roots] or [project_root()]
    folders: dict[str, str] = {}  # resolved once each (_realpath)
    files: dict[str, FileResult] = {}
    problems: list[ParseProblem] = []
    queue, unfollowed = _queued(targets, given, roots)
    asked = {path for path, _ in queue}  # files something installs from, not only constrains with
    while queue:
        path, source = queue.popleft()
        if path in files:
            continue
        result = files[path] = parsed.get(path) or parse_file(path, source, given.get(path), keep=keep)
        for rec in result.records:
            if not isinstance(rec, Include):
                continue
            step = _follow(path, rec, roots, folders)
            if isinstance(step, _Next):
                if step.asks:
                    asked.add(step.path)
                queue.append((step.path, step.source))
            elif isinstance(step, ParseProblem):
                problems.append(step)
            elif step:
                unfollowed.append((rec, step))
    _built_with_arguments(files, given, keep)
    problems += cycles(files)
    _constraints_only(files, asked)
    return files, problems, unfollowed


def _queued(
    targets: Iterable[Target], given: Mapping[str, bytes], roots: Collection[str]
) -> tuple[deque[tuple[str, str]], list[tuple[Include, str]]]:
    """The targets to read (path, format), and those left: a walked link out of the roots."""
    queue: deque[tuple[str, str]] = deque()
    unfollowed: list[tuple[Include, str]] = []
    for t in targets:
        where = None if t.path in given else walked_link_off_limits(t, roots)
        if where is None:
            queue.append((t.path, t.source))
        else:
            unfollowed.append((Include(Location(t.path, 1, 1, 1, 1), t.path), f"it links to a file {where}"))
    return queue, unfollowed


class _Next(NamedTuple):
    """A file an include names, to read next: its path, its format, and whether it is installed from
    (not only a constraint)."""

    path: str
    source: str
    asks: bool


def _follow(
    path: str, rec: Include, roots: Collection[str], folders: dict[str, str]
) -> _Next | ParseProblem | str:
    """Where an include of ``path`` leads: the file to read next, a problem (it does not exist), or why
    it is not followed ("" when there is nothing to say: an optional path that is not here)."""
    if "://" in rec.target:
        return "fa-lint never fetches URLs"
    target = include_path(path, rec.target)
    where = off_limits(target, roots, folders)
    if where is not None:
        return "" if rec.optional else f"it is {where}"  # an optional path names a file inside an image
    if os.path.isfile(target):
        fmt = rec.source or (detect(target) if rec.optional else None) or "requirements"
        return _Next(target, fmt, not rec.constraint)
    if rec.optional:
        return ""  # a path inside an image or on another machine; nothing to read here
    return ParseProblem(rec.location, f"included file {excerpt(rec.target)} does not exist")


def _constraints_only(files: dict[str, FileResult], asked: set[str]) -> None:
    """Each file reached only through ``-c``: every line of it is a constraint."""
    for path in set(files) - asked:
        f = files[path]
        records = tuple(
            r._replace(kind=Kind.CONSTRAINT) if isinstance(r, Requirement) and r.kind is Kind.INSTALL else r
            for r in f.records
        )
        files[path] = f._replace(records=records)


def _built_with_arguments(files: dict[str, FileResult], given: Mapping[str, bytes], keep: Keep) -> None:
    """Each Dockerfile of the check that another file builds with ``--build-arg NAME=VALUE``, read
    again with those values for its ``ARG`` lines without a default. The command names the Dockerfile
    from its working folder: the folder of the file that runs it, else the one fa-lint runs in (a
    script run from the top of the repository)."""
    dockerfiles = {os.path.normpath(p): p for p, f in files.items() if f.source == "dockerfile"}
    if not dockerfiles:
        return
    values: dict[str, dict[str, list[str]]] = {}
    for path, f in files.items():
        for rec in f.records:
            if not isinstance(rec, BuildArg) or os.path.isabs(rec.dockerfile):
                continue
            for base in (os.path.dirname(path), ""):
                target = dockerfiles.get(os.path.normpath(os.path.join(base, rec.dockerfile)))
                if target is not None:
                    values.setdefault(target, {}).setdefault(rec.name, []).append(rec.value)
                    break
    for path, named in values.items():
        args = {name: tuple(dict.fromkeys(found)) for name, found in named.items()}
        files[path] = parse_file(path, "dockerfile", given.get(path), build_args=args, keep=keep)
