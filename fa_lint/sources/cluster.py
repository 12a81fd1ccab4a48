"""YAML that places work on GPU machines: SkyPilot tasks and Kubernetes manifests.

Read for what they say about the machine (``Setting`` records): SkyPilot ``resources.accelerators``
(``A100:8``, ``{A100:8, H100:8}``, a list: each one of several), ``resources.instance_type`` and
``image_id: docker:...``, an exact ``resources.memory`` (GB); a Kubernetes pod's ``nodeSelector`` or
node affinity on ``nvidia.com/gpu.product``, ``cloud.google.com/gke-accelerator``,
``karpenter.k8s.aws/instance-gpu-name`` or ``node.kubernetes.io/instance-type``. A SkyPilot task's
``setup`` and ``run`` scripts are read as shell, so what they install lands on those accelerators.

The files have any name; a ``*.yaml`` or ``*.yml`` that no other format claims is read when its head
names one of these keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml

from fa_lint.model import Parsed, ParseProblem, Setting
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import Scope, State
from fa_lint.sources.dockerfile import image
from fa_lint.syntax import yamldoc
from fa_lint.syntax.text import TextIndex

NAME = "cluster"
_MARKS = (
    "accelerators:",
    "nvidia.com/gpu.product",
    "gke-accelerator",
    "instance-gpu-name",
    "instance-type",
    "instance_type:",
)
# node labels that name the GPU (gpu) or the instance type (instance)
_LABELS = {
    "nvidia.com/gpu.product": "gpu",
    "cloud.google.com/gke-accelerator": "gpu",
    "karpenter.k8s.aws/instance-gpu-name": "gpu",
    "node.kubernetes.io/instance-type": "instance",
    "beta.kubernetes.io/instance-type": "instance",
}


def sniff(head: str, *, complete: bool) -> bool:
    return any(mark in head for mark in _MARKS)


def parse(path: str, text: str) -> Iterator[Parsed]:
    index = TextIndex(path, text)
    docs = yamldoc.load_all(index)
    if isinstance(docs, ParseProblem):
        yield docs
        return
    scanner = Scanner(index, NAME)
    for doc in docs:
        yield from _settings(index, text, doc, 0)
        resources = yamldoc.get(doc, "resources")
        if isinstance(resources, yaml.MappingNode) and (yamldoc.get(doc, "setup") or yamldoc.get(doc, "run")):
            yield from _task(index, text, doc, resources, scanner)
    yield from scanner.finish()


def _task(
    index: TextIndex, text: str, doc: yaml.Node, resources: yaml.MappingNode, scanner: Scanner
) -> Iterator[Parsed]:
    """A SkyPilot task: its image and the setup and run scripts."""
    ref = yamldoc.get(resources, "image_id")
    if isinstance(ref, yaml.ScalarNode) and str(ref.value).startswith("docker:"):
        start, end = yamldoc.span(ref, text)
        yield image(str(ref.value).removeprefix("docker:"), index.location(start + 7, end), "")
    memory = yamldoc.get(resources, "memory")
    if isinstance(memory, yaml.ScalarNode) and re.fullmatch(r"\d+(?:\.\d+)?", str(memory.value).strip()):
        # SkyPilot's memory in GB: "32" is exactly that, "32+" at least (no bound to judge against)
        yield _setting(index, text, memory, "memory", "memory", str(memory.value).strip(), False)
    env = yamldoc.scalars(yamldoc.get(doc, "envs"))
    for key in ("setup", "run"):
        node = yamldoc.get(doc, key)
        if isinstance(node, yaml.ScalarNode):
            start, end = yamldoc.span(node, text)
            scanner.run(start, end, State(Scope(values=env)))
            yield from scanner.drain()


def _settings(index: TextIndex, text: str, node: yaml.Node, depth: int) -> Iterator[Setting]:  # noqa: C901 - complexity 12, to split or justify (issue 45)
    if depth > 64:
        return
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _settings(index, text, item, depth + 1)
        return
    if not isinstance(node, yaml.MappingNode):
        return
    for key, value in yamldoc.items(node):
        if key == "accelerators":
            yield from _accelerators(index, text, value)
        elif key == "instance_type" and isinstance(value, yaml.ScalarNode):
            yield _setting(index, text, value, "instance", "instance_type", str(value.value), False)
        elif key == "nodeSelector":
            for label, v in yamldoc.items(value):
                if label in _LABELS and isinstance(v, yaml.ScalarNode):
                    yield _setting(index, text, v, _LABELS[label], label, str(v.value), False)
        elif key == "matchExpressions" and isinstance(value, yaml.SequenceNode):
            yield from _affinity(index, text, value)
        else:
            yield from _settings(index, text, value, depth + 1)


def _affinity(index: TextIndex, text: str, expressions: yaml.SequenceNode) -> Iterator[Setting]:
    for expr in expressions.value:
        label = yamldoc.get(expr, "key")
        op = yamldoc.get(expr, "operator")
        values = yamldoc.get(expr, "values")
        if not (isinstance(label, yaml.ScalarNode) and str(label.value) in _LABELS):
            continue
        if not (
            isinstance(op, yaml.ScalarNode) and op.value == "In" and isinstance(values, yaml.SequenceNode)
        ):
            continue
        found = [v for v in values.value if isinstance(v, yaml.ScalarNode)]
        for v in found:
            kind = _LABELS[str(label.value)]
            yield _setting(index, text, v, kind, str(label.value), str(v.value), len(found) > 1)


def _accelerators(index: TextIndex, text: str, node: yaml.Node) -> Iterator[Setting]:
    """``A100:8``, ``{A100:8, H100:8}`` (a string or a mapping), ``[A100, H100]``."""
    if isinstance(node, yaml.ScalarNode):
        start, end = yamldoc.span(node, text)
        body = text[start:end]
        names = [
            (m.group(1), start + m.start(1), start + m.end(1))
            # a name starts with a letter, or is a GeForce model number (2080ti:1, 3090)
            for m in re.finditer(r"((?:[A-Za-z]|\d{4})[\w-]*)(?::\d+)?", body)
        ]
        for name, a, b in names:
            yield Setting(index.location(a, b), "gpu", "accelerators", name, possible=len(names) > 1)
    elif isinstance(node, yaml.MappingNode):
        keys = [k for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
        for k in keys:
            name = str(k.value).split(":", 1)[0]  # {A100:8} in flow style is the key "A100:8"
            yield _setting(index, text, k, "gpu", "accelerators", name, len(keys) > 1)
    elif isinstance(node, yaml.SequenceNode):
        items = [v for v in node.value if isinstance(v, yaml.ScalarNode)]
        for v in items:
            name = str(v.value).split(":", 1)[0]
            yield _setting(index, text, v, "gpu", "accelerators", name, len(items) > 1)


def _setting(
    index: TextIndex, text: str, node: yaml.Node, kind: str, name: str, value: str, possible: bool
) -> Setting:
    start, end = yamldoc.span(node, text)
    return Setting(index.location(start, end), kind, name, value, possible=possible)
