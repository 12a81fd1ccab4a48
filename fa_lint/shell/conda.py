"""``conda install``, ``mamba install``, ``micromamba install``: each argument a MatchSpec
(``pytorch=2.4``, ``conda-forge::flash-attn``), read by ``fa_lint.syntax.matchspec``."""

from __future__ import annotations

from fa_lint.model import Requirement
from fa_lint.shell.commands import CONDA_ARGS
from fa_lint.shell.context import Context, Sink
from fa_lint.shell.parse import Word
from fa_lint.shell.variables import expand


def install(scanner: Sink, args: list[Word], c: Context) -> None:
    """Each package a conda install names, as a record."""
    it = iter(args)
    for word in it:
        if word.text.startswith("-"):
            if word.text in CONDA_ARGS:
                next(it, None)
            continue
        exp = expand(word.text, c.state.scope, c.make)
        if exp.unresolved:
            continue
        from fa_lint.syntax import matchspec  # for `conda install` only

        rec = matchspec.matchspec(exp.text, scanner.location(word), scanner.source, **scanner.fields(c))
        if isinstance(rec, Requirement):
            scanner.emit(rec, c)
