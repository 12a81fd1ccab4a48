"""The command line, split once (ruff's ``CheckCommand::partition``): the run's own arguments
(``Arguments``: what to check, what to print, whether to fix) and the overrides of the configuration
(``settings.overrides.Overrides``), which the resolver weighs against each file's configuration.

The ``argparse.Namespace`` ends here: nothing outside ``fa_lint.cli`` receives it.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
from typing import TYPE_CHECKING, Any, TextIO

from fa_lint._records import NamedTuple
from fa_lint.cli.args import ALIASES, FORMATS, OUTPUT_FORMAT, UsageError, codes, known, say
from fa_lint.settings import config
from fa_lint.settings.overrides import Overrides
from fa_lint.settings.resolved import PerFile

if TYPE_CHECKING:
    from packaging.version import Version


class Arguments(NamedTuple):
    """What the run does with its settings (ruff's ``CheckArguments``)."""

    paths: tuple[str, ...]  # as given: none means the current folder
    format: str
    output_file: str | None
    fix: bool  # --fix, or --fix-only
    fix_only: bool
    diff: bool
    add_noqa: bool
    show_fixes: bool
    statistics: bool
    exit_zero: bool
    exit_non_zero_on_fix: bool
    color: str
    quiet: bool  # the findings alone: -q, or -s
    silent: bool  # not even those
    verbose: bool
    show_files: bool
    show_settings: bool
    stdin_filename: str | None
    watch: bool  # check again whenever a checked file changes
    noqa_reason: str  # --add-noqa=REASON: written after the codes


def partition(args: argparse.Namespace, err: TextIO) -> tuple[Arguments, Overrides]:
    """The run's arguments and the configuration overrides; on ``err``, each ``--config`` override a
    file of its name is not read for."""
    for v in _shadowed(args):
        say(
            err,
            f"--config {v}: read as the override it is typed as; the file of that name is not read "
            f"(to read it, give its path: --config ./{v})",
        )
    run = Arguments(
        paths=tuple(args.paths),
        format=output_format(args.format),
        output_file=args.output_file,
        fix=args.fix or args.fix_only,
        fix_only=args.fix_only,
        diff=args.diff,
        add_noqa=args.add_noqa,
        show_fixes=args.show_fixes,
        statistics=args.statistics,
        exit_zero=args.exit_zero,
        exit_non_zero_on_fix=args.exit_non_zero_on_fix,
        color=args.color,
        quiet=args.quiet or args.silent,
        silent=args.silent,
        verbose=args.verbose,
        show_files=args.show_files,
        show_settings=args.show_settings,
        stdin_filename=args.stdin_filename,
        watch=args.watch,
        noqa_reason=reason(getattr(args, "noqa_reason", "")),
    )
    return run, overrides(args)


def output_format(given: str | None) -> str:
    """``--format``, else ``FA_LINT_OUTPUT_FORMAT`` (ruff's ``RUFF_OUTPUT_FORMAT``: the flag wins), else
    text; a variable that names no format is a usage error, as clap makes ruff's."""
    chosen = given or os.environ.get(OUTPUT_FORMAT, "").strip() or "text"
    if chosen not in FORMATS and chosen not in ALIASES:
        raise UsageError(f"{OUTPUT_FORMAT}={chosen!r}: not an output format ({', '.join(FORMATS)})")
    return ALIASES.get(chosen, chosen)


# What a reason may hold: it ends a comment in every format --add-noqa writes to, where a double quote
# or backslash (a notebook's JSON string), "%", "!", brackets and "&|<>^" (a batch file's REM line, in
# a block too), "$" or a line break would be read as more than the comment.
_REASON = re.compile(r"[\w .,:;?'/+=@-]*")


def reason(given: str) -> str:
    """``--add-noqa=REASON``'s reason (ruff's: written after the codes)."""
    if not _REASON.fullmatch(given):
        raise UsageError(
            f"--add-noqa={given!r}: a reason may hold letters, digits, blanks and .,:;?'/+=@- only "
            "(it must end a comment in every format)"
        )
    return given.strip()


def overrides(args: argparse.Namespace) -> Overrides:
    """The configuration overrides of the linter's command line."""
    return Overrides(
        config_file=None if args.isolated else config_file(args),
        isolated=args.isolated,
        keys=tuple(keys(args).items()),
        select=known(codes(args.select), "--select"),
        extend_select=known(codes(args.extend_select), "--extend-select"),
        ignore=known(codes(args.ignore), "--ignore"),
        per_file_ignores=None if args.per_file_ignores is None else _per_file(args.per_file_ignores),
        extend_per_file_ignores=_per_file(args.extend_per_file_ignores or []),
        min_version=floor(args.min_version),
        exclude=tuple(args.exclude or ()),
        extend_exclude=tuple(args.extend_exclude or ()),
        force_exclude=args.force_exclude,
        respect_gitignore=args.respect_gitignore,
        strict=args.strict,
        new_from_rev=args.new_from_rev,
        noqa=not args.ignore_noqa,
        fixable=None if args.fixable is None else known(codes(args.fixable), "--fixable"),
        unfixable=known(codes(args.unfixable), "--unfixable"),
        extend_fixable=known(codes(args.extend_fixable), "--extend-fixable"),
        unsafe_fixes=args.unsafe_fixes,
        preview=args.preview,
        extension=_extensions(args.extension or []),
        sarif_category=args.sarif_category,
    )


def _extensions(given: list[str]) -> tuple[tuple[str, str], ...]:
    """``--extension EXT:FORMAT`` (ruff's form; comma-separated pairs too)."""
    out = []
    for pair in (p for value in given for p in value.split(",") if p.strip()):
        ext, colon, fmt = pair.strip().partition(":")
        problem = config.extension_problem(ext, fmt) if colon else "give EXT:FORMAT, e.g. req:requirements"
        if problem:
            raise UsageError(f"--extension {pair!r}: {problem}")
        out.append((ext.strip(". ").lower(), fmt))
    return tuple(out)


def floor(version: str | None) -> Version | None:
    """``--min-version``, which must be a version."""
    return config.parse_version(version, "--min-version") if version else None


def _per_file(given: list[str]) -> PerFile:
    """``--per-file-ignores GLOB:CODES`` (ruff's form), as the configuration's key holds them."""
    out = []
    for value in given:
        glob, colon, listed = value.rpartition(":")
        if not colon or not glob.strip():
            raise UsageError(f"--per-file-ignores {value!r}: give GLOB:CODES, e.g. 'docker/*:FAL012'")
        out.append((glob.strip(), known(codes([listed]), "--per-file-ignores")))
    return tuple(out)


def config_file(args: argparse.Namespace) -> str | None:
    """``--config``'s file: the one value that cannot be a ``key = value`` override.

    Read as typed, never from the checked tree: a value that is a TOML override of fa-lint's keys is
    one, whatever file of that name the checkout holds. ruff takes an existing file first
    (crates/ruff/src/args.rs ``ConfigArgumentParser``), so there a pull request that commits a file
    named like a CI job's ``--config 'ignore = [...]'`` replaces the override with its own file; here
    that file is not read (``partition`` says so). A value ending in ``.toml`` is a file."""
    given: list[str] = args.config or []
    files = [v for v in given if not _override(v)]
    for v in files:
        if not os.path.exists(v):
            if "=" in v:  # what is wrong with it as TOML (a ConfigError, as for an override)
                config.overrides([v])
            raise UsageError(
                f"--config {v}: no such file; a TOML 'key = value' overrides one key instead "
                """(e.g. --config 'ignore = ["FAL002"]')"""
            )
    if len(files) > 1:
        raise UsageError(f"--config: one configuration file, not {len(files)} (the others can be KEY=VALUE)")
    return files[0] if files else None


@functools.lru_cache(maxsize=64)
def _override(value: str) -> bool:
    """Whether a ``--config`` value is a TOML ``key = value`` (what it sets, and its codes, are
    checked with the override: an unknown key is an error there, not a file to look for)."""
    if "=" not in value or value.lower().endswith(".toml"):
        return False
    from fa_lint.model import ParseProblem
    from fa_lint.syntax import tomldoc

    doc = tomldoc.load("--config", value)
    return not isinstance(doc, ParseProblem) and bool(doc.data)


def _shadowed(args: argparse.Namespace) -> list[str]:
    """The overrides a file of the same name would have been read for, as ruff reads them."""
    return [v for v in args.config or () if _override(v) and os.path.lexists(v)]


def keys(args: argparse.Namespace) -> dict[str, Any]:
    """The configuration keys ``--config 'key = value'`` sets, over every file's configuration."""
    if not args.config:
        return {}
    from fa_lint.settings.scopes import unknown

    return config.overrides([v for v in args.config or () if _override(v)], unknown)
