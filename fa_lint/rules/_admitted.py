"""The releases a fix may move a requirement to: what the rest of its install admits, as a range
(``others``) and, over the good releases only, as bits (``allowed_mask``), each command's requirements
grouped once per environment (``rules._fixes``' targets, caps and reasons)."""

from __future__ import annotations

from packaging.ranges import VersionRange

from fa_lint._records import NamedTuple
from fa_lint.kb import Release
from fa_lint.machine.environments import Environment
from fa_lint.model import FLASH_ATTN, Kind, Location, Requirement
from fa_lint.rules._base import Context, Memo


def good_releases(ctx: Context) -> tuple[Release, ...]:
    """The installable releases the policy calls good, oldest first (pre-releases are never a target)."""
    found = _GOOD.of(ctx)
    if None not in found:
        found[None] = tuple(
            r for r in ctx.kb.installable if ctx.policy.good(r) and not r.version.is_prerelease
        )
    return found[None]


_GOOD: Memo[None, tuple[Release, ...]] = Memo()


def others(req: Requirement, env: Environment, ctx: Context) -> VersionRange:
    """What the rest of ``req``'s install admits: the same command (a later one replaces it rather
    than combining), without a marker or with ``req``'s. All but one, for each of a group's
    requirements, from prefix and suffix intersections: linear in the group, however large.
    """
    step = step_in(req, env, ctx)
    cache = _OTHERS.of(ctx)
    key = (env, step, req.marker)
    if key not in cache:
        group = [
            r
            for r in env.of(FLASH_ATTN)
            if r.kind in (Kind.INSTALL, Kind.CONSTRAINT, Kind.OVERRIDE)
            and r.step == step
            and not r.unresolved
            and (not r.marker or not req.marker or r.marker == req.marker)
        ]
        before = [VersionRange.full()]
        for r in group:
            before.append(before[-1].intersection(r.version_range))
        after = [VersionRange.full()]
        for r in reversed(group):
            after.append(after[-1].intersection(r.version_range))
        after.reverse()
        where = {r.location: i for i, r in enumerate(group)}
        cache[key] = (where, before, after)
    where, before, after = cache[key]
    i = where.get(req.location)
    if i is None:
        rng: VersionRange = before[-1]
        return rng
    rest: VersionRange = before[i].intersection(after[i + 1])
    return rest


def step_in(req: Requirement, env: Environment, ctx: Context) -> int:
    """The command ``req`` is part of in ``env``: a file's own record counts its lines from 0, a
    Dockerfile stage that copies the file and runs ``pip install -r`` counts its own commands, so the
    step is the stage's record of the same line's."""
    found = _STEPS.of(ctx)
    if env not in found:
        found[env] = {r.location: r.step for r in (*env.members, *env.superseded, *env.locked)}
    return found[env].get(req.location, req.step)


_STEPS: Memo[Environment, dict[Location, int]] = Memo()


def allowed_mask(req: Requirement, envs: list[Environment], ctx: Context, narrow: bool) -> int:
    """``rules._fixes.allowed`` over the good releases only (``good_releases``, bit i for the i-th): all
    a fix's target is picked by. As bits, not a range: a range has a piece for each exclusion it
    gathered (n ``!=`` constraints make n pieces), and the good releases are a few dozen."""
    mask = good_mask(req.version_range, ctx) if narrow else -1  # -1: every bit set
    for env in envs:
        mask &= others_mask(req, env, ctx)
    return mask


def good_mask(rng: VersionRange, ctx: Context) -> int:
    found = _GOOD_MASK.of(ctx)
    if rng not in found:
        found[rng] = sum(1 << i for i, r in enumerate(good_releases(ctx)) if rng.contains(r.version))
    return found[rng]


_GOOD_MASK: Memo[VersionRange, int] = Memo()


class _AllBut:
    """Masks of a list of requirements, and of the list without any one of them (by location, the last
    one there), from prefix and suffix masks: linear in the list."""

    def __init__(self, masks: list[tuple[Requirement, int]]) -> None:
        self.before = [-1]
        for _, m in masks:
            self.before.append(self.before[-1] & m)
        self.after = [-1]
        for _, m in reversed(masks):
            self.after.append(self.after[-1] & m)
        self.after.reverse()
        self.where = {r.location: i for i, (r, _) in enumerate(masks)}

    def without(self, req: Requirement) -> int:
        i = self.where.get(req.location)
        return self.before[-1] if i is None else self.before[i] & self.after[i + 1]


class _Command(NamedTuple):
    """One command's flash-attn requirements (an install step's, or a manifest's step 0)."""

    every: _AllBut  # all of them: what a requirement without a marker combines with
    plain: int  # those without a marker
    marked: dict[str, _AllBut]  # those of each marker: a requirement with one combines with its own


def others_mask(req: Requirement, env: Environment, ctx: Context) -> int:
    """``others`` as good releases (``allowed_mask``). Each command's requirements are grouped once per
    environment, by marker: linear in the environment, however many markers."""
    found = _COMMANDS.of(ctx)
    if env not in found:
        found[env] = command_masks(env, ctx)
    command = found[env].get(step_in(req, env, ctx))
    if command is None:
        return -1
    if not req.marker:
        return command.every.without(req)
    own = command.marked.get(req.marker)
    return command.plain & (own.without(req) if own is not None else -1)


def command_masks(env: Environment, ctx: Context) -> dict[int, _Command]:
    by_step: dict[int, list[tuple[Requirement, int]]] = {}
    for r in env.of(FLASH_ATTN):
        if r.kind in (Kind.INSTALL, Kind.CONSTRAINT, Kind.OVERRIDE) and not r.unresolved:
            by_step.setdefault(r.step, []).append((r, good_mask(r.version_range, ctx)))
    commands = {}
    for step, masks in by_step.items():
        plain = -1
        marked: dict[str, list[tuple[Requirement, int]]] = {}
        for r, m in masks:
            if r.marker:
                marked.setdefault(r.marker, []).append((r, m))
            else:
                plain &= m
        commands[step] = _Command(_AllBut(masks), plain, {k: _AllBut(v) for k, v in marked.items()})
    return commands


_OTHERS: Memo[
    tuple[Environment, int, str | None], tuple[dict[Location, int], list[VersionRange], list[VersionRange]]
] = Memo()
_COMMANDS: Memo[Environment, dict[int, _Command]] = Memo()
