"""FAL011's findings that say less than "pip compiles it": which release the installer takes, and a wheel
whose existence is unknown (a torch newer than the release's tag and its asset listing)."""

from __future__ import annotations

from fa_lint.kb import Release
from fa_lint.machine import toolchain
from fa_lint.machine.environments import Environment
from fa_lint.machine.toolchain import Known, Toolchain
from fa_lint.model import FLASH_ATTN, Finding, Requirement, Severity
from fa_lint.rules._base import Rule
from fa_lint.rules._text import fit, subject
from fa_lint.rules._uv import NO_KERNELS
from fa_lint.rules._wheels import span

COMPILE = (
    "compiling flash-attn needs nvcc matching torch's CUDA, ninja, tens of GB of RAM and an hour or more "
    "(FLASH_ATTENTION_FORCE_BUILD=TRUE forces this path; there are no Windows or macOS wheels)"
)


def newest(req: Requirement, paged: list[Release], release: Release) -> list[str]:
    """Why that release: the installer takes the newest one the range admits."""
    if len(paged) == 1 or toolchain.exact(req) is not None:
        return []
    return [
        f"pip and uv install the newest release the range admits, {release}, and build its sdist: "
        "they do not fall back to an older release because it has a prebuilt wheel"
    ]


def unknown_finding(
    rule: Rule,
    env: Environment,
    req: Requirement,
    unknown: list[Release],
    tools: Toolchain,
    skip: Known | None = None,
) -> Finding:
    """An info, never a warning: the release's own workflow built no wheel for this torch, but a wheel
    may have been attached after the tag, and nothing fa-lint reads offline lists those."""
    torch = tools.torch
    assert torch is not None
    release = unknown[-1]  # the release a resolver picks from the range
    w = release.wheels
    assert w is not None and release.tagged is not None
    later = w.later.torch.get(torch.value) if w.later else None
    came = f"came out {later.released[:10]}, " if later else "is newer than fa-lint's torch list, so "
    template, parts = (f"flash-attn {release}", {}) if len(unknown) == 1 else subject(req)
    headline = fit(
        f"whether {template} has a prebuilt wheel for torch {{torch}} is unknown (newer than its tag)",
        torch=torch.value,
        **parts,
    )
    notes = (
        f"v{release}'s release workflow built wheels for torch {span(w.torch)}; torch {torch.value} {came}"
        f"after v{release} was tagged ({release.tagged[:10]}): a wheel for it exists only if one was "
        "built and attached to the release later (build.yml's workflow_dispatch), which no file fa-lint "
        "reads lists",
        f"if there is none: {NO_KERNELS} (the variable is set at {skip.where})"
        if skip
        else f"if there is none, pip compiles it: {COMPILE}",
        f"torch {torch.value} from {torch.where}",
    )
    return rule.finding(
        req.location,
        headline,
        severity=Severity.INFO,
        package=FLASH_ATTN,
        requirement=req.raw,
        admitted=tuple(str(r) for r in unknown),
        environment=env.name,
        notes=notes,
        help=f"check v{release}'s release assets for a torch{torch.value} wheel, or use a torch its "
        f"workflow built ({span(w.torch)})",
    )
