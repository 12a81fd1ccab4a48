"""An Arm (aarch64) host: flash-attn's release wheels are x86_64 only, per release (FAL011: pip compiles;
FAL014: an x86_64 wheel file does not install).

setup.py asks for ``...-linux_{platform.uname().machine}.whl`` (``get_platform()``), and the release
workflow's matrix (``publish.yml``, ``os:``) names the runners its wheels are built on: x86_64 GitHub
runners in every release read up to 2.8.3.post1 (the default branch adds ``ubuntu-22.04-arm``). So on
an aarch64 host pip finds no wheel and compiles flash-attn (an hour or more, with nvcc and a CUDA torch
for aarch64), and a ``linux_x86_64`` wheel file does not install at all.
"""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.kb import Availability
from fa_lint.machine.cpu import ARM, ARM_MARKER, Cpu
from fa_lint.model import FA3, FLASH_ATTN, Finding, Kind, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._installs import Install, installs
from fa_lint.rules.install import NO_PREBUILT_WHEEL


def check(ctx: Context, unsupported: Rule) -> Iterator[Finding]:
    """``unsupported``: FAL014's rule, handed in by rules.platform (which imports this module)."""
    for inst in installs(ctx):
        # flash-attn, and flash-attn-3's wheel files (PyTorch's index serves x86_64 ones)
        if inst.req.name not in (FLASH_ATTN, FA3) or inst.req.kind is Kind.LOCK or not _cpus(inst):
            continue
        if inst.req.name == FA3 and inst.path != "wheel":
            continue
        if _not_on_arm(inst.req.marker):
            continue  # `; platform_machine == 'x86_64'`: the requirement does not install on Arm
        if inst.path == "wheel":
            found = _wheel_file(inst, unsupported)
        else:
            found = _index(inst) if inst.path == "index" else None
        if found is not None:
            yield found


_ARM_ENV = {
    "platform_machine": "aarch64",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "os_name": "posix",
}


def _not_on_arm(marker: str | None) -> bool:
    """Whether a requirement's marker leaves it out on an aarch64 Linux machine."""
    if not marker or "platform_machine" not in marker:
        return False
    from packaging.markers import InvalidMarker, Marker

    try:
        return not Marker(marker).evaluate(dict(_ARM_ENV))
    except (InvalidMarker, TypeError, ValueError):
        return False


def _arm_runners(runners: tuple[str, ...]) -> bool:
    return any(r.endswith(("-arm", "-arm64")) for r in runners)


def _cpus(inst: Install) -> tuple[Cpu, ...]:
    """The target's Arm CPUs, and the requirement's own marker: ``; platform_machine == 'aarch64'``
    installs it only there."""
    marker = inst.req.marker or ""
    own = (Cpu(ARM, f"{inst.req.location} (marker: {marker})", False),) if ARM_MARKER.search(marker) else ()
    return own + inst.target.cpus


def _where(inst: Install) -> tuple[str, bool]:
    """The first thing that says the host is Arm, and whether the files make it certain."""
    cpus = _cpus(inst)
    certain = [c for c in cpus if not c.possible]
    first = (certain or list(cpus))[0]
    return first.where, bool(certain) and not inst.req.possible


def _wheel_file(inst: Install, unsupported: Rule) -> Finding | None:
    url = (inst.req.url or "").split("#", 1)[0].split("?", 1)[0]
    if not url.endswith("_x86_64.whl"):
        return None
    where, certain = _where(inst)
    return unsupported.finding(
        inst.req.location,
        f"this {inst.req.name} wheel is built for x86_64, and the machine is Arm (aarch64): pip refuses it",
        severity=Severity.ERROR if certain else Severity.WARNING,
        **inst.fields,
        notes=(
            f"the machine is aarch64: {where}",
            "pip installs a wheel only for its own platform: 'is not a supported wheel on this platform'",
        ),
        help="install a linux_aarch64 build of flash-attn, or build it on the machine from source",
    )


def _arm_wheel(inst: Install) -> bool:
    """Whether the release's asset listing has the linux_aarch64 wheel setup.py asks for on this machine
    (flash-attn attaches Arm wheels after the tag: 2.8.3's torch 2.9 cp312 one)."""
    w = inst.release.wheels if inst.release is not None else None
    tools = inst.tools
    if w is None or tools.torch is None:
        return False
    cuda = tools.cuda.value if tools.cuda else None
    found = w.has(tools.torch.value, tools.pythons or None, cuda, tools.cxx11_abi, "linux_aarch64")
    return found is Availability.YES


def _index(inst: Install) -> Finding | None:
    facts, release = inst.facts, inst.release
    if facts is None or release is None or facts.wheels is None or _arm_runners(facts.wheels.runners):
        return None  # no release workflow read, or one that builds Arm wheels: nothing to say
    if inst.compiles:
        return None  # FAL011 already says pip compiles it (no wheel for this torch, or forced)
    if _arm_wheel(inst):
        return None  # the release's assets have a linux_aarch64 wheel setup.py fetches here
    where, certain = _where(inst)
    ev = facts.wheels.evidence
    return NO_PREBUILT_WHEEL.finding(
        inst.req.location,
        f"flash-attn {release} has no wheel for Arm (aarch64): on this machine pip compiles it from source",
        severity=Severity.WARNING if certain else Severity.INFO,
        **inst.fields,
        notes=(
            f"the machine is aarch64: {where}",
            f"{release}'s wheels are built on {', '.join(facts.wheels.runners)} only ({ev.at}: {ev.text}), "
            "x86_64 runners; setup.py asks for a linux_aarch64 wheel and, finding none, compiles",
            "compiling flash-attn needs nvcc, a CUDA build of torch for aarch64, ninja and tens of GB "
            "of RAM, and takes an hour or more (MAX_JOBS bounds the memory)",
        ),
        help="build the wheel once on an Arm machine and install that file, or use a prebuilt "
        "linux_aarch64 wheel from a source you trust",
    )
