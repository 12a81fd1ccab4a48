"""FAL004 and FAL006: what an environment's requirements, taken together, let an installer pick."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.ranges import VersionRange
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from fa_lint.kb import PAGED_KV
from fa_lint.kb.assess import Assessment, Verdict, assess_range, build_range, intersect
from fa_lint.machine.environments import Environment, source_applies, split
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


def splits(reqs: tuple[Requirement, ...]) -> list[tuple[str | None, list[Requirement]]]:
    """Environment markers split an environment instead of being evaluated on this machine.

    Requirements without a marker belong to every part; one part per distinct marker.
    """
    plain = [r for r in reqs if not r.marker]
    markers = list(dict.fromkeys(r.marker for r in reqs if r.marker))
    if not markers:
        return [(None, plain)]
    return [(m, [*plain, *(r for r in reqs if r.marker == m)]) for m in markers]


def participants(reqs: list[Requirement]) -> list[Requirement]:
    """What the resolver combines: an override replaces every other request for the package."""
    if any(r.kind is Kind.OVERRIDE for r in reqs):
        return [r for r in reqs if r.kind in (Kind.OVERRIDE, Kind.CONSTRAINT)]
    return [r for r in reqs if r.kind in (*_ASKS, Kind.CONSTRAINT)]


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


def _combined(env: Environment, ctx: Context, reported: set[Location]) -> Iterator[Finding]:
    for marker, reqs in splits(env.of(FLASH_ATTN)):
        # an install that may not run is judged on its own, never combined with the others
        group = _replaced([r for r in participants(reqs) if not r.unresolved and not r.possible], marker)
        asks = [r for r in group if r.kind in _ASKS]
        if len(group) < 2 or not asks or any(r.location in reported for r in group):
            continue
        a = _together(group, ctx)
        if a.verdict not in (Verdict.BAD, Verdict.NONE):
            continue
        primary = asks[0]
        others = [r for r in group if r is not primary]
        where = env.name + (f" ; {marker}" if marker else "")
        yield ENVIRONMENT_PAGED_KV_MISSING.finding(
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


def _replaced(group: list[Requirement], marker: str | None) -> list[Requirement]:
    """Where a ``[tool.uv.sources]`` entry's marker holds, uv takes the requirement it applies to from
    that source, whatever the requirement's own specifier: its lowering turns the requirement into the
    source (uv 0.12.5:crates/uv-distribution/src/metadata/lowering.rs:162-178, 185-310; a URL source
    keeps no specifier, lowering.rs:750-786, and requirement.rs:542-543 leaves checking that the URL's
    version matches it to do). So in that marker's part the requirement is not combined with it."""
    sources = [r for r in group if r.kind is Kind.SOURCE and r.marker == marker and r.scope.startswith("uv:")]
    if marker is None or not sources:
        return group
    return [
        r
        for r in group
        if not (r.kind is Kind.INSTALL and not r.marker and any(source_applies(s, r) for s in sources))
    ]


def _together(group: list[Requirement], ctx: Context) -> Assessment:
    """What a group of requirements admits together, worked out once for each set of versions they
    say (the services of a monorepo repeat the same pins in every environment)."""
    found = _TOGETHER.of(ctx)
    key = tuple((r.version, r.alternatives, r.specifier) for r in group)  # what version_range reads
    if key not in found:
        found[key] = assess_range(intersect(group), ctx.kb, ctx.policy)
    return found[key]


_Said = tuple[Version | None, tuple[SpecifierSet, ...], SpecifierSet]  # what a requirement's range reads
_TOGETHER: Memo[tuple[_Said, ...], Assessment] = Memo()


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
    sources = [r for r in manifest if r.kind is Kind.SOURCE]
    asks = tuple(r for r in manifest if r.kind is not Kind.SOURCE)
    ranges = [_asked(participants(reqs), sources) for _, reqs in splits(asks)]
    urls = {_same_file(r.url): r for r in manifest if r.url}
    return manifest, [
        (e, _from_url(e, urls) or any(rng.contains(e.version) for rng in ranges if e.version)) for e in locked
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


def _asked(reqs: list[Requirement], sources: list[Requirement]) -> VersionRange:
    """What a manifest lets its lock hold: every requirement at once, each through the sources that
    apply to it. A uv source replaces where the requirement comes from (uv's lowering.rs): one
    without a marker always; one with a marker where it holds, the index elsewhere (``remaining``);
    one for an extra or group only for what that extra or group lists. Markers are not evaluated, so a
    requirement with marked sources may be any of them, or what the index gives. Any other source
    (a Poetry or Pipfile table) is the requirement itself, and always applies."""
    rng = VersionRange.full()
    uv = [s for s in sources if s.scope.startswith("uv:sources")]
    for req in reqs:
        if req.kind is Kind.SOURCE:
            continue
        own = build_range(req)
        applying = (
            [s for s in uv if source_applies(s, req)] if req.kind in (Kind.INSTALL, Kind.OVERRIDE) else []
        )
        if applying:
            each = [own.intersection(build_range(s)) for s in applying]
            if all(s.marker for s in applying):
                each.append(own)  # where no source's marker holds, uv takes the index
            own = each[0]
            for alternative in each[1:]:
                own = own.union(alternative)
        rng = rng.intersection(own)
    for source in sources:
        if source not in uv:
            rng = rng.intersection(build_range(source))
    return rng
