"""Grouping requirements into the installs they describe.

An environment is what one install puts together: a requirements file with its ``-r``/``-c`` chain;
a pyproject's main dependencies, each extra and each group combined with them, plus uv constraints,
overrides and sources; a Pipfile section; a conda file; one Dockerfile stage or script, where a later
install of a package replaces an earlier one unless the earlier already satisfies it, an uninstall
removes it, and an install that may not run is an alternative beside it. A manifest's
lockfile (``uv.lock``, ``poetry.lock``, ``pdm.lock``, ``pylock.toml``, ``Pipfile.lock`` beside it)
says what that install really gets.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any

from fa_lint.model import FileResult, Group, Image, Include, Kind, Parsed, Requirement, Uninstall, normalize
from fa_lint.sources import LOCKS, MANIFESTS, SCRIPTS, locks_of

_SCAN = 32  # an environment of up to this many requirements is scanned rather than indexed


class Environment:
    """One install: what its manifest side asks for, what its lock pins, and what its commands did.

    Not changed once made; equal when its fields are. A plain class, not a frozen dataclass: the
    ``dataclasses`` module and the code it generates cost about 10 ms of every start (benchmarks/).
    """

    __slots__ = ("_index", "images", "locked", "members", "name", "removed", "satisfied", "superseded")

    def __init__(
        self,
        name: str,
        members: tuple[Requirement, ...],  # what the manifest side asks for, every package
        locked: tuple[Requirement, ...] = (),  # what its lockfile pins, every package
        images: tuple[Image, ...] = (),
        superseded: tuple[Requirement, ...] = (),  # installs a later command in the same stage replaces
        # (later install, the earlier one it leaves in place): pip without --upgrade keeps what satisfies it
        satisfied: tuple[tuple[Requirement, Requirement], ...] = (),
        removed: tuple[Uninstall, ...] = (),  # a stage's or script's uninstalls, in command order
    ) -> None:
        self.name = name
        self.members = members
        self.locked = locked
        self.images = images
        self.superseded = superseded
        self.satisfied = satisfied
        self.removed = removed
        # members (False) and locked (True) by package name, and by identity: built on first use for a
        # large environment, where a scan per question would cost n squared; a small one is scanned
        self._index: dict[tuple[bool, bool], Any] = {}

    def _fields(self) -> tuple[object, ...]:
        return (
            self.name,
            self.members,
            self.locked,
            self.images,
            self.superseded,
            self.satisfied,
            self.removed,
        )

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if isinstance(other, Environment) else NotImplemented

    def __hash__(self) -> int:
        # equal environments have equal names: hashing the name alone keeps a large environment a cheap
        # key for the rules' answers (fa_lint.rules._base.Memo), where hashing its members would not be
        return hash(self.name)

    def __repr__(self) -> str:
        return f"Environment({self.name!r}, {len(self.members)} members, {len(self.locked)} locked)"

    def _group(self, locked: bool) -> tuple[Requirement, ...]:
        return self.locked if locked else self.members

    def of(self, name: str, *, locked: bool = False) -> tuple[Requirement, ...]:
        group = self._group(locked)
        if len(group) <= _SCAN:
            return tuple(r for r in group if r.name == name)
        if (locked, False) not in self._index:
            by_name: dict[str, list[Requirement]] = defaultdict(list)
            for r in group:
                by_name[r.name].append(r)
            self._index[locked, False] = {n: tuple(found) for n, found in by_name.items()}
        found: tuple[Requirement, ...] = self._index[locked, False].get(name, ())
        return found

    def holds(self, req: Requirement, *, locked: bool = False) -> bool:
        """Whether this very requirement (not only an equal one) is a member, or a lock entry."""
        group = self._group(locked)
        if len(group) <= _SCAN:
            return any(r is req for r in group)
        if (locked, True) not in self._index:
            self._index[locked, True] = frozenset(map(id, group))  # the members keep the ids alive
        return id(req) in self._index[locked, True]


def label(path: str, scope: str) -> str:
    return path if not scope or scope == "lock" else f"{path} [{scope}]"


def split(name: str) -> tuple[str, str]:
    """An environment's file and scope, from its name (``label``'s): ``Dockerfile [stage:build]``."""
    path, _, scope = name.partition(" [")
    return path, scope[:-1] if scope.endswith("]") else scope


def paired_locks(
    path: str, source: str, files: Mapping[str, FileResult], folders: Mapping[str, list[str]] | None = None
) -> list[str]:
    """The loaded lockfiles that pin a manifest: a lock format it pairs with, in the same folder.

    ``folders`` (``lock_folders(files)``) spares looking through every file for each manifest.
    """
    folder = os.path.dirname(path)
    kinds = locks_of(source)
    found = files if folders is None else folders.get(folder, [])
    return [p for p in found if files[p].source in kinds and os.path.dirname(p) == folder]


def lock_folders(files: Mapping[str, FileResult]) -> dict[str, list[str]]:
    """The loaded lockfiles of each folder."""
    out: dict[str, list[str]] = defaultdict(list)
    for path, f in files.items():
        if f.source in LOCKS:
            out[os.path.dirname(path)].append(path)
    return out


def _requirements(f: FileResult) -> list[Requirement]:
    return [r for r in f.records if isinstance(r, Requirement)]


def _include_target(path: str, inc: Include) -> str:
    return os.path.normpath(os.path.join(os.path.dirname(path), inc.target))


def _limit(inc: Include) -> Kind | None:
    """What an include makes of the installs in its file: limits (``-c``), overrides (uv's
    ``--override``), or installs as written (``-r``)."""
    return Kind.CONSTRAINT if inc.constraint else Kind.OVERRIDE if inc.override else None


def _closure(
    path: str,
    files: Mapping[str, FileResult],
    seen: set[str],
    limit: Kind | None,
    scopes: tuple[str, ...] = (),
) -> list[Requirement]:
    """A requirements file with everything its -r/-c lines pull in; -c turns installs into limits,
    uv's --override into overrides (``limit``: what the file was included as).

    Depth first, in file order, as pip reads them; with a stack of its own, not Python's, since an
    include chain may be thousands of files deep.
    """
    out: list[Requirement] = []
    reading: list[tuple[str, Iterator[Parsed], Kind | None]] = []  # the files open, each where it stopped

    def open_(p: str, limits: Kind | None) -> None:
        if p not in seen and p in files:
            seen.add(p)
            reading.append((p, iter(files[p].records), limits))

    open_(path, limit)
    while reading:
        here, records, limits = reading[-1]
        for rec in records:
            if isinstance(rec, Requirement):
                if scopes and here == path and rec.scope not in scopes:
                    continue  # a part of the top file the include does not install
                out.append(rec._replace(kind=limits) if limits is not None else rec)
            elif isinstance(rec, Include) and "://" not in rec.target:
                if scopes and here == path and rec.scope not in scopes:
                    continue
                open_(_include_target(here, rec), limits or _limit(rec))
                break  # read what it includes first, then go on from here
        else:
            reading.pop()
    return out


# what applies to every environment of a manifest: uv's constraints, overrides and sources, PDM's overrides
_SHARED = ("uv:constraints", "uv:overrides", "uv:sources", "pdm:overrides")


def _manifest(
    path: str, f: FileResult, files: Mapping[str, FileResult], folders: Mapping[str, list[str]]
) -> Iterable[Environment]:
    reqs = _requirements(f)
    for rec in f.records:  # setup.cfg "file:" and conda "-r" style includes
        if isinstance(rec, Include) and "://" not in rec.target:
            reqs += [
                r._replace(scope=rec.scope)
                for r in _closure(_include_target(path, rec), files, set(), _limit(rec), rec.scopes)
            ]
    by_scope: dict[str, list[Requirement]] = defaultdict(list)
    for r in reqs:
        by_scope[r.scope].append(r)
    shared = [r for s in _SHARED for r in by_scope.get(s, [])]
    base_scope = "packages" if f.source == "pipfile" else "project"
    base = by_scope.get(base_scope, [])
    locked = [r for lp in paired_locks(path, f.source, files, folders) for r in _requirements(files[lp])]
    yield Environment(
        label(path, base_scope),
        (*base, *shared, *by_scope.get("python", [])),
        tuple(r for r in locked if r.scope.startswith("lock") or r.scope == base_scope),
    )
    for scope, members in by_scope.items():
        if scope in (base_scope, "python") or scope in _SHARED or scope.startswith("uv:") or commands(scope):
            continue
        alone = scope == "build-system"
        # a uv source for this extra or group only (`{ url = ..., group = "cuda12" }`)
        own = by_scope.get(f"uv:sources {_normalized(scope)}", [])
        combined = members if alone else [*base, *members, *shared, *own, *by_scope.get("python", [])]
        mine = (base_scope, scope)
        yield Environment(
            label(path, scope),
            tuple(combined),
            () if alone else tuple(r for r in locked if r.scope.startswith("lock") or r.scope in mine),
        )


def commands(scope: str) -> bool:
    """The scope of the install commands a Python file runs (``fa_lint.sources.python_commands``):
    ``run``, or a launcher's ``run:NAME:LINE``."""
    return scope == "run" or scope.startswith("run:")


def _commands_of(f: FileResult) -> FileResult:
    """A manifest's install commands (a setup.py that runs pip as it runs), as a script of their own:
    each command in its order, a later install replacing an earlier one."""
    return f._replace(records=tuple(r for r in f.records if commands(getattr(r, "scope", ""))))


def source_applies(source: Requirement, req: Requirement) -> bool:
    """Whether a ``[tool.uv.sources]`` entry applies to a requirement: one for an extra or a group
    applies only to what that extra or group lists (uv's lowering.rs filters the rest out)."""
    return all(_normalized(req.scope) == wanted for wanted in source.scope.split()[1:])


class Sources:
    """``[tool.uv.sources]`` entries by the requirements they apply to (``source_applies``): asked once
    a requirement, a look-up of its scope, not a test of every entry (entries x sources)."""

    def __init__(self, sources: Iterable[Requirement]) -> None:
        self.everywhere: list[Requirement] = []
        self.only: dict[str, list[Requirement]] = {}  # by the one extra or group they are for
        for s in sources:
            wanted = set(s.scope.split()[1:])
            if not wanted:
                self.everywhere.append(s)
            elif len(wanted) == 1:
                self.only.setdefault(wanted.pop(), []).append(s)
            # for two extras or groups at once: no requirement is listed by both

    def applying(self, req: Requirement) -> list[Requirement]:
        return [*self.everywhere, *self.only.get(_normalized(req.scope), ())]

    def any_applies(self, req: Requirement) -> bool:
        return bool(self.everywhere) or _normalized(req.scope) in self.only


def _normalized(scope: str) -> str:
    """``extra:GPU_Stack`` as uv names it (``extra:gpu-stack``): extras and groups compare normalized."""
    kind, _, name = scope.partition(":")
    return f"{kind}:{normalize(name)}" if kind in ("extra", "group") else scope


def _known(r: Requirement) -> bool:
    return not r.unresolved and not (r.url and r.version is None)


def _sequential(path: str, f: FileResult, files: Mapping[str, FileResult]) -> Iterable[Environment]:
    """One environment per stage or job, folding its install and uninstall commands in order.

    For each package, a later install replaces the one in place, unless it is already satisfied:
    pip (and uv, and conda) without ``--upgrade`` keeps an installed version the new requirement
    admits, so ``pip install flash-attn`` after ``pip install flash-attn==2.6.3`` changes nothing.
    Satisfied means every version the earlier install can have put there is one the later admits,
    which only a certain earlier install, with nothing possible since, can promise. A possible
    install (after ``||``, in a branch) adds an alternative beside what is there; a certain
    uninstall removes the package, a possible one leaves it uncertain.
    """
    images: dict[str, list[Image]] = defaultdict(list)  # by scope: a stage each, so not scanned per stage
    for rec in f.records:
        if isinstance(rec, Image):
            images[rec.scope].append(rec)
    for scope, events in _events(path, f, files).items():
        reqs = [r for r in events if isinstance(r, Requirement)]
        fold = _Fold(reqs)
        for event in sorted(events, key=lambda e: e.step):  # stable: one command's records keep their order
            fold.step(event)
        last = fold.in_place_now()
        kept = tuple(r for r in reqs if r.kind is Kind.CONSTRAINT or id(r) in last)
        replaced = tuple(r for r in reqs if r.kind is not Kind.CONSTRAINT and id(r) not in last)
        yield Environment(
            label(path, scope),
            kept,
            images=tuple(images.get(scope, ())),
            superseded=replaced,
            satisfied=tuple(fold.satisfied),
            removed=tuple(e for e in events if isinstance(e, Uninstall)),
        )


def _events(
    path: str, f: FileResult, files: Mapping[str, FileResult]
) -> dict[str, list[Requirement | Uninstall]]:
    """A stage's or job's installs and uninstalls by scope, a file it installs from read in its place
    (each line as the command that names the file installs it)."""
    by_scope: dict[str, list[Requirement | Uninstall]] = defaultdict(list)
    for rec in f.records:
        if isinstance(rec, (Requirement, Uninstall)):
            by_scope[rec.scope].append(rec)
        elif isinstance(rec, Include) and "://" not in rec.target:
            for r in _closure(_include_target(path, rec), files, set(), _limit(rec), rec.scopes):
                options = rec.options.through(r.options) if rec.options else r.options
                by_scope[rec.scope].append(
                    r._replace(
                        scope=rec.scope,
                        step=rec.step,
                        upgrade=rec.upgrade,
                        possible=rec.possible,
                        options=options,
                    )
                )
    return by_scope


class _Fold:
    """The packages in place after a stage's commands so far, and the installs an earlier one leaves
    nothing to do (a plain class: each command changes it). Each kind of command has its own step:
    ``uninstall``; and ``install``, which joins a requirement to its command's, adds a possible one
    beside what is there, or replaces (or keeps) what is there."""

    __slots__ = ("asked", "in_place", "satisfied")

    def __init__(self, reqs: list[Requirement]) -> None:
        # an override (uv's --override FILE) installs nothing of its own: it replaces what the same
        # command asks for, and stands in the fold only beside such a request
        self.asked = {(r.step, r.name) for r in reqs if r.kind is Kind.INSTALL}
        self.in_place: dict[str, _InPlace] = {}
        self.satisfied: list[tuple[Requirement, Requirement]] = []

    def step(self, event: Requirement | Uninstall) -> None:
        if isinstance(event, Uninstall):
            self.uninstall(event)
        elif event.kind is not Kind.CONSTRAINT and (
            event.kind is not Kind.OVERRIDE or (event.step, event.name) in self.asked
        ):
            self.install(event)

    def uninstall(self, event: Uninstall) -> None:
        """A certain uninstall removes the package; a possible one leaves it uncertain."""
        if not event.possible:
            self.in_place.pop(event.name, None)
        elif event.name in self.in_place:
            self.in_place[event.name].settled = False

    def install(self, r: Requirement) -> None:
        there = self.in_place.get(r.name)
        if there is not None and there.groups[-1][0].step == r.step:
            there.groups[-1].append(r)  # one command, several requirements: pip combines them
        elif r.possible:
            if there is None:
                self.in_place[r.name] = _InPlace([[r]], settled=False)
            else:
                there.groups.append([r])
                there.settled = False
        elif there is not None and (earlier := there.certain()) is not None and _keeps(earlier, r):
            self.satisfied.append((r, earlier))
        else:
            self.in_place[r.name] = _InPlace([[r]])

    def in_place_now(self) -> set[int]:
        """The requirements in place after the last command (by identity)."""
        return {id(r) for there in self.in_place.values() for group in there.groups for r in group}


class _InPlace:
    """What one package may be after the commands so far: alternatives, newest last."""

    def __init__(self, groups: list[list[Requirement]], settled: bool = True) -> None:
        self.groups = groups
        self.settled = settled  # one certain install, and nothing possible since

    def certain(self) -> Requirement | None:
        if self.settled and len(self.groups) == 1 and len(self.groups[0]) == 1:
            return self.groups[0][0]
        return None


def _keeps(earlier: Requirement, later: Requirement) -> bool:
    """pip leaves ``earlier`` in place for ``later``: every version it can be, ``later`` admits."""
    return (
        not later.upgrade
        and _known(earlier)
        and _known(later)
        and earlier.version_range.is_subset(later.version_range)
    )


def _conda(path: str, files: Mapping[str, FileResult], folders: Mapping[str, list[str]]) -> Environment:
    """conda installs its own packages first, then runs pip over them: pip's version of a package wins.
    A file the ``pip:`` list includes is installed by that one pip command, as its options say."""
    members: list[Requirement] = []
    for rec in files[path].records:
        if isinstance(rec, Requirement):
            members.append(rec)
        elif isinstance(rec, Include) and "://" not in rec.target:
            for r in _closure(_include_target(path, rec), files, {path}, _limit(rec), rec.scopes):
                options = rec.options.through(r.options) if rec.options else r.options
                members.append(
                    r._replace(scope=rec.scope, step=rec.step, upgrade=rec.upgrade, options=options)
                )
    by_pip = {r.name for r in members if r.scope == "pip" or r.source != "conda"}
    replaced = [r for r in members if r.scope == "conda" and r.name in by_pip]
    kept = tuple(r for r in members if not any(r is x for x in replaced))
    locked = tuple(r for lp in paired_locks(path, "conda", files, folders) for r in _requirements(files[lp]))
    images = tuple(rec for rec in files[path].records if isinstance(rec, Image))  # what conda installs first
    return Environment(path, kept, locked, images=images, superseded=tuple(replaced))


def _groups(
    path: str, f: FileResult, files: Mapping[str, FileResult], folders: Mapping[str, list[str]]
) -> Iterable[Environment]:
    """A file that names its installs (pixi environments, tox testenvs): each one installs what the
    scopes it lists ask for, their included files with them."""
    by_scope: dict[str, list[Requirement]] = defaultdict(list)
    for rec in f.records:
        if isinstance(rec, Requirement):
            by_scope[rec.scope].append(rec)
        elif isinstance(rec, Include) and "://" not in rec.target:
            target = _include_target(path, rec)
            included = _closure(target, files, set(), _limit(rec), rec.scopes)
            by_scope[rec.scope] += [r._replace(scope=rec.scope) for r in included]
    locked = [r for lp in paired_locks(path, f.source, files, folders) for r in _requirements(files[lp])]
    for group in (rec for rec in f.records if isinstance(rec, Group)):
        members = tuple(r for scope in group.scopes for r in by_scope.get(scope, []))
        yield Environment(label(path, group.name), members, tuple(r for r in locked if _locks(r, group)))


def _locks(entry: Requirement, group: Group) -> bool:
    """Whether a lock entry pins this group: a pixi.lock entry names the environments that use it."""
    users = [word for word in entry.scope.split() if word.startswith("env:")]
    return not users or group.name in users


# Files and requirements the environments of requirements files may take in, all together. Each checked
# file is an environment of its own, with all it includes: a chain of n files, each including the
# next, makes n environments of n/2 files on average. Past this, a file's environment is its own lines.
MAX_CLOSURES = 250_000


def build(files: Mapping[str, FileResult], checked: Collection[str] | None = None) -> tuple[Environment, ...]:
    """The environments of the loaded files. A requirements file is one of its own when it is among
    ``checked`` (None: every file); one reached only through includes is part of the ones that include
    it. Otherwise a chain of n includes would make n environments of up to n files each."""
    envs: list[Environment] = []
    budget = MAX_CLOSURES
    folders = lock_folders(files)
    paired = {
        lp
        for path, f in files.items()
        if locks_of(f.source)
        for lp in paired_locks(path, f.source, files, folders)
    }
    for path, f in files.items():
        if any(isinstance(rec, Group) for rec in f.records):
            envs += _groups(path, f, files, folders)
        elif f.source in MANIFESTS:
            envs += _manifest(path, f, files, folders)
            envs += _sequential(path, _commands_of(f), files)
        elif f.source in SCRIPTS:
            envs += _sequential(path, f, files)
        elif f.source in LOCKS:
            if path not in paired:
                envs.append(Environment(path, (), tuple(_requirements(f))))
        elif f.source == "conda":
            envs.append(_conda(path, files, folders))
        elif checked is None or path in checked:  # requirements files: the file and its -r/-c chain
            if budget > 0:
                reached: set[str] = set()
                reqs = _closure(path, files, reached, None)
                budget -= len(reqs) + len(reached)
            else:  # past the budget: the file's own lines; what it includes is judged in its own
                reqs = _requirements(f)
            envs.append(Environment(path, tuple(reqs)))
    return tuple(envs)
