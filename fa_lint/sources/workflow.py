"""GitHub Actions workflows: the ``run:`` steps, read as shell, with ``env:`` values applied; and what a
job says about its machine -- its ``runs-on`` labels (each matrix value a possibility), a job
``container:`` image, build variables in ``env:``, a CUDA toolkit a ``Jimver/cuda-toolkit`` step
installs (``Setting`` and ``Image`` records for ``fa_lint.machine``)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

import yaml
from packaging.specifiers import SpecifierSet

from fa_lint.model import BUILD_VARIABLES, BuildArg, Include, Kind, Parsed, ParseProblem, Requirement, Setting
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.stops import Stop
from fa_lint.shell.variables import Budget, Scope, State
from fa_lint.sources.buildsettings import INSTALLER
from fa_lint.sources.dockerfile import image
from fa_lint.syntax import yamldoc
from fa_lint.syntax.text import TextIndex

NAME = "workflow"
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.S)


# ${{ env.NAME }} (or env['NAME']) in an env: value: GitHub evaluates it before the step runs
_ENV_CONTEXT = re.compile(r"\$\{\{\s*env(?:\.([A-Za-z_][A-Za-z0-9_-]*)|\[\s*'([^'\n]*)'\s*\])\s*\}\}")


def _env_values(node: yaml.Node | None, outer: dict[str, str], budget: Budget) -> dict[str, str]:
    """An ``env:`` block's values, each ``${{ env.NAME }}`` in them replaced by the value ``NAME``
    has at the level around it (a job's env sees the workflow's, a step's the job's: the ``env``
    context, whose names are case-insensitive); one it does not hold stays, an unknown expression,
    as does one past the file's budget (a value naming a long one many times, level after level)."""
    values = yamldoc.scalars(node)
    if not outer or not any("${{" in v for v in values.values()):
        return values
    known = {name.lower(): value for name, value in outer.items()}

    def value(m: re.Match[str]) -> str:
        found = known.get((m.group(1) or m.group(2)).lower())
        return found if found is not None and budget.take(len(found)) else m.group()

    return {name: _ENV_CONTEXT.sub(value, v) if "${{" in v else v for name, v in values.items()}


def parse(path: str, text: str) -> Iterator[Parsed]:
    doc = yamldoc.document(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    index, root = doc
    # One scanner for the file: its commands are numbered in order, and a job's steps share a machine.
    scanner = Scanner(index, NAME)
    checkout = _in_checkout(path)  # its steps run in the repository's root
    top_env = yamldoc.scalars(yamldoc.get(root, "env"))
    for job_name, job in yamldoc.items(yamldoc.get(root, "jobs")):
        job_env = {**top_env, **_env_values(yamldoc.get(job, "env"), top_env, scanner.budget)}
        steps = yamldoc.get(job, "steps")
        if not isinstance(steps, yaml.SequenceNode):
            continue
        scope = scanner.scope = f"job:{job_name}"
        matrix = _matrix(job)
        if root is not None:
            yield from _machine(index, text, job, root, scope, matrix)
        failed: Stop | None = None  # a step's shell stopped at a syntax error: the job has failed
        for step in steps.value:
            yield from _setup_python(index, text, step, f"job:{job_name}")
            yield from _toolkit(index, text, step, scope, matrix, scanner.step)
            yield from _setup_uv(index, text, step, scope, matrix)
            yield from _build_push(checkout, index, text, step)
            run = yamldoc.get(step, "run")
            if not isinstance(run, yaml.ScalarNode):
                continue
            env = {**job_env, **_env_values(yamldoc.get(step, "env"), job_env, scanner.budget)}
            before = scanner.step
            start, end = yamldoc.span(run, text)
            # GitHub replaces ${{ }} before the shell runs: to the parser it is one unknown word
            script = _EXPRESSION.sub(lambda m: "$" + "_" * (len(m.group()) - 1), text[start:end])
            scanner.halted = None if _runs_after_a_failure(step) else failed
            scanner.run(start, end, State(Scope(values=env)), text=script)
            scanner.halted = None
            if scanner.stopped is not None and failed is None and not _continues_on_error(step):
                line = index.location(start, start).line
                failed = scanner.stopped._replace(
                    after=f"the step at line {line} stops at a syntax error (`{scanner.stopped.cause}`, exit "
                    "status 2) and fails the job: a later step runs only with an `if:` such as always()"
                )
            yield from _env(index, text, yamldoc.get(step, "env"), scope, before, scanner.step)
            folder = _working_directory(step, job, root)
            yield from (_from_checkout(checkout, folder, rec) for rec in scanner.drain())
    yield from scanner.finish()


def _working_directory(step: yaml.Node, job: yaml.Node, root: yaml.Node | None) -> str:
    """The folder a ``run:`` step starts in, relative to the checkout: ``working-directory`` of the step,
    else the job's or the workflow's ``defaults.run``."""
    for node in (
        step,
        yamldoc.get(yamldoc.get(job, "defaults"), "run"),
        yamldoc.get(yamldoc.get(root, "defaults"), "run"),
    ):
        wd = yamldoc.get(node, "working-directory")
        if isinstance(wd, yaml.ScalarNode) and "${{" not in str(wd.value):
            return str(wd.value)
    return "."


def _in_checkout(path: str) -> bool:
    """Whether the workflow is a checkout's (``.github/workflows/X``): its steps run in the
    repository's root (``$GITHUB_WORKSPACE``), two folders above it."""
    return path.replace("\\", "/").split("/")[-3:-1] == [".github", "workflows"]


def _from_checkout(checkout: bool, folder: str, rec: Parsed) -> Parsed:
    """A file a step names (``pip install -r requirements.txt``) is the checkout's: a step of a
    ``checkout`` workflow runs in the repository's root, not in the workflow's own folder, which an
    include is otherwise read against."""
    if not checkout:
        return rec
    if isinstance(rec, BuildArg) and not posixpath.isabs(rec.dockerfile):
        # docker build -f PATH names it from the step's folder
        return rec._replace(dockerfile=posixpath.normpath(posixpath.join("../..", folder, rec.dockerfile)))
    if isinstance(rec, Include) and "://" not in rec.target and not posixpath.isabs(rec.target):
        return rec._replace(target=posixpath.normpath(posixpath.join("../..", folder, rec.target)))
    return rec


def _build_push(checkout: bool, index: TextIndex, text: str, step: yaml.Node) -> Iterator[BuildArg]:
    """``uses: docker/build-push-action@...`` with ``build-args: NAME=VALUE`` lines: values for the
    ``ARG`` lines of the Dockerfile it builds (``file:``, else ``Dockerfile`` in ``context:``), both
    named from the checkout's root."""
    uses = yamldoc.get(step, "uses")
    if not isinstance(uses, yaml.ScalarNode) or not str(uses.value).startswith("docker/build-push-action@"):
        return
    given = yamldoc.get(step, "with")
    args = yamldoc.get(given, "build-args")
    if not isinstance(args, yaml.ScalarNode):
        return
    context, file = yamldoc.get(given, "context"), yamldoc.get(given, "file")
    folder = str(context.value) if isinstance(context, yaml.ScalarNode) else "."
    name = str(file.value) if isinstance(file, yaml.ScalarNode) else posixpath.join(folder, "Dockerfile")
    if "${{" in name or "://" in name or posixpath.isabs(name):
        return
    dockerfile = posixpath.normpath(posixpath.join("../.." if checkout else ".", name))
    start, end = yamldoc.span(args, text)
    for line in str(args.value).splitlines():
        key, eq, value = line.strip().partition("=")
        if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) and "${{" not in value:
            yield BuildArg(index.location(start, end), dockerfile, key, value.strip())


# A step runs only when the steps before it succeeded (its `if:` defaults to success()), unless its
# `if:` calls always(), failure() or cancelled(); a failing step with `continue-on-error: true` lets the
# job go on (GitHub's "Workflow syntax for GitHub Actions": jobs.<job_id>.steps[*].if and
# jobs.<job_id>.steps[*].continue-on-error).
_STATUS = re.compile(r"\b(?:always|failure|cancelled)\s*\(\s*\)")


def _runs_after_a_failure(step: yaml.Node) -> bool:
    condition = yamldoc.get(step, "if")
    return isinstance(condition, yaml.ScalarNode) and _STATUS.search(str(condition.value)) is not None


def _continues_on_error(step: yaml.Node) -> bool:
    flag = yamldoc.get(step, "continue-on-error")
    # an expression (${{ matrix.experimental }}) may be true: the job may go on
    return isinstance(flag, yaml.ScalarNode) and str(flag.value).strip().lower() != "false"


# --- the job's machine -----------------------------------------------------------------------------

_MATRIX_REF = re.compile(r"^\$\{\{\s*matrix\.([A-Za-z0-9_-]+)\s*\}\}$")
Matrix = dict[str, list[tuple[str, yaml.Node]]]


def _matrix(job: yaml.Node) -> Matrix:
    """Each matrix key's values (and ``include`` entries' values), with the node that says each."""
    out: Matrix = {}
    for key, node in yamldoc.items(yamldoc.get(yamldoc.get(job, "strategy"), "matrix")):
        if key == "include" and isinstance(node, yaml.SequenceNode):
            for entry in node.value:
                for k, v in yamldoc.items(entry):
                    if isinstance(v, yaml.ScalarNode):
                        out.setdefault(k, []).append((str(v.value), v))
        elif isinstance(node, yaml.SequenceNode):
            out.setdefault(key, []).extend(
                (str(v.value), v) for v in node.value if isinstance(v, yaml.ScalarNode)
            )
    return out


def _values(node: yaml.Node | None, matrix: Matrix) -> list[tuple[str, yaml.Node, bool]]:
    """A scalar, a list of scalars, or ``${{ matrix.X }}`` as (value, node, possible): a matrix key's
    values are each one possibility."""
    if isinstance(node, yaml.SequenceNode):
        return [v for item in node.value for v in _values(item, matrix)]
    if not isinstance(node, yaml.ScalarNode):
        return []
    m = _MATRIX_REF.match(str(node.value).strip())
    if m is None:
        return [] if "${{" in str(node.value) else [(str(node.value), node, False)]
    found = matrix.get(m.group(1), [])
    return [(v, n, len(found) > 1) for v, n in found if "${{" not in v]


def _setting(index: TextIndex, text: str, node: yaml.Node, *fields: object, **named: object) -> Setting:
    start, end = yamldoc.span(node, text)
    return Setting(index.location(start, end), *fields, **named)  # type: ignore[arg-type]


def _machine(
    index: TextIndex, text: str, job: yaml.Node, root: yaml.Node, scope: str, matrix: Matrix
) -> Iterator[Parsed]:
    runs_on = yamldoc.get(job, "runs-on")
    if isinstance(runs_on, yaml.MappingNode):  # {group: ..., labels: [...]}
        runs_on = yamldoc.get(runs_on, "labels")
    for value, node, possible in _values(runs_on, matrix):
        yield _setting(index, text, node, "runner", "runs-on", value, scope, possible=possible)
    container = yamldoc.get(job, "container")
    ref = yamldoc.get(container, "image") if isinstance(container, yaml.MappingNode) else container
    for value, node, _ in _values(ref, matrix):
        start, end = yamldoc.span(node, text)
        # the job's steps run in this image, not on the runner: it is their machine, as FROM is a stage's
        yield image(value, index.location(start, end), scope)._replace(said="container:")
    for env in (yamldoc.get(root, "env"), yamldoc.get(job, "env")):
        yield from _env(index, text, env, scope, 0, None)


def _env(
    index: TextIndex, text: str, env: yaml.Node | None, scope: str, after: int, until: int | None
) -> Iterator[Setting]:
    for name, node in yamldoc.items(env):
        if name in BUILD_VARIABLES and isinstance(node, yaml.ScalarNode) and "${{" not in str(node.value):
            yield _setting(index, text, node, "env", name, str(node.value), scope, after, until)


def _toolkit(
    index: TextIndex, text: str, step: yaml.Node, scope: str, matrix: Matrix, after: int
) -> Iterator[Setting]:
    """``uses: Jimver/cuda-toolkit@...`` with ``cuda: 12.1.0``: an nvcc of that version from here on."""
    uses = yamldoc.get(step, "uses")
    if not isinstance(uses, yaml.ScalarNode):
        return
    action = str(uses.value).lower().split("@", 1)[0]
    if action != "jimver/cuda-toolkit":
        if "cuda" in action:  # another action that installs a toolkit (mjun0812/setup-cuda): version unknown
            yield _setting(index, text, uses, "toolkit", str(uses.value), "", scope, after)
        return
    for value, node, possible in _values(yamldoc.get(yamldoc.get(step, "with"), "cuda"), matrix):
        m = re.match(r"(\d+\.\d+)", value)
        if m:
            yield _setting(
                index,
                text,
                node,
                "toolkit",
                "Jimver/cuda-toolkit",
                m.group(1),
                scope,
                after,
                possible=possible,
            )


def _setup_python(index: TextIndex, text: str, step: yaml.Node, scope: str) -> Iterator[Parsed]:
    """``uses: actions/setup-python`` with one ``python-version``: the Python the job's steps run."""
    uses = yamldoc.get(step, "uses")
    if not isinstance(uses, yaml.ScalarNode) or not str(uses.value).startswith("actions/setup-python@"):
        return
    node = yamldoc.get(yamldoc.get(step, "with"), "python-version")
    value = str(node.value).strip() if isinstance(node, yaml.ScalarNode) else ""
    m = re.fullmatch(r"(3\.[0-9]+)(?:\.[0-9]+)?", value)  # not a list, an expression or "3.x"
    if node is None or m is None:
        return
    start, end = yamldoc.span(node, text)
    yield Requirement(
        "python",
        value,
        index.location(start, end),
        NAME,
        specifier=SpecifierSet(f"=={m.group(1)}.*"),
        kind=Kind.CONSTRAINT,
        scope=scope,
    )


def _setup_uv(index: TextIndex, text: str, step: yaml.Node, scope: str, matrix: Matrix) -> Iterator[Setting]:
    """``uses: astral-sh/setup-uv`` with ``version: 0.11.0``: the uv release the job's steps run (a
    version range or "latest" says no one release, and is left out by the rule that reads it)."""
    uses = yamldoc.get(step, "uses")
    if not isinstance(uses, yaml.ScalarNode) or not str(uses.value).lower().startswith("astral-sh/setup-uv@"):
        return
    for value, node, possible in _values(yamldoc.get(yamldoc.get(step, "with"), "version"), matrix):
        yield _setting(index, text, node, INSTALLER, "uv", value.strip(), scope, possible=possible)
