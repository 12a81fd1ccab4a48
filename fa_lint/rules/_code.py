"""Joining what the code runs (fa_lint.code) with the installs that serve it, and the note FAL001 and
FAL002 give on where the code stands.

A use is served by the nearest install above it: the environments whose file is in the deepest
folder that holds both (a requirements file or Dockerfile beside or above the code). Code with no
install above it is joined with none, and nothing that needs an install is said of it.
"""

from __future__ import annotations

import os

from fa_lint.code.uses import ATTN, CALL, NOT_PAGED, PAGED, Use
from fa_lint.machine.environments import Environment, split
from fa_lint.model import Requirement
from fa_lint.rules._base import Context

_SHOWN = 1  # paged-path uses a note names; the rest are counted


def folder(path: str) -> str:
    return os.path.dirname(os.path.normpath(path))


def _under(path: str, top: str) -> bool:
    return top in ("", ".") or path == top or path.startswith(top + os.sep)


def env_folder(env: Environment) -> str:
    return folder(split(env.name)[0])


def nearest(ctx: Context, use: Use) -> list[Environment]:
    """The environments of the deepest folder above the use's file that has any."""
    here = folder(use.location.path)
    key = ("nearest environments", here)
    if key not in ctx.memo:
        # an environment that installs nothing (a file read for its code alone) serves no code
        installs = [e for e in ctx.environments if e.members or e.locked or e.images]
        above = [(env_folder(e), e) for e in installs if _under(here, env_folder(e))]
        deepest = max((len(f) for f, _ in above), default=-1)
        ctx.memo[key] = [e for f, e in above if len(f) == deepest]
    found: list[Environment] = ctx.memo[key]
    return found


def paged(ctx: Context, top: str = "") -> tuple[list[Use], list[Use]]:
    """The uses that take the paged path under ``top``, and those that keep it off the block table."""
    on = [u for u in ctx.uses if u.kind == PAGED and _under(folder(u.location.path), top)]
    off = [u for u in ctx.uses if u.kind == NOT_PAGED and _under(folder(u.location.path), top)]
    return on, off


def certain(on: list[Use], off: list[Use]) -> list[Use]:
    """Paged-path uses in files with nothing that keeps them off the block table."""
    held = {u.location.path for u in off}
    return [u for u in on if u.location.path not in held]


# Formats that install for code anywhere in the repository (what they run is found by path, not folder).
_ANYWHERE = frozenset({"dockerfile", "workflow", "gitlab-ci", "shell", "makefile", "justfile", "cluster"})
# Implementations continuous batching switches away from (to FA3, then FA2, when one is installed).
_SWITCHED = frozenset({"sdpa", "eager", "paged|eager", "paged|sdpa"})


def _names(ctx: Context, req: Requirement) -> str:
    """What the release's own rule says of the attention implementations the code asks for: when none
    is a name the block-table path admits (at 5.24: ``.*flash.*2`` or ``.*flash.*3``), say so."""
    asked = [u for u in ctx.uses if u.kind == ATTN and u.name not in _SWITCHED]
    if not asked:
        return ""
    pin = ctx.pinned(req, "transformers")
    version = pin[0] if pin else None
    facts = ctx.transformers
    if any(facts.block_table_name(u.name, version) is not False for u in asked):
        return ""
    which = f"transformers {version}" if version else f"transformers {facts.newest_read} (the newest read)"
    first = asked[0]
    return (
        f'; but attn_implementation "{first.name}" ({first.location}) is no flash-attn 2 or 3 by {which}\'s '
        "rule, so continuous batching decodes without a block table"
    )


def code_note(ctx: Context, req: Requirement) -> list[str]:
    """Where the code stands: the file:line that takes the paged path, or that none does (only when a
    walk searched Python files: a file named alone, or a tree without Python, says nothing of the code).

    A manifest serves the code in its folder and below (a service's requirements file, its own
    service); a script, Dockerfile or workflow installs for code anywhere in the repository, so every
    use the run read counts for it."""
    top = "" if req.source in _ANYWHERE else folder(req.location.path)
    on, off = paged(ctx, top)
    if on:
        first = on[0]
        more = f" (and {len(on) - _SHOWN} more)" if len(on) > _SHOWN else ""
        note = f"the code takes the paged path: {first.detail} at {first.location}{more}"
        held = [u for u in off if u.location.path == first.location.path]
        if held and not certain(on, off):
            note += f", though {held[0].detail} at {held[0].location} may keep it off the block table"
        return [note + _names(ctx, req)]
    calls = [
        u
        for u in ctx.uses
        if u.kind == CALL and "block_table" in u.keywords and _under(folder(u.location.path), top)
    ]
    if calls:
        return [f"the code calls `{calls[0].name}(block_table=...)` itself at {calls[0].location}"]
    if ctx.code_read:
        where = f"under {top}{os.sep} " if top not in ("", ".") else "read "
        return [
            f"none of the code {where}takes the paged path (transformers' continuous batching); the pin "
            "is still wrong: the next script that takes it fails"
        ]
    return []
