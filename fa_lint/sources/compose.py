"""Docker Compose files: the build arguments each service builds its Dockerfile with.

``services.NAME.build`` is a context folder, or a table with ``context``, ``dockerfile`` (from the
context) and ``args`` (a mapping, or a list of ``NAME=VALUE``), as the Compose specification's build
section says. Each argument is a ``BuildArg`` for that Dockerfile (``fa_lint.files.project`` reads it again
with the values, for its ``ARG`` lines without a default). A value with a variable (``${VER}``, set
from the shell or a ``.env`` file when compose runs) is not known here, and is left out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

import yaml

from fa_lint.model import BuildArg, Parsed, ParseProblem
from fa_lint.syntax import yamldoc
from fa_lint.syntax.text import TextIndex

NAME = "compose"
_ARG = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse(path: str, text: str) -> Iterator[Parsed]:
    doc = yamldoc.document(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    index, root = doc
    for _, service in yamldoc.items(yamldoc.get(root, "services")):
        yield from _build(index, text, yamldoc.get(service, "build"))


def _build(index: TextIndex, text: str, build: yaml.Node | None) -> Iterator[BuildArg]:
    if not isinstance(build, yaml.MappingNode):
        return  # a bare context folder gives no arguments
    context = yamldoc.get(build, "context")
    dockerfile = yamldoc.get(build, "dockerfile")
    folder = str(context.value) if isinstance(context, yaml.ScalarNode) else "."
    name = str(dockerfile.value) if isinstance(dockerfile, yaml.ScalarNode) else "Dockerfile"
    target = posixpath.normpath(posixpath.join(folder, name))
    if "$" in target or "://" in folder or posixpath.isabs(target):
        return
    for key, value, node in _args(yamldoc.get(build, "args")):
        if _ARG.fullmatch(key) and "$" not in value:
            start, end = yamldoc.span(node, text)
            yield BuildArg(index.location(start, end), target, key, value)


def _args(node: yaml.Node | None) -> Iterator[tuple[str, str, yaml.Node]]:
    """``args: {NAME: VALUE}`` or ``args: [NAME=VALUE]``; a NAME with no value passes the shell's."""
    if isinstance(node, yaml.MappingNode):
        for key, value in yamldoc.items(node):
            if isinstance(value, yaml.ScalarNode) and value.tag != "tag:yaml.org,2002:null":
                yield key, str(value.value), value
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if isinstance(item, yaml.ScalarNode):
                name, eq, given = str(item.value).partition("=")
                if eq:
                    yield name.strip(), given.strip(), item
