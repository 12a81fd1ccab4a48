#!/usr/bin/env python3
"""How fast fa-lint is, as ratios against a bare standard-library parse of the same input, in one run.

    python benchmarks/bench.py [--repeat N] [--only WORD] [--checkout DIR]

Every number is a whole process, started afresh as a user or pre-commit starts one: the ``fa-lint``
console script against ``python -c "import tomllib, json, shlex, packaging.requirements; ..."``,
which reads the same files with the standard library (tomllib for TOML, json for JSON, shlex for
each Dockerfile RUN, ``packaging.requirements.Requirement`` for each requirement line). Both run in
a fresh virtual environment where fa-lint is installed as a wheel installs it (see ``install``),
alternately, ``--repeat`` times; the table shows medians and the spread (the slowest run of a row
over its fastest). Time is the child's CPU time (user + system, from ``wait4``): on a machine shared
with other jobs, wall time also counts the waits for a free core, which have nothing to do with
either program; wall-clock medians are printed beside it. Peak memory is each process's
``ru_maxrss`` over a bare interpreter's (``python -c pass``). docs/performance.md has the targets
and the last run.

Exit status 0 when every row meets its target (issue 14), 1 otherwise.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import venv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

IMPORTS = "import tomllib, json, shlex, packaging.requirements as pr, os, sys\n"

# What a stdlib reader does with each kind of input: the cheapest parse any checker needs anyway.
READ = """
def reqs(text):
    out = []
    for line in text.replace("\\\\\\n", " ").splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith(("#", "-")):
            out.append(pr.Requirement(line.split(" --", 1)[0]))
    return out

def toml(text):
    doc = tomllib.loads(text)
    project = doc.get("project", {})
    deps = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        deps += extra
    for group in doc.get("dependency-groups", {}).values():
        deps += [d for d in group if isinstance(d, str)]
    return [pr.Requirement(d) for d in deps]

def read(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if path.endswith(".toml"):
        return toml(text)
    if path.endswith(".lock") and text.lstrip().startswith("{"):
        return json.loads(text)
    if path.endswith(".lock"):
        return tomllib.loads(text)
    if os.path.basename(path) == "Dockerfile":
        text = text.replace("\\\\\\n", " ")
        return [shlex.split(line[4:]) for line in text.splitlines() if line.startswith("RUN ")]
    return reqs(text)

def walk(root):
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in sorted(fs)]

paths = [q for p in sys.argv[1:] for q in (walk(p) if os.path.isdir(p) else [p])]
parsed = [read(p) for p in paths]
"""
TOMLLIB = "import sys, tomllib\ntomllib.loads(open(sys.argv[1], encoding='utf-8').read())"
# The floor for a Python-heavy repository (issue 30): every file read whole, once, and searched for the
# words the code layer needs (fa_lint/code/prefilter.py); the requirements file parsed as READ does. The
# search is the quickest there is in Python: a substring test of the pieces the words share, then of the
# words that hold a piece the bytes hold (prefilter.wanted, written out; a pattern of the words, trying
# each word at each offset, is slower than all of fa-lint, and a floor no checker could reach is no floor).
SEARCH = """
BY_PIECE = tuple((p, tuple(w for w in {words!r} if p in w)) for p in {pieces!r})

def search(data):
    return any(piece in data and any(w in data for w in words) for piece, words in BY_PIECE)
"""
FLOOR = """
import os, sys, packaging.requirements as pr
found = []
for d, _, fs in os.walk(sys.argv[1]):
    for f in sorted(fs):
        path = os.path.join(d, f)
        with open(path, "rb") as fh:
            data = fh.read()
        if f.endswith(".py"):
            found.append(search(data))
        else:
            lines = data.decode().splitlines()
            found += [pr.Requirement(x) for x in lines if x and not x.startswith(("#", "-"))]
"""
# The floor for a real tree (issue 41): every file read once; a Python file searched for the code
# layer's words; the rest parsed as the standard library parses it: tomllib, packaging for requirement
# lines, shlex for each line of a shell script or Dockerfile. The standard library has no YAML parser:
# a YAML file is composed by libyaml (PyYAML's C composer, the cheapest reading of YAML there is) where
# PyYAML has it, and only read where not.
REAL_FLOOR = """
import os, shlex, sys, tomllib, packaging.requirements as pr
try:
    import yaml
    compose = lambda text: yaml.compose_all(text, Loader=yaml.CSafeLoader)
except (ImportError, AttributeError):
    compose = lambda text: ()

def reqs(text):
    lines = (x.split(" #", 1)[0].strip() for x in text.splitlines())
    return [pr.Requirement(x) for x in lines if x and not x.startswith(("#", "-"))]

def read(path, name):
    with open(path, "rb") as fh:
        data = fh.read()
    if name.endswith(".py"):
        return search(data)
    text = data.decode()
    if name.endswith((".yml", ".yaml")):
        return list(compose(text))
    if name.endswith(".toml"):
        return tomllib.loads(text)
    if name.endswith(".txt"):
        return reqs(text)
    return [shlex.split(line, comments=True) for line in text.replace("\\\n", " ").splitlines()]

found = [read(os.path.join(d, f), f) for d, _, fs in os.walk(sys.argv[1]) for f in sorted(fs)]
"""
# What pip writes as the console script: what pre-commit and a user run.
SCRIPT = """#!{python}
import re
import sys
from {module} import {function}
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit({function}())
"""
REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Commands:
    fa_lint: list[str]
    baseline: list[str]
    tomllib: list[str]
    bare: list[str]
    floor: list[str]
    real_floor: list[str]


def install(folder: Path, checkout: Path = REPO) -> Commands:
    """fa-lint installed in a fresh virtual environment as a wheel installs it (the package, compiled,
    and the console script), with this interpreter's packages as its dependencies; ``checkout``: the
    working tree whose ``fa_lint`` is installed (another release's, to compare with, in
    ``benchmarks/wholerepo.py``).

    Not this checkout's development install: its editable-install hook runs in every process of its
    environment, baseline included, and imports pathlib, fnmatch and urllib.parse before either side
    starts -- a tax on both that no user pays, and that flatters every ratio.
    """
    venv.EnvBuilder(symlinks=os.name != "nt").create(folder)
    python = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    found = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    site = Path(found.stdout.strip())
    deps = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    (site / "dependencies.pth").write_text("".join(f"{d}\n" for d in sorted(deps)), encoding="utf-8")
    package = site / "fa_lint"
    shutil.copytree(checkout / "fa_lint", package, ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(package, quiet=1)  # as pip does when it installs a wheel
    script = python.with_name("fa-lint")
    with open(checkout / "pyproject.toml", "rb") as f:  # the entry point pyproject.toml declares
        module, _, function = tomllib.load(f)["project"]["scripts"]["fa-lint"].partition(":")
    script.write_text(SCRIPT.format(python=python, module=module, function=function), encoding="utf-8")
    script.chmod(0o755)
    py = str(python)
    from fa_lint.code.prefilter import PIECES, WORDS

    search = SEARCH.format(words=WORDS, pieces=PIECES)
    floor = [py, "-c", search + FLOOR]
    real = [py, "-c", search + REAL_FLOOR]
    baseline = [py, "-c", IMPORTS + READ]
    return Commands([str(script)], baseline, [py, "-c", TOMLLIB], [py, "-c", "pass"], floor, real)


# ---- inputs ---------------------------------------------------------------------------------------

PYPROJECT = """\
[build-system]
requires = ["setuptools>=69", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = [
    "torch>=2.3,<2.6",
    "transformers>=4.44",
    "accelerate>=0.33",
    "numpy<2",
    "einops",
    "safetensors>=0.4.3",
]

[project.optional-dependencies]
gpu = ["flash-attn>=2.5.8", "triton>=3.0"]
serve = ["fastapi>=0.110", "uvicorn[standard]>=0.29"]

[dependency-groups]
dev = ["pytest>=8", "ruff>=0.6", {{ include-group = "lint" }}]
lint = ["mypy>=1.10"]

[tool.ruff]
line-length = 100
"""

TYPICAL = {  # a repository's ten dependency files, as a typical ML project has them
    "pyproject.toml": PYPROJECT.format(name="app"),
    "requirements.txt": "# pinned for the training cluster\n-c constraints.txt\n-r requirements/base.txt\n"
    "torch==2.4.0\ntransformers==4.44.2\nflash-attn==2.6.3 ; sys_platform == 'linux'\naccelerate==0.33.0\n",
    "requirements/base.txt": "numpy==1.26.4\nsafetensors==0.4.4\neinops==0.8.0\ntqdm>=4.66\nrequests>=2.32\n",
    "requirements-dev.txt": "-r requirements.txt\npytest==8.3.2\nruff==0.6.2\nmypy==1.11.1\n",
    "requirements-gpu.txt": "--extra-index-url https://download.pytorch.org/whl/cu121\n-c constraints.txt\n"
    "torch==2.4.0+cu121\nflash-attn>=2.5.8,<2.7\ntriton==3.0.0\n",
    "constraints.txt": "urllib3<3\nflash-attn!=2.6.0\nprotobuf<5\n",
    "docs/requirements.txt": "sphinx==7.4.7\nfuro==2024.8.6\nmyst-parser>=3\n",
    "tests/requirements.txt": "-r ../requirements-dev.txt\nhypothesis>=6.100\npytest-xdist==3.6.1\n",
    "services/api/pyproject.toml": PYPROJECT.format(name="api"),
    "services/worker/requirements.txt": "-c ../../constraints.txt\ncelery[redis]==5.4.0\n"
    "flash-attn==2.5.9.post1\ntorch==2.3.1\n",
}


def typical(folder: Path, n: int = 0) -> list[str]:
    """The ten files; ``n`` > 0 makes them the n-th service of a monorepo, with pins of its own."""
    for name, text in TYPICAL.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        own = text
        if n and name.endswith(".toml"):
            own = text.replace('"einops",', f'"einops", "svc{n}-client~={n % 17}.{n % 5}",')
        elif n:
            own += f"svc{n}-{len(name)}=={n % 13}.{n % 7}.{n % 3}\n"
        (folder / name).write_text(own, encoding="utf-8")
    return list(TYPICAL)  # named, as pre-commit names the files of a commit


def uv_lock(folder: Path, packages: int = 3000) -> list[str]:
    """A uv.lock as uv writes it: every entry with its source, dependencies, sdist and wheels."""
    out = ['version = 1\nrequires-python = ">=3.10"\n']
    special = {10: ("flash-attn", "2.4.2"), 20: ("torch", "2.4.0"), 30: ("transformers", "4.44.2")}
    for i in range(packages):
        name, version = special.get(i, (f"pkg-{i}", f"1.{i % 50}.{i % 7}"))
        file = name.replace("-", "_")
        out.append(
            f'\n[[package]]\nname = "{name}"\nversion = "{version}"\n'
            f'source = {{ registry = "https://pypi.org/simple" }}\n'
            f'dependencies = [\n    {{ name = "pkg-{(i + 1) % packages}" }},\n'
            f'    {{ name = "pkg-{(i + 7) % packages}", marker = "sys_platform == \'linux\'" }},\n]\n'
            f'sdist = {{ url = "https://files.pythonhosted.org/packages/{file}-{version}.tar.gz", '
            f'hash = "sha256:{i:064x}", size = {1000 + i} }}\n'
            f"wheels = [\n"
            f'    {{ url = "https://files.pythonhosted.org/packages/{file}-{version}-py3-none-any.whl", '
            f'hash = "sha256:{i + 1:064x}", size = {2000 + i} }},\n]\n'
        )
    (folder / "uv.lock").write_text("".join(out), encoding="utf-8")
    return ["uv.lock"]


def big_uv_lock(folder: Path) -> list[str]:
    """A uv.lock of 750 KB (the memory row): as many entries as fit."""
    size = [len((folder / uv_lock(folder, packages=n)[0]).read_bytes()) for n in (1, 1001)]
    uv_lock(folder, packages=1 + 1000 * (750_000 - size[0]) // (size[1] - size[0]))
    return ["uv.lock"]


def pipfile_lock(folder: Path, packages: int = 3000) -> list[str]:
    special = {10: ("flash-attn", "2.4.2"), 20: ("torch", "2.4.0"), 30: ("transformers", "4.44.2")}
    default = {}
    for i in range(packages):
        name, version = special.get(i, (f"pkg-{i}", f"1.{i % 50}.{i % 7}"))
        default[name] = {
            "hashes": [f"sha256:{i:064x}", f"sha256:{i + 1:064x}"],
            "index": "pypi",
            "markers": "python_version >= '3.8'",
            "version": f"=={version}",
        }
    doc = {
        "_meta": {"hash": {"sha256": "0" * 64}, "pipfile-spec": 6, "requires": {"python_version": "3.11"}},
        "default": default,
        "develop": {"pytest": {"hashes": ["sha256:" + "1" * 64], "version": "==8.3.2"}},
    }
    (folder / "Pipfile.lock").write_text(json.dumps(doc, indent=4, sort_keys=True), encoding="utf-8")
    return ["Pipfile.lock"]


def dockerfile(folder: Path, runs: int = 500) -> list[str]:
    lines = ["FROM pytorch/pytorch:2.3.1-cuda12.1-cudnn8-devel\n", "ARG FLASH_ATTN=2.4.2\n"]
    for i in range(runs - 1):
        if i % 3 == 0:
            lines.append(
                f"RUN apt-get update && apt-get install -y --no-install-recommends lib{i}-dev \\\n"
                f"    && rm -rf /var/lib/apt/lists/*\n"
            )
        else:
            lines.append(f'RUN pip install --no-cache-dir "pkg-{i}>=1.{i % 9}" pkg-extra-{i}==2.0.{i % 5}\n')
    lines.append("RUN pip install --no-build-isolation flash-attn==${FLASH_ATTN}\n")
    (folder / "Dockerfile").write_text("".join(lines), encoding="utf-8")
    return ["Dockerfile"]


def dockerfile_continued(folder: Path, runs: int = 500, tail: str = "") -> list[str]:
    """Each RUN a ``pip install ... && \\`` continuation, as issue 23 measured it: two installs a RUN,
    the backslash-newline joined before the shell reads it (``tail``: a third command after them)."""
    lines = ["FROM nvidia/cuda:12.1.1-devel-ubuntu22.04\n", "ARG FLASH_ATTN=2.4.2\n"]
    for i in range(runs - 1):
        second = f"    pip install pkg-extra-{i}==2.0.{i % 5}"
        lines.append(
            f'RUN pip install --no-cache-dir "pkg-{i}>=1.{i % 9}" && \\\n'
            + (f"{second} && \\\n    {tail}\n" if tail else f"{second}\n")
        )
    lines.append("RUN pip install torch==2.3.1 && \\\n")
    lines.append("    pip install --no-build-isolation flash-attn==${FLASH_ATTN}\n")
    (folder / "Dockerfile").write_text("".join(lines), encoding="utf-8")
    return ["Dockerfile"]


def dockerfile_cleaned(folder: Path) -> list[str]:
    """As ``dockerfile_continued``, each RUN ending with a third command: ``rm -rf`` of pip's cache."""
    return dockerfile_continued(folder, tail="rm -rf /root/.cache/pip")


# A file that takes transformers' paged path (and calls flash-attn itself): what the code layer parses.
PAGED = """from flash_attn import flash_attn_with_kvcache
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("org/model", attn_implementation="flash_attention_2")
outputs = model.generate_batch(inputs=[[1, 2, 3]])


def decode(q, k_cache, v_cache, lengths, blocks):
    return flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lengths, block_table=blocks)
"""


def python_repo(paged: int) -> Callable[[Path], list[str]]:
    """5,000 Python modules of real size and one requirements file; ``paged`` of them take the paged path."""

    def make(folder: Path) -> list[str]:
        (folder / "requirements.txt").write_text("torch==2.4.0\ntransformers==5.14.0\nflash-attn==2.6.3\n")
        for i in range(5000):
            path = folder / "src" / f"pkg{i // 100:02d}" / f"mod{i % 100:02d}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(PAGED if i < paged else real_module(i), encoding="utf-8")
        return ["."]

    return make


# Python modules of real size: the median over the 23 repositories of ../shared/wholerepo of each one's
# median Python file (git ls-files '*.py' at the judged commit) is 4,415 bytes (axolotl's; the 8,362 files'
# own median is 5,956 bytes, their geometric mean 4,143). A module is a head and blocks of a project's
# own helpers (a config dataclass, a batching generator, padding, a schedule), as many as reach the size.
REAL_SIZE = 4_415
REAL_HEAD = '''"""{name}: data loading and batching helpers for the training loop."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import torch

LOG = logging.getLogger(__name__)
'''
REAL_BLOCK = '''

@dataclass
class Stage{n}Config:
    """Settings of stage {n}, read from the run's YAML file."""

    batch_size: int = {n}
    max_length: int = 2048
    shuffle: bool = True
    extra: dict[str, float] = field(default_factory=dict)


def stage{n}_batches(items: Iterable[list[int]], config: Stage{n}Config) -> Iterator[list[list[int]]]:
    """Groups token lists into batches of at most ``batch_size``."""
    batch: list[list[int]] = []
    for item in items:
        if len(item) > config.max_length:
            LOG.warning("truncating a sample of %d tokens to %d", len(item), config.max_length)
            item = item[: config.max_length]
        batch.append(item)
        if len(batch) == config.batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


def stage{n}_padded(batch: list[list[int]], pad_id: int = 0) -> torch.Tensor:
    width = max(len(x) for x in batch)
    out = torch.full((len(batch), width), pad_id, dtype=torch.long)
    for row, ids in enumerate(batch):
        out[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
    return out


def stage{n}_schedule(step: int, warmup: int = 100, total: int = 10_000) -> float:
    # linear warmup, then cosine decay to a tenth of the peak
    if step < warmup:
        return step / max(1, warmup)
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress))
'''
# What one module in six of a real tree has: a model loaded with an attention implementation (a word of
# the code layer's, so the file is parsed).
REAL_WORD = """

def load_model(name: str, dtype: torch.dtype = torch.bfloat16) -> torch.nn.Module:
    from transformers import AutoModelForCausalLM

    attention = "flash_attention_2"
    return AutoModelForCausalLM.from_pretrained(name, torch_dtype=dtype, attn_implementation=attention)
"""


def real_module(i: int, word: bool = False) -> str:
    """A module of about REAL_SIZE bytes; ``word``: with a use of the code layer's."""
    parts = [REAL_HEAD.format(name=f"module {i}"), REAL_WORD if word else ""]
    n = 0
    while sum(map(len, parts)) < REAL_SIZE:
        parts.append(REAL_BLOCK.format(n=i * 10 + n))
        n += 1
    return "".join(parts)


# A tree of the shape of axolotl's (067b021, one of the 23 of ../shared/wholerepo: 895 Python files, 285
# YAML files of which 220 are training configs that set attn_implementation, 12 workflows, 10 shell
# scripts, 6 Dockerfiles; 49 Python files with a word of the code layer's), written here: hundreds of
# each kind, one Python file in six with a word.
REAL_CONFIG = """base_model: org/model-{i}
model_type: AutoModelForCausalLM
tokenizer_type: AutoTokenizer

load_in_8bit: false
load_in_4bit: {quant}
strict: false

datasets:
  - path: org/dataset-{i}
    type: chat_template
    split: train[:{pct}%]
    field_messages: conversations
dataset_prepared_path: last_run_prepared
val_set_size: 0.05
output_dir: ./outputs/run-{i}

sequence_len: {seq}
sample_packing: true
pad_to_sequence_len: true

adapter: {adapter}
lora_r: 32
lora_alpha: 16
lora_dropout: 0.05
lora_target_linear: true

gradient_accumulation_steps: 4
micro_batch_size: 2
num_epochs: 1
optimizer: adamw_torch_fused
lr_scheduler: cosine
learning_rate: 0.0002

bf16: auto
tf32: false
gradient_checkpointing: true
logging_steps: 1
{attention}

warmup_ratio: 0.1
evals_per_epoch: 4
saves_per_epoch: 1
weight_decay: 0.0
special_tokens:
  pad_token: "<|end_of_text|>"
"""
REAL_WORKFLOW = """name: tests-{i}
on:
  push:
    branches: [main]
  pull_request:
    paths: ["**.py", "requirements.txt", ".github/workflows/*.yml"]
  workflow_dispatch:

permissions:
  contents: read

concurrency:
  group: ${{{{ github.workflow }}}}-${{{{ github.ref }}}}
  cancel-in-progress: true

env:
  TRANSFORMERS_CACHE: /tmp/hf
  MAX_JOBS: "4"

jobs:
  test:
    runs-on: ${{{{ matrix.os }}}}
    timeout-minutes: 60
    strategy:
      fail-fast: false
      matrix:
        os: [ubuntu-22.04]
        python_version: ["3.10", "3.11"]
        pytorch_version: ["2.4.1", "2.5.1"]
    steps:
      - name: Check out
        uses: actions/checkout@v4
      - name: Set up Python
        uses: actions/setup-python@v5
        with:
          python-version: ${{{{ matrix.python_version }}}}
          cache: pip
      - name: Install PyTorch
        run: |
          pip3 install torch==${{{{ matrix.pytorch_version }}}} --index-url https://download.pytorch.org/whl/cu121
      - name: Install dependencies
        run: |
          pip3 install --upgrade pip setuptools wheel packaging ninja
          pip3 install -r requirements.txt
          pip3 install --no-build-isolation -e .
          pip3 install --no-build-isolation flash-attn==2.7.4.post1
      - name: Show versions
        run: |
          python -c "import torch; print(torch.__version__)"
          pip3 list | grep -i -E "torch|transformers|flash" || true
      - name: Run tests
        env:
          HF_HUB_OFFLINE: "1"
        run: |
          pytest -v -n4 --durations=20 tests/ --ignore=tests/e2e
      - name: Upload coverage
        if: always()
        uses: codecov/codecov-action@v4
        with:
          files: ./coverage.xml
          flags: unittests-{i}
          fail_ci_if_error: false

  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - run: pip install pre-commit && pre-commit run --all-files
"""
REAL_SCRIPT = """#!/bin/bash
set -euo pipefail

# set up a training machine {i}
export PIP_NO_CACHE_DIR=1
python -m pip install --upgrade pip
pip install torch==2.5.1 torchvision --index-url https://download.pytorch.org/whl/cu124
pip install -r requirements.txt
pip install --no-build-isolation flash-attn==2.7.4.post1
pip install "deepspeed>=0.15" "bitsandbytes>=0.44"
echo "done: $(python -c 'import torch; print(torch.__version__)')"
"""
REAL_DOCKERFILE = """ARG CUDA_VERSION=12.4.1
FROM nvidia/cuda:${{CUDA_VERSION}}-cudnn-devel-ubuntu22.04

ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update && apt-get install -y --no-install-recommends git python3 python3-pip \\
    && rm -rf /var/lib/apt/lists/*
WORKDIR /workspace
COPY requirements.txt .
RUN pip3 install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124
RUN pip3 install -r requirements.txt && pip3 install packaging ninja
RUN MAX_JOBS=4 pip3 install --no-build-isolation flash-attn=={fa}
COPY . .
RUN pip3 install --no-build-isolation -e .
"""
REAL_FILES = {
    "requirements.txt": "packaging\nninja\ntransformers==4.56.2\naccelerate>=1.0\npeft>=0.13\ndatasets>=3.0\n"
    "trl>=0.12\nbitsandbytes>=0.44 ; sys_platform == 'linux'\nflash-attn==2.7.4.post1\nwandb\n",
    "pyproject.toml": '[build-system]\nrequires = ["setuptools>=64", "wheel"]\nbuild-backend = '
    '"setuptools.build_meta"\n\n[project]\nname = "trainer"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
    'dependencies = ["torch>=2.4", "transformers>=4.56", "accelerate>=1.0"]\n\n'
    '[project.optional-dependencies]\nflash-attn = ["flash-attn==2.7.4.post1"]\ndev = ["pytest", "ruff"]\n',
    "docker-compose.yaml": "services:\n  trainer:\n    build:\n      context: .\n      dockerfile: docker/"
    "Dockerfile-0\n    shm_size: 16gb\n    volumes:\n      - ./data:/workspace/data\n",
}


def real_tree(folder: Path) -> list[str]:
    """600 Python modules of real size (100 with a word), 200 training configs (180 setting
    attn_implementation), 12 workflows, 10 shell scripts, 6 Dockerfiles, a requirements file, a
    pyproject and a compose file: walked, as ``fa-lint .`` does."""
    files = dict(REAL_FILES)
    for i in range(600):
        files[f"src/trainer/part{i // 50}/mod{i % 50}.py"] = real_module(i, word=i % 6 == 0)
    for i in range(200):
        attention = "attn_implementation: flash_attention_2" if i % 10 else "flash_attention: true"
        fields = {"quant": str(i % 3 == 0).lower(), "pct": 10 + i % 80, "seq": 2048 << i % 3}
        text = REAL_CONFIG.format(i=i, adapter="lora" if i % 2 else "qlora", attention=attention, **fields)
        files[f"examples/family{i // 20}/config-{i}.yaml"] = text
    for i in range(12):
        files[f".github/workflows/tests-{i}.yml"] = REAL_WORKFLOW.format(i=i)
    for i in range(10):
        files[f"scripts/setup-{i}.sh"] = REAL_SCRIPT.format(i=i)
    for i in range(6):
        files[f"docker/Dockerfile-{i}"] = REAL_DOCKERFILE.format(fa=["2.7.4.post1", "2.6.3"][i % 2])
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return ["."]


def monorepo(copies: int) -> Callable[[Path], list[str]]:
    """``copies`` services, each the typical repository's ten files with pins of its own: walked, as
    ``fa-lint .`` does."""

    def make(folder: Path) -> list[str]:
        for i in range(copies):
            typical(folder / f"svc{i // 100:02d}" / f"s{i % 100:02d}", n=i + 1)
        return ["."]

    return make


# ---- measuring ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float
    rss: int  # KiB


# Each command runs under a small forking parent: Linux keeps the high-water mark of the memory a
# process had before exec, and a child spawned straight from this (larger) process would report this
# process's size instead of its own.
SPAWN = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, use = os.wait4(pid, 0)
wall = time.perf_counter() - start
print(os.waitstatus_to_exitcode(status), wall, use.ru_utime + use.ru_stime, use.ru_maxrss)
"""


def sample(cmd: list[str], cwd: Path) -> Sample:
    proc = subprocess.run(
        [sys.executable, "-S", "-c", SPAWN, *cmd], cwd=cwd, capture_output=True, text=True, check=True
    )
    code, wall, cpu, rss = proc.stdout.split()
    if int(code) not in (0, 1):  # 1: fa-lint found something, as it should here
        raise SystemExit(f"{' '.join(cmd[:3])}... failed in {cwd}: {proc.stderr}")
    return Sample(float(wall), float(cpu), int(rss))


@dataclass
class Series:
    samples: list[Sample]

    def median(self, field: str) -> float:
        return float(statistics.median(getattr(s, field) for s in self.samples))

    def spread(self) -> float:
        cpu = [s.cpu for s in self.samples]
        return max(cpu) / min(cpu)


def measure(pairs: dict[str, tuple[list[str], Path]], repeat: int) -> dict[str, Series]:
    """Every command ``repeat`` times, round robin, so a burst of load hits all of them alike."""
    out = {key: Series([]) for key in pairs}
    for _ in range(repeat):
        for key, (cmd, cwd) in pairs.items():
            out[key].samples.append(sample(cmd, cwd))
    return out


# ---- the table ------------------------------------------------------------------------------------


class Spec(NamedTuple):
    make: Callable[[Path], list[str]]  # writes the input into a folder, returns what fa-lint is given
    target: float  # fa-lint's CPU time over the reader's, at most
    reader: str  # the Commands field that reads the same input: the row's baseline


RATIOS: dict[str, Spec] = {  # label: what the row measures, against what
    "typical repo, 10 small files": Spec(typical, 1.6, "baseline"),
    "uv.lock, 3,000 packages": Spec(uv_lock, 2.0, "baseline"),
    "Pipfile.lock, 3,000 packages": Spec(pipfile_lock, 2.0, "baseline"),
    "Dockerfile, 500 RUN lines": Spec(dockerfile, 2.0, "baseline"),
    "Dockerfile, 500 RUNs of pip install ... && \\": Spec(dockerfile_continued, 2.0, "baseline"),
    "Dockerfile, 500 RUNs of pip, pip, rm -rf": Spec(dockerfile_cleaned, 2.0, "baseline"),
    # issue 30's floor (FLOOR), with modules of real size (issue 41)
    "5,000 .py + requirements": Spec(python_repo(0), 1.5, "floor"),
    "5,000 .py, 5 on the paged path": Spec(python_repo(5), 1.5, "floor"),
    # issue 41: a tree of real shape against the read-once floor (REAL_FLOOR)
    "real tree (axolotl's shape)": Spec(real_tree, 1.5, "real_floor"),
    # issue 41: a ratio to reading and parsing its files (READ), not files per second
    "1,000-file monorepo": Spec(monorepo(100), 2.0, "baseline"),
}
MONOREPO = "1,000-file monorepo"
LINEAR = "10,000 vs 1,000 files"
MEMORY = "peak memory, 750 KB uv.lock"
TARGETS = {LINEAR: 11.0, MEMORY: 2.0}


@dataclass(frozen=True)
class Row:
    label: str
    baseline: str
    ours: str
    result: str
    ok: bool
    spread: float


def ms(series: Series) -> str:
    return f"{series.median('cpu') * 1e3:.0f} ms ({series.median('wall') * 1e3:.0f})"


def ratio_row(label: str, base: Series, ours: Series, target: float) -> Row:
    ratio = ours.median("cpu") / base.median("cpu")
    spread = max(base.spread(), ours.spread())
    return Row(label, ms(base), ms(ours), f"{ratio:.2f}x (<= {target}x)", ratio <= target, spread)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9, help="runs of each command (default 9)")
    ap.add_argument("--only", default="", help="run only the rows whose label contains this")
    ap.add_argument("--checkout", type=Path, default=REPO, help="measure this working tree's fa_lint")
    args = ap.parse_args(argv)
    wanted = [label for label in [*RATIOS, MEMORY] if args.only.lower() in label.lower()]
    with tempfile.TemporaryDirectory() as tmp:
        run = install(Path(tmp) / "venv", args.checkout.resolve())
        pairs: dict[str, tuple[list[str], Path]] = {"bare": (run.bare, Path(tmp))}
        for n, label in enumerate(wanted):
            folder = Path(tmp) / f"input{n}"
            folder.mkdir()
            named = big_uv_lock(folder) if label == MEMORY else RATIOS[label].make(folder)
            reader = run.tomllib if label == MEMORY else getattr(run, RATIOS[label].reader)
            pairs[f"{label}/base"] = ([*reader, *named], folder)
            pairs[f"{label}/ours"] = ([*run.fa_lint, *named], folder)
        found = measure(pairs, args.repeat)
        rows = [
            ratio_row(label, found[f"{label}/base"], found[f"{label}/ours"], RATIOS[label].target)
            for label in wanted
            if label in RATIOS
        ]
        if MONOREPO in wanted:
            rows.append(_linear(run, Path(tmp) / "large", found[f"{MONOREPO}/ours"], args.repeat))
        if MEMORY in wanted:
            rows.append(_memory(found))
    show(rows, args.repeat)
    return 0 if all(row.ok for row in rows) else 1


def _linear(run: Commands, large: Path, ours: Series, repeat: int) -> Row:
    """The monorepo at ten times the files: slow, so fewer runs, after the rest."""
    large.mkdir()
    monorepo(1000)(large)
    big = measure({LINEAR: ([*run.fa_lint, "."], large)}, max(3, repeat // 3))[LINEAR]
    return ratio_row(LINEAR, ours, big, TARGETS[LINEAR])


def _memory(found: dict[str, Series]) -> Row:
    bare = found["bare"].median("rss")
    grown = [found[f"{MEMORY}/{who}"].median("rss") - bare for who in ("base", "ours")]
    ratio = grown[1] / grown[0]
    result = f"{ratio:.2f}x (<= {TARGETS[MEMORY]:.0f}x)"
    base_mib, ours_mib = (f"{kib / 1024:.1f} MiB" for kib in grown)
    return Row(MEMORY, base_mib, ours_mib, result, ratio <= TARGETS[MEMORY], found["bare"].spread())


def show(rows: list[Row], repeat: int) -> None:
    machine = f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
    print(f"{machine}; {repeat} runs of each command (the 10,000 files: a third as many)")
    print("time: median CPU ms (median wall ms); memory: peak RSS over a bare interpreter's;")
    print("spread: the slowest CPU time of a row's runs over the fastest")
    head = f"{'input':<28} {'baseline':>14} {'fa-lint':>16}  {'result (target)':<30} {'':4}  spread"
    print(head)
    print("-" * len(head))
    for r in rows:
        verdict = "PASS" if r.ok else "FAIL"
        print(f"{r.label:<28} {r.baseline:>14} {r.ours:>16}  {r.result:<30} {verdict:4}  {r.spread:.2f}")


if __name__ == "__main__":
    sys.exit(main())
