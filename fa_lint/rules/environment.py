"""FAL004 and FAL006: what an environment's requirements, taken together, let an installer pick."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from packaging.ranges import VersionRange

from fa_lint._records import NamedTuple
from fa_lint.kb import PAGED_KV
from fa_lint.kb.assess import Assessment, Verdict, assess_range, build_range, intersect_all, union_all
from fa_lint.machine.environments import Environment, Sources, split
from fa_lint.model import FLASH_ATTN, Finding, Kind, Location, Requirement, Severity
from fa_lint.rules import _text
from fa_lint.rules._base import Context, Memo, Rule
from fa_lint.rules._text import breaks, count, fit, quoted, releases, relock_all, subject
from fa_lint.rules.versions import JUDGED
from fa_lint.syntax.pep508 import unquote

ENVIRONMENT_PAGED_KV_MISSING = Rule(
    "FAL004",
    "environment-paged-kv-missing",
    Severity.ERROR,
    "The combined flash-attn requirements of one environment admit no release with paged KV.",
)
STALE_LOCK = Rule(
    "FAL006",
    "stale-lock",
    Severity.WARNING,
    "A lockfile pins a flash-attn version that its manifest no longer admits.",
)
RULES = (ENVIRONMENT_PAGED_KV_MISSING, STALE_LOCK)
PACKAGES = frozenset({FLASH_ATTN}) | _text.PACKAGES  # the requirements these rules read (notes: transformers)
_ASKS = (Kind.INSTALL, Kind.OVERRIDE, Kind.SOURCE)


def _by_marker(reqs: Iterable[Requirement]) -> tuple[list[Requirement], dict[str | None, list[Requirement]]]:
    """Environment markers split an environment instead of being evaluated on this machine: the
    requirements without a marker belong to every part, and there is one part per distinct marker
    (one part of none when there is no marker). Grouped in one pass: each part's own requirements
    apart from the shared ones, so that a part costs its own, not the shared ones again."""
    plain: list[Requirement] = []
    marked: dict[str | None, list[Requirement]] = {}
    for r in reqs:
        if r.marker:
            marked.setdefault(r.marker, []).append(r)
        else:
            plain.append(r)
    return plain, marked or {None: []}


def _participants(reqs: list[Requirement], overridden: bool) -> list[Requirement]:
    """What the resolver combines: an override (in any part of the split: ``overridden``) replaces
    every other request for the package."""
    if overridden:
        return [r for r in reqs if r.kind in (Kind.OVERRIDE, Kind.CONSTRAINT)]
    return [r for r in reqs if r.kind in (*_ASKS, Kind.CONSTRAINT)]


def _overrides(reqs: list[Requirement]) -> bool:
    return any(r.kind is Kind.OVERRIDE for r in reqs)


def check(ctx: Context) -> Iterator[Finding]:
    reported = {
        r.location
        for r in ctx.requirements
        if r.name == FLASH_ATTN
        and r.kind in JUDGED
        and ctx.assessment(r).verdict in (Verdict.BAD, Verdict.NONE)
    }
    # a uv project with [tool.uv] conflicts resolves its conflicting extras or groups apart, into the
    # one lock: an entry is stale only when no environment of the manifest admits it
    forked = {b.location.path for b in ctx.builds if b.tool == "uv" and b.conflicts}
    judged = [(env, *_judged(env)) for env in ctx.environments]
    somewhere = {
        id(e) for env, _, entries in judged if split(env.name)[0] in forked for e, ok in entries if ok
    }
    told: set[int] = set()
    for env, manifest, entries in judged:
        yield from _combined(env, ctx, reported)
        forks = split(env.name)[0] in forked
        for entry, ok in entries:
            if ok or (forks and (id(entry) in somewhere or id(entry) in told)):
                continue
            told.add(id(entry))
            yield _stale(env, entry, manifest)


class _Part(NamedTuple):
    """The requirements of one part of a split that the resolver combines (``_participants``), less an
    install that may not run (judged on its own, never combined with the others)."""

    group: list[Requirement]
    asks: list[Requirement]
    reported: bool  # one of them has a finding of its own already

    @classmethod
    def of(cls, reqs: list[Requirement], overridden: bool, reported: set[Location]) -> _Part:
        group = [r for r in _participants(reqs, overridden) if not r.unresolved and not r.possible]
        asks = [r for r in group if r.kind in _ASKS]
        return cls(group, asks, any(r.location in reported for r in group))


def _combined(env: Environment, ctx: Context, reported: set[Location]) -> Iterator[Finding]:
    plain, marked = _by_marker(env.of(FLASH_ATTN))
    # the requirements without a marker, once for each kind of part (overridden, the uv sources'
    # scopes that take some of them over), not once a marker
    shared: dict[tuple[bool, frozenset[str]], tuple[_Part, VersionRange]] = {}
    plain_overrides = _overrides(plain)
    for marker, reqs in marked.items():
        overridden = plain_overrides or _overrides(reqs)
        own = _Part.of(reqs, overridden, reported)
        sources = _taking(own.group, marker)
        key = (overridden, frozenset(s.scope for s in sources))
        if key not in shared:
            part = _Part.of(_replaced(plain, sources), overridden, reported)
            shared[key] = (part, intersect_all(r.version_range for r in part.group))
        common, rng = shared[key]
        asks = common.asks or own.asks  # the first is the finding's
        if len(common.group) + len(own.group) < 2 or not asks or common.reported or own.reported:
            continue
        a = _together(rng.intersection(intersect_all(r.version_range for r in own.group)), ctx)
        if a.verdict in (Verdict.BAD, Verdict.NONE):
            yield _environment_finding(env, marker, common.group + own.group, asks[0], a, ctx)


def _taking(group: list[Requirement], marker: str | None) -> list[Requirement]:
    """The ``[tool.uv.sources]`` entries of a marker's part that take over the requirements without a
    marker they apply to (``_replaced``)."""
    if marker is None:
        return []
    return [r for r in group if r.kind is Kind.SOURCE and r.marker == marker and r.scope.startswith("uv:")]


def _replaced(plain: list[Requirement], sources: list[Requirement]) -> list[Requirement]:
    """Where a ``[tool.uv.sources]`` entry's marker holds, uv takes the requirement it applies to from
    that source, whatever the requirement's own specifier: its lowering turns the requirement into the
    source (uv 0.12.5:crates/uv-distribution/src/metadata/lowering.rs:162-178, 185-310; a URL source
    keeps no specifier, lowering.rs:750-786, and requirement.rs:542-543 leaves checking that the URL's
    version matches it to do). So in that marker's part the requirement is not combined with it."""
    if not sources:
        return plain
    applying = Sources(sources)
    return [r for r in plain if not (r.kind is Kind.INSTALL and applying.any_applies(r))]


def _environment_finding(
    env: Environment,
    marker: str | None,
    group: list[Requirement],
    primary: Requirement,
    a: Assessment,
    ctx: Context,
) -> Finding:
    others = [r for r in group if r is not primary]
    where = env.name + (f" ; {marker}" if marker else "")
    return ENVIRONMENT_PAGED_KV_MISSING.finding(
        primary.location,
        _headline(primary, len(others), a, ctx),
        package=FLASH_ATTN,
        requirement=primary.raw,
        admitted=tuple(str(r) for r in a.admitted),
        environment=where,
        related=tuple(r.location for r in others),
        notes=tuple(_notes(primary, group, where, a, ctx)),
        help=f"let them admit flash-attn>={ctx.policy.min_version}: usually a constraint holds an old "
        "upper bound or exclusion that should go",
    )


def _together(rng: VersionRange, ctx: Context) -> Assessment:
    """What a group of requirements admits together, assessed once for each range (the services of a
    monorepo repeat the same pins in every environment)."""
    found = _TOGETHER.of(ctx)
    if rng not in found:
        found[rng] = assess_range(rng, ctx.kb, ctx.policy)
    return found[rng]


_TOGETHER: Memo[VersionRange, Assessment] = Memo()


def _headline(primary: Requirement, others: int, a: Assessment, ctx: Context) -> str:
    template, parts = subject(primary)
    also = f"{others} other requirement{'s' if others > 1 else ''}"
    if a.verdict is Verdict.NONE:
        result = "admit no flash-attn release at all"
    elif all(not r.has(PAGED_KV) for r in a.bad):
        result = f"admit only {count(a.bad)}, none with paged KV"
    else:
        result = f"admit only {count(a.bad)}, all below the required {ctx.policy.min_version}"
    return fit(f"{template} and {also} {result}; allow flash-attn>={ctx.policy.min_version}", **parts)


def _notes(
    primary: Requirement, group: list[Requirement], where: str, a: Assessment, ctx: Context
) -> list[str]:
    together = " and ".join(quoted(r) for r in group)
    notes = [f"together in {where}: {together}; no one line is wrong on its own"]
    if a.verdict is Verdict.NONE:
        return [*notes, "the resolver fails: no release satisfies them all (pip's ResolutionImpossible)"]
    if len(a.bad) > 2:
        notes.append(f"they admit {releases(a.bad)}")
    if all(not r.has(PAGED_KV) for r in a.bad):
        return notes + breaks(ctx, primary, a.bad[-1])
    return notes


def _judged(env: Environment) -> tuple[list[Requirement], list[tuple[Requirement, bool]]]:
    """FAL006's question for one environment: what its manifest asks for flash-attn, and whether each
    lock entry is a version it admits. Both sides are compared as PEP 440 compares them, local labels
    included: a lock entry ``2.8.3+cu.13.0.torch.2.11`` (custom indexes publish such builds) is what
    ``==2.8.3+cu.13.0.torch.2.11`` and ``==2.8.3`` ask for, and not what ``==2.8.3+cu12`` asks for."""
    locked = [r for r in env.of(FLASH_ATTN, locked=True) if r.version is not None]
    manifest = [r for r in env.of(FLASH_ATTN) if r.kind in (*_ASKS, Kind.CONSTRAINT) and not r.unresolved]
    if not locked or not manifest:
        return manifest, []
    through = _Through([r for r in manifest if r.kind is Kind.SOURCE])
    plain, marked = _by_marker(r for r in manifest if r.kind is not Kind.SOURCE)
    shared: dict[bool, VersionRange] = {}
    ranges, plain_overrides = [], _overrides(plain)
    for reqs in marked.values():
        overridden = plain_overrides or _overrides(reqs)
        if overridden not in shared:
            shared[overridden] = through.asked(_participants(plain, overridden))
        ranges.append(shared[overridden].intersection(through.asked(_participants(reqs, overridden))))
    admitted = union_all(ranges)  # any part's: markers are not evaluated
    urls = {_same_file(r.url): r for r in manifest if r.url}
    return manifest, [
        (e, _from_url(e, urls) or admitted.contains(e.version)) for e in locked if e.version is not None
    ]


def _same_file(url: str) -> str:
    """A URL as lockers and manifests may both write it: ``%2B`` for ``+``, a ``#sha256=`` fragment."""
    return unquote(url.split("#", 1)[0].strip()).rstrip("/")


def _from_url(entry: Requirement, urls: dict[str, Requirement]) -> bool:
    """Whether a lock entry is what a URL requirement of the manifest asks for: its source is that URL
    (Poetry records ``flash_attn-2.6.1+cu118torch2.3...whl`` as ``version = "2.6.1"`` with the URL in
    ``[package.source]``). An entry from an index (no URL: uv's ``source = { registry = ... }``) is not
    the URL's file, whatever its version: the lock is stale."""
    return entry.url is not None and _same_file(entry.url) in urls


def _stale(env: Environment, entry: Requirement, manifest: list[Requirement]) -> Finding:
    version = entry.version
    assert version is not None
    action = relock_all(entry.tool)
    notes = (
        f"the manifest asks for {', '.join(quoted(r) for r in manifest)}",
        f"installs from the lock still get {version} and ignore the manifest until it is relocked",
    )
    headline = fit(
        f"the lock pins flash-attn {{v}}, which the manifest no longer admits; {action}",
        v=str(version),
    )
    return STALE_LOCK.finding(
        entry.location,
        headline,
        package=FLASH_ATTN,
        requirement=entry.raw,
        admitted=(str(version),),
        environment=env.name,
        related=tuple(r.location for r in manifest),
        notes=notes,
        help=action,
    )


class _Through:
    """What a manifest lets its lock hold: every requirement at once, each through the sources that
    apply to it. A uv source replaces where the requirement comes from (uv's lowering.rs): one
    without a marker always; one with a marker where it holds, the index elsewhere. Markers are not
    evaluated, so a requirement with sources that all have a marker may be any of them or what the
    index gives -- which is all its own range admits anyway -- and one with an unmarked source among
    them is its own range within theirs. A source for an extra or group applies only to what that
    extra or group lists. Any other source (a Poetry or Pipfile table) is the requirement itself, and
    always applies. The sources of each scope are combined once (not once a requirement)."""

    def __init__(self, sources: list[Requirement]) -> None:
        self.uv = Sources(s for s in sources if s.scope.startswith("uv:sources"))
        self.rest = intersect_all(build_range(s) for s in sources if not s.scope.startswith("uv:sources"))
        self.scopes: dict[str, VersionRange | None] = {}  # what the sources of a scope allow; None: anything

    def asked(self, reqs: list[Requirement]) -> VersionRange:
        return intersect_all([*(self._own(r) for r in reqs if r.kind is not Kind.SOURCE), self.rest])

    def _own(self, req: Requirement) -> VersionRange:
        own = build_range(req)
        if req.kind not in (Kind.INSTALL, Kind.OVERRIDE):
            return own
        if req.scope not in self.scopes:
            applying = self.uv.applying(req)
            marked = all(s.marker for s in applying)
            self.scopes[req.scope] = None if marked else union_all(build_range(s) for s in applying)
        sources = self.scopes[req.scope]
        return own if sources is None else own.intersection(sources)
