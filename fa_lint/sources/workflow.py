"""GitHub Actions workflows: the ``run:`` steps, read as shell, with ``env:`` values applied."""

from __future__ import annotations

from collections.abc import Iterator

import yaml

from fa_lint.model import Parsed, ParseProblem
from fa_lint.sources import _yaml, shell

NAME = "workflow"
PATTERNS = (".github/workflows/*.yml", ".github/workflows/*.yaml")


def parse(path: str, text: str) -> Iterator[Parsed]:
    doc = _yaml.document(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    index, root = doc
    top_env = _yaml.scalars(_yaml.get(root, "env"))
    for job_name, job in _yaml.items(_yaml.get(root, "jobs")):
        job_env = {**top_env, **_yaml.scalars(_yaml.get(job, "env"))}
        steps = _yaml.get(job, "steps")
        if not isinstance(steps, yaml.SequenceNode):
            continue
        for step in steps.value:
            run = _yaml.get(step, "run")
            if not isinstance(run, yaml.ScalarNode):
                continue
            env = {**job_env, **_yaml.scalars(_yaml.get(step, "env"))}
            start, end = _yaml.span(run, text)
            yield from shell.scan(index, NAME, start, end, variables=env, scope=f"job:{job_name}")
