"""Which files a check reads: the targets, what they include (never outside the project root or in
``.git``), the files of the project that include a named one, and the locks beside its manifests.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from collections import deque
from collections.abc import Collection, Iterable, Iterator, Mapping

from fa_lint.files.discover import GitIgnore, Target, classify, detect, walk
from fa_lint.files.read import MAX_BYTES, parse_file
from fa_lint.machine.environments import LOCKS, PAIRS
from fa_lint.model import BuildArg, FileResult, Include, Kind, Location, ParseProblem, Requirement
from fa_lint.syntax.text import excerpt


def _include_path(including: str, target: str) -> str:
    return os.path.normpath(os.path.join(os.path.dirname(including), target))


def companions(targets: list[Target], ignored: GitIgnore | None = None) -> list[Target]:
    """Lockfiles beside the manifests being checked: they say what really installs.

    They are read for context only; findings in them are reported when they are checked themselves.
    A lock that ``ignored`` says git leaves out is local state, not what the project installs.
    """
    named = {os.path.normpath(t.path) for t in targets}
    out = []
    listed: dict[str, list[str]] = {}  # each folder is listed once
    for t in targets:
        if t.source not in PAIRS:
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
                fmt in PAIRS[t.source]
                and os.path.normpath(path) not in named
                and os.path.isfile(path)
                and not (ignored and ignored(path))
            ):
                named.add(os.path.normpath(path))
                out.append(Target(path, fmt, explicit=False))
    return out


def project_root(path: str = ".", known: dict[str, str] | None = None) -> str:
    """The folder a checked path's includes may reach, and where the files that include a named one
    are looked for: the top of the git repository that holds it (the folder with ``.git``); outside
    any repository the current folder when the path is inside it (and it is not the filesystem's root),
    else the folder named (a file's own).
    ``known`` keeps each folder's answer for the rest of a run (files named together share folders,
    and the search up to the filesystem's root costs two system calls a level).
    """
    folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
    if known is not None and folder in known:
        return known[folder]
    start = os.path.realpath(folder)
    here = start
    while not os.path.exists(os.path.join(here, ".git")):
        parent = os.path.dirname(here)
        if parent == here:
            cwd = os.path.realpath(os.getcwd())
            # the filesystem's root is no project's (a container's working folder often is "/")
            inside = os.path.commonpath([start, cwd]) == cwd and os.path.dirname(cwd) != cwd
            here = cwd if inside else start
            break
        here = parent
    if known is not None:
        known[folder] = here
    return here


def _off_limits(path: str, roots: Collection[str], folders: dict[str, str] | None = None) -> str | None:
    """Where ``path`` lies when fa-lint must not read it for a file it checks, or None.

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


def off_limits(path: str, roots: Collection[str]) -> str | None:
    """Where ``path`` lies when fa-lint must not read it (outside the project roots, inside .git), or
    None: the bound every file read for a checked one keeps to, includes and checkouts alike."""
    return _off_limits(path, roots)


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


def _walked_link_off_limits(t: Target, roots: Collection[str]) -> str | None:
    """Where a file found by walking a folder lies, when it is a symbolic link out of ``roots``: a
    walk never leaves the folder it was given but through one."""
    return _off_limits(t.path, roots) if not t.explicit and os.path.islink(t.path) else None


def _key(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


def includers(  # noqa: C901 - complexity 11, to split or justify (issue 45)
    named: list[Target],
    known: list[Target],
    exclude: tuple[str, ...] = (),
    ignored: GitIgnore | None = None,
    parsed: dict[str, FileResult] | None = None,
    walked: Iterable[str] = (),
    known_roots: dict[str, str] | None = None,
) -> list[Target]:
    """Files of the project that include a named file, directly or through others, and the
    manifests beside a named lockfile: the environments a named file takes part in.

    pre-commit names only the changed files; a requirements file that says ``-c constraints.txt``
    is not among them when only the constraints changed. Each project root is walked once (not at
    all when inside a folder that was ``walked`` already: what is there is in ``known``).

    Linear in the project, one file's bytes in memory at a time: each file of the project is read
    once for the names of project files it mentions (``Names``), and dropped; a file is parsed
    only when a name it mentions becomes wanted, once, and what it includes kept as an index from
    each included file to its includers. ``parsed`` collects the includers parsed, for ``load`` to
    reuse; ``known_roots`` is ``project_root``'s ``known``.
    """
    parsed = parsed if parsed is not None else {}
    taken = {_key(t.path) for t in known}
    out = _manifests_beside(named, taken, ignored)
    pool = [t for t in _pool(named, exclude, ignored, walked, known_roots) if _key(t.path) not in taken]
    if not pool:
        return out
    names = Names({os.fsencode(os.path.basename(t.path)) for t in (*pool, *named)})
    mentioning: dict[bytes, list[Target]] = {}  # a file name -> the pool files that mention it
    for t in pool:
        for name in names.mentioned(_bytes(t.path)):
            mentioning.setdefault(name, []).append(t)
    by_target: dict[str, list[Target]] = {}  # an included file -> the parsed files that include it
    seen: set[str] = set()  # pool files parsed
    wanted = {_key(t.path) for t in named}  # and every includer found
    found: set[str] = set()
    todo = deque(wanted)
    while todo:  # a file that includes one that includes a named file is in its environments too
        key = todo.popleft()
        for t in mentioning.pop(os.fsencode(os.path.basename(key)), ()):
            if t.path in seen:
                continue
            seen.add(t.path)
            result = parse_file(t.path, t.source)
            inside = [_key(_include_path(t.path, r.target)) for r in result.records if isinstance(r, Include)]
            if any(k in wanted for k in inside):
                parsed[t.path] = result  # an includer already: load reads it from here
            for k in inside:
                by_target.setdefault(k, []).append(t)
        for t in by_target.pop(key, ()):
            k = _key(t.path)
            if k not in taken and k not in wanted:
                wanted.add(k)
                found.add(k)
                todo.append(k)
    out += [Target(t.path, t.source, explicit=False) for t in pool if _key(t.path) in found]
    return out


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
            if fmt in PAIRS and t.source in PAIRS[fmt] and not (ignored and ignored(path)):
                taken.add(_key(path))
                out.append(Target(path, fmt, explicit=False))
    return out


def _pool(
    named: list[Target],
    exclude: tuple[str, ...],
    ignored: GitIgnore | None,
    walked: Iterable[str],
    known_roots: dict[str, str] | None = None,
) -> Iterator[Target]:
    """Every dependency file of the named files' projects, one walk per project root (``project_root``,
    the bound of includes too), without the symbolic links out of it that ``load`` would not read."""
    done = [_key(w).rstrip(os.sep) for w in walked]
    # each root once, its paths written as the first named file in it is (absolute or relative),
    # so that an include resolves to the very path the named file was loaded under
    roots: dict[str, bool] = {}
    for t in named:
        roots.setdefault(project_root(t.path, known_roots), os.path.isabs(t.path))
    for root, absolute in roots.items():
        key = _key(root)
        if not any(key == w or key.startswith(w + os.sep) for w in done):
            found = walk(root if absolute else os.path.relpath(root), exclude, ignored)
            yield from (t for t in found if _walked_link_off_limits(t, [root]) is None)


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
            _include_path(path, r.target)
            for r in files[path].records
            if isinstance(r, Include) and "://" not in r.target
        ]
    return seen


def load(  # noqa: C901 - complexity 14, to split or justify (issue 45)
    targets: Iterable[Target],
    given: Mapping[str, bytes] | None = None,
    parsed: Mapping[str, FileResult] | None = None,
    roots: Collection[str] = (),
) -> tuple[dict[str, FileResult], list[ParseProblem], list[tuple[Include, str]]]:
    """Parse every target and, transitively, every file they include (each file once).

    ``given`` holds bytes to use instead of reading a path (standard input, for one); ``parsed``
    holds files already parsed. Includes are followed only inside ``roots`` (the ``project_root`` of
    the current folder by default); the ones left are returned with the reason. A file found by
    walking a folder is left the same way when it is a symbolic link out of them; a file named on
    the command line is read wherever it is.
    """
    given = given or {}
    parsed = parsed or {}
    roots = [os.path.realpath(r) for r in roots] or [project_root()]
    folders: dict[str, str] = {}  # resolved once each (_realpath)
    files: dict[str, FileResult] = {}
    problems: list[ParseProblem] = []
    unfollowed: list[tuple[Include, str]] = []
    queue: deque[tuple[str, str]] = deque()
    for t in targets:
        where = None if t.path in given else _walked_link_off_limits(t, roots)
        if where is None:
            queue.append((t.path, t.source))
        else:
            unfollowed.append((Include(Location(t.path, 1, 1, 1, 1), t.path), f"it links to a file {where}"))
    asked = {path for path, _ in queue}  # files something installs from, not only constrains with
    while queue:
        path, source = queue.popleft()
        if path in files:
            continue
        result = files[path] = parsed.get(path) or parse_file(path, source, given.get(path))
        for rec in result.records:
            if not isinstance(rec, Include):
                continue
            if "://" in rec.target:
                unfollowed.append((rec, "fa-lint never fetches URLs"))
                continue
            target = _include_path(path, rec.target)
            where = _off_limits(target, roots, folders)
            if where is not None:
                if not rec.optional:  # an optional path names a file inside an image, not this one
                    unfollowed.append((rec, f"it is {where}"))
                continue
            if os.path.isfile(target):
                if not rec.constraint:
                    asked.add(target)
                fmt = rec.source or (detect(target) if rec.optional else None) or "requirements"
                queue.append((target, fmt))
            elif rec.optional:
                continue  # a path inside an image or on another machine; nothing to read here
            else:
                problems.append(
                    ParseProblem(rec.location, f"included file {excerpt(rec.target)} does not exist")
                )
    _built_with_arguments(files, given)
    problems += _cycles(files)
    for path in set(files) - asked:  # reached only through -c: every line is a constraint
        f = files[path]
        records = tuple(
            r._replace(kind=Kind.CONSTRAINT) if isinstance(r, Requirement) and r.kind is Kind.INSTALL else r
            for r in f.records
        )
        files[path] = f._replace(records=records)
    return files, problems, unfollowed


def _built_with_arguments(files: dict[str, FileResult], given: Mapping[str, bytes]) -> None:
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
        files[path] = parse_file(path, "dockerfile", given.get(path), build_args=args)


_CHAIN = 8  # files of a cycle named in its message, around an ellipsis


def _cycles(files: dict[str, FileResult]) -> list[ParseProblem]:
    """pip recurses into -r/-c includes without a guard; a cycle makes it crash.

    A depth-first walk with its own stack, not Python's: an include chain may be thousands deep.
    """
    edges = {
        path: [
            (rec, _include_path(path, rec.target))
            for rec in f.records
            if isinstance(rec, Include) and "://" not in rec.target
        ]
        for path, f in files.items()
    }
    found: dict[Location, ParseProblem] = {}
    done: set[str] = set()
    for start, first in edges.items():
        if start in done:
            continue
        stack = [start]  # the chain of includes being walked
        on_stack = {start: 0}  # each file of the chain, at its depth
        todo = [iter(first)]
        while todo:
            step = next(todo[-1], None)
            if step is None:
                finished = stack.pop()
                done.add(finished)
                del on_stack[finished]
                todo.pop()
                continue
            rec, target = step
            if target in on_stack:
                chain = [*stack[on_stack[target] :], target]
                if len(chain) > _CHAIN:
                    chain = [
                        *chain[: _CHAIN // 2],
                        f"... ({len(chain) - _CHAIN} more)",
                        *chain[-_CHAIN // 2 :],
                    ]
                found.setdefault(
                    rec.location, ParseProblem(rec.location, f"include cycle: {' -> '.join(chain)}")
                )
            elif target in edges and target not in done:
                on_stack[target] = len(stack)
                stack.append(target)
                todo.append(iter(edges[target]))
    return list(found.values())
