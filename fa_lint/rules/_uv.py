"""Which flash-attn a uv project's install really gets, and what uv's build variables make of its build.

Light on purpose (FAL011 asks for every flash-attn from an index): the machine's knowledge stays in
``_installs`` and is loaded only for files that say something of the machine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fa_lint._records import NamedTuple
from fa_lint.machine.environments import Environment
from fa_lint.machine.toolchain import Known
from fa_lint.model import FLASH_ATTN, Kind, Requirement
from fa_lint.rules._base import Context, Memo

if TYPE_CHECKING:
    from fa_lint.machine.target import Target

# flash-attn's setup.py adds its CUDA extension only `if not SKIP_CUDA_BUILD` (v2.8.3.post1, a8aa52b1:
# setup.py:62 and :163), while its bdist_wheel still fetches the release's prebuilt wheel first
# (setup.py:479-508: only FLASH_ATTENTION_FORCE_BUILD skips that download); every 2.x tag alike
# (scripts/skip_cuda_build.py prints the lines). So with the variable set, a release with a wheel for the
# torch installs that wheel, and one without installs a flash_attn with no flash_attn_2_cuda.
SKIP_CUDA_BUILD = "FLASH_ATTENTION_SKIP_CUDA_BUILD"
NO_KERNELS = (
    "FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE: setup.py compiles nothing (it adds the CUDA extension only "
    "without it; v2.8.3.post1 setup.py:163) and, with no prebuilt wheel to fetch, installs a flash_attn "
    'with no flash_attn_2_cuda module: `import flash_attn` fails with "ModuleNotFoundError: No module '
    "named 'flash_attn_2_cuda'\" (flash_attn_interface.py:15 imports it)"
)


def skip_setting(target: Target, req: Requirement) -> Known | None:
    """Where FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE is set for this install's build, if it is."""
    known = target.variable(SKIP_CUDA_BUILD, req.build_step)
    return known if known is not None and known.value == "TRUE" else None


class Instead(NamedTuple):
    """The ``[tool.uv.sources]`` entry ``uv sync`` takes flash-attn from, not a lock's index entry."""

    source: Requirement
    own: bool  # the environment's own group or extra takes it; else a default group does
    defaults: tuple[str, ...]  # [tool.uv] default-groups
    where: str  # where default-groups is set (the [tool.uv] table), "" when uv's default applies


def uv_instead(ctx: Context, env: Environment, req: Requirement) -> Instead | None:
    """For a uv lock's flash-attn from an index: the source ``uv sync`` installs instead in ``env``.

    A source for a group (``{ url = ..., group = "cuda12" }``) applies where that group is installed:
    the environment's own group (an extra's source, its own extra), and the groups ``uv sync`` adds to
    every install, ``[tool.uv] default-groups`` (``["dev"]`` unless set). A URL requirement makes uv take
    that URL for every requirement on the package in the fork (the lock's index entry is marked for the
    installs without the group: ``extra != 'group-13-open-instruct-cuda12'``), so the index entry installs
    only where the group is left out. A source with a marker holds on some platforms only: not judged."""
    if req.kind is not Kind.LOCK or req.tool != "uv" or req.url is not None or req.name != FLASH_ATTN:
        return None
    manifest, _, rest = env.name.partition(" [")
    own = rest.rstrip("]")
    config = next((b for b in ctx.builds_in(manifest) if b.tool == "uv"), None)
    defaults = config.default_groups if config is not None else ("dev",)
    where = str(config.location) if config is not None and defaults != ("dev",) else ""
    found: Instead | None = None
    for words, src in _url_sources(ctx).get(manifest, ()):
        if len(words) != 1:
            continue
        if words[0] == own:
            return Instead(src, True, defaults, where)
        kind, _, name = words[0].partition(":")
        if found is None and kind == "group" and (name in defaults or "*" in defaults):
            found = Instead(src, False, defaults, where)
    return found


def _url_sources(ctx: Context) -> dict[str, list[tuple[list[str], Requirement]]]:
    """Each manifest's flash-attn sources with a URL and no marker, with the scope words after
    ``uv:sources`` (``group:cuda12``): gathered once, not searched for among every requirement of
    the run once a lock entry."""
    cache = _URL_SOURCES.of(ctx)
    if None not in cache:
        found: dict[str, list[tuple[list[str], Requirement]]] = {}
        for src in ctx.requirements:
            if src.kind is Kind.SOURCE and src.name == FLASH_ATTN and not src.marker and src.url:
                found.setdefault(src.location.path, []).append((src.scope.split()[1:], src))
        cache[None] = found
    return cache[None]


_URL_SOURCES: Memo[None, dict[str, list[tuple[list[str], Requirement]]]] = Memo()
