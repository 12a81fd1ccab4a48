"""What an environment runs flash-attn on: torch's major.minor and CUDA, CPython, the C++ ABI.

Read from the environment's own requirements and base images, never from this machine:

- torch: the torch the environment ends with (``final_torch``): its torch requirements and the
  packages that pin torch (``vllm==0.6.5`` pins 2.5.1) taken together, in a script or stage the
  last command that put it in place, or the base image (``pytorch/pytorch:2.4.0-...``); a value
  when that allows one major.minor;
- torch's CUDA: the pin's local label (``+cu118``), uv's ``--torch-backend``, a PyTorch index URL
  (``.../whl/cu118``) given to the command or in the requirements file that installs torch, the
  CUDA of that release's wheel on PyPI when the install names no index (torch 2.5.1: 12.4), or the
  base image (``pytorch/pytorch:...-cuda12.1-...``, or ``nvidia/cuda:12.1.1-...``'s toolkit);
- the C++ ABI of that torch: its official build's (old before 2.7, new since, as the knowledge base
  read each release's library), NGC images' (new), conda-forge's (new);
- CPython: ``FROM python:3.13``, ``requires-python``, conda ``python=``, a workflow's
  ``actions/setup-python``, ``.python-version`` -- all of them together.

Anything not said is unknown (None), and the rules that read this say nothing about it.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable

from packaging.ranges import VersionRange
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from fa_lint._lazy import Lazy
from fa_lint._records import NamedTuple
from fa_lint.kb import torch as torch_kb
from fa_lint.machine import final_torch, images
from fa_lint.machine.environments import Environment
from fa_lint.machine.final_torch import TORCH, FinalTorch, Source
from fa_lint.machine.series import minors
from fa_lint.model import FLASH_ATTN, Image, Kind, Requirement
from fa_lint.sources import SCRIPTS

# the requirements a toolchain is read from (rules.PACKAGES): torch, the packages that pin it, python
PACKAGES = frozenset({*TORCH, "python", FLASH_ATTN}) | torch_kb.PACKAGES
_PYTORCH_INDEX = Lazy(r"download\.pytorch\.org/whl/(?:nightly/|test/)?(cu[0-9]+|cpu|rocm[0-9.]+)(?:/|$)")
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
    final: FinalTorch | None = None  # the torch it ends with, and what put it there
    abi_where: str = ""  # what says the C++ ABI


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
def cuda_version(tag: str) -> str | None:
    """``cu118`` -> "11.8", ``cu130`` -> "13.0"; ``cpu`` and ``rocm6.1`` as they are."""
    if not tag.startswith("cu"):
        return tag
    digits = tag[2:]
    return f"{digits[:-1]}.{digits[-1]}" if len(digits) >= 2 else None


def index_cuda(url: str) -> str | None:
    """The CUDA of the torch builds a PyTorch index serves (``.../whl/cu121`` -> "12.1")."""
    m = _PYTORCH_INDEX().search(url)
    return cuda_version(m.group(1)) if m else None


def deciding(final: FinalTorch) -> Source | None:
    """The source to name for the final torch: of the last command that put it in place, a torch
    requirement if it has one, else the package that pins it."""
    last = final.last
    if last is None:
        return None
    same = [s for s in final.decided if s.step == last.step and s.image is None]
    pins = (s for s in same if s.requirement is not None and s.requirement.name in TORCH)
    fits = (s for s in itertools.chain(pins, same) if not s.torch.is_disjoint(final.versions))
    return next(fits, last)


def where(source: Source) -> str:
    """What a Known says for a source: a torch requirement's location, else its whole sentence."""
    req = source.requirement
    if req is not None and req.name in TORCH and source.says == final_torch.plain(req):
        return str(req.location)
    return source.says


def _torch(final: FinalTorch | None) -> tuple[Known | None, Requirement | None]:
    if final is None or final.conflict is not None or final.removed is not None or not final.certain:
        return None, None
    minors = final.minors
    source = deciding(final)
    if len(minors) != 1 or source is None:
        return None, None
    if source.image is not None:
        return Known(minors[0], source.says), None
    return Known(minors[0], where(source)), source.requirement


def _cuda(env: Environment, torch: Requirement | None, final: FinalTorch | None) -> Known | None:
    """The CUDA of the torch the environment installs, else of its base image."""
    found = _torch_cuda(env, torch, final) if torch is not None else None
    return found if found is not None else _image_cuda(env)


def _torch_cuda(env: Environment, torch: Requirement, final: FinalTorch | None) -> Known | None:
    """What says the CUDA of an installed torch: its local label, ``--torch-backend``, its index, or
    its wheel on PyPI."""
    v = exact(torch) if torch.name in TORCH else None
    label = _LABEL.match(v.local or "") if v is not None else None
    if label:
        return Known(cuda_version(label.group(1)) or label.group(1), str(torch.location))
    options = torch.options
    if options and options.torch_backend and _LABEL.match(options.torch_backend):
        return Known(cuda_version(options.torch_backend) or "", f"--torch-backend {options.torch_backend}")
    # the index options of the same command (or requirements file) that installs torch
    same = [r for r in env.members if r.step == torch.step and r.options]
    urls = [u for r in (torch, *same) for u in (r.options.index_urls if r.options else ())]
    for url in urls:
        served = index_cuda(url)
        if served:
            return Known(served, f"the index {url} ({torch.location})")
    unsure = any(r.options is not None and r.options.index_unsure for r in (torch, *same)) or any(
        r.kind is Kind.SOURCE
        for name in TORCH
        for r in env.of(name)  # [tool.uv.sources] torch = ...
    )
    if not urls and not unsure and not (options and options.torch_backend) and _from_pypi(torch) and final:
        kb = torch_kb.load()
        cuda = kb.cuda(final.versions)
        releases = kb.releases_in(final.versions)
        if cuda and releases:
            named = releases[0].version if len(releases) == 1 else f"{final.minors[0]}.x"
            return Known(cuda, f"torch {named}'s wheel on PyPI, built with CUDA {cuda}")
    return None


def _image_cuda(env: Environment) -> Known | None:
    for image in env.images:
        if image.cuda:
            return Known(image.cuda, f"the base image {image.reference}")
        row = images.ngc_release(image.reference)
        if row is not None and row.get("cuda"):
            return Known(row["cuda"], f"the base image {image.reference} (NVIDIA's release notes)")
    return None


# The formats whose installs say every index they use (the command's options, a requirements file's
# --index-url lines): a torch from one of them with no index named comes from PyPI. A Pipfile, a
# pyproject or a lock names its indexes in tables fa-lint does not read, so their torch's index is
# not known (a Pipfile.lock may pin torch from a vendor's CUDA index).
_INDEXES_SAID = frozenset({"requirements", *SCRIPTS})


def _from_pypi(req: Requirement) -> bool:
    """pip or uv installing from PyPI, the index named by none (no conda build, no URL)."""
    return req.source in _INDEXES_SAID and req.tool != "conda" and req.url is None


def image_abi(image: Image) -> bool | None:
    """The C++ ABI of a base image's torch: what the image is known to ship (NGC: new), else, for
    pytorch/pytorch:X, the official build of release X."""
    if image.cxx11_abi is not None:
        return image.cxx11_abi
    if image.torch is not None and re.match(
        r"^(?:docker\.io/)?(?:library/)?pytorch/pytorch:", image.reference
    ):
        # installed from download.pytorch.org/whl/cuXY (the image's Dockerfile): that build's ABI
        override = _index_abi(f"{image.torch.major}.{image.torch.minor}", image.cuda)
        if override is not None:
            return override
        return torch_kb.load().cxx11_abi(SpecifierSet(f"=={image.torch}").to_range())
    return None


def _index_abi(minor: str, cuda: str | None) -> bool | None:
    """The ABI of a download.pytorch.org build whose ABI differs from the release's PyPI wheel."""
    if cuda is None or "." not in cuda:
        return None
    overrides = torch_kb.load().data.get("pytorch_index", {}).get("cxx11_abi", {})
    found = overrides.get(minor, {}).get(f"cu{cuda.replace('.', '')}")
    return None if found is None else bool(found)


def _abi(env: Environment, final: FinalTorch | None, cuda: Known | None) -> tuple[bool | None, str]:
    """The C++ ABI of the torch the environment ends with, and what says so."""
    if final is None or final.last is None:  # nothing installs torch: the base image's, if known
        for image in env.images:
            abi = image_abi(image)
            if abi is not None:
                return abi, f"the torch in {image.reference} ({image.location})"
        return None, ""
    return _installed_abi(final, cuda)


def _installed_abi(final: FinalTorch, cuda: Known | None) -> tuple[bool | None, str]:
    """The C++ ABI of the torch the environment's installs end with, and what says so."""
    if final.conflict is not None or final.removed is not None or not final.certain:
        return None, ""
    source = deciding(final)
    if source is None:
        return None, ""
    if source.image is not None:
        abi = image_abi(source.image)
        return (
            abi,
            f"the torch in {source.image.reference} ({source.image.location})" if abi is not None else "",
        )
    req = source.requirement
    if req is None or req.url is not None:
        return None, ""
    if req.tool == "conda" or req.source == "conda":
        channel = req.raw.split("::", 1)[0] if "::" in req.raw else ""
        data = torch_kb.load().data.get("conda", {}).get(channel, {})
        abi = data.get("cxx11_abi")
        return abi, f"the {channel} channel's pytorch builds ({req.location})" if abi is not None else ""
    if not _from_pypi(req) and not (cuda is not None and cuda.where.startswith("the index ")):
        return None, ""  # a build from an index fa-lint cannot see: not necessarily an official one
    kb = torch_kb.load()
    minors = final.minors
    override = _index_abi(minors[0], cuda.value if cuda else None) if len(minors) == 1 else None
    if override is not None and cuda is not None:
        return override, f"torch {minors[0]}'s cu{cuda.value.replace('.', '')} builds on download.pytorch.org"
    abi = kb.cxx11_abi(final.versions)
    if abi is None:
        return None, ""
    return abi, f"torch {final_torch.written(final.versions)}'s official build ({source.says})"


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
    known, pythons = _python(env, python)
    final = final_torch.of(env, pythons)
    torch, req = _torch(final)
    cuda = _cuda(env, req, final)
    abi, said = _abi(env, final, cuda)
    return Toolchain(torch, cuda, known, pythons, abi, final, said)
