"""Job scripts where they are written (issue 39): Slurm's ``*.sbatch``/``*.slurm``, scheduler scripts
under shared names (``*.job``, ``*.pbs``) when their head shows one, and scripts with no extension at
all, found by their first line (``#!/bin/bash``).

The names are the ones public repositories give job scripts most: ``train.slurm`` (442 repositories),
``job.slurm`` (487), ``train.sbatch`` (279), ``job.sbatch`` (122), ``train.job`` (93), ``train.pbs``
(46), ``train.lsf`` (5), ``train.qsub`` (4), counted by exact path in the search index of public GitHub
repositories. Expectations come from what sbatch and flash-attn do: a ``#SBATCH --gres=gpu:2080ti:1``
job runs on an RTX 2080 Ti (Turing, 7.5), which flash-attn 2 refuses; 2.4.2 has no ``block_table``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fa_lint.files import discover, shebang
from tests.conftest import run

_SLURM = (
    "#!/bin/bash\n"
    "#SBATCH --job-name=ft\n"
    "#SBATCH --gres=gpu:2080ti:1\n"
    "module load cuda/12.1\n"
    "pip install torch==2.3.1\n"
    "pip install flash-attn==2.4.2 --no-build-isolation\n"
)


def _codes(r: Any) -> list[tuple[str, int, str]]:
    return sorted((f["path"], f["line"], f["code"]) for f in r.json["findings"])


def test_a_slurm_script_named_explicitly_is_a_shell_script(project: Any) -> None:
    # before: read as a requirements file, a false FAL900 error, and neither the pin nor the GPU seen
    project({"train.slurm": _SLURM})
    r = run("--isolated", "--format", "json", "train.slurm")
    assert _codes(r) == [("train.slurm", 6, "FAL001"), ("train.slurm", 6, "FAL013")]


@pytest.mark.parametrize(
    "name", ["train.sbatch", "job.slurm", "run.job", "submit.pbs", "gpu.lsf", "job.qsub", "train", "submit"]
)
def test_a_walk_finds_job_scripts(project: Any, name: str) -> None:
    project({name: _SLURM})
    r = run("--isolated", "--format", "json", ".")
    assert (name, 6, "FAL001") in _codes(r)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("notes.job", "a job description, not a script\npip install flash-attn==2.4.2\n"),
        ("report.pbs", "<xml>pip install flash-attn==2.4.2</xml>\n"),
        ("tool", "#!/usr/bin/env python3\n# pip install flash-attn==2.4.2\n"),
        ("LICENSE", "#!/bin/bash\npip install flash-attn==2.4.2\n"),  # a name that is never a script
        ("data", "flash-attn==2.4.2\n"),  # no shebang: an extensionless file the walk does not claim
    ],
)
def test_a_walk_leaves_other_files_alone(project: Any, name: str, text: str) -> None:
    project({name: text})
    r = run("--isolated", "--format", "json", ".")
    assert _codes(r) == []


def test_a_shebang_decides_a_file_named_explicitly(project: Any) -> None:
    project(
        {
            "setup_env": "#!/usr/bin/env bash\npip install flash-attn==2.4.2\n",
            "tool": "#!/usr/bin/env python3\nprint('pip install flash-attn==2.4.2')\n",
            "deps": "flash-attn==2.4.2\n",  # no shebang: a requirements file, as before
        }
    )
    only = ("--isolated", "--format", "json", "--select", "FAL001,FAL900")
    assert _codes(run(*only, "setup_env")) == [("setup_env", 2, "FAL001")]
    # another interpreter's script is no dependency file: not read as requirements (no FAL900)
    assert _codes(run(*only, "tool")) == []
    assert _codes(run(*only, "deps")) == [("deps", 1, "FAL001")]


@pytest.mark.parametrize(
    ("line", "program"),
    [
        (b"#!/bin/bash", "bash"),
        (b"#!/usr/bin/env bash", "bash"),
        (b"#! /bin/sh -e", "sh"),
        (b"#!/usr/bin/env -S bash -l", "bash"),
        (b"#!/usr/bin/python3", "python3"),
        (b"# just a comment", None),
    ],
)
def test_the_interpreter_a_shebang_names(line: bytes, program: str | None) -> None:
    assert shebang.interpreter(line) == program


def test_a_walk_reads_only_first_lines_and_only_of_admitted_names(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the cost the walk adds: one read of at most FIRST_LINE bytes per extensionless file whose name the
    # cheap test admits; files with an extension, dotfiles and names that are never scripts: none
    files = {f"src/mod{i}.py": "x = 1\n" for i in range(20)}
    files |= {"LICENSE": "MIT\n", "README": "hi\n", ".envrc": "x\n", "Makefile": "all:\n"}
    files |= {
        "bin/one": "#!/bin/sh\n" + "echo\n" * 10000,
        "bin/two": "#!/usr/bin/env python\n",
        "VERSION2": "1\n",
    }
    root = Path(project(files))
    read: list[str] = []
    real = shebang.first_line

    def counting(path: str) -> bytes:
        read.append(Path(path).name)
        line = real(path)
        assert len(line) <= shebang.FIRST_LINE
        return line

    monkeypatch.setattr(shebang, "first_line", counting)
    found = {t.path: t.source for t in discover.walk(str(root), (), None)}
    assert sorted(read) == ["VERSION2", "one", "two"]
    assert found.get(str(root / "bin/one")) == "shell" and str(root / "bin/two") not in found
