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

from fa_lint.code.uses import ATTN, CALL, CUSTOM, KERNEL, LOCAL_KERNEL, STALE_LOCK, SUBSTITUTE, Use
from fa_lint.machine.environments import Environment
from fa_lint.model import FA3, FA4, FLASH_ATTN, Finding, Kind, Requirement, Severity
from fa_lint.rules._base import Context, Rule, exact
from fa_lint.rules._code import certain, folder, nearest, paged
from fa_lint.rules._text import KERNELS, TRANSFORMERS, fit

CALL_KEYWORD = Rule(
    "FAL018",
    "call-keyword-missing",
    Severity.ERROR,
    "The code calls flash-attn with a keyword the installed release lacks: TypeError at the first call.",
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

# The keywords each function gained after its first release, and the knowledge base's feature for
# each (fa_lint/kb/flash_attn.json "features": from flash-attn's own signatures, per release).
KEYWORDS = {
    "flash_attn_with_kvcache": {
        "block_table": "paged-kv",
        "cache_batch_idx": "cache-batch-idx",
        "cache_leftpad": "cache-leftpad",
        "rotary_cos": "rotary",
        "window_size": "sliding-window",
        "alibi_slopes": "alibi",
        "softcap": "softcap",
    },
    "flash_attn_varlen_func": {
        "block_table": "paged-varlen",
        "window_size": "sliding-window",
        "alibi_slopes": "alibi",
        "softcap": "softcap",
    },
}
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
            yield from _kernel(use)
        if use.kind == ATTN and use.name.removeprefix("paged|") in PROVIDERS:
            yield from _unavailable(ctx, use)


def _installs(env: Environment, name: str) -> list[Requirement]:
    """What installs ``name`` in the environment: its lock's entries if it has any, else its members."""
    locked = list(env.of(name, locked=True))
    return locked or [r for r in env.of(name) if r.kind is not Kind.CONSTRAINT]


def _call(ctx: Context, use: Use) -> Iterator[Finding]:
    features = KEYWORDS[use.name]
    for keyword in use.keywords:
        feature = features.get(keyword)
        if feature is None:
            continue
        for env in nearest(ctx, use):
            for req in _installs(env, FLASH_ATTN):
                admitted = ctx.assessment(req).admitted
                if not admitted or any(r.has(feature) for r in admitted):
                    continue  # some release it installs takes the keyword: FAL001/FAL002 judge the rest
                first = ctx.kb.first_with(feature)
                what = f"flash-attn {admitted[0]}" if len(admitted) == 1 else f"`{req.raw}`"
                yield CALL_KEYWORD.finding(
                    use.location,
                    fit(
                        f"`{use.name}({keyword}=...)`: {{what}} lacks `{keyword}` (TypeError); "
                        f"require flash-attn>={first}",
                        what=what,
                    ),
                    package=FLASH_ATTN,
                    requirement=req.raw,
                    environment=env.name,
                    related=(req.location,),
                    notes=(
                        f"{req.location} installs {what}, which admits no release with `{keyword}` on "
                        f"`{use.name}`: the first call raises TypeError: {use.name}() got an unexpected "
                        f"keyword argument '{keyword}'",
                    ),
                    help=f"require flash-attn>={first} at {req.location}",
                )
                return  # one finding per call: the first keyword and install that fail it


def _transformers(envs: list[Environment]) -> Version | None:
    found = {exact(r) for env in envs for r in _installs(env, TRANSFORMERS)}
    found.discard(None)
    return Version(next(iter(found)).public) if len(found) == 1 else None  # type: ignore[union-attr]


def _custom(ctx: Context, use: Use) -> Iterator[Finding]:
    if "block_table" in use.keywords or "page_table" in use.keywords:
        return
    # What puts it in flash-attn's place: a substitution in its own file or package folder (what a
    # substitution elsewhere assigns is not followed), or a local kernel loaded from a folder above it.
    here = folder(use.location.path)
    put = [
        u
        for u in ctx.uses
        if (u.kind == SUBSTITUTE and folder(u.location.path) == here)
        or (u.kind == LOCAL_KERNEL and u.name and _holds(u, here))
    ]
    kernel_layout = "torch-ext/" in use.location.path.replace("\\", "/")
    if not put and not kernel_layout:
        return  # a function of that name nothing puts in flash-attn's place: transformers never calls it
    on, off = paged(ctx)
    # a kernel's own source is reached by whoever loads it, which this repository need not be
    sure = certain(on, off) if put else []
    facts = ctx.transformers
    pinned = _transformers(nearest(ctx, use))
    notes = []
    if put:
        notes.append(f"{put[0].location} puts it in flash-attn's place ({put[0].detail or put[0].name})")
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
    if sure:
        notes.append(f"the code takes the paged path: {sure[0].detail} at {sure[0].location}")
    else:
        notes.append("no code read takes the paged path for certain; the next script that does reaches it")
    yield CUSTOM_KERNEL.finding(
        use.location,
        "this `flash_attn_with_kvcache` takes no `block_table` or `page_table`: paged decode fails on it; "
        "add `block_table`",
        severity=Severity.ERROR if sure else Severity.WARNING,
        related=tuple(u.location for u in put[:1]),
        notes=tuple(notes),
        help=(
            "give it a `block_table` (or `page_table`) parameter and use it, or load flash-attn>=2.5.0 "
            "instead"
        ),
    )


def _holds(local: Use, here: str) -> bool:
    """Whether a local kernel's folder (relative to the loading file) holds the folder ``here``."""
    import os

    base = os.path.normpath(os.path.join(folder(local.location.path), local.name))
    return here == base or here.startswith(base + os.sep)


def _kernel(use: Use) -> Iterator[Finding]:
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
    if use.pinned or "@" in use.name:
        return
    repo = use.name.split(":", 1)[0]
    how = f'attn_implementation="{use.name}"' if use.kind == ATTN else f'{use.detail[:-2]}("{use.name}")'

    yield UNPINNED_KERNEL.finding(
        use.location,
        fit("Hub kernel `{repo}` is loaded without a version or revision; pin one", repo=repo),
        notes=(
            f"{how} loads whatever the Hub holds at run time",
            "the `kernels` documentation asks for a `version` or `revision` on every Hub kernel: an "
            "unpinned one can change (lose `block_table`, drop a GPU) between two runs of the same code",
            "whether the kernel as it stands today has what the code needs cannot be judged offline",
        ),
        help=(
            f'use "{repo}@<revision>" (or a version), or `get_kernel("{repo}", version=...)`'
            if use.kind == ATTN
            else f"pass version= or revision= to load `{repo}`, or lock it (get_locked_kernel)"
        ),
    )


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
