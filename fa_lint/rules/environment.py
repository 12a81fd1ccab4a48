"""FAL004 and FAL006: what an environment's requirements, taken together, let an installer pick."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.environments import Environment
from fa_lint.kb import PAGED_KV
from fa_lint.model import FLASH_ATTN, Finding, Kind, Location, Requirement, Severity
from fa_lint.resolve import Verdict, assess_range, intersect
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._text import RELOCK_ALL, releases, runtime, subject
from fa_lint.rules.versions import JUDGED

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
PACKAGES = frozenset({FLASH_ATTN, "transformers"})  # the requirements these rules read
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
    for env in ctx.environments:
        yield from _combined(env, ctx, reported)
        yield from _stale(env, ctx)


def _combined(env: Environment, ctx: Context, reported: set[Location]) -> Iterator[Finding]:
    for marker, reqs in splits(env.of(FLASH_ATTN)):
        group = [r for r in participants(reqs) if not r.unresolved]
        asks = [r for r in group if r.kind in _ASKS]
        if len(group) < 2 or not asks or any(r.location in reported for r in group):
            continue
        a = assess_range(intersect(group), ctx.kb, ctx.policy)
        if a.verdict not in (Verdict.BAD, Verdict.NONE):
            continue
        primary = asks[0]
        others = [r for r in group if r is not primary]
        together = " and ".join(f"{subject(r)} ({r.location})" for r in group)
        where = env.name + (f" ; {marker}" if marker else "")
        if a.verdict is Verdict.NONE:
            result = "admit no flash-attn release at all, so the resolver fails (ResolutionImpossible)"
        else:
            result = f"admit only {releases(a.bad)}, " + (
                "none with paged KV"
                if all(not r.has(PAGED_KV) for r in a.bad)
                else f"all below the required {ctx.policy.min_version}"
            )
            result += f": {runtime(ctx, primary, a.bad[-1].version)}"
        msg = (
            f"in {where}, {together} together {result}; let them admit flash-attn>={ctx.policy.min_version} "
            f"(no one line is wrong on its own)"
        )
        yield ENVIRONMENT_PAGED_KV_MISSING.finding(
            primary.location,
            msg,
            package=FLASH_ATTN,
            requirement=primary.raw,
            admitted=tuple(str(r) for r in a.admitted),
            environment=where,
            related=tuple(r.location for r in others),
        )


def _stale(env: Environment, ctx: Context) -> Iterator[Finding]:
    locked = [r for r in env.of(FLASH_ATTN, locked=True) if r.version is not None]
    manifest = [r for r in env.of(FLASH_ATTN) if r.kind in (*_ASKS, Kind.CONSTRAINT) and not r.unresolved]
    if not locked or not manifest:
        return
    ranges = [intersect(participants(reqs)) for _, reqs in splits(tuple(manifest))]
    for entry in locked:
        version = entry.version
        assert version is not None
        if any(rng.contains(version.public) for rng in ranges):
            continue
        written = ", ".join(f"'{r.raw}' ({r.location})" for r in manifest)
        command = RELOCK_ALL.get(entry.tool or "", "relock")
        msg = (
            f"the lock pins flash-attn {version.public}, which {written} no longer admits: the lock is stale "
            f"and installs from it ignore the manifest; run `{command}`"
        )
        yield STALE_LOCK.finding(
            entry.location,
            msg,
            package=FLASH_ATTN,
            requirement=entry.raw,
            admitted=(str(version.public),),
            environment=env.name,
            related=tuple(r.location for r in manifest),
        )
