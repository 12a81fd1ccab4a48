"""What the command line says over the configuration files: ruff's ``ConfigArguments`` (the
``--config`` file or overrides, ``--isolated``) and its per-flag overrides, in one frozen value.

The command line is split once (``cli.args.partition``) into the run's own arguments (paths, output,
fix mode) and these; the resolver (``settings.scopes``) weighs them against each file's configuration
and no one reads the command line again. A field left at None keeps what the configuration says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fa_lint._records import NamedTuple
from fa_lint.settings.resolved import PerFile

if TYPE_CHECKING:
    from packaging.version import Version


class Overrides(NamedTuple):
    config_file: str | None = None  # --config FILE: one configuration for every file
    isolated: bool = False  # --isolated: no configuration file at all
    keys: tuple[tuple[str, Any], ...] = ()  # --config 'key = value': Config fields over every configuration
    select: tuple[str, ...] = ()  # --select, which replaces the configuration's (none given: keep it)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()  # --ignore, which replaces the configuration's (none given: keep it)
    per_file_ignores: PerFile | None = None
    extend_per_file_ignores: PerFile = ()
    min_version: Version | None = None
    exclude: tuple[str, ...] = ()  # --exclude, which replaces the configuration's (none given: keep it)
    extend_exclude: tuple[str, ...] = ()
    force_exclude: bool | None = None
    respect_gitignore: bool | None = None
    strict: bool | None = None
    new_from_rev: str | None = None  # "" turns the configuration's off
    noqa: bool = True  # False: --ignore-noqa
    fixable: tuple[str, ...] | None = None  # --fixable, which replaces the configuration's
    unfixable: tuple[str, ...] = ()  # --unfixable, beside the configuration's (ruff's)
    extend_fixable: tuple[str, ...] = ()
    unsafe_fixes: bool | None = None  # --unsafe-fixes / --no-unsafe-fixes
    preview: bool | None = None  # --preview / --no-preview
    extension: tuple[tuple[str, str], ...] = ()  # --extension EXT:FORMAT, beside the configuration's
    sarif_category: str | None = None
