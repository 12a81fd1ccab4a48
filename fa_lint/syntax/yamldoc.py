"""Reading YAML as PyYAML's node graph, which keeps the position of every scalar.

PyYAML composes in Python, character by character: most of what a workflow costs to check. Where
PyYAML was built with libyaml, a text is composed by libyaml's C scanner and parser first, and that
graph is kept only where it is the one PyYAML's own composer makes (``_libyaml``); any other text,
and every text libyaml refuses, is read by PyYAML's composer, which says where it breaks as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml

from fa_lint.model import ParseProblem
from fa_lint.syntax.text import TextIndex


def document(path: str, text: str) -> tuple[TextIndex, yaml.Node | None] | ParseProblem:
    """A file's text index and root node, or where the YAML breaks."""
    index = TextIndex(path, text)
    root = load(index)
    return root if isinstance(root, ParseProblem) else (index, root)


# What aliases may add to a document, counted as if each were written out: one per node, plus the
# characters of each scalar. PyYAML shares an aliased node, but every reader that walks the graph
# (conda's pip: lists, a workflow's steps, each run: script) pays for each alias again, so a small
# file of nested aliases ("billion laughs") would cost minutes and gigabytes.
ALIAS_BUDGET = 1_000_000


class AliasBudgetExceeded(yaml.YAMLError):
    def __init__(self, event: yaml.Event, why: str) -> None:
        super().__init__(why)
        self.offset = event.start_mark.index if event.start_mark else 0
        self.why = why


class _Loader(yaml.SafeLoader):
    """PyYAML's safe composer, which also counts what each alias stands for, and stops past the budget."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.added = 0
        self.open: set[str] = set()  # anchors of the nodes being composed
        self.weights: dict[int, int] = {}  # id(node) -> its weight written out; nodes stay alive here

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event: yaml.Event = self.peek_event()  # type: ignore[no-untyped-call]
        anchor: str | None = getattr(event, "anchor", None)
        if isinstance(event, yaml.AliasEvent):
            if anchor in self.open:
                raise AliasBudgetExceeded(event, "an alias refers to the node that contains it")
            if anchor in self.anchors:
                self.added += self._weight(self.anchors[anchor])
                if self.added > ALIAS_BUDGET:
                    why = f"aliases expand this document past {ALIAS_BUDGET:,} nodes and characters"
                    raise AliasBudgetExceeded(event, why)
            return super().compose_node(parent, index)
        if anchor is not None:
            self.open.add(anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self.open.discard(anchor)

    def _weight(self, node: yaml.Node) -> int:
        """The node written out: a complete node, so its graph has no cycle; each node is weighed once."""
        pending = [node]
        while pending:
            top = pending[-1]
            if id(top) in self.weights:
                pending.pop()
                continue
            children = _children(top)
            todo = [c for c in children if id(c) not in self.weights]
            if todo:
                pending += todo
                continue
            pending.pop()
            own = 1 + (len(str(top.value)) if isinstance(top, yaml.ScalarNode) else 0)
            self.weights[id(top)] = own + sum(self.weights[id(c)] for c in children)
        return self.weights[id(node)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


_CLOADER = getattr(yaml, "CSafeLoader", None)  # None where PyYAML was built without libyaml
# What libyaml reads otherwise than PyYAML (each found comparing the two on real files and random
# texts; tests/test_syntax.py keeps comparing them): a tab (PyYAML refuses one as a separator where
# libyaml takes it), a byte order mark (libyaml's offsets start after it), a block scalar header with
# a comment glued to it (``|#c``: libyaml takes it). And an anchor: an alias needs one, and libyaml's
# composer has no budget (ALIAS_BUDGET), so a text that may hold one is composed by ``_Loader``.
# A token starts after a blank, a flow indicator, ``:`` or ``?``; an anchor name is [0-9A-Za-z_-].
# Each is looked for on its own (``_not_libyaml``): one pattern of them all tried its branches at each
# offset, 12 MB/s, a tenth of a workflow's reading.
_ANCHOR = re.compile(r"&[0-9A-Za-z_-]")  # an anchor's "&" and its name's first character
_GLUED = re.compile(r"[|>][-+0-9]*#")  # a block scalar header with a comment glued to it
# PyYAML's composer recurses about four frames a level of nesting, and fails (fa_lint.files.read says
# the file nests too deeply) where libyaml goes on to its limit of 1,000 levels: a deeper graph is
# composed again by PyYAML, to fail where it fails.
_DEEP = 100


def _libyaml(text: str) -> list[yaml.Node] | None:
    """The documents of a stream as libyaml composes them, where PyYAML's composer makes the same
    graph (types, tags, values, styles, offsets); None elsewhere."""
    if _CLOADER is None or _not_libyaml(text) or yaml.reader.Reader.NON_PRINTABLE.search(text):
        return None
    try:
        loader = _CLOADER(text)
        try:
            docs = []
            while loader.check_node():
                docs.append(loader.get_node())
        finally:
            loader.dispose()
    except Exception:  # whatever libyaml refuses, PyYAML's composer says where, as before
        return None
    return docs if all(_as_pyyaml(text, doc) for doc in docs) else None


def _not_libyaml(text: str) -> bool:
    """Whether the text holds what libyaml reads otherwise than PyYAML: a tab, a byte order mark, a
    block scalar header with a comment glued to it, or an anchor (an ``&`` with a name, at the start or
    after a blank, a flow indicator, ``:`` or ``?``: ``&&`` in a script is none)."""
    if "\t" in text or "\ufeff" in text or _GLUED.search(text):
        return True
    for m in _ANCHOR.finditer(text):
        at = m.start()
        if at == 0 or text[at - 1].isspace() or text[at - 1] in "[{,:?":  # (re's \s is str.isspace)
            return True
    return False


def _as_pyyaml(text: str, root: yaml.Node | None) -> bool:
    """Whether PyYAML composes the text of this libyaml graph alike: not too deep, and no flow
    collection where they differ: a ``?`` in it (PyYAML ends a plain scalar there, libyaml does not)
    or an empty scalar (libyaml places it a column later)."""
    pending = [(root, 0, False)] if root is not None else []
    while pending:
        node, depth, in_flow = pending.pop()
        if depth > _DEEP:
            return False
        if isinstance(node, yaml.ScalarNode):
            if in_flow and node.start_mark.index == node.end_mark.index:
                return False
            continue
        flow = in_flow or bool(getattr(node, "flow_style", False))
        if flow and not in_flow and "?" in text[node.start_mark.index : node.end_mark.index]:
            return False
        pending += [(child, depth + 1, flow) for child in _children(node)]
    return True


def load(index: TextIndex) -> yaml.Node | ParseProblem | None:
    docs = _libyaml(index.text)
    if docs is not None and len(docs) <= 1:
        return docs[0] if docs else None
    try:
        loader = _Loader(index.text)  # its reader refuses some characters at once
        try:
            return loader.get_single_node()
        finally:
            loader.dispose()
    except AliasBudgetExceeded as exc:
        return ParseProblem(index.location(exc.offset, exc.offset), f"YAML not read: {exc.why}")
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        start = mark.index if mark is not None else 0
        return ParseProblem(index.location(start, start), f"invalid YAML: {exc.problem or exc.context}")
    except yaml.reader.ReaderError as exc:
        at, why = exc.position, f"invalid YAML: character #x{exc.character:04x} is not allowed"
        return ParseProblem(index.location(at, at), why)


def load_all(index: TextIndex) -> list[yaml.Node] | ParseProblem:
    """Every document of a stream (Kubernetes manifests hold several), with the same alias budget."""
    fast = _libyaml(index.text)
    if fast is not None:
        return [doc for doc in fast if doc is not None]
    docs: list[yaml.Node] = []
    try:
        loader = _Loader(index.text)
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is not None:
                    docs.append(node)
        finally:
            loader.dispose()
    except AliasBudgetExceeded as exc:
        return ParseProblem(index.location(exc.offset, exc.offset), f"YAML not read: {exc.why}")
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        start = mark.index if mark is not None else 0
        return ParseProblem(index.location(start, start), f"invalid YAML: {exc.problem or exc.context}")
    except yaml.reader.ReaderError as exc:
        at, why = exc.position, f"invalid YAML: character #x{exc.character:04x} is not allowed"
        return ParseProblem(index.location(at, at), why)
    return docs


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
