"""FAL017 (and FAL003 for flash-attn-4): what a flash-attn-4 requirement installs, and what it can do.

flash-attn-4 is a distribution of its own (``flash_attn/cute``), judged from ``fa_lint.kb.fa4``, never
against flash-attn 2's releases: its paged KV is ``flash_attn_varlen_func(page_table=...)``, it has no
``flash_attn_with_kvcache``, its page table runs on some GPU generations only, and every release is a
pre-release, which pip and uv pick differently.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from fa_lint.model import FA4, Finding, Kind, Requirement, Severity
from fa_lint.rules._base import About, Context, Rule
from fa_lint.rules._text import TRANSFORMERS, fit, pinned_at, quoted, subject
from fa_lint.rules.versions import JUDGED, NO_SUCH_RELEASE

if TYPE_CHECKING:
    from fa_lint.kb.fa4 import Fa4KnowledgeBase, Fa4Release

# the requirements each release declares that an environment's own pins can contradict
DEPENDENCIES = ("nvidia-cutlass-dsl", "quack-kernels")

FLASH_ATTN_4 = Rule(
    "FAL017",
    "flash-attn-cute",
    Severity.INFO,
    "What a flash-attn-4 requirement installs and can do: paged KV only through "
    "flash_attn_varlen_func(page_table=...), on some GPUs, and no block table from transformers.",
    also=(Severity.ERROR, Severity.WARNING),  # a code-less placeholder, no release pip finds, a torch clash
)
RULES = (FLASH_ATTN_4,)
PACKAGES = frozenset({FA4, TRANSFORMERS, *DEPENDENCIES})  # the requirements this rule reads


def check(ctx: Context) -> Iterator[Finding]:
    kb: Fa4KnowledgeBase | None = None
    for req in ctx.requirements:
        if req.name != FA4 or req.kind not in JUDGED or req.unresolved or req.url or req.build:
            continue
        if ctx.from_source(req):
            continue  # a git or URL source replaces the index: its version is not the pin's
        if req.kind is not Kind.LOCK and any(e.of(FA4, locked=True) for e in ctx.environments_of(req)):
            continue  # a lock says what installs: its entry is judged, not the manifest's range
        if kb is None:
            from fa_lint.kb import fa4  # read the first time a file asks for flash-attn-4

            kb = fa4.load()
        yield _judge(ctx, req, kb)


def _installer(ctx: Context, req: Requirement) -> str:
    """Whose rules pick the release: "pip", "uv", or "" (not known: a file any of them may read)."""
    if req.options is not None and req.options.installer in ("pip", "uv"):
        return req.options.installer
    if req.tool == "uv" or any(b.tool == "uv" for b in ctx.builds_in(req.location.path)):
        return "uv"
    if any("uv" in ctx.lock_tools(env) for env in ctx.environments_of(req)):
        return "uv"  # a project uv locks: uv resolves it
    return ""


def _judge(ctx: Context, req: Requirement, kb: Fa4KnowledgeBase) -> Finding:
    installer = _installer(ctx, req)
    pre = req.options is not None and req.options.pre
    spec = SpecifierSet(f"=={req.version.public}") if req.version is not None else req.specifier
    pinned = req.version is not None or any(s.operator in ("==", "===") for s in spec)
    picked = kb.installs(spec, pinned, installer or "pip", pre)
    fields: About = {
        "package": FA4,
        "requirement": req.raw,
        "admitted": tuple(str(r) for r in picked),
        "environment": ctx.environment_name(req),
    }
    template, parts = subject(req, FA4)
    if not picked:
        by_uv = kb.installs(spec, pinned, "uv", pre)
        if not by_uv:
            return _no_release(req, kb, spec, template, parts, fields)
        return _prerelease(req, installer, by_uv[-1], template, parts, fields)
    newest = picked[-1]
    if not newest.ships_code:
        return FLASH_ATTN_4.finding(
            req.location,
            fit(
                f"{template} installs {FA4} {newest}, a yanked placeholder with no code; require "
                f"{FA4}>={kb.newest}",
                **parts,
            ),
            severity=Severity.ERROR,
            notes=(
                f"{FA4} {newest} ({newest.source}) ships no flash_attn/cute at all: `import flash_attn.cute` "
                "fails with ModuleNotFoundError",
            ),
            help=f"require {FA4}>={kb.newest} (every 4.0.0bN release is a pre-release)",
            **fields,
        )
    conflict = _conflict(ctx, req, picked, fields, kb)
    if conflict is not None:
        return conflict
    return FLASH_ATTN_4.finding(
        req.location,
        fit(
            f"{template}: paged KV only through flash_attn_varlen_func(page_table=...), no "
            "flash_attn_with_kvcache",
            **parts,
        ),
        notes=tuple(_notes(ctx, req, kb, picked)),
        help="call flash_attn.cute.flash_attn_varlen_func(..., page_table=...) on SM "
        f"{_sm(newest.paged_archs)}, or use flash-attn>=2.5.0 for flash_attn_with_kvcache(block_table=...)",
        **fields,
    )


def _no_release(
    req: Requirement,
    kb: Fa4KnowledgeBase,
    spec: SpecifierSet,
    template: str,
    parts: dict[str, str],
    fields: About,
) -> Finding:
    wanted = req.version or next((Version(s.version) for s in spec if s.operator in ("==", "===")), None)
    near = ""
    if wanted is not None:
        real = [r for r in kb.releases if not r.yanked]
        below = [r for r in real if r.version < wanted]
        above = [r for r in real if r.version > wanted]
        names = [str(x[-1 if x is below else 0]) for x in (below, above) if x]
        near = f" (nearest: {' and '.join(names)})" if names else ""
    return NO_SUCH_RELEASE.finding(
        req.location,
        fit(f"{template} matches no {FA4} release{near}; require {FA4}>={kb.newest}", **parts),
        notes=(
            f"{FA4} has {len([r for r in kb.releases if not r.yanked])} releases on PyPI, 4.0.0b3 to "
            f"{kb.newest}, all pre-releases, and a yanked placeholder 0.0.1: installing this fails with "
            "'No matching distribution found'",
        ),
        help=f"require {FA4}>={kb.newest}",
        **fields,
    )


def _prerelease(
    req: Requirement,
    installer: str,
    by_uv: Fa4Release,
    template: str,
    parts: dict[str, str],
    fields: About,
) -> Finding:
    """pip without --pre finds nothing: the one final release matches, and is yanked."""
    certain = installer == "pip"
    lead = "pip finds no release for" if certain else "pip (without --pre) finds no release for"
    return FLASH_ATTN_4.finding(
        req.location,
        fit(f"{lead} {template}: all are pre-releases; require {FA4}>={by_uv}", **parts),
        severity=Severity.ERROR if certain else Severity.WARNING,
        notes=(
            f"every {FA4} release on PyPI is a pre-release (4.0.0bN) but 0.0.1, which is yanked; pip lets "
            "pre-releases in only when no final release matches, 0.0.1 does, and pip then drops it as "
            "yanked: 'No matching distribution found' (pip 23.2 to 26.3)",
            f"uv takes pre-releases when every release left is one: it installs {by_uv}",
        ),
        help=f"name a pre-release in the requirement ({FA4}>={by_uv}), or install with pip --pre",
        **fields,
    )


def _conflict(
    ctx: Context, req: Requirement, picked: Sequence[Fa4Release], fields: About, kb: Fa4KnowledgeBase
) -> Finding | None:
    """A dependency the environment pins that no admitted release accepts: the resolver fails."""

    def accepts(r: Fa4Release, name: str, version: Version) -> bool:
        return name not in r.requires or SpecifierSet(r.requires[name]).contains(version, prereleases=True)

    for name in DEPENDENCIES:
        pin = ctx.pinned(req, name)
        if pin is None:
            continue
        version, where = pin
        if any(accepts(r, name, version) for r in picked):
            continue
        newest = picked[-1]
        needs = f"{name}{newest.requires[name]}"
        if len(picked) == 1:
            headline = fit(f"{FA4} {newest} requires {needs}, but this environment pins {version}", **{})
        else:
            template, parts = subject(req)
            headline = fit(
                f"{template} admits no {FA4} release that accepts {name} {version} ({newest} needs "
                f"{newest.requires[name]})",
                **parts,
            )
        other = [r for r in kb.releases if r.ships_code and not r.yanked and accepts(r, name, version)]
        pinned = f"{quoted(where)} pins {name} {version}" if where else f"the base image has {name} {version}"
        return FLASH_ATTN_4.finding(
            req.location,
            headline,
            severity=Severity.ERROR,
            related=(where.location,) if where else (),
            notes=(
                f"{pinned}; {FA4} {newest} declares `Requires-Dist: {needs}` ({newest.source}), and no "
                f"release the requirement admits accepts {version}: the resolver fails (pip's "
                "ResolutionImpossible)",
            ),
            help=f"let {name} be {newest.requires[name]}"
            + (f", or pin {FA4}=={other[-1]}, the newest release that accepts {version}" if other else ""),
            **fields,
        )
    return None


def _sm(archs: Sequence[int]) -> str:
    if not archs:
        return "none"
    return f"{archs[0]}.x" if len(archs) == 1 else f"{archs[0]}.x-{archs[-1]}.x"


def _notes(ctx: Context, req: Requirement, kb: Fa4KnowledgeBase, picked: Sequence[Fa4Release]) -> list[str]:
    newest = picked[-1]
    first = f" (since the first tag, {kb.first_tag})" if kb.first_tag and kb.first_tag_paged else ""
    which = str(newest) if len(picked) == 1 else f"{len(picked)} releases, {picked[0]} to {newest}"
    notes = [
        f"{FA4} ({which}) takes paged KV only as `flash_attn_varlen_func(..., page_table=...)`{first}; "
        "it has no `flash_attn_with_kvcache`, so code that imports one from flash_attn.cute fails "
        "with ImportError",
    ]
    refused = ", ".join(f"{sm}.x" for sm in newest.paged_refused)
    at = newest.evidence.get(f"paged_refused_sm{newest.paged_refused[0]}") if newest.paged_refused else None
    notes.append(
        f"{newest}'s page table runs on SM {_sm(newest.paged_archs)} only"
        + (f"; SM {refused} refuse it (`assert page_table is None`, {at})" if refused else "")
    )
    requires = ", ".join(f"{n}{s}" for n, s in sorted(newest.requires.items()))
    if requires:
        notes.append(f"{newest} requires {requires} (its Requires-Dist)")
    notes.append(_transformers(ctx, req))
    return notes


def _transformers(ctx: Context, req: Requirement) -> str:
    facts = ctx.transformers
    pin = ctx.pinned(req, TRANSFORMERS)
    never = (
        f"transformers through {facts.newest_read} (the newest read) never sends {FA4} a block table "
        "(`flash_attn_with_kvcache = None  # not supported yet`): continuous batching with "
        '`attn_implementation="flash_attention_4"` decodes through flash_attn_varlen_func without one, '
        "so it runs, without the paged decode path"
    )
    if pin is None:
        return never
    version, where = pin
    tf = f"transformers {version} {pinned_at(where)}"
    if facts.fa4_supported is not None and version < facts.fa4_supported:
        return f"{tf} has no flash_attention_4 (from {facts.fa4_supported}): it never calls {FA4}"
    if facts.fa4_block_table_on_cuda is not None and version >= facts.fa4_block_table_on_cuda:
        return f"{tf} sends {FA4} a block table on CUDA"
    return never.replace(f"transformers through {facts.newest_read} (the newest read)", tf, 1)
