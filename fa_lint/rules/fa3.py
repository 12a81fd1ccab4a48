"""FAL022: what a flash-attn-3 (FlashAttention 3) requirement installs, and what it can do.

FA3 is flash-attention's ``hopper/`` folder, imported as ``flash_attn_interface``, judged from
``fa_lint.kb.fa3`` (its source, commit by commit: it has no release tags) and never against flash-attn
2's releases. What decides is where it comes from:

- PyPI holds only ``flash-attn-3`` 0.0.0, an empty placeholder: an install command that reads only
  PyPI installs it (or, pinned to a real version, finds nothing) -- an error. Worse than nothing:
  transformers counts FA3 as available when the flash-attn-3 distribution provides
  ``flash_attn_interface``, so an empty one is picked and fails at import;
- a wheel URL, a source build of ``hopper/``, or another index (PyTorch's): paged KV through
  ``flash_attn_with_kvcache(page_table=...)`` (since the 2025-01-07 rewrite), sm_90a and sm_80
  kernels, and what the pinned transformers does with it -- an info finding.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from fa_lint._lazy import Lazy
from fa_lint.model import FA3, Finding, Kind, Requirement, Severity
from fa_lint.rules._base import About, Context, Rule
from fa_lint.rules._text import TRANSFORMERS, fit, pinned_at, subject
from fa_lint.rules.versions import JUDGED

if TYPE_CHECKING:
    from fa_lint.kb.fa3 import Fa3KnowledgeBase

FLASH_ATTN_3 = Rule(
    "FAL022",
    "flash-attn-hopper",  # FA3 is flash-attention's hopper/ (kebab-case names have no digits)
    Severity.INFO,
    "What a flash-attn-3 (FlashAttention 3) requirement installs and can do: PyPI's empty placeholder, "
    "or paged KV through flash_attn_with_kvcache(page_table=...) on SM 8.x and 9.0.",
    also=(Severity.ERROR, Severity.WARNING),  # PyPI's placeholder or no release; a pre-2025 3.0.0b1 build
)
RULES = (FLASH_ATTN_3,)
PACKAGES = frozenset({FA3, TRANSFORMERS})  # the requirements this rule reads


def check(ctx: Context) -> Iterator[Finding]:
    kb: Fa3KnowledgeBase | None = None
    for req in ctx.requirements:
        if "subdirectory=hopper" in (req.url or "") and req.kind in JUDGED:
            kb = kb or _load()
            named = _names(ctx, req, kb)
            if named is not None:
                yield named
                continue  # the build's name decides first: under another name, nothing else is FA3's
        if req.name != FA3 or req.kind not in JUDGED or req.unresolved:
            continue
        if req.kind is not Kind.SOURCE and ctx.from_source(req):
            continue  # a git or URL source replaces the index: the source's own record is judged
        if req.kind is not Kind.LOCK and any(e.of(FA3, locked=True) for e in ctx.environments_of(req)):
            continue  # a lock says what installs: its entry is judged, not the manifest's range
        kb = kb or _load()
        yield _judge(ctx, req, kb)
    yield from _imports(ctx, kb)


def _imports(ctx: Context, kb: Fa3KnowledgeBase | None) -> Iterator[Finding]:
    """Unguarded imports of FA3's flash_attn_interface where the files install only flash-attn 2."""
    from fa_lint.code.uses import IMPORT
    from fa_lint.rules import _fa3names

    for use in ctx.uses:
        if use.kind != IMPORT:
            continue
        kb = kb or _load()
        named = _fa3names.unguarded_import(ctx, use, kb)
        if named is not None:
            yield FLASH_ATTN_3.finding(
                use.location,
                named.headline,
                severity=named.severity,
                package=FA3,
                notes=named.notes,
                help=named.help,
            )


def _load() -> Fa3KnowledgeBase:
    from fa_lint.kb import fa3  # read the first time a file asks for flash-attn-3

    return fa3.load()


def _names(ctx: Context, req: Requirement, kb: Fa3KnowledgeBase) -> Finding | None:
    """A hopper/ build whose name is not what it builds, or not what transformers looks for."""
    from fa_lint.rules import _fa3names

    named = _fa3names.judge(ctx, req, kb)
    if named is None:
        return None
    return FLASH_ATTN_3.finding(
        req.location,
        named.headline,
        severity=named.severity,
        package=FA3,
        requirement=req.raw,
        environment=ctx.environment_name(req),
        notes=named.notes,
        help=named.help,
    )


def _origin(req: Requirement) -> str:
    """Where the install comes from: "wheel", "source", "index" (another index or one not known), or
    "pypi" (an install command that names no index: pip and uv read PyPI)."""
    url = req.url or ""
    if url.endswith(".whl"):
        return "wheel"
    if req.build or req.checkout is not None or url:
        return "source"
    options = req.options
    if options is None or not options.installer or options.index_urls or options.index_unsure:
        return "index"
    return "pypi"


def _judge(ctx: Context, req: Requirement, kb: Fa3KnowledgeBase) -> Finding:
    fields: About = {
        "package": FA3,
        "requirement": req.raw,
        "environment": ctx.environment_name(req),
    }
    template, parts = subject(req, FA3)
    origin = _origin(req)
    locked = req.kind is Kind.LOCK and req.version is not None
    if origin == "pypi" or (
        locked and any(r.version == str(req.version) and not r.ships_code for r in kb.pypi)
    ):
        return _pypi(ctx, req, kb, template, parts, fields)  # a lock of 0.0.0 pins PyPI's placeholder
    version = req.version or _wheel_version(req.url or "")
    notes = [_where(req, kb, origin, version), *_paged(kb, version), _archs(kb)]
    notes.append(_transformers(ctx, req))
    severity = Severity.INFO
    if version is not None and version < Version("3.0.0") and origin == "wheel":
        severity = Severity.WARNING  # a 3.0.0b1 wheel: built before or after page_table, nothing says
    return FLASH_ATTN_3.finding(
        req.location,
        fit(
            f"{template}: paged KV through flash_attn_with_kvcache(page_table=...), not block_table", **parts
        ),
        severity=severity,
        notes=tuple(notes),
        help="call flash_attn_interface.flash_attn_with_kvcache(..., page_table=...) on SM 9.0 (or 8.x), "
        "or use flash-attn>=2.5.0 for flash_attn_with_kvcache(block_table=...)",
        **fields,
    )


def _pypi(
    ctx: Context,
    req: Requirement,
    kb: Fa3KnowledgeBase,
    template: str,
    parts: dict[str, str],
    fields: About,
) -> Finding:
    """An install command that reads only PyPI: it installs the placeholder, or finds nothing."""
    spec = SpecifierSet(f"=={req.version.public}") if req.version is not None else req.specifier
    placeholders = [r for r in kb.pypi if spec.contains(r.version, prereleases=True)]
    held = ", ".join(r.version for r in kb.pypi) or "nothing"
    help_ = (
        "install FA3 from a build of flash-attention's hopper/ (`pip install --no-build-isolation "
        "'git+https://github.com/Dao-AILab/flash-attention#subdirectory=hopper'`) or from an index that "
        "serves its wheels (PyTorch's, `--index-url https://download.pytorch.org/whl/cu128`)"
    )
    if not placeholders:
        return FLASH_ATTN_3.finding(
            req.location,
            fit(
                f"{template} matches no {FA3} release on PyPI (it holds only {held}, a placeholder)", **parts
            ),
            severity=Severity.ERROR,
            notes=(
                f"this install command names no index, so pip and uv read PyPI, where {FA3} has only {held}: "
                "'No matching distribution found'",
                *(f"{r.version}: {r.evidence}" for r in kb.pypi),
            ),
            help=help_,
            **fields,
        )
    r = placeholders[-1]
    notes = [
        f"this install command names no index, so pip and uv read PyPI, where {FA3} has only {held}"
        if req.kind is not Kind.LOCK
        else f"the lock pins {req.version}, PyPI's only {FA3}",
        f"{FA3} {r.version} ({r.evidence}) ships an empty `flash_attn_interface`: `from flash_attn_interface "
        "import flash_attn_func` fails with ImportError",
    ]
    facts = ctx.transformers
    if facts.fa3_by_distribution is not None:
        notes.append(
            f"transformers {facts.fa3_by_distribution} and later count FA3 as available when the {FA3} "
            "distribution provides `flash_attn_interface` "
            f"({facts.evidence.get('fa3_by_distribution', '')}): this empty one counts, and "
            '`attn_implementation="flash_attention_3"` fails at import'
        )
    if facts.cb_fa3_first is not None:
        notes.append(
            f"from transformers {facts.cb_fa3_first}, continuous batching switches an eager or SDPA model to "
            "FA3 first, then FA2 "
            f"({facts.evidence.get('cb_fa3_first', '')}): with this placeholder it picks FA3, even beside a "
            "working flash-attn"
        )
    return FLASH_ATTN_3.finding(
        req.location,
        fit(f"{template} installs {FA3} {r.version} from PyPI, an empty placeholder", **parts),
        severity=Severity.ERROR,
        notes=tuple(notes),
        help=help_,
        **fields,
    )


_WHEEL = Lazy(r"flash_attn_3-([^-/]+)-")


def _wheel_version(url: str) -> Version | None:
    m = _WHEEL().search(url.rsplit("/", 1)[-1])
    if m is None:
        return None
    try:
        return Version(m.group(1).replace("%2B", "+"))
    except InvalidVersion:
        return None


def _where(req: Requirement, kb: Fa3KnowledgeBase, origin: str, version: Version | None) -> str:
    if origin == "wheel":
        text = f"a prebuilt {FA3} wheel" + (f", version {version}" if version else "")
        if version is not None and version >= Version("3.0.0"):
            stable = kb.fact("torch_stable_abi")
            if stable is not None:
                text += (
                    "; 3.0.0 builds against torch's stable ABI when built with torch "
                    f"{stable.value} or later ({stable}), so one wheel serves later torch releases too"
                )
        return text
    if origin == "source":
        ref = re.search(r"@([^@#/]+)(?:#|$)", (req.url or "").split("://", 1)[-1])
        if ref is not None:
            return (
                f"built from flash-attention's hopper/ at {ref.group(1)}: FA3 has no release tags, and "
                f"fa-lint (its history read up to {kb.head} of {kb.head_date}) does not date a commit it "
                "is given, so which of the facts below hold there is not judged"
            )
        return (
            f"built from flash-attention's hopper/ (its default branch, read up to {kb.head} of "
            f"{kb.head_date}): FA3 has no release tags, so what a checkout builds depends on its commit"
        )
    if req.kind is Kind.LOCK and req.version is not None:
        return (
            f"the lock pins {req.version}, which is not on PyPI (it has only "
            f"{', '.join(r.version for r in kb.pypi)}, an empty placeholder): it comes from the index the "
            "lock names"
        )
    if req.options is not None and req.options.index_urls:
        return (
            f"installed from {', '.join(req.options.index_urls)}: fa-lint does not know which {FA3} "
            "releases that index serves"
        )
    return (
        f"on PyPI, {FA3} is only {', '.join(r.version for r in kb.pypi)}, an empty placeholder: this "
        "installs FA3 only where the installer reads another index (PyTorch's serves 3.0.0 wheels) or a "
        "source this file does not show"
    )


def _paged(kb: Fa3KnowledgeBase, version: Version | None) -> list[str]:
    paged = kb.fact("kvcache_page_table")
    if paged is None:
        return [f"no {FA3} commit read has flash_attn_with_kvcache(page_table=...)"]
    out = [
        f"paged KV is flash_attn_with_kvcache(..., page_table=...) since {paged.commit} ({paged.date}, "
        f"{paged.at}); FA3 has no block_table parameter, and flash_attn_varlen_func takes no page table"
    ]
    final = next((fact for v, fact in kb.versions if v == "3.0.0"), None)
    if version is not None and version < Version("3.0.0") and final is not None:
        out.append(
            f"{version} names every build from the first FA3 commit to {final.date}: those before "
            f"{paged.date} have no page_table"
        )
    return out


def _archs(kb: Fa3KnowledgeBase) -> str:
    sm80 = kb.fact("sm80")
    floor = kb.fact("nvcc_floor")
    text = "kernels for sm_90a (Hopper)"
    if sm80 is not None:
        text += f" and, since {sm80.date}, sm_80 (8.x GPUs; {sm80.at})"
    text += ", none for Blackwell (FAL013 judges the target's GPU)"
    if floor is not None:
        text += f"; a build needs nvcc {floor.value} or later ({floor.at})"
    return text


def _transformers(ctx: Context, req: Requirement) -> str:
    facts = ctx.transformers
    pin = ctx.pinned(req, TRANSFORMERS)
    by_signature = (
        "transformers passes the block table to a kernel without block_table as page_table, read from "
        f"its signature (from {facts.key_check}; flash_kwargs['page_table'] from {facts.fa3_page_table})"
    )
    if pin is None:
        return by_signature
    version, where = pin
    tf = f"transformers {version} {pinned_at(where)}"
    if facts.fa3_supported is not None and version < facts.fa3_supported:
        return f"{tf} has no flash_attention_3 (from {facts.fa3_supported}): it never calls {FA3}"
    if version < facts.key_check:
        return f"{tf} never sends FA3 a block table (continuous batching decodes through varlen without one)"
    text = f"{tf} passes FA3 the block table as page_table, read from flash_attn_with_kvcache's signature"
    if facts.cb_fa3_first is not None and version >= facts.cb_fa3_first:
        text += "; its continuous batching switches to FA3 first, then FA2"
    return text
