"""Prebuilt-wheel facts for scripts/build_kb.py: what each tag's release workflow built, how its setup.py
names the wheel it fetches, which wheels can have been added to a release after its tag, and when each
torch series reached the index.

Every fact carries the file and line (or the index document) it was read from; a shape this module
does not know is an error, never a guess.
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from gitrepo import git, git_file
from packaging.version import InvalidVersion, Version

WORKFLOW = ".github/workflows/publish.yml"
SETUP = "setup.py"
# The workflow that builds a wheel for a release after its tag (workflow_dispatch with
# upload-to-release / release-version) and the template that names the wheel it uploads.
LATER_WORKFLOW = ".github/workflows/build.yml"
LATER_TEMPLATE = ".github/workflows/_build.yml"
TORCH_JSON = "https://pypi.org/pypi/torch/json"


def utc(stamp: str) -> str:
    """An ISO 8601 time (git's %cI, PyPI's upload_time_iso_8601) in UTC, to the second: comparable as text."""
    t = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# The matrix axes of the release workflow's build_wheels job, by the name the KB gives them.
AXES = {
    "torch-version": "torch",
    "python-version": "python",
    "cuda-version": "cuda",
    "cxx11_abi": "cxx11_abi",
    "os": "os",
}
# VAR=$(echo ${{ matrix.cuda-version }} | awk -F \. {'print $1'}); the later-build template says inputs.
_AWK_VAR = r"(\w+)=\$\(echo \$\{\{ (?:matrix|inputs)\.cuda-version \}\} \| awk -F \\\. \{'print ([^']*)'\}\)"


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
    awk, naming = wheel_cuda_naming(text, where)
    names = {c: awk_print(awk, c) for c in axes["cuda"]}
    platforms = sorted({_platform(os, where) for os in axes["os"]})
    evidence["wheel_cuda"] = naming
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


def wheel_cuda_naming(text: str, where: str) -> tuple[str, dict[str, Any]]:
    """The awk program that turns the workflow's CUDA version into the wheel name's ``cu`` part, and
    its evidence: the ``tmpname=cu${VAR}...`` line and the awk line that sets VAR."""
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
            f"{where}:{tmp + 1}: the wheel's CUDA part comes from no awk of the CUDA version"
        )
    awk = re.search(_AWK_VAR, lines[var])
    assert awk is not None
    return awk[2], {
        "at": f"{where}:{var + 1}",
        "text": lines[var].strip(),
        "used": {"at": f"{where}:{tmp + 1}", "text": lines[tmp].strip()},
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


def setup_wheel_rule(text: str, tag: str) -> dict[str, Any] | None:  # noqa: C901 - complexity 14, to split or justify (issue 45)
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
    overrides: list[dict[str, str | None]] = []
    for node in ast.walk(funcs[0]):
        if isinstance(node, ast.If) and (override := _torch_override(node)) is not None:
            # 2.2.3.post2-2.3.5: "if torch 2.1 [and CUDA 12]: torch_cuda_version = parse("12.2")"
            overrides.append(override)
            evidence.setdefault("torch_override", []).append(
                {"at": f"{where}:{node.lineno}", "text": _segment(text, node)}
            )
        elif isinstance(node, ast.If) and _major_test(node.test) is not None:
            if not evidence.get("cuda_map"):
                mapping = _cuda_map(node)
                evidence["cuda_map"] = {"at": f"{where}:{node.lineno}", "text": _segment(text, node)}
        elif isinstance(node, ast.If) and _sets_cuda(node):
            raise WheelFactsError(f"{where}:{node.lineno}: torch_cuda_version set under an unknown test")
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
    rule: dict[str, Any] = {"cuda_map": mapping, "cuda_digits": len(digits or ())}
    if overrides:
        rule["torch_overrides"] = overrides
    return {**rule, "evidence": evidence}


def _attr_eq(node: ast.expr) -> tuple[str, str, str] | None:
    """``name.attr == N`` -> (name, attr, "N")."""
    if (
        isinstance(node, ast.Compare)
        and isinstance(node.left, ast.Attribute)
        and isinstance(node.left.value, ast.Name)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Eq)
        and isinstance(node.comparators[0], ast.Constant)
    ):
        return node.left.value.id, node.left.attr, str(node.comparators[0].value)
    return None


def _torch_override(node: ast.If) -> dict[str, str | None] | None:
    """``if torch_version_raw.major == 2 and torch_version_raw.minor == 1 [and torch_cuda_version.major
    == 12]: torch_cuda_version = parse("12.2")`` -> {"torch": "2.1", "cuda_major": "12", "to": "12.2"}."""
    if not (isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And)) or node.orelse:
        return None
    parts = [_attr_eq(v) for v in node.test.values]
    if any(p is None for p in parts) or len(node.body) != 1:
        return None
    found = {(name, attr): value for name, attr, value in (p for p in parts if p is not None)}
    body = node.body[0]
    to = _parsed(body.value) if isinstance(body, ast.Assign) else None
    if not (isinstance(body, ast.Assign) and any(_is_name(t, "torch_cuda_version") for t in body.targets)):
        return None
    major, minor = (
        found.pop(("torch_version_raw", "major"), None),
        found.pop(("torch_version_raw", "minor"), None),
    )
    cuda = found.pop(("torch_cuda_version", "major"), None)
    if to is None or major is None or minor is None or found:
        raise WheelFactsError(
            f"line {node.lineno}: unknown torch-dependent CUDA mapping {ast.unparse(node.test)}"
        )
    return {"torch": f"{major}.{minor}", "cuda_major": cuda, "to": to}


def _sets_cuda(node: ast.If) -> bool:
    """Whether an ``if`` sets torch_cuda_version to a fixed version (``= parse("12.2")``) directly: a
    mapping under a test that no reading above understood."""
    return any(
        isinstance(s, ast.Assign)
        and any(_is_name(t, "torch_cuda_version") for t in s.targets)
        and _parsed(s.value) is not None
        for s in (*node.body, *node.orelse)
    )


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


# --- wheels added after a tag --------------------------------------------------------------------


def later_builds(repo: Path) -> dict[str, Any] | None:
    """Since when a release can get wheels after its tag, and how those wheels name CUDA.

    The default branch's ``build.yml`` takes ``workflow_dispatch`` inputs ``release-version`` and
    ``upload-to-release``: it checks out that release's tag, builds one wheel for the torch, CPython and
    CUDA it is given and attaches it to the release. Its template names the wheel with the same
    ``tmpname=cu${...}`` line as publish.yml; every version of the template since is read, and one that
    names CUDA differently is an error. None: the checkout has no such workflow.
    """
    log = git(repo, "log", "--reverse", "--format=%H %cI", "HEAD", "--", LATER_WORKFLOW)
    since: dict[str, Any] | None = None
    for line in log.splitlines():
        commit, date = line.split()
        text = git_file(repo, commit, LATER_WORKFLOW)
        found = _dispatch_inputs(text) if text is not None else None
        if found is not None:
            at, quoted = found
            since = {
                "commit": commit[:12],
                "date": utc(date),
                "at": f"{commit[:12]}:{LATER_WORKFLOW}:{at}",
                "text": quoted,
            }
            break
    if since is None:
        return None
    names: set[str] = set()
    evidence: dict[str, Any] = {}
    commits = git(repo, "log", "--format=%H", f"{since['commit']}^..HEAD", "--", LATER_TEMPLATE).split()
    for commit in [*commits, since["commit"]]:
        text = git_file(repo, commit, LATER_TEMPLATE)
        if text is None:
            continue
        awk, naming = wheel_cuda_naming(text, f"{commit[:12]}:{LATER_TEMPLATE}")
        names.add(awk)
        evidence = evidence or naming  # the newest version's lines
    if len(names) != 1:
        raise WheelFactsError(f"{LATER_TEMPLATE}: the wheel's CUDA part changed over time ({sorted(names)})")
    (awk,) = names
    digits = len(re.findall(r"\$\d+", awk))
    return {"since": since, "cuda_digits": digits, "evidence": {"wheel_cuda": evidence}}


def _dispatch_inputs(text: str) -> tuple[int, str] | None:
    """The line of ``release-version`` among build.yml's workflow_dispatch inputs, if it has
    ``upload-to-release`` too."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return None
    inputs = _mapping(_mapping(_mapping(root, "on"), "workflow_dispatch"), "inputs")
    if not isinstance(inputs, yaml.MappingNode):
        return None
    keys = {k.value: k for k, _ in inputs.value if isinstance(k, yaml.ScalarNode)}
    if "release-version" not in keys or "upload-to-release" not in keys:
        return None
    line = keys["upload-to-release"].start_mark.line
    return line + 1, text.splitlines()[line].strip()


def torch_index(doc: dict[str, Any]) -> dict[str, Any]:
    """When each torch major.minor reached PyPI, overall and for each CPython, from the index's own upload
    times (the JSON API's ``upload_time_iso_8601`` of every file of every final X.Y.* release).

    A wheel of a flash-attn release for torch X.Y on CPython 3.Z needs torch X.Y's cp3Z wheel: if that
    came out after the release's tag, the tag's workflow could not have built it.
    """
    minors: dict[str, dict[str, Any]] = {}
    for version, files in doc["releases"].items():
        try:
            v = Version(version)
        except InvalidVersion:
            continue
        if v.is_prerelease or v.is_devrelease or not files:
            continue
        entry = minors.setdefault(f"{v.major}.{v.minor}", {"first": version, "released": None, "cpython": {}})
        for f in files:
            when = utc(f["upload_time_iso_8601"])
            if entry["released"] is None or when < entry["released"]:
                entry["released"] = when
            if Version(version) < Version(entry["first"]):
                entry["first"] = version
            m = re.fullmatch(r"cp(\d)(\d+)", f.get("python_version") or "")  # cp313t: no
            if m:
                py = f"{m[1]}.{m[2]}"
                entry["cpython"][py] = min(entry["cpython"].get(py, when), when)
    ordered = sorted(minors, key=lambda k: tuple(map(int, k.split("."))))
    return {
        "source": f"{TORCH_JSON}: the earliest upload_time_iso_8601 of each X.Y.* release's files, and of "
        "its cpXY files for each CPython",
        "minors": {
            k: {
                **minors[k],
                "cpython": dict(sorted(minors[k]["cpython"].items(), key=lambda kv: _key(kv[0]))),
            }
            for k in ordered
        },
    }


def _key(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


WHEEL_NAME = re.compile(
    r"flash_attn-(?P<version>[^+-]+)\+cu(?P<cuda>\d+)torch(?P<torch>\d+\.\d+)cxx11abi(?P<abi>TRUE|FALSE)"
    r"-cp(?P<py>\d)(?P<pyminor>\d+)-cp\d+-(?P<platform>\w+)\.whl"
)


def seen_wheels(path: Path, releases: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Release wheels that public files show exist though no tag's matrix built them, by release.

    The data file lists each wheel's name with where it was seen; the name must parse, name a release
    with a tag whose setup.py fetches wheels, and be one the matrix does not already have.
    """
    doc = json.loads(path.read_text())
    by_version = {r["version"]: r for r in releases}
    out: dict[str, list[dict[str, Any]]] = {}
    for entry in doc["wheels"]:
        m = WHEEL_NAME.fullmatch(entry["file"])
        if m is None:
            raise WheelFactsError(f"{path}: {entry['file']!r} is not a flash-attn release wheel name")
        record = by_version.get(m["version"])
        wheels = record and record["wheels"]
        if not wheels or not wheels.get("fetched"):
            raise WheelFactsError(
                f"{path}: {entry['file']}: {m['version']} has no tag whose setup.py fetches wheels"
            )
        build = {
            "torch": m["torch"],
            "python": f"{m['py']}.{m['pyminor']}",
            "cuda": m["cuda"],
            "cxx11_abi": m["abi"] == "TRUE",
            "platform": m["platform"],
        }
        if _in_matrix(wheels, build):
            raise WheelFactsError(f"{path}: {entry['file']} is in v{m['version']}'s matrix already")
        out.setdefault(m["version"], []).append({**build, "file": entry["file"], "source": entry["source"]})
    return out


def _in_matrix(wheels: dict[str, Any], build: dict[str, Any]) -> bool:
    from fa_lint.kb.wheels import Build, from_dict  # the same reading of the matrix fa-lint does

    w = from_dict(wheels)
    key = Build(build["torch"], build["python"], build["cuda"], build["cxx11_abi"])
    return w is not None and key in w.builds
