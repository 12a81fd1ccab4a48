"""GitHub Actions workflows: the ``run:`` steps, read as shell, with ``env:`` values applied."""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml
from packaging.specifiers import SpecifierSet

from fa_lint.model import Kind, Parsed, ParseProblem, Requirement
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import Scope, State
from fa_lint.shell.walk import Stop
from fa_lint.syntax import yamldoc
from fa_lint.syntax.text import TextIndex

NAME = "workflow"
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.S)


def parse(path: str, text: str) -> Iterator[Parsed]:
    doc = yamldoc.document(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    index, root = doc
    # One scanner for the file: its commands are numbered in order, and a job's steps share a machine.
    scanner = Scanner(index, NAME)
    top_env = yamldoc.scalars(yamldoc.get(root, "env"))
    for job_name, job in yamldoc.items(yamldoc.get(root, "jobs")):
        job_env = {**top_env, **yamldoc.scalars(yamldoc.get(job, "env"))}
        steps = yamldoc.get(job, "steps")
        if not isinstance(steps, yaml.SequenceNode):
            continue
        scanner.scope = f"job:{job_name}"
        failed: Stop | None = None  # a step's shell stopped at a syntax error: the job has failed
        for step in steps.value:
            yield from _setup_python(index, text, step, f"job:{job_name}")
            run = yamldoc.get(step, "run")
            if not isinstance(run, yaml.ScalarNode):
                continue
            env = {**job_env, **yamldoc.scalars(yamldoc.get(step, "env"))}
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
            yield from scanner.drain()
    yield from scanner.finish()


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
