"""Jupyter and Colab notebooks (``.ipynb``): the installs their cells run, and the GPU Colab or Kaggle
gives them.

What IPython hands to a shell is read as the shell script it is (``syntax.notebook`` says which lines):
a ``!`` line, each in a shell of its own (IPython starts one per line, so a ``cd`` there ends with
it); ``%pip`` and ``%conda`` lines, which run ``python -m pip`` and conda through the shell with the
rest of the line; the body of a ``%%bash``/``%%sh`` cell, as one script. ``%cd DIR`` moves the kernel
(and every later command) into DIR; ``%env NAME=value`` sets a variable for every later command. A
line inside a Python block (indented: an ``if``, a ``try``) may not run. IPython replaces ``{expr}``
with a Python value before the shell sees the line: a value fa-lint cannot know (FAL009).

The machine: Colab's ``metadata.colab.gpuType`` (``"T4"``, ``"L4"``, ``"A100"``) and Kaggle's
``metadata.kaggle.accelerator`` (``"nvidiaTeslaT4"``) name the GPU the notebook was saved for.

Positions are the JSON file's lines and columns, as an editor, ``git diff`` and a pull request show
the file: each character of a cell is placed where the file writes it (an escape at its backslash).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fa_lint._lazy import Lazy
from fa_lint.model import Parsed, ParseProblem, Setting
from fa_lint.shell.parse import Chunk
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import Scope, State
from fa_lint.syntax import jsondoc
from fa_lint.syntax import notebook as nb
from fa_lint.syntax.text import TextIndex

NAME = "notebook"
# line magics that run a packaging tool through the shell with the rest of the line
_TOOLS = frozenset({"pip", "conda", "mamba"})
# cell magics whose body is still IPython input (a ``%%capture`` cell's ``!pip install`` runs)
_TRANSPARENT = frozenset({"capture", "time", "timeit", "prun"})
# IPython's ``{expr}`` in a ``!`` or ``%`` line (``{{`` is a brace), but not a shell's ``${NAME}``
_PYTHON_VALUE = Lazy(r"(?<![$\\{]){([^{}\n]*)}(?!})")
_KAGGLE = Lazy(r"^nvidia(?:Tesla)?([A-Za-z0-9]+?)(?:X\d+)?$")


def parse(path: str, text: str) -> Iterator[Parsed]:
    found = nb.load(path, text)
    if isinstance(found, ParseProblem):
        yield found
        return
    doc, cells = found
    index = TextIndex(path, text)
    yield from _machine(doc)
    reader = _Reader(Scanner(index, NAME))
    for cell in cells:
        reader.cell(cell)
    yield from reader.scanner.finish()


class _Reader:
    """What the kernel keeps from cell to cell: its folder and its environment variables."""

    def __init__(self, scanner: Scanner) -> None:
        self.scanner = scanner
        self.env = Scope()  # %env: os.environ of the kernel, seen by every later command
        self.cwd = "."

    def cell(self, cell: nb.Cell) -> None:
        magic = nb.cell_magic(cell)
        if magic is None:
            self._lines(cell, 0)
            return
        first = cell.text.find("\n")
        body = len(cell.text) if first < 0 else first + 1
        if magic in nb.SHELL_CELLS:
            self._run(cell, body, len(cell.text), possible=False)
        elif magic in _TRANSPARENT:
            self._lines(cell, body)

    def _lines(self, cell: nb.Cell, start: int) -> None:
        for line in nb.lines(cell.text[start:]):
            end, body = start + line.end, start + line.body
            if line.kind == "shell":
                self._run(cell, body, end, line.indented)
            elif line.kind == "magic":
                self._magic(cell, body, end, line.indented)

    def _magic(self, cell: nb.Cell, start: int, end: int, possible: bool) -> None:
        text = cell.text[start:end]
        name, _, rest = text.partition(" ")
        if name in _TOOLS:
            self._run(cell, start, end, possible)
        elif name in ("sx", "system"):
            self._run(cell, start + len(name) + 1, end, possible)
        elif name == "cd" and not possible:
            state = State(self.env, self.cwd)
            self.cwd = state.folder(rest.strip().strip("'\"") or "~")
        elif name == "env":
            self._env(cell, start + len(name) + 1, rest, possible)

    def _env(self, cell: nb.Cell, start: int, rest: str, possible: bool) -> None:
        """``%env NAME=value`` or ``%env NAME value``: set for the kernel and what it runs after."""
        m = re.match(r"[ \t]*([A-Za-z_]\w*)(?:[ \t]*=[ \t]*|[ \t]+)(.*?)[ \t]*$", rest)
        if m is None:
            return
        name, value = m.group(1), m.group(2).strip("'\"")
        old = self.env.get(name)
        self.env.set(name, tuple(dict.fromkeys((*old, value))) if possible and old else (value,))
        where = [cell.positions[start], cell.positions[min(start + len(rest), len(cell.positions)) - 1] + 1]
        self.scanner.assign(name, value, where[0], where[1], possible)

    def _run(self, cell: nb.Cell, start: int, end: int, possible: bool) -> None:
        text, positions = _with_python_values(cell.text[start:end], list(cell.positions[start:end]))
        if not text.strip():
            return
        # each ``!`` line and each cell runs in a shell of its own, in the kernel's folder
        state = State(self.env.child(), self.cwd)
        self.scanner.script(Chunk(text, positions=positions), state, possible=possible)


def _with_python_values(text: str, positions: list[int]) -> tuple[str, list[int]]:
    """The line with each IPython ``{expr}`` made a shell expansion the file never sets (``${expr}``
    for a name, ``$(expr)`` for an expression), each character still placed in the file."""
    if "{" not in text:
        return text, positions
    out: list[str] = []
    placed: list[int] = []
    at = 0
    for m in _PYTHON_VALUE().finditer(text):
        out.append(text[at : m.start()])
        placed += positions[at : m.start()]
        inner = m.group(1).strip()
        opening, closing = ("${", "}") if re.fullmatch(r"[A-Za-z_]\w*", inner) else ("$(", ")")
        out += [opening, m.group(1), closing]
        brace, inside = positions[m.start()], positions[m.start() + 1 : m.end() - 1]
        placed += [brace, brace, *inside, positions[m.end() - 1]]
        at = m.end()
    out.append(text[at:])
    placed += positions[at:]
    return "".join(out), placed


def _machine(doc: jsondoc.JsonDoc) -> Iterator[Setting]:
    """The GPU Colab's or Kaggle's metadata names for the notebook."""
    meta = doc.data.get("metadata") if isinstance(doc.data, dict) else None
    if not isinstance(meta, dict):
        return
    colab, kaggle = meta.get("colab"), meta.get("kaggle")
    if isinstance(colab, dict) and isinstance(colab.get("gpuType"), str) and colab["gpuType"]:
        start, end = jsondoc.key_span(doc, ("metadata", "colab", "gpuType"))
        yield Setting(doc.index.location(start, end), "gpu", "colab gpuType", colab["gpuType"])
    accelerator = kaggle.get("accelerator") if isinstance(kaggle, dict) else None
    m = _KAGGLE().match(accelerator) if isinstance(accelerator, str) else None
    if m is not None:
        start, end = jsondoc.key_span(doc, ("metadata", "kaggle", "accelerator"))
        yield Setting(doc.index.location(start, end), "gpu", "kaggle accelerator", m.group(1))
