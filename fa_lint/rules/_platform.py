"""platform.py's checks, imported when the files say something about the machine (see ``platform.py``)."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from fa_lint.kb import Release
from fa_lint.kb import builds as _builds
from fa_lint.kb import images as _images
from fa_lint.machine.target import Platform
from fa_lint.model import FA3, FLASH_ATTN, Finding, Kind, Setting, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._installs import Install, installs, suits
from fa_lint.rules._wheels import fits
from fa_lint.syntax import markers
from fa_lint.syntax.pep508 import file_name

_ENVIRONMENTS = {
    "windows": {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt"},
    "macos": {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix"},
}


def check(ctx: Context, rule: Rule) -> Iterator[Finding]:
    """FAL014's findings; ``rule`` is FAL014 itself, passed in so this module never imports its family's."""
    for inst in installs(ctx):
        # CUDA extensions (flash-attn-4 is Python, on the CuTe DSL); a lock entry is for one platform
        if inst.req.name in (FLASH_ATTN, FA3) and inst.req.kind is not Kind.LOCK:
            yield from _platforms(rule, inst)
        if inst.req.name == FLASH_ATTN:
            found = _glibc(rule, ctx, inst)
            if found is not None:
                yield found
    yield from _universal(rule, ctx)


# --- a uv project's universal lock ----------------------------------------------------------------


def _universal(rule: Rule, ctx: Context) -> Iterator[Finding]:  # noqa: C901 - complexity 12, to split or justify (issue 45)
    """A uv project's main flash-attn dependency that is a Linux-only wheel URL with no marker, where the
    project's own markers name Windows or macOS and no ``[tool.uv] environments`` limits it to Linux:
    uv locks for every platform, and ``uv sync`` there fails ("can't be installed because it doesn't
    have a source distribution or wheel for the current platform")."""
    named: dict[str, list[Setting]] = {}
    limits: dict[str, list[Setting]] = {}  # [tool.uv] environments, required-environments
    for s in ctx.settings:
        if isinstance(s, Setting) and s.kind == "marker" and s.name == "uv":
            named.setdefault(s.location.path, []).append(s)
        elif isinstance(s, Setting) and s.kind == "platform" and s.name.startswith("uv "):
            limits.setdefault(s.location.path, []).append(s)
    for req in ctx.requirements:
        if req.name != FLASH_ATTN or req.kind is not Kind.INSTALL or req.scope != "project":
            continue
        if req.url is None or req.location.path not in named or not _linux_wheel(file_name(req.url)):
            continue
        limited = limits.get(req.location.path, [])
        elsewhere: list[tuple[str, Setting]] = []
        for label, system in (("Windows", "windows"), ("macOS", "macos")):
            if not markers.holds_on(req.marker, system):
                continue  # the requirement's own marker leaves that system out
            if limited and not any(markers.holds_on(p.value, system) for p in limited):
                continue  # uv resolves for the environments listed only
            marker = next((m for m in named[req.location.path] if _only_on(m.value, system)), None)
            if marker is not None:
                elsewhere.append((label, marker))
        if not elsewhere:
            continue
        labels = " and ".join(label for label, _ in elsewhere)
        yield rule.finding(
            req.location,
            f"uv locks for {labels} too, where this Linux-only flash-attn wheel cannot install; "
            "mark it `; sys_platform == 'linux'`",
            severity=Severity.WARNING,
            package=FLASH_ATTN,
            requirement=req.raw,
            notes=(
                *(f"{label} is a target of this project: its marker {s.value!r}" for label, s in elsewhere),
                "without `[tool.uv] environments`, uv resolves for every platform, and `uv sync` on "
                f"{labels} fails: the wheel is tagged {_tag(file_name(req.url))}",
            ),
            help="add `; sys_platform == 'linux'` to the requirement, or set [tool.uv] environments to Linux",
        )


def _linux_wheel(filename: str) -> bool:
    return filename.endswith(".whl") and ("-linux_" in filename or "-manylinux" in filename)


def _tag(filename: str) -> str:
    return filename.removesuffix(".whl").rsplit("-", 1)[-1]


def _only_on(marker: str, system: str) -> bool:
    """A marker that holds on ``system`` and not on Linux: one that names that system."""
    return markers.holds_on(marker, system) and not markers.holds_on(marker, "linux")


# --- Windows and macOS -----------------------------------------------------------------------------


def _platforms(rule: Rule, inst: Install) -> Iterator[Finding]:
    """One finding for the Windows and macOS targets the install lands on, the certain runs first.

    macOS has no CUDA: the install cannot succeed. Windows builds where a CUDA toolkit and MSVC are
    installed (setup.py has Windows flags), after a long compile: certain failure only on a job that
    installs no toolkit (a Windows script's own machine may have one). A wheel installs only on the
    OS its platform tag names: that is judged against every target instead (``_wheel_elsewhere``)."""
    platforms = _targets(inst)
    tagged = wheel_os(inst.req.url) if inst.path == "wheel" and inst.req.url else None
    if tagged is not None:
        yield from _wheel_elsewhere(rule, inst, tagged, platforms)
        return
    found = []
    for name in ("windows", "macos"):
        there = [p for p in platforms if p.name == name]
        if there and not _excluded(inst.req.marker, name):
            ran = [p for p in there if p.certain_run]
            found.append(((ran or there)[0], bool(ran)))
    if not found:
        return
    toolkit = inst.target.nvcc(inst.step)
    unknown = toolkit is None or toolkit.value == "none"
    fails = [ran and (p.name == "macos" or (unknown and not p.local)) for p, ran in found]
    labels = " and ".join(_LABEL[p.name] for p, _ in found)
    notes = [f"{_LABEL[p.name]} from {p.where}" + ("" if ran else " (declared, not run)") for p, ran in found]
    notes.append("flash-attn's release wheels are Linux-only (linux_x86_64)")
    if any(p.name == "macos" for p, _ in found):
        notes.append("macOS has no CUDA: setup.py cannot build there")
    if any(p.name == "windows" for p, _ in found):
        notes.append("on Windows setup.py builds only with a CUDA toolkit and MSVC, for an hour or more")
    short, help_ = _advice(inst, [p for p, _ in found])
    yield rule.finding(
        inst.req.location,
        f"{inst.req.name} is installed on {labels}, which it has no wheels for; {short}",
        severity=Severity.ERROR if any(fails) and not inst.req.possible else Severity.WARNING,
        **inst.fields,
        notes=tuple(notes),
        help=help_,
    )


def _targets(inst: Install) -> list[Platform]:
    platforms = [p for p in inst.target.platforms if p.scope in ("", inst.req.scope)]
    if any(p.scope and p.scope == inst.req.scope for p in platforms):  # a pixi feature's own list
        platforms = [p for p in platforms if p.scope == inst.req.scope or p.certain_run]
    if inst.req.source == "dockerfile" and not any(p.name == "linux" for p in platforms):
        # an image's RUN runs on Linux (fa-lint reads Linux images only)
        platforms.append(Platform("linux", f"{inst.req.location.path} (a Docker image)", False, True))
    return platforms


# a wheel's platform tag (PEP 425, the file name's last part): the OS pip installs it on
_WHEEL_OS = (
    ("linux", ("linux_", "manylinux", "musllinux")),
    ("windows", ("win_", "win32")),
    ("macos", ("macosx",)),
)
_LABEL_OS = {"linux": "Linux", "windows": "Windows", "macos": "macOS"}


def wheel_os(url: str) -> str | None:
    """The OS a wheel URL's platform tag names (``linux_x86_64``: "linux", ``win_amd64``: "windows");
    None for a pure wheel (``any``) or a name that is no wheel's."""
    name = file_name(url)
    if not name.endswith(".whl"):
        return None
    tag = name.removesuffix(".whl").rsplit("-", 1)[-1]
    return next((os for os, starts in _WHEEL_OS if tag.startswith(starts)), None)


def _wheel_elsewhere(rule: Rule, inst: Install, tagged: str, platforms: list[Platform]) -> Iterator[Finding]:
    """A wheel installed on another OS than its platform tag's: pip refuses it ("... is not a
    supported wheel on this platform"), before anything is built."""
    marker = inst.req.marker
    other = [p for p in platforms if p.name not in (tagged, "") and not _excluded(marker, p.name)]
    other = [p for p in other if p.name in _LABEL_OS]
    if not other:
        return
    other.sort(key=lambda p: (not p.certain_run, p.possible))
    first = other[0]
    tag = _tag(file_name(inst.req.url or ""))
    certain = first.certain_run and not first.possible and not inst.req.possible
    yield rule.finding(
        inst.req.location,
        f"this wheel is for {_LABEL_OS[tagged]} ({tag}), but it is installed on {_LABEL_OS[first.name]}: "
        "pip refuses it",
        severity=Severity.ERROR if certain else Severity.WARNING,
        **inst.fields,
        notes=(
            f"{_LABEL_OS[first.name]} from {first.where}"
            + ("" if first.certain_run else " (declared, not run)"),
            *(f"also {_LABEL_OS[p.name]} from {p.where}" for p in other[1:]),
            f"pip installs a wheel only where its platform tag ({tag}) fits: elsewhere it stops with "
            "'is not a supported wheel on this platform'",
        ),
        help=f"install a {_LABEL_OS[first.name]} build of flash-attn there (flash-attn's own releases "
        "publish Linux wheels only), or keep this install to " + _LABEL_OS[tagged],
    )


_LABEL = {"windows": "Windows", "macos": "macOS"}
# formats whose requirement lines take a PEP 508 marker (pip, uv, setuptools, pipenv, tox read them)
_MARKERS = {"requirements", "pyproject", "setup.cfg", "setup.py", "pipfile", "tox"}
_SHELLS = {"shell", "makefile", "justfile", "dockerfile", "cluster", "notebook"}
_WINDOWS_SCRIPTS = {"batch", "powershell"}


def _advice(inst: Install, platforms: list[Platform]) -> tuple[str, str]:
    """How to keep the install off the other platforms, in the terms of the file it is written in: a
    marker where the line is a requirement, a condition where it is a command. On a command line the
    marker must be quoted with the requirement (pip reads ``"flash-attn; sys_platform == 'linux'"`` and
    prints "Ignoring flash-attn: markers ... don't match your environment" elsewhere); appended as
    written, ``; sys_platform == 'linux'`` ends the shell command and runs a command of that name."""
    req = inst.req
    source = req.source
    q = '"' if req.marker and '"' in req.marker else "'"  # packaging writes a marker's quotes as "
    linux = f"sys_platform == {q}linux{q}"
    bare = req.raw.split(";", 1)[0].rstrip()
    marked = f"{bare}; ({req.marker}) and {linux}" if req.marker else f"{bare}; {linux}"
    if source == "pyproject" and req.scope.startswith("tool.poetry"):
        return (
            "give it markers = \"sys_platform == 'linux'\"",
            f'in Poetry: {req.name} = {{ version = "{req.constraint_text}", '
            "markers = \"sys_platform == 'linux'\" }",
        )
    if source in _MARKERS or (source == "conda" and req.scope == "pip"):
        return "add ; sys_platform == 'linux' to the requirement", f"require it on Linux only: {marked}"
    if source == "pixi":
        return (
            "move it under a Linux target",
            f"in pixi: [target.linux-64.pypi-dependencies] {req.name} = ... (or a Linux-only feature)",
        )
    if source == "conda":
        return (
            "keep it out of the other platforms' solve",
            "conda has no markers: list it in an environment locked for linux-64 only (conda-lock)",
        )
    quoted = f'or quote the requirement with a marker: "{marked}"'
    if source == "workflow":
        matrix = any(p.possible for p in platforms)
        job = (
            "exclude the Windows/macOS entries (strategy.matrix.exclude)" if matrix else "use a Linux runner"
        )
        return (
            "run the step only on Linux (if: runner.os == 'Linux')",
            f"give the step `if: runner.os == 'Linux'`, {job}, {quoted}",
        )
    if source == "gitlab-ci":
        return "run this job on a Linux runner", f"give the job a Linux runner's tags, {quoted}"
    if source == "nox":
        return "install it only on Linux", "in the session: if sys.platform == 'linux': session.install(...)"
    if source in _WINDOWS_SCRIPTS:
        return (
            "use a Windows build of it, or run this on Linux (WSL)",
            "flash-attn publishes no Windows wheels: install a community Windows wheel built for this "
            "torch, CUDA and Python, build it with a CUDA toolkit and MSVC, or run the install under WSL",
        )
    if source in _SHELLS:
        return (
            "install it only on Linux (a platform test)",
            f'guard the command with if [ "$(uname -s)" = Linux ]; then ...; fi, {quoted}',
        )
    return "install it only on Linux", f"keep this install to Linux machines, {quoted}"


def _excluded(marker: str | None, platform: str) -> bool:
    """Whether the requirement's marker leaves it out on this platform."""
    if not marker:
        return False
    from packaging.markers import InvalidMarker, Marker  # only for a marker on a non-Linux target

    try:
        return not Marker(marker).evaluate(dict(_ENVIRONMENTS[platform]))
    except (InvalidMarker, KeyError, TypeError, ValueError):
        return True  # a marker fa-lint cannot read: it may leave it out


# --- glibc -----------------------------------------------------------------------------------------


def _runner_glibc(release: Release) -> tuple[Version, str, str] | None:
    facts = _builds.load().get(release.version)
    if facts is None or facts.wheels is None or len(facts.wheels.runners) != 1:
        return None
    runner = facts.wheels.runners[0]
    host = _images.runner(runner)
    if host is None or host.glibc is None:
        return None
    return Version(host.glibc), runner, facts.wheels.evidence.at


def _glibc(rule: Rule, ctx: Context, inst: Install) -> Finding | None:
    release = inst.release
    machine = inst.target.glibc
    if (
        release is None
        or machine is None
        or inst.path not in ("index", "wheel")
        or inst.compiles is not False
    ):
        return None
    built = _runner_glibc(release)
    if built is None:
        return None
    needs, runner, at = built
    if machine.value == "musl":
        return _finding(
            rule, ctx, inst, release, None, f"{machine.where}: musl, not glibc", needs, runner, at, True
        )
    if not inst.official:
        return None  # a wheel built elsewhere: its glibc is not the release workflow's
    have = Version(machine.value)
    if have >= needs:
        return None
    reported = [r for r in _images.glibc_reports() if r["built_on"] == runner]
    certain = any(have < Version(r["missing"]) for r in reported)
    return _finding(rule, ctx, inst, release, have, machine.where, needs, runner, at, certain, reported)


def _finding(
    rule: Rule,
    ctx: Context,
    inst: Install,
    release: Release,
    have: Version | None,
    where: str,
    needs: Version,
    runner: str,
    at: str,
    certain: bool,
    reported: list[dict[str, object]] | None = None,
) -> Finding:
    near = _importable(ctx, inst, have)
    machine = f"glibc {have}" if have is not None else "musl"
    fix = f"use flash-attn=={near}" if near else "build it from source here"
    notes = [
        f"the machine's C library: {machine}, from {where}",
        f"{release}'s wheels were built on {runner} (glibc {needs}; {at}) and are tagged linux_x86_64, so "
        "pip installs them anyway",
    ]
    for r in reported or ():
        notes.append(f"reported: {r['error']} on {r['seen_on']} ({', '.join(map(str, r['sources']))})")  # type: ignore[call-overload]
    if not near:
        notes.append("FLASH_ATTENTION_FORCE_BUILD=TRUE compiles it against this image's glibc (needs nvcc)")
    return rule.finding(
        inst.req.location,
        f"flash-attn {release}'s wheel needs a newer glibc than the machine's {machine} to import; {fix}",
        severity=Severity.ERROR if certain else Severity.WARNING,
        package=FLASH_ATTN,
        requirement=inst.req.raw,
        environment=inst.env.name,
        notes=tuple(notes),
        help=f"require flash-attn=={near}"
        if near
        else "set FLASH_ATTENTION_FORCE_BUILD=TRUE, or use a newer base image",
    )


def _importable(ctx: Context, inst: Install, have: Version | None) -> Release | None:
    """The newest good release whose wheels were built on a glibc this machine has and fit its torch."""
    if have is None:
        return None
    for r in reversed(ctx.kb.installable):
        if not ctx.policy.good(r) or r.version.is_prerelease:
            continue
        built = _runner_glibc(r)
        if built is None or built[0] > have or fits(r, inst.tools) is False:
            continue
        if suits(r, inst.target, inst.tools):
            return r
    return None


__all__ = ["check"]
