"""``--show-files``, ``--show-settings`` and ``-v`` (ruff's): which files a run checks, and which
configuration governs each. fa-lint takes each file's *nearest* configuration, so two files of one run
can be judged by different ones: these say which, and what it comes to with the command line over it.

Every file name and configuration value printed comes from the checkout, and is escaped as the
findings are (``report._common.printable``; JSON strings ``unforgeable``): a folder named
``x\n::error file=...`` forges no workflow command and a terminal sequence in one is not acted on.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from fa_lint.report._common import printable, unforgeable
from fa_lint.settings import config

if TYPE_CHECKING:
    from fa_lint.engine import Settings


def files(listed: Iterable[str]) -> str:
    """One path a line, sorted, as the findings name them (escaped as they are)."""
    return "".join(f"{printable(path)}\n" for path in sorted(listed))


def _source(cfg: config.Config, found: config.Resolver | None) -> str:
    """Where a configuration comes from, in words."""
    if cfg.path is None:
        return (
            "no configuration file (--isolated), the defaults"
            if found is None
            else ("no configuration file, the defaults")
        )
    return f"{printable(cfg.path)} (--config)" if found is None else printable(cfg.path)


def _groups(
    listed: Iterable[str], cfg: config.Config, found: config.Resolver | None
) -> dict[str | None, tuple[config.Config, list[str]]]:
    """The files, by the configuration that governs each, in the order first met."""
    groups: dict[str | None, tuple[config.Config, list[str]]] = {}
    for path in sorted(listed):
        own = found.nearest(path) if found is not None else cfg
        groups.setdefault(own.path, (own, []))[1].append(path)
    return groups


def governing(listed: Iterable[str], cfg: config.Config, found: config.Resolver | None) -> list[str]:
    """``-v``: a line a file checked, naming its configuration."""
    return [
        f"{path}: configuration: {_source(own, found)}"
        for own, paths in _groups(listed, cfg, found).values()
        for path in paths
    ]


def settings_of(
    listed: list[str],
    cfg: config.Config,
    found: config.Resolver | None,
    make: Callable[[config.Config], Settings],
    args: argparse.Namespace,
) -> str:
    """``--show-settings``: each configuration the files use, with the files it governs and what it
    comes to with the command line over it, written as the TOML keys that would say the same."""
    from fa_lint import kb

    groups = _groups(listed, cfg, found) or {cfg.path: (cfg, [])}
    floor = kb.load().first_with(kb.PAGED_KV)
    blocks = []
    for own, paths in groups.values():
        settings = make(own)
        exclude = tuple(args.exclude or own.exclude) + tuple(args.extend_exclude or ())
        strict = own.strict if args.strict is None else bool(args.strict)
        rev = cfg.new_from_rev if args.new_from_rev is None else args.new_from_rev
        per_file = ", ".join(f"{_string(g)} = {_list(c)}" for g, c in settings.per_file_ignores)
        lines = [
            f"# Resolved settings for: {', '.join(map(printable, paths)) if paths else '(no files found)'}",
            f"# Settings path: {_source(own, found)}",
            f"select = {_list(settings.select)}" + ("  # every rule" if not settings.select else ""),
            f"ignore = {_list(settings.ignore)}",
            f"per-file-ignores = {{{per_file}}}",
            f"exclude = {_list(exclude)}",
            f"force-exclude = {_bool(settings.force_exclude)}",
            f"respect-gitignore = {_bool(settings.respect_gitignore)}",
            f'min-version = "{settings.min_version or floor}"'
            + ("" if settings.min_version else "  # the default: the first release with block_table"),
            f"strict = {_bool(strict)}",
            f"new-from-rev = {_string(rev or '')}" + ("" if rev else "  # off"),
        ]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _list(items: Iterable[str]) -> str:
    return unforgeable(json.dumps(list(items)))  # a JSON list of strings is a TOML array


def _string(text: str) -> str:
    return unforgeable(json.dumps(text))  # ASCII, control characters escaped: a TOML string too


def _bool(value: bool) -> str:
    return "true" if value else "false"
