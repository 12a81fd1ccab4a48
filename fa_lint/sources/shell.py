"""Shell scripts: every ``pip install`` / ``uv pip install`` / ``conda install`` they run, and the GPUs a
Slurm batch script asks for (``#SBATCH --gres=gpu:a100:1``, ``--gpus-per-node=h100:8``).

Job scripts have the schedulers' names (``train.sbatch``, ``job.slurm``: the catalogue's patterns), or
names other tools share (``*.job``, ``*.pbs``): those are read when their head shows a shell script or a
scheduler's directives (``sniff``)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from fa_lint._lazy import Lazy
from fa_lint.model import Parsed, Setting
from fa_lint.syntax.text import TextIndex

NAME = "shell"
# sbatch reads #SBATCH lines before the first command; a GPU type is the part of a GPU request before
# its count: --gres=gpu:a100:2, --gpus=v100:1, --gpus-per-node=h100:8, -G a100:2, --gres=gpu:2080ti:1.
# A bare count names no type (--gres=gpu:2); a type with no count is one GPU (--gres=gpu:a100). A type
# is the site's name (gres.conf Type=): a model number alone (2080ti, 3090) is one too.
_TYPE = r"((?=[\w.-]*[A-Za-z])[\w.-]+|\d{4}[A-Za-z]*)"
_SBATCH = re.compile(
    r"^#SBATCH\b[^\n]*?(?:--gres[= ]gpu:|--gpus(?:-per-(?:node|task|socket))?[= ]|-G ?)"
    rf"{_TYPE}(?::\d+)?(?=[\s,]|$)",
    re.M,
)
# a shell script's first line, or a batch scheduler's directives (Slurm, PBS/Torque, LSF, Grid Engine)
_HEAD = Lazy(r"\A(?:#![^\n]*\b(?:ba|da|k|z)?sh\b|(?:\s*#[^\n]*\n)*\s*#(?:SBATCH|PBS|BSUB|\$) )")


def sniff(head: str, *, complete: bool) -> bool:
    """Whether a ``*.job``/``*.pbs``/``*.qsub``/``*.lsf`` file is a shell job script (its head shows it)."""
    return _HEAD().match(head) is not None


# the memory a job is given per node: --mem=64G (Slurm's default unit is MB; --mem=0 is the node's all)
_SBATCH_MEM = re.compile(r"^#SBATCH\b[^\n]*?--mem[= ]([1-9][0-9]*)([KMGT]?)\b", re.M)
_GB = {"K": 1 / 1024**2, "M": 1 / 1024, "": 1 / 1024, "G": 1, "T": 1024}


def parse(path: str, text: str) -> Iterator[Parsed]:
    # the shell model (tree-sitter) is loaded for a file that is read, not for one that is sniffed
    from fa_lint.shell.scanner import Scanner
    from fa_lint.shell.variables import Scope, State

    index = TextIndex(path, text)
    for m in _SBATCH.finditer(text):
        yield Setting(index.location(m.start(1), m.end(1)), "gpu", "#SBATCH", m.group(1))
    for m in _SBATCH_MEM.finditer(text):
        gb = int(m.group(1)) * _GB[m.group(2)]
        yield Setting(index.location(m.start(1), m.end(2)), "memory", "#SBATCH --mem", f"{gb:g}")
    scanner = Scanner(index, NAME)
    scanner.run(0, len(text), State(Scope()))
    yield from scanner.finish()
