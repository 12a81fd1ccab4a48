"""Pieces of finding messages that several rules share."""

from __future__ import annotations

from collections.abc import Sequence

from packaging.version import Version

from fa_lint.kb import Release
from fa_lint.model import Kind, Requirement
from fa_lint.resolve import Policy
from fa_lint.rules._base import Context

RUNTIME = (
    "transformers' paged-KV decode (continuous batching) fails at its first step with "
    "'ValueError: flash_attn_with_kvcache_fn does not have a block_table or page_table argument'"
)

RELOCK = {
    "uv": "uv lock --upgrade-package flash-attn",
    "poetry": "poetry update flash-attn",
    "pdm": "pdm update flash-attn",
    "pipenv": "pipenv upgrade flash-attn",
    "pylock": "regenerate pylock.toml (e.g. uv export --format pylock.toml) after upgrading flash-attn",
}


RELOCK_ALL = {
    "uv": "uv lock",
    "poetry": "poetry lock",
    "pdm": "pdm lock",
    "pipenv": "pipenv lock",
    "pylock": "regenerate pylock.toml from the manifest",
}


def runtime(ctx: Context, req: Requirement, flash_attn: Version | None = None) -> str:
    """What breaks at run time: the generic failure, or what the pinned transformers will do."""
    pin = ctx.pinned(req, "transformers")
    if pin is None:
        return RUNTIME
    version, where = pin
    text = ctx.transformers.consequence(version, flash_attn)
    return f"{text} (transformers pinned at {where.location})" if where is not None else text


def releases(found: Sequence[Release]) -> str:
    """'2.4.2', or '2.4.0.post1 ... 2.4.3.post1 (4 releases)'."""
    if not found:
        return "no release"
    if len(found) == 1:
        return str(found[0])
    if len(found) == 2:
        return f"{found[0]} and {found[1]}"
    return f"{found[0]} ... {found[-1]} ({len(found)} releases)"


def fix(req: Requirement, policy: Policy, floor: Version | None = None) -> str:
    """The one action that makes the requirement good; ``floor`` is the release to ask for, when the
    environment calls for more than the policy (a prebuilt wheel for its torch, its constraints)."""
    if req.kind is Kind.LOCK and req.tool in RELOCK:
        return f"run `{RELOCK[req.tool]}`"
    v = max(floor, policy.min_version) if floor is not None else policy.min_version
    if req.url is not None:
        return f"install a flash-attn {v} or later wheel (or require flash-attn>={v})"
    return f"require flash-attn>={v}"


def subject(req: Requirement) -> str:
    """The requirement as the reader wrote it, with its meaning where the notation is not PEP 440."""
    if req.kind is Kind.LOCK:
        return f"the lock pins flash-attn {req.version.public if req.version else '(no version)'}"
    if req.url is not None:
        what = f"{req.version.public}" if req.version is not None else "an unknown version"
        return f"this URL installs flash-attn {what}"
    written = req.raw.split(";", 1)[0].strip()
    meaning = req.constraint_text
    if meaning == "any":
        return f"unpinned '{written}'"
    compact = written.replace(" ", "")
    if not req.alternatives and all(str(s) in compact for s in req.specifier):
        return f"'{written}'"
    return f"'{written}' (that is, {meaning})"
