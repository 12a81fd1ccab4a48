"""What an NGC PyTorch container's own flash-attn does to a project that decodes with the paged path.

``FROM nvcr.io/nvidia/pytorch:25.01-py3`` ships flash-attn 2.4.2 (kb/ngc.json, with its source): no
``block_table`` (it ships in 2.5.0). A stage on that base that installs no flash-attn of its own, keeps
the container's torch, installs a transformers that decodes with ``flash_attn_with_kvcache(block_table=...)``
and runs code that takes that path (transformers' continuous batching, or its own block-table call)
fails at the first decode step: FAL001 on the ``FROM`` line, with the shipped version in the note. The
same stage on a release whose shipped flash-attn no source gives is said as not judged (FAL023, info).

Everything must hold, for precision: a stage that installs its own flash-attn (FAL023 judges that
install) or uninstalls it, one that installs another torch, one that installs no transformers (the code
cannot run there), a transformers pinned below the block-table path, code that asks only for an
implementation the block-table path does not take, or a stage another stage builds on (the one built
on it is judged) says nothing here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from packaging.version import Version

from fa_lint.code.uses import ATTN, CALL
from fa_lint.kb import PAGED_KV
from fa_lint.machine.environments import Environment, split
from fa_lint.model import FA3, FA4, FLASH_ATTN, Finding, Image, Kind, Severity
from fa_lint.rules._base import Context, Rule, exact
from fa_lint.rules._code import certain, paged

if TYPE_CHECKING:
    from fa_lint.kb.ngc import NgcFacts, NgcRelease

TRANSFORMERS = "transformers"
_OWN = (FLASH_ATTN, FA3, FA4)


def base_image(env: Environment, images: dict[tuple[str, str], Image]) -> Image | None:
    """The NGC PyTorch image an environment's stage is built on, through ``FROM other-stage``."""
    for img in env.images:
        current: Image | None = img
        for _ in range(32):
            if current is None:
                break
            if "nvidia/pytorch:" in current.reference:
                return current
            current = images.get((current.location.path, f"stage:{current.reference}"))
    return None


def check(ctx: Context, missing: Rule, container: Rule) -> Iterator[Finding]:
    """FAL001 (``missing``) where the container's flash-attn is known to lack paged KV, FAL023
    (``container``) as not judged where its version is not known."""
    from fa_lint.kb import ngc

    facts = ngc.load()
    images = {(s.location.path, s.scope): s for s in ctx.settings if isinstance(s, Image)}
    # stages another stage with installs of its own builds on: that one is judged (a stage with no
    # install command has no environment, and then its base is the stage judged)
    built_on = {(i.location.path, i.reference) for env in ctx.environments for i in env.images}
    said: set[object] = set()
    for env in ctx.environments:
        base = base_image(env, images)
        if base is None or base.location in said or _built_on(env, built_on):
            continue
        release = ngc.tag(base.reference)
        if release is None or ngc.key(release) < ngc.key(facts.ships_flash_attn_since):
            continue
        reasons = _decodes_paged(ctx, env)
        if reasons is None:
            continue
        row = facts.release(release)
        finding = _finding(ctx, env, base, facts, row, reasons, (missing, container))
        if finding is not None:
            said.add(base.location)
            yield finding


def _built_on(env: Environment, built_on: set[tuple[str, str]]) -> bool:
    path, scope = split(env.name)
    return scope.startswith("stage:") and (path, scope.removeprefix("stage:")) in built_on


def _decodes_paged(ctx: Context, env: Environment) -> list[str] | None:
    """The notes that say this stage decodes with the block table, or None when it may not: it brings
    its own flash-attn (or removes it), its own torch, no transformers, or its code does not take the
    path."""
    if any(env.of(n) or env.of(n, locked=True) for n in _OWN) or any(r.name in _OWN for r in env.superseded):
        return None  # its own flash-attn: FAL023 and the version rules judge that install
    if any(u.name in _OWN for u in env.removed) or _own_torch(ctx, env):
        return None
    transformers = _transformers(ctx, env)
    code = _code(ctx) if transformers is not None else None
    return None if transformers is None or code is None else [code, transformers]


def _own_torch(ctx: Context, env: Environment) -> bool:
    final = ctx.toolchain(env).final
    return final is not None and any(s.requirement is not None for s in final.decided)


def _transformers(ctx: Context, env: Environment) -> str | None:
    """The note on the stage's transformers, when it decodes with the block table: one it installs whose
    pins (if any) are at or after the release that takes the block-table path."""
    listed = (*env.of(TRANSFORMERS), *env.of(TRANSFORMERS, locked=True))
    found = [r for r in listed if r.kind is not Kind.CONSTRAINT]
    if not found:
        return None
    facts = ctx.transformers
    pins = [Version(v.public) for r in found if (v := exact(r)) is not None]
    if pins and all(p < facts.fa2_block_table_on_cuda for p in pins):
        return None
    first = found[0]
    which = f"transformers {pins[0]}" if pins else f"`{first.raw}` (the newest transformers it admits)"
    return (
        f"{which} ({first.location}) decodes continuous batching with `flash_attn_with_kvcache("
        f"block_table=...)` from transformers {facts.fa2_block_table_on_cuda} on, on CUDA"
    )


def _code(ctx: Context) -> str | None:
    """Where the code takes the paged path (or calls the kernel with a block table itself), when nothing
    keeps it off the block table and the implementations it asks for are ones that path takes."""
    on, off = paged(ctx, "")
    sure = certain(on, off)
    if sure and _implementation_takes_it(ctx):
        return f"the code takes the paged path: {sure[0].detail} at {sure[0].location}"
    calls = [u for u in ctx.uses if u.kind == CALL and "block_table" in u.keywords]
    if calls:
        return f"the code calls `{calls[0].name}(block_table=...)` itself at {calls[0].location}"
    return None


def _implementation_takes_it(ctx: Context) -> bool:
    asked = [u.name for u in ctx.uses if u.kind == ATTN]
    facts = ctx.transformers
    return not asked or any(facts.block_table_name(name) is not False for name in asked)


def _finding(
    ctx: Context,
    env: Environment,
    base: Image,
    facts: NgcFacts,
    row: NgcRelease,
    reasons: list[str],
    rules: tuple[Rule, Rule],
) -> Finding | None:
    first = ctx.kb.first_with(PAGED_KV)
    shipped = Version(row.flash_attn) if row.flash_attn else None
    if shipped is not None and shipped >= first.version:
        return None
    want = max(first.version, ctx.policy.min_version)
    fields = {
        "package": FLASH_ATTN,
        "requirement": base.reference,
        "environment": env.name,
        "help": "install a flash-attn with paged KV in this stage, built for the container's torch: "
        f"FLASH_ATTENTION_FORCE_BUILD=TRUE pip install -U --no-build-isolation 'flash-attn>={want}'",
    }
    if shipped is None:
        return _not_judged(base, facts, row, reasons, rules[1], fields)
    return rules[0].finding(
        base.location,
        f"`{base.reference}` ships flash-attn {shipped}, which has no paged KV (block_table ships in "
        f"{first}); install flash-attn>={want} in this stage",
        notes=(
            f"NGC {row.tag} ships flash-attn {shipped} ({row.source_of('flash_attn')}), and this stage "
            "installs none of its own, so that is the flash-attn the code runs",
            *reasons,
            f"flash-attn {shipped} has no `block_table`: the first decode step fails (`ValueError: "
            "flash_attn_with_kvcache_fn does not have a block_table or page_table argument`), or, from "
            f"transformers {ctx.transformers.silent_drop}, decodes wrong without an error",
        ),
        **fields,
    )


def _not_judged(
    base: Image, facts: NgcFacts, row: NgcRelease, reasons: list[str], rule: Rule, fields: dict[str, str]
) -> Finding:
    return rule.finding(
        base.location,
        f"whether NGC {row.tag}'s own flash-attn has paged KV is not judged: fa-lint does not know "
        "its version",
        severity=Severity.INFO,
        notes=(
            f"{base.reference} ({base.location}) ships a flash-attn 2 from "
            f"{facts.ships_flash_attn_since} ({facts.ships_source}), and this stage installs none of its own",
            *reasons,
            f"fa_lint/kb/ngc.json has no source for the flash-attn NGC {row.tag} ships; one older than "
            "2.5.0 has no block_table",
        ),
        **fields,
    )
