"""``make -f FILE``: a Makefile a script runs by name (``Makefile-cuda``, ``build/flash.mk``), read as
one (``sources.makefile``) wherever it is, and what its recipes install judged where the script runs
them (the stage of a Dockerfile, the job of a workflow).

Only the file named by ``-f``/``--file``/``--makefile`` (from ``-C DIR`` when given): the recipes
make runs are those of the targets named, so what the file installs may not all run here (its
records join this command's as possible). A plain ``make`` reads the folder's ``Makefile``, which a
walk finds by its name.
"""

from __future__ import annotations

import posixpath

from fa_lint.model import Include
from fa_lint.shell.context import Sink
from fa_lint.shell.parse import Word
from fa_lint.shell.variables import State, expand

TOOLS = frozenset({"make", "gmake"})
_FILE = ("-f", "--file", "--makefile")


def _named(words: list[Word]) -> tuple[Word | None, str, Word | None]:
    """The word that names the file (and the file as written), and the ``-C`` folder's word."""
    found: tuple[Word | None, str] = (None, "")
    folder = None
    for i, w in enumerate(words):
        following = words[i + 1] if i + 1 < len(words) else None
        text = w.text
        if text in _FILE and following is not None:
            found = (following, following.text)
        elif text.startswith(tuple(f"{o}=" for o in _FILE[1:])):
            found = (w, text.split("=", 1)[1])
        elif text.startswith("-f") and len(text) > 2 and not text.startswith("--"):
            found = (w, text[2:])
        elif text in ("-C", "--directory") and following is not None:
            folder = following
    return found[0], found[1], folder


def included(scanner: Sink, words: list[Word], state: State, make: bool) -> list[Include]:
    """The Makefile a ``make -f FILE`` command reads, as an include of this file's."""
    word, written, folder = _named(words[1:])
    if word is None or not written:
        return []
    path = expand(written, state.scope, make)
    base = expand(folder.text, state.scope, make) if folder is not None else None
    if path.unresolved or (base is not None and base.unresolved):
        return []
    here = state.folder(posixpath.join(base.text, path.text) if base is not None else path.text, make)
    if scanner.clones.foreign(here):
        return []  # a file of a clone: another project's
    target: str | None = here
    if scanner.include_map is not None:
        target = scanner.include_map(here, word.start)
    if target is None or posixpath.isabs(target):
        return []
    where = scanner.location(word)
    found = Include(where, target, optional=True, possible=True, source="makefile")
    return [found._replace(scope=scanner.scope, step=scanner.step)]
