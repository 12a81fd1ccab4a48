"""FAL011, FAL012: whether flash-attn installs as a prebuilt wheel, and whether it can build at all."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from fa_lint.kb import Release
from fa_lint.kb.assess import Verdict
from fa_lint.machine import toolchain
from fa_lint.machine.environments import Environment, Sources
from fa_lint.machine.toolchain import Known, Toolchain
from fa_lint.model import FA3, FLASH_ATTN, Finding, Kind, Location, Requirement, Severity
from fa_lint.rules._base import Context, Memo, Rule
from fa_lint.rules._fal011 import COMPILE, aside, newest, tagged_before, unknown_finding, untagged_finding
from fa_lint.rules._fal012 import (
    CONDA_PIP,
    NO_TORCH,
    NONE_BEFORE,
    Stage,
    WheelSources,
    builds,
    conda_pip_step,
    hopper,
    keeps_any,
    stage_of,
    torchless,
    wheel,
)
from fa_lint.rules._fixes import taken
from fa_lint.rules._rocm import on_rocm
from fa_lint.rules._text import fit
from fa_lint.rules._uv import NO_KERNELS, skip_setting, uv_instead
from fa_lint.rules._wheelfix import fix as wheel_fix
from fa_lint.rules._wheels import fits, lacking, missing, series, span, stable
from fa_lint.rules.versions import JUDGED
from fa_lint.syntax import markers

if TYPE_CHECKING:
    from fa_lint.machine.target import Target

NO_PREBUILT_WHEEL = Rule(
    "FAL011",
    "no-prebuilt-wheel",
    Severity.WARNING,
    "No flash-attn release the requirement admits has a prebuilt wheel for the environment's "
    "torch/CPython/CUDA, so pip compiles it from source.",
    also=(Severity.INFO,),  # where whether a wheel exists is unknown
)
BUILD_ISOLATION = Rule(
    "FAL012",
    "build-isolation",
    Severity.ERROR,
    "flash-attn is built where torch cannot be seen (an isolated PEP 517 build, or no torch installed "
    "before it), so its setup.py fails with ModuleNotFoundError: No module named 'torch'.",
    also=(Severity.WARNING,),  # where the failure depends on the pip version, or on the machine
)
RULES = (NO_PREBUILT_WHEEL, BUILD_ISOLATION)
# The requirements these rules read: a stage's pip and setuptools decide how pip builds flash-attn,
# and its toolchain which wheels fit.
PACKAGES = frozenset({FLASH_ATTN, "pip", "setuptools"}) | toolchain.PACKAGES

PIP_RULE = (
    "pip >= 25.3 always builds with PEP 517, isolated unless --no-build-isolation; pip 23.1-25.2 "
    "(22.1-23.0) do so when setuptools or wheel (setuptools) is missing, and otherwise fall back to "
    "the legacy 'setup.py bdist_wheel', which sees torch"
)
PIP_253 = Version("25.3")


def check(ctx: Context) -> Iterator[Finding]:
    yield from _no_wheel(ctx)
    yield from _isolation(ctx)


# --- FAL011 ----------------------------------------------------------------------------------------


def _no_wheel(ctx: Context) -> Iterator[Finding]:
    seen: set[Location] = set()
    for env in ctx.environments:
        # an install a later one replaces still runs, and still compiles
        replaced = tuple(r for r in env.superseded if r.name == FLASH_ATTN)
        reqs = (*env.of(FLASH_ATTN), *replaced, *env.of(FLASH_ATTN, locked=True))
        for req in reqs:
            if req.location in seen or not _from_index(req) or ctx.satisfied_by(req) is not None:
                continue
            found = _judge_wheel(ctx, env, req)
            if found is not None:
                seen.add(req.location)
                yield found


def _judge_wheel(ctx: Context, env: Environment, req: Requirement) -> Finding | None:
    """FAL011 on the release the installer takes: pip and uv install the newest release the range (and
    the rest of the install) admits and build its sdist; an older release's wheel does not help."""
    instead = uv_instead(ctx, env, req)
    if instead is not None and instead.own:
        return None  # this environment's group installs flash-attn from its source, not this entry
    built = ctx.building(env, req)  # a wheel another stage built: setup.py ran there
    tools = ctx.toolchain(built)
    if tools.torch is None or _served(ctx, built, req, tools) or on_rocm(ctx, built):
        return None  # on ROCm setup.py asks for a +rocm wheel; the wheels fa-lint knows are CUDA builds
    a = ctx.assessment(req)
    paged = [r for r in a.admitted if ctx.policy.good(r)]
    if not paged or a.verdict is Verdict.UNKNOWN:
        return None  # no paged KV at all is FAL001's
    pinned = env.of(FLASH_ATTN, locked=True)
    if a.newer and pinned and req not in pinned:
        return None  # the lock says which release installs, and its entry is judged
    release = taken(req, ctx)
    finding = _judged(ctx, built, req, paged, tools, release)
    if finding is None:
        return None
    if a.newer:  # judged on the newest release fa-lint knows; say that a later one would win
        later = (
            f"the range also admits releases after fa-lint's list (PyPI as of {ctx.kb.date}): {release} is "
            "the newest on it, and a later one, if any, would be installed instead"
        )
        finding = finding._replace(notes=(*finding.notes, later))
    return aside(finding, instead) if instead is not None else finding


def _judged(
    ctx: Context,
    built: Environment,
    req: Requirement,
    paged: list[Release],
    tools: Toolchain,
    release: Release | None,
) -> Finding | None:
    """FAL011's finding on the release the installer takes, if it has no wheel here or none known."""
    if release is None or not ctx.policy.good(release):
        return None  # FAL001's or FAL004's case
    found = fits(release, tools) if release.wheels is not None else None
    if found:
        return None
    skip = skip_setting(ctx.target(built), req)
    if release.wheels is None:  # an sdist with no tag: nothing fa-lint reads lists its wheels
        before = tagged_before(ctx.kb.installable, release)
        if before is not None and fits(before, tools):
            return None  # the release it follows has one: nothing says this one dropped it
        near = _nearest(ctx, paged, tools, ctx.target(built))
        return untagged_finding(NO_PREBUILT_WHEEL, built, req, paged, release, tools, near, before, skip)
    if found is None:  # a torch newer than the tag: only a wheel attached later would serve it
        return unknown_finding(NO_PREBUILT_WHEEL, built, req, [release], tools, skip)
    return _no_wheel_finding(ctx, built, req, paged, tools, skip, release)


def _served(ctx: Context, env: Environment, req: Requirement, tools: Toolchain) -> bool:
    """uv takes ``req`` from ``[tool.uv.sources]`` wheels on every machine the files say it has: their
    markers cover its platform (x86_64 unless the files say Arm) and each CPython it may run (every one,
    where none is said). Where no source's marker holds uv takes the index (uv 0.12.5:crates/
    uv-distribution/src/metadata/lowering.rs:162-178): such a machine still compiles."""
    marked = _MARKED.of(ctx)  # indexed once per environment, not searched once a requirement
    if env not in marked:
        marked[env] = Sources(
            s
            for s in env.of(FLASH_ATTN)
            if s.kind is Kind.SOURCE and s.marker and s.scope.startswith("uv:sources")
        )
    sources = marked[env].applying(req)
    if not sources or req.kind is not Kind.INSTALL or not all(map(wheel, sources)):
        return False
    from fa_lint.machine.cpu import ARM  # (it loads gpus.json: only for a project with such sources)

    arm = any(c.arch == ARM and not c.possible for c in ctx.target(env).cpus)
    written = tuple(s.marker for s in sources if s.marker)
    return markers.covers(written, (ARM,) if arm else ("x86_64",), tools.pythons)


_MARKED: Memo[Environment, Sources] = Memo()


def _from_index(req: Requirement) -> bool:
    """An sdist from an index, where setup.py looks for a wheel: not a URL, a conda build, a variable."""
    if req.kind not in JUDGED or req.unresolved or (req.tool == "conda" and req.scope != "pip"):
        return False
    if req.version is not None and req.version.local:
        return False  # a local build from a wheel index (==2.5.8+cu122): not the release's wheels
    return req.url is None


def _no_wheel_finding(
    ctx: Context,
    env: Environment,
    req: Requirement,
    paged: list[Release],
    tools: Toolchain,
    skip: Known | None = None,
    release: Release | None = None,
) -> Finding:
    torch = tools.torch
    assert torch is not None
    release = release or paged[-1]  # the release the installer takes from the range
    combo = lacking(release, tools)
    from fa_lint.rules._installs import machine_notes  # the machine's facts: only for this finding

    target = ctx.target(env)
    near = _nearest(ctx, paged, tools, target)
    # none surely has one: the nearest whose wheel for this torch is unknown (a torch newer than its tag)
    maybe = (
        None
        if near
        else _closest(ctx, paged, tools, target, (lambda r, t: fits(r, t) is None and r.wheels is not None,))
    )
    template = f"flash-attn {release}"
    parts: dict[str, str] = {}
    fix = (
        f"use flash-attn=={near}"
        if near
        else f"{maybe} may have one (unknown)"
        if maybe
        else "no release with paged KV has one"
    )
    does = "it installs without kernels" if skip else "pip compiles it"
    headline = fit(f"{template} has no prebuilt wheel for {{combo}}: {does}; {fix}", combo=combo, **parts)
    said = [f"torch {torch.value} from {torch.where}"]
    said += [f"CPython {tools.python.value} from {tools.python.where}"] if tools.python else []
    said += [f"CUDA {tools.cuda.value} from {tools.cuda.where}"] if tools.cuda else []
    notes = [
        missing(release, tools),
        *newest(req, paged, release),
        f"{NO_KERNELS} (the variable is set at {skip.where})" if skip else COMPILE,
        "; ".join(said),
        *machine_notes(env, req, release, target),
    ]
    if near is not None and near.wheels is not None:
        w = near.wheels
        built = w.built_against(torch.value)
        here = sorted(
            {b.python for b in w.matching(torch.value)} | {a.python for a in w.assets_for(torch.value)}
        )
        notes.append(
            f"{near} has wheels for torch {span(series(w))}; for torch {torch.value}, CPython "
            f"{span(sorted(here, key=lambda v: tuple(map(int, v.split('.')))))}"
            + (f" (built against the pre-release {built})" if built else "")
            + f", CUDA builds {', '.join('cu' + c for c in w.cuda)}"
        )
    if maybe is not None and maybe.tagged is not None:
        notes.append(
            f"torch {torch.value} came out after v{maybe} was tagged ({maybe.tagged[:10]}): whether a wheel "
            "for it was attached to that release later is unknown"
        )
    help_ = (
        f"require flash-attn=={near}"
        if near
        else f"check v{maybe}'s release assets for a torch{torch.value} wheel, or use a torch some release "
        "has wheels for"
        if maybe
        else "use a torch some release has wheels for"
    )
    fixed = wheel_fix(ctx, req, release, near)
    return NO_PREBUILT_WHEEL.finding(
        req.location,
        headline,
        package=FLASH_ATTN,
        requirement=req.raw,
        admitted=tuple(str(r) for r in paged),
        environment=env.name,
        notes=tuple(notes),
        help=fixed.title if fixed is not None else help_,
        fix=fixed,
    )


def _nearest(ctx: Context, paged: list[Release], tools: Toolchain, target: Target) -> Release | None:
    """The good release closest to the admitted ones that has a wheel here (a released-torch build
    first), and whose wheel imports and runs on the machine the files target."""
    found = _NEAREST.of(ctx)
    key = (paged[0].version, paged[-1].version, tools, target)
    if key not in found:
        found[key] = _closest(ctx, paged, tools, target)
    return found[key]


_NEAREST: Memo[tuple[Version, Version, Toolchain, Target], Release | None] = Memo()


def _closest(
    ctx: Context,
    paged: list[Release],
    tools: Toolchain,
    target: Target,
    tests: tuple[Callable[[Release, Toolchain], bool], ...] = (),
) -> Release | None:
    from fa_lint.rules._installs import suits

    order = list(ctx.kb.installable)
    lo, hi = order.index(paged[0]), order.index(paged[-1])
    candidates = [
        r for r in order if ctx.policy.good(r) and not r.version.is_prerelease and suits(r, target, tools)
    ]
    for good in tests or (stable, lambda r, t: bool(fits(r, t))):
        found = [r for r in candidates if good(r, tools)]
        if found:
            # nearest by position in the release list, one the range admits at none; a tie goes to the newer
            return min(found, key=lambda r: (_distance(order.index(r), lo, hi), -order.index(r)))
    return None


def _distance(at: int, lo: int, hi: int) -> int:
    return 0 if lo <= at <= hi else min(abs(at - lo), abs(at - hi))


# --- FAL012 ----------------------------------------------------------------------------------------


def _isolation(ctx: Context) -> Iterator[Finding]:
    seen: set[tuple[Location, str | None]] = set()  # a clone's tag places both its builds on one word
    for env in ctx.environments:
        for req in builds(env):
            if req.kind not in (Kind.INSTALL, Kind.OVERRIDE) or _prebuilt(ctx, req, env):
                continue
            found = (
                _command(ctx, env, req)
                if req.options is not None and req.options.installer
                else _project(ctx, env, req)
            )
            if found is not None and req.name == FA3:
                found = hopper(found)
            if found is not None and (found.location, found.package) not in seen:
                seen.add((found.location, found.package))
                yield found


def _prebuilt(ctx: Context, req: Requirement, env: Environment) -> bool:
    """A wheel file or URL builds nothing, nor does a pinned local build, nor a requirement its
    environment's sources serve a wheel (``WheelSources``, made once per environment)."""
    if wheel(req):
        return True
    pinned = toolchain.exact(req)
    if pinned is not None and pinned.local:
        # a local build (==2.8.3+cu.13.0.torch.2.11): PyPI refuses local versions (warehouse's upload
        # check: "Can't use PEP 440 local versions."), and the wheel indexes and --find-links folders
        # that carry them carry wheels
        return True
    found = _SOURCES.of(ctx)
    if env not in found:
        found[env] = WheelSources([r for r in env.of(FLASH_ATTN) if r.kind is Kind.SOURCE])
    return found[env].serve(req)


_SOURCES: Memo[Environment, WheelSources] = Memo()


def _container_keeps(env: Environment, req: Requirement) -> bool:
    """An install any flash-attn satisfies (no version, no -U), on an NGC PyTorch image that ships one."""
    if not keeps_any(env, req) or not env.images:
        return False
    from fa_lint.kb import ngc

    return all(ngc.ships_flash_attn(i.reference) for i in env.images)


def _command(ctx: Context, env: Environment, req: Requirement) -> Finding | None:
    options = req.options
    assert options is not None
    if options.installer == "conda" or ctx.satisfied_by(req) is not None:
        return None  # conda installs a build; a satisfied install builds nothing
    if _container_keeps(env, req):
        return None  # pip keeps the NGC container's own flash-attn: nothing is built (FAL023 says so)
    direct = options.command is None or options.command.path == req.location.path
    where = req.location if direct else options.command
    assert where is not None
    env = ctx.building(env, req)  # a wheel another stage built: what that stage had installed counts
    stage = stage_of(ctx, env)
    step = req.build_step  # where it is built: a 'pip wheel' before the install that takes it
    if options.build in ("no-isolation", "legacy"):
        return _unisolated(env, req, stage, step, where)
    certain, why = _isolated(options.installer, options.build, env, stage, step)
    flag = {"pdm": "--no-isolation", "build": "--no-isolation"}.get(options.installer, "--no-build-isolation")
    if options.installer == "poetry":
        certain, why = True, "Poetry builds every sdist in isolation and has no option to turn it off"
        flag = ""
    what = f"{'is' if certain else 'may be'} built in isolation, where torch is missing"
    told: tuple[str, ...] = (NO_TORCH, why)
    if (
        not certain
        and torchless(env)
        and not stage.torch_before(step, False)
        and not stage.opaque_before(step)
    ):
        # isolated or not, the build cannot see torch: none is there before this command
        certain, what, told = True, "is built before any torch is installed", (NO_TORCH, NONE_BEFORE)
    action = f"add {flag} after installing torch" if flag else "install it with pip --no-build-isolation"
    fix = f"install torch first, then flash-attn with {flag or 'pip install --no-build-isolation'}"
    if req.scope == CONDA_PIP:
        action, fix, told = conda_pip_step(told, stage.torch_before(step, False))
    headline = f"flash-attn {what}; {action}"
    return BUILD_ISOLATION.finding(
        where,
        headline,
        severity=Severity.ERROR if certain else Severity.WARNING,
        package=FLASH_ATTN,
        requirement=req.raw,
        environment=env.name,
        notes=told,
        help=fix,
    )


def _unisolated(
    env: Environment, req: Requirement, stage: Stage, step: int, where: Location
) -> Finding | None:
    """A build without isolation (or a legacy one): torch must be installed before it."""
    if stage.torch_before(step, any(i.has_torch for i in env.images)):
        return None
    if stage.opaque_before(step):
        return None  # 'pip install -e .' then flash-attn: the project's own torch, most likely
    same = stage.torch_at(step)
    bare = torchless(env)
    if not (bare or stage.torch_gone_before(step) or stage.torch_named_at_or_after(step)):
        # a machine fa-lint cannot see (a script's, an image it does not know): --no-build-isolation
        # says its author finds torch there, and nothing here says otherwise (no torchless image, no
        # uninstall, no torch installed by name only then or later). Unknown is not none.
        return None
    notes = [NO_TORCH]
    if same:
        notes.append("pip reads flash-attn's setup.py before it installs the torch of the same command")
    if not bare:
        notes.append("unless the machine or base image already has torch")
    return BUILD_ISOLATION.finding(
        where,
        "flash-attn is built without isolation, but no torch is installed before it; install torch first",
        severity=Severity.ERROR if bare else Severity.WARNING,
        package=FLASH_ATTN,
        requirement=req.raw,
        environment=env.name,
        notes=tuple(notes),
        help="install torch (pip install torch) in a command before the one that builds flash-attn",
    )


def _isolated(installer: str, build: str, env: Environment, stage: Stage, step: int) -> tuple[bool, str]:
    """Whether the build is certainly isolated, and why (or why it depends on the pip version)."""
    if installer == "uv":
        return True, "uv builds every sdist in isolation unless told --no-build-isolation"
    if installer == "pdm":
        return True, "PDM builds every sdist in isolation unless told --no-isolation"
    if installer == "build":
        return True, "python -m build builds in isolation unless told --no-isolation (-n)"
    if build == "pep517":
        return True, "--use-pep517 builds in isolation"
    pip = stage.pip_before(step)
    if pip is not None and _at_least(pip, PIP_253):
        return True, f"'{pip.raw}' ({pip.location}) installs pip >= 25.3, which always isolates"
    new = [i for i in env.images if i.python and Version(i.python) >= Version("3.12")]
    if new and not (stage.setuptools is not None and stage.setuptools < step):
        image = new[0]
        return True, (
            f"{image.reference} (Python {image.python}) has no setuptools, so every pip isolates the build"
        )
    return False, PIP_RULE


def _at_least(req: Requirement, version: Version) -> bool:
    """Every pip this requirement can install is at least ``version`` (an upgrade gets the newest)."""
    if not str(req.specifier) and req.version is None:
        return req.upgrade  # 'pip install -U pip': the newest pip, past 25.3 since October 2025
    return req.version_range.intersection(SpecifierSet(f"<{version}").to_range()).is_empty


def _project(ctx: Context, env: Environment, req: Requirement) -> Finding | None:
    """A project's own manifest, as its installer installs it (``_projects``)."""
    from fa_lint.rules import _projects  # for a manifest entry only: its knowledge base loads then

    verdict = _projects.judge(ctx, env, req)
    if verdict is None:
        return None
    return BUILD_ISOLATION.finding(
        req.location,
        verdict.headline,
        severity=verdict.severity,
        package=FLASH_ATTN,
        requirement=req.raw,
        environment=env.name,
        notes=verdict.notes,
        help=verdict.help,
    )
