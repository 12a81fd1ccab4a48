"""FAL021 where the project's complete dependencies install no flash-attn of any major at all, and the
code asks for one (issue 42, item 7).

"Complete" is what a lock says: ``uv sync``, ``poetry install``, ``pdm sync`` and ``pixi install``
install the lock and nothing else, so a lock that holds transformers and no ``flash-attn``,
``flash-attn-3`` or ``flash-attn-4`` is an install where ``attn_implementation="flash_attention_2"``
meets no flash-attn: transformers raises ImportError at ``from_pretrained``. Anything else that could
bring one keeps it unjudged: a base image, an install the files make elsewhere in the repository, an
include fa-lint did not follow, ``kernels`` (transformers' Hub-kernel fallback).
"""

from __future__ import annotations

from fa_lint.code.uses import Use
from fa_lint.machine.environments import Environment
from fa_lint.model import Finding, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._text import TRANSFORMERS, fit


def absent(
    ctx: Context, rule: Rule, use: Use, env: Environment, needed: str, family: frozenset[str]
) -> Finding | None:
    """FAL021 on ``use`` where ``env``'s lock is the whole install and holds none of ``family``."""
    if not env.locked or env.images or ctx.unfollowed or _installed_anywhere(ctx, family):
        return None
    transformers = next(iter(env.of(TRANSFORMERS, locked=True)), None)
    if transformers is None:
        return None  # the lock does not install the transformers that reads the implementation
    tool = next((r.tool for r in env.locked if r.tool), "its installer")
    return rule.finding(
        use.location,
        fit(
            f'attn_implementation="{{name}}" needs `{needed}`, and the lock installs no flash-attn; install '
            f"{needed}",
            name=use.name,
        ),
        severity=Severity.WARNING,  # a step no file holds (a README's `pip install flash-attn`) may add it
        environment=env.name,
        related=(transformers.location,),
        notes=(
            f"{transformers.location} locks transformers for this install, and no entry of the lock is "
            f"{', '.join(sorted(family))}: {tool} installs the lock and nothing else, so transformers "
            "finds no flash-attn and from_pretrained fails with ImportError",
            "no other file read installs a flash-attn, and no base image is involved: only a step the files "
            "do not hold (a README's `pip install flash-attn --no-build-isolation` after the sync) adds one",
        ),
        help=f"add `{needed}` to the project's dependencies and lock again (or `kernels`, for the Hub "
        "kernel transformers falls back to)",
    )


def _installed_anywhere(ctx: Context, family: frozenset[str]) -> bool:
    """Whether any file read names a flash-attn of any major (a Dockerfile that installs it after the
    lock, a script, a README-like requirements file): then the lock is not the whole story."""
    key = "flash-attn family named"
    if key not in ctx.memo:
        ctx.memo[key] = any(r.name in family for r in ctx.requirements)
    found: bool = ctx.memo[key]
    return found
