"""Joining what the code runs (fa_lint.code) with the installs that serve it, and the note FAL001 and
FAL002 give on where the code stands.

A use is served by the nearest install above it: the environments whose file is in the deepest
folder that holds both (a requirements file or Dockerfile beside or above the code). Code with no
install above it is joined with none, and nothing that needs an install is said of it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from packaging.ranges import VersionRange
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from fa_lint._records import NamedTuple
from fa_lint.code.uses import ATTN, CALL, NOT_PAGED, PAGED, Use
from fa_lint.machine.environments import Environment, split
from fa_lint.model import Requirement
from fa_lint.rules._base import Context

_SHOWN = 1  # paged-path uses a note names; the rest are counted
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


def folder(path: str) -> str:
    return os.path.dirname(os.path.normpath(path))


def env_folder(env: Environment) -> str:
    return folder(split(env.name)[0])


def ancestors(here: str) -> Iterator[str]:
    """``here`` and each folder above it, the top (``""``) last: the folders that hold ``here``, found by
    walking up its path rather than by testing every folder of the run (reliability 48, 49, 60)."""
    while here not in ("", "."):
        yield here
        parent = os.path.dirname(here)
        if parent == here:  # an absolute path's root
            break
        here = parent
    yield ""


def _top(top: str) -> str:
    return "" if top in ("", ".") else top


def nearest(ctx: Context, use: Use) -> list[Environment]:
    """The environments of the deepest folder above the use's file that has any."""
    here = folder(use.location.path)
    key = ("nearest environments", here)
    if key not in ctx.memo:
        by_folder = _environments_by_folder(ctx)
        ctx.memo[key] = next((by_folder[f] for f in ancestors(here) if f in by_folder), [])
    found: list[Environment] = ctx.memo[key]
    return found


def _environments_by_folder(ctx: Context) -> dict[str, list[Environment]]:
    """The environments that install something, by their file's folder: built once a run."""
    key = ("environments by folder",)
    if key not in ctx.memo:
        index: dict[str, list[Environment]] = {}
        # an environment that installs nothing (a file read for its code alone) serves no code
        for env in ctx.environments:
            if env.members or env.locked or env.images:
                index.setdefault(_top(env_folder(env)), []).append(env)
        ctx.memo[key] = index
    found: dict[str, list[Environment]] = ctx.memo[key]
    return found


class _Under(NamedTuple):
    """The uses in a folder and below it that a note on the paged path reads, in the run's order."""

    on: list[Use]  # take the paged path
    off: list[Use]  # keep it off the block table
    calls: list[Use]  # call flash-attn with block_table= themselves
    needs: list[Use]  # call flash-attn with a keyword some release lacks (KEYWORDS)


def _under_index(ctx: Context) -> dict[str, _Under]:
    """Each folder that has such a use, or is above one, to the uses in and below it: built once a
    run, each use filed under its own folder and those above (the path's depth), not filtered from
    every use again for each finding (reliability 48)."""
    key = ("uses under each folder",)
    if key not in ctx.memo:
        index: dict[str, _Under] = {}
        for use in ctx.uses:
            fields = _fields(use)
            for f in ancestors(folder(use.location.path)) if fields else ():
                under = index.setdefault(f, _Under([], [], [], []))
                for field in fields:
                    getattr(under, field).append(use)
        ctx.memo[key] = index
    found: dict[str, _Under] = ctx.memo[key]
    return found


def _fields(use: Use) -> tuple[str, ...]:
    if use.kind == PAGED:
        return ("on",)
    if use.kind == NOT_PAGED:
        return ("off",)
    if use.kind != CALL:
        return ()
    known = KEYWORDS.get(use.name, {})
    needs = ("needs",) if any(k in known for k in use.keywords) else ()
    return ("calls", *needs) if "block_table" in use.keywords else needs


_NONE = _Under([], [], [], [])


class Floor(NamedTuple):
    """The lowest flash-attn the project's own calls run on: the first release with every keyword they
    pass (issue 40 item 5: a fix must satisfy the code, not only the paged-KV policy)."""

    version: Version
    use: Use  # the call that sets it
    keyword: str

    def range(self) -> VersionRange:
        return SpecifierSet(f">={self.version}").to_range()

    def reason(self) -> str:
        return (
            f"the code calls `{self.use.name}({self.keyword}=...)` at {self.use.location}, which flash-attn "
            f"has from {self.version}"
        )


def code_floor(ctx: Context, req: Requirement) -> Floor | None:
    """The floor the code that ``req`` installs for sets (the code in its folder and below, or all the
    code for a script, Dockerfile or workflow, as ``code_note`` reads it); None where the calls ask for
    nothing the policy's minimum lacks."""
    top = _top("" if req.source in _ANYWHERE else folder(req.location.path))
    key = ("code floor", top)
    if key not in ctx.memo:
        found = None
        for use in _under_index(ctx).get(top, _NONE).needs:
            for keyword in use.keywords:
                feature = KEYWORDS[use.name].get(keyword)
                first = ctx.kb.first_with(feature).version if feature else None
                if first is not None and first > (found.version if found else ctx.policy.min_version):
                    found = Floor(first, use, keyword)
        ctx.memo[key] = found
    floor: Floor | None = ctx.memo[key]
    return floor


def paged(ctx: Context, top: str = "") -> tuple[list[Use], list[Use]]:
    """The uses that take the paged path under ``top``, and those that keep it off the block table."""
    found = _under_index(ctx).get(_top(top), _NONE)
    return found.on, found.off


def sure(ctx: Context, top: str = "") -> list[Use]:
    """``certain`` of the uses under ``top``, worked out once a folder."""
    key = ("certainly paged under", _top(top))
    if key not in ctx.memo:
        ctx.memo[key] = certain(*paged(ctx, top))
    found: list[Use] = ctx.memo[key]
    return found


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
    asked = _asked(ctx)
    if not asked:
        return ""
    pin = ctx.pinned(req, "transformers")
    version = pin[0] if pin else None
    facts = ctx.transformers
    key = ("some name takes the block table", version)
    if key not in ctx.memo:
        ctx.memo[key] = any(facts.block_table_name(u.name, version) is not False for u in asked)
    if ctx.memo[key]:
        return ""
    which = f"transformers {version}" if version else f"transformers {facts.newest_read} (the newest read)"
    first = asked[0]
    return (
        f'; but attn_implementation "{first.name}" ({first.location}) is no flash-attn 2 or 3 by {which}\'s '
        "rule, so continuous batching decodes without a block table"
    )


def _paged_note(ctx: Context, top: str) -> str:
    """The note on the paged path under ``top``: worked out once a folder (reliability 48)."""
    key = ("paged note", _top(top))
    if key not in ctx.memo:
        on, off = paged(ctx, top)
        first = on[0]
        more = f" (and {len(on) - _SHOWN} more)" if len(on) > _SHOWN else ""
        note = f"the code takes the paged path: {first.detail} at {first.location}{more}"
        held = next((u for u in off if u.location.path == first.location.path), None)
        if held is not None and not sure(ctx, top):
            note += f", though {held.detail} at {held.location} may keep it off the block table"
        ctx.memo[key] = note
    found: str = ctx.memo[key]
    return found


def _asked(ctx: Context) -> list[Use]:
    key = ("implementations asked for",)
    if key not in ctx.memo:
        ctx.memo[key] = [u for u in ctx.uses if u.kind == ATTN and u.name not in _SWITCHED]
    found: list[Use] = ctx.memo[key]
    return found


def code_note(ctx: Context, req: Requirement) -> list[str]:
    """Where the code stands: the file:line that takes the paged path, or that none does (only when a
    walk searched Python files: a file named alone, or a tree without Python, says nothing of the code).

    A manifest serves the code in its folder and below (a service's requirements file, its own
    service); a script, Dockerfile or workflow installs for code anywhere in the repository, so every
    use the run read counts for it."""
    top = "" if req.source in _ANYWHERE else folder(req.location.path)
    if paged(ctx, top)[0]:
        return [_paged_note(ctx, top) + _names(ctx, req)]
    calls = _under_index(ctx).get(_top(top), _NONE).calls
    if calls:
        return [f"the code calls `{calls[0].name}(block_table=...)` itself at {calls[0].location}"]
    if ctx.code_read:
        where = f"under {top}{os.sep} " if top not in ("", ".") else "read "
        return [
            f"none of the code {where}takes the paged path (transformers' continuous batching); the pin "
            "is still wrong: the next script that takes it fails"
        ]
    return []
