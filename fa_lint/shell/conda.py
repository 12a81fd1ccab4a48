"""``conda install``, ``mamba install``, ``micromamba install`` and ``conda create``: each argument a
MatchSpec (``pytorch=2.4``, ``conda-forge::flash-attn``), read by ``fa_lint.syntax.matchspec``; and
``conda env create|update -f environment.yml`` (``micromamba create -f``): that file's packages, and
its ``pip:`` list after them, are what the command installs, at its place in the script."""

from __future__ import annotations

from fa_lint.model import Requirement
from fa_lint.shell.commands import CONDA_ARGS, Install, option
from fa_lint.shell.context import Context, Sink
from fa_lint.shell.pip import include
from fa_lint.shell.variables import expand

_ENV_FILES = (".yml", ".yaml")  # `conda create --file` also takes an explicit spec list, not read here


def install(scanner: Sink, inst: Install, c: Context) -> None:
    """Each package a conda install names, as a record; an environment file, as an include."""
    it = iter(inst.args)
    for word in it:
        found = option(word, ("-f", "--file"), it) if inst.verb in ("env", "create") else None
        if found is not None:
            if found.text.endswith(_ENV_FILES):
                include(scanner, found, False, c)
            continue
        if inst.verb == "env":
            continue  # conda env create takes no package specs
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
