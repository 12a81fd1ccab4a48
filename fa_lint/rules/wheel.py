"""FAL005: a prebuilt flash-attn wheel built for another torch, C++ ABI or Python than it is used with."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.ranges import VersionRange
from packaging.version import Version

from fa_lint.machine import final_torch, series, toolchain
from fa_lint.machine.environments import Environment
from fa_lint.model import FLASH_ATTN, Finding, Kind, Requirement, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._text import fit
from fa_lint.syntax import markers
from fa_lint.syntax.pep508 import file_name, wheel_name

WHEEL_ABI_MISMATCH = Rule(
    "FAL005",
    "wheel-abi-mismatch",
    Severity.ERROR,
    "A prebuilt flash-attn wheel built for another torch, C++ ABI or CPython than its environment has.",
    also=(Severity.WARNING,),  # a build for the torch in place, which a later install may replace
)
RULES = (WHEEL_ABI_MISMATCH,)
PACKAGES = frozenset({FLASH_ATTN}) | toolchain.PACKAGES  # the requirements this rule reads

# (A pattern, compiled on first use: only a wheel's file name has a label to read.)
_LABEL = r"(?:cu(?P<cuda>\d+))?torch(?P<torch>\d+\.\d+)(?:\.\d+)?(?:cxx11abi(?P<abi>TRUE|FALSE))?"
_RELEASES = "https://github.com/Dao-AILab/flash-attention/releases/download/"
_UNDEFINED = "importing flash_attn fails with 'ImportError: ... flash_attn_2_cuda...: undefined symbol'"
# A newer torch minor than the build's: torch keeps no C++ ABI across minor releases, so the extension
# often fails to import, but not always -- a torch 2.6 build imports on torch 2.7 with the same ABI flag
# (Dao-AILab/flash-attention#1644, the comments after the first): a warning, never a certain error. A
# build for a newer torch than the one installed needs what that torch added: no such load is known.
_MINOR = (
    "torch keeps no C++ ABI across minor releases: a build for an older torch minor often fails to import "
    "('ImportError: ... flash_attn_2_cuda...: undefined symbol'), though some pairs load; only importing "
    "it on the machine tells (`fa-lint verify`)"
)


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".")[:2] if p.isdigit())


def _older(built: str, minors: tuple[str, ...] | list[str]) -> bool:
    """Whether the build's torch minor is older than every minor the environment may have."""
    return bool(minors) and all(_minor(built) < _minor(m) for m in minors)


def _filename(req: Requirement) -> str | None:
    if not req.url:
        return None
    name = file_name(req.url)
    return name if name.endswith(".whl") else None


def check(ctx: Context) -> Iterator[Finding]:
    seen: set[object] = set()
    for env in ctx.environments:
        for req in env.of(FLASH_ATTN):
            filename = _filename(req)
            wheel = wheel_name(filename) if filename else None
            if wheel is None and (req.location, env.name) not in seen:
                built = _built_then_moved(ctx, env, req)
                if built is not None:
                    seen.add((req.location, env.name))
                    yield built
            if wheel is None or (req.location, env.name) in seen:
                continue
            seen.add((req.location, env.name))
            for headline, notes, want in _problems(env, req, filename or "", wheel.python, ctx):
                yield WHEEL_ABI_MISMATCH.finding(
                    req.location,
                    headline,
                    severity=Severity.WARNING if _MINOR in notes else WHEEL_ABI_MISMATCH.severity,
                    package=FLASH_ATTN,
                    requirement=req.raw,
                    environment=env.name,
                    notes=(f"the wheel: {filename}", *notes),
                    help=want,
                )


Problem = tuple[str, tuple[str, ...], str]  # headline, notes, help


def _problems(
    env: Environment, req: Requirement, filename: str, python_tag: str, ctx: Context
) -> Iterator[Problem]:
    label = re.search(_LABEL, filename.split("+", 1)[1].split("-", 1)[0], re.I) if "+" in filename else None
    tools = ctx.toolchain(env)
    if not markers.holds_on(req.marker, "linux"):
        # a wheel only another OS installs (``sys_platform == 'win32'``): the environment's torch is
        # Linux's; only the torch lines that can be installed with it count, and the C++ ABI label
        # (libstdc++'s) says nothing about a Windows build
        if label and label["torch"]:
            yield from _torch_beside(env, req, label["torch"])
    elif label and label["torch"]:
        yield from _torch_problem(env, req, filename, label["torch"], tools)
    if label and label["abi"] and markers.holds_on(req.marker, "linux"):
        wheel_abi = _built_abi(req, filename, label["abi"].upper() == "TRUE", label["torch"])
        if wheel_abi is not None and tools.cxx11_abi is not None and tools.cxx11_abi != wheel_abi:
            want = re.sub(
                r"cxx11abi(TRUE|FALSE)", f"cxx11abi{str(tools.cxx11_abi).upper()}", filename, flags=re.I
            )
            abi = "new" if tools.cxx11_abi else "old"
            whose = "the base image's torch" if tools.abi_where.startswith("the torch in ") else "its torch"
            yield (
                f"this wheel is built with cxx11abi{label['abi'].upper()}, but {whose} uses the {abi} C++ "
                f"ABI; use its cxx11abi{str(tools.cxx11_abi).upper()} build",
                (f"{tools.abi_where} uses the {abi} C++ ABI", _UNDEFINED),
                f"use {want}",
            )
    if label and label["cuda"]:
        yield from _cuda_problem(env, req, label["cuda"], tools)
    yield from _python_problem(env, req, filename, python_tag, tools)


def _python_problem(
    env: Environment, req: Requirement, filename: str, python_tag: str, tools: toolchain.Toolchain
) -> Iterator[Problem]:
    """The wheel's CPython tag against the Python its marker or its environment selects."""
    m = re.fullmatch(r"cp(\d)(\d+)", python_tag or "")
    if not m:
        return
    version = f"{m.group(1)}.{m.group(2)}"
    refused = "pip refuses it there: 'is not a supported wheel on this platform'"
    if req.marker and "python_version" in req.marker:
        if not _marker_allows(req.marker, version):
            yield (
                f"this wheel is for CPython {version}, but its marker selects another Python; fix either",
                (f"its marker '{req.marker}' selects another Python: {refused}",),
                f"use the build for the Python the marker selects, or a marker for CPython {version}",
            )
        return
    if tools.python and version not in tools.pythons:
        fits = tools.pythons[0].replace(".", "") if tools.pythons else None
        want = re.sub(rf"\b{python_tag}\b", f"cp{fits}", filename) if fits else "the build for that Python"
        yield (
            fit(
                f"this wheel is for CPython {version}, but its environment runs Python {{py}}; use the build "
                "for that Python",
                py=tools.python.value,
            ),
            (f"{env.name} runs Python {tools.python.value} ({tools.python.where}): {refused}",),
            f"use {want}",
        )


def _torch_problem(
    env: Environment, req: Requirement, filename: str, built: str, tools: toolchain.Toolchain
) -> Iterator[Problem]:
    """The wheel's torch major.minor against the torch its environment ends with, naming what put
    that torch there when a later command did."""
    final = tools.final
    usable = final is not None and final.certain and final.conflict is None and final.removed is None
    minors = final.minors if final is not None and usable else ()
    have = tools.torch
    if not minors and have is not None:
        minors = (have.value,)
    if not minors or built in minors or final is None:
        return
    assert final is not None
    source = toolchain.deciding(final)
    torch_text = final_torch.span(final.versions, minors)
    exact = final.exact
    after = source is not None and source.requirement is not None and source.step > req.step > 0
    if after and source is not None and source.requirement is not None:
        mover = source.requirement
        pinned = str(exact) if exact is not None else torch_text
        line = mover.location.line if mover.location.path == req.location.path else str(mover.location)
        headline = fit(
            "{mover} (line {line}) installs torch {pinned} after this torch {built} wheel; "
            + ("use its torch {minor} build" if len(minors) == 1 else "install this wheel after it"),
            mover=f"-U {mover.raw}" if mover.upgrade and mover.name in final_torch.TORCH else mover.raw,
            line=str(line),
            pinned=pinned,
            built=built,
            minor=torch_text,
        )
    elif len(minors) > 1:
        headline = fit(
            "this wheel is built for torch {built}, but its environment allows only torch {have}; "
            "pin the torch it is built for",
            built=built,
            have=torch_text,
        )
    else:
        headline = fit(
            "this wheel is built for torch {built}, but its environment installs torch {have}; "
            "use its torch {have} build",
            built=built,
            have=torch_text,
        )
    where = have.where if have is not None else (source.says if source is not None else "")
    notes = [
        f"{env.name} installs torch {torch_text} ({where})",
        _MINOR if _older(built, minors) else _UNDEFINED,
    ]
    if have is not None:
        want = filename.replace(f"torch{built}", f"torch{have.value}", 1)
        help_ = f"use the torch {have.value} build of the same release: {want}"
    else:
        help_ = f"pin torch {built} where it is installed, or use a build for the torch installed"
    yield headline, tuple(notes), help_


def _cuda_problem(
    env: Environment, req: Requirement, digits: str, tools: toolchain.Toolchain
) -> Iterator[Problem]:
    """The wheel's CUDA major (``cu118``: 11, ``cu12``/``cu124``: 12) against torch's: its extension
    links the CUDA runtime of its own major, which a torch of another major does not bring."""
    cuda = tools.cuda
    have = cuda.value if cuda is not None else ""
    if not re.fullmatch(r"\d+(?:\.\d+)*", have) or not markers.holds_on(req.marker, "linux"):
        return  # a CPU or ROCm torch, or one whose CUDA no file says
    built = int(digits[:2])
    if built == int(have.split(".")[0]):
        return
    assert cuda is not None
    yield (
        f"this wheel is built with CUDA {built}, but its environment's torch with CUDA {have}; use its "
        f"CUDA {have.split('.')[0]} build",
        (
            f"{env.name} installs a torch built with CUDA {have} ({cuda.where})",
            f"the extension links the CUDA {built} runtime, which that torch does not bring: importing "
            f"flash_attn fails ('libcudart.so.{built}...: cannot open shared object file')",
        ),
        f"use the cu{have.split('.')[0]} build of the same release",
    )


def _built_abi(req: Requirement, filename: str, labelled: bool, torch: str | None) -> bool | None:
    """The C++ ABI a wheel was built with. A release wheel's ``cxx11abiFALSE`` is the workflow's matrix
    value, and its setup.py only ever forces the ABI on, so a FALSE build against a torch that uses the
    new ABI (torch 2.7 and later, fa_lint/kb/torch.json) is a new-ABI build. None: not known (a FALSE
    wheel for such a torch that someone else built and named)."""
    if labelled or torch is None:
        return labelled
    from fa_lint.kb import abi_label  # for FALSE-labelled wheels only
    from fa_lint.kb import torch as torch_kb

    first_new = torch_kb.load().abi_change
    wheel = wheel_name(filename)
    version = wheel.version if wheel is not None else None
    if (
        first_new is None
        or version is None
        or Version(torch) < Version(f"{first_new.major}.{first_new.minor}")
    ):
        return False
    official = (req.url or "").startswith(_RELEASES)
    return True if official and abi_label.follows_torch(version) is not None else None


def _torch_beside(env: Environment, req: Requirement, built: str) -> Iterator[Problem]:
    """The wheel's torch against the torch lines whose markers can hold together with its own (the
    lines for another platform or Python are never installed with it)."""
    beside = [
        r
        for r in env.members
        if r.name in final_torch.TORCH
        and r.kind in (Kind.INSTALL, Kind.OVERRIDE, Kind.CONSTRAINT)
        and markers.together(r.marker, req.marker)
    ]
    rng = VersionRange.full()
    for r in beside:
        rng = rng.intersection(r.version_range)
    minors = series.minors(rng) if beside and not rng.is_empty else ()
    if not minors or built in minors or rng.is_superset(VersionRange.full()):
        return  # nothing said about torch there, or lines that cannot hold together (FAL016's)
    have = final_torch.span(rng, minors)
    where = ", ".join(f"'{r.raw}' ({r.location})" for r in beside)
    yield (
        fit(
            "this wheel is built for torch {built}, but where its marker holds its environment allows only "
            "torch {have}; pin the torch it is built for",
            built=built,
            have=have,
        ),
        (
            f"where '{req.marker}' holds, {env.name} installs torch {have} ({where})",
            _MINOR if _older(built, minors) else _UNDEFINED,
        ),
        f"pin torch {built} under the same marker, or use a build for torch {have}",
    )


def _built_then_moved(ctx: Context, env: Environment, req: Requirement) -> Finding | None:
    """A flash-attn that a command builds (an sdist from an index, whose setup.py fetches the wheel
    for the torch in place or compiles against it; a clone; a folder), after which a later command of
    the same stage installs another torch: the binary stays built for the first one."""
    if req.url is not None and _filename(req) is not None:
        return None  # a wheel file: its name says its torch (above)
    if req.kind not in (Kind.INSTALL, Kind.OVERRIDE) or req.tool == "conda" or req.possible or not req.step:
        return None
    if ctx.satisfied_by(req) is not None or (req.options is not None and req.options.installer == "conda"):
        return None
    tools = ctx.toolchain(env)
    final = tools.final
    if final is None or not final.certain or final.conflict is not None or final.removed is not None:
        return None
    source = toolchain.deciding(final)
    built_at = req.build_step
    if source is None or source.requirement is None or source.step <= built_at or not final.minors:
        return None
    earlier = final_torch.before(env, built_at, tools.pythons)
    if earlier is None or earlier.versions.is_empty or earlier.removed is not None:
        return None  # no torch to build against: FAL012's finding, not this one
    then = earlier.minors if earlier.certain else ()
    now = final.minors
    if then and set(then) & set(now):
        return None  # the same torch minor: the binary still fits
    mover = source.requirement
    line = mover.location.line if mover.location.path == req.location.path else str(mover.location)
    torch_now = str(final.exact) if final.exact is not None else final_torch.span(final.versions, now)
    older = len(then) == 1 and _older(then[0], now)
    notes = [f"{env.name} installs torch {torch_now} ({source.says})", _MINOR if older else _UNDEFINED]
    if len(then) == 1:
        headline = fit(
            "flash-attn is built for torch {then}; {mover} (line {line}) then installs torch {now}: "
            "install it after",
            then=then[0],
            mover=mover.raw,
            line=str(line),
            now=torch_now,
        )
        severity = Severity.WARNING if older else Severity.ERROR  # a newer torch: it may still load
    else:
        headline = fit(
            "flash-attn is built for the torch in place; {mover} (line {line}) then installs torch {now}: "
            "install it after",
            mover=mover.raw,
            line=str(line),
            now=torch_now,
        )
        severity = Severity.WARNING
        # a span, not every minor: an open range lists dozens ("2.1 or 2.2 or ... or 3.39")
        torch_then = final_torch.span(final.versions, now)
        notes.append(f"unless the torch in place before was already a torch {torch_then} build")
    return WHEEL_ABI_MISMATCH.finding(
        req.location,
        headline,
        severity=severity,
        package=FLASH_ATTN,
        requirement=req.raw,
        environment=env.name,
        notes=(
            "setup.py fetches the prebuilt wheel for the torch it finds, or compiles against it: "
            "the binary is built for that torch",
            *notes,
        ),
        related=(mover.location,),
        help=f"install flash-attn in a command after '{mover.raw}', or pin the torch it is built for there",
    )


def _marker_allows(marker: str, python: str) -> bool:
    """Whether a marker can hold on some platform when Python is ``python``."""
    from packaging.markers import InvalidMarker, Marker, default_environment  # for such markers only

    try:
        parsed = Marker(marker)
    except InvalidMarker:
        return True  # pip reports invalid markers itself
    for system, machine in (
        ("Linux", "x86_64"),
        ("Linux", "aarch64"),
        ("Windows", "AMD64"),
        ("Darwin", "arm64"),
    ):
        env: dict[str, str] = {
            **{k: str(v) for k, v in default_environment().items()},
            "python_version": python,
            "python_full_version": f"{python}.0",
            "platform_system": system,
            "platform_machine": machine,
            "sys_platform": {"Linux": "linux", "Windows": "win32", "Darwin": "darwin"}[system],
        }
        if parsed.evaluate(env):
            return True
    return False
