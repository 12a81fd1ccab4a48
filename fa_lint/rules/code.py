"""FAL018-FAL021: what the project's code runs, against what it installs (fa_lint.code, docs/code.md).

- FAL018: a direct call into flash-attn with a keyword the installed release lacks (``TypeError``).
- FAL019: a kernel the project puts in flash-attn's place whose ``flash_attn_with_kvcache`` takes
  neither ``block_table`` nor ``page_table``, where transformers' paged path can reach it.
- FAL020: a Hub kernel loaded without a version or revision, or a ``kernels.lock`` that disagrees with
  ``[tool.kernels.dependencies]``.
- FAL021: an attention implementation the installed packages cannot provide.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.version import Version

from fa_lint.code.uses import ATTN, CALL, CUSTOM, KERNEL, LOCAL_KERNEL, OLD_LOCK, STALE_LOCK, SUBSTITUTE, Use
from fa_lint.kb import PAGED_KV
from fa_lint.machine.environments import Environment
from fa_lint.model import FA3, FA4, FLASH_ATTN, Finding, Kind, Requirement, Severity
from fa_lint.rules import _hub
from fa_lint.rules._base import Context, Rule, exact
from fa_lint.rules._code import KEYWORDS, ancestors, folder, nearest, sure
from fa_lint.rules._text import KERNELS, TRANSFORMERS, fit, releases

CALL_KEYWORD = Rule(
    "FAL018",
    "call-keyword-missing",
    Severity.ERROR,
    "The code calls flash-attn with a keyword the installed release lacks: TypeError at the first call.",
    also=(Severity.WARNING,),
)
CUSTOM_KERNEL = Rule(
    "FAL019",
    "custom-kernel-no-block-table",
    Severity.ERROR,
    "A kernel put in flash-attn's place whose flash_attn_with_kvcache takes no block_table/page_table.",
    also=(Severity.WARNING,),
)
UNPINNED_KERNEL = Rule(
    "FAL020",
    "hub-kernel-unpinned",
    Severity.WARNING,
    "A Hub kernel loaded without a version or revision, or a kernels.lock that disagrees with pyproject.",
    also=(Severity.ERROR,),
)
ATTN_UNAVAILABLE = Rule(
    "FAL021",
    "attn-implementation-unavailable",
    Severity.WARNING,
    "An attention implementation that no package the environment installs provides.",
    also=(Severity.ERROR,),
)
RULES = (CALL_KEYWORD, CUSTOM_KERNEL, UNPINNED_KERNEL, ATTN_UNAVAILABLE)
PACKAGES = frozenset({TRANSFORMERS, KERNELS})

# attn_implementation -> the distribution transformers detects it by (FA3: only "flash-attn-3", the
# name hopper/setup.py builds; transformers/utils/import_utils.py is_flash_attn_3_available)
PROVIDERS = {
    "flash_attention_2": FLASH_ATTN,
    "flash_attention_3": FA3,
    "flash_attention_4": FA4,
}
FAMILY = frozenset(PROVIDERS.values())
# "org/repo", "org/repo@rev", "org/repo:function": a Hub repository id (not "./folder", "/abs/path")
_HUB = re.compile(r"^\w[\w.-]*/\w[\w.-]*(?:@[^:]+)?(?::\w+)?$")


def check(ctx: Context) -> Iterator[Finding]:
    if not ctx.uses:
        return
    for use in ctx.uses:
        if use.kind == CALL:
            yield from _call(ctx, use)
        elif use.kind == CUSTOM:
            yield from _custom(ctx, use)
        elif use.kind in (KERNEL, STALE_LOCK) or (use.kind == ATTN and _HUB.match(use.name)):
            yield from _kernel(ctx, use)
        elif use.kind == OLD_LOCK:
            yield from _hub.old_lock(ctx, UNPINNED_KERNEL, use)
        if use.kind == ATTN and use.name.removeprefix("paged|") in PROVIDERS:
            yield from _unavailable(ctx, use)


def _installs(env: Environment, name: str) -> list[Requirement]:
    """What installs ``name`` in the environment: its lock's entries if it has any, else its members."""
    locked = list(env.of(name, locked=True))
    return locked or [r for r in env.of(name) if r.kind is not Kind.CONSTRAINT]


def _call(ctx: Context, use: Use) -> Iterator[Finding]:
    """One finding per call: an error for the first keyword and install that no admitted release takes;
    else a warning for the first that some admitted release lacks (block_table on the kvcache call is
    paged KV itself, which FAL001/FAL002 judge at the pin)."""
    gaps = [gap for keyword in use.keywords for gap in _gaps(ctx, use, keyword)]
    worst = next((g for g in gaps if not g[3]), None) or next((g for g in gaps if g[4] != PAGED_KV), None)
    if worst is None:
        return
    keyword, env, req, some, feature = worst
    admitted = ctx.assessment(req).admitted
    first = ctx.kb.first_with(feature)
    what = f"flash-attn {admitted[0]}" if len(admitted) == 1 else f"`{req.raw}`"
    lacking = [r for r in admitted if not r.has(feature)]
    call = f"`{use.name}({keyword}=...)`"
    if some:
        headline = f"{call}: {{what}} admits releases without `{keyword}`; require flash-attn>={first}"
        note = (
            f"{req.location} installs {what}, which admits {releases(lacking)} without `{keyword}` on "
            f"`{use.name}` (it arrives in {first}): with one of those the first call raises TypeError"
        )
    else:
        headline = f"{call}: {{what}} lacks `{keyword}` (TypeError); require flash-attn>={first}"
        note = (
            f"{req.location} installs {what}, which admits no release with `{keyword}` on "
            f"`{use.name}`: the first call raises TypeError: {use.name}() got an unexpected "
            f"keyword argument '{keyword}'"
        )
    yield CALL_KEYWORD.finding(
        use.location,
        fit(headline, what=what),
        severity=Severity.WARNING if some else Severity.ERROR,
        package=FLASH_ATTN,
        requirement=req.raw,
        environment=env.name,
        related=(req.location,),
        notes=(note,),
        help=f"require flash-attn>={first} at {req.location}",
    )


def _gaps(ctx: Context, use: Use, keyword: str) -> Iterator[tuple[str, Environment, Requirement, bool, str]]:
    """(keyword, environment, install, whether some admitted release has it, feature) for each install
    serving the call that admits a release without the keyword."""
    feature = KEYWORDS[use.name].get(keyword)
    if feature is None:
        return
    for env in nearest(ctx, use):
        for req in _installs(env, FLASH_ATTN):
            admitted = ctx.assessment(req).admitted
            has = [r.has(feature) for r in admitted]
            if admitted and not all(has):
                yield keyword, env, req, any(has), feature


def _transformers(envs: list[Environment]) -> Version | None:
    found = {exact(r) for env in envs for r in _installs(env, TRANSFORMERS)}
    found.discard(None)
    return Version(next(iter(found)).public) if len(found) == 1 else None  # type: ignore[union-attr]


def _custom(ctx: Context, use: Use) -> Iterator[Finding]:
    if "block_table" in use.keywords or "page_table" in use.keywords:
        return
    # What puts it in flash-attn's place: a substitution in its own file or package folder (what a
    # substitution elsewhere assigns is not followed), or a local kernel loaded from a folder above it.
    put = _put(ctx, folder(use.location.path))
    kernel_layout = "torch-ext/" in use.location.path.replace("\\", "/")
    if put is None and not kernel_layout:
        return  # a function of that name nothing puts in flash-attn's place: transformers never calls it
    # a kernel's own source is reached by whoever loads it, which this repository need not be
    taken = sure(ctx) if put is not None else []
    facts = ctx.transformers
    pinned = _transformers(nearest(ctx, use))
    notes = []
    if put is not None:
        notes.append(f"{put.location} puts it in flash-attn's place ({put.detail or put.name})")
    else:
        notes.append(
            "it is a kernel's source (torch-ext/): transformers loads it for attn_implementation='org/repo'"
        )
    if (
        pinned is not None
        and facts.key_check <= pinned
        and (facts.key_check_until is None or pinned < facts.key_check_until)
    ):
        notes.append(
            f"transformers {pinned} raises ValueError: flash_attn_with_kvcache_fn does not have a "
            "block_table "
            "or page_table argument, at the first decode step"
        )
    elif pinned is not None and pinned >= facts.silent_drop:
        notes.append(
            f"transformers {pinned} drops the block table without a word, and decode reads the paged cache "
            "as if it were contiguous: wrong output, no error"
        )
    else:
        until = facts.key_check_until or facts.silent_drop
        notes.append(
            f"transformers {facts.key_check} to {until} raises ValueError: flash_attn_with_kvcache_fn does "
            f"not have a block_table or page_table argument; {facts.silent_drop} and later drop the "
            "block table "
            "and read the paged cache as if it were contiguous"
        )
    if taken:
        notes.append(f"the code takes the paged path: {taken[0].detail} at {taken[0].location}")
    else:
        notes.append("no code read takes the paged path for certain; the next script that does reaches it")
    yield CUSTOM_KERNEL.finding(
        use.location,
        "this `flash_attn_with_kvcache` takes no `block_table` or `page_table`: paged decode fails on it; "
        "add `block_table`",
        severity=Severity.ERROR if taken else Severity.WARNING,
        related=(put.location,) if put is not None else (),
        notes=tuple(notes),
        help=(
            "give it a `block_table` (or `page_table`) parameter and use it, or load flash-attn>=2.5.0 "
            "instead"
        ),
    )


def _put(ctx: Context, here: str) -> Use | None:
    """The first use (in the run's order) that puts a kernel of the folder ``here`` in flash-attn's
    place: a substitution in that folder, or a local kernel loaded from it or a folder above it. Looked
    up in an index built once a run (reliability 60), not searched in every use for each kernel."""
    substitutes, locals_ = _put_index(ctx)
    # each list is in the run's order: its first is its earliest
    firsts = [found[0] for found in (substitutes.get(here), *map(locals_.get, ancestors(here))) if found]
    order = _order(ctx)
    return min(firsts, key=lambda u: order[id(u)], default=None)


def _put_index(ctx: Context) -> tuple[dict[str, list[Use]], dict[str, list[Use]]]:
    """Substitutions by their file's folder; local kernels by the folder they load (relative to the
    loading file)."""
    import os

    key = ("what puts kernels in place",)
    if key not in ctx.memo:
        substitutes: dict[str, list[Use]] = {}
        locals_: dict[str, list[Use]] = {}
        for u in ctx.uses:
            if u.kind == SUBSTITUTE:
                substitutes.setdefault(folder(u.location.path), []).append(u)
            elif u.kind == LOCAL_KERNEL and u.name:
                base = os.path.normpath(os.path.join(folder(u.location.path), u.name))
                locals_.setdefault("" if base == "." else base, []).append(u)
        ctx.memo[key] = (substitutes, locals_)
    found: tuple[dict[str, list[Use]], dict[str, list[Use]]] = ctx.memo[key]
    return found


def _order(ctx: Context) -> dict[int, int]:
    key = ("use order",)
    if key not in ctx.memo:
        ctx.memo[key] = {id(u): n for n, u in enumerate(ctx.uses)}
    found: dict[int, int] = ctx.memo[key]
    return found


def _kernel(ctx: Context, use: Use) -> Iterator[Finding]:
    if use.kind == STALE_LOCK:
        yield UNPINNED_KERNEL.finding(
            use.location,
            fit(
                "kernels.lock is stale: `{repo}` ({detail}); run `kernels lock .`",
                repo=use.name,
                detail=use.detail,
            ),
            notes=("get_locked_kernel loads what kernels.lock pins: a kernel it does not pin fails to load",),
            help="run `kernels lock .` and commit both files",
        )
        return
    if use.kind == KERNEL and use.detail == "get_kernel()" and use.args > 1:
        yield from _hub.positional(ctx, UNPINNED_KERNEL, use)
    if use.pinned or "@" in use.name:
        return
    yield from _hub.unpinned(ctx, UNPINNED_KERNEL, use)


def _unavailable(ctx: Context, use: Use) -> Iterator[Finding]:
    name = use.name.removeprefix("paged|")
    needed = PROVIDERS[name]
    for env in nearest(ctx, use):
        if env.images:
            continue  # a base image may hold any of them: what it holds is not read
        family = {n: _installs(env, n) for n in FAMILY}
        if family[needed] or _installs(env, KERNELS):
            continue  # provided; or a Hub kernel may stand in
        if not any(family.values()):  # no flash-attn at all: judged only where a lock is the whole install
            from fa_lint.rules._attn_absent import absent

            found = absent(ctx, ATTN_UNAVAILABLE, use, env, needed, FAMILY)
            if found is not None:
                yield found
                return
            continue
        others = [r for n, reqs in family.items() if n != needed for r in reqs]
        complete = bool(env.locked)
        yield ATTN_UNAVAILABLE.finding(
            use.location,
            fit(
                f'attn_implementation="{{name}}" needs `{needed}`, which this install lacks; '
                f"install {needed}",
                name=use.name,
            ),
            severity=Severity.ERROR if complete else Severity.WARNING,
            environment=env.name,
            related=(others[0].location,),
            notes=(
                f"{others[0].location} installs `{others[0].raw}`, not `{needed}`: transformers detects "
                f"{name} only by the `{needed}` distribution, and from_pretrained fails with ImportError",
                *(("the lock says what installs in full",) if complete else ()),
            ),
            help=f"install `{needed}`{_WHERE.get(needed, '')} (or `kernels`, for the Hub kernel transformers "
            "falls back to)",
        )
        return


# Where a provider comes from when PyPI's name is not it: PyPI's flash-attn-3 is 0.0.0, an empty
# placeholder (FAL022; scripts/build_fa3_kb.py reads its wheel), so FA3 is a wheel from PyTorch's FA3
# index or a build of flash-attention's hopper/
_WHERE = {
    FA3: " from a wheel built from flash-attention's hopper/ (PyPI's flash-attn-3 is an empty "
    "placeholder: FAL022)",
}
