"""FAL001-FAL003, FAL008, FAL009: what one requirement lets an installer pick."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from packaging.version import InvalidVersion, Version

from fa_lint.kb import PAGED_KV, Release, versions
from fa_lint.kb.assess import Assessment, Policy, Verdict, assess_range, intersect
from fa_lint.machine import toolchain
from fa_lint.machine.environments import Environment, Sources
from fa_lint.model import FLASH_ATTN, Finding, Fix, Kind, Requirement, Severity
from fa_lint.rules import _text
from fa_lint.rules._base import About, Context, Memo, Rule, exact, once
from fa_lint.rules._code import code_note
from fa_lint.rules._fixes import bump_pin, cap, capped, floor_for, raise_floor, target, why
from fa_lint.rules._rocm import on_rocm, refusal, upstream
from fa_lint.rules._text import breaks, count, fit, fix, help_for, quoted, releases, subject

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
    also=(Severity.INFO,),  # where the lock beside it pins a release with paged KV
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
# The requirements these rules read: their notes name transformers, their fixes pick a release with a
# wheel for the environment's toolchain.
PACKAGES = frozenset({FLASH_ATTN}) | _text.PACKAGES | toolchain.PACKAGES
# Lock and source entries say what installs; constraints only narrow what something else asks for.
JUDGED = (Kind.INSTALL, Kind.OVERRIDE, Kind.SOURCE, Kind.LOCK)


def check(ctx: Context) -> Iterator[Finding]:
    judged: set[tuple[object, ...]] = set()
    overrides = _override_steps(ctx)
    for req in ctx.requirements:
        if req.name == FLASH_ATTN and req.kind in JUDGED:
            once = (req.location, req.raw, req.kind)
            if once in judged:
                # The same line again: a PEP 735 group's line is a record in each group that includes
                # it. Its environments, and so its finding, are the line's (found by location), and
                # only one finding a location is kept: judging each record cost records x environments.
                continue
            judged.add(once)
            if _sourced(req, ctx):
                continue  # uv takes it from a source, which is judged for what it installs
            if overrides and _overridden(req, ctx, overrides):
                continue  # an override replaces its specifier, and is judged for what it installs
            earlier = ctx.satisfied_by(req)
            if earlier is not None and ctx.assessment(earlier).verdict in (Verdict.OK, Verdict.NEWER):
                continue  # a no-op: the good version installed before it stays
            here = _rocm(req, ctx) or ctx
            if here is not ctx and refusal(ctx, req) is not None:
                continue  # its ROCm build refuses the archs the files target: FAL013 says so, not FAL001
            finding = judge(req, here.assessment(req), here)
            if finding is not None:
                yield finding


def _rocm(req: Requirement, ctx: Context) -> Context | None:
    """The rules' context for a requirement every install of which lands on a ROCm torch: its floor is
    the release whose Composable Kernel backend has paged KV (fa_lint/kb/rocm.json), and so are its
    fixes. A source build (a fork's tag, a checkout) is its own code: judged as it is."""
    if req.build is not None or req.checkout is not None or not upstream(req.url):
        return None
    envs = ctx.environments_of(req)
    if not envs or not all(on_rocm(ctx, env) for env in envs):
        return None
    return _on_rocm(ctx)


@once
def _on_rocm(ctx: Context) -> Context:
    from fa_lint.kb import rocm  # for ROCm installs only

    facts = rocm.load()
    floor = max(ctx.policy.min_version, facts.paged_kv_since)
    return ctx.replace(Policy(floor, rocm=f"{facts.paged_kv_since}: {facts.evidence}"))


def _sourced(req: Requirement, ctx: Context) -> bool:
    """A requirement every install of which uv takes from a ``[tool.uv.sources]`` entry without a
    marker (one with a marker leaves the index elsewhere): the requirement's own range installs
    nothing the source does not say."""
    if req.kind not in (Kind.INSTALL, Kind.OVERRIDE) or req.source != "pyproject":
        return False
    envs = [e for e in ctx.environments_of(req) if e.holds(req)]
    return bool(envs) and all(_unmarked_sources(env, ctx).any_applies(req) for env in envs)


def _unmarked_sources(env: Environment, ctx: Context) -> Sources:
    """An environment's uv sources of flash-attn without a marker, indexed once (not once a requirement)."""
    found = _UNMARKED.of(ctx)
    if env not in found:
        found[env] = Sources(
            s
            for s in env.of(FLASH_ATTN)
            if s.kind is Kind.SOURCE and s.scope.startswith("uv:sources") and not s.marker
        )
    return found[env]


_UNMARKED: Memo[Environment, Sources] = Memo()


def _override_steps(ctx: Context) -> set[tuple[str, int]]:
    """Each script environment's commands that override flash-attn (``uv pip install --override FILE``,
    ``UV_OVERRIDE``, an override without a marker): its name and the command's step. Gathered once,
    so that a stage of many installs is not searched once an install."""
    return {
        (env.name, o.step)
        for env in ctx.environments
        for o in (*env.of(FLASH_ATTN), *env.superseded)
        if o.kind is Kind.OVERRIDE and o.step and o.name == FLASH_ATTN and not o.marker
    }


def _overridden(req: Requirement, ctx: Context, overrides: set[tuple[str, int]]) -> bool:
    """A script's request that an override file of the same command replaces in every install of
    it: uv never reads the request's own specifier, and the words exist nowhere else. A manifest's
    requirement is judged even where its own overrides replace it (uv's override-dependencies, PDM's
    resolution overrides): they apply to uv's or PDM's resolution only, and the project's metadata,
    which pip installs from, keeps the requirement as written."""
    if req.kind is not Kind.INSTALL or not req.step:
        return False
    envs = ctx.environments_of(req)  # a later command's install may have superseded it since
    return bool(envs) and all((env.name, req.step) in overrides for env in envs)


def _unique(reqs: Iterable[Requirement]) -> list[Requirement]:
    return list({r.location: r for r in reqs}.values())


def _locked(req: Requirement, ctx: Context) -> tuple[list[Requirement], bool]:
    """flash-attn entries of the lockfile that pins this manifest requirement's environments, and
    whether each has paged KV: once per set of environments (every requirement of a manifest shares
    one), not once a requirement (entries x lock entries)."""
    envs = tuple(e for e in ctx.environments_of(req) if e.holds(req))
    found = _LOCKED.of(ctx)
    if envs not in found:
        locked = _unique(r for env in envs for r in env.of(FLASH_ATTN, locked=True))
        good = all(ctx.assessment(r).verdict in (Verdict.OK, Verdict.NEWER) for r in locked)
        found[envs] = (locked, good)
    return found[envs]


_LOCKED: Memo[tuple[Environment, ...], tuple[list[Requirement], bool]] = Memo()


def _manifest(req: Requirement, ctx: Context) -> tuple[list[Requirement], Release | None]:
    """The manifest's flash-attn requirements (not constraints) for the environments this lock entry
    pins, and the first good release they allow together: once per set of environments."""
    envs = tuple(e for e in ctx.environments_of(req) if e.holds(req, locked=True))
    found = _MANIFEST.of(ctx)
    if envs not in found:
        manifest = [
            r for r in _unique(r for env in envs for r in env.of(FLASH_ATTN)) if r.kind is not Kind.CONSTRAINT
        ]
        good = assess_range(intersect(manifest), ctx.kb, ctx.policy).good if manifest else ()
        found[envs] = (manifest, good[0] if good else None)
    return found[envs]


_MANIFEST: Memo[tuple[Environment, ...], tuple[list[Requirement], Release | None]] = Memo()


def judge(req: Requirement, a: Assessment, ctx: Context) -> Finding | None:
    fields: About = {
        "package": FLASH_ATTN,
        "requirement": req.raw,
        "admitted": versions(a.admitted),
        "environment": ctx.environment_name(req),
    }
    # The release to move to: the first good one every other requirement of the environment admits,
    # with a prebuilt wheel for its torch/CPython/CUDA when fa-lint knows them.
    # (FAL002's fix raises the floor of the requirement, which keeps its other bounds.)
    to = (
        target(req, ctx, a.verdict is Verdict.MIXED)
        if a.verdict in (Verdict.BAD, Verdict.MIXED, Verdict.NONE)
        else None
    )
    if a.verdict is Verdict.BAD:
        return _missing(req, a, ctx, fields, to)
    if a.verdict is Verdict.MIXED:
        return _mixed(req, a, ctx, fields, to)
    policy, kb = ctx.policy, ctx.kb
    template, parts = subject(req)
    if a.verdict is Verdict.NONE:
        least = floor_for(to, ctx)
        headline = fit(
            f"{template} matches no flash-attn release{_nearest(req, ctx)}; {fix(req, policy, least)}",
            **parts,
        )
        notes = ("installing it fails with 'No matching distribution found' (or the resolver's equivalent)",)
        return NO_SUCH_RELEASE.finding(
            req.location, headline, notes=notes, help=help_for(req, policy, least), **fields
        )
    if a.verdict is Verdict.NEWER:
        headline = fit(
            f"{template} is newer than fa-lint's knowledge base (newest known: {kb.newest})", **parts
        )
        notes = (
            f"assumed to keep paged KV, as every release since {kb.first_with(PAGED_KV)} has; the knowledge "
            f"base lists the releases on PyPI as of {kb.date}",
        )
        help = "upgrade fa-lint for a newer knowledge base (`fa-lint --version` shows its date)"
        return NEWER_THAN_KB.finding(req.location, headline, notes=notes, help=help, **fields)
    if a.verdict is Verdict.UNKNOWN:
        return _unknown(req, ctx, fields)
    return None


def _missing(req: Requirement, a: Assessment, ctx: Context, fields: About, to: Release | None) -> Finding:
    """FAL001: nothing the requirement admits has paged KV (or reaches --min-version)."""
    kb, policy = ctx.kb, ctx.policy
    least = floor_for(to, ctx)
    template, parts = subject(req)
    old = not a.bad or all(not r.has(PAGED_KV) for r in a.bad)
    lacks = f"has no paged KV (block_table ships in {kb.first_with(PAGED_KV)})"
    below = f"is below the required {policy.min_version}"
    if policy.rocm:  # every release below the ROCm floor lacks paged KV there, 2.5.0 to 2.6.3 too
        old, lacks = True, f"has no paged KV on ROCm (it ships there in {policy.min_version})"
    if a.exact is not None or exact(req) is not None:
        what = lacks if old else below
    elif len(a.bad) == 1:
        what = f"admits only {a.bad[0]}, which " + (lacks if old else below)
    else:
        what = f"admits only {count(a.bad)}, " + (
            "none with paged KV" if old else f"all below the required {policy.min_version}"
        )
    headline = fit(f"{template} {what}; {fix(req, policy, least)}", **parts)
    notes = []
    if len(a.bad) > 2:
        notes.append(f"it admits {releases(a.bad)}")
    newest = a.bad[-1] if a.bad else None
    if policy.rocm:
        notes += [_policy(policy), _rocm_fails()]
    else:
        notes += breaks(ctx, req, newest) if old else [_policy(policy)]
    notes += code_note(ctx, req)
    notes += [f"it builds {req.build}"] if req.build is not None else []
    notes += _better_manifest(req, ctx)
    notes += [n for n in (why(req, to, ctx),) if n]
    fixed = bump_pin(req, to)
    return PAGED_KV_MISSING.finding(
        req.location,
        headline,
        fix=fixed,
        notes=tuple(notes + _hashed(req)),
        help=_help(req, policy, fixed, least),
        **fields,
    )


def _mixed(req: Requirement, a: Assessment, ctx: Context, fields: About, to: Release | None) -> Finding:
    """FAL002: the requirement admits releases with and without paged KV."""
    policy = ctx.policy
    least = floor_for(to, ctx)
    upto = cap(req, ctx) if to is not None else None
    top = upto.version if upto is not None else None
    template, parts = subject(req)
    old = all(not r.has(PAGED_KV) for r in a.bad) or bool(policy.rocm)
    without = "without paged KV" if old else f"below the required {policy.min_version}"
    without += " on ROCm" if policy.rocm else ""
    headline = fit(f"{template} admits {count(a.bad)} {without}; {fix(req, policy, least, top)}", **parts)
    also = f"{releases(a.good)} with it" if a.good else "newer versions"
    notes = [
        f"it admits {releases(a.bad)} {without} as well as {also}: which one installs depends on the "
        "resolver, the index and the rest of the environment"
    ]
    if policy.rocm:
        notes += [_policy(policy), f"with an old one, {_rocm_fails()}"]
    else:
        notes += breaks(ctx, req, a.bad[-1], "with an old one, ") if old else [_policy(policy)]
    notes += code_note(ctx, req)
    locked, good = _locked(req, ctx)
    severity = None  # the rule's
    if locked and good:
        where = ", ".join(f"{r.version} ({r.location})" for r in locked)
        has = "which has" if len(locked) == 1 else "all with"
        notes.append(f"the lock pins {where}, {has} paged KV, so installs from the lock are fine")
        severity = Severity.INFO
    reason = capped(req, upto, ctx) if upto is not None else why(req, to, ctx, narrow=True)
    notes += [reason] if reason else []
    fixed = raise_floor(req, ctx, least, upto)
    return PAGED_KV_NOT_GUARANTEED.finding(
        req.location,
        headline,
        fix=fixed,
        notes=tuple(notes + _hashed(req)),
        help=_help(req, policy, fixed, least, top),
        severity=severity,
        **fields,
    )


def _unknown(req: Requirement, ctx: Context, fields: About) -> Finding:
    """FAL009: the file does not say which version it installs."""
    v = ctx.policy.min_version
    notes: tuple[str, ...]
    if req.unresolved:
        headline = fit(
            "cannot tell which flash-attn this installs: `{var}` is never set here; pin a release",
            var=req.unresolved,
        )
        notes = (
            "fa-lint substitutes the values the file sets itself (shell variables, ARG and ENV defaults, "
            "workflow env) and never runs anything to find out",
        )
    elif req.checkout is not None:  # a folder the repository carries, or one it cannot see
        headline = "cannot tell which flash-attn this source build installs; build a release tag"
        notes = (
            f"it builds {req.build}",
            "fa-lint reads what the repository's files say (a vendored flash_attn/__init__.py, "
            ".gitmodules) and never asks git: pin the folder at a release tag and vendor it, or "
            "install a release",
        )
    elif req.build is not None:
        headline = "cannot tell which flash-attn this source build installs; check out a release tag"
        notes = (
            f"it builds {req.build}",
            "a branch or a commit names no release: the build gets whatever the checkout holds then",
        )
    else:
        headline = (
            "cannot tell which flash-attn this installs: the URL names no release tag or version; pin a tag"
        )
        notes = ("without a tag, pip installs whatever the URL holds at install time",)
    help = f"pin a release (flash-attn>={v}) or a tag (@v{v}), or give the variable a value in the file"
    return VERSION_UNKNOWN.finding(req.location, headline, notes=notes, help=help, **fields)


def _rocm_fails() -> str:
    """What happens on ROCm below the floor (fa_lint/kb/rocm.json): the call fails, not its argument."""
    from fa_lint.kb import rocm

    first = rocm.load().first_build
    before = f"; releases before {first} have no ROCm build at all" if first else ""
    return (
        f"`flash_attn_with_kvcache` fails at its first call (the ROCm build has no `fwd_kvcache`{before}), "
        "so transformers' continuous batching fails at the first decode step where it takes that path "
        "(`torch.cuda.is_available()` holds on ROCm)"
    )


def _policy(policy: Policy) -> str:
    if policy.rocm:
        return (
            "on a ROCm torch flash-attn builds its Composable Kernel backend, and `flash_attn_with_kvcache` "
            f"calls its `fwd_kvcache`, bound (with a block table) from {policy.rocm}"
        )
    return (
        f"the project requires flash-attn {policy.min_version} or later (`--min-version`, or `min-version` "
        "in [tool.fa-lint])"
    )


def _hashed(req: Requirement) -> list[str]:
    if not req.hash_checked:
        return []
    return [
        "the file is in pip's hash-checking mode (`--hash`), so `--fix` leaves the pin alone: a new "
        "version needs new hashes"
    ]


def _help(
    req: Requirement, policy: Policy, fixed: Fix | None, least: Version | None, upto: Version | None = None
) -> str:
    if fixed is not None:
        return fixed.title
    if req.hash_checked:
        v = max(least, policy.min_version) if least is not None else policy.min_version
        top = f",<={upto}" if upto is not None else ""
        return f"regenerate the file with flash-attn>={v}{top} and its hashes"
    return help_for(req, policy, least, upto)


def _better_manifest(req: Requirement, ctx: Context) -> list[str]:
    """For an old lock entry: the manifest already allows a release with paged KV."""
    if req.kind is not Kind.LOCK:
        return []
    manifest, first = _manifest(req, ctx)
    if first is None:
        return []
    written = ", ".join(quoted(r) for r in manifest)
    return [f"the manifest's {written} already allows {first} or later, so relocking is enough"]


def _nearest(req: Requirement, ctx: Context) -> str:
    """Releases around the (single) version the requirement names: 'did you mean 2.6.0.post1?'."""
    pinned = [s.version for s in req.specifier if s.operator in ("==", "===")]
    if not pinned:
        return ""
    try:
        named = Version(pinned[0].removesuffix(".*"))
    except InvalidVersion:
        return ""
    same = [r for r in ctx.kb.installable if r.version.release[:3] == named.release[:3]]
    if same:
        return f" (did you mean {releases(same)}?)"
    below = [r for r in ctx.kb.installable if r.version < named]
    above = [r for r in ctx.kb.installable if r.version > named]
    around = [str(x[i]) for x, i in ((below, -1), (above, 0)) if x]
    return f" (nearest releases: {' and '.join(around)})" if around else ""
