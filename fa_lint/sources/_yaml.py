"""Reading YAML as PyYAML's node graph, which keeps the position of every scalar."""

from __future__ import annotations

from collections.abc import Iterator

import yaml

from fa_lint.model import ParseProblem
from fa_lint.sources._text import TextIndex


def document(path: str, text: str) -> tuple[TextIndex, yaml.Node | None] | ParseProblem:
    """A file's text index and root node, or where the YAML breaks."""
    index = TextIndex(path, text)
    root = load(index)
    return root if isinstance(root, ParseProblem) else (index, root)


def load(index: TextIndex) -> yaml.Node | ParseProblem | None:
    try:
        return yaml.compose(index.text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        start = mark.index if mark is not None else 0
        return ParseProblem(index.location(start, start), f"invalid YAML: {exc.problem or exc.context}")
    except yaml.YAMLError as exc:
        return ParseProblem(index.location(0, 0), f"invalid YAML: {exc}")


def items(node: yaml.Node | None) -> Iterator[tuple[str, yaml.Node]]:
    """(key, value node) pairs of a mapping node with scalar keys."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                yield str(key.value), value


def get(node: yaml.Node | None, key: str) -> yaml.Node | None:
    return next((v for k, v in items(node) if k == key), None)


def span(node: yaml.Node, text: str) -> tuple[int, int]:
    """Offsets of a scalar's text: inside its quotes; below the indicator line of a block scalar."""
    start, end = node.start_mark.index, node.end_mark.index
    style = getattr(node, "style", None)
    if style in ("'", '"'):
        return start + 1, end - 1
    if style in ("|", ">"):
        nl = text.find("\n", start, end)
        return (end if nl < 0 else nl + 1), end
    return start, end


def scalars(node: yaml.Node | None) -> dict[str, str]:
    """A mapping of scalars as plain strings (env: blocks)."""
    return {k: str(v.value) for k, v in items(node) if isinstance(v, yaml.ScalarNode)}
