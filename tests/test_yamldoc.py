"""YAML composed by libyaml where PyYAML's own composer makes the same graph (fa_lint/syntax/yamldoc.py),
and by PyYAML's composer everywhere else: the same nodes, values, styles and offsets either way, and
the alias budget and nesting failures as before."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from fa_lint.syntax import yamldoc
from fa_lint.syntax.text import TextIndex

ROOT = Path(__file__).resolve().parents[1]
needs_libyaml = pytest.mark.skipif(
    getattr(yaml, "CSafeLoader", None) is None, reason="this PyYAML was built without libyaml"
)


def _graph(node: yaml.Node | None) -> Any:
    """What a reader of the graph sees: kinds, tags, values, styles (PyYAML's plain style is None,
    libyaml's ''), offsets; not flow_style (None or False in a block) or line and column (unread)."""
    if node is None:
        return None
    head = (type(node).__name__, node.tag, node.start_mark.index, node.end_mark.index)
    if isinstance(node, yaml.ScalarNode):
        return (*head, node.value, node.style or None)
    if isinstance(node, yaml.SequenceNode):
        return (*head, [_graph(child) for child in node.value])
    return (*head, [(_graph(k), _graph(v)) for k, v in node.value])


def _pyyaml(text: str) -> Any:
    """Every document as PyYAML's composer (with the alias budget) makes it, or the error it raises."""
    try:
        loader = yamldoc._Loader(text)  # its reader refuses some characters at once
        try:
            return [_graph(loader.get_node()) for _ in iter(loader.check_node, False)]
        finally:
            loader.dispose()
    except (yaml.YAMLError, RecursionError) as exc:
        return type(exc).__name__


def _same_or_refused(text: str) -> bool:
    fast = yamldoc._libyaml(text)
    if fast is None:
        return False
    assert [_graph(doc) for doc in fast] == _pyyaml(text), repr(text)
    return True


WORKFLOW = """\
name: ci
on:
  push:
    branches: [main, "release/*"]
  pull_request: {}
env:
  CUDA: "12.1"
jobs:
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-22.04, 'ubuntu-24.04']
        python: ["3.10", "3.11"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with: {python-version: "${{ matrix.python }}"}
      - name: install
        run: |
          pip install torch==2.4.0 2>&1 | tee log.txt && echo ok
          pip install --no-build-isolation "flash-attn>=2.6"  # é, 😀
      - run: >-
          echo folded
          text
      - run: echo "${{ env.CUDA }}" && test $? -eq 0
"""


@needs_libyaml
def test_a_workflow_is_composed_by_libyaml_as_pyyaml_composes_it() -> None:
    assert _same_or_refused(WORKFLOW)
    assert _graph(yamldoc.load(TextIndex("ci.yml", WORKFLOW))) == _pyyaml(WORKFLOW)[0]


@needs_libyaml
def test_every_yaml_file_of_the_tests_and_shared_reads_alike() -> None:
    files = [p for folder in (ROOT / "tests" / "data", ROOT.parent / "shared") for p in _yaml_files(folder)]
    fast = [p for p in files if _same_or_refused(p.read_text(encoding="utf-8", errors="replace"))]
    assert len(fast) >= 0.8 * len(files) > 0


def _yaml_files(folder: Path) -> list[Path]:
    return sorted(p for ext in ("*.yml", "*.yaml") for p in folder.rglob(ext)) if folder.is_dir() else []


@pytest.mark.parametrize(
    "text",
    [
        "a:\tb\n",  # PyYAML refuses a tab here, libyaml takes it
        "\ufeffa: 1\n",  # libyaml's offsets start after the byte order mark
        "a: |#c\n  x\n",  # a comment glued to a block scalar header: libyaml takes it
        "k: {a ? b}\n",  # PyYAML ends a plain scalar at ? in a flow collection
        "k: {a: }\n",  # the empty value: a column apart
        "a: &x [1]\nb: *x\n",  # an anchor: composed under the alias budget
        "x: [a, &y b]\n",
        "a: 1\x00\n",  # a character PyYAML's reader refuses
        "k: " + "[" * 150 + "]" * 150 + "\n",  # deeper than PyYAML's composer may read
        "a: 1\n---\nb: 2\n",  # two documents where one is asked for: PyYAML's error
    ],
)
def test_what_libyaml_reads_otherwise_goes_to_pyyaml(text: str) -> None:
    fast = yamldoc._libyaml(text)
    assert fast is None or len(fast) > 1
    loaded = yamldoc.load(TextIndex("x.yml", text))
    expected = _pyyaml(text)
    if isinstance(expected, list) and len(expected) == 1:
        assert _graph(loaded) == expected[0]  # type: ignore[arg-type]
    else:
        assert not isinstance(loaded, yaml.Node)


TOKENS = [
    *("a", "b: ", "c:", "- ", "-", " ", "  ", "\n", "\n  ", "\n    ", "\t", '"x"', "'y'", '"\\t"'),
    *("[", "]", "{", "}", ",", ", ", ": ", "? ", "?", ":", "|", "|-", ">", ">+", "#c", " #c"),
    *("!!str ", "!t ", "&a ", "*a", "&", "*", "%YAML 1.1\n", "---", "...", "\r", "\r\n", "\x85"),
    *("\u2028", "\ufeff", "é", "😀", "@", "`", "%", "\\", "run: |\n  echo hi\n", "k: v\n", "12"),
    *("null", "~", "yes", "[a, b]", "{a: 1}", "${{ x }}", "\x7f", "\xa0", "''", '""', "<<: ", "="),
]


@needs_libyaml
@pytest.mark.parametrize("seed", range(3))
def test_random_texts_libyaml_keeps_are_pyyamls(seed: int) -> None:
    rnd = random.Random(seed)
    kept = 0
    for _ in range(4_000):
        kept += _same_or_refused("".join(rnd.choice(TOKENS) for _ in range(rnd.randint(1, 14))))
    assert kept > 400  # the comparison saw many texts libyaml read


def test_the_alias_budget_holds_for_a_text_with_anchors() -> None:
    levels = "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))
    problem = yamldoc.load(TextIndex("x.yml", "a0: &a0 [x]\n" + levels))
    assert not isinstance(problem, yaml.Node) and problem is not None
    assert "aliases expand this document past" in problem.message


# What fa-lint sent to PyYAML's composer before its pieces were searched one by one: the one pattern.
_ONE_PATTERN = r"[\t\ufeff]|(?:^|[\s\[{,:?])&[0-9A-Za-z_-]|[|>][-+0-9]*#"
_PIECES = [
    "&",
    "&&",
    "&a",
    "a",
    "-",
    "_",
    " ",
    "\t",
    "\n",
    "\u3000",
    "\u00a0",
    "\ufeff",
    "[",
    "{",
    ",",
    ":",
    "?",
    "|",
    ">",
    "+",
    "1",
    "#",
    "x: ",
    "- ",
    "run: a && b",
]


@pytest.mark.parametrize("seed", range(40))
def test_the_pieces_searched_alone_find_what_the_one_pattern_found(seed: int) -> None:
    import re

    rng = random.Random(seed)
    for _ in range(500):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(12)))
        assert yamldoc._not_libyaml(text) == (re.search(_ONE_PATTERN, text) is not None), repr(text)
