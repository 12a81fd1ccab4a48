"""The CPU architecture an install lands on, where the files say it: aarch64 (Arm) or not known.

flash-attn's setup.py asks for a wheel named for the machine (``get_platform()``:
``linux_{platform.uname().machine}``), and its release workflow builds x86_64 wheels only up to
2.8.3.post1, so on an Arm host pip compiles it. What says the host is Arm:

- a GitHub runner label (``ubuntu-24.04-arm``, ``ubuntu-22.04-arm``; a self-hosted ``ARM64``) or a
  GitLab runner tag with an ``arm64`` word;
- ``FROM --platform=linux/arm64`` on the stage or a stage it is built from;
- a pixi/conda-lock platform ``linux-aarch64`` and a uv environment marker ``platform_machine ==
  'aarch64'`` (declared: one of the platforms a lock serves, so possible);
- a cloud instance family with Arm CPUs (AWS ``g5g``, Google's ``a4x``) and a GPU that only comes with
  one (GH200, GB200, GB300: Grace), from gpus.json.

Nothing here guesses: a label that says nothing about the CPU says nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fa_lint._lazy import Lazy
from fa_lint._records import NamedTuple
from fa_lint.kb import gpus as _gpus
from fa_lint.model import Setting

ARM = "aarch64"
_ARM_LABEL = Lazy(
    r"^(?!macos|windows)(?:ubuntu-\d+\.\d+-arm|[\w.-]*-arm64|arm64|aarch64|linux-aarch64)$", re.I
)
_ARM_PLATFORM = Lazy(r"^linux[-/](?:aarch64|arm64)(?:/v8)?$", re.I)
ARM_MARKER = re.compile(r"platform_machine\s*==\s*['\"](?:aarch64|arm64)['\"]")


class Cpu(NamedTuple):
    arch: str  # "aarch64"
    where: str  # "ci.yml:4:14 (runs-on: ubuntu-24.04-arm)"
    possible: bool  # one of several the files allow, or only declared (a lock's platforms)


def cpus(
    settings: Iterable[Setting], chain: Iterable[str], gpus: Iterable[tuple[_gpus.Gpu, str, bool]]
) -> tuple[Cpu, ...]:
    """What the settings of an environment (and the scopes of its stage chain) say of its CPU."""
    scopes = set(chain)
    out = []
    for s in settings:
        where = f"{s.location} ({s.name}: {s.value})"
        if s.kind == "runner" and (_ARM_LABEL().match(s.value) or _arm_tag(s)):
            out.append(Cpu(ARM, where, s.possible))
        elif s.kind == "platform" and s.name == "FROM --platform":
            if s.scope in scopes and _ARM_PLATFORM().match(s.value):
                out.append(Cpu(ARM, where, s.possible))
        elif s.kind == "platform" and (_ARM_PLATFORM().match(s.value) or ARM_MARKER.search(s.value)):
            out.append(Cpu(ARM, where, True))
        elif s.kind == "instance" and _gpus.instance_arch(s.value) == ARM:
            out.append(Cpu(ARM, where, s.possible))
    for gpu, where, possible in gpus:
        if gpu.cpu == ARM:
            out.append(Cpu(ARM, f"{where}: {gpu.name} comes with an Arm CPU", possible))
    return tuple(dict.fromkeys(out))


def _arm_tag(s: Setting) -> bool:
    """A GitLab runner tag with an ``arm64``/``aarch64`` word (``saas-linux-small-arm64``)."""
    return s.name != "runs-on" and bool(set(re.split(r"[-_.\s]+", s.value.lower())) & {"arm64", "aarch64"})
