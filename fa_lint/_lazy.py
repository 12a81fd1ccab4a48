"""A regular expression compiled the first time it is used.

Python compiles a pattern in Python (``re._parser``, ``re._compiler``): 0.1-0.5 ms each, and a module
that compiles its patterns when imported pays for all of them in every run that imports it. Most of
fa-lint's patterns read what few files hold (an Azure VM size, a Kaggle accelerator, a CUDA runfile's
name, a noqa comment): over the clones of ../shared/wholerepo, 39 of the patterns a run compiled went
unused in nearly every run, about a third of its compile time (issue 41). Such a pattern is written
``_NAME = Lazy(r"...")`` and used as ``_NAME().search(text)``. ``re``'s own cache would do it for a
string passed to ``re.search``, but it holds 512 patterns and a project's ``.gitignore`` globs fill it.
"""

from __future__ import annotations

import re
from typing import AnyStr, Generic


class Lazy(Generic[AnyStr]):
    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: AnyStr, flags: int = 0) -> None:
        self._source: AnyStr = source
        self._flags = flags
        self._compiled: re.Pattern[AnyStr] | None = None

    def __call__(self) -> re.Pattern[AnyStr]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._source, self._flags)
        return compiled
