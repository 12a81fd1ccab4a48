"""GitHub Actions workflows: the ``run:`` steps, read as shell, with ``env:`` values applied."""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml

from fa_lint.model import Parsed, ParseProblem
from fa_lint.sources import _bash, _shell, _yaml

NAME = "workflow"
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.S)


def parse(path: str, text: str) -> Iterator[Parsed]:
    doc = _yaml.document(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    index, root = doc
    # One scanner for the file: its commands are numbered in order, and a job's steps share a machine.
    scanner = _shell.Scanner(index, NAME)
    top_env = _yaml.scalars(_yaml.get(root, "env"))
    for job_name, job in _yaml.items(_yaml.get(root, "jobs")):
        job_env = {**top_env, **_yaml.scalars(_yaml.get(job, "env"))}
        steps = _yaml.get(job, "steps")
        if not isinstance(steps, yaml.SequenceNode):
            continue
        scanner.scope = f"job:{job_name}"
        for step in steps.value:
            run = _yaml.get(step, "run")
            if not isinstance(run, yaml.ScalarNode):
                continue
            env = {**job_env, **_yaml.scalars(_yaml.get(step, "env"))}
            start, end = _yaml.span(run, text)
            # GitHub replaces ${{ }} before the shell runs: to the parser it is one unknown word
            script = _EXPRESSION.sub(lambda m: "$" + "_" * (len(m.group()) - 1), text[start:end])
            scanner.run(start, end, _bash.State(_bash.Scope(values=env)), text=script)
            yield from scanner.drain()
    yield from scanner.finish()
