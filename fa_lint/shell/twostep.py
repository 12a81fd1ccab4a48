"""Two-step installs' first step: ``pip wheel SPEC -w DIR`` and ``pip download SPEC -d DIR`` build or
fetch what SPEC names into DIR, where a later ``pip install DIR/*.whl`` or ``pip install --no-index
--find-links DIR NAME`` takes it (``wheels``). Each record is made here, as this command builds it, and
judged at the install that takes it.
"""

from __future__ import annotations

from fa_lint.model import Requirement
from fa_lint.shell.commands import PIP_INSTALL_ARGS, Install, option
from fa_lint.shell.context import Context, Sink
from fa_lint.shell.pip import target


def wheel(scanner: Sink, inst: Install, c: Context) -> None:
    """``pip wheel SPEC -w DIR`` / ``pip download SPEC -d DIR``: the wheels wait in DIR."""
    names = ("-w", "--wheel-dir") if inst.verb == "wheel" else ("-d", "--dest", "--dest-dir")
    args = iter(inst.args)
    folder = c.state.cwd
    made: list[Requirement] = []
    for word in args:
        value = option(word, names, args)
        if value is not None:
            folder = c.state.folder(value.text, c.make)
            continue
        if word.text.startswith("-"):
            if word.text in PIP_INSTALL_ARGS or word.text in ("-r", "--requirement", "-c", "--constraint"):
                next(args, None)
            continue
        rec = target(scanner, word, False, c)
        if rec is not None:
            made.append(
                rec._replace(
                    scope=scanner.scope,
                    step=scanner.step,
                    possible=c.possible,
                    # the build happens here, as this command says, with this stage's toolchain
                    options=(rec.options or c.options)._replace(built_in=scanner.scope),
                )
            )
    scanner.wheels.put(folder, made)
