"""How each flash-attn install reaches its machine: which release, by which path, built or fetched.

Shared by the machine rules (FAL013-FAL015) and FAL011's notes. The path decides which facts apply:

- ``wheel``: a wheel file or URL; nothing builds, the wheel's own archs and build OS count;
- ``index``: pip or uv installs the sdist from an index, so flash-attn's setup.py runs: it needs a CUDA
  toolkit as it is read (torch's ``CUDAExtension`` asks for CUDA_HOME), then fetches the release
  wheel built for the environment's torch or, without one (or with ``FLASH_ATTENTION_FORCE_BUILD``),
  compiles;
- ``build``: a clone, a git URL or a local source tree: setup.py compiles;
- ``conda``: a conda package, built by its channel: only the release's run-time checks are known.
"""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from fa_lint._records import NamedTuple
from fa_lint.kb import Release
from fa_lint.kb import builds as _builds
from fa_lint.kb import images as _images
from fa_lint.kb.builds import BuildFacts
from fa_lint.machine.environments import Environment
from fa_lint.machine.target import Target
from fa_lint.machine.toolchain import Toolchain, exact
from fa_lint.model import FA3, FA4, FLASH_ATTN, Kind, Requirement
from fa_lint.rules._base import About, Context, once
from fa_lint.rules._uv import skip_setting, uv_instead
from fa_lint.rules._wheels import fits

# the release workflow's uploads: the wheels the release facts (build OS, archs) describe; other hosts'
# wheels of the same name (mjun0812/flash-attention-prebuild-wheels, a company mirror) are built elsewhere
RELEASES = "https://github.com/Dao-AILab/flash-attention/releases/download/"
FAMILY = (FLASH_ATTN, FA3, FA4)
_KINDS = (Kind.INSTALL, Kind.OVERRIDE, Kind.LOCK)


class Install(NamedTuple):
    req: Requirement
    env: Environment
    release: Release | None  # the flash-attn release a resolver picks (None: FA3/4, or unknown)
    version: Version | None  # FA3/FA4: the version where one is fixed
    facts: BuildFacts | None  # what that release's setup.py and flash_api.cpp say
    path: str  # "wheel", "index", "build", "conda"
    compiles: bool | None  # setup.py compiles (no prebuilt wheel fits, forced, a source build)
    target: Target
    tools: Toolchain

    @property
    def step(self) -> int:
        return self.req.build_step

    def variable(self, name: str) -> str | None:
        known = self.target.variable(name, self.step)
        return known.value if known is not None else None

    @property
    def fields(self) -> About:
        """A finding's package, requirement and environment, for this install."""
        return {"package": self.req.name, "requirement": self.req.raw, "environment": self.env.name}

    @property
    def official(self) -> bool:
        """What installs is a wheel the release workflow built: setup.py's download, or its URL."""
        return self.path == "index" or (self.path == "wheel" and (self.req.url or "").startswith(RELEASES))

    @property
    def forced(self) -> bool:
        return self.variable("FLASH_ATTENTION_FORCE_BUILD") == "TRUE"

    @property
    def kernelless(self) -> bool:
        """setup.py runs with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE and no prebuilt wheel fits (or the
        download is forced off): what installs has no CUDA extension, so nothing compiles and no kernel
        is there to judge; ``import flash_attn`` fails (FAL011 says so)."""
        if self.req.name != FLASH_ATTN or self.path != "index" or self.release is None:
            return False
        if skip_setting(self.target, self.req) is None:
            return False
        return self.forced or fits(self.release, self.tools) is False


@once
def installs(ctx: Context) -> tuple[Install, ...]:
    """Every install of flash-attn, flash-attn-3 or flash-attn-4 the environments make, once each."""
    return tuple(_all(ctx))


def _all(ctx: Context) -> Iterator[Install]:
    seen: set[tuple[object, str]] = set()
    for env in ctx.environments:
        reqs = [r for name in FAMILY for r in (*env.of(name), *env.of(name, locked=True))]
        if not reqs:
            continue
        # a source table (pixi's git entry, uv's [tool.uv.sources]) is the install where nothing else asks
        asked = {r.name for r in reqs if r.kind in (Kind.INSTALL, Kind.OVERRIDE)}
        for req in reqs:
            if req.unresolved or (req.location, env.name) in seen:
                continue
            if uv_instead(ctx, env, req) is not None:
                continue  # `uv sync` installs a group's source: the machine gets that, not this entry
            if req.kind not in _KINDS and not (req.kind is Kind.SOURCE and req.name not in asked):
                continue
            seen.add((req.location, env.name))
            built = ctx.building(env, req)  # a wheel another stage built: its machine is the builder's
            yield _install(ctx, env, req, ctx.target(built), ctx.toolchain(built))


def _install(ctx: Context, env: Environment, req: Requirement, target: Target, tools: Toolchain) -> Install:
    path = _path(req)
    version = exact(req)
    release = None
    if req.name == FLASH_ATTN:
        if version is not None:
            release = ctx.kb.at(version)
        else:
            admitted = ctx.assessment(req).admitted
            release = admitted[-1] if admitted else None
    facts = _builds.load().get(release.version) if release is not None else None
    inst = Install(req, env, release, version, facts, path, None, target, tools)
    return inst._replace(compiles=_compiles(inst))


def _path(req: Requirement) -> str:
    url = (req.url or "").split("#", 1)[0].split("?", 1)[0]
    if url.endswith(".whl"):
        return "wheel"
    if req.tool == "conda" and req.scope != "pip":
        return "conda"
    if req.kind is Kind.LOCK and not req.build and not url.startswith("git+"):
        # a locked sdist from an index (its URL, or the lock's tool builds what it pins) runs setup.py
        sdist = url.endswith((".tar.gz", ".zip")) or req.tool in ("uv", "pdm", "poetry", "pipenv")
        return "index" if sdist else "wheel"
    if req.build or url or req.kind is Kind.SOURCE:
        return "build"
    return "index"


def _compiles(inst: Install) -> bool | None:
    if inst.path == "build":
        return True
    if inst.path != "index" or inst.req.name != FLASH_ATTN:
        return False if inst.path in ("wheel", "conda") else None
    if inst.kernelless:
        return False  # no extension to compile
    if inst.forced:
        return True
    if inst.release is None:
        return None
    found = fits(inst.release, inst.tools)
    return None if found is None else not found


def suits(release: Release, target: Target, tools: Toolchain) -> bool:
    """Whether a release's prebuilt wheel would import and run on the target: built on a glibc the machine
    has, and with a kernel for every GPU the files certainly target. What is unknown does not count
    against it. (For the releases fa-lint suggests.)"""
    facts = _builds.load().get(release.version)
    if facts is None:
        return True
    machine = target.glibc
    if machine is not None and facts.wheels is not None and len(facts.wheels.runners) == 1:
        host = _images.runner(facts.wheels.runners[0])
        if (
            host is not None
            and host.glibc is not None
            and (machine.value == "musl" or Version(machine.value) < Version(host.glibc))
        ):
            return False
    cuda = tools.cuda.value if tools.cuda else ""
    major = int(cuda.split(".")[0]) if cuda[:1].isdigit() else None
    for t in target.gpus:
        if t.possible:
            continue
        if not facts.runtime.accepts(t.gpu.cc):
            return False
        if facts.wheels is not None and major is not None:
            sms = {sm for b in facts.wheels.for_cuda(major) for sm in b.sm}
            if sms and not _builds.runs(sms, t.gpu.cc):
                return False
    return True


def machine_notes(env: Environment, req: Requirement, release: Release, target: Target) -> list[str]:
    """FAL011's notes from the machine: whether the compile it predicts can run there at all, and how
    many jobs it runs."""
    out = []
    step = req.build_step
    nvcc = target.nvcc(step)
    if nvcc is not None and nvcc.value == "none":
        out.append(f"this stage has no nvcc ({nvcc.where}): the compile cannot run (FAL015)")
    facts = _builds.load().get(release.version)
    if facts is not None and not facts.max_jobs_capped and target.variable("MAX_JOBS", step) is None:
        out.append(
            f"no MAX_JOBS: {release}'s setup.py leaves the job count to ninja, one compile per core and "
            "more at several GB each (2.5.4 and later cap it by free memory)"
        )
    return out
