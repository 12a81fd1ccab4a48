"""The settings a file is checked with: one frozen value per file, its nearest configuration with the
command line over it (``settings.scopes`` resolves them), and what the engine asks of them.

As in ruff (``ruff_workspace::Settings`` from a ``Resolver``), every option lives here once, resolved:
the command line, ``--config`` and the configuration files have been weighed before a value is made, so
no later step asks where an option came from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from fa_lint._records import NamedTuple

if TYPE_CHECKING:
    from packaging.version import Version

    from fa_lint.model import ParseProblem

PerFile = tuple[tuple[str, tuple[str, ...]], ...]  # (glob, code prefixes), as [tool.fa-lint] has them


class Settings(NamedTuple):
    """How to check. A NamedTuple, as immutable as a frozen dataclass and a tenth of its cost to
    define on every start (``_replace`` derives one from another).

    Each file's own value (``scoped``) decides what is selected, suppressed, fixable and strict there;
    the run's value (the one ``engine.check`` is given) also says what holds for the run as a whole:
    the walk (``respect_gitignore``, ``extension``), the noqa switch, the baseline, the fixes' safety and
    the SARIF category."""

    select: tuple[str, ...] = ()  # code prefixes; empty selects every rule
    ignore: tuple[str, ...] = ()
    min_version: Version | None = None
    exclude: tuple[str, ...] = ()
    force_exclude: bool = False  # exclude files named on the command line too (pre-commit names them)
    per_file_ignores: PerFile = ()
    root: str = "."  # the folder per_file_ignores globs are relative to
    respect_gitignore: bool = True
    problems: tuple[ParseProblem, ...] = ()  # found reading the configuration; reported as FAL900
    scoped: Scopes | None = None  # each file's own settings, from its nearest configuration
    noqa: bool = True  # suppression comments count (--ignore-noqa, --add-noqa's recheck turn them off)
    strict: bool = False  # a warning fails the run
    new_from_rev: str | None = None  # the run's baseline revision ("" or None: none)
    fixable: tuple[str, ...] = ("",)  # code prefixes --fix may fix ("": every code), less unfixable
    unfixable: tuple[str, ...] = ()
    unsafe_fixes: bool = False  # the run's: --fix, --diff and --show-fixes take the unsafe fixes too
    preview: bool = False  # rules marked preview run (``Rule.preview``)
    extension: tuple[tuple[str, str], ...] = ()  # the run's: (file extension, format) the walk reads
    sarif_category: str | None = None  # the run's SARIF runs[].automationDetails.id

    def fixes(self, code: str) -> bool:
        """Whether --fix may fix a finding of this code here (ruff removes the fix of any other rule's
        diagnostic as it is made: crates/ruff_linter/src/checkers/ast/mod.rs ``set_fix``)."""
        return any(code.startswith(p) for p in self.fixable) and not any(
            code.startswith(p) for p in self.unfixable
        )


class Scopes(Protocol):
    """The settings of each file: its nearest configuration's, with the command line's options over
    them (``settings.scopes`` makes them from ``config.Resolver``). Asked once per file a run finds and
    per file a finding is in; ``problems`` are the configuration files the searches could not read."""

    def __call__(self, path: str) -> Settings: ...

    def problems(self) -> tuple[ParseProblem, ...]: ...
