"""nvcc.py's checks, imported when the files say something about the machine (see ``nvcc.py``)."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from fa_lint.kb import builds as _builds
from fa_lint.machine import target as _target
from fa_lint.machine import toolchain
from fa_lint.model import FLASH_ATTN, Finding, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._installs import Install, installs


def check(ctx: Context, rule: Rule) -> Iterator[Finding]:
    """FAL015's findings; ``rule`` is FAL015 itself, passed in so this module never imports its family's."""
    for inst in installs(ctx):
        if inst.req.name != FLASH_ATTN or inst.path not in ("index", "build") or inst.facts is None:
            continue
        if inst.variable("FLASH_ATTENTION_SKIP_CUDA_BUILD") == "TRUE":
            continue  # no extension at all: FAL015 has nothing to say (the import will)
        nvcc = inst.target.nvcc(inst.step)
        if nvcc is not None and nvcc.value == "none":
            yield _no_nvcc(rule, inst, nvcc)  # it fails there, before any arch is chosen
            continue
        found = _no_archs(rule, inst, nvcc)
        if found is not None:
            yield found
        found = _version(rule, inst, nvcc) if nvcc is not None else None
        if found is not None:
            yield found
        found = _memory(rule, inst)
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


def _finding(
    rule: Rule, inst: Install, headline: str, notes: list[str], help_: str, severity: Severity
) -> Finding:
    if inst.compiles:
        note = memory_note(inst)
        notes = [*notes, note] if note else notes
    return rule.finding(
        inst.req.location,
        headline,
        severity=severity,
        package=FLASH_ATTN,
        requirement=inst.req.raw,
        environment=inst.env.name,
        notes=tuple(notes),
        help=help_,
    )


def _no_nvcc(rule: Rule, inst: Install, nvcc: toolchain.Known) -> Finding:
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
        rule,
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


def _no_archs(rule: Rule, inst: Install, nvcc: toolchain.Known | None) -> Finding | None:
    """A compile whose ``FLASH_ATTN_CUDA_ARCHS`` selects none of the archs setup.py tests (``86``,
    ``8.6``, ``sm_80``, or ``100`` with an nvcc below 12.8): setup.py passes no ``-gencode``, so torch's
    cpp_extension chooses the archs, from ``TORCH_CUDA_ARCH_LIST`` or else the GPUs it sees while it
    builds; with none (a docker build), its empty list raises ``IndexError``. The build fails for every
    GPU, before any kernel exists, so this is the build's finding, not FAL013's (which judges what a
    build compiles against the GPUs the files name)."""
    facts, release = inst.facts, inst.release
    assert facts is not None
    var = facts.variable
    if var is None or inst.compiles is False:
        return None
    value = inst.variable(var.name)
    if not value:
        return None  # unset (the default selects every arch) or a value fa-lint cannot see
    certain, maybe = facts.compiled(_target.version(nvcc.value) if nvcc else None, value)
    if certain or maybe or inst.variable("TORCH_CUDA_ARCH_LIST"):
        return None  # something is compiled (FAL013 judges it against the target GPUs)
    target = inst.target
    if target.build_gpu is True:
        return None  # torch compiles for the GPU it sees there, the one the files name
    t = _builds.load().torch.facts
    tested = ", ".join(f'"{a.listed}"' for a in facts.archs if a.listed)
    named = var.elements(value)
    gated = [f"sm_{a.sm} from nvcc {a.nvcc}" for a in facts.archs if a.listed in named and a.nvcc]
    notes = [
        f"{var.name}={value} ({var.evidence.at}: {var.evidence.text}); setup.py tests membership of "
        f"{tested} ({', '.join(a.evidence.at for a in facts.archs[:2])}, ...)",
        *(
            [f"named but not built with nvcc {nvcc.value if nvcc else '(unknown)'}: {', '.join(gated)}"]
            if gated
            else []
        ),
        f"with no -gencode of setup.py's, torch picks the archs ({t['user_arch_flags'].at}: "
        f"{t['user_arch_flags'].text}): TORCH_CUDA_ARCH_LIST is unset, so the visible GPUs "
        f"({t['visible_gpus'].at}), and with none {t['no_visible_gpu'].at}: {t['no_visible_gpu'].text} "
        "raises IndexError",
        target.build_where or "no file says whether the machine that builds it has a GPU",
    ]
    certain_fail = target.build_gpu is False and inst.compiles is True and not inst.req.possible
    return _finding(
        rule,
        inst,
        f"{var.name}={value} selects no arch flash-attn {release}'s setup.py builds"
        + (
            ": the build fails with IndexError where no GPU is visible"
            if certain_fail
            else "; torch then compiles only for the GPUs the build machine has, and fails without one"
        ),
        notes,
        f'set {var.name} to the archs to build, from {var.default!r} ("80" covers 8.x, "90" Hopper, '
        '"100;120" Blackwell, with nvcc 12.8+), or set TORCH_CUDA_ARCH_LIST',
        Severity.ERROR if certain_fail else Severity.WARNING,
    )


def _per_job(inst: Install) -> tuple[float, str] | None:
    """The memory one compile job takes: what the release's setup.py allows it when it picks MAX_JOBS
    (``int(free_memory_gb / 9)``, 2.5.4 and later), else the first release that says (the same
    kernels, compiled the same way), and where that is said."""
    facts = inst.facts
    if facts is not None and facts.per_job_gb and facts.per_job_evidence is not None:
        return facts.per_job_gb, f"{facts.per_job_evidence.at}: {facts.per_job_evidence.text}"
    b = _builds.load()
    for key in b.raw:
        later = b.get(Version(key))
        if later is not None and later.per_job_gb and later.per_job_evidence is not None:
            ev = later.per_job_evidence
            return later.per_job_gb, f"as {later.version}'s setup.py says ({ev.at}: {ev.text})"
    return None


def _memory(rule: Rule, inst: Install) -> Finding | None:
    """A compile on a machine whose memory the files give, with more compile jobs than it holds: each
    nvcc job peaks at the memory setup.py allows it; past the machine's, the kernel kills the compiler
    ("Killed", "c++: fatal error: Killed signal terminated program cc1plus"). Only where setup.py
    surely compiles (no wheel fits, forced, a source build); a wheel it fetches compiles nothing."""
    memory, facts = inst.target.memory, inst.facts
    if memory is None or inst.compiles is not True or facts is None or inst.req.possible:
        return None
    found = _per_job(inst)
    if found is None:
        return None
    per_job, said = found
    gb = float(memory.value)
    fits = max(1, int(gb // per_job))
    set_to = inst.variable("MAX_JOBS")
    if set_to is not None:
        if not set_to.isdigit() or int(set_to) <= fits:
            return None  # a value fa-lint cannot see, or one the memory holds
        why = f"MAX_JOBS={set_to} runs {set_to} compile jobs at once, about {int(set_to) * per_job:g} GB"
    elif facts.max_jobs_capped:
        why = (
            "setup.py picks MAX_JOBS from the cores and the free memory it sees "
            f"({facts.max_jobs_evidence.at}), which on a node shared by jobs are the node's, not this job's"
        )
    else:
        torch = _builds.load().torch.facts.get("ninja_default")
        why = (
            f"without MAX_JOBS, {inst.release}'s setup.py leaves the job count to ninja (torch "
            f"{torch.at if torch else 'cpp_extension'}): one job per core and more"
        )
    return rule.finding(
        inst.req.location,
        f"compiling flash-attn {inst.release} may need more memory than the machine's {gb:g} GB: "
        f"each compile job takes about {per_job:g} GB; set MAX_JOBS={fits}",
        severity=Severity.WARNING,
        package=FLASH_ATTN,
        requirement=inst.req.raw,
        environment=inst.env.name,
        notes=(f"{gb:g} GB from {memory.where}", why, f"each job about {per_job:g} GB: {said}"),
        help=f"set MAX_JOBS={fits} (or fewer) for this install",
    )


def _version(rule: Rule, inst: Install, nvcc: toolchain.Known) -> Finding | None:
    facts = inst.facts
    assert facts is not None
    have = _target.version(nvcc.value)
    if have is None:
        return None
    if have < facts.floor:
        return _finding(
            rule,
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
            rule,
            inst,
            f"compiling flash-attn with nvcc {have} for a torch built with CUDA {cuda.value}: torch refuses "
            "another CUDA major",
            [*notes, f"{t['major_mismatch'].at}: {t['major_mismatch'].text}"],
            f"install a CUDA {torch_cuda.major}.x toolkit, or the torch build for CUDA {have.major}",
            Severity.ERROR,
        )
    if (have.major, have.minor) != (torch_cuda.major, torch_cuda.minor):
        return _finding(
            rule,
            inst,
            f"compiling flash-attn with nvcc {have} for a torch built with CUDA {cuda.value}: a minor "
            "mismatch torch only warns about",
            [*notes, f"{t['minor_mismatch'].at}: {t['minor_mismatch'].text}"],
            f"match the toolkit to torch's CUDA {torch_cuda.major}.{torch_cuda.minor}",
            Severity.WARNING,
        )
    return None


__all__ = ["check", "memory_note"]
