"""What each tool family's reader (``pip``, ``twostep``, ``pybuild``, ``conda``) sees of the file and
of the command: the ``Sink`` (the part of ``scanner.Scanner`` they use) and the command's ``Context``.

Its own module, below the families and the scanner, so that the families need not import the
scanner that calls them (a circle, even for types only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from fa_lint._records import NamedTuple
from fa_lint.model import Include, InstallOptions, Location, Requirement, Uninstall
from fa_lint.shell.builds import Clones
from fa_lint.shell.parse import Command, Word
from fa_lint.shell.variables import State
from fa_lint.shell.wheels import Wheels
from fa_lint.syntax.text import TextIndex


class Context(NamedTuple):
    """What one command runs with: the shell's state, whether it surely runs, and the command."""

    state: State
    possible: bool
    make: bool
    cmd: Command
    upgrade: bool  # -U, --force-reinstall...: it reinstalls what is already there
    options: InstallOptions = InstallOptions()  # where packages come from, how sdists build


class Sink(Protocol):
    """One file's commands so far: where their words are, and where their records go."""

    index: TextIndex
    source: str
    scope: str
    step: int
    include_map: Callable[[str, int], str | None] | None
    clones: Clones
    wheels: Wheels

    def location(self, word: Word) -> Location: ...

    def fields(self, c: Context) -> dict[str, Any]: ...

    def emit(self, rec: Requirement | Include | Uninstall, c: Context) -> None: ...
