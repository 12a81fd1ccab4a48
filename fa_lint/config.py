"""``[tool.fa-lint]`` in the nearest pyproject.toml; command-line options win over it."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KEYS = {
    "min-version": str,
    "select": list,
    "ignore": list,
    "exclude": list,
    "force-exclude": bool,
    "strict": bool,
    "respect-gitignore": bool,
    "per-file-ignores": dict,
    "new-from-rev": str,
}


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Config:
    path: str | None = None
    min_version: Version | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    force_exclude: bool = False
    strict: bool = False
    respect_gitignore: bool = True
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, code prefixes)
    new_from_rev: str | None = None

    @property
    def root(self) -> str:
        """The folder per-file-ignores globs are relative to: the config file's."""
        return os.path.dirname(os.path.abspath(self.path)) if self.path else os.getcwd()


def find(start: str = ".") -> str | None:
    """The nearest pyproject.toml at or above ``start`` that has a [tool.fa-lint] table."""
    here = os.path.abspath(start)
    while True:
        candidate = os.path.join(here, "pyproject.toml")
        if os.path.isfile(candidate):
            try:
                with open(candidate, "rb") as f:
                    if "fa-lint" in tomllib.load(f).get("tool", {}):
                        return candidate
            except (OSError, tomllib.TOMLDecodeError, RecursionError):
                pass  # an unreadable pyproject is a finding of the lint run, not a config source
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def parse_version(text: str, where: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise ConfigError(f"{where}: {text!r} is not a version") from None


def load(path: str) -> Config:
    try:
        with open(path, "rb") as f:
            table = tomllib.load(f).get("tool", {}).get("fa-lint", {})
    except (OSError, tomllib.TOMLDecodeError, RecursionError) as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.fa-lint] must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(
            f"{path}: unknown [tool.fa-lint] key(s): {', '.join(unknown)} (known: {', '.join(KEYS)})"
        )
    for key, kind in KEYS.items():
        if key in table and not isinstance(table[key], kind):
            raise ConfigError(f"{path}: [tool.fa-lint] {key} must be a {kind.__name__}")
        if kind is list and not all(isinstance(x, str) for x in table.get(key, [])):
            raise ConfigError(f"{path}: [tool.fa-lint] {key} must be a list of strings")
    per_file = table.get("per-file-ignores", {})
    for glob, codes in per_file.items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise ConfigError(f"{path}: [tool.fa-lint] per-file-ignores {glob!r} must be a list of strings")
    mv = table.get("min-version")
    return Config(
        path=path,
        min_version=parse_version(mv, f"{path}: [tool.fa-lint] min-version") if mv else None,
        select=tuple(table.get("select", ())),
        ignore=tuple(table.get("ignore", ())),
        exclude=tuple(table.get("exclude", ())),
        force_exclude=bool(table.get("force-exclude", False)),
        strict=bool(table.get("strict", False)),
        respect_gitignore=bool(table.get("respect-gitignore", True)),
        per_file_ignores=tuple((glob, tuple(codes)) for glob, codes in per_file.items()),
        new_from_rev=table.get("new-from-rev") or None,
    )
