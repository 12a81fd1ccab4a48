"""What the readers of Windows install scripts (``batch``, ``powershell``) share: the machine they run
on, the commands' names as Windows writes them, and their variables in the shell model's terms.

Each script is parsed with its own grammar (tree-sitter-batch, tree-sitter-powershell), never as sh;
the commands it runs are handed to the same ``Scanner`` the shell readers use, as words: quotes and
escapes already removed, a path's ``\\`` made ``/``, and each variable reference the script makes
(``%FA%``, ``$env:FA``, ``$fa``) a ``${NAME}`` of the scanner's scope, which holds the values the
script gives it. What the scanner reports as unresolved is said again in the script's own spelling.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Protocol

from fa_lint.model import BUILD_VARIABLES, NotRun, Parsed, ParseProblem, Requirement, Setting
from fa_lint.shell.parse import Chunk, TooCostly, Word, bounded
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import Scope, expand
from fa_lint.syntax.text import TextIndex

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

# the Windows launcher (py -3.11 -m pip) and an interpreter or tool named with its .exe
_LAUNCHER = re.compile(r"^py(?:\.exe)?$", re.I)
_EXE = re.compile(r"\.(?:exe|cmd|bat)$", re.I)
_PLACEHOLDER = re.compile(r"\$\{W\d+\}")


MAX_DEPTH = 200  # nested blocks followed; deeper is a located problem, never a RecursionError


class Walk(Protocol):
    """A script's walk over its grammar's tree (``batch._Walk``, ``powershell._Walk``)."""

    scanner: Scanner
    names: Names
    problems: list[ParseProblem]

    def run(self, root: Node) -> None: ...


def read(
    path: str, text: str, kind: str, parser: Parser, walk: Callable[[Scanner, Chunk], Walk]
) -> Iterator[Parsed]:
    """A Windows script's records: the platform it runs on, then what its walk finds (or where its
    grammar gives up)."""
    index = TextIndex(path, text)
    yield platform(index, kind)
    chunk = Chunk(text)  # tree-sitter's bytes to the text's characters
    root = tree(parser, chunk.data, index)
    if isinstance(root, ParseProblem):
        yield root
        return
    done = walk(Scanner(index, kind), chunk)
    done.run(root)
    yield from done.names.restore(done.scanner.finish())
    yield from done.problems


def tree(parser: Parser, data: bytes, index: TextIndex) -> Node | ParseProblem:
    """The script's parse, or why there is none: its grammar's error recovery ran past the bound a
    shell script's has (tree-sitter's recovery is super-linear in broken text)."""
    try:
        return bounded(parser, data)
    except TooCostly:
        return ParseProblem(
            index.location(0, 0), "the file's syntax errors take too long to read past; not read"
        )


def too_deep(index: TextIndex, start: int) -> ParseProblem:
    return ParseProblem(
        index.location(start, start), f"blocks nested deeper than {MAX_DEPTH} levels; not read past here"
    )


def platform(index: TextIndex, kind: str) -> Setting:
    """The script's machine: Windows, where it runs (a ``.bat`` or ``.ps1`` is run there)."""
    return Setting(index.location(0, 0), "platform", f"{kind} script", "windows")


class Names:
    """The script's variables as the scanner's scope holds them: ``${W1}``, ``${W2}`` ..., each
    standing for a name as the script writes it (``%FA%``, ``$env:MAX_JOBS``)."""

    def __init__(self) -> None:
        self.scope = Scope()
        self._keys: dict[str, str] = {}  # the script's name, folded -> the scope's
        self.written: dict[str, str] = {}  # "${W1}" -> "%FA%"
        self._aliases: dict[str, str] = {}  # a reference as written -> its own key
        self._count = 0

    def key(self, name: str, written: str) -> str:
        folded = name.casefold()  # cmd.exe's and PowerShell's names ignore case
        if folded not in self._keys:
            self._keys[folded] = name if name in BUILD_VARIABLES else self._new()
            self.written["${" + self._keys[folded] + "}"] = written
        return self._keys[folded]

    def _new(self) -> str:
        self._count += 1
        return f"W{self._count}"

    def assign(self, name: str, written: str, value: str, possible: bool) -> str:
        """``value`` as the script writes it, its references made ``${Wn}`` (``reference``): they are
        expanded now, as the script expands them when it assigns. The value as assigned."""
        found = expand(value, self.scope)
        if not found.unresolved and len(found.texts) == 1:
            value = found.text
        key = self.key(name, written)
        old = self.scope.get(key)
        if not possible:
            self.scope.set(key, (value,))
        else:  # a branch's value beside what was there (or nothing: it may stay unset)
            self.scope.set(key, tuple(dict.fromkeys((*(old or (None,)), value))))
        return value

    def reference(self, name: str, written: str) -> str:
        """``${Wn}`` for the reference as written here, holding the variable's values now (a reference
        is expanded when its command runs, which is when it is read), so that what the scanner says
        of it names it as this line spells it."""
        values = self.scope.get(self.key(name, written))
        alias = self._aliases.get(written)
        if alias is None:
            alias = self._aliases[written] = self._new()
            self.written["${" + alias + "}"] = written
        if values is not None:
            self.scope.set(alias, values)
        elif self.scope.get(alias) is not None:
            self.scope.set(alias, (None,))
        return "${" + alias + "}"

    def restore(self, records: Iterable[Parsed]) -> Iterator[Parsed]:
        """The records, each unresolved reference named as the script writes it."""
        for r in records:
            if isinstance(r, Requirement):
                yield self._written(r)
            elif isinstance(r, NotRun):
                yield r._replace(requirement=self._written(r.requirement))
            else:
                yield r

    def _written(self, r: Requirement) -> Requirement:
        if "${W" not in r.raw and r.unresolved not in self.written:
            return r
        raw = _PLACEHOLDER.sub(lambda m: self.written.get(m.group(), m.group()), r.raw)
        return r._replace(raw=raw, unresolved=self.written.get(r.unresolved or "", r.unresolved))


def command_words(words: list[Word]) -> list[Word]:
    """The words with the command's name as the scanner knows it: ``python.exe`` is ``python``, and
    ``py -3.11`` (the launcher, which runs the Python it names) is ``python``."""
    if not words:
        return words
    head = words[0]
    name = head.text.rsplit("/", 1)[-1]
    if _LAUNCHER.match(name):
        rest = words[1:]
        if rest and re.fullmatch(r"-\d+(?:\.\d+)?(?:-\d+)?", rest[0].text):
            rest = rest[1:]
        return [Word("python", head.start, head.end), *rest]
    suffix = _EXE.search(name)
    if suffix is not None:
        return [Word(head.text[: suffix.start() - len(name)], head.start, head.end, head.quoted), *words[1:]]
    return words
