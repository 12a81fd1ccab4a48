"""FAL023: flash-attn installed on top of an NGC PyTorch container.

``FROM nvcr.io/nvidia/pytorch:YY.MM-py3`` brings NVIDIA's own torch (built from a source commit,
``2.5.0a0+e000cf0``: no PyPI release has that ABI) and, from 23.08, a flash-attn built against it. A
``pip install flash-attn`` on top does one of three things, read from flash-attn's own ``setup.py``
(``get_wheel_url``: the wheel is picked by torch's major.minor, its CUDA major and its C++ ABI flag):

- nothing: the container's flash-attn already satisfies the requirement (no ``-U``);
- it downloads the release wheel built for *PyPI's* torch of the same major.minor, which can fail to
  import against NGC's torch (``undefined symbol``, reported on 23.11 and 23.12);
- it compiles against the container's torch (no such wheel): slow, and what works.

From 25.03 the container's pip constraints file holds every package it ships to its own version. The
rule needs the environment to keep the container's torch: a stage that installs its own torch is
judged by the other rules against that torch.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from packaging.version import Version

from fa_lint.kb import PAGED_KV
from fa_lint.model import FLASH_ATTN, Finding, Image, Kind, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._fal012 import keeps_any
from fa_lint.rules._ngc_paged import base_image

if TYPE_CHECKING:
    from fa_lint.kb.ngc import NgcFacts, NgcRelease
    from fa_lint.rules._installs import Install

NGC_CONTAINER = Rule(
    "FAL023",
    "ngc-container",
    Severity.INFO,
    "flash-attn installed on top of an NGC PyTorch container, which ships its own torch (not a PyPI "
    "release) and its own flash-attn: a no-op, a wheel built for PyPI's torch, or a compile.",
    also=(Severity.WARNING,),  # a wheel built for another torch; a kept flash-attn without paged KV
)
RULES = (NGC_CONTAINER,)
PACKAGES = frozenset({FLASH_ATTN, "torch", "transformers"})
_SETUP = "flash-attn's setup.py (get_wheel_url, v2.8.3:setup.py:440-503)"


def check(ctx: Context) -> Iterator[Finding]:
    if not any(isinstance(s, Image) and "nvidia/pytorch:" in s.reference for s in ctx.settings):
        return  # no NGC PyTorch base image: nothing to read
    from fa_lint.rules import _ngc_paged
    from fa_lint.rules.versions import PAGED_KV_MISSING

    yield from _ngc_paged.check(ctx, PAGED_KV_MISSING, NGC_CONTAINER)
    yield from _installs_on(ctx)


def _installs_on(ctx: Context) -> Iterator[Finding]:
    """FAL023: each flash-attn install command of a stage on an NGC PyTorch container."""
    from fa_lint.kb import ngc
    from fa_lint.rules._installs import installs  # the machine's knowledge, only for an NGC image

    facts = ngc.load()
    images = {(s.location.path, s.scope): s for s in ctx.settings if isinstance(s, Image)}
    for inst in installs(ctx):
        req = inst.req
        if req.name != FLASH_ATTN or req.kind is not Kind.INSTALL or req.options is None:
            continue  # only an install command runs in the container
        if inst.path != "index":
            continue  # a wheel file or a source build: setup.py's wheel guess does not run
        base = base_image(inst.env, images)
        if base is None or _own_torch(inst) or any(e.of("torch") for e in ctx.environments_of(req)):
            continue  # not on NGC, or the stage installs (or a package pins) a torch of its own
        release = ngc.tag(base.reference)
        if release is None:
            continue
        yield _judge(ctx, inst, base, facts, facts.release(release))


def _own_torch(inst: Install) -> bool:
    """A requirement decides the stage's torch (torch itself, or vllm pinning one): not the container's."""
    final = inst.tools.final
    return final is not None and any(s.requirement is not None for s in final.decided)


def _judge(ctx: Context, inst: Install, base: Image, facts: NgcFacts, row: NgcRelease) -> Finding:
    from fa_lint.kb import ngc
    from fa_lint.machine.target import version

    req = inst.req
    fields = inst.fields  # req.name is flash-attn: check() passes no other
    image = f"NGC {row.tag}"
    notes = [_ships(base, facts, row)]
    torch = version(row.torch or "")
    later = ngc.key(row.tag) >= ngc.key(facts.constraints_since)
    if later:
        notes.append(
            f"from {facts.constraints_since} the container has a pip constraints file, "
            f"{facts.constraints_path}, with the versions of the packages it was built with; a flash-attn "
            f"it lists at another version does not resolve until that file is edited "
            f"({facts.constraints_source})"
        )
    kept = _kept(inst, row)
    if kept is not None:
        paged = kept >= ctx.kb.first_with(PAGED_KV).version
        notes.append(
            f"pip keeps the container's flash-attn {kept} ('Requirement already satisfied'): nothing is "
            "downloaded or built"
        )
        if not paged:
            notes.append(f"flash-attn {kept} has no paged KV (block_table ships in 2.5.0)")
        return NGC_CONTAINER.finding(
            req.location,
            f"on {image}, this install is a no-op: the container's flash-attn {kept} stays"
            + ("" if paged else ", without paged KV"),
            severity=Severity.INFO if paged else Severity.WARNING,
            notes=tuple(notes),
            help="require the flash-attn you need with -U, or keep the container's (and its torch)",
            **fields,
        )
    shipped = ngc.key(row.tag) >= ngc.key(facts.ships_flash_attn_since)
    if shipped and row.flash_attn is None and keeps_any(inst.env, inst.req):
        notes.append(
            "pip keeps the flash-attn the container ships ('Requirement already satisfied'): the "
            "requirement admits any version and nothing asks pip to upgrade: nothing is downloaded or built"
        )
        return NGC_CONTAINER.finding(
            req.location,
            f"on {image}, this install is a no-op: the container's own flash-attn stays (its version is not "
            "known to fa-lint)",
            severity=Severity.INFO,
            notes=tuple(notes),
            help="require the flash-attn you need with -U, or keep the container's (and its torch)",
            **fields,
        )
    wheel = _wheel(inst, torch)
    notes.append(_what_setup_does(inst, torch, wheel))
    if wheel:
        headline = (
            f"on {image}, flash-attn's setup.py fetches a wheel built for torch {torch.major}.{torch.minor}, "
            f"not for the container's {row.torch}"
            if torch is not None
            else f"on {image}, flash-attn's setup.py fetches a wheel built for PyPI's torch"
        )
        severity = Severity.WARNING
    else:
        what = "replaces the container's flash-attn" if shipped else "installs flash-attn"
        headline = f"on {image}, this {what}" + (
            f", against the container's torch {row.torch}"
            if torch is not None
            else "; its torch is not known"
        )
        severity = Severity.INFO
    return NGC_CONTAINER.finding(
        req.location,
        headline,
        severity=severity,
        notes=tuple(notes),
        help="keep the container's flash-attn, or build one against its torch: "
        "FLASH_ATTENTION_FORCE_BUILD=TRUE pip install --no-build-isolation flash-attn==X",
        **fields,
    )


def _ships(base: Image, facts: NgcFacts, row: NgcRelease) -> str:
    known = [
        f"{label} {value}"
        for label, value in (
            ("torch", row.torch),
            ("CUDA", row.cuda),
            ("Python", row.python),
            ("Ubuntu", row.ubuntu),
            ("flash-attn", row.flash_attn),
        )
        if value
    ]
    if not known:
        return (
            f"{base.reference} ({base.location}): fa-lint's knowledge base has no row for NGC {row.tag}, so "
            "its torch and flash-attn are not judged; every NGC PyTorch container ships torch built from a "
            "source commit (X.Y.0a0+commit, not a PyPI release)"
            + f" and, from {facts.ships_flash_attn_since}, a flash-attn 2 built against it"
        )
    return (
        f"{base.reference} ({base.location}) ships {', '.join(known)} ({row.source}); its torch is built "
        f"from a source commit, not a PyPI release, and from {facts.ships_flash_attn_since} it ships a "
        "flash-attn 2 built against it"
    )


def _kept(inst: Install, row: NgcRelease) -> Version | None:
    """The container's flash-attn, where pip keeps it: known, admitted, not upgraded or removed."""
    req = inst.req
    if row.flash_attn is None or req.upgrade or any(u.name == FLASH_ATTN for u in inst.env.removed):
        return None
    shipped = Version(row.flash_attn)
    return shipped if req.specifier.contains(shipped, prereleases=True) and req.version is None else None


def _wheel(inst: Install, torch: Version | None) -> bool | None:
    """Whether setup.py finds a release wheel for the container's torch major.minor (C++11 ABI)."""
    from fa_lint.machine.toolchain import Known
    from fa_lint.rules._wheels import fits

    if inst.release is None or torch is None or inst.forced:
        return None if not inst.forced else False
    tools = inst.tools._replace(torch=Known(f"{torch.major}.{torch.minor}", "NGC"), cxx11_abi=True)
    return fits(inst.release, tools)


def _what_setup_does(inst: Install, torch: Version | None, wheel: bool | None) -> str:
    release = inst.release
    which = f"flash-attn {release}" if release is not None else "flash-attn"
    if torch is None:
        return (
            f"{_SETUP} picks the wheel by torch's major.minor, CUDA major and C++ ABI: on a container torch "
            f"X.Y.0a0+commit it fetches {which}'s wheel built for PyPI's torch X.Y where the release has one "
            "(an import can then fail with 'undefined symbol', as reported on NGC 23.11 and 23.12), and "
            "compiles against the container's torch where it has none"
        )
    if wheel:
        w = release.wheels if release is not None else None
        nightly = w.built_against(f"{torch.major}.{torch.minor}") if w is not None else None
        against = (
            f"torch {nightly}, a pre-release" if nightly else f"PyPI's torch {torch.major}.{torch.minor}"
        )
        return (
            f"{_SETUP} asks for a torch{torch.major}.{torch.minor} cxx11abiTRUE wheel, and {which} has one: "
            f"built against {against}, not this {torch}, so importing it can fail with 'undefined symbol' "
            "(flash-attention#709, #784 on NGC 23.11 and 23.12)"
        )
    if wheel is None:
        return (
            f"whether {which} has a torch{torch.major}.{torch.minor} wheel is not known: {_SETUP} fetches "
            f"one built for PyPI's torch {torch.major}.{torch.minor} if it exists (an 'undefined symbol' "
            "risk on this torch), and compiles against the container's torch if not"
        )
    return (
        f"{which} has no torch{torch.major}.{torch.minor} cxx11abiTRUE wheel, so {_SETUP} compiles it "
        "against the container's torch (nvcc is in the container): slow, and built for this torch"
    )
