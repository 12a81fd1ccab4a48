#!/usr/bin/env python3
"""How fast fa-lint is, as ratios against a bare standard-library parse of the same input, in one run.

    python benchmarks/bench.py [--repeat N] [--only WORD]

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
# words the code layer needs (fa_lint/code/prefilter.py); the requirements file parsed as READ does.
FLOOR = """
import os, re, sys, packaging.requirements as pr
WORDS = re.compile(b"|".join(map(re.escape, {words!r})))
found = []
for d, _, fs in os.walk(sys.argv[1]):
    for f in sorted(fs):
        path = os.path.join(d, f)
        with open(path, "rb") as fh:
            data = fh.read()
        if f.endswith(".py"):
            found.append(WORDS.search(data) is not None)
        else:
            lines = data.decode().splitlines()
            found += [pr.Requirement(x) for x in lines if x and not x.startswith(("#", "-"))]
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
    from fa_lint.code.prefilter import WORDS

    floor = [py, "-c", FLOOR.format(words=WORDS)]
    return Commands([str(script)], [py, "-c", IMPORTS + READ], [py, "-c", TOMLLIB], [py, "-c", "pass"], floor)


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


# A small module of a project's own, about nothing fa-lint reads (no word of the code layer's).
MODULE = '''"""Helpers for the {name} pipeline."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)


@dataclass
class Batch{n}:
    ids: list[int]
    scale: float = 1.0

    def normalised(self) -> np.ndarray:
        values = np.asarray(self.ids, dtype=np.float32)
        return values / max(float(values.max(initial=1.0)), 1.0) * self.scale


def collate_{n}(items: list[Batch{n}]) -> list[int]:
    log.debug("collating %d items", len(items))
    return [i for item in items for i in item.ids]
'''
# A file that takes transformers' paged path (and calls flash-attn itself): what the code layer parses.
PAGED = """from flash_attn import flash_attn_with_kvcache
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("org/model", attn_implementation="flash_attention_2")
outputs = model.generate_batch(inputs=[[1, 2, 3]])


def decode(q, k_cache, v_cache, lengths, blocks):
    return flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lengths, block_table=blocks)
"""


def python_repo(paged: int) -> Callable[[Path], list[str]]:
    """5,000 small Python modules and one requirements file; ``paged`` of the modules take the paged path."""

    def make(folder: Path) -> list[str]:
        (folder / "requirements.txt").write_text("torch==2.4.0\ntransformers==5.14.0\nflash-attn==2.6.3\n")
        for i in range(5000):
            path = folder / "src" / f"pkg{i // 100:02d}" / f"mod{i % 100:02d}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                PAGED if i < paged else MODULE.format(name=f"pkg{i // 100}", n=i), encoding="utf-8"
            )
        return ["."]

    return make


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

RATIOS: dict[str, tuple[Callable[[Path], list[str]], float]] = {  # label: (input, target ratio)
    "typical repo, 10 small files": (typical, 1.6),
    "uv.lock, 3,000 packages": (uv_lock, 2.0),
    "Pipfile.lock, 3,000 packages": (pipfile_lock, 2.0),
    "Dockerfile, 500 RUN lines": (dockerfile, 2.0),
    "Dockerfile, 500 RUNs of pip install ... && \\": (dockerfile_continued, 2.0),
    "Dockerfile, 500 RUNs of pip, pip, rm -rf": (dockerfile_cleaned, 2.0),
}
PYTHON = "5,000 .py + requirements"
PYTHON_PAGED = "5,000 .py, 5 on the paged path"
PYTHON_ROWS = {PYTHON: (python_repo(0), 1.5), PYTHON_PAGED: (python_repo(5), 1.5)}  # over FLOOR
MONOREPO = "1,000-file monorepo"
LINEAR = "10,000 vs 1,000 files"
MEMORY = "peak memory, 750 KB uv.lock"
TARGETS = {MONOREPO: 2000.0, LINEAR: 11.0, MEMORY: 2.0}


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
    args = ap.parse_args(argv)
    labels = [*RATIOS, *PYTHON_ROWS, MONOREPO, MEMORY]
    wanted = [label for label in labels if args.only.lower() in label.lower()]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        run = install(Path(tmp) / "venv")
        inputs = {label: RATIOS[label][0] for label in wanted if label in RATIOS}
        inputs |= {label: make for label, (make, _) in PYTHON_ROWS.items()}
        inputs |= {MONOREPO: monorepo(100), LINEAR: monorepo(1000), MEMORY: big_uv_lock}
        pairs: dict[str, tuple[list[str], Path]] = {"bare": (run.bare, Path(tmp))}
        for n, label in enumerate(wanted):
            folder = Path(tmp) / f"input{n}"
            folder.mkdir()
            named = inputs[label](folder)
            reader = run.tomllib if label == MEMORY else run.floor if label in PYTHON_ROWS else run.baseline
            pairs[f"{label}/base"] = ([*reader, *named], folder)
            pairs[f"{label}/ours"] = ([*run.fa_lint, *named], folder)
        found = measure(pairs, args.repeat)
        rows += [
            ratio_row(label, found[f"{label}/base"], found[f"{label}/ours"], RATIOS[label][1])
            for label in wanted
            if label in RATIOS
        ]
        rows += [
            ratio_row(label, found[f"{label}/base"], found[f"{label}/ours"], PYTHON_ROWS[label][1])
            for label in wanted
            if label in PYTHON_ROWS
        ]
        if MONOREPO in wanted:
            base, ours = found[f"{MONOREPO}/base"], found[f"{MONOREPO}/ours"]
            rate = 1000 / ours.median("cpu")
            target = TARGETS[MONOREPO]
            spread = max(base.spread(), ours.spread())
            result = f"{rate:,.0f} files/s (>= {target:,.0f})"
            rows.append(Row(MONOREPO, ms(base), ms(ours), result, rate >= target, spread))
            large = Path(tmp) / "large"  # ten times the files: slow, so fewer runs, after the rest
            large.mkdir()
            inputs[LINEAR](large)
            big = measure({LINEAR: ([*run.fa_lint, "."], large)}, max(3, args.repeat // 3))[LINEAR]
            rows.append(ratio_row(LINEAR, ours, big, TARGETS[LINEAR]))
        if MEMORY in wanted:
            bare = found["bare"].median("rss")
            grown = [found[f"{MEMORY}/{who}"].median("rss") - bare for who in ("base", "ours")]
            ratio = grown[1] / grown[0]
            result = f"{ratio:.2f}x (<= {TARGETS[MEMORY]:.0f}x)"
            base_mib, ours_mib = (f"{kib / 1024:.1f} MiB" for kib in grown)
            ok = ratio <= TARGETS[MEMORY]
            rows.append(Row(MEMORY, base_mib, ours_mib, result, ok, found["bare"].spread()))
    show(rows, args.repeat)
    return 0 if all(row.ok for row in rows) else 1


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
