"""How findings read: a headline that fits a line, notes for the rest, and the pieces rules share.

A headline says what is wrong and the fix in at most ``HEADLINE`` characters, whatever the input: the
parts taken from a checked file (a requirement as written, a file name) are shortened to fit, never
the wording around them. What breaks and for whom goes to the notes, which have no length limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from fa_lint.kb import KVCACHE, Release
from fa_lint.kb.assess import Policy, intersect
from fa_lint.model import FLASH_ATTN, Kind, Location, Requirement, pretty
from fa_lint.rules._base import Context, Memo, once

if TYPE_CHECKING:
    from fa_lint.kb.transformers import TransformersFacts
    from fa_lint.machine.environments import Environment

HEADLINE = 120
MEANING = " ({meaning})"  # what a requirement means, after it; the first thing a long headline drops
TRANSFORMERS = "transformers"
KERNELS = "kernels"  # Hugging Face's Hub-kernel loader: transformers' fallback for a refused flash-attn
PACKAGES = frozenset({TRANSFORMERS, KERNELS})  # the requirements the notes read (rules.PACKAGES)

# How each lock's tool moves its flash-attn entry, and how it relocks after the manifest changed.
RELOCK = {
    "uv": "uv lock --upgrade-package flash-attn",
    "poetry": "poetry update flash-attn",
    "pdm": "pdm update flash-attn",
    "pipenv": "pipenv upgrade flash-attn",
    "conda-lock": "conda-lock lock --update flash-attn",
    "pixi": "pixi update flash-attn",
}
RELOCK_ALL = {
    "uv": "uv lock",
    "poetry": "poetry lock",
    "pdm": "pdm lock",
    "pipenv": "pipenv lock",
    "pylock": "regenerate pylock.toml from the manifest",
    "conda-lock": "conda-lock lock",
    "pixi": "pixi lock",
}
PYLOCK = "regenerate pylock.toml (e.g. `uv export --format pylock.toml`)"


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the cut marked with '...'."""
    return text if len(text) <= width else text[: max(width - 3, 0)] + "..."


def fit(template: str, **parts: str) -> str:
    """``template`` filled with ``parts``, the longest parts shortened until the line fits ``HEADLINE``.

    The parts come from checked files and can be any length; each gets an equal share of the room the
    template's own words leave, and a part shorter than its share passes what it does not use on.
    Where the parts would not fit whole, a requirement's reading (``MEANING``) goes first, if that is
    enough for the rest to fit whole.
    """
    if MEANING in template and len(template.format(**parts)) > HEADLINE:
        # the requirement as written says more than its reading: give up the reading before a letter of it
        plain = template.replace(MEANING, "", 1)
        kept = {k: v for k, v in parts.items() if k != "meaning"}
        if len(plain.format(**kept)) <= HEADLINE:
            return plain.format(**kept)
    room = HEADLINE - len(template.format(**dict.fromkeys(parts, "")))
    cap, left = max((len(p) for p in parts.values()), default=0), room
    for i, size in enumerate(sorted(len(p) for p in parts.values())):
        share = left // (len(parts) - i)
        if size > share:
            cap = max(share, 3)
            break
        left -= size
    return template.format(**{k: clip(v, cap) for k, v in parts.items()})


def releases(found: Sequence[Release]) -> str:
    """'2.4.2', or '2.4.0.post1 ... 2.4.3.post1 (4 releases)'."""
    if not found:
        return "no release"
    if len(found) == 1:
        return str(found[0])
    if len(found) == 2:
        return f"{found[0]} and {found[1]}"
    return f"{found[0]} ... {found[-1]} ({len(found)} releases)"


def count(found: Sequence[Release]) -> str:
    """'2.4.2', '2.4.2 and 2.4.3.post1', or '32 releases': the releases, short enough for a headline."""
    return releases(found) if len(found) <= 2 else f"{len(found)} releases"


def _floor(policy: Policy, floor: Version | None) -> Version:
    return max(floor, policy.min_version) if floor is not None else policy.min_version


def fix(req: Requirement, policy: Policy, floor: Version | None = None, upto: Version | None = None) -> str:
    """The one action that makes the requirement good, short enough for a headline; ``floor`` is the
    release to ask for when the environment calls for more than the policy (a prebuilt wheel for its
    torch, its constraints); ``upto``, the newest release the range may admit (the installer takes the
    newest, and only that one has a prebuilt wheel for the install)."""
    v = _floor(policy, floor)
    if upto is not None and req.kind is not Kind.LOCK and req.url is None:
        return f"require flash-attn>={v},<={upto}"
    if req.kind is Kind.LOCK and req.tool in RELOCK:
        return f"run `{RELOCK[req.tool]}`"
    if req.kind is Kind.LOCK and req.tool == "pylock":
        return f"regenerate pylock.toml with flash-attn>={v}"
    if req.url is not None:
        return f"install flash-attn {v} or later"
    return f"require flash-attn>={v}"


def help_for(
    req: Requirement, policy: Policy, floor: Version | None = None, upto: Version | None = None
) -> str:
    """The action in full, for the ``help`` line (``floor`` and ``upto`` as in ``fix``)."""
    v = _floor(policy, floor)
    if upto is not None and req.kind is not Kind.LOCK and req.url is None and req.build is None:
        return fix(req, policy, floor, upto)
    if req.kind is Kind.LOCK and req.tool == "pylock":
        return f"upgrade flash-attn to {v} or later, then {PYLOCK}"
    if req.build is not None:
        return f"check out a release tag of {v} or later (v{v}) before building, or require flash-attn>={v}"
    if req.url is not None:
        return f"install a flash-attn {v} or later wheel built for your torch (or require flash-attn>={v})"
    if "$" in written(req):
        # Renovate's own convention names any variable's package; fa-lint's preset reads it (pull-requests.md)
        bot = (
            "; a `# renovate: datasource=pypi depName=flash-attn` line above where it is set lets Renovate"
            " update it"
            if req.source in ("dockerfile", "shell")
            else ""
        )
        return f"give the variable it reads a version of {v} or later (or require flash-attn>={v}){bot}"
    return fix(req, policy, floor, upto)


def relock_all(tool: str | None) -> str:
    """Bring a whole lock in line with its manifest again."""
    if tool == "pylock":
        return PYLOCK
    return f"run `{RELOCK_ALL[tool]}`" if tool in RELOCK_ALL else "relock"


def written(req: Requirement) -> str:
    """The requirement as the reader wrote it, without its marker."""
    return req.raw.split(";", 1)[0].strip()


def subject(req: Requirement, name: str = FLASH_ATTN) -> tuple[str, dict[str, str]]:
    """A template naming the requirement, and the parts from the file that fill it (for ``fit``).

    The meaning is added where the notation is not PEP 440 (variables, Poetry's ``^``, conda's ``=``).
    ``name``: the package a lock, a source build or a URL is named as (flash-attn-3, flash-attn-4).
    """
    if req.kind is Kind.LOCK:
        return f"locked {name} {{req}}", {"req": req.version.public if req.version else "(no version)"}
    if req.build is not None:
        what = req.version.public if req.version is not None else "of an unknown version"
        return f"{name} {{req}} built from source", {"req": what}
    if req.url is not None:
        what = req.version.public if req.version is not None else "an unknown version"
        return f"{name} {{req}} from this URL", {"req": what}
    meaning = req.constraint_text
    if meaning == "any":
        return "unpinned `{req}`", {"req": written(req)}
    compact = written(req).replace(" ", "")
    if not req.alternatives and all(str(s) in compact for s in req.specifier):
        return "`{req}`", {"req": written(req)}
    return "`{req}`" + MEANING, {"req": written(req), "meaning": meaning}


def pinned_at(where: Requirement | None) -> str:
    """Where ``Context.pinned`` found a pin, for a note: '(uv.lock:12:1)', or '(the base image)'."""
    return f"({where.location})" if where else "(the base image)"


def quoted(req: Requirement) -> str:
    """The requirement and where it is, for a note: '`flash-attn<2.6` (constraints.txt:1:1)'."""
    return f"`{written(req)}` ({req.location})"


def breaks(ctx: Context, req: Requirement, flash_attn: Release | None, condition: str = "") -> list[str]:
    """Notes on what a flash-attn without paged KV breaks in this environment, and for whom.

    transformers is named only where it is in the environment, or may be: a project that mentions it
    nowhere, or whose lock installs none, hears about any code that calls the kernel instead.
    ``condition`` ('with an old one, ') starts each note.
    """
    return [condition + note for note in _breaks(ctx, req, flash_attn)]


def _breaks(ctx: Context, req: Requirement, flash_attn: Release | None) -> list[str]:
    facts = ctx.transformers
    pin = ctx.pinned(req, TRANSFORMERS)
    if pin is not None:
        pinned, where = pin
        return _pinned(
            facts, pinned, pinned_at(where), flash_attn.version if flash_attn else None, _kernels(ctx, req)
        )
    present = _present(ctx, req)
    if present:
        if _predates_block_tables(ctx, present):
            what = " and ".join(quoted(r) for r in present)
            return [
                f"transformers as required here ({what}) predates {facts.fa2_block_table_on_cuda}, so it "
                "never sends flash-attn 2 a block table and this stack runs today",
                _later(facts),
            ]
        return [_generic(facts, "transformers' continuous batching")]
    if _mentioned(ctx) and not _locked_without(ctx, req):
        lead = "where transformers is installed (this environment does not list it), its continuous batching"
        return [_generic(facts, lead)]
    return [_caller(ctx, flash_attn)]


def _present(ctx: Context, req: Requirement, name: str = TRANSFORMERS) -> list[Requirement]:
    """Requirements that install ``name`` in an environment of ``req`` (not mere constraints): once per
    set of environments (a manifest's requirements share one), not once a finding."""
    envs = ctx.environments_of(req)
    cache = _PRESENT.of(ctx)
    key = (name, tuple(envs))
    if key not in cache:
        found = {r.location: r for env in envs for r in (*env.of(name, locked=True), *env.of(name))}
        cache[key] = [r for r in found.values() if r.kind is not Kind.CONSTRAINT]
    return cache[key]


_PRESENT: Memo[tuple[str, tuple[Environment, ...]], list[Requirement]] = Memo()


def _predates_block_tables(ctx: Context, present: list[Requirement]) -> bool:
    """Whether the transformers ``present`` installs all predate sending flash-attn 2 a block table."""
    found = _PREDATES.of(ctx)
    key = tuple(r.location for r in present)
    if key not in found:
        rng = intersect(r for r in present if not r.unresolved)
        since = SpecifierSet(f">={ctx.transformers.fa2_block_table_on_cuda}").to_range()
        found[key] = rng.intersection(since).is_empty
    return found[key]


_PREDATES: Memo[tuple[Location, ...], bool] = Memo()


def _kernels(ctx: Context, req: Requirement) -> list[Requirement] | None:
    """The `kernels` requirements of the environments of ``req``; None: fa-lint cannot tell (no lock says
    what installs in full, and none is listed)."""
    found = _present(ctx, req, KERNELS)
    if found:
        return found
    return [] if _locked_without(ctx, req, KERNELS) else None


@once
def _mentioned(ctx: Context) -> bool:
    """Whether any file names transformers: once per run, not once per finding (linear, not quadratic)."""
    return any(r.name == TRANSFORMERS for r in ctx.requirements)


def _locked_without(ctx: Context, req: Requirement, name: str = TRANSFORMERS) -> bool:
    """A lock says what installs in full: one with entries but no ``name`` means none."""
    envs = ctx.environments_of(req)
    return bool(envs) and all(e.locked and not e.of(name, locked=True) for e in envs)


def _path(facts: TransformersFacts) -> str:
    """When continuous batching takes the block-table decode path, as the wheels show it."""
    when = ["on CUDA"]
    if facts.sliding_window_off is not None:
        when.append("for a model without sliding-window layers")
    if facts.block_table_switch is not None:
        when.append("unless `max_blocks_per_request=0` turns that path off")
    return ", ".join(when)


def _later(facts: TransformersFacts) -> str:
    return (
        f"transformers {facts.fa2_block_table_on_cuda} and later decode with "
        f"`flash_attn_with_kvcache(block_table=...)` ({_path(facts)}) and fail at the first decode step: "
        "a transformers upgrade breaks this stack"
    )


def _generic(facts: TransformersFacts, lead: str) -> str:
    return (
        f"{lead} decodes with `flash_attn_with_kvcache(block_table=...)` "
        f"from transformers {facts.fa2_block_table_on_cuda} ({_path(facts)}): up to "
        f"{_before(facts.silent_drop)} it fails at the first decode step with `ValueError: "
        "flash_attn_with_kvcache_fn does not have a block_table or page_table argument`, from "
        f"{facts.silent_drop} it silently decodes wrong"
    )


def _before(version: Version) -> str:
    """The last minor series before ``version``: '5.18.x' for 5.19.0."""
    major, minor = version.release[:2]
    return f"{major}.{minor - 1}.x" if minor else f"before {version}"


def _caller(ctx: Context, flash_attn: Release | None) -> str:
    if flash_attn is not None and not flash_attn.has(KVCACHE):
        first = ctx.kb.first_with(KVCACHE)
        return (
            f"flash-attn {flash_attn} has no `flash_attn_with_kvcache` at all (it ships in {first}): "
            "code that imports it fails with `ImportError`"
        )
    return (
        "code that calls `flash_attn_with_kvcache(..., block_table=...)` fails with `TypeError: "
        "flash_attn_with_kvcache() got an unexpected keyword argument 'block_table'`"
    )


def _refused(
    facts: TransformersFacts, version: Version, tf: str, minimum: Version, kernels: list[Requirement] | None
) -> str:
    """transformers refuses this flash-attn: what runs instead, given the `kernels` it has (None: unknown)."""
    refuses = f"{tf} refuses flash-attn older than {minimum} (`is_flash_attn_2_available()` is False)"
    fails = '`attn_implementation="flash_attention_2"` fails as the model loads'
    kernel = facts.kernel(version)
    if kernel is None:
        return f"{refuses}, so {fails}"
    rocm = f" ({kernel.rocm_repo} on ROCm)" if kernel.rocm_repo else ""
    accepted = f"`kernels`{pretty(kernel.kernels) and ' ' + pretty(kernel.kernels)}"
    auto = (
        " (continuous batching switches to it by itself too: `kernels_fallback_ok=True`)"
        if facts.cb_counts_kernels is not None and version >= facts.cb_counts_kernels
        else ""
    )
    if auto and facts.cb_fa3_first is not None and version >= facts.cb_fa3_first:
        # continuous_api.py from 5.15.0: is_flash_attn_3_available(...) first, then FA2
        auto = (
            " (continuous batching switches to it by itself too, `kernels_fallback_ok=True`, unless FA3 or "
            "its Hub kernel is available: it tries flash_attention_3 first, then flash_attention_2)"
        )
    hub = (
        f"loads the Hub kernel `{kernel.repo}`{rocm} instead and runs that{auto}, never this flash-attn: "
        "whether it decodes with a block table is that kernel's, not this release's"
    )
    if kernels is None:
        return f"{refuses}: with {accepted} installed it {hub}; without it, {fails}"
    if not kernels:
        return f"{refuses}, and this environment installs no `kernels` package, so {fails}"
    fit_ = [r for r in kernels if not r.version_range.intersection(kernel.kernels.to_range()).is_empty]
    where = ", ".join(quoted(r) for r in kernels)
    if not fit_:
        return (
            f"{refuses}; the `kernels` installed here ({where}) is not one it accepts ({accepted}): {fails}"
        )
    return f"{refuses}; `kernels` is installed here ({where}), so it {hub}"


def _pinned(
    facts: TransformersFacts,
    version: Version,
    where: str,
    flash_attn: Version | None,
    kernels: list[Requirement] | None = None,
) -> list[str]:
    """What one transformers release does with a flash-attn that has no block_table."""
    tf = f"transformers {version} {where}"
    notes = []
    if version > facts.newest_read:
        notes.append(
            f"transformers {version} is newer than the newest release fa-lint read "
            f"({facts.newest_read}); it is assumed to behave as that one"
        )
    minimum = facts.minimum_flash_attn(version)
    if flash_attn is not None and minimum is not None and flash_attn < minimum:
        return [*notes, _refused(facts, version, tf, minimum, kernels)]
    if kernels and facts.kernel(version) is not None and minimum is not None:
        notes.append(
            f"`kernels` is installed, but {tf} loads its Hub kernel only for a flash-attn it refuses (older "
            f"than {minimum}): this one passes, so pip's flash-attn is what runs"
        )
    if version < facts.continuous_batching:
        return [
            *notes,
            f"{tf} has no continuous batching yet, so nothing sends a block table and this stack runs today",
            _later(facts),
        ]
    if version < facts.key_check:
        today = "decodes continuous batching through `flash_attn_varlen_func` without a block table"
        return [*notes, f"{tf} {today}, so this stack runs today", _later(facts)]
    if version < facts.fa2_block_table_on_cuda:
        today = "takes the block-table decode path only with FA3 on CUDA"
        if facts.xpu_block_table is not None and version >= facts.xpu_block_table:
            today += " (or FA2 on Intel XPU, through the Hub kernel kernels-community/flash-attn2)"
        today += "; flash-attn 2 on CUDA still decodes through `flash_attn_varlen_func`"
        return [*notes, f"{tf} {today}, so this stack runs today", _later(facts)]
    if version < facts.silent_drop:
        return [
            *notes,
            f"with {tf}, continuous batching fails at the first decode step when it takes the block-table "
            f"path ({_path(facts)}): `ValueError: flash_attn_with_kvcache_fn does not have a block_table or "
            "page_table argument`",
        ]
    return [
        *notes,
        f"with {tf}, continuous batching silently drops the block table when it takes the block-table path "
        f"({_path(facts)}), as this flash-attn has neither block_table nor page_table: decode reads the "
        "paged cache as if it were contiguous (wrong output or shape errors, no error message)",
    ]
