"""FAL005: a prebuilt flash-attn wheel built for another torch, C++ ABI or Python than it is used with."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.markers import InvalidMarker, Marker, default_environment
from packaging.ranges import VersionRange
from packaging.specifiers import SpecifierSet

from fa_lint.environments import Environment
from fa_lint.model import FLASH_ATTN, Finding, Requirement, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.sources._reqs import file_name, wheel_name

WHEEL_ABI_MISMATCH = Rule(
    "FAL005",
    "wheel-abi-mismatch",
    Severity.ERROR,
    "A prebuilt flash-attn wheel built for another torch, C++ ABI or CPython than its environment has.",
)
RULES = (WHEEL_ABI_MISMATCH,)
PACKAGES = frozenset({FLASH_ATTN, "torch", "python"})  # the requirements this rule reads

_LABEL = re.compile(
    r"(?:cu(?P<cuda>\d+))?torch(?P<torch>\d+\.\d+)(?:\.\d+)?(?:cxx11abi(?P<abi>TRUE|FALSE))?", re.I
)
_UNDEFINED = "importing flash_attn fails with 'ImportError: ... flash_attn_2_cuda...: undefined symbol'"


def _filename(req: Requirement) -> str | None:
    if not req.url:
        return None
    name = file_name(req.url)
    return name if name.endswith(".whl") else None


def single_minor(rng: VersionRange) -> str | None:
    """The one torch major.minor a range allows (``~=2.3.0``, ``>=2.3,<2.4``), if it allows just one."""
    minors = [
        f"{major}.{minor}"
        for major in (1, 2, 3)
        for minor in range(40)
        if not rng.intersection(SpecifierSet(f"=={major}.{minor}.*").to_range()).is_empty
    ]
    return minors[0] if len(minors) == 1 else None


def _torch_minor(env: Environment, req: Requirement, ctx: Context) -> tuple[str, str] | None:
    """The torch major.minor an environment installs, and where it says so."""
    pin = ctx.pinned(req, "torch")
    if pin is not None:
        version, where = pin
        return f"{version.major}.{version.minor}", str(where.location) if where else "the base image"
    for r in (*env.of("torch", locked=True), *env.of("torch")):
        minor = single_minor(r.version_range) if str(r.specifier) else None
        if minor:
            return minor, str(r.location)
    return None


def _python(env: Environment) -> tuple[SpecifierSet, str] | None:
    for image in env.images:
        if image.python:
            return SpecifierSet(f"=={image.python}.*"), f"the base image {image.reference}"
    for r in env.of("python"):
        if str(r.specifier):
            return r.specifier, f"'{r.raw}' ({r.location})"
    return None


def check(ctx: Context) -> Iterator[Finding]:
    seen: set[object] = set()
    for env in ctx.environments:
        for req in env.of(FLASH_ATTN):
            filename = _filename(req)
            wheel = wheel_name(filename) if filename else None
            if wheel is None or (req.location, env.name) in seen:
                continue
            seen.add((req.location, env.name))
            for problem in _problems(env, req, filename or "", wheel.python, ctx):
                yield WHEEL_ABI_MISMATCH.finding(
                    req.location, problem, package=FLASH_ATTN, requirement=req.raw, environment=env.name
                )


def _problems(
    env: Environment, req: Requirement, filename: str, python_tag: str, ctx: Context
) -> Iterator[str]:
    label = _LABEL.search(filename.split("+", 1)[1].split("-", 1)[0]) if "+" in filename else None
    if label and label["torch"]:
        have = _torch_minor(env, req, ctx)
        if have and have[0] != label["torch"]:
            want = filename.replace(f"torch{label['torch']}", f"torch{have[0]}", 1)
            yield (
                f"{filename} is built for torch {label['torch']}, but {env.name} installs torch {have[0]} "
                f"({have[1]}): {_UNDEFINED}; use the torch {have[0]} build of the same release ({want})"
            )
    if label and label["abi"]:
        wheel_abi = label["abi"].upper() == "TRUE"
        for image in env.images:
            if image.cxx11_abi is not None and image.cxx11_abi != wheel_abi:
                want = re.sub(
                    r"cxx11abi(TRUE|FALSE)", f"cxx11abi{str(image.cxx11_abi).upper()}", filename, flags=re.I
                )
                abi = "new" if image.cxx11_abi else "old"
                yield (
                    f"{filename} is built with cxx11abi{label['abi'].upper()}, but the torch in "
                    f"{image.reference} ({image.location}) uses the {abi} C++ ABI: {_UNDEFINED}; use {want}"
                )
    m = re.fullmatch(r"cp(\d)(\d+)", python_tag or "")
    if not m:
        return
    version = f"{m.group(1)}.{m.group(2)}"
    if req.marker and "python_version" in req.marker:
        if not _marker_allows(req.marker, version):
            yield (
                f"{filename} is for CPython {version}, but its marker '{req.marker}' selects another Python: "
                f"pip refuses it there ('is not a supported wheel on this platform')"
            )
        return
    py = _python(env)
    if py and not py[0].contains(f"{version}.0") and not py[0].contains(version):
        fits = next((minor for minor in range(8, 30) if py[0].contains(f"3.{minor}.0")), None)
        want = re.sub(rf"\b{python_tag}\b", f"cp3{fits}", filename) if fits else "the build for that Python"
        yield (
            f"{filename} is for CPython {version}, but {env.name} runs Python {py[0]} ({py[1]}): pip refuses "
            f"it ('is not a supported wheel on this platform'); use {want}"
        )


def _marker_allows(marker: str, python: str) -> bool:
    """Whether a marker can hold on some platform when Python is ``python``."""
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
