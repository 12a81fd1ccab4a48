"""FAL011's findings that say less than "pip compiles it": which release the installer takes, and a wheel
whose existence is unknown (a torch newer than the release's tag and its asset listing)."""

from __future__ import annotations

from collections.abc import Sequence

from fa_lint.kb import Release
from fa_lint.machine import toolchain
from fa_lint.machine.environments import Environment
from fa_lint.machine.toolchain import Known, Toolchain
from fa_lint.model import FLASH_ATTN, Finding, Requirement, Severity
from fa_lint.rules._base import Rule
from fa_lint.rules._text import fit, subject
from fa_lint.rules._uv import NO_KERNELS, Instead
from fa_lint.rules._wheels import fits, missing, span

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


def tagged_before(releases: Sequence[Release], release: Release) -> Release | None:
    """The newest of ``releases`` before ``release`` whose wheels fa-lint knows."""
    earlier = releases[: releases.index(release)] if release in releases else []
    return next((r for r in reversed(earlier) if r.wheels is not None), None)


def untagged_finding(
    rule: Rule,
    env: Environment,
    req: Requirement,
    paged: list[Release],
    release: Release,
    tools: Toolchain,
    near: Release | None,
    before: Release | None,
    skip: Known | None = None,
) -> Finding:
    """An info: the release the installer takes reached PyPI without a git tag (its sdist is all there is
    to read), so neither its release workflow nor a listing of its assets says which wheels it has; said
    only where the release it follows has none for this machine either (``before``)."""
    torch = tools.torch
    assert torch is not None
    when = f" on {release.uploaded[:10]}" if release.uploaded else ""
    notes = [
        f"{release} reached PyPI as an sdist{when} with no git tag: no release workflow or asset listing "
        f"fa-lint reads names its wheels, so whether setup.py finds one for torch {torch.value} at the "
        f"v{release} release is unknown",
        *newest(req, paged, release),
        f"if there is none: {NO_KERNELS} (the variable is set at {skip.where})"
        if skip
        else f"if there is none, pip compiles it: {COMPILE}",
        f"torch {torch.value} from {torch.where}",
    ]
    if before is not None and before.wheels is not None:
        known = fits(before, tools) is False
        said = f"has none: {missing(before, tools)}" if known else "came out before this torch: unknown too"
        notes.insert(1, f"the release before it, {before}, {said}")
    if near is not None:
        notes.append(f"{near} has a prebuilt wheel for torch {torch.value} on this machine")
    return rule.finding(
        req.location,
        fit(
            f"whether flash-attn {release} has a prebuilt wheel for torch {{torch}} is unknown (no tag)",
            torch=torch.value,
        ),
        severity=Severity.INFO,
        package=FLASH_ATTN,
        requirement=req.raw,
        admitted=(str(release),),
        environment=env.name,
        notes=tuple(notes),
        help=f"check v{release}'s release assets for a torch{torch.value} wheel"
        + (f", or require flash-attn=={near}, which has one" if near else ""),
    )


def aside(finding: Finding, instead: Instead) -> Finding:
    """An info, never a warning: `uv sync` installs a default group's source, not this lock entry."""
    src = instead.source
    groups = ", ".join(f'"{g}"' for g in instead.defaults)
    said = (
        f"[tool.uv] default-groups = [{groups}] ({instead.where})"
        if instead.where
        else "uv's default group dev"
    )
    group = src.scope.split()[-1].partition(":")[2]
    note = (
        f"`uv sync` installs the default groups, {said}, and group {group} installs flash-attn from its "
        f"source ({src.location}: {src.url}): this entry installs only where the group is left out "
        f"(`uv sync --no-default-groups`, `--no-group {group}`)"
    )
    return finding._replace(severity=Severity.INFO, notes=(note, *finding.notes))
