"""The resolver: each file's settings (``resolved.Settings``), from its nearest configuration with the
command line's overrides over it, and the run's own, made once.

ruff resolves its configuration the same way (``ruff::resolve`` and ``ruff_workspace::Resolver``): the
command line is partitioned into the run's arguments and the overrides (``overrides.Overrides``), and
every consumer (the linter, ``fa-lint server``, ``fa-lint wheel``, ``bot-config``) asks a ``Workspace``
for settings, never the command line or a configuration file. Which option wins is written here once:
the command line over ``--config KEY=VALUE`` over each file's configuration over the defaults.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

from fa_lint.settings import config
from fa_lint.settings.overrides import Overrides
from fa_lint.settings.resolved import Settings

if TYPE_CHECKING:
    from fa_lint.model import ParseProblem

Relocate = Callable[[str], str]  # a path of the tree being checked, back in the working tree
_T = TypeVar("_T")
EVERY = ("",)  # the prefix of every code: ruff's ALL


def unknown(selectors: Iterable[str]) -> list[str]:
    """The selectors no rule code starts with; the rule registry is loaded only when some are given."""
    from fa_lint.rules import unknown as registry

    return registry(selectors)


def _given(value: _T | None, otherwise: _T) -> _T:
    return otherwise if value is None else value


class Nearest:
    """Each file's settings (``resolved.Scopes``): its nearest configuration's, the command line over it.

    ``moved`` maps a path of the tree being checked back into the working tree: ``--new-from-rev``
    checks REV's files with the working tree's configuration, whose problems are reported once.
    """

    def __init__(
        self, found: config.Resolver, make: Callable[[config.Config], Settings], moved: Relocate | None = None
    ) -> None:
        self._found, self._make, self._moved = found, make, moved
        self._made: dict[str | None, Settings] = {}
        self._paths: dict[str, Settings] = {}

    def __call__(self, path: str) -> Settings:
        own = self._paths.get(path)
        if own is None:
            cfg = self._found.nearest(self._moved(path) if self._moved else path)
            own = self._made.get(cfg.path)
            if own is None:
                own = self._made[cfg.path] = self._make(cfg)
            self._paths[path] = own
        return own

    def problems(self) -> tuple[ParseProblem, ...]:
        return () if self._moved else tuple(self._found.problems.values())

    def moved(self, back: Relocate) -> Nearest:
        return Nearest(self._found, self._make, back)


class Workspace:
    """The run's configuration (``config``: ``--config``'s, or the nearest to the paths checked, their
    common folder's), the resolver that finds each file's (``found``: None when one file, ``--config``,
    or none, ``--isolated``, governs them all) and the run's settings (``settings``), every file's own
    inside them (``scoped``)."""

    def __init__(self, overrides: Overrides, paths: Sequence[str] | None = None) -> None:
        self.overrides = overrides
        own = overrides.isolated or overrides.config_file
        self.found = None if own else config.Resolver(unknown, overrides=dict(overrides.keys))
        self.config = self._configuration(paths)
        self.settings = self._run()

    def _configuration(self, paths: Sequence[str] | None) -> config.Config:
        keys = dict(self.overrides.keys)
        if self.overrides.isolated:
            return config.Config()._replace(**keys)
        if self.overrides.config_file:
            return config.load(self.overrides.config_file, unknown)._replace(**keys)
        assert self.found is not None
        where = [os.path.abspath(p) for p in paths or ["."] if p != "-"] or [os.getcwd()]
        return self.found.nearest(os.path.commonpath(where))

    def make(self, cfg: config.Config, prune: bool = False) -> Settings:
        """The settings of the files ``cfg`` governs: the command line's options win over it.

        ``prune``: the run's own settings, whose ``exclude`` prunes the walk: --exclude and
        --extend-exclude hold for every file (relative to the current folder); a configuration's own
        globs are relative to its folder, and are applied to each file it governs after the walk."""
        from fa_lint.settings import unused  # its rule registry: only once settings are made

        o = self.overrides
        select = o.select or cfg.select
        if prune:
            exclude: tuple[str, ...] = (*o.exclude, *o.extend_exclude)
        else:
            exclude = () if o.exclude else cfg.exclude
        per_file = _given(o.per_file_ignores, cfg.per_file_ignores)
        return Settings(
            # none selected: every rule already is, but for those only their own code selects (FAL903)
            select=select + o.extend_select if select else unused.explicit(o.extend_select),
            ignore=o.ignore or cfg.ignore,
            min_version=_given(o.min_version, cfg.min_version),
            exclude=exclude,
            force_exclude=_given(o.force_exclude, cfg.force_exclude),
            respect_gitignore=_given(o.respect_gitignore, cfg.respect_gitignore),
            per_file_ignores=per_file + o.extend_per_file_ignores,
            root=cfg.root,
            noqa=o.noqa,
            strict=_given(o.strict, cfg.strict),
            new_from_rev=_given(o.new_from_rev, self.config.new_from_rev),  # the run's, for every file
            fixable=_given(o.fixable, _given(cfg.fixable, EVERY)) + cfg.extend_fixable + o.extend_fixable,
            unfixable=cfg.unfixable + o.unfixable,
            preview=_given(o.preview, cfg.preview),
            # the run's, in every file: what the run's configuration says, under the command line
            unsafe_fixes=_given(o.unsafe_fixes, self.config.unsafe_fixes),
            extension=o.extension or self.config.extension,  # --extension replaces it (ruff's)
            sarif_category=_given(o.sarif_category, self.config.sarif_category),
        )

    def _run(self) -> Settings:
        """The run's settings for the paths: each file's own configuration under the command line
        (``scoped``), and what the run as a whole takes from its configuration."""
        cfg, o = self.config, self.overrides
        settings = self.make(cfg, prune=True)
        # The walk prunes what the run's configuration excludes where its globs mean the same relative to
        # the current folder; every file's own configuration is applied to it after (Settings.scoped).
        here = self.found is None or cfg.path is None or cfg.root == os.path.realpath(os.getcwd())
        if not o.exclude and here:
            settings = settings._replace(exclude=(*cfg.exclude, *o.extend_exclude))
        if self.found is not None:
            settings = settings._replace(scoped=Nearest(self.found, self.make))
        return settings

    def of(self, path: str) -> Settings:
        """The settings of one file (the run's own where one configuration governs every file)."""
        scoped = self.settings.scoped
        return scoped(path) if scoped is not None else self.settings

    def nearest(self, path: str) -> config.Config:
        """The configuration that governs a file."""
        return self.found.nearest(path) if self.found is not None else self.config
