"""GitLab CI files (``.gitlab-ci.yml`` and the files it includes): each job's ``before_script``,
``script`` and ``after_script`` lines, read as shell, with the ``variables:`` that apply to them.

GitLab runs a job's ``before_script`` and ``script`` in one shell, one line after another, and its
``after_script`` in a new shell on the same machine; ``default:`` gives the ``before_script`` and
``after_script`` of a job that has none. A job's script is the program that runs on the runner, as a
workflow's ``run:`` steps are (``sources/workflow.py``).

What a job says about its machine: its ``image:`` (a string or ``{name: ...}``; the job's, else
``default:``'s, else the file's), and its runner ``tags:`` (the job's, else ``default:``'s), read as a
workflow's ``runs-on`` labels are: a tag that names a GPU (``a100``, ``gpu-v100``) or a platform
(``windows``, ``saas-windows-medium-amd64``, ``saas-macos-medium-m1``).
"""

from __future__ import annotations

from collections.abc import Iterator

import yaml

from fa_lint.model import BUILD_VARIABLES, Parsed, ParseProblem, Setting
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import Budget, Definitions, Scope, State
from fa_lint.sources.dockerfile import image
from fa_lint.syntax import yamldoc
from fa_lint.syntax.text import TextIndex

NAME = "gitlab-ci"
# Top-level keys that are no job (GitLab's reserved keywords).
RESERVED = frozenset(
    {
        "default",
        "include",
        "stages",
        "variables",
        "workflow",
        "image",
        "services",
        "cache",
        "before_script",
        "after_script",
        "spec",
        "pages:deploy",
    }
)
SCRIPTS = ("before_script", "script", "after_script")
# GitLab expands nothing in a script line: $CI_VAR and ${CI_VAR} are the shell's. A !reference [job,
# script] tag is another job's lines: not followed here (that job's own lines are read).
_REFERENCE = "!reference"


def _variables(node: yaml.Node | None) -> dict[str, tuple[str, bool]]:
    """A ``variables:`` block: ``NAME: value`` or ``NAME: {value: ..., description: ...}``, each
    with whether GitLab expands the variables its value names (not with ``expand: false``)."""
    out = {}
    for key, node_value in yamldoc.items(node):
        value: yaml.Node | None = node_value
        expands = True
        if isinstance(node_value, yaml.MappingNode):
            value = yamldoc.get(node_value, "value")
            flag = yamldoc.get(node_value, "expand")
            expands = not (isinstance(flag, yaml.ScalarNode) and str(flag.value).lower() == "false")
        if isinstance(value, yaml.ScalarNode) and value.tag != _REFERENCE:
            out[key] = (str(value.value), expands)
    return out


def _expanded(variables: dict[str, tuple[str, bool]], budget: Budget) -> dict[str, str]:
    """The values a job's shell starts with: GitLab expands a variable inside a variable, a job's
    naming the file's too, to any depth, before the job runs ("Use variables in other variables";
    ``Gitlab::Ci::Variables::Collection#sort_and_expand_all``), except a value marked ``expand: false``."""
    found = Definitions(budget)
    for name, (value, expands) in variables.items():
        found.define(name, value, literal=not expands)
    return found.values()


def _lines(node: yaml.Node | None) -> Iterator[yaml.ScalarNode]:
    """A script's lines: a string, or a list of them (nested lists are flattened, as GitLab does)."""
    if isinstance(node, yaml.ScalarNode) and node.tag != _REFERENCE:
        yield node
    elif isinstance(node, yaml.SequenceNode) and node.tag != _REFERENCE:
        for item in node.value:
            yield from _lines(item)


def parse(path: str, text: str) -> Iterator[Parsed]:
    doc = yamldoc.document(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    index, root = doc
    scanner = Scanner(index, NAME)
    top = _variables(yamldoc.get(root, "variables"))
    default = yamldoc.get(root, "default")
    for name, job in yamldoc.items(root):
        if name in RESERVED or not isinstance(job, yaml.MappingNode):
            continue
        if not any(yamldoc.get(job, key) is not None for key in SCRIPTS):
            continue  # a template with no script of its own, or a trigger job
        scanner.scope = f"job:{name}"
        values = _expanded({**top, **_variables(yamldoc.get(job, "variables"))}, scanner.budget)
        parts = {key: yamldoc.get(job, key) or yamldoc.get(default, key) for key in SCRIPTS}
        parts["script"] = yamldoc.get(job, "script")  # default: gives no script
        yield from _machine(index, text, job, default, root, scanner.scope)
        state = State(Scope(values=values))
        for key in SCRIPTS:
            if key == "after_script":  # a new shell on the same machine: what the script set is gone
                state = State(Scope(values=values))
            for line in _lines(parts[key]):
                start, end = yamldoc.span(line, text)
                scanner.run(start, end, state, text=text[start:end])
                yield from scanner.drain()
    yield from scanner.finish()


def _machine(
    index: TextIndex,
    text: str,
    job: yaml.MappingNode,
    default: yaml.Node | None,
    root: yaml.Node | None,
    scope: str,
) -> Iterator[Parsed]:
    """The job's image and runner tags: its own, else ``default:``'s (and, for the image, the file's);
    the build variables its ``variables:`` (or the file's) set for every line of its script."""
    for block in (yamldoc.get(root, "variables"), yamldoc.get(job, "variables")):
        for name, item in yamldoc.items(block):
            node = yamldoc.get(item, "value") if isinstance(item, yaml.MappingNode) else item
            if name in BUILD_VARIABLES and isinstance(node, yaml.ScalarNode) and node.tag != _REFERENCE:
                start, end = yamldoc.span(node, text)
                yield Setting(index.location(start, end), "env", name, str(node.value), scope)
    images = (yamldoc.get(job, "image"), yamldoc.get(default, "image"), yamldoc.get(root, "image"))
    ref = next((n for n in images if n is not None), None)
    if isinstance(ref, yaml.MappingNode):
        ref = yamldoc.get(ref, "name")
    if isinstance(ref, yaml.ScalarNode) and ref.tag != _REFERENCE and "$" not in str(ref.value):
        start, end = yamldoc.span(ref, text)
        yield image(str(ref.value), index.location(start, end), scope)._replace(said="image:")
    tags = yamldoc.get(job, "tags") or yamldoc.get(default, "tags")
    if isinstance(tags, yaml.SequenceNode) and tags.tag != _REFERENCE:
        for node in tags.value:
            if isinstance(node, yaml.ScalarNode) and "$" not in str(node.value):
                start, end = yamldoc.span(node, text)
                yield Setting(index.location(start, end), "runner", "tags", str(node.value), scope)
