"""flash-attn on a ROCm torch: whether an install lands there, and whether the release's ROCm build
accepts the GPU archs the files target (FAL013; FAL001 leaves such an install to it).

On ROCm, setup.py builds its Composable Kernel backend for ``GPU_ARCHS`` (default ``native``, the build
machine's own GPU), split on ``;``, and asserts each is in its ``allowed_archs`` list (gfx90a and
gfx940-942 from 2.6.2; gfx90a, gfx942 and gfx950 from 2.8.0): another arch stops the build. From 2.7.1,
``FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE`` builds a Triton backend instead, and checks no arch. All of it
per tag in ``fa_lint/kb/rocm.json`` (``scripts/build_rocm_kb.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.version import Version

from fa_lint._records import NamedTuple
from fa_lint.machine import toolchain
from fa_lint.machine.environments import Environment
from fa_lint.machine.toolchain import Known
from fa_lint.model import FLASH_ATTN, Finding, Kind, Location, Requirement, Severity
from fa_lint.rules._base import Context, Rule

TRITON = "FLASH_ATTENTION_TRITON_AMD_ENABLE"


def upstream(url: str | None) -> bool:
    """An index release, or flash-attention's own repository: not a fork (ROCm's ``v2.6.3-cktile`` has
    its own code, judged as it is)."""
    return url is None or any(
        r in url.lower() for r in ("/dao-ailab/flash-attention", "/hazyresearch/flash-attention")
    )


def on_rocm(ctx: Context, env: Environment) -> bool:
    """Whether the environment's torch is a ROCm build: its index (``/whl/rocm6.1``), or a
    ``rocm/pytorch`` image whose torch nothing replaced."""
    tools = ctx.toolchain(env)
    if tools.cuda is not None and tools.cuda.value.startswith("rocm"):
        return True
    final = tools.final
    source = toolchain.deciding(final) if final is not None else None
    images = [source.image] if source is not None and source.image is not None else []
    if final is None:
        images = list(env.images)
    return any("rocm/pytorch" in image.reference for image in images)


class Refusal(NamedTuple):
    """A ROCm build of ``release`` that does not accept the archs the files target."""

    env: Environment
    req: Requirement
    release: str
    refused: tuple[str, ...]  # the targeted archs the release's list lacks
    accepted: tuple[str, ...]  # its allowed_archs, less "native"
    said: Known  # where the archs are set: GPU_ARCHS (setup.py reads it), or PYTORCH_ROCM_ARCH
    variable: str  # "GPU_ARCHS" (certain: the assert fails) or "PYTORCH_ROCM_ARCH" (the intended GPUs)
    evidence: str  # the allowed_archs line of the release's tag


def refusal(ctx: Context, req: Requirement) -> Refusal | None:
    """The arch refusal of a flash-attn install on ROCm, found once per requirement."""
    key = ("rocm arch", req.location, req.raw)
    if key not in ctx.memo:
        ctx.memo[key] = next(
            (r for env in ctx.environments_of(req) if (r := _judge(ctx, env, req)) is not None), None
        )
    found: Refusal | None = ctx.memo[key]
    return found


def _judge(ctx: Context, env: Environment, req: Requirement) -> Refusal | None:
    if req.name != FLASH_ATTN or req.kind not in (Kind.INSTALL, Kind.OVERRIDE) or req.build is not None:
        return None
    if req.checkout is not None or not upstream(req.url) or (req.url or "").split("?")[0].endswith(".whl"):
        return None
    target = ctx.target(env)
    step = req.build_step
    said, variable = target.variable("GPU_ARCHS", step), "GPU_ARCHS"
    if said is None:
        said, variable = target.variable("PYTORCH_ROCM_ARCH", step), "PYTORCH_ROCM_ARCH"
    wanted = _archs(said.value) if said is not None else ()
    if said is None or not wanted or not on_rocm(ctx, env):
        return None
    a = ctx.assessment(req)
    if not a.admitted or a.newer:
        return None  # past the knowledge base nothing is known
    release = a.admitted[-1].version  # the one a resolver picks from the range
    from fa_lint.kb import rocm  # for ROCm installs that name their archs only

    facts = rocm.load()
    accepted = facts.accepted(release)
    triton = target.variable(TRITON, step)
    if accepted is None or (
        facts.triton and triton and triton.value == "TRUE" and release >= facts.triton[0]
    ):
        return None  # no ROCm build at all (FAL001 says so), or the Triton backend: no arch check
    refused = tuple(w for w in wanted if w not in accepted.archs)
    if not refused:
        return None
    own = tuple(x for x in accepted.archs if x != "native")
    return Refusal(env, req, str(release), refused, own, said, variable, accepted.evidence)


def _archs(value: str) -> tuple[str, ...]:
    """``gfx90a;gfx942`` (setup.py splits GPU_ARCHS on ``;``; PYTORCH_ROCM_ARCH is also written with
    spaces or commas) as its gfx names; "native" and what is no gfx name say nothing of the GPU."""
    return tuple(w for w in re.split(r"[;,\s]+", value.strip()) if re.fullmatch(r"gfx[0-9a-f]+", w))


def check(ctx: Context, rule: Rule) -> Iterator[Finding]:
    """FAL013 for each flash-attn install whose ROCm build refuses the archs the files target; ``rule``
    is FAL013, passed in so this module never imports its family's."""
    seen: set[Location] = set()
    for req in ctx.requirements:
        if req.name != FLASH_ATTN or req.location in seen:
            continue
        found = refusal(ctx, req)
        if found is not None:
            seen.add(req.location)
            yield _finding(rule, found)


def _finding(rule: Rule, r: Refusal) -> Finding:
    from fa_lint.kb import rocm

    facts = rocm.load()
    archs = ", ".join(r.refused)
    certain = r.variable == "GPU_ARCHS"
    if certain:
        accepts = ", ".join(r.accepted)
        headline = f"flash-attn {r.release}'s ROCm build refuses GPU_ARCHS {archs}: it accepts only {accepts}"
    else:
        headline = (
            f"PYTORCH_ROCM_ARCH targets {archs}; flash-attn {r.release}'s ROCm build accepts only "
            f"{', '.join(r.accepted)}"
        )
    notes = [
        f"{r.variable} is set at {r.said.where}: {r.said.value}",
        f"setup.py reads the archs from GPU_ARCHS ({facts.gpu_archs}) and asserts each is in "
        f"{r.evidence}: 'One of GPU archs of [...] is invalid or not supported by Flash-Attention'",
    ]
    if not certain:
        notes.append(
            "setup.py never reads PYTORCH_ROCM_ARCH: with GPU_ARCHS unset it builds its Composable Kernel "
            "backend for the build machine's own GPU ('native'), and naming these archs in GPU_ARCHS fails "
            "its assert"
        )
    notes.append("the build fails before any paged-KV question arises: FAL001 leaves this install to FAL013")
    return rule.finding(
        r.req.location,
        headline,
        severity=Severity.ERROR if certain else Severity.WARNING,
        package=FLASH_ATTN,
        requirement=r.req.raw,
        environment=r.env.name,
        notes=tuple(notes),
        help=_help(facts.triton),
    )


def _help(triton: tuple[Version, str] | None) -> str:
    if triton is None:
        return "build for an arch the release accepts (GPU_ARCHS), or use a GPU it supports"
    return (
        f"set {TRITON}=TRUE with flash-attn>={triton[0]} (its Triton backend checks no arch: {triton[1]}), "
        "or build for an arch the release accepts (GPU_ARCHS)"
    )
