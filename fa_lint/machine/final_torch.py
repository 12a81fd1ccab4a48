"""The torch an environment really ends with: what its torch requirements and the packages that pin
torch allow together, and, in a script or Dockerfile stage, what each later command puts in place.

One resolve (a requirements file with its ``-r``/``-c`` chain, a pyproject with its lock, a conda
file) is what every requirement allows together: ``vllm==0.6.5`` pins torch 2.5.1 even where torch is
not written, and ``torch==2.4.0`` beside it cannot be met at all. A resolver takes the newest release
of each package that fits, so an unpinned ``vllm`` brings the torch its newest release pins (or a newer
one: a release made after the knowledge base pins no older torch than the ones before it).

In a script or a stage, commands run in order (``step``), each its own resolve over what is already
installed: pip keeps an installed torch a new command's requirements admit (unless ``-U`` or
``--force-reinstall``), replaces it when they do not, and ``pip uninstall torch`` removes it. A
command that may not run (after ``||``, in a branch) leaves either outcome possible.

The knowledge base (``fa_lint.kb.torch``) says what each release of each package requires of torch,
read from its published metadata; a package it does not hold is taken to leave torch alone.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from packaging.ranges import VersionRange
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from fa_lint._records import NamedTuple
from fa_lint.kb import torch as torch_kb
from fa_lint.machine import by_python, images
from fa_lint.machine.environments import Environment
from fa_lint.machine.series import minors
from fa_lint.model import Image, Kind, Requirement, Uninstall

TORCH = ("torch", "pytorch")  # pytorch: conda's name for it
_ANY = VersionRange.full()
_INSTALLS = (Kind.INSTALL, Kind.OVERRIDE)
# torch's own libraries, versioned with it: installed beside torch far more often than not.
_WITH_TORCH = frozenset({"torchvision", "torchaudio", "torchtext", "torchdata"})


class Source(NamedTuple):
    """One thing that puts torch in place, or limits which torch can be there."""

    says: (
        str  # "torch==2.4.0 (requirements.txt:3:1)"; "vllm==0.6.5 (Dockerfile:14:5), which pins torch==2.5.1"
    )
    torch: VersionRange  # the torch versions it allows
    requirement: Requirement | None = None  # None: a base image
    image: Image | None = None
    step: int = 0


class FinalTorch:
    """What torch an environment ends with. Compared and hashed by identity: a toolchain holding it is a
    cache key, and its sources can be thousands of requirements long. Not changed once made (a plain
    class: see ``Environment``)."""

    __slots__ = ("certain", "conflict", "decided", "installer", "removed", "versions")

    def __init__(
        self,
        versions: VersionRange,  # every torch it can end with (empty with a conflict)
        decided: tuple[Source, ...],  # what decides it, in order: the last one put it in place
        certain: bool = True,  # False: a command that may not run, or an uninstall that may, leaves it open
        conflict: tuple[Source, Source] | None = None,  # two that cannot both hold: the install fails
        removed: Uninstall | None = None,  # a certain uninstall that nothing reinstalls after
        installer: Requirement | None = None,  # what the command that installed it asked for (its index)
    ) -> None:
        self.versions = versions
        self.decided = decided
        self.certain = certain
        self.conflict = conflict
        self.removed = removed
        self.installer = installer

    @property
    def minors(self) -> tuple[str, ...]:
        """The torch major.minor series it can be ("2.5"); empty when it can be any."""
        return () if self.versions.is_superset(_ANY) else _minors(self.versions)

    @property
    def exact(self) -> Version | None:
        """The one torch release it can be, where that is all the knowledge base has in range."""
        if self.versions.is_empty or self.versions.contains(Version("999")):
            return None  # none, or open above: a release made since the knowledge base may install
        found = torch_kb.load().releases_in(self.versions)
        return found[0].version if len(found) == 1 else None

    @property
    def last(self) -> Source | None:
        return self.decided[-1] if self.decided else None


@functools.lru_cache(maxsize=512)
def _minors(rng: VersionRange) -> tuple[str, ...]:
    return minors(rng)


def span(rng: VersionRange, minors: Sequence[str]) -> str:
    """The torch minors a range allows, for a sentence: '2.5', '2.4 or 2.5', '2.3 to 2.6', '2.14 or newer'."""
    if not minors:
        return "any"
    if rng.contains(Version("999")):
        return f"{minors[0]} or newer"
    if len(minors) <= 2:
        return " or ".join(minors)
    return f"{minors[0]} to {minors[-1]}"


@functools.lru_cache(maxsize=1024)
def written(rng: VersionRange) -> str:
    """A range as a reader writes it: '2.5.1', '>=2.14.0', '>=2.4,<2.6'."""
    spec = rng.to_specifier_set() if hasattr(rng, "to_specifier_set") else None
    text = str(spec) if spec is not None else str(rng)
    if text.startswith("==") and "," not in text and "*" not in text:
        return text[2:]
    return text or "any"


def _in_linux(req: Requirement, pythons: Sequence[str]) -> bool:
    return not req.marker or any(torch_kb.holds(req.marker, p, frozenset()) for p in pythons)


def _at_least(kb: torch_kb.TorchKnowledge, rng: VersionRange) -> VersionRange:
    """``rng`` and every torch above it: what a release made after the data can pin instead."""
    found = kb.releases_in(rng)
    return SpecifierSet(f">={found[0].version}").to_range() if found else rng


class _Package(NamedTuple):
    """What installing one requirement of a package that pins torch does to torch."""

    torch: VersionRange  # the torch the release a resolver picks pins
    says: str
    accepts: VersionRange  # every torch some admitted release accepts (for conflicts)


def _package(
    kb: torch_kb.TorchKnowledge, req: Requirement, pythons: Sequence[str], within: VersionRange
) -> _Package | None:
    """The newest release ``req`` admits whose torch fits ``within``, as a resolver picks it (the
    newest of all when none fits: what the conflict is then about).

    None: nothing to say (no release known, unreadable metadata, or it pins no torch at all)."""
    chosen = _choose(kb, req.name, req.version_range, req.extras, tuple(pythons), within)
    if chosen is None:
        return None
    torch, pinned, release, newest, single, accepts = chosen
    if single:
        says = f"{plain(req)}, which pins torch {pinned}"
    else:
        newer = " (its newest release, as of the knowledge base)" if newest else ""
        says = f"{plain(req)}, whose {req.name}=={release}{newer} pins torch {pinned}"
    return _Package(torch, says, accepts)


_Choice = tuple[VersionRange, str, Version, bool, bool, VersionRange]


@functools.lru_cache(maxsize=1024)
def _choose(
    kb: torch_kb.TorchKnowledge,
    name: str,
    rng: VersionRange,
    extras: frozenset[str],
    pythons: tuple[str, ...],
    within: VersionRange,
) -> _Choice | None:
    """_package's work, once per distinct requirement (a large file repeats its lines): the torch the
    chosen release brings, how to write it, the release, whether it is the newest known one and
    newer ones may come, whether the requirement admits that release alone, and every torch it accepts."""
    admitted = kb.admitted(name, rng)
    if not admitted:
        return None
    newer = kb.admits_newer(name, rng)
    chosen: tuple[int, torch_kb.Pick] | None = None
    for i, release in enumerate(admitted):
        got = kb.pick(name, release, extras, pythons, within)
        if not got.known:
            return None
        if got.torch.is_superset(_ANY):
            if i == 0:
                return None  # the newest pins no torch: the package leaves it alone
            continue
        chosen = chosen or (i, got)
        if not got.torch.intersection(within).is_empty:
            chosen = (i, got)
            break
    if chosen is None:
        return None
    i, got = chosen
    torch = _at_least(kb, got.torch) if newer and i == 0 else got.torch
    via = f" through {' -> '.join(got.chain)}" if got.chain else ""
    single = len(admitted) == 1 and not newer
    accepts = kb.accepts(name, rng, extras, pythons)
    return torch, written(got.torch) + via, got.release.version, newer and i == 0, single, accepts


def plain(req: Requirement) -> str:
    """How a source names a requirement: 'torch==2.4.0' (requirements.txt:3:1)."""
    return f"'{req.raw}' ({req.location})"


def _torch_source(req: Requirement) -> Source:
    return Source(plain(req), req.version_range, req, step=req.step)


def _resolve(  # noqa: C901 - complexity 12: one resolve in three passes (torch pins, the packages' ranges, settling) sharing the conflict exit; split, each pass hands back the same three values
    kb: torch_kb.TorchKnowledge,
    torches: Iterable[Requirement],
    packages: Iterable[Requirement],
    pythons: Sequence[str],
    settle: bool = True,
) -> tuple[VersionRange, list[Source], tuple[Source, Source] | None]:
    """One resolve: what its torch requirements and its packages allow together, and a conflict.

    ``settle``: narrow to the releases a resolver takes first (the newest that fit), as a command does
    when it installs them fresh; else keep every torch some admitted release accepts, as a file whose
    install may find some of them in place already. A uv override on torch replaces every other
    requirement on it, the packages' own included."""
    torches = list(torches)
    overrides = [r for r in torches if r.kind is Kind.OVERRIDE]
    if overrides:
        torches, packages = overrides, []
    sources: list[Source] = []
    allowed = _ANY
    for req in torches:
        source = _torch_source(req)
        if allowed.intersection(source.torch).is_empty:
            other = next((s for s in sources if s.torch.intersection(source.torch).is_empty), sources[-1])
            return VersionRange.empty(), [*sources, source], (other, source)
        allowed = allowed.intersection(source.torch)
        sources.append(source)
    picks: list[tuple[Requirement, _Package]] = []
    for req in packages:
        got = _package(kb, req, pythons, allowed)
        if got is not None:
            picks.append((req, got))
    seen: set[int] = set()  # a large file repeats its requirements: each range is met once
    met: list[Source] = []  # the packages met so far: a conflict may be with one of them, not a torch pin
    for req, got in picks:
        if id(got.accepts) in seen:
            continue
        seen.add(id(got.accepts))
        if allowed.is_disjoint(got.accepts):
            return VersionRange.empty(), sources, _conflict([*sources, *met], req, got)
        allowed = allowed.intersection(got.accepts)
        met.append(Source(got.says, got.accepts, req, step=req.step))
    final = allowed
    seen.clear()
    for req, got in picks:
        if settle and id(got.torch) not in seen:
            seen.add(id(got.torch))
            narrowed = final.intersection(got.torch)
            if not narrowed.is_empty:
                final = narrowed
        sources.append(Source(got.says, got.torch if settle else got.accepts, req, step=req.step))
    return final, sources, None


def _conflict(sources: list[Source], req: Requirement, got: _Package) -> tuple[Source, Source]:
    """The two that cannot both hold: ``req`` and the first source whose torch it excludes (else, when
    only all of them together exclude it, the last one met)."""
    mine = Source(got.says, got.accepts, req, step=req.step)
    other = next((s for s in sources if s.torch.intersection(got.accepts).is_empty), None)
    if other is None:
        other = sources[-1] if sources else mine
    return other, mine


def of(env: Environment, pythons: Sequence[str] = ()) -> FinalTorch | None:
    """The torch ``env`` ends with; None when nothing in it says."""
    kb = torch_kb.load()
    pys = tuple(pythons) or torch_kb.PYTHONS
    locked = [r for name in TORCH for r in env.of(name, locked=True) if r.version is not None]
    if locked:
        rng = VersionRange.empty()
        for r in locked:
            rng = rng.union(r.version_range)
        return FinalTorch(rng, tuple(_torch_source(r) for r in locked), installer=locked[0])
    if _sequential(env):
        return _walk(env, kb, pys)
    members = [r for r in env.members if _in_linux(r, pys) and not r.unresolved]
    torches = [r for r in members if r.name in TORCH and r.kind in (*_INSTALLS, Kind.CONSTRAINT)]
    if any(r.name == "torch" for r in torches):  # a conda file: pip's torch replaces conda's pytorch
        torches = [r for r in torches if r.name == "torch"]
    packages = [r for r in members if r.kind in _INSTALLS and kb.knows(r.name)]
    if not torches and not packages:
        return None
    final, sources, conflict = by_python.resolve_each(
        lambda t, p, py: _resolve(kb, t, p, py, settle=False), torches, packages, pys
    )
    if conflict is not None:
        return FinalTorch(final, tuple(sources), conflict=conflict)
    if not sources or final.is_superset(_ANY):
        return None
    installer = next((s.requirement for s in reversed(sources) if s.requirement is not None), None)
    return FinalTorch(final, tuple(sources), installer=installer)


def _sequential(env: Environment) -> bool:
    return bool(env.images or env.removed or any(r.step for r in (*env.members, *env.superseded)))


class _State(NamedTuple):
    torch: VersionRange | None  # None: no torch (after an uninstall, on a bare image); _ANY: unknown
    decided: tuple[Source, ...]
    certain: bool
    # the packages known to be in place (an image's bundle, earlier installs) that the torch knowledge
    # base knows: no other name is ever asked about, and a set of every name installed, copied at each
    # command, made a stage of n commands cost n squared
    installed: frozenset[str]
    removed: Uninstall | None = None
    installer: Requirement | None = None
    conflict: tuple[Source, Source] | None = None
    # whether what was in place before the first command is known (a bare or pytorch/pytorch image);
    # on an unknown machine an unpinned 'pip install torchvision' may find one already there
    bundle_known: bool = False


def _start(env: Environment, kb: torch_kb.TorchKnowledge) -> _State:
    for image in env.images:
        bundled = images.bundled(image)
        shipped = images.image_torch(image) if image.has_torch is not False else None
        if shipped is not None:
            version, says = shipped
            rng = SpecifierSet(f"=={version}").to_range()
            source = Source(says, rng, image=image)
            return _State(rng, (source,), True, bundled | {"torch"}, bundle_known=bool(bundled))
        if image.has_torch:
            return _State(_ANY, (), True, frozenset({"torch"}))
        if image.has_torch is False:
            return _State(None, (), True, frozenset(), bundle_known=True)
    return _State(_ANY, (), True, frozenset())


def before(env: Environment, step: int, pythons: Sequence[str] = ()) -> FinalTorch | None:
    """The torch in place when command ``step`` of a script or stage runs (what a build there sees):
    None when there is none; any version, not certain, when some torch is there but not which."""
    if not _sequential(env):
        return None
    found = _walk(env, torch_kb.load(), tuple(pythons) or torch_kb.PYTHONS, until=step)
    if found is not None:
        return found
    start = _start(env, torch_kb.load())
    if start.torch is None or any(r.step < step and r.name in TORCH for r in (*env.members, *env.superseded)):
        return None  # a bare image, or an unknown torch that a command may have replaced
    return FinalTorch(_ANY, (), certain=False)


def _walk(  # noqa: C901 - complexity 13: the commands in step order folded into one state, then what that state says (conflict, untouched, removed, a range); the module is at its 500-line cap
    env: Environment, kb: torch_kb.TorchKnowledge, pythons: Sequence[str], until: int | None = None
) -> FinalTorch | None:
    state = _start(env, kb)
    reqs = sorted((*env.members, *env.superseded), key=lambda r: r.step)
    events: dict[int, list[Requirement | Uninstall]] = {}
    for r in reqs:
        if not r.unresolved and _in_linux(r, pythons):
            events.setdefault(r.step, []).append(r)
    for u in env.removed:
        events.setdefault(u.step, []).append(u)
    touched = bool(state.decided)
    for step in sorted(events):
        if until is not None and step >= until:
            break
        found = events[step]
        removals = [u for u in found if isinstance(u, Uninstall)]
        installs = [r for r in found if isinstance(r, Requirement)]
        if removals:
            state = _uninstall(state, removals)
            touched = touched or any(u.name in TORCH for u in removals)
        if installs:
            new = _command(state, installs, kb, pythons)
            touched = touched or new is not state
            state = new
            if state.conflict is not None:
                break  # the command fails: a build stops there
    if state.conflict is not None:
        return FinalTorch(VersionRange.empty(), state.decided, state.certain, conflict=state.conflict)
    if not touched or (state.torch is None and state.removed is None):
        return None
    if state.torch is None:
        return FinalTorch(VersionRange.empty(), state.decided, state.certain, removed=state.removed)
    if state.torch.is_superset(_ANY):
        return None
    return FinalTorch(state.torch, state.decided, state.certain, installer=state.installer)


def _pinned(req: Requirement) -> bool:
    return bool(str(req.specifier) or req.version is not None or req.alternatives)


def _uninstall(state: _State, removals: list[Uninstall]) -> _State:
    gone = {u.name for u in removals if not u.possible}
    maybe = {u.name for u in removals if u.possible}
    installed = state.installed - gone - maybe
    if gone & set(TORCH):
        torch = next(u for u in removals if u.name in TORCH and not u.possible)
        return state._replace(torch=None, certain=True, installed=installed, removed=torch, installer=None)
    if maybe & set(TORCH):
        return state._replace(torch=_ANY, certain=False, installed=installed, removed=None)
    return state._replace(installed=installed)


def _command(
    state: _State, installs: list[Requirement], kb: torch_kb.TorchKnowledge, pythons: Sequence[str]
) -> _State:
    """One install command over what is in place."""
    possible = any(r.possible for r in installs)
    no_deps = any(getattr(r.options, "no_deps", False) for r in installs)
    torches = [r for r in installs if r.name in TORCH and r.kind in (*_INSTALLS, Kind.CONSTRAINT)]
    packages = [
        r
        for r in installs
        if r.kind in _INSTALLS
        and r.name not in TORCH
        and kb.knows(r.name)
        and not no_deps
        and not (r.name in state.installed and not r.upgrade and not _pinned(r))
    ]
    # an unpinned torch library on a machine fa-lint cannot see may be there already, installed with
    # its torch (images and environments that have torch mostly have these too): pip keeps it, and the
    # torch it pins; vllm, xformers, sglang... there are installed fresh, at their newest
    possible = possible or (
        not state.bundle_known
        and any(
            not _pinned(r) and not r.upgrade and r.name not in state.installed and r.name in _WITH_TORCH
            for r in packages
        )
    )
    if not torches and not packages:
        # (flash-attn's own metadata requires torch, so with none in place pip would install the newest;
        # but a command fa-lint read nothing from -- an unreadable -r file -- may have put one there)
        return _with(state, installs, kb)
    have = state.torch
    upgrade = any(r.upgrade for r in torches)
    final, sources, conflict = _resolve(kb, torches, packages, pythons)
    if conflict is not None:
        if possible:  # an install that may not run, and fails if it does: what was there stays
            return state
        return state._replace(
            torch=VersionRange.empty(), decided=(*state.decided, *sources), certain=True, conflict=conflict
        )
    keep = have is not None and not have.is_superset(_ANY) and have.is_subset(final) and not upgrade
    if keep:
        return _with(state, installs, kb)
    if have is not None and have.is_superset(_ANY) and not any(r.upgrade for r in installs):
        # pip's default upgrade strategy is only-if-needed: a torch already in place that the command
        # accepts stays ('pip install liger-kernel' keeps any torch>=2.1.2). Which torch is in place is
        # unknown here, so the torch afterwards is known only where the command accepts one release.
        accepts, _, _ = _resolve(kb, torches, packages, pythons, settle=False)
        if not _one_release(kb, accepts):
            return _with(state, installs, kb)
    if torches and final.is_superset(_ANY):
        # 'pip install torch' with nothing in place, or '-U torch': the newest release
        final = _at_least(kb, SpecifierSet(f"=={kb.newest_torch.version}").to_range())
        sources[0] = sources[0]._replace(
            says=f"{sources[0].says}, which installs the newest torch ({kb.newest_torch.version} as of "
            "the knowledge base)",
            torch=final,
        )
    installer = next((s.requirement for s in reversed(sources) if s.requirement is not None), None)
    installed = _with(state, installs, kb).installed | {"torch"}
    decided = (*state.decided, *sources)
    if possible:
        before = have if have is not None else VersionRange.empty()
        return state._replace(
            torch=before.union(final),
            decided=decided,
            certain=False,
            installed=installed,
            removed=None,
            installer=installer,
        )
    return state._replace(
        torch=final, decided=decided, certain=True, installed=installed, removed=None, installer=installer
    )


def _one_release(kb: torch_kb.TorchKnowledge, rng: VersionRange) -> bool:
    """Whether ``rng`` holds one torch release of the knowledge base, and no newer one can come."""
    return not rng.contains(Version("999")) and len(kb.releases_in(rng)) == 1


def _with(state: _State, installs: list[Requirement], kb: torch_kb.TorchKnowledge) -> _State:
    """``state`` with what a command installed in place (the names the knowledge base knows)."""
    known = {r.name for r in installs if kb.knows(r.name)} - state.installed
    return state._replace(installed=state.installed | known) if known else state


def brings_torch(req: Requirement) -> bool:
    """Whether installing ``req`` puts torch in place: torch itself, or a package whose newest
    admitted release requires it (``pip install vllm``, ``pip install deepspeed``), with its
    dependencies (not ``--no-deps``)."""
    if req.name in TORCH:
        return True
    if req.kind not in _INSTALLS or (req.options is not None and req.options.no_deps) or req.unresolved:
        return False
    return req.name in torch_kb.PACKAGES and torch_kb.load().brings_torch(req.name)
