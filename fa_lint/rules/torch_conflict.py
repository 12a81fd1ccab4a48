"""FAL016: an install that asks for two torch versions no release satisfies together."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.machine import toolchain
from fa_lint.machine.environments import Environment
from fa_lint.machine.final_torch import Source, written
from fa_lint.model import FLASH_ATTN, Finding, Location, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._text import fit

TORCH_UNSATISFIABLE = Rule(
    "FAL016",
    "torch-unsatisfiable",
    Severity.ERROR,
    "The install asks for torch versions that cannot hold together (two exact pins that disagree, "
    "or a package that pins another torch), so the resolver fails before flash-attn installs.",
)
RULES = (TORCH_UNSATISFIABLE,)
PACKAGES = frozenset({FLASH_ATTN}) | toolchain.PACKAGES  # the requirements this rule reads

_FAILS = (
    "pip stops with 'ResolutionImpossible' (uv: 'No solution found when resolving dependencies'), "
    "and nothing of this install is installed"
)


def _installs_flash_attn(env: Environment) -> bool:
    return bool(env.of(FLASH_ATTN) or env.of(FLASH_ATTN, locked=True)) or any(
        r.name == FLASH_ATTN for r in env.superseded
    )


def check(ctx: Context) -> Iterator[Finding]:
    seen: set[tuple[Location, Location]] = set()
    for env in ctx.environments:
        if not _installs_flash_attn(env):
            continue  # fa-lint judges the installs that bring flash-attn
        final = ctx.toolchain(env).final
        if final is None or final.conflict is None:
            continue
        first, second = final.conflict
        here, there = _location(second), _location(first)
        if here is None or (here, there or here) in seen:
            continue
        seen.add((here, there or here))
        yield _finding(env, first, second, here, there)


def _location(source: Source) -> Location | None:
    if source.requirement is not None:
        return source.requirement.location
    return source.image.location if source.image is not None else None


def _finding(
    env: Environment, first: Source, second: Source, here: Location, there: Location | None
) -> Finding:
    req = second.requirement
    assert req is not None
    other = first.requirement.raw if first.requirement is not None else "the base image"
    line = f"line {there.line}" if there is not None and there.path == here.path else str(there)
    headline = fit(
        "{this} needs torch {need}, but {other} ({line}) needs {have}: "
        "no torch satisfies both, the install fails",
        this=req.raw,
        need=written(second.torch),
        other=other,
        line=line,
        have=written(first.torch),
    )
    return TORCH_UNSATISFIABLE.finding(
        here,
        headline,
        package="torch",
        requirement=req.raw,
        environment=env.name,
        related=(there,) if there is not None else (),
        notes=(second.says, first.says, _FAILS),
        help="pin the torch the package requires, or the package release that requires your torch",
    )
