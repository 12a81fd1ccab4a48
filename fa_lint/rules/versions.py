"""FAL001-FAL003, FAL008, FAL009: what one requirement lets an installer pick."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from packaging.version import InvalidVersion, Version

from fa_lint.kb import PAGED_KV, versions
from fa_lint.model import FLASH_ATTN, Finding, Kind, Requirement, Severity
from fa_lint.resolve import Assessment, Verdict, assess_range, intersect
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._fixes import bump_pin, raise_floor
from fa_lint.rules._text import fix, releases, runtime, subject

PAGED_KV_MISSING = Rule(
    "FAL001",
    "paged-kv-missing",
    Severity.ERROR,
    "Every flash-attn release the requirement admits lacks paged KV (block_table).",
)
PAGED_KV_NOT_GUARANTEED = Rule(
    "FAL002",
    "paged-kv-not-guaranteed",
    Severity.WARNING,
    "The requirement admits flash-attn releases both with and without paged KV.",
)
NO_SUCH_RELEASE = Rule(
    "FAL003",
    "no-matching-release",
    Severity.ERROR,
    "The requirement admits no flash-attn release at all.",
)
NEWER_THAN_KB = Rule(
    "FAL008",
    "newer-than-knowledge-base",
    Severity.INFO,
    "The requirement admits only flash-attn versions newer than fa-lint's knowledge base.",
)
VERSION_UNKNOWN = Rule(
    "FAL009",
    "version-not-determinable",
    Severity.INFO,
    "The file does not say which flash-attn version it installs.",
)
RULES = (PAGED_KV_MISSING, PAGED_KV_NOT_GUARANTEED, NO_SUCH_RELEASE, NEWER_THAN_KB, VERSION_UNKNOWN)
PACKAGES = frozenset({FLASH_ATTN, "transformers"})  # the requirements these rules read
# Lock and source entries say what installs; constraints only narrow what something else asks for.
JUDGED = (Kind.INSTALL, Kind.OVERRIDE, Kind.SOURCE, Kind.LOCK)


def check(ctx: Context) -> Iterator[Finding]:
    for req in ctx.requirements:
        if req.name == FLASH_ATTN and req.kind in JUDGED:
            earlier = ctx.satisfied_by(req)
            if earlier is not None and ctx.assessment(earlier).verdict in (Verdict.OK, Verdict.NEWER):
                continue  # a no-op: the good version installed before it stays
            finding = judge(req, ctx.assessment(req), ctx)
            if finding is not None:
                yield finding


def _unique(reqs: Iterable[Requirement]) -> list[Requirement]:
    return list({r.location: r for r in reqs}.values())


def _locked(req: Requirement, ctx: Context) -> list[Requirement]:
    """flash-attn entries of the lockfile that pins this manifest requirement's environments."""
    envs = [e for e in ctx.environments_of(req) if e.holds(req)]
    return _unique(r for env in envs for r in env.of(FLASH_ATTN, locked=True))


def _manifest(req: Requirement, ctx: Context) -> list[Requirement]:
    """The manifest's flash-attn requirements for the environments this lock entry pins."""
    envs = [e for e in ctx.environments_of(req) if e.holds(req, locked=True)]
    return _unique(r for env in envs for r in env.of(FLASH_ATTN))


def judge(req: Requirement, a: Assessment, ctx: Context) -> Finding | None:
    kb, policy = ctx.kb, ctx.policy
    first = kb.first_with(PAGED_KV).version
    fields: dict[str, Any] = {
        "package": FLASH_ATTN,
        "requirement": req.raw,
        "admitted": versions(a.admitted),
        "environment": ctx.environment_name(req),
    }
    what = subject(req)
    if a.verdict is Verdict.BAD:
        old = not a.bad or all(not r.has(PAGED_KV) for r in a.bad)
        if a.exact is not None:
            lacks = "which has no paged KV" if old else f"below the required {policy.min_version}"
            lacks = f"{what}, {lacks}"
        elif len(a.bad) == 1:
            lacks = f"{what} admits only {a.bad[0]}, which " + (
                "has no paged KV" if old else f"is below the required {policy.min_version}"
            )
        else:
            lacks = f"{what} admits only {releases(a.bad)}, " + (
                "none with paged KV" if old else f"all below the required {policy.min_version}"
            )
        newest_bad = a.bad[-1].version if a.bad else a.exact
        breaks = runtime(ctx, req, newest_bad)
        msg = f"{lacks} (block_table first ships in {first}): {breaks}; {fix(req, policy)}"
        better = _better_manifest(req, ctx)
        if better:
            msg += f"; {better}"
        return PAGED_KV_MISSING.finding(req.location, msg, fix=bump_pin(req, kb, policy), **fields)
    if a.verdict is Verdict.MIXED:
        also = f"{releases(a.good)} with it" if a.good else "newer versions"
        msg = (
            f"{what} admits {releases(a.bad)} without paged KV as well as {also}; a resolver can pick an old "
            f"one and then {runtime(ctx, req, a.bad[-1].version)}; {fix(req, policy)}"
        )
        locked = _locked(req, ctx)
        pinned = [ctx.assessment(r) for r in locked]
        if locked and all(p.verdict in (Verdict.OK, Verdict.NEWER) for p in pinned):
            where = ", ".join(f"{r.version} ({r.location})" for r in locked)
            msg += f"; the lock pins {where}, which has paged KV, so installs from the lock are fine"
            fields["severity"] = Severity.INFO
        fields["fix"] = raise_floor(req, kb, policy)
        return PAGED_KV_NOT_GUARANTEED.finding(req.location, msg, **fields)
    if a.verdict is Verdict.NONE:
        near = _nearest(req, ctx)
        msg = (
            f"{what} matches no flash-attn release, so installing fails with 'No matching distribution "
            f"found'{near}; {fix(req, policy)}"
        )
        return NO_SUCH_RELEASE.finding(req.location, msg, **fields)
    if a.verdict is Verdict.NEWER:
        msg = (
            f"{what} is newer than fa-lint's knowledge base (newest known: {kb.newest}, as of "
            f"{kb.date}); assumed to keep paged KV, as every release since {first} has"
        )
        return NEWER_THAN_KB.finding(req.location, msg, **fields)
    if a.verdict is Verdict.UNKNOWN:
        why = (
            f"it depends on {req.unresolved}, which the file does not set"
            if req.unresolved
            else "the URL names no release tag or file version"
        )
        msg = (
            f"cannot tell which flash-attn version this installs: {why}; pin a release "
            f"(flash-attn>={policy.min_version}) or a tag (@v{policy.min_version})"
        )
        return VERSION_UNKNOWN.finding(req.location, msg, **fields)
    return None


def _better_manifest(req: Requirement, ctx: Context) -> str:
    """For an old lock entry: the manifest already allows a release with paged KV."""
    if req.kind is not Kind.LOCK:
        return ""
    manifest = [r for r in _manifest(req, ctx) if r.kind is not Kind.CONSTRAINT]
    if not manifest:
        return ""
    good = assess_range(intersect(manifest), ctx.kb, ctx.policy).good
    if not good:
        return ""
    written = ", ".join(f"'{r.raw}' ({r.location})" for r in manifest)
    return f"the manifest's {written} already allows {good[0]} or later, so relocking is enough"


def _nearest(req: Requirement, ctx: Context) -> str:
    """Releases around the (single) version the requirement names: 'did you mean 2.6.0.post1?'."""
    pinned = [s.version for s in req.specifier if s.operator in ("==", "===")]
    if not pinned:
        return ""
    try:
        target = Version(pinned[0].removesuffix(".*"))
    except InvalidVersion:
        return ""
    same = [r for r in ctx.kb.installable if r.version.release[:3] == target.release[:3]]
    if same:
        return f" (did you mean {releases(same)}?)"
    below = [r for r in ctx.kb.installable if r.version < target]
    above = [r for r in ctx.kb.installable if r.version > target]
    around = [str(x[i]) for x, i in ((below, -1), (above, 0)) if x]
    return f" (nearest releases: {' and '.join(around)})" if around else ""
