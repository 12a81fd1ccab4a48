"""What an environment runs flash-attn on: torch's major.minor and CUDA, CPython, the C++ ABI.

Read from the environment's own requirements and base images, never from this machine:

- torch: an exact pin (``torch==2.3.1``, a lock entry, a wheel URL), a range that allows one
  major.minor (``torch~=2.3.0``), or a base image (``pytorch/pytorch:2.4.0-...``);
- torch's CUDA: the pin's local label (``+cu118``), uv's ``--torch-backend``, a PyTorch index URL
  (``.../whl/cu118``) given to the command or in the requirements file that installs torch, or the
  base image (``pytorch/pytorch:...-cuda12.1-...``, or ``nvidia/cuda:12.1.1-...``'s toolkit);
- CPython: ``FROM python:3.13``, ``requires-python``, conda ``python=``, a workflow's
  ``actions/setup-python``, ``.python-version`` -- all of them together.

Anything not said is unknown (None), and the rules that read this say nothing about it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import NamedTuple

from packaging.ranges import VersionRange
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from fa_lint.environments import Environment
from fa_lint.model import Image, Requirement

TORCH = ("torch", "pytorch")  # pytorch: conda's name for it
PACKAGES = frozenset({*TORCH, "python"})  # the requirements a toolchain is read from (rules.PACKAGES)
_PYTORCH_INDEX = re.compile(
    r"download\.pytorch\.org/whl/(?:nightly/|test/)?(cu[0-9]+|cpu|rocm[0-9.]+)(?:/|$)"
)
_LABEL = re.compile(r"^(cu[0-9]+|cpu|rocm[0-9.]+)")


class Known(NamedTuple):
    value: str
    where: str  # what says so: "requirements.txt:3:1", "the base image pytorch/pytorch:2.4.0-..."


class Toolchain(NamedTuple):
    torch: Known | None = None  # major.minor: "2.3"
    cuda: Known | None = None  # torch's CUDA, "12.1"; or "cpu", "rocm6.1"
    python: Known | None = None  # one minor, "3.11"; else the constraints as written, ">=3.10"
    pythons: tuple[str, ...] = ()  # the CPython minors it allows; empty when nothing says
    cxx11_abi: bool | None = None


def exact(req: Requirement) -> Version | None:
    """The single version a requirement fixes: a URL/lock version or a plain ``==X`` pin."""
    if req.version is not None:
        return req.version
    pins = [s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
    try:
        return Version(pins[0]) if len(pins) == 1 else None
    except InvalidVersion:
        return None


@functools.lru_cache(maxsize=1024)
def minors(rng: VersionRange, majors: tuple[int, ...] = (1, 2, 3)) -> tuple[str, ...]:
    """The major.minor series a range reaches into (``>=3.10,<3.12`` -> 3.10, 3.11); a project's
    environments ask about the same few ranges over and over. (``is_disjoint`` is packaging's
    ``intersection(...).is_empty`` without building the intersection.)"""
    return tuple(
        f"{major}.{minor}"
        for major in majors
        if not rng.is_disjoint(_series(major))
        for minor in range(40)
        if not rng.is_disjoint(_series(major, minor))
    )


@functools.cache
def _series(major: int, minor: int | None = None) -> VersionRange:
    return SpecifierSet(f"=={major}.*" if minor is None else f"=={major}.{minor}.*").to_range()


def single_minor(rng: VersionRange) -> str | None:
    """The one torch major.minor a range allows (``~=2.3.0``, ``>=2.3,<2.4``), if it allows just one."""
    found = minors(rng)
    return found[0] if len(found) == 1 else None


def cuda_version(tag: str) -> str | None:
    """``cu118`` -> "11.8", ``cu130`` -> "13.0"; ``cpu`` and ``rocm6.1`` as they are."""
    if not tag.startswith("cu"):
        return tag
    digits = tag[2:]
    return f"{digits[:-1]}.{digits[-1]}" if len(digits) >= 2 else None


def index_cuda(url: str) -> str | None:
    """The CUDA of the torch builds a PyTorch index serves (``.../whl/cu121`` -> "12.1")."""
    m = _PYTORCH_INDEX.search(url)
    return cuda_version(m.group(1)) if m else None


def _torch(env: Environment) -> tuple[Known | None, Requirement | None]:
    reqs = [r for name in TORCH for r in (*env.of(name, locked=True), *env.of(name))]
    pinned: dict[str, Requirement] = {}
    for r in reqs:
        v = exact(r)
        if v is not None:
            pinned.setdefault(f"{v.major}.{v.minor}", r)
    if len(pinned) == 1:
        minor, req = next(iter(pinned.items()))
        return Known(minor, str(req.location)), req
    if pinned:
        return None, None  # two pins disagree: which one installs is not for fa-lint to guess
    for r in reqs:
        one = single_minor(r.version_range) if str(r.specifier) or r.alternatives else None
        if one:
            return Known(one, str(r.location)), r
    for image in env.images:
        if image.torch is not None:
            return Known(
                f"{image.torch.major}.{image.torch.minor}", f"the base image {image.reference}"
            ), None
    return None, None


def _cuda(env: Environment, torch: Requirement | None) -> Known | None:
    if torch is not None:
        v = exact(torch)
        label = _LABEL.match(v.local or "") if v is not None else None
        if label:
            return Known(cuda_version(label.group(1)) or label.group(1), str(torch.location))
        options = torch.options
        if options and options.torch_backend and _LABEL.match(options.torch_backend):
            return Known(
                cuda_version(options.torch_backend) or "", f"--torch-backend {options.torch_backend}"
            )
        # the index options of the same command (or requirements file) that installs torch
        same = [r for r in env.members if r.step == torch.step and r.options]
        for r in (torch, *same):
            for url in r.options.index_urls if r.options else ():
                served = index_cuda(url)
                if served:
                    return Known(served, f"the index {url} ({torch.location})")
    for image in env.images:
        if image.cuda:
            return Known(image.cuda, f"the base image {image.reference}")
    return None


def _python(env: Environment, extra: Iterable[Requirement]) -> tuple[Known | None, tuple[str, ...]]:
    rng = VersionRange.full()
    said: list[str] = []
    written: list[str] = []  # each constraint, for a value that is no single minor: ">=3.10"
    images: list[Image] = [i for i in env.images if i.python]
    for image in images:
        rng = rng.intersection(SpecifierSet(f"=={image.python}.*").to_range())
        said.append(f"the base image {image.reference}")
        written.append(f"{image.python}")
    for r in (*env.of("python"), *extra):
        if str(r.specifier) or r.alternatives:
            rng = rng.intersection(r.version_range)
            said.append(f"'{r.raw}' ({r.location})")
            written.append(str(r.specifier) or " || ".join(map(str, r.alternatives)))
    if not said:
        return None, ()
    found = tuple(minors(rng, (3,)))
    value = found[0] if len(found) == 1 else ", ".join(dict.fromkeys(written)) if found else "none"
    return Known(value, "; ".join(said)), found


def of(env: Environment, python: Iterable[Requirement] = ()) -> Toolchain:
    """What ``env`` runs; ``python`` adds constraints read elsewhere (a ``.python-version``)."""
    torch, req = _torch(env)
    abi = next((i.cxx11_abi for i in env.images if i.cxx11_abi is not None), None)
    known, pythons = _python(env, python)
    return Toolchain(torch, _cuda(env, req), known, pythons, abi)
