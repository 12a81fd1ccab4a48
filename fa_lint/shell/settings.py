"""What a command says about the machine: a CUDA toolkit it installs with the system's package manager.

``apt-get install cuda-nvcc-12-1``, ``apt install -y cuda-toolkit-12-4``, ``dnf install cuda-toolkit``,
``apt-get install nvidia-cuda-toolkit``: after it, the stage has an nvcc (of that version, where the
package name says one). conda's ``cuda-nvcc`` and ``cuda-toolkit`` are requirements like any other,
read by the conda readers.
"""

from __future__ import annotations

import posixpath
import re

from fa_lint.shell.parse import Word

_MANAGERS = {"apt-get": "apt", "apt": "apt", "yum": "rpm", "dnf": "rpm", "microdnf": "rpm"}
# NVIDIA's repository packages (cuda-nvcc-12-1, cuda-toolkit-12-4, cuda-compiler-12-1,
# cuda-minimal-build-11-8, cuda-12-1) and the distributions' own (nvidia-cuda-toolkit)
_TOOLKIT = re.compile(
    r"^(?:cuda-(?:nvcc|toolkit|compiler|minimal-build)(?:-(\d+)-(\d+))?|cuda-(\d+)-(\d+)|nvidia-cuda-toolkit)"
    r"(?:=\S*)?$"
)


def toolkit(words: list[Word]) -> tuple[Word, str] | None:
    """The CUDA toolkit package an ``apt-get``/``dnf`` install command installs, and its version ("12.1",
    or "" when the name says none), or None."""
    if not words or posixpath.basename(words[0].text) not in _MANAGERS:
        return None
    rest = [w for w in words[1:] if not w.text.startswith("-")]
    if not rest or rest[0].text != "install":
        return None
    for w in rest[1:]:
        m = _TOOLKIT.match(w.text)
        if m:
            major, minor = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            return w, f"{major}.{minor}" if major else ""
    return None
