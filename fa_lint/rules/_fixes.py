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
from fa_lint.machine.environments import Environment
from fa_lint.model import FLASH_ATTN, Fix, Kind, Requirement, pretty
from fa_lint.rules import _wheels
from fa_lint.rules._base import Context
from fa_lint.syntax.text import TextIndex

SHELL_SOURCES = frozenset({"dockerfile", "shell", "workflow", "makefile"})
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

    return _Written(req.raw, render, "shell" if req.source in SHELL_SOURCES else "")


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


def target(req: Requirement, ctx: Context, narrow: bool = False) -> Release | None:
    """The release a fix for ``req`` moves to: the first good one that every other requirement of its
    environments admits -- constraints, overrides, the same command's other words -- with a prebuilt
    wheel for their torch/CPython/CUDA when fa-lint knows them (a released-torch build first).
    ``narrow``: a fix that raises the floor of ``req`` keeps its other bounds, so ``req`` must admit
    the release too. None when the environments admit no good release at all.
    """
    envs = ctx.environments_of(req)
    allowed = _allowed(req, envs, ctx, narrow)
    admitted = ("admitted", allowed)  # the same releases for every repeat of a pin: listed once
    if admitted not in ctx.memo:
        ctx.memo[admitted] = tuple(r for i, r in enumerate(_good(ctx)) if allowed >> i & 1)
    good: tuple[Release, ...] = ctx.memo[admitted]
    if not good:
        return None
    tools = tuple(ctx.toolchain(env) for env in envs)
    key = ("target", allowed, tools)  # the allowed releases say which are good
    if key not in ctx.memo:
        ctx.memo[key] = _wheels.pick(good, tools) or good[0]
    found: Release = ctx.memo[key]
    return found


def why(req: Requirement, to: Release | None, ctx: Context, narrow: bool = False) -> str | None:
    """Why a fix for ``req`` suggests ``to``: the first release good enough, the first one the rest of
    its install admits, or the first with a prebuilt wheel for its torch and CPython (one repository's
    fixes then differ for a reason the finding says)."""
    good = _good(ctx)
    if to is None or not good:
        return None
    first = "the first release with paged KV"
    if ctx.policy.rocm:
        first = "the first release with paged KV on ROCm"
    elif ctx.policy.min_version != ctx.kb.first_with(PAGED_KV).version:
        first = f"the first release with paged KV at or above {ctx.policy.min_version}"
    if to.version == good[0].version:
        return f"why {to}: {first}"
    envs = ctx.environments_of(req)
    allowed = _allowed(req, envs, ctx, narrow)
    admitted = next((r for i, r in enumerate(good) if allowed >> i & 1), None)
    if admitted is not None and admitted.version == to.version:
        return f"why {to}: {first} that the install's other flash-attn requirements admit"
    tools = next((t for t in map(ctx.toolchain, envs) if t.torch is not None), None)
    if admitted is None or tools is None or tools.torch is None:
        return None
    python = f" and CPython {tools.python.value}" if tools.python is not None else ""
    return (
        f"why {to}: {first} and a prebuilt wheel for the torch {tools.torch.value}{python} this install "
        f"has (from {admitted} on, the releases before it have none, or one built against a torch nightly)"
    )


def floor_for(to: Release | None, ctx: Context) -> Version | None:
    """The version a fix asks for when the environment calls for more than the policy (its constraints,
    a prebuilt wheel for its torch); None when ``to`` is the first good release anyway, so a floor keeps
    the policy's own minimum (``>=2.6.0``, rather than the ``2.6.0.post1`` that it admits first)."""
    good = _good(ctx)
    return to.version if to is not None and good and to.version != good[0].version else None


def _good(ctx: Context) -> tuple[Release, ...]:
    if "good" not in ctx.memo:
        ctx.memo["good"] = tuple(
            r for r in ctx.kb.installable if ctx.policy.good(r) and not r.version.is_prerelease
        )
    found: tuple[Release, ...] = ctx.memo["good"]
    return found


def _allowed(req: Requirement, envs: list[Environment], ctx: Context, narrow: bool) -> int:
    """The good releases (``_good``, bit i for the i-th) that every other flash-attn requirement of
    ``req``'s environments admits, and ``req`` itself when ``narrow``: all a fix's target is picked by.
    As bits, not a range: a range has a piece for each exclusion it gathered (n ``!=`` constraints
    make n pieces), and the good releases are a few dozen."""
    allowed = _mask(req.version_range, ctx) if narrow else -1  # -1: every bit set
    for env in envs:
        allowed &= _others(req, env, ctx)
    return allowed


def _mask(rng: VersionRange, ctx: Context) -> int:
    key = ("good mask", rng)
    if key not in ctx.memo:
        ctx.memo[key] = sum(1 << i for i, r in enumerate(_good(ctx)) if rng.contains(r.version))
    found: int = ctx.memo[key]
    return found


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


def _others(req: Requirement, env: Environment, ctx: Context) -> int:
    """What the rest of ``req``'s install admits (``_allowed``): the same command (a later one replaces
    it rather than combining), without a marker or with ``req``'s. Each command's requirements are
    grouped once per environment, by marker: linear in the environment, however many markers."""
    key = ("others", id(env))
    if key not in ctx.memo:
        ctx.memo[key] = _commands(env, ctx)
    command: _Command | None = ctx.memo[key].get(req.step)
    if command is None:
        return -1
    if not req.marker:
        return command.every.without(req)
    own = command.marked.get(req.marker)
    return command.plain & (own.without(req) if own is not None else -1)


def _commands(env: Environment, ctx: Context) -> dict[int, _Command]:
    by_step: dict[int, list[tuple[Requirement, int]]] = {}
    for r in env.of(FLASH_ATTN):
        if r.kind in (Kind.INSTALL, Kind.CONSTRAINT, Kind.OVERRIDE) and not r.unresolved:
            by_step.setdefault(r.step, []).append((r, _mask(r.version_range, ctx)))
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


def raise_floor(req: Requirement, ctx: Context, floor: Version | None = None) -> Fix | None:
    """FAL002: add ``>=floor`` and drop the bounds it makes redundant; only releases go.

    ``floor`` is the first good release with a prebuilt wheel for the environment, when fa-lint
    knows its torch; the policy's minimum when not, or when that floor leaves nothing good.
    """
    w = _written(req)
    if w is None:
        return None
    for low in dict.fromkeys(v for v in (floor, ctx.policy.min_version) if v is not None):
        spec = _raised(req.specifier, low, ctx)
        if spec is not None:
            return _fix(req, w, spec, f"require flash-attn{pretty(spec)}", safe=True)
    return None  # e.g. '!=2.5.*,<2.6': nothing good is left to narrow to


def _raised(specifier: SpecifierSet, low: Version, ctx: Context) -> SpecifierSet | None:
    """``specifier`` with ``>=low`` and without the bounds that makes redundant, when all it then admits
    is good: once per specifier (a project repeats its pins), not once a requirement."""
    key = ("raised", str(specifier), low)  # as written: equal sets may spell a version otherwise
    if key not in ctx.memo:
        spec = SpecifierSet([Specifier(f">={low}"), *(s for s in specifier if not _below(s, low))])
        ok = assess_range(spec.to_range(), ctx.kb, ctx.policy).verdict is Verdict.OK
        ctx.memo[key] = spec if ok else None
    found: SpecifierSet | None = ctx.memo[key]
    return found


def bump_pin(req: Requirement, target: Release | None) -> Fix | None:
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
    return _fix(req, w, spec, f"pin flash-attn=={target.version} (an upgrade: check it)", safe=False)


def quote_word(req: Requirement) -> Fix | None:
    """FAL007: quote the word so the shell passes '>=2.5' to pip instead of redirecting."""
    loc = req.location
    if not req.redirected or loc.line != loc.end_line:
        return None
    old = req.raw + req.redirected  # the redirect starts where the word ends
    span = loc._replace(end_column=loc.end_column + len(req.redirected))
    return Fix(span, old, f'"{old}"', f'quote it: "{old}"', True, req.source, old)


_SHELL_SPECIAL = r"[\s<>|&;()]"


def _shell(fix: Fix, text: str, start: int, end: int) -> Fix | None:
    before, after = text[start - 1 : start], text[end : end + 1]
    quoted = before in ("'", '"') and before == after
    if quoted or not re.search(_SHELL_SPECIAL, fix.new):
        return fix._replace(context="")
    if not re.search(r'["$`\\]', fix.new):
        return fix._replace(new=f'"{fix.new}"', context="")
    if "'" not in fix.new:
        return fix._replace(new=f"'{fix.new}'", context="")
    return None  # no quoting keeps it one word


def _toml_value(fix: Fix, index: TextIndex, start: int, end: int) -> Fix | None:
    found = list(re.finditer(r"=\s*([\"'])(" + re.escape(fix.old) + r")\1", index.text[start:end]))
    if len(found) != 1:
        return None  # no version string (Pipfile's default "*"), or one with escapes
    s, e = start + found[0].start(2), start + found[0].end(2)
    return fix._replace(location=index.location(s, e), context="")


def settle(fix: Fix, index: TextIndex) -> Fix | None:
    """Make a fix final against its file's text (see ``Fix.context``); None when none is safe."""
    if not fix.context:
        return fix
    loc = fix.location
    start, end = index.offset(loc.line, loc.column), index.offset(loc.end_line, loc.end_column)
    if fix.context == "shell":
        return _shell(fix, index.text, start, end)
    if fix.context == "toml-value":
        return _toml_value(fix, index, start, end)
    return None
