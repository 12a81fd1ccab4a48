"""What verify says about the GPU and the C library: the release's own facts (fa_lint/kb/builds.json)
against the compute capability torch reports and the glibc the interpreter runs on."""

from __future__ import annotations

import re
from typing import Any

from packaging.version import InvalidVersion, Version

from fa_lint import kb
from fa_lint.kb import builds
from fa_lint.kb import images as _images


def _facts(version: str) -> tuple[kb.Release, builds.BuildFacts] | None:
    try:
        release = kb.load().at(Version(version))
    except InvalidVersion:
        return None
    facts = builds.load().get(release.version) if release is not None else None
    return (release, facts) if release is not None and facts is not None else None


def gpu(
    distribution: str, version: str, origin: str | None, torch: dict[str, Any]
) -> tuple[bool | None, str]:
    """``arch`` for the capability and CUDA the torch probe reported; (None, "") without a capability."""
    sm = torch.get("capability")
    if not (isinstance(sm, list) and len(sm) == 2):
        return None, ""
    return arch(distribution, version, origin, (int(sm[0]), int(sm[1])), torch.get("cuda"))


def import_error(distribution: str, version: str, message: str, env: dict[str, Any]) -> str | None:
    """An import that failed with ``GLIBC_x not found``: the diagnosis, or None for other errors."""
    libc = env.get("libc") or []
    if distribution != "flash-attn":
        return None
    why = glibc(version, message, libc[1] if len(libc) == 2 and libc[0] == "glibc" else None)
    return f"the wheel was built on a newer OS: {why}" if why else None


def arch(
    distribution: str, version: str, origin: str | None, cc: tuple[int, int], torch_cuda: str | None
) -> tuple[bool | None, str]:
    """Whether the installed flash-attn runs on this GPU (None: cannot tell), and why, in a sentence."""
    cap = f"{cc[0]}.{cc[1]}"
    if distribution == "flash_attn_3":
        fa3 = builds.load().fa3
        runs = fa3.runtime.accepts(cc) and builds.runs(fa3.sm, cc)
        kernels = ", ".join(f"sm_{s}" for s in fa3.sm)
        return (
            runs,
            f"FlashAttention 3 builds {kernels} ({fa3.evidence.at}): {'' if runs else 'no '}kernel for {cap}",
        )
    if distribution == "flash-attn-4":
        try:
            fa4 = builds.load().fa4_at(Version(version))
        except InvalidVersion:
            fa4 = None
        if fa4 is None:
            return None, f"flash-attn-4 {version} is not in the knowledge base"
        ok = cc[0] in fa4.majors
        return (
            ok,
            f"flash-attn-4 {fa4.version} accepts majors {fa4.majors} ({fa4.evidence.at}): "
            f"{cap} is {'' if ok else 'not '}one",
        )
    found = _facts(version)
    if found is None:
        return None, f"flash-attn {version} has no build facts in the knowledge base"
    release, facts = found
    check = f"{facts.runtime.evidence.at}: {facts.runtime.evidence.text}"
    if not facts.runtime.accepts(cc):
        floor = " FlashAttention 2 needs 8.0 (Ampere) or newer." if cc[0] < 8 else ""
        return False, f"flash-attn {release} refuses compute capability {cap} ({check}).{floor}"
    if origin == "release-wheel" and facts.wheels is not None:
        major = int(torch_cuda.split(".")[0]) if torch_cuda and torch_cuda[:1].isdigit() else None
        made = facts.wheels.for_cuda(major) if major is not None else facts.wheels.builds
        sms = sorted({s for b in made for s in b.sm}, key=lambda s: int(s.rstrip("a")))
        if sms:
            runs = builds.runs(sms, cc)
            carried = ", ".join(f"sm_{s}" for s in sms)
            verdict = "runs on" if runs else "has no kernel for"
            return (
                runs,
                f"the release wheel carries {carried} ({facts.wheels.evidence.at}): it {verdict} {cap}",
            )
    return None, (
        f"{cap} passes flash-attn {release}'s check ({check}); the archs of a local build are what its "
        "FLASH_ATTN_CUDA_ARCHS and nvcc gave, not read here"
    )


_GLIBC = re.compile(r"GLIBC_(\d+\.\d+)' not found")


def glibc(version: str, message: str, machine: str | None) -> str | None:
    """For ``version `GLIBC_2.32' not found``: the release wheel's build OS, and a release whose wheels
    import on this machine's glibc."""
    m = _GLIBC.search(message)
    if m is None:
        return None
    found = _facts(version)
    said = f"the extension needs GLIBC_{m.group(1)}, which this machine's C library lacks"
    if found is None or found[1].wheels is None:
        return said
    release, facts = found
    wheels = facts.wheels
    runner = wheels.runners[0] if wheels is not None and wheels.runners else None
    host = _images.runner(runner) if runner else None
    if host is None or host.glibc is None:
        return said
    said = f"{release}'s wheels were built on {runner} (glibc {host.glibc}) and {said}"
    have = _machine_glibc(machine)
    if have is None:
        return said
    base = kb.load()
    policy_first = base.first_with(kb.PAGED_KV).version
    for r in reversed(base.installable):
        if r.version < policy_first or r.version.is_prerelease:
            continue
        f = builds.load().get(r.version)
        if f is None or f.wheels is None or not f.wheels.runners:
            continue
        h = _images.runner(f.wheels.runners[0])
        if h is not None and h.glibc is not None and Version(h.glibc) <= have:
            return (
                f"{said} (glibc {have}); flash-attn=={r} was built on {f.wheels.runners[0]} and imports here"
            )
    return f"{said} (glibc {have}); no release with paged KV was built on a glibc this old: build from source"


def _machine_glibc(machine: str | None) -> Version | None:
    try:
        return Version(machine) if machine else None
    except InvalidVersion:
        return None
