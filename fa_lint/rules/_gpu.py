"""gpu.py's checks, imported when the files say something about the machine (see ``gpu.py``)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.version import Version

from fa_lint._lazy import Lazy
from fa_lint.kb import builds as _builds
from fa_lint.kb.builds import Capability
from fa_lint.machine import target as _target
from fa_lint.machine.target import UnknownGpu
from fa_lint.model import FA3, FA4, FLASH_ATTN, Finding, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._installs import Install, installs
from fa_lint.syntax.pep508 import file_name


class _Gpu:
    """A GPU the install is for: a named one, or a capability an arch list names."""

    def __init__(self, cc: Capability, label: str, where: str, possible: bool, remote: bool = False) -> None:
        self.cc, self.label, self.where, self.possible, self.remote = cc, label, where, possible, remote


def check(ctx: Context, rule: Rule) -> Iterator[Finding]:
    """FAL013's findings; ``rule`` is FAL013 itself, passed in so this module never imports its family's."""
    for inst in installs(ctx):
        if inst.kernelless:
            continue  # no CUDA extension: `import flash_attn` fails before any GPU is asked (FAL011)
        found = [(gpu, p) for gpu in _gpus(inst) if (p := _problem(inst, gpu)) is not None]
        unknown = inst.target.unknown_gpus
        if not found:
            if unknown:
                yield _not_judged(inst, unknown, rule)
            continue
        # one finding per install: the most certain GPU leads, the others follow in the notes
        found.sort(key=lambda gp: (gp[0].possible, not gp[1][3]))
        (gpu, (headline, notes, help_, certain)), rest = found[0], found[1:]
        # an install that may not run (a branch, a notebook line under a capability test) is a warning
        sure = (certain and not gpu.possible) or _every(inst, found)
        severity = Severity.ERROR if sure and not inst.req.possible else Severity.WARNING
        yield rule.finding(
            inst.req.location,
            headline,
            severity=severity,
            **inst.fields,
            notes=(
                f"the GPU: {gpu.label} from {gpu.where}",
                *notes,
                *(f"also {g.label} from {g.where}: {p[0]}" for g, p in rest),
                *(f"not judged: {_unnamed(u)}" for u in unknown),
            ),
            help=help_,
        )


def _unnamed(u: UnknownGpu) -> str:
    return f"`{u.value}` from {u.where} names no GPU in fa-lint's table (or several)"


def _not_judged(inst: Install, unknown: tuple[UnknownGpu, ...], rule: Rule) -> Finding:
    """A GPU name gpus.json cannot map: said as not judged (info), never passed in silence."""
    first = unknown[0]
    which = inst.release or inst.version
    return rule.finding(
        inst.req.location,
        f"whether {inst.req.name}{f' {which}' if which else ''} runs on GPU `{first.value}` is not judged: "
        "fa-lint does not know its compute capability",
        severity=Severity.INFO,
        **inst.fields,
        notes=(
            *(_unnamed(u) for u in unknown),
            "fa_lint/kb/gpus.json maps GPU names to NVIDIA's compute capabilities "
            "(https://developer.nvidia.com/cuda-gpus); a name missing there, or one that fits several GPUs "
            "(a bare `RTX 6000` is a Quadro RTX 6000 (7.5) or an RTX 6000 Ada (8.9)), is not judged",
        ),
        help="name the GPU as NVIDIA does (`RTX2070`, `A100-80GB`, `nvidia-tesla-t4`), or set "
        "TORCH_CUDA_ARCH_LIST to its compute capability",
    )


def _every(inst: Install, found: list[tuple[_Gpu, Problem]]) -> bool:
    """Every GPU the files allow fails, each certainly: the target is certain to fail, whichever it is
    (a GPU it cannot name may be one that works)."""
    if inst.target.unknown_gpus:
        return False
    return len(found) == len(_gpus(inst)) and all(p[3] and not g.remote for g, p in found)


def _gpus(inst: Install) -> list[_Gpu]:
    out = [
        _Gpu(t.gpu.cc, f"{t.gpu.name} (compute capability {t.gpu.capability})", t.where, t.possible, t.remote)
        for t in inst.target.gpus
    ]
    listed = inst.target.variable("TORCH_CUDA_ARCH_LIST", inst.step)
    if listed is not None and listed.value:
        caps = _target.archs(listed.value)
        for cc in caps:
            out.append(
                _Gpu(
                    cc,
                    f"compute capability {cc[0]}.{cc[1]} (TORCH_CUDA_ARCH_LIST={listed.value})",
                    listed.where,
                    len(caps) > 1,
                )
            )
    seen: dict[Capability, _Gpu] = {}
    for g in out:  # one finding per capability: a certain target wins over a possible one
        if g.cc not in seen or (seen[g.cc].possible and not g.possible):
            seen[g.cc] = g
    return list(seen.values())


Problem = tuple[str, tuple[str, ...], str, bool]  # headline, notes, help, certain


def _problem(inst: Install, gpu: _Gpu) -> Problem | None:
    cc = f"{gpu.cc[0]}.{gpu.cc[1]}"
    if inst.req.name == FA3:
        return _fa3(inst, gpu, cc)
    if inst.req.name == FA4:
        return _fa4(inst, gpu, cc)
    facts = inst.facts
    if facts is None or inst.release is None:
        return _any_release(inst, gpu, cc) if inst.compiles and inst.req.name == FLASH_ATTN else None
    release = inst.release
    if not facts.runtime.accepts(gpu.cc):
        refuses = f"{facts.runtime.evidence.at}: {facts.runtime.evidence.text}"
        if gpu.cc[0] < 8:
            return (
                f"flash-attn {release} cannot run on compute capability {cc}: FlashAttention 2 needs "
                "an Ampere (8.0) or newer GPU",
                (
                    f"{release} checks {refuses}",
                    "it raises 'FlashAttention only supports Ampere GPUs or newer.'",
                ),
                "run FlashAttention 2 on an 8.0+ GPU, or use PyTorch's scaled_dot_product_attention there",
                True,
            )
        return (
            f"flash-attn {release} refuses compute capability {cc} ('only supports Ampere GPUs or newer'); "
            "2.7.3 and later accept it",
            (f"{release} checks {refuses}",),
            "require flash-attn>=2.8 (its wheels carry sm_100 and sm_120 kernels)",
            True,
        )
    return _kernels(inst, gpu, cc)


def _kernels(inst: Install, gpu: _Gpu, cc: str) -> Problem | None:
    """Whether the install carries a kernel the GPU runs: the wheel's archs, or a build's."""
    facts, release = inst.facts, inst.release
    assert facts is not None and release is not None
    if inst.path == "wheel":
        return _wheel_file(inst, gpu, cc)
    if inst.compiles is False and inst.path == "index" and facts.wheels is not None:
        torch = inst.tools.torch.value if inst.tools.torch else None
        if release.wheels is not None and torch is not None and torch not in release.wheels.torch:
            return None  # a wheel attached after the tag, by a later workflow: its archs are not known
        cuda = inst.tools.cuda.value if inst.tools.cuda else None
        major = int(cuda.split(".")[0]) if cuda and cuda[0].isdigit() else None
        builds = facts.wheels.for_cuda(major) if major is not None else facts.wheels.builds
        sms = {sm for b in builds for sm in b.sm}
        if not builds or _builds.runs(sms, gpu.cc):
            return None
        made = ", ".join(f"CUDA {b.cuda}: sm_{', sm_'.join(b.sm)}" for b in builds)
        return (
            f"flash-attn {release}'s prebuilt wheel has no kernel for compute capability {cc} "
            f"(it carries sm_{', sm_'.join(sorted(sms, key=_key))})",
            (
                f"the release workflow built its wheels with {made} ({facts.wheels.evidence.at})",
                "the import works; the first call fails with 'no kernel image is available for execution on "
                "the device'",
            ),
            "require a release whose wheels carry this GPU's arch (2.8.0.post2 and later build sm_100 and "
            "sm_120), or build from source for it",
            major is not None,
        )
    if inst.compiles:
        return _built(inst, gpu, cc)
    return None


def _built(inst: Install, gpu: _Gpu, cc: str) -> Problem | None:
    facts, release = inst.facts, inst.release
    assert facts is not None and release is not None
    nvcc_known = inst.target.nvcc(inst.step)
    nvcc = _target.version(nvcc_known.value) if nvcc_known is not None else None
    value = inst.variable(facts.variable.name) if facts.variable else None
    certain, maybe = facts.compiled(nvcc, value)
    notes = []
    if not certain and not maybe:
        # no gencode of its own: torch's arch flags decide (TORCH_CUDA_ARCH_LIST, else the visible GPUs)
        listed = inst.variable("TORCH_CUDA_ARCH_LIST")
        if not listed:
            return None
        certain = frozenset(f"{a}{b}" for a, b in _target.archs(listed))
        notes.append(
            f"{facts.variable.name if facts.variable else 'setup.py'}={value!r} names none of the archs "
            f"setup.py tests ({', '.join(a.listed or a.sm for a in facts.archs)}), so torch's "
            f"TORCH_CUDA_ARCH_LIST={listed} decides"
        )
    if _builds.runs(certain, gpu.cc) or _builds.runs(maybe, gpu.cc):
        return None
    why = [f"{a.evidence.at}: {a.evidence.text}" for a in facts.archs]
    if value is not None and facts.variable is not None:
        notes.append(
            f"{facts.variable.name}={value} ({facts.variable.evidence.at}: setup.py tests membership)"
        )
    if nvcc_known is not None:
        notes.append(f"nvcc {nvcc_known.value or '(version unknown)'} from {nvcc_known.where}")
    return (
        f"this build of flash-attn {release} compiles no kernel for compute capability {cc} "
        f"({_compiles(facts, certain, maybe)})",
        (*notes, *why[:4]),
        f"add sm_{gpu.cc[0]}{gpu.cc[1]} to the build"
        + (f" ({facts.variable.name})" if facts.variable else ", or use a release that compiles it"),
        not maybe,
    )


# a wheel's local label: the CUDA it was built with (cu12: the release workflow's CUDA 12 build;
# cu128: 12.8) and the torch it was built for
_NO_IMAGE = (
    "the import works; the first call fails with 'no kernel image is available for execution on the device'"
)
_LABEL = Lazy(r"\+cu(\d\d)(\d?)torch(\d+\.\d+)", re.I)


def _wheel_file(inst: Install, gpu: _Gpu, cc: str) -> Problem | None:
    """A wheel installed by its URL or file: the kernels its build compiled. The release workflow's
    (its URL under the release, for a torch the tag's matrix built) are that build's; any other
    (a community build, a wheel attached after the tag) compiled what the tag's setup.py compiles
    with the nvcc its name says (``cu128``: 12.8), which is all fa-lint can know of it."""
    facts, release = inst.facts, inst.release
    assert facts is not None and release is not None
    label = _LABEL().search(file_name(inst.req.url or ""))
    if label is None:
        return None  # no CUDA in its name: what it was built with is not known
    major, minor, torch = int(label.group(1)), label.group(2), label.group(3)
    matrix = release.wheels.torch if release.wheels is not None else ()
    if inst.official and facts.wheels is not None and torch in matrix:
        builds = facts.wheels.for_cuda(major)
        sms = frozenset(sm for b in builds for sm in b.sm)
        made = ", ".join(f"CUDA {b.cuda}: sm_{', sm_'.join(b.sm)}" for b in builds)
        why = f"the release workflow built its CUDA {major} wheels with {made} ({facts.wheels.evidence.at})"
    elif minor:
        nvcc = Version(f"{major}.{minor}")
        sms = facts.compiled(nvcc, None)[0]
        why = (
            f"a wheel built elsewhere with nvcc {nvcc} (its name says cu{major}{minor}) compiles what "
            f"{release}'s setup.py compiles with it: sm_{', sm_'.join(sorted(sms, key=_key)) or '(none)'} "
            f"({', '.join(a.evidence.at for a in facts.archs)})"
        )
    else:
        return None
    if not sms or _builds.runs(sms, gpu.cc):
        return None
    return (
        f"this flash-attn {release} wheel has no kernel for compute capability {cc} "
        f"(it carries sm_{', sm_'.join(sorted(sms, key=_key))})",
        (
            why,
            _NO_IMAGE,
        ),
        "use a wheel built with this GPU's arch (2.8.0.post2 and later release wheels carry sm_100 and "
        "sm_120), or build from source for it",
        True,
    )


def _any_release(inst: Install, gpu: _Gpu, cc: str) -> Problem | None:
    """A source build of a flash-attention checkout whose release is not known (a commit, a branch, an
    ARG): judged only where every release fa-lint knows would compile no kernel for the GPU with this
    nvcc and FLASH_ATTN_CUDA_ARCHS (``90``: sm_90 in every release that reads it, sm_80 and sm_90 in
    the older ones, which do not)."""
    value = inst.variable("FLASH_ATTN_CUDA_ARCHS")
    if not value:
        return None  # its default compiles every arch the release has
    known = inst.target.nvcc(inst.step)
    nvcc = _target.version(known.value) if known is not None else None
    b = _builds.load()
    readers = []
    for key in b.raw:
        facts = b.get(Version(key))
        if facts is None:
            continue
        certain, maybe = facts.compiled(nvcc, value)
        if not certain and not maybe:
            return None  # that release builds what torch picks (TORCH_CUDA_ARCH_LIST, the build's GPU)
        if _builds.runs(certain | maybe, gpu.cc) and facts.runtime.accepts(gpu.cc):
            return None
        if facts.variable is not None:
            readers.append(facts)
    if not readers:
        return None
    first, last = readers[0], readers[-1]
    wanted = [a.listed for a in last.archs if a.listed and _builds.runs([a.sm], gpu.cc)]
    return (
        f"this build compiles no kernel for compute capability {cc}, whichever flash-attn it builds: "
        f"FLASH_ATTN_CUDA_ARCHS={value} selects "
        + _compiles(last, *last.compiled(nvcc, value)).removeprefix("it compiles "),
        (
            f"which release the checkout builds is not known; every release fa-lint knows compiles no "
            f"sm_{gpu.cc[0]}{gpu.cc[1]}-compatible kernel with it: {first.version}-{last.version} read "
            f"FLASH_ATTN_CUDA_ARCHS ({last.variable.evidence.at if last.variable else ''}), the ones before "
            "build only their own archs",
        ),
        f"add {wanted[0]} to FLASH_ATTN_CUDA_ARCHS" if wanted else "build it for this GPU's arch",
        False,
    )


def _compiles(facts: _builds.BuildFacts, certain: frozenset[str], maybe: frozenset[str]) -> str:
    """What a build compiles, for a headline: the archs it surely compiles, then those an nvcc fa-lint
    does not know may add (never "sm_(none)" where FLASH_ATTN_CUDA_ARCHS=90 asks for sm_90)."""
    parts = [f"sm_{sm}" for sm in sorted(certain, key=_key)]
    needs = {a.sm: a.nvcc for a in facts.archs}
    parts += [
        f"sm_{sm} with nvcc {needs[sm]} or newer" if needs.get(sm) else f"sm_{sm}"
        for sm in sorted(maybe, key=_key)
    ]
    return f"it compiles {', '.join(parts)}" if parts else "it compiles no kernel at all"


def _fa3(inst: Install, gpu: _Gpu, cc: str) -> Problem | None:
    fa3 = _builds.load().fa3
    # hopper/setup.py leaves the sm_80 kernels out under FLASH_ATTENTION_DISABLE_SM80=TRUE
    off = inst.compiles is not False and inst.variable(fa3.disable_sm80) == "TRUE"
    sms = tuple(sm for sm in fa3.sm if not (off and sm == "80"))
    if fa3.runtime.accepts(gpu.cc) and _builds.runs(sms, gpu.cc):
        return None
    kernels = " and ".join(f"sm_{sm}{' (Hopper)' if sm.startswith('90') else ''}" for sm in sms)
    return (
        f"FlashAttention 3 ({FA3}) has no kernel for compute capability {cc}: it builds {kernels} kernels"
        + (f" ({fa3.disable_sm80}=TRUE)" if off else ""),
        (
            f"{fa3.evidence.at}: {fa3.evidence.text}",
            f"{fa3.runtime.evidence.at}: {fa3.runtime.evidence.text}",
        ),
        "use FlashAttention 3 on H100/H200 (or 8.x), FA2 or flash-attn-4 elsewhere",
        True,
    )


def _fa4(inst: Install, gpu: _Gpu, cc: str) -> Problem | None:
    b = _builds.load()
    version = inst.version
    fa4 = b.fa4_at(version) if version is not None else (b.fa4[-1] if b.fa4 else None)
    if fa4 is None or gpu.cc[0] in fa4.majors:
        return None
    return (
        f"flash-attn-4 {fa4.version} does not support compute capability {cc} "
        f"(its forward accepts {', '.join(f'{m}.x' for m in fa4.majors)})",
        (f"{fa4.evidence.at}: {fa4.evidence.text}",),
        "use a flash-attn-4 release that supports this GPU, or FlashAttention 2",
        version is not None,
    )


def _key(sm: str) -> int:
    return int(sm.rstrip("a"))


__all__ = ["check"]
