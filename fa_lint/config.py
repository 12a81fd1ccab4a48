"""``[tool.fa-lint]`` in the nearest pyproject.toml; command-line options win over it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NamedTuple

from packaging.version import InvalidVersion, Version

if TYPE_CHECKING:  # the model is loaded with the checker, not for --version
    from fa_lint.model import ParseProblem

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


class Config(NamedTuple):
    """What [tool.fa-lint] says. A NamedTuple, as immutable as a frozen dataclass and a tenth of its
    cost to define on every start (``_replace`` derives one from another)."""

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
    problems: tuple[ParseProblem, ...] = ()  # pyproject.toml files that could not be read, located

    @property
    def root(self) -> str:
        """The folder per-file-ignores globs are relative to: the config file's."""
        return os.path.dirname(os.path.abspath(self.path)) if self.path else os.getcwd()


def _read(path: str) -> dict[str, Any] | ParseProblem:
    """A pyproject.toml as data, or where it cannot be read, located the way the lint run locates it."""
    from fa_lint.model import ParseProblem
    from fa_lint.read import read_text, too_deep
    from fa_lint.syntax import tomldoc

    text = read_text(path)
    if isinstance(text, ParseProblem):
        return text
    try:
        doc = tomldoc.load(path, text)
    except RecursionError:  # tomllib recurses once per level of nesting
        return too_deep(path)
    if isinstance(doc, ParseProblem):
        return doc
    tool = doc.data.get("tool", {})
    if not isinstance(tool, dict):
        start, end = doc.key_location(("tool",))
        where = doc.index.location(start, end)
        return ParseProblem(where, "tool must be a table")
    return tool


def find(start: str = ".") -> tuple[str | None, tuple[ParseProblem, ...]]:
    """The nearest pyproject.toml at or above ``start`` with a [tool.fa-lint] table, and the
    pyproject.toml files passed over on the way because they cannot be read (each located).

    A pyproject.toml that cannot be read is not fa-lint's configuration (no tool reads it either);
    it must not stop a run that checks other files, so the search goes on above it.
    """
    from fa_lint.model import ParseProblem

    here = os.path.abspath(start)
    skipped: list[ParseProblem] = []
    while True:
        candidate = os.path.join(here, "pyproject.toml")
        if os.path.isfile(candidate):
            tool = _read(os.path.relpath(candidate))
            if isinstance(tool, ParseProblem):
                message = f"{tool.message}; fa-lint read no configuration from this file"
                skipped.append(ParseProblem(tool.location, message))
            elif "fa-lint" in tool:
                return candidate, tuple(skipped)
        parent = os.path.dirname(here)
        if parent == here:
            return None, tuple(skipped)
        here = parent


def parse_version(text: str, where: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise ConfigError(f"{where}: {text!r} is not a version") from None


def load(path: str) -> Config:
    """The [tool.fa-lint] table of ``path``; an invalid one is fa-lint's own error (exit 2), as in ruff."""
    from fa_lint.model import ParseProblem

    tool = _read(path)
    if isinstance(tool, ParseProblem):
        raise ConfigError(f"{tool.location}: cannot read configuration: {tool.message}")
    table = tool.get("fa-lint", {})
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
