"""FAL013 for a serving engine's attention backend flag on the GPUs its own file names (issue 42, item 7).

SGLang's ``--attention-backend fa3`` (and ``--prefill-``/``--decode-attention-backend``) starts its
FlashAttention 3 backend only where the release's assert lets it: SM 9.x from 0.4.6, then SM 8.x (a
model without MLA) or 9.x; never 7.x or Blackwell (10.x, 12.x), where the server stops at start-up with
"FlashAttention v3 Backend requires SM>=80 and SM<=90" (``fa_lint/kb/serving.json``, read from each
release's wheel). ``fa4`` runs flash-attn-4, whose forward accepts only the majors ``fa_lint/kb/fa4.json``
lists. The GPUs are the ones the same file names (a SkyPilot task's ``accelerators``, a Slurm script's
``--gres``, a workflow's runner label): a use whose file names none is not judged.
"""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from fa_lint.code.uses import BACKEND, Use
from fa_lint.kb import gpus as _gpus
from fa_lint.kb.gpus import Gpu
from fa_lint.model import Finding, Setting, Severity
from fa_lint.rules._base import Context, Rule


def check(ctx: Context, rule: Rule) -> Iterator[Finding]:
    for use in ctx.uses:
        if use.kind == BACKEND:
            found = _judge(ctx, rule, use)
            if found is not None:
                yield found


def _targets(ctx: Context, path: str) -> list[tuple[Gpu, Setting]]:
    """The GPUs the file at ``path`` names, each with the setting that names it."""
    found = []
    for s in ctx.settings:
        if (
            not isinstance(s, Setting)
            or s.location.path != path
            or s.kind not in ("gpu", "runner", "instance")
        ):
            continue
        gpu = _gpus.instance(s.value) if s.kind == "instance" else _gpus.named(s.value)
        if gpu is None and s.kind == "runner":
            gpu = _gpus.runner_tag(s.value)
        if gpu is not None:
            found.append((gpu, s))
    return found


def _sglang_pin(ctx: Context) -> Version | None:
    pins = {r.version for r in ctx.requirements if r.name == "sglang" and r.version is not None}
    return pins.pop() if len(pins) == 1 else None


def _refused(ctx: Context, use: Use) -> tuple[list[int], str, str]:
    """The majors the backend refuses, the evidence, and which release says so."""
    backend = use.name.partition(":")[2]
    if backend == "fa3":
        from fa_lint.kb import serving

        pin = _sglang_pin(ctx)
        r = serving.release(pin)
        said = f"sglang {pin}" if pin else f"sglang {r.version} (the newest read; the files pin none)"
        refused = [m for m, (plain, _mla) in r.fa3.items() if not plain]
        return refused, r.fa3_at, said
    from fa_lint.kb import fa4

    accepted = {m for rel in fa4.load().releases for m in rel.archs}
    return (
        [m for m in range(7, 13) if m not in accepted],
        "fa_lint/kb/fa4.json (every release's forward)",
        "flash-attn-4",
    )


def _judge(ctx: Context, rule: Rule, use: Use) -> Finding | None:
    targets = _targets(ctx, use.location.path)
    if not targets:
        return None
    refused, evidence, said = _refused(ctx, use)
    bad = [(g, s) for g, s in targets if g.cc[0] in refused]
    if not bad:
        return None
    gpu, setting = bad[0]
    every = len(bad) == len(targets)
    backend = use.name.partition(":")[2]
    return rule.finding(
        use.location,
        f"`{use.detail}` cannot start on {gpu.name} (SM {gpu.capability}): the {backend} backend refuses it",
        severity=Severity.ERROR if every and not setting.possible else Severity.WARNING,
        package="sglang",
        notes=(
            f"{setting.location} names {setting.value}: {gpu.name}, compute capability {gpu.capability} "
            f"({gpu.source})",
            f"{said}: the {backend} backend starts only on other majors ({evidence})",
            *(() if every else ("the file names other GPUs too, on which it may start",)),
        ),
        help="use --attention-backend flashinfer (or triton) on this GPU, or run it on a GPU the backend "
        "supports",
    )
