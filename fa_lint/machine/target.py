"""The machine an environment's install lands on: its GPUs, platform, C library and CUDA toolkit, and
the build variables in force at each install command.

Read from what the files say (``Setting`` and ``Image`` records) and the knowledge bases (images.json
for a base image's distribution, glibc and nvcc; gpus.json for a GPU's compute capability):

- GPUs: a workflow job's ``runs-on`` labels, SkyPilot ``accelerators``, Kubernetes GPU node labels and
  cloud instance types; a file that installs nothing (a Kubernetes manifest) speaks for the whole
  repository, as one possibility. An arch list (``TORCH_CUDA_ARCH_LIST``) is a statement of the GPUs
  a build is for, kept apart (``archs``).
- platform: ``runs-on`` labels (windows-*, macos-*), pixi/conda-lock ``platforms``, uv
  ``environments``/``required-environments``.
- C library and nvcc: the stage's base image (through ``FROM other-stage``), a job's container or
  runner label; an nvcc installed later in the stage (apt, conda, an action) counts from that step.

Each fact says where it was read (``Known``); what no file says is unknown, and no rule guesses it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

from fa_lint._lazy import Lazy
from fa_lint._records import NamedTuple
from fa_lint.kb import gpus as _gpus
from fa_lint.kb import images as _images
from fa_lint.kb.gpus import Gpu
from fa_lint.kb.images import Host
from fa_lint.machine.cpu import Cpu, cpus
from fa_lint.machine.driver import Driver, drivers
from fa_lint.machine.environments import Environment, split
from fa_lint.machine.toolchain import Known
from fa_lint.model import CONDA_NVCC, Image, Requirement, Setting

# conda packages that put an nvcc in the environment (conda-forge and the nvidia channel)
PLATFORMS = ("windows", "macos", "linux")


class GpuTarget(NamedTuple):
    gpu: Gpu
    where: str  # "ci.yml:12:15 (runs-on: a100)"
    possible: bool  # one of several the files allow
    remote: bool = False  # said by another file (a Kubernetes manifest): the install may not run there


class UnknownGpu(NamedTuple):
    """A GPU a file names that gpus.json cannot map to one compute capability (a name it lacks, or one
    several GPUs share): the machine rules say they did not judge it, never nothing."""

    value: str  # "RTX2070"
    where: str
    remote: bool = False


class Platform(NamedTuple):
    name: str  # "windows", "macos", "linux"
    where: str
    possible: bool  # only some runs land there (a matrix does land on each; a pixi platform may)
    certain_run: bool  # the install is run there (a workflow job), not only declared (pixi, uv)
    scope: str = ""  # a pixi feature's own platforms apply to its requirements only
    # a machine no file describes (a Windows script runs on its user's own machine): whether a CUDA
    # toolkit is there is unknown, where a hosted runner is known to have none
    local: bool = False


class Target(NamedTuple):
    """One environment's machine."""

    gpus: tuple[GpuTarget, ...] = ()
    platforms: tuple[Platform, ...] = ()
    host: Host | None = None  # the base image's or runner's facts
    host_where: str = ""  # the FROM line or runs-on label they come from
    settings: tuple[Setting, ...] = ()  # env and toolkit settings of the stage, its parents' first
    conda_nvcc: tuple[Requirement, ...] = ()  # conda installs of an nvcc package
    # whether a GPU is visible where the install runs (torch's cpp_extension compiles for the visible
    # GPUs when no arch list says): False in a docker build, a Modal image build, a GitHub-hosted
    # runner; True on a machine the files name a GPU for; None where nothing says
    build_gpu: bool | None = None
    build_where: str = ""
    unknown_gpus: tuple[UnknownGpu, ...] = ()  # GPU names no gpus.json row maps (kind "gpu" settings)
    cpus: tuple[Cpu, ...] = ()  # what the files say of the host CPU (aarch64), from machine/cpu.py
    drivers: tuple[Driver, ...] = ()  # the driver CUDA a file declares (pixi), from machine/driver.py

    @property
    def glibc(self) -> Known | None:
        if self.host is None or self.host.libc is None:
            return None
        value = self.host.glibc if self.host.libc == "glibc" else self.host.libc
        what = self.host.source if self.host.floating else self.host.distro  # a moving tag says so
        return Known(value, f"{self.host_where}: {what}") if value else None

    def variable(self, name: str, step: int) -> Known | None:
        """The value of a build variable for the install command ``step`` (the last one set before it);
        "" when it is set to a value fa-lint cannot see (``ARG MAX_JOBS``)."""
        found = None
        for s in self.settings:
            if s.kind == "env" and s.name == name and s.after < step and (s.until is None or step <= s.until):
                found = s
        return Known(found.value, str(found.location)) if found is not None else None

    @property
    def memory(self) -> Known | None:
        """The memory, in GB, the files give the machine an install runs on (a Slurm job's ``--mem``, a
        SkyPilot task's exact ``memory``): the last one said."""
        found = [s for s in self.settings if s.kind == "memory" and not s.possible]
        return Known(found[-1].value, f"{found[-1].location} ({found[-1].name})") if found else None

    def nvcc(self, step: int) -> Known | None:
        """The nvcc the install command ``step`` can use: its version ("12.1"), "" (one of unknown
        version), "none" (certainly none), or None (unknown)."""
        installed = [s for s in self.settings if s.kind == "toolkit" and s.after < step]
        conda = [r for r in self.conda_nvcc if r.step < step or not r.step]
        if installed:
            last = installed[-1]
            return Known(last.value, f"{last.location} ({last.name})")
        if conda:
            return Known(_conda_version(conda[-1]), f"{conda[-1].location} ({conda[-1].raw})")
        if self.host is not None and self.host.nvcc is not None:
            where = f"{self.host_where}: {self.host.source}"
            if not self.host.nvcc:
                return Known("none", where)
            return Known(self.host.cuda or "", where)
        return None


def _conda_version(req: Requirement) -> str:
    m = re.match(r"^==?(\d+\.\d+)", req.constraint_text)
    return m.group(1) if m else ""


class Machines:
    """Targets for a run's environments, from every Setting and Image the files hold."""

    def __init__(self, settings: Iterable[Setting | Image], environments: Iterable[Environment]) -> None:
        self.by_scope: dict[tuple[str, str], list[Setting]] = defaultdict(list)
        self.repository: list[Setting] = []  # settings of files that install nothing
        self.images: dict[tuple[str, str], Image] = {}  # every stage's, one that installs nothing too
        paths = {split(env.name)[0] for env in environments}
        for s in settings:
            path = s.location.path
            if isinstance(s, Image):
                self.images.setdefault((path, s.scope), s)
                continue
            if path in paths:
                self.by_scope[path, s.scope].append(s)
            elif s.kind in ("gpu", "instance", "runner"):
                self.repository.append(s)
        self._cache: dict[str, Target] = {}

    def of(self, env: Environment) -> Target:
        found = self._cache.get(env.name)
        if found is None:
            found = self._cache[env.name] = self._target(env)
        return found

    def _target(self, env: Environment) -> Target:
        path, scope = split(env.name)
        chain = self._stages(path, scope)
        own = [s for st in chain for s in self.by_scope.get((path, st), [])]
        own += self.by_scope.get((path, ""), []) if scope else []
        settings = tuple(s for s in own if s.kind in ("env", "toolkit", "memory"))
        # platforms a manifest declares hold for the whole file, a pixi feature's for its own scope
        own += [
            s
            for (p, sc), found in self.by_scope.items()
            if p == path and sc not in chain and sc
            for s in found
            if s.kind == "platform"
        ]
        host, where = self._host(path, chain, own)
        gpus = tuple(_gpu_targets(own)) or tuple(
            t._replace(possible=True, remote=True) for t in _gpu_targets(self.repository)
        )
        unknown = tuple(_unknown_gpus(own)) or tuple(
            u._replace(remote=True) for u in _unknown_gpus(self.repository)
        )
        conda = tuple(r for r in env.members if r.name in CONDA_NVCC and r.tool == "conda")
        build_gpu, build_where = _build_gpu(scope, own, gpus)
        platforms = tuple(_platforms(own))
        cpu = cpus(own, chain, ((t.gpu, t.where, t.possible or t.remote) for t in gpus))
        declared = drivers(own)
        return Target(
            gpus, platforms, host, where, settings, conda, build_gpu, build_where, unknown, cpu, declared
        )

    def _stages(self, path: str, scope: str) -> list[str]:
        """A stage and the stages it is built ``FROM``, oldest first."""
        chain = [scope]
        while len(chain) < 32:
            img = self.images.get((path, chain[0]))
            parent = f"stage:{img.reference}" if img is not None else None
            if parent is None or parent in chain or (path, parent) not in self.images:
                break
            chain.insert(0, parent)
        return chain

    def _host(self, path: str, chain: list[str], own: list[Setting]) -> tuple[Host | None, str]:
        img = self.images.get((path, chain[0]))
        if img is not None:
            host = _images.image(img.reference)
            ref = img.reference
            base = f"modal.Image.{ref[6:]}()" if ref.startswith("modal:") else f"{img.said} {ref}"
            return host, f"{base} ({img.location})" if host else ""
        for s in own:
            # a workflow's ubuntu-22.04 label is GitHub's image; a GitLab tag is the runner owner's word
            if s.kind == "runner" and s.name == "runs-on" and not s.possible:
                host = _images.runner(s.value)
                if host is not None:
                    return host, f"runs-on: {s.value} ({s.location})"
        return None, ""


# GitHub's standard hosted runner images (actions/runner-images): virtual machines with no GPU; a
# GPU runner is a larger runner with a label its owner chose, which these do not match
_HOSTED = Lazy(r"^(?:ubuntu|windows|macos)-(?:latest|\d[\d.]*)(?:-(?:arm|arm64|large|xlarge))?$")


def _build_gpu(scope: str, own: list[Setting], gpus: tuple[GpuTarget, ...]) -> tuple[bool | None, str]:
    if scope.startswith("stage:"):
        return False, "a docker build runs RUN steps with no GPU (GPUs are given to `docker run --gpus`)"
    if scope.startswith("image:"):
        if any(s.kind == "builder" for s in own):
            return None, ""  # a step that asks for a GPU (gpu=) builds on one: which, the step says
        return False, "Modal builds an image's steps with no GPU unless the step asks for one (gpu=)"
    labels = [s for s in own if s.kind == "runner" and s.name == "runs-on"]
    if labels and all(_HOSTED().match(s.value) for s in labels):
        return False, f"a GitHub-hosted runner has no GPU ({labels[0].location}: {labels[0].value})"
    mine = [g for g in gpus if not g.remote and not g.possible]
    if mine:
        return True, mine[0].where
    return None, ""


def _gpu_targets(settings: Iterable[Setting]) -> Iterable[GpuTarget]:
    for s in settings:
        if s.kind == "gpu":
            gpu = _gpus.gpu_named(s.value)
        elif s.kind == "runner":
            gpu = _gpus.named(s.value) or _gpus.runner_tag(s.value)
        elif s.kind == "instance":
            gpu = _gpus.instance(s.value)
        else:
            continue
        if gpu is not None:
            yield GpuTarget(gpu, f"{s.location} ({s.name}: {s.value})", s.possible)


def _unknown_gpus(settings: Iterable[Setting]) -> Iterable[UnknownGpu]:
    """GPU names gpus.json does not map. Only settings that certainly name a GPU (SkyPilot accelerators,
    a GPU node label, a Slurm GPU type, Modal's gpu=) or a GPU instance family (AWS p*/g*, Azure's N
    sizes, Google's accelerator-optimized series): a runner label or another instance type need not
    name one at all (``self-hosted``, ``m5.large``)."""
    for s in settings:
        unknown = (s.kind == "gpu" and _gpus.gpu_named(s.value) is None) or (
            s.kind == "instance" and _gpus.instance(s.value) is None and _gpus.gpu_instance(s.value)
        )
        if unknown:
            yield UnknownGpu(s.value, f"{s.location} ({s.name}: {s.value})")


_WINDOWS = Lazy(r"^(?:windows(?:-.*)?|win-?\d*|win32|win-64|win-arm64)$", re.I)
_MACOS = Lazy(r"^(?:macos(?:-.*)?|osx-.*|darwin|macOS)$", re.I)


def platform_of(value: str) -> str | None:
    """windows, macos or linux, for a runner label or a pixi/conda platform; None for others."""
    if _WINDOWS().match(value):
        return "windows"
    if _MACOS().match(value):
        return "macos"
    if re.match(r"^(?:ubuntu(?:-.*)?|linux(?:-.*)?)$", value, re.I):
        return "linux"
    return None


def _tag_platform(tag: str) -> str | None:
    """A GitLab runner tag's platform: one of its words (``saas-windows-medium-amd64``, ``windows``,
    ``saas-macos-medium-m1``, ``shared-macos``); tags are the runner owner's names, so only these."""
    words = set(re.split(r"[-_.\s]+", tag.lower()))
    if words & {"windows", "win"}:
        return "windows"
    if words & {"macos", "osx", "darwin"}:
        return "macos"
    return "linux" if "linux" in words else None


def _platforms(settings: Iterable[Setting]) -> Iterable[Platform]:
    for s in settings:
        if s.kind == "runner":
            name = platform_of(s.value) if s.name == "runs-on" else _tag_platform(s.value)
            if name:
                yield Platform(name, f"{s.location} ({s.name}: {s.value})", s.possible, True)
        elif s.kind == "platform" and s.name.endswith(" script"):  # a .bat or .ps1: run on Windows
            yield Platform(s.value, f"{s.location} ({s.name})", False, True, local=True)
        elif s.kind == "platform":
            names = _marker_platforms(s.value) if s.name.startswith("uv ") else [platform_of(s.value)]
            for name in names:
                if name:
                    yield Platform(name, f"{s.location} ({s.name}: {s.value})", True, False, s.scope)


_OS_MARKERS = {
    "windows": {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt"},
    "macos": {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix"},
    "linux": {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"},
}


def _marker_platforms(text: str) -> list[str]:
    """The platforms a uv environment marker admits; none when it does not speak of the OS."""
    if not re.search(r"sys_platform|platform_system|os_name", text):
        return []
    from packaging.markers import InvalidMarker, Marker  # only for a uv environments list

    try:
        marker = Marker(text)
        return [name for name, env in _OS_MARKERS.items() if marker.evaluate(dict(env))]
    except (InvalidMarker, TypeError, ValueError):
        return []


def archs(value: str) -> tuple[tuple[int, int], ...]:
    """The capabilities a ``TORCH_CUDA_ARCH_LIST`` names ("7.5 8.0;8.6+PTX" -> (7, 5), (8, 0), (8, 6));
    names torch expands (Ampere, Hopper) are not read."""
    out = []
    for item in re.split(r"[;\s,]+", value.strip()):
        m = re.fullmatch(r"(\d+)\.(\d+)a?(?:\+PTX)?", item)
        if m:
            out.append((int(m.group(1)), int(m.group(2))))
    return tuple(dict.fromkeys(out))


def version(text: str) -> Version | None:
    try:
        return Version(text) if text and text != "none" else None
    except InvalidVersion:
        return None
