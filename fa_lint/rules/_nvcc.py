"""nvcc.py's checks, imported when the files say something about the machine (see ``nvcc.py``)."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.kb import builds as _builds
from fa_lint.machine import target as _target
from fa_lint.machine import toolchain
from fa_lint.model import FLASH_ATTN, Finding, Severity
from fa_lint.rules._base import Context
from fa_lint.rules._installs import Install, installs
from fa_lint.rules.nvcc import BUILD_TOOLCHAIN


def check(ctx: Context) -> Iterator[Finding]:
    for inst in installs(ctx):
        if inst.req.name != FLASH_ATTN or inst.path not in ("index", "build") or inst.facts is None:
            continue
        if inst.variable("FLASH_ATTENTION_SKIP_CUDA_BUILD") == "TRUE":
            continue  # no extension at all: FAL015 has nothing to say (the import will)
        nvcc = inst.target.nvcc(inst.step)
        if nvcc is None:
            continue
        found = _no_nvcc(inst, nvcc) if nvcc.value == "none" else _version(inst, nvcc)
        if found is not None:
            yield found


def memory_note(inst: Install) -> str | None:
    """On a compile: the MAX_JOBS that tag's setup.py picks, or that it picks none."""
    facts = inst.facts
    if facts is None or facts.max_jobs_capped or inst.variable("MAX_JOBS") is not None:
        return None
    torch = _builds.load().torch.facts.get("ninja_default")
    return (
        f"no MAX_JOBS: {inst.release}'s setup.py leaves the job count to ninja (torch "
        f"{torch.at if torch else 'cpp_extension'}), one compile per core and more at several GB each; "
        "set MAX_JOBS (2.5.4 and later cap it by free memory)"
    )


def _finding(inst: Install, headline: str, notes: list[str], help_: str, severity: Severity) -> Finding:
    if inst.compiles:
        note = memory_note(inst)
        notes = [*notes, note] if note else notes
    return BUILD_TOOLCHAIN.finding(
        inst.req.location,
        headline,
        severity=severity,
        package=FLASH_ATTN,
        requirement=inst.req.raw,
        environment=inst.env.name,
        notes=tuple(notes),
        help=help_,
    )


def _no_nvcc(inst: Install, nvcc: toolchain.Known) -> Finding:
    facts = inst.facts
    assert facts is not None
    t = _builds.load().torch.facts
    why = [
        f"no nvcc: {nvcc.where}",
        f"{facts.extension.at}: setup.py builds {facts.extension.text.rstrip('(')} as it is read; torch's "
        f"CUDAExtension needs CUDA_HOME ({t['extension_library_paths'].at}, {t['no_cuda_home'].at})",
    ]
    wheel = "" if inst.compiles else ", even to fetch its prebuilt wheel,"
    return _finding(
        inst,
        f"flash-attn's setup.py needs nvcc{wheel} and this stage has none: the install fails",
        [
            *why,
            "it fails with 'OSError: CUDA_HOME environment variable is not set', or with no such file "
            ".../bin/nvcc where a CUDA_HOME has no compiler",
        ],
        "build from a CUDA devel image (nvidia/cuda:X-devel-..., pytorch/pytorch:...-devel), install "
        "cuda-nvcc first, or install a release wheel by its URL",
        Severity.ERROR,
    )


def _version(inst: Install, nvcc: toolchain.Known) -> Finding | None:
    facts = inst.facts
    assert facts is not None
    have = _target.version(nvcc.value)
    if have is None:
        return None
    if have < facts.floor:
        return _finding(
            inst,
            f"flash-attn {inst.release} needs nvcc {facts.floor} or newer; this stage's is {have}",
            [f"nvcc {have} from {nvcc.where}", f"{facts.floor_evidence.at}: {facts.floor_evidence.text}"],
            f"use a CUDA {facts.floor}+ toolkit",
            Severity.ERROR,
        )
    cuda = inst.tools.cuda
    torch_cuda = _target.version(cuda.value) if cuda is not None and cuda.value[:1].isdigit() else None
    if not inst.compiles or torch_cuda is None or cuda is None:
        return None
    t = _builds.load().torch.facts
    notes = [f"nvcc {have} from {nvcc.where}", f"torch's CUDA {cuda.value} from {cuda.where}"]
    if have.major != torch_cuda.major:
        return _finding(
            inst,
            f"compiling flash-attn with nvcc {have} for a torch built with CUDA {cuda.value}: torch refuses "
            "another CUDA major",
            [*notes, f"{t['major_mismatch'].at}: {t['major_mismatch'].text}"],
            f"install a CUDA {torch_cuda.major}.x toolkit, or the torch build for CUDA {have.major}",
            Severity.ERROR,
        )
    if (have.major, have.minor) != (torch_cuda.major, torch_cuda.minor):
        return _finding(
            inst,
            f"compiling flash-attn with nvcc {have} for a torch built with CUDA {cuda.value}: a minor "
            "mismatch torch only warns about",
            [*notes, f"{t['minor_mismatch'].at}: {t['minor_mismatch'].text}"],
            f"match the toolkit to torch's CUDA {torch_cuda.major}.{torch_cuda.minor}",
            Severity.WARNING,
        )
    return None


__all__ = ["check", "memory_note"]
