"""FAL011's fix: for a requirement whose release compiles where another release has a wheel, the edit
that makes the install take that wheel.

- A range: stop it at the nearest release with a wheel (``<=X``), safe as FAL002's cap is: pip and uv
  install the newest release a range admits (docs/wheels.md), so the range must end where the wheel is.
- An exact pin in a requirements file: the wheel itself, by URL, with the markers of the machines it
  is built for (``flash-attn @ URL ; sys_platform == "linux" and platform_machine == "x86_64" and
  python_version == "3.12"``), a line per CPython and platform the install runs; pip skips a line whose
  marker does not hold, so elsewhere flash-attn is not installed from this file. Unsafe: it moves the
  release and ties the file to one torch, CUDA and C++ ABI (the wheel's name says which).
- An exact pin in a uv project: a ``[tool.uv.sources]`` entry with those markers. uv takes a
  requirement from a source where its marker holds and from the index elsewhere
  (astral-sh/uv 0.12.5:crates/uv-distribution/src/metadata/lowering.rs:162-178), and a URL source
  drops the requirement's own specifier (lowering.rs:750-786; crates/uv-distribution-types/src/
  requirement.rs:542-543: "TODO(konsti): Track and verify version specifier from
  `project.dependencies` matches the version in remote location"), so the pin stays as it is.
- Any other exact pin (a command line, a Poetry table): moved to that release, unsafe, as FAL001's.

Every fix is offered only where the release has the wheel for every machine the requirement's
installs describe, and the rest of each install admits it.
"""

from __future__ import annotations

import os

from fa_lint._lazy import Lazy
from fa_lint.kb import Availability, Release
from fa_lint.kb.assess import Verdict
from fa_lint.machine.environments import Environment
from fa_lint.machine.toolchain import exact
from fa_lint.model import FLASH_ATTN, Fix, Kind, Requirement
from fa_lint.rules._base import Context
from fa_lint.rules._fixes import allowed, bump_pin, stop_at, writable
from fa_lint.rules._wheelfiles import Machine, WheelFile, files, status

# the name and extras a requirement starts with, as written (a URL line keeps them)
_HEAD = Lazy(r"\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?")
ARM = "aarch64"  # fa_lint.machine.cpu's, not imported here: it loads gpus.json for every run
_PLATFORM = {"x86_64": "linux_x86_64", ARM: "linux_aarch64"}


def fix(ctx: Context, req: Requirement, release: Release, near: Release | None) -> Fix | None:
    """The edit that makes ``req``'s installs take ``near``'s wheel instead of compiling ``release``."""
    if near is None or not writable(req) or ctx.assessment(req).verdict is Verdict.MIXED:
        return None  # FAL002's fix already stops a mixed range where the wheel is
    machines = _machines(ctx, req)
    if machines is None or not all(status(near, m) is Availability.YES for m, _ in machines):
        return None  # a machine (an Arm one, say) the release has no wheel for
    if exact(req) is None:
        return _cap(ctx, req, release, near)
    if not allowed(req, ctx).contains(near.version):
        return None  # a constraint or the same command rules it out
    # as FAL011's help has it: the nearest release with a prebuilt wheel for every install's machine
    return by_url(ctx, req, near, machines) or bump_pin(req, near, f"require flash-attn=={near.version}")


def _cap(ctx: Context, req: Requirement, release: Release, near: Release) -> Fix | None:
    """``<=near`` in the range: the installer then takes ``near``."""
    if near.version >= release.version or not allowed(req, ctx, narrow=True).contains(near.version):
        return None
    return stop_at(req, near)


# --- the wheel by URL -------------------------------------------------------------------------------


def by_url(ctx: Context, req: Requirement, near: Release, machines: Machines) -> Fix | None:
    """The wheel of ``near`` for every machine of ``req``'s installs, written in its file."""
    loc = req.location
    if req.marker or req.kind is not Kind.INSTALL or "--" in req.raw or loc.line != loc.end_line:
        return None  # its own marker, options, or a line continued: written by hand
    plan = _plan(near, machines)
    if plan is None:
        return None
    if req.source == "requirements":
        return _requirements(req, near, plan)
    if req.source == "pyproject" and _uv_project(ctx, req):
        return _uv_source(ctx, req, near, plan)
    return None


Machines = list[tuple[Machine, str]]  # each install's machine, and its platform_machine
Plan = list[tuple[str, str, WheelFile]]  # (platform_machine, CPython, the wheel)


def _machines(ctx: Context, req: Requirement) -> Machines | None:
    """The machine of each install of ``req``; None when one has no torch known."""
    found = [_machine(ctx, req, env) for env in ctx.environments_of(req)]
    known = [m for m in found if m is not None]
    return known if known and len(known) == len(found) else None


def _plan(near: Release, machines: Machines) -> Plan | None:
    """One wheel for each platform and CPython the installs run: the same torch, CUDA and C++ ABI
    everywhere (a marker cannot tell them apart), each CPython said or, where none is, each one
    ``near`` has a wheel for."""
    if len({(m.torch, m.cuda, m.cxx11_abi) for m, _ in machines}) != 1:
        return None
    plan: dict[tuple[str, str], WheelFile] = {}
    for m, arch in machines:
        for python in m.pythons or sorted({f.python for f in files(near, m) if f.fetched}, key=_order):
            found = [f for f in files(near, m._replace(pythons=(python,))) if f.fetched]
            if len(found) != 1:
                return None
            plan[arch, python] = found[0]
    ordered = sorted(plan.items(), key=lambda x: (x[0][0], _order(x[0][1])))
    return [(a, p, f) for (a, p), f in ordered] or None


def _order(python: str) -> tuple[int, ...]:
    return tuple(int(p) for p in python.split("."))


def _machine(ctx: Context, req: Requirement, env: Environment) -> tuple[Machine, str] | None:
    built = ctx.building(env, req)
    tools = ctx.toolchain(built)
    if tools.torch is None:
        return None  # (a C++ ABI not known is left open: the plan needs one wheel, or none)
    arm = any(c.arch == ARM and not c.possible for c in ctx.target(built).cpus)
    arch = ARM if arm else "x86_64"
    cuda = tools.cuda.value if tools.cuda else None
    return Machine(tools.torch.value, cuda, tools.pythons, tools.cxx11_abi, _PLATFORM[arch]), arch


def marker(arch: str, python: str, q: str = '"') -> str:
    """The machines a wheel installs on: Linux, its platform, its CPython."""
    said = (("sys_platform", "linux"), ("platform_machine", arch), ("python_version", python))
    return " and ".join(f"{name} == {q}{value}{q}" for name, value in said)


def _title(near: Release, plan: Plan) -> str:
    by_arch: dict[str, list[str]] = {}
    for arch, python, _ in plan:
        by_arch.setdefault(arch, []).append(python)
    machines = "; ".join(f"CPython {', '.join(pythons)} on Linux {arch}" for arch, pythons in by_arch.items())
    return f"install flash-attn {near.version}'s prebuilt wheels by URL, for {machines} only"


def _requirements(req: Requirement, near: Release, plan: Plan) -> Fix | None:
    head = _HEAD().match(req.raw)
    if head is None:
        return None
    name = head.group().strip()
    lines = [f"{name} @ {f.url} ; {marker(a, p)}" for a, p, f in plan]
    return Fix(
        req.location,
        req.raw,
        "\n".join(lines),
        _title(near, plan),
        False,
        req.source,
        lines[0],
        "lines",
        len(lines) - 1,
    )


def _uv_project(ctx: Context, req: Requirement) -> bool:
    """A pyproject uv installs: a [tool.uv] table, or a uv.lock beside it."""
    path = req.location.path
    lock = os.path.join(os.path.dirname(path), "uv.lock")
    return any(b.tool == "uv" and b.location.path == path for b in ctx.builds) or any(
        r.location.path == lock for r in ctx.requirements
    )


def _uv_source(ctx: Context, req: Requirement, near: Release, plan: Plan) -> Fix | None:
    path = req.location.path
    if any(
        r.kind is Kind.SOURCE and r.name == FLASH_ATTN and r.location.path == path for r in ctx.requirements
    ):
        return None  # flash-attn has a source already: which one wins is the author's to say
    if req.scope == "build-system":
        return None
    entries = [f'{{ url = "{f.url}", marker = "{marker(a, p, q=chr(39))}" }}' for a, p, f in plan]
    if len(entries) == 1:
        text = f"{FLASH_ATTN} = {entries[0]}\n"
    else:
        text = f"{FLASH_ATTN} = [\n" + "".join(f"    {e},\n" for e in entries) + "]\n"
    return Fix(
        req.location,
        "",
        text,
        _title(near, plan) + " in [tool.uv.sources]; uv keeps the pin elsewhere",
        False,
        req.source,
        f"{FLASH_ATTN} @ {plan[0][2].url}",
        "uv-sources",
        len(entries),
    )
