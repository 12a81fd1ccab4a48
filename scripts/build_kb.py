#!/usr/bin/env python3
"""Regenerate fa_lint/kb/flash_attn.json from flash-attn's own source.

Maintainer script; fa-lint never runs it. For every flash-attn release on PyPI it reads
``flash_attn/flash_attn_interface.py`` as the release shipped it -- from the ``vX.Y.Z`` tag of a
flash-attention git checkout, or, for the few releases that have no tag, from the release's sdist --
and parses it with ``ast`` (never importing it). FA3 facts come from the history of
``hopper/flash_attn_interface.py`` on the checkout's default branch.

    python scripts/build_kb.py --repo ../flash-attention --pypi-json flash-attn.json \
        --sdist-dir sdists/ [--download-sdists] [--output fa_lint/kb/flash_attn.json]

``--pypi-json`` is the file https://pypi.org/pypi/flash-attn/json returns; ``--fetch-pypi`` fetches it.
Releases with neither a tag nor an sdist are an error: the script never guesses.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import io
import json
import re
import subprocess
import sys
import tarfile
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from packaging.version import Version

# The same ast reading fa-lint verify applies to an installed interface file.
from fa_lint.verify.probe import function_params

INTERFACE = "flash_attn/flash_attn_interface.py"
FLASH_API = "csrc/flash_attn/flash_api.cpp"
FA3_INTERFACE = "hopper/flash_attn_interface.py"
FA3_SETUP = "hopper/setup.py"
WORKFLOW = ".github/workflows/publish.yml"
SETUP = "setup.py"
FUNCTION = "flash_attn_with_kvcache"
PYPI_JSON = "https://pypi.org/pypi/flash-attn/json"

# A feature is named after the flash_attn_with_kvcache parameter that first exposes it.
FEATURES = {
    "block_table": "paged-kv",
    "cache_batch_idx": "cache-batch-idx",
    "rotary_cos": "rotary",
    "window_size": "sliding-window",
    "alibi_slopes": "alibi",
    "softcap": "softcap",
    "cache_leftpad": "cache-leftpad",
    "return_softmax_lse": "return-lse",
}
PAGE_BLOCK_RE = re.compile(r"page_block_size\s*%\s*(\d+)\s*==\s*0")


def kvcache_params(source: str) -> list[str] | None:
    """Parameter names of the module-level flash_attn_with_kvcache, or None when absent."""
    return function_params(source).get(FUNCTION)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def git_file(repo: Path, rev: str, path: str) -> str | None:
    proc = subprocess.run(
        ["git", "-C", str(repo), "show", f"{rev}:{path}"], check=False, capture_output=True, text=True
    )
    return proc.stdout if proc.returncode == 0 else None


def sdist_files(sdist: Path, *wanted: str) -> dict[str, str]:
    found: dict[str, str] = {}
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            # sdists hold one top-level folder, flash_attn-X.Y.Z/
            inner = member.name.split("/", 1)[-1]
            if inner in wanted and member.isfile():
                data = tar.extractfile(member)
                if data is not None:
                    found[inner] = io.TextIOWrapper(data, encoding="utf-8").read()
    return found


def release_record(
    version: str,
    uploaded: str | None,
    yanked: bool,
    source: str,
    interface: str | None,
    api: str | None,
    wheels: dict[str, Any] | None = None,
) -> dict[str, Any]:
    params = kvcache_params(interface) if interface is not None else None
    multiple = None
    if api is not None and (m := PAGE_BLOCK_RE.search(api)):
        multiple = int(m.group(1))
    features = []
    if params is not None:
        features.append("kvcache")
        features += [f for p, f in FEATURES.items() if p in params]
    return {
        "version": version,
        "uploaded": uploaded,
        "yanked": yanked,
        "source": source,
        "kvcache_params": params,
        "features": features,
        "page_block_multiple": multiple if params and "block_table" in params else None,
        # None: no tag to read the release workflow from (an sdist-only release), so unknown.
        "wheels": wheels,
    }


# --- prebuilt wheels ------------------------------------------------------------------------------
# The matrix axes of the release workflow's build_wheels job, by the name the KB gives them.
AXES = {
    "torch-version": "torch",
    "python-version": "python",
    "cuda-version": "cuda",
    "cxx11_abi": "cxx11_abi",
    "os": "os",
}
_AWK_VAR = r"(\w+)=\$\(echo \$\{\{ matrix\.cuda-version \}\} \| awk -F \\\. \{'print ([^']*)'\}\)"


class WheelFactsError(Exception):
    """A tag's workflow or setup.py is shaped in a way this script does not know: never guess."""


def _lines(text: str, first: int, last: int) -> str:
    """Lines first..last (0-based, inclusive) of text, with their common indentation removed."""
    import textwrap

    return textwrap.dedent("\n".join(text.splitlines()[first : last + 1]))


def _node_lines(node: yaml.Node) -> tuple[int, int]:
    end = node.end_mark.line - (1 if node.end_mark.column == 0 else 0)
    return node.start_mark.line, max(end, node.start_mark.line)


def _mapping(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key and isinstance(v, yaml.Node):
                return v
    return None


def _strings(node: yaml.Node, where: str) -> list[str]:
    if not isinstance(node, yaml.SequenceNode) or not all(isinstance(n, yaml.ScalarNode) for n in node.value):
        raise WheelFactsError(f"{where}: not a list of plain values")
    values = [n.value for n in node.value]
    if any(n.style is None and re.fullmatch(r"\d+\.\d", n.value) for n in node.value):
        raise WheelFactsError(f"{where}: an unquoted number YAML reads as a float")
    return values


def awk_print(program: str, value: str) -> str:
    """What ``echo VALUE | awk -F . '{print PROGRAM}'`` prints: fields and string literals, joined."""
    fields = value.split(".")
    out = []
    for token in re.findall(r'\$\d+|"[^"]*"', program):
        out.append(token[1:-1] if token.startswith('"') else fields[int(token[1:]) - 1])
    return "".join(out)


def workflow_matrix(text: str, tag: str) -> dict[str, Any]:
    """The build_wheels matrix of a release workflow: axes, excludes, and how wheels name CUDA."""
    root = yaml.compose(text)
    matrix = _mapping(_mapping(_mapping(_mapping(root, "jobs"), "build_wheels"), "strategy"), "matrix")
    if matrix is None:
        raise WheelFactsError(f"{tag}:{WORKFLOW}: no jobs.build_wheels.strategy.matrix")
    where = f"{tag}:{WORKFLOW}"
    axes: dict[str, list[str]] = {}
    evidence: dict[str, Any] = {}
    excludes: list[dict[str, str]] = []
    assert isinstance(matrix, yaml.MappingNode)
    for k, v in matrix.value:
        first, last = k.start_mark.line, _node_lines(v)[1]
        if k.value in AXES:
            axes[AXES[k.value]] = _strings(v, f"{where}:{first + 1}")
            evidence[AXES[k.value]] = {"at": f"{where}:{first + 1}", "text": _lines(text, first, last)}
        elif k.value == "exclude" and isinstance(v, yaml.SequenceNode):
            evidence["exclude"] = []
            for item in v.value:
                if not isinstance(item, yaml.MappingNode):
                    raise WheelFactsError(
                        f"{where}:{item.start_mark.line + 1}: an exclude that is not a mapping"
                    )
                # a block mapping ends where the next item starts: its last value ends the entry
                a, b = item.start_mark.line, max(vv.end_mark.line for _, vv in item.value)
                entry = {kk.value: vv.value for kk, vv in item.value}
                unknown = set(entry) - set(AXES)
                if unknown:
                    raise WheelFactsError(f"{where}:{a + 1}: exclude on {sorted(unknown)}")
                excludes.append({AXES[key]: value for key, value in entry.items()})
                evidence["exclude"].append({"at": f"{where}:{a + 1}", "text": _lines(text, a, b)})
        else:
            raise WheelFactsError(f"{where}:{first + 1}: matrix key {k.value!r} is not known")
    if set(axes) != set(AXES.values()):
        raise WheelFactsError(f"{where}: the matrix lacks {sorted(set(AXES.values()) - set(axes))}")
    lines = text.splitlines()
    tmp = next((i for i, line in enumerate(lines) if "tmpname=cu${" in line), None)
    if tmp is None:
        raise WheelFactsError(f"{where}: no tmpname=cu${{...}} line names the wheels")
    m = re.search(r"tmpname=cu\$\{(\w+)\}", lines[tmp])
    var = next(
        (i for i, line in enumerate(lines) if m and re.search(_AWK_VAR.replace("(\\w+)", m[1]), line)), None
    )
    if m is None or var is None:
        raise WheelFactsError(
            f"{where}:{tmp + 1}: the wheel's CUDA part comes from no awk of matrix.cuda-version"
        )
    awk = re.search(_AWK_VAR, lines[var])
    assert awk is not None
    names = {c: awk_print(awk[2], c) for c in axes["cuda"]}
    platforms = sorted({_platform(os, where) for os in axes["os"]})
    evidence["wheel_cuda"] = {
        "at": f"{where}:{var + 1}",
        "text": lines[var].strip(),
        "used": {"at": f"{where}:{tmp + 1}", "text": lines[tmp].strip()},
    }
    return {
        "torch": [
            {"version": t, "minor": _minor(t), "nightly": Version(t).is_prerelease} for t in axes["torch"]
        ],
        "python": axes["python"],
        "cuda": [{"version": c, "name": names[c]} for c in axes["cuda"]],
        "cxx11_abi": axes["cxx11_abi"],
        "os": axes["os"],
        "platforms": platforms,
        "exclude": excludes,
        "evidence": evidence,
    }


def _minor(version: str) -> str:
    v = Version(version)
    return f"{v.major}.{v.minor}"


def _platform(runner: str, where: str) -> str:
    # GitHub's ubuntu-* runners are x86_64 machines; setup.py's get_platform() then says linux_x86_64.
    if runner.startswith("ubuntu-") and not runner.endswith("-arm"):
        return "linux_x86_64"
    raise WheelFactsError(f"{where}: runner {runner!r} is not known")


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _major_test(node: ast.expr) -> str | None:
    """``torch_cuda_version.major == 11`` -> "11"."""
    if (
        isinstance(node, ast.Compare)
        and isinstance(node.left, ast.Attribute)
        and node.left.attr == "major"
        and _is_name(node.left.value, "torch_cuda_version")
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Eq)
        and isinstance(node.comparators[0], ast.Constant)
    ):
        return str(node.comparators[0].value)
    return None


def _parsed(node: ast.expr) -> str | None:
    """``parse("11.8")`` -> "11.8"."""
    if isinstance(node, ast.Call) and _is_name(node.func, "parse") and len(node.args) == 1:
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
    return None


def _cuda_map(node: ast.AST) -> dict[str, str]:
    """The CUDA setup.py names for each torch CUDA major: an ``x if major == N else y`` or an if/elif."""
    if isinstance(node, ast.IfExp):
        major, value = _major_test(node.test), _parsed(node.body)
        if major is None or value is None:
            raise WheelFactsError(f"line {node.lineno}: unknown CUDA mapping {ast.unparse(node)}")
        rest = (
            _cuda_map(node.orelse)
            if isinstance(node.orelse, ast.IfExp)
            else {"*": _parsed(node.orelse) or ""}
        )
        if not rest.get("*", "x"):
            raise WheelFactsError(f"line {node.lineno}: unknown CUDA mapping {ast.unparse(node)}")
        return {major: value, **rest}
    if isinstance(node, ast.If):
        major = _major_test(node.test)
        body = node.body[0] if len(node.body) == 1 else None
        value = _parsed(body.value) if isinstance(body, ast.Assign) else None
        if major is None or value is None:
            raise WheelFactsError(f"line {node.lineno}: unknown CUDA mapping {ast.unparse(node)[:80]}")
        if not node.orelse:
            return {major: value}
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            return {major: value, **_cuda_map(node.orelse[0])}
        last = node.orelse[0] if len(node.orelse) == 1 else None
        other = _parsed(last.value) if isinstance(last, ast.Assign) else None
        if other is None:
            raise WheelFactsError(f"line {node.lineno}: unknown CUDA mapping {ast.unparse(node)[:80]}")
        return {major: value, "*": other}
    raise WheelFactsError(f"line {getattr(node, 'lineno', '?')}: unknown CUDA mapping")


def setup_wheel_rule(text: str, tag: str) -> dict[str, Any] | None:
    """How a tag's setup.py names the wheel it fetches; None when it fetches none (no BASE_WHEEL_URL).

    The function that builds ``wheel_filename`` (``get_wheel_url``, or ``CachedWheelsCommand.run``
    in older tags) maps torch's CUDA (``torch.version.cuda``) to the CUDA part of the name.
    """
    if "BASE_WHEEL_URL" not in text:
        return None
    where = f"{tag}:{SETUP}"
    tree = ast.parse(text)
    funcs = [
        f
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef)
        and any(
            isinstance(n, ast.Assign) and any(_is_name(t, "wheel_filename") for t in n.targets)
            for n in ast.walk(f)
        )
    ]
    if len(funcs) != 1:
        raise WheelFactsError(f"{where}: {len(funcs)} functions name wheel_filename")
    mapping: dict[str, str] = {}
    evidence: dict[str, Any] = {}
    digits: list[str] | None = None
    for node in ast.walk(funcs[0]):
        if isinstance(node, ast.If) and _major_test(node.test) is not None:
            if not evidence.get("cuda_map"):
                mapping = _cuda_map(node)
                evidence["cuda_map"] = {"at": f"{where}:{node.lineno}", "text": _segment(text, node)}
        elif isinstance(node, ast.Assign) and any(_is_name(t, "torch_cuda_version") for t in node.targets):
            if isinstance(node.value, ast.IfExp):
                mapping = _cuda_map(node.value)
                evidence["cuda_map"] = {"at": f"{where}:{node.lineno}", "text": _segment(text, node)}
        elif isinstance(node, ast.Assign) and any(_is_name(t, "cuda_version") for t in node.targets):
            if not isinstance(node.value, ast.JoinedStr):
                raise WheelFactsError(f"{where}:{node.lineno}: cuda_version is not an f-string")
            digits = [
                v.value.attr
                for v in node.value.values
                if isinstance(v, ast.FormattedValue)
                and isinstance(v.value, ast.Attribute)
                and _is_name(v.value.value, "torch_cuda_version")
            ]
            evidence["cuda_digits"] = {"at": f"{where}:{node.lineno}", "text": _segment(text, node)}
    if digits not in (["major"], ["major", "minor"]):
        raise WheelFactsError(f"{where}: cannot tell how cuda_version is written ({digits})")
    return {"cuda_map": mapping, "cuda_digits": len(digits or ()), "evidence": evidence}


def _segment(text: str, node: ast.stmt) -> str:
    end = node.end_lineno or node.lineno
    return _lines(text, node.lineno - 1, end - 1)


def wheel_facts(repo: Path, tag: str) -> dict[str, Any]:
    """Which prebuilt wheels a tagged release has, and which one its setup.py fetches."""
    setup = git_file(repo, tag, SETUP) or ""
    rule = setup_wheel_rule(setup, tag)
    if rule is None:
        return {
            "fetched": False,
            "evidence": {"setup": {"at": f"{tag}:{SETUP}", "text": "no BASE_WHEEL_URL"}},
        }
    workflow = git_file(repo, tag, WORKFLOW)
    if workflow is None:
        raise WheelFactsError(f"{tag}: setup.py fetches wheels but there is no {WORKFLOW}")
    matrix = workflow_matrix(workflow, tag)
    evidence = {**matrix.pop("evidence"), **rule.pop("evidence")}
    return {"fetched": True, **matrix, "name_rule": rule, "evidence": evidence}


def fa3_facts(repo: Path) -> dict[str, Any]:
    """First default-branch commits whose FA3 interface names each paged-KV parameter, per function.

    FA3 took paged KV as ``block_table`` on flash_attn_varlen_func first (Nov 2024, while the
    kvcache entry point still had it commented out), then as ``page_table`` everywhere (Jan 2025).
    """
    log = git(repo, "log", "--reverse", "--format=%H %cs", "HEAD", "--", FA3_INTERFACE)
    first: dict[str, dict[str, dict[str, str]]] = {}
    last: dict[str, list[str]] = {}
    for line in log.splitlines():
        commit, date = line.split()
        text = git_file(repo, commit, FA3_INTERFACE)
        if text is None:
            continue
        try:
            functions = function_params(text)
        except SyntaxError:
            continue
        last = functions
        for fn in ("flash_attn_with_kvcache", "flash_attn_varlen_func"):
            for name in ("block_table", "page_table"):
                if name in functions.get(fn, ()):
                    first.setdefault(fn, {}).setdefault(name, {"commit": commit[:12], "date": date})
    setup = git_file(repo, "HEAD", FA3_SETUP) or ""
    m = re.search(r'PACKAGE_NAME\s*=\s*"([^"]+)"', setup)
    return {
        "distribution": m.group(1) if m else None,
        "module": "flash_attn_interface",
        "paged_params_since": first,
        "kvcache_paged_param_now": next(
            (p for p in ("page_table", "block_table") if p in last.get(FUNCTION, ())), None
        ),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="flash-attention git checkout (bare is fine)")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--pypi-json", type=Path, help="saved copy of " + PYPI_JSON)
    src.add_argument("--fetch-pypi", action="store_true", help="fetch " + PYPI_JSON)
    ap.add_argument("--sdist-dir", type=Path, help="sdists for releases without a git tag")
    ap.add_argument("--download-sdists", action="store_true", help="download missing sdists into --sdist-dir")
    ap.add_argument("--output", type=Path, default=Path(__file__).parents[1] / "fa_lint/kb/flash_attn.json")
    args = ap.parse_args(argv)

    if args.fetch_pypi:
        with urllib.request.urlopen(PYPI_JSON, timeout=60) as resp:
            pypi = json.load(resp)
    else:
        pypi = json.loads(args.pypi_json.read_text())
    tags = set(git(args.repo, "tag").split())
    try:
        releases = _releases(args, pypi, tags)
    except WheelFactsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if isinstance(releases, str):
        print(f"error: {releases}", file=sys.stderr)
        return 1

    newest_upload = max(r["uploaded"] for r in releases)
    doc = {
        "schema": 2,
        "generated": dt.date.today().isoformat(),
        "pypi_snapshot": newest_upload,
        "generator": "scripts/build_kb.py",
        "features": {"kvcache": FUNCTION, **{f: p for p, f in FEATURES.items()}},
        "releases": releases,
        "fa3": fa3_facts(args.repo),
    }
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.output}: {len(releases)} releases", file=sys.stderr)
    return 0


def _releases(args: argparse.Namespace, pypi: dict[str, Any], tags: set[str]) -> list[dict[str, Any]] | str:
    """One record per release on PyPI, or why one cannot be read."""
    releases = []
    for version, files in sorted(pypi["releases"].items(), key=lambda kv: Version(kv[0])):
        if not files:
            continue
        uploaded = min(f["upload_time"] for f in files)[:10]
        yanked = all(f.get("yanked") for f in files)
        tag = f"v{version}"
        if tag in tags:
            record = release_record(
                version,
                uploaded,
                yanked,
                f"tag {tag}",
                git_file(args.repo, tag, INTERFACE),
                git_file(args.repo, tag, FLASH_API),
                wheel_facts(args.repo, tag),
            )
        else:
            sdist = next((f for f in files if f["packagetype"] == "sdist"), None)
            if sdist is None or args.sdist_dir is None:
                return f"{version} has no tag {tag} and no sdist to read"
            path = args.sdist_dir / sdist["filename"]
            if not path.exists():
                if not args.download_sdists:
                    return f"{path} missing (use --download-sdists)"
                args.sdist_dir.mkdir(parents=True, exist_ok=True)
                # PyPI mirrors may answer with URLs relative to the JSON document
                urllib.request.urlretrieve(urllib.parse.urljoin(PYPI_JSON, sdist["url"]), path)
            found = sdist_files(path, INTERFACE, FLASH_API)
            record = release_record(
                version,
                uploaded,
                yanked,
                f"sdist {sdist['filename']}",
                found.get(INTERFACE),
                found.get(FLASH_API),
            )
        releases.append(record)
    return releases


if __name__ == "__main__":
    sys.exit(main())
