"""Edits that make a requirement good, for ``--fix``: built from the requirement as written.

A fix is offered only where the requirement's text reads back to exactly its specifier, so an edit
never rests on a guess about the file's syntax (escapes, variables and conda match specs fall out
here), and the fix module checks again that the file still reads that text before it writes.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from packaging.ranges import VersionRange
from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import Version

from fa_lint._records import NamedTuple
from fa_lint.kb import PAGED_KV, Release
from fa_lint.kb.assess import Verdict, assess_range
from fa_lint.machine import toolchain
from fa_lint.machine.environments import commands
from fa_lint.model import Fix, Kind, Location, Requirement, pretty
from fa_lint.rules import _wheels
from fa_lint.rules._admitted import allowed_mask, good_mask, good_releases, others
from fa_lint.rules._base import Context, Memo
from fa_lint.rules._code import code_floor

SHELL_SOURCES = frozenset({"dockerfile", "shell", "workflow", "makefile", "notebook", "batch", "powershell"})
# formats whose shell lines sit in a JSON string: a '"' there would have to be written '\"', so a
# word is quoted with "'" (the shell's other quote)
IN_JSON = frozenset({"notebook"})
# The patterns below compile when a fix is first built (re caches them): most runs build none.
# name, optional extras | the version part | an optional marker. Written by hand because packaging's
# parser keeps no offsets, and the edit must keep the name, extras and marker exactly as written.
# Only the head is a pattern: the rest splits at the first ";" by hand. Matched as one pattern, a lazy
# version part and the blanks before the marker ("[^;@]*?" then "\s*") retry each other, n^2 in a run.
_HEAD = r"\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\]\s*)?"
# A Poetry or Pipfile table entry as the parsers write its raw text: name = "version".
_TABLE = r'(?P<name>[^\s=]+) = "(?P<version>[^"]*)"'


class _Written(NamedTuple):
    """How a requirement's version is written, and how to write another one in its place."""

    old: str
    render: Callable[[SpecifierSet], tuple[str, str]]  # -> (new text, the raw the parser will read)
    context: str


def _pep508(req: Requirement) -> _Written | None:
    parts = _parts(req.raw)
    if parts is None:
        return None
    head, spec, tail = parts
    written = spec.strip()
    if written.startswith("(") and written.endswith(")"):
        written = written[1:-1]
    try:
        if SpecifierSet(written) != req.specifier:
            return None
    except InvalidSpecifier:
        return None
    head = head if spec else head.rstrip()

    def render(new_spec: SpecifierSet) -> tuple[str, str]:
        new = f"{head}{pretty(new_spec)}{tail}"
        return new, new

    return _Written(req.raw, render, _context(req))


def _context(req: Requirement) -> str:
    """What a fix of a requirement written as a word must be settled against: a shell's quoting, or,
    for a command a Python program runs (fa_lint.sources.python_commands), the Python string too."""
    if req.source in SHELL_SOURCES:
        return "shell"
    return "python-command" if commands(req.scope) else ""


def _parts(raw: str) -> tuple[str, str, str] | None:
    """A requirement's name and extras (with the blanks after them), its version part, and the rest
    (the blanks before a ";" marker, and the marker); None for a URL ("@") or no name."""
    m = re.match(_HEAD, raw)
    if m is None:
        return None
    rest = raw[m.end() :]
    cut = rest.find(";")
    spec = rest if cut < 0 else rest[:cut]
    if "@" in spec:
        return None
    kept = len(spec.rstrip())
    return m.group(), spec[:kept], rest[kept:]


def _table_reader(source: str) -> Callable[[str], tuple[SpecifierSet, ...]] | None:
    """How a Poetry or Pipfile table entry's version reads; its parser is imported for such an entry."""
    if source == "pyproject":
        from fa_lint.syntax import poetry

        return poetry.specifiers
    if source == "pipfile":
        from fa_lint.sources import pipfile

        return lambda text: (pipfile.specifier(text),)
    return None


def _table(req: Requirement) -> _Written | None:
    m = re.fullmatch(_TABLE, req.raw)
    reader = _table_reader(req.source)
    if m is None or reader is None:
        return None
    try:
        if reader(m["version"]) != (req.specifier,):
            return None
    except (InvalidSpecifier, ValueError):
        return None

    def render(spec: SpecifierSet) -> tuple[str, str]:
        return pretty(spec), f'{m["name"]} = "{pretty(spec)}"'

    return _Written(m["version"], render, "toml-value")


def writable(req: Requirement) -> bool:
    """Whether a fix can rewrite the requirement's text (its version is written as it reads)."""
    return _written(req) is not None


def _written(req: Requirement) -> _Written | None:
    if (
        req.version is not None
        or req.url is not None
        or req.alternatives
        or req.unresolved
        or req.redirected
        or req.hash_checked  # the file's hashes are for the old version; its generator must write new ones
        or req.kind not in (Kind.INSTALL, Kind.CONSTRAINT, Kind.OVERRIDE)
    ):
        return None
    return _pep508(req) or _table(req)


def _fix(req: Requirement, w: _Written, spec: SpecifierSet, title: str, safe: bool) -> Fix:
    new, expect = w.render(spec)
    return Fix(req.location, w.old, new, title, safe, req.source, expect, w.context)


def _below(spec: Specifier, floor: Version) -> bool:
    """A lower bound or exclusion that ``>=floor`` makes redundant."""
    if spec.operator in (">=", ">", "!=") and "*" not in spec.version:
        return Version(spec.version) < floor
    return False


def allowed(req: Requirement, ctx: Context, narrow: bool = False) -> VersionRange:
    """What every other flash-attn requirement of ``req``'s installs admits -- constraints, overrides,
    the same command's other words -- in every environment it is part of, whichever file the run
    started from: the one place a fix's range is worked out. ``narrow``: with ``req``'s own range too
    (a fix that raises its floor keeps its other bounds)."""
    found = _ALLOWED.of(ctx)
    key = (req.location, req.raw, narrow)
    if key not in found:
        rng = req.version_range if narrow else VersionRange.full()
        for env in ctx.environments_of(req):
            rng = rng.intersection(others(req, env, ctx))
        found[key] = rng
    return found[key]


_ALLOWED: Memo[tuple[Location, str, bool], VersionRange] = Memo()


def taken(req: Requirement, ctx: Context) -> Release | None:
    """The release pip or uv installs for ``req``: the newest one its range and the rest of its install
    admit (a pin or a lock's version as it is). Neither falls back to an older release because that one
    has a prebuilt wheel: they build the sdist of the newest (see docs/wheels.md)."""
    pinned = toolchain.exact(req)
    if pinned is not None:
        return ctx.kb.get(pinned)
    rng = allowed(req, ctx, narrow=True)
    found = [r for r in ctx.kb.installable if not r.version.is_prerelease and rng.contains(r.version)]
    return found[-1] if found else None


def _over(spec: Specifier, top: Version) -> bool:
    """An upper bound or exclusion that ``<=top`` makes redundant."""
    if spec.operator in ("<=", "<", "!=") and "*" not in spec.version:
        return Version(spec.version) > top
    return False


def target(req: Requirement, ctx: Context, narrow: bool = False) -> Release | None:
    """The release a fix for ``req`` moves to: the first good one that every other requirement of its
    environments admits (``allowed``), with a prebuilt wheel for their torch/CPython/CUDA when fa-lint
    knows them (a released-torch build first). ``narrow``: a fix that raises the floor of ``req`` keeps
    its other bounds, so ``req`` must admit the release too. None when the environments admit no good
    release at all.
    """
    envs = ctx.environments_of(req)
    # the installer's constraints, and the project's own calls' keyword needs (a separate input)
    mask = allowed_mask(req, envs, ctx, narrow) & good_mask(_code_range(ctx, req), ctx)
    admitted = _ADMITTED.of(ctx)  # the same releases for every repeat of a pin: listed once
    if mask not in admitted:
        admitted[mask] = tuple(r for i, r in enumerate(good_releases(ctx)) if mask >> i & 1)
    good = admitted[mask]
    if not good:
        return None
    if narrow:
        # a raised floor leaves the installer the newest release of the range: its wheel is not the
        # floor's to choose (``cap`` bounds the range where that release has none)
        return good[0]
    tools = tuple(ctx.toolchain(env) for env in envs)
    found = _TARGETS.of(ctx)
    key = (mask, tools)  # the admitted releases say which are good
    if key not in found:
        found[key] = _wheels.pick(good, tools) or good[0]
    return found[key]


_ADMITTED: Memo[int, tuple[Release, ...]] = Memo()
_TARGETS: Memo[tuple[int, tuple[toolchain.Toolchain, ...]], Release] = Memo()


def cap(req: Requirement, ctx: Context) -> Release | None:
    """The newest release a raised floor's range must stop at so that what the installer takes (the
    newest release the range admits) has a prebuilt wheel for every torch fa-lint knows the install to
    have; None when the newest already has one (or whether it has is unknown), or no release does."""
    envs = ctx.environments_of(req)
    mask = allowed_mask(req, envs, ctx, narrow=True)
    good = [r for i, r in enumerate(good_releases(ctx)) if mask >> i & 1]
    tools = [t for t in map(ctx.toolchain, envs) if t.torch is not None]
    if not good or not tools:
        return None
    if all(_wheels.fits(good[-1], t) is not False for t in tools):
        return None
    return _wheels.pick(reversed(good), tools)


def why(req: Requirement, to: Release | None, ctx: Context, narrow: bool = False) -> str | None:
    """Why a fix for ``req`` suggests ``to``: the first release good enough, the first one the rest of
    its install admits, or the first with a prebuilt wheel for its torch and CPython (one repository's
    fixes then differ for a reason the finding says)."""
    good = good_releases(ctx)
    if to is None or not good:
        return None
    first = "the first release with paged KV"
    if ctx.policy.rocm:
        first = "the first release with paged KV on ROCm"
    elif ctx.policy.min_version != ctx.kb.first_with(PAGED_KV).version:
        first = f"the first release with paged KV at or above {ctx.policy.min_version}"
    if to.version == good[0].version:
        return f"why {to}: {first}"
    floor = code_floor(ctx, req)
    if floor is not None and to.version == next(
        (r.version for r in good if r.version >= floor.version), None
    ):
        return f"why {to}: {floor.reason()}"
    envs = ctx.environments_of(req)
    mask = allowed_mask(req, envs, ctx, narrow) & good_mask(_code_range(ctx, req), ctx)
    admitted = next((r for i, r in enumerate(good) if mask >> i & 1), None)
    if admitted is not None and admitted.version == to.version:
        return f"why {to}: {first} that the install's other flash-attn requirements admit"
    tools = next((t for t in map(ctx.toolchain, envs) if t.torch is not None), None)
    if admitted is None or tools is None or tools.torch is None:
        return None
    python = f" and CPython {tools.python.value}" if tools.python is not None else ""
    torch = tools.torch.value
    nightly = to.wheels.built_against(torch) if to.wheels is not None else None
    if nightly is None:
        return (
            f"why {to}: {first} and a prebuilt wheel for the torch {torch}{python} this install has, built "
            f"against a released torch {torch} (from {admitted} on, the releases before it have none, or one "
            "built against a torch nightly)"
        )
    i, released = next(((i, r) for i, r in enumerate(good) if _wheels.stable(r, tools)), (0, None))
    beyond = "" if released is None else f"; the first built against a released torch {torch} is {released}"
    if released is not None and not mask >> i & 1:
        beyond += ", which the install's other flash-attn requirements rule out"
    return (
        f"why {to}: {first} that the install's other flash-attn requirements admit with a prebuilt wheel "
        f"for the torch {torch}{python} this install has, one built against the torch pre-release {nightly}"
        f"{beyond}"
    )


def capped(req: Requirement, upto: Release, ctx: Context) -> str | None:
    """Why a raised floor also stops at ``upto``: the release the installer would take otherwise."""
    newest = taken(req, ctx)
    tools = next((t for t in map(ctx.toolchain, ctx.environments_of(req)) if t.torch is not None), None)
    if newest is None or tools is None or tools.torch is None:
        return None
    return (
        f"why <={upto}: pip and uv install the newest release a range admits, {newest}, which "
        f"{_wheels.missing(newest, tools).split(' ', 1)[1]}, and build its sdist rather than fall back "
        f"to an older release with a wheel; {upto} is the newest with paged KV and a prebuilt wheel there"
    )


def _code_range(ctx: Context, req: Requirement) -> VersionRange:
    """What the project's own calls admit: from the first release with every keyword they pass
    (``rules._code.code_floor``), a separate input to the floor beside the policy and the install."""
    floor = code_floor(ctx, req)
    return floor.range() if floor is not None else VersionRange.full()


def floor_for(to: Release | None, ctx: Context) -> Version | None:
    """The version a fix asks for when the environment calls for more than the policy (its constraints,
    a prebuilt wheel for its torch); None when ``to`` is the first good release anyway, so a floor keeps
    the policy's own minimum (``>=2.6.0``, rather than the ``2.6.0.post1`` that it admits first)."""
    good = good_releases(ctx)
    return to.version if to is not None and good and to.version != good[0].version else None


def raise_floor(
    req: Requirement, ctx: Context, floor: Version | None = None, upto: Release | None = None
) -> Fix | None:
    """FAL002: add ``>=floor`` and drop the bounds it makes redundant; only releases go.

    ``floor`` is the first good release with a prebuilt wheel for the environment, when fa-lint
    knows its torch; the policy's minimum when not, or when that floor leaves nothing good.
    """
    w = _written(req)
    if w is None:
        return None
    for low in dict.fromkeys(v for v in (floor, ctx.policy.min_version) if v is not None):
        spec = _raised(req.specifier, low, upto, ctx)
        if spec is not None:
            return _fix(req, w, spec, f"require flash-attn{pretty(spec)}", safe=True)
    return None  # e.g. '!=2.5.*,<2.6': nothing good is left to narrow to


def _raised(specifier: SpecifierSet, low: Version, upto: Release | None, ctx: Context) -> SpecifierSet | None:
    """``specifier`` with ``>=low`` (and ``<=upto``), without the bounds they make redundant, when all it
    then admits is good: once per specifier (a project repeats its pins), not once a requirement."""
    top = upto.version if upto is not None else None
    found = _RAISED.of(ctx)
    key = (str(specifier), low, top)  # as written: equal sets may spell a version otherwise
    if key not in found:
        kept = [s for s in specifier if not (top is not None and _over(s, top))]
        bound = [Specifier(f"<={top}")] if top is not None else []
        spec = SpecifierSet([Specifier(f">={low}"), *bound, *(s for s in kept if not _below(s, low))])
        ok = assess_range(spec.to_range(), ctx.kb, ctx.policy).verdict is Verdict.OK
        found[key] = spec if ok else None
    return found[key]


_RAISED: Memo[tuple[str, Version, Version | None], SpecifierSet | None] = Memo()


def stop_at(req: Requirement, upto: Release) -> Fix | None:
    """FAL011 on a range: add ``<=upto`` and drop the upper bounds it makes redundant, so that the
    installer's pick (the newest release admitted) is ``upto``; safe, as ``raise_floor``'s cap is."""
    w = _written(req)
    if w is None:
        return None
    kept = [s for s in req.specifier if not _over(s, upto.version)]
    spec = SpecifierSet([*kept, Specifier(f"<={upto.version}")])
    return _fix(req, w, spec, f"require flash-attn{pretty(spec)}", safe=True)


def bump_pin(req: Requirement, target: Release | None, title: str = "") -> Fix | None:
    """FAL001 on an exact ``==X`` pin: move it to ``target``, the first good release that every other
    requirement of its environment admits (with a prebuilt wheel there, when fa-lint can tell), as
    pip-audit --fix picks the first fix. No target, no fix: a pin the environment then refuses is
    no fix.
    """
    w = _written(req)
    if (
        w is None
        or target is None
        or [s.operator for s in req.specifier] != ["=="]
        or "*" in str(req.specifier)
    ):
        return None
    if "+" in str(req.specifier):  # a local build (+cu122...): its index may have no such release
        return None
    spec = SpecifierSet(f"=={target.version}")
    title = title or f"pin flash-attn=={target.version} (an upgrade: check it)"
    return _fix(req, w, spec, title, safe=False)


def quote_word(req: Requirement) -> Fix | None:
    """FAL007: quote the word so the shell passes '>=2.5' to pip instead of redirecting."""
    loc = req.location
    if not req.redirected or loc.line != loc.end_line:
        return None
    old = req.raw + req.redirected  # the redirect starts where the word ends
    span = loc._replace(end_column=loc.end_column + len(req.redirected))
    q = "'" if req.source in IN_JSON else '"'
    return Fix(span, old, f"{q}{old}{q}", f"quote it: {q}{old}{q}", True, req.source, old)
