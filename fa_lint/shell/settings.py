"""What a command says about the machine: a CUDA toolkit it installs (the system's package manager,
NVIDIA's runfile, an HPC ``module load cuda/12.1``).

``apt-get install cuda-nvcc-12-1``, ``apt install -y cuda-toolkit-12-4``, ``dnf install cuda-toolkit``,
``apt-get install nvidia-cuda-toolkit``: after it, the stage has an nvcc (of that version, where the
package name says one). conda's ``cuda-nvcc`` and ``cuda-toolkit`` are requirements like any other,
read by the conda readers.
"""

from __future__ import annotations

import re

from fa_lint._lazy import Lazy
from fa_lint.shell.parse import Word, basename

_MANAGERS = {"apt-get": "apt", "apt": "apt", "yum": "rpm", "dnf": "rpm", "microdnf": "rpm"}
# NVIDIA's repository packages (cuda-nvcc-12-1, cuda-toolkit-12-4, cuda-compiler-12-1,
# cuda-minimal-build-11-8, cuda-12-1) and the distributions' own (nvidia-cuda-toolkit)
_TOOLKIT = re.compile(
    r"^(?:cuda-(?:nvcc|toolkit|compiler|minimal-build)(?:-(\d+)-(\d+))?|cuda-(\d+)-(\d+)|nvidia-cuda-toolkit)"
    r"(?:=\S*)?$"
)


_MODULE = Lazy(r"^(?:cuda|CUDA|cudatoolkit|nvhpc)(?:/(\d+)\.(\d+)[\w.-]*)?$")
# NVIDIA's runfile installer: sh cuda_12.1.0_530.30.02_linux.run --toolkit --silent
_RUNFILE = Lazy(r"(?:^|/)cuda_(\d+)\.(\d+)(?:\.\d+)?_[\w.]*linux[\w.-]*\.run$")


def toolkit(words: list[Word], head: str | None = None) -> tuple[Word, str, str] | None:
    """The CUDA toolkit a command installs: a package of the system's package manager
    (``apt-get install cuda-nvcc-12-1``) or NVIDIA's runfile (``sh cuda_12.1.0_..._linux.run``), its
    version ("12.1", or "" when the name says none), and how ("apt", "runfile"); or None."""
    if not words:
        return None
    for w in words[:2]:
        m = _RUNFILE().search(w.text) if ".run" in w.text else None
        if m:
            return w, f"{m.group(1)}.{m.group(2)}", "runfile"
    head = basename(words[0].text) if head is None else head
    if head in ("module", "ml"):  # HPC environment modules: module load cuda/12.1
        return _module(words)
    if head not in _MANAGERS:
        return None
    rest = [w for w in words[1:] if not w.text.startswith("-")]
    if not rest or rest[0].text != "install":
        return None
    for w in rest[1:]:
        m = _TOOLKIT.match(w.text)
        if m:
            major, minor = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            return w, f"{major}.{minor}" if major else "", _MANAGERS[basename(words[0].text)]
    return None


def _module(words: list[Word]) -> tuple[Word, str, str] | None:
    """The CUDA toolkit ``module load cuda/12.1`` loads."""
    for w in words[1:]:
        m = _MODULE().match(w.text)
        if m:
            return w, f"{m.group(1)}.{m.group(2)}" if m.group(1) else "", "module"
    return None
