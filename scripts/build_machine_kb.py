#!/usr/bin/env python3
"""Regenerate fa_lint/kb/builds.json: what each flash-attn release compiles, needs and accepts.

Maintainer script; fa-lint never runs it. For every release in fa_lint/kb/flash_attn.json (built by
scripts/build_kb.py) it reads, from the release's tag in a flash-attention git checkout or from its
sdist, with ``ast`` for Python and small patterns for C++ (never running either):

- ``setup.py``: the ``-gencode`` flags of the CUDA build and the conditions on each (the nvcc version,
  ``FLASH_ATTN_CUDA_ARCHS`` membership), ``cuda_archs()``'s variable and default, the nvcc floor
  ("only supported on CUDA 11.7 and above"), what a missing nvcc does (raise or warn), whether it caps
  ``MAX_JOBS`` by memory, and ``NVCC_THREADS``;
- ``csrc/flash_attn/flash_api.cpp`` (``fmha_api.cpp`` for 1.x): the compute capabilities the kvcache
  (else forward) entry point accepts, from its ``TORCH_CHECK(is_sm...)`` and the ``is_sm*`` it tests;
- ``.github/workflows/publish.yml``: the runner each wheel is built on and the nvcc of each CUDA build,
  so which archs each wheel carries;

and, from the checkout's default branch and tags, FA3 (``hopper/setup.py``, ``hopper/flash_api.cpp``)
and flash-attn-4 (``flash_attn/cute/interface.py`` at each ``fa4-v*`` tag). From the installed torch's
``torch/utils/cpp_extension.py`` (read as text, not imported) it records what torch does with the
arch flags, ``TORCH_CUDA_ARCH_LIST``, ``MAX_JOBS``, a missing ``CUDA_HOME`` and an nvcc that differs
from torch's CUDA.

    python scripts/build_machine_kb.py --repo ../.mirror/Dao-AILab+flash-attention/repo \
        [--sdist-dir sdists/ [--download-sdists]] [--torch PATH/TO/cpp_extension.py] [--output ...]

Every fact carries ``at`` (tag:path:line) and the text it was read from; tests/test_builds.py reads
them again from the checkout. A file shaped in a way this script does not know is an error: it never
guesses.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import importlib.util
import io
import json
import re
import subprocess
import sys
import tarfile
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from gitrepo import git_file
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
SETUP = "setup.py"
WORKFLOW = ".github/workflows/publish.yml"
APIS = ("csrc/flash_attn/flash_api.cpp", "csrc/flash_attn/fmha_api.cpp")
FA3_SETUP = "hopper/setup.py"
FA3_API = "hopper/flash_api.cpp"
FA4_INTERFACE = "flash_attn/cute/interface.py"
SIMPLE = "https://pypi.org/simple/flash-attn/"
GENCODE = re.compile(r"arch=compute_(\d+a?),code=(sm|compute)_(\d+a?)")


class FactsError(Exception):
    """Source shaped in a way this script does not know."""


def fact(where: str, line: int, text: str, **values: Any) -> dict[str, Any]:
    return {**values, "at": f"{where}:{line}", "text": text.strip()}


def line_of(text: str, line: int) -> str:
    return text.splitlines()[line - 1]


# --- setup.py: the archs a CUDA build compiles ------------------------------------------------------


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _version_arg(node: ast.expr) -> str | None:
    """``Version("11.8")`` (or ``parse``) -> "11.8"."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("Version", "parse")
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value
    return None


def _is_archs_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "cuda_archs"


# Conditions that say which build this is, true for every CUDA build fa-lint judges
_BUILD_SWITCHES = {"not SKIP_CUDA_BUILD", "not IS_ROCM", "CUDA_HOME is not None"}


def _condition(test: ast.expr, where: str) -> dict[str, str]:
    """What an ``if`` around a gencode flag requires: {"nvcc": "11.8", "listed": "90"}."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    out: dict[str, str] = {}
    for part in parts:
        text = ast.unparse(part)
        if text in _BUILD_SWITCHES:
            continue
        if (
            isinstance(part, ast.Compare)
            and len(part.ops) == 1
            and isinstance(part.left, ast.Name)
            and part.left.id == "bare_metal_version"
            and isinstance(part.ops[0], ast.GtE)
            and (v := _version_arg(part.comparators[0])) is not None
        ):
            out["nvcc"] = v
        elif (
            isinstance(part, ast.Compare)
            and len(part.ops) == 1
            and isinstance(part.ops[0], ast.In)
            and isinstance(part.left, ast.Constant)
            and isinstance(part.left.value, str)
            and _is_archs_call(part.comparators[0])
        ):
            out["listed"] = part.left.value
        else:
            raise FactsError(f"{where}:{test.lineno}: unknown condition {text!r} on a gencode flag")
    return out


def gencode_archs(text: str, where: str) -> list[dict[str, Any]]:  # noqa: C901 - complexity 11, to split or justify (issue 45)
    """Each ``-gencode arch=...`` the CUDA build passes, and what it needs to be passed."""
    tree = ast.parse(text)
    parents = _parents(tree)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        m = GENCODE.fullmatch(node.value)
        if m is None:
            continue
        needs: dict[str, str] = {}
        child: ast.AST = node
        while child in parents:
            parent = parents[child]
            if isinstance(parent, ast.If):
                if child not in parent.body:
                    raise FactsError(f"{where}:{node.lineno}: a gencode flag in an else branch")
                for key, value in _condition(parent.test, where).items():
                    if key in needs and needs[key] != value:
                        raise FactsError(f"{where}:{node.lineno}: two {key} conditions")
                    needs[key] = value
            elif isinstance(parent, (ast.FunctionDef, ast.While, ast.For, ast.Try)):
                raise FactsError(f"{where}:{node.lineno}: a gencode flag inside {type(parent).__name__}")
            child = parent
        found.append(
            fact(
                where,
                node.lineno,
                line_of(text, node.lineno),
                sm=m.group(3),
                ptx=m.group(2) == "compute",
                nvcc=needs.get("nvcc"),
                listed=needs.get("listed"),
            )
        )
    if not found:
        raise FactsError(f"{where}: no gencode flag")
    return found


def arch_variable(text: str, where: str) -> dict[str, Any] | None:
    """``cuda_archs()``: ``os.getenv("FLASH_ATTN_CUDA_ARCHS", "80;90;100;120").split(";")``."""
    tree = ast.parse(text)
    funcs = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "cuda_archs"]
    if not funcs:
        return None
    ret = funcs[0].body[-1]
    call = ret.value if isinstance(ret, ast.Return) else None
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "split"
        and len(call.args) == 1
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.func.value, ast.Call)
        and ast.unparse(call.func.value.func) in ("os.getenv", "os.environ.get")
        and len(call.func.value.args) == 2
        and all(isinstance(a, ast.Constant) for a in call.func.value.args)
    ):
        raise FactsError(f"{where}:{funcs[0].lineno}: cuda_archs() is not getenv(NAME, DEFAULT).split(SEP)")
    name, default = (a.value for a in call.func.value.args if isinstance(a, ast.Constant))
    return fact(
        where,
        ret.lineno,
        line_of(text, ret.lineno),
        name=name,
        default=default,
        separator=call.args[0].value,
        # setup.py tests '"90" in cuda_archs()': membership of the split list, so an element matches
        # only as written ("9.0", "sm_90", " 90" and "90a" match nothing)
        match="element",
    )


def _raises(node: ast.If) -> bool:
    return any(isinstance(n, ast.Raise) for n in ast.walk(node))


def nvcc_floor(text: str, where: str) -> dict[str, Any]:
    """``if bare_metal_version < Version("11.7"): raise RuntimeError(...)`` (0.2.x: ``if
    int(bare_metal_major) < 11``)."""
    tree = ast.parse(text)
    found = [(n, v) for n in ast.walk(tree) if isinstance(n, ast.If) and (v := _below(n.test)) and _raises(n)]
    floors = {v for _, v in found}
    if len(floors) != 1:
        raise FactsError(f"{where}: {len(floors)} nvcc floors")
    node = found[0][0]
    return fact(where, node.lineno, line_of(text, node.lineno), version=floors.pop())


def _below(test: ast.expr) -> str | None:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Lt)):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Name) and left.id == "bare_metal_version":
        return _version_arg(right)
    if (
        ast.unparse(left) == "int(bare_metal_major)"
        and isinstance(right, ast.Constant)
        and isinstance(right.value, int)
    ):
        return f"{right.value}.0"
    return None


def missing_nvcc(text: str, where: str) -> dict[str, Any]:
    """What setup.py itself does without a CUDA_HOME: ``raise_if_...`` raises, ``check_if_...`` warns."""
    tree = ast.parse(text)
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id in ("raise_if_cuda_home_none", "check_if_cuda_home_none")
    ]
    if not calls:
        raise FactsError(f"{where}: no CUDA_HOME check")
    name = calls[0].func.id  # type: ignore[attr-defined]
    func = next(f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == name)
    does = "raise" if any(isinstance(n, ast.Raise) for n in ast.walk(func)) else "warn"
    return fact(where, calls[0].lineno, line_of(text, calls[0].lineno), does=does)


def extension_at_import(text: str, where: str) -> dict[str, Any]:
    """The ``CUDAExtension(...)`` setup.py builds while it is read, before ``setup()`` runs any command:
    torch's CUDAExtension asks for CUDA_HOME's library folder there (see the torch facts)."""
    tree = ast.parse(text)
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "CUDAExtension"
    ]
    parents = _parents(tree)
    for call in calls:
        child: ast.AST = call
        inside = False
        while child in parents:
            child = parents[child]
            inside = inside or isinstance(child, (ast.FunctionDef, ast.ClassDef))
        if not inside:
            return fact(where, call.lineno, line_of(text, call.lineno), module_level=True)
    raise FactsError(f"{where}: no module-level CUDAExtension")


def per_job(func: ast.AST, text: str, where: str) -> dict[str, Any]:
    """The memory setup.py allows each compile job when it picks MAX_JOBS: the GB it divides the
    free memory by (``int(free_memory_gb / 9)  # each JOB peak memory cost is ~8-9GB ...``)."""
    for n in ast.walk(func):
        if (
            isinstance(n, ast.BinOp)
            and isinstance(n.op, ast.Div)
            and isinstance(n.left, ast.Name)
            and "memory" in n.left.id
            and isinstance(n.right, ast.Constant)
            and isinstance(n.right.value, (int, float))
        ):
            return fact(where, n.lineno, line_of(text, n.lineno), gb=n.right.value)
    raise FactsError(f"{where}: MAX_JOBS picked from memory without a per-job size")


def max_jobs(text: str, where: str) -> dict[str, Any]:
    """Whether setup.py picks MAX_JOBS itself (by free memory) when it is unset."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Subscript)
            and ast.unparse(node.targets[0]) == "os.environ['MAX_JOBS']"
        ):
            func = next(
                f
                for f in ast.walk(tree)
                if isinstance(f, ast.FunctionDef) and any(n is node for n in ast.walk(f))
            )
            memory = next(
                (n for n in ast.walk(func) if isinstance(n, ast.Attribute) and n.attr == "virtual_memory"),
                None,
            )
            if memory is None:
                raise FactsError(f"{where}:{node.lineno}: MAX_JOBS set without reading memory")
            found = fact(where, memory.lineno, line_of(text, memory.lineno), capped=True)
            return {**found, "per_job": per_job(func, text, where)}
    if "MAX_JOBS" in text:
        raise FactsError(f"{where}: MAX_JOBS named but never set")
    return {"capped": False, "at": f"{where}", "text": "setup.py never sets MAX_JOBS"}


def nvcc_threads(text: str, where: str) -> dict[str, Any]:
    """``--threads N`` of every nvcc: N from NVCC_THREADS (with a default) or fixed."""
    tree = ast.parse(text)
    func = next(
        (f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "append_nvcc_threads"),
        None,
    )
    if func is None:
        return {"env": False, "default": None, "at": where, "text": "no append_nvcc_threads"}
    for node in ast.walk(func):
        if (
            isinstance(node, ast.BoolOp)
            and isinstance(node.op, ast.Or)
            and ast.unparse(node.values[0]) == "os.getenv('NVCC_THREADS')"
            and isinstance(node.values[1], ast.Constant)
        ):
            return fact(
                where, node.lineno, line_of(text, node.lineno), env=True, default=node.values[1].value
            )
    for node in ast.walk(func):
        if isinstance(node, ast.List):
            items = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if items[:1] == ["--threads"] and len(items) == 2:
                return fact(where, node.lineno, line_of(text, node.lineno), env=False, default=items[1])
    raise FactsError(f"{where}:{func.lineno}: append_nvcc_threads shaped in an unknown way")


# --- flash_api.cpp: the GPUs the kernels accept at run time --------------------------------------

_DEF = re.compile(r"^\s*bool\s+(is_sm\w*)\s*=\s*([^;]+);", re.M)
_CHECK = re.compile(r"TORCH_CHECK\(\s*(is_sm\w*(?:\s*\|\|\s*is_sm\w*)*)\s*[,)]")
_TERM = re.compile(r"^(?:dprops->|cc_)(major|minor)\s*(==|>=|>|<=|<)\s*(\d+)$")
_FUNC = re.compile(r"^[A-Za-z_][\w:<>,\s*&]*?\b(mha_fwd_kvcache|mha_fwd)\s*\(", re.M)


def runtime_check(text: str, where: str) -> dict[str, Any]:
    """The capabilities ``mha_fwd_kvcache`` (``mha_fwd`` where it has none) accepts, as a disjunction of
    conjunctions of (major|minor, op, number)."""
    funcs = {m.group(1): m for m in _FUNC.finditer(text)}
    if not funcs:
        raise FactsError(f"{where}: no mha_fwd")
    start = funcs.get("mha_fwd_kvcache", funcs.get("mha_fwd"))
    assert start is not None
    body = text[start.start() :]
    check = _CHECK.search(body)
    if check is None:
        raise FactsError(f"{where}: no TORCH_CHECK(is_sm...) in {start.group(1)}")
    offset = start.start() + check.start()
    defs = {m.group(1): m for m in _DEF.finditer(text, start.start(), offset)}
    anyof = []
    lines = {}
    for name in (n.strip() for n in check.group(1).split("||")):
        d = defs.get(name)
        if d is None:
            raise FactsError(f"{where}: {name} is not defined before its check")
        terms = []
        for term in d.group(2).split("&&"):
            t = _TERM.match(term.strip())
            if t is None:
                raise FactsError(f"{where}: unknown term {term.strip()!r} in {name}")
            terms.append([t.group(1), t.group(2), int(t.group(3))])
        anyof.append(terms)
        lines[name] = text.count("\n", 0, d.start(1)) + 1
    line = text.count("\n", 0, offset) + 1
    return fact(
        where,
        line,
        line_of(text, line),
        function=start.group(1),
        any_of=anyof,
        defined={n: fact(where, ln, line_of(text, ln)) for n, ln in lines.items()},
    )


# --- publish.yml: the wheels each CUDA build of the matrix carries ---------------------------------


def _matrix(text: str, where: str) -> tuple[yaml.MappingNode, yaml.MappingNode]:
    root = yaml.compose(text)
    job = None
    if isinstance(root, yaml.MappingNode):
        jobs = next((v for k, v in root.value if k.value == "jobs"), None)
        if isinstance(jobs, yaml.MappingNode):
            job = next((v for k, v in jobs.value if k.value == "build_wheels"), None)
    if not isinstance(job, yaml.MappingNode):
        raise FactsError(f"{where}: no jobs.build_wheels")
    strategy = next((v for k, v in job.value if k.value == "strategy"), None)
    matrix = (
        next((v for k, v in strategy.value if k.value == "matrix"), None)
        if isinstance(strategy, yaml.MappingNode)
        else None
    )
    if not isinstance(matrix, yaml.MappingNode):
        raise FactsError(f"{where}: no build_wheels matrix")
    return job, matrix


def _axis(matrix: yaml.MappingNode, key: str, where: str) -> tuple[list[str], int]:
    for k, v in matrix.value:
        if k.value == key and isinstance(v, yaml.SequenceNode):
            return [str(n.value) for n in v.value], k.start_mark.line + 1
    raise FactsError(f"{where}: the matrix has no {key}")


def nvcc_of(cuda: str) -> str:
    """A matrix CUDA value as the nvcc version it installs: '11.8.0' -> '11.8', '113' -> '11.3'."""
    if re.fullmatch(r"\d+\.\d+(\.\d+)?", cuda):
        return ".".join(cuda.split(".")[:2])
    if re.fullmatch(r"\d{3}", cuda):
        return f"{cuda[:2]}.{cuda[2]}"
    raise FactsError(f"CUDA {cuda!r} is not a version")


def wheel_builds(text: str, where: str, archs: list[dict[str, Any]], variable: dict[str, Any] | None) -> Any:
    """The runner each wheel is built on and, per CUDA of the matrix, the archs it compiles."""
    job, matrix = _matrix(text, where)
    if any(k.value == "container" for k, _ in job.value):
        raise FactsError(f"{where}: build_wheels runs in a container: its OS is not the runner's")
    runs_on = next((v for k, v in job.value if k.value == "runs-on"), None)
    if not (isinstance(runs_on, yaml.ScalarNode) and runs_on.value == "${{ matrix.os }}"):
        raise FactsError(f"{where}: build_wheels does not run on matrix.os")
    runners, os_line = _axis(matrix, "os", where)
    cudas, cuda_line = _axis(matrix, "cuda-version", where)
    lines = text.splitlines()
    install = next(
        (i for i, s in enumerate(lines) if re.search(r"cuda: \$\{\{ matrix\.cuda-version \}\}", s)), None
    )
    if install is None:
        install = next(
            (i for i, s in enumerate(lines) if "cu${{ matrix.cuda-version }}-${{ runner.os }}.sh" in s), None
        )
    if install is None:
        raise FactsError(f"{where}: no step installs the matrix CUDA")
    build = next((i for i, s in enumerate(lines) if "setup.py bdist_wheel" in s), None)
    if build is None:
        raise FactsError(f"{where}: no setup.py bdist_wheel")
    if variable is not None and variable["name"] in text:
        raise FactsError(f"{where}: the workflow sets {variable['name']}")
    listed = variable["default"].split(variable["separator"]) if variable else None
    builds = []
    for cuda in cudas:
        nvcc = Version(nvcc_of(cuda))
        sms = [
            a["sm"]
            for a in archs
            if (a["nvcc"] is None or nvcc >= Version(a["nvcc"]))
            and (a["listed"] is None or (listed is not None and a["listed"] in listed))
        ]
        builds.append({"cuda": cuda, "nvcc": str(nvcc), "sm": sms})
    return {
        "runners": runners,
        "builds": builds,
        "evidence": {
            "os": fact(where, os_line, lines[os_line - 1]),
            "cuda": fact(where, cuda_line, lines[cuda_line - 1]),
            "install": fact(where, install + 1, lines[install]),
            "build": fact(where, build + 1, lines[build]),
        },
    }


# --- one release -----------------------------------------------------------------------------------


def release_facts(version: str, source: str, files: dict[str, str | None], where: str) -> dict[str, Any]:
    setup = files.get(SETUP)
    if setup is None:
        raise FactsError(f"{where}: no {SETUP}")
    at = f"{where}:{SETUP}"
    archs = gencode_archs(setup, at)
    variable = arch_variable(setup, at)
    api_path = next((p for p in APIS if files.get(p) is not None), None)
    if api_path is None:
        raise FactsError(f"{where}: no flash_api.cpp or fmha_api.cpp")
    api = files[api_path]
    assert api is not None
    workflow = files.get(WORKFLOW)
    return {
        "version": version,
        "source": source,
        "archs": archs,
        "arch_variable": variable,
        "nvcc_floor": nvcc_floor(setup, at),
        "missing_nvcc": missing_nvcc(setup, at),
        "extension": extension_at_import(setup, at),
        "max_jobs": max_jobs(setup, at),
        "nvcc_threads": nvcc_threads(setup, at),
        "runtime": runtime_check(api, f"{where}:{api_path}"),
        "wheels": _wheels(workflow, f"{where}:{WORKFLOW}", archs, variable),
    }


def _wheels(text: str | None, where: str, archs: list[dict[str, Any]], variable: Any) -> Any:
    """None: no workflow (an sdist) or one that builds no wheels; what they carry is not known here."""
    if text is None or "build_wheels" not in text:
        return None
    return wheel_builds(text, where, archs, variable)


def sdist_files(path: Path, *wanted: str) -> dict[str, str | None]:
    found: dict[str, str | None] = dict.fromkeys(wanted)
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            inner = member.name.split("/", 1)[-1]
            if inner in wanted and member.isfile():
                data = tar.extractfile(member)
                if data is not None:
                    found[inner] = io.TextIOWrapper(data, encoding="utf-8").read()
    return found


def _sdist(args: argparse.Namespace, filename: str) -> Path:
    if args.sdist_dir is None:
        raise FactsError(f"{filename}: no --sdist-dir")
    path: Path = args.sdist_dir / filename
    if path.exists():
        return path
    if not args.download_sdists:
        raise FactsError(f"{path} missing (use --download-sdists)")
    request = urllib.request.Request(SIMPLE, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as resp:
        index = json.load(resp)
    url = next(f["url"] for f in index["files"] if f["filename"] == filename)
    args.sdist_dir.mkdir(parents=True, exist_ok=True)
    urllib.request.urlretrieve(url, path)
    return path


# --- FA3 and flash-attn-4 --------------------------------------------------------------------------


def fa3_facts(repo: Path, rev: str) -> dict[str, Any]:
    """hopper/setup.py: nvcc floor, the gencode of *_sm90.cu files and what *_sm80.cu files get instead,
    the switch that leaves sm80 out; hopper/flash_api.cpp: the run-time check."""
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", rev], check=True, capture_output=True, text=True
    ).stdout.strip()[:12]
    where = f"{commit}:{FA3_SETUP}"
    setup = git_file(repo, rev, FA3_SETUP)
    api = git_file(repo, rev, FA3_API)
    if setup is None or api is None:
        raise FactsError(f"{commit}: no {FA3_SETUP} or {FA3_API}")
    lines = setup.splitlines()
    floor = nvcc_floor(setup, where)
    base = next(
        i for i, s in enumerate(lines) if re.search(r'cc_flag\.append\("arch=compute_90a,code=sm_90a"\)', s)
    )
    sm80 = next(i for i, s in enumerate(lines) if "cuda_post_cflags_sm80 = [" in s)
    # which source files each rule compiles: '_sm90.cu' with cc_flag, '_sm80.cu' with sm_80 instead
    rule80 = next(i for i, s in enumerate(lines) if "source_file.endswith('_sm80.cu')" in s)
    disable = next(
        i for i, s in enumerate(lines) if re.search(r'os\.getenv\("FLASH_ATTENTION_DISABLE_SM80"', s)
    )
    sm100_sources = [i for i, s in enumerate(lines) if "_sm100.cu" in s and "endswith" not in s]
    runtime = runtime_check_fa3(api, f"{commit}:{FA3_API}")
    return {
        "commit": commit,
        "nvcc_floor": floor,
        "sm": ["90a", "80"],
        "evidence": {
            "sm90a": fact(where, base + 1, lines[base]),
            "sm80": fact(where, sm80 + 1, lines[sm80]),
            "sm80_rule": fact(where, rule80 + 1, lines[rule80]),
            "disable_sm80": fact(where, disable + 1, lines[disable], variable="FLASH_ATTENTION_DISABLE_SM80"),
        },
        # a rule for *_sm100.cu files exists, but no listed source file ends so: no sm_100 kernels
        "sm100_sources": len(sm100_sources),
        "runtime": runtime,
    }


def runtime_check_fa3(text: str, where: str) -> dict[str, Any]:
    m = re.search(r"bool is_sm8x = dprops->major >= (\d+);\s*\n\s*TORCH_CHECK\(is_sm8x,", text)
    if m is None:
        raise FactsError(f"{where}: the FA3 check is shaped in an unknown way")
    line = text.count("\n", 0, m.start()) + 1
    return fact(where, line, line_of(text, line), any_of=[[["major", ">=", int(m.group(1))]]])


_FA4_ASSERT = re.compile(r"assert arch // 10 in \[([\d,\s]+)\],\s*\"Unsupported compute capability")


def fa4_facts(repo: Path) -> list[dict[str, Any]]:
    """flash-attn-4 at each ``fa4-v*`` tag: the majors its forward (and backward) accept."""
    tags = subprocess.run(
        ["git", "-C", str(repo), "tag", "--list", "fa4-v*"], check=True, capture_output=True, text=True
    ).stdout.split()
    out = []
    for tag in sorted(tags, key=lambda t: Version(t.removeprefix("fa4-v"))):
        text = git_file(repo, tag, FA4_INTERFACE)
        if text is None:
            raise FactsError(f"{tag}: no {FA4_INTERFACE}")
        where = f"{tag}:{FA4_INTERFACE}"
        asserts = list(_FA4_ASSERT.finditer(text))
        if not asserts:
            raise FactsError(f"{where}: no arch assert")
        fwd = asserts[0]
        line = text.count("\n", 0, fwd.start()) + 1
        majors = [int(x) for x in fwd.group(1).split(",")]
        out.append(
            {
                "tag": tag,
                "version": str(Version(tag.removeprefix("fa4-v"))),
                "forward": fact(where, line, line_of(text, line), majors=majors),
            }
        )
    return out


# --- torch's cpp_extension --------------------------------------------------------------------------

TORCH_FACTS = {
    # _get_cuda_arch_flags: any user flag naming 'arch' means torch adds none of its own
    "user_arch_flags": r"if 'arch' in flag:\s*\n\s*return \[\]",
    # otherwise TORCH_CUDA_ARCH_LIST decides, then the visible GPUs
    "arch_list_variable": r"_arch_list = os\.environ\.get\('TORCH_CUDA_ARCH_LIST', None\)",
    "visible_gpus": (
        r"for i in range\(torch\.cuda\.device_count\(\)\):\s*\n"
        r"\s*capability = torch\.cuda\.get_device_capability"
    ),
    # no TORCH_CUDA_ARCH_LIST and no visible GPU (a docker build): the list is empty, and this raises
    # IndexError ("list index out of range")
    "no_visible_gpu": r"arch_list\[-1\] \+= '\+PTX'",
    # _get_num_workers: MAX_JOBS, else ninja's own default
    "max_jobs": r"max_jobs = os\.environ\.get\('MAX_JOBS'\)",
    "ninja_default": r"'Allowing ninja to set a default number of workers",
    # _check_cuda_version: a different major raises, a different minor warns
    "major_mismatch": (
        r"if cuda_ver\.major != torch_cuda_version\.major:\s*\n\s*raise RuntimeError\(CUDA_MISMATCH_MESSAGE"
    ),
    "minor_mismatch": r"logger\.warning\(CUDA_MISMATCH_WARN",
    # _join_cuda_home, called by CUDAExtension's library_paths: no CUDA_HOME raises OSError
    "no_cuda_home": r"raise OSError\('CUDA_HOME environment variable is not set",
    "extension_library_paths": r"library_dirs \+= library_paths\(device_type=\"cuda\"\)",
    # _find_cuda_home: CUDA_HOME/CUDA_PATH, then nvcc on PATH, then /usr/local/cuda if it exists
    "cuda_home_default": r"cuda_home = '/usr/local/cuda'",
}


def torch_facts(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    version_file = path.parents[1] / "version.py"
    m = re.search(r"__version__ = '([^']+)'", version_file.read_text(encoding="utf-8"))
    if m is None:
        raise FactsError(f"{version_file}: no __version__")
    where = f"torch {m.group(1)}:torch/utils/cpp_extension.py"
    out: dict[str, Any] = {"version": m.group(1)}
    for key, pattern in TORCH_FACTS.items():
        found = re.search(pattern, text)
        if found is None:
            raise FactsError(f"{where}: {key} not found")
        line = text.count("\n", 0, found.start()) + 1
        out[key] = fact(where, line, line_of(text, line))
    return out


def installed_torch() -> Path:
    # find_spec on the top-level package locates torch without importing it
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        raise FactsError("torch is not installed here; pass --torch")
    return Path(spec.origin).parent / "utils/cpp_extension.py"


# --- main -------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="flash-attention git checkout (bare is fine)")
    ap.add_argument("--kb", type=Path, default=ROOT / "fa_lint/kb/flash_attn.json", help="the release list")
    ap.add_argument("--sdist-dir", type=Path, help="sdists of releases without a git tag")
    ap.add_argument("--download-sdists", action="store_true", help="download missing sdists from PyPI")
    ap.add_argument(
        "--torch", type=Path, help="a torch/utils/cpp_extension.py (default: the installed torch)"
    )
    ap.add_argument("--output", type=Path, default=ROOT / "fa_lint/kb/builds.json")
    args = ap.parse_args(argv)
    try:
        doc = build(args)
    except FactsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    args.output.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: {len(doc['releases'])} releases", file=sys.stderr)
    return 0


def build(args: argparse.Namespace) -> dict[str, Any]:
    releases = json.loads(args.kb.read_text(encoding="utf-8"))["releases"]
    wanted = (SETUP, WORKFLOW, *APIS)
    out = []
    for r in releases:
        source: str = r["source"]
        if source.startswith("tag "):
            tag = source.removeprefix("tag ")
            files = {p: git_file(args.repo, tag, p) for p in wanted}
            out.append(release_facts(r["version"], source, files, tag))
        else:
            filename = source.removeprefix("sdist ")
            files = sdist_files(_sdist(args, filename), *wanted)
            out.append(release_facts(r["version"], source, files, filename))
    head = subprocess.run(
        ["git", "-C", str(args.repo), "log", "-1", "--format=%H %cs"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {
        "schema": 1,
        "generated": dt.date.today().isoformat(),
        "generator": "scripts/build_machine_kb.py",
        "repository_head": {"commit": head[0][:12], "date": head[1]},
        "releases": out,
        "fa3": fa3_facts(args.repo, "HEAD"),
        "fa4": fa4_facts(args.repo),
        "torch": torch_facts(args.torch or installed_torch()),
    }


if __name__ == "__main__":
    sys.exit(main())
