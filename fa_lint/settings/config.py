"""fa-lint's configuration: ``[tool.fa-lint]`` in a ``pyproject.toml``, or the same keys at the top of a
``fa-lint.toml`` / ``.fa-lint.toml``; command-line options win over it.

Each file is governed by its *nearest* configuration, as in ruff: the first of ``.fa-lint.toml``,
``fa-lint.toml`` and a ``pyproject.toml`` with a ``[tool.fa-lint]`` table (in that order, in one folder)
found in the file's folder or above it. Inside a git repository the search ends at the repository's top
(the folder holding ``.git``, where includes stop too): a file above it is never read, so whoever can
write ``/tmp/pyproject.toml``, a shared runner's work folder or ``/`` of an image cannot turn the check
off in a checkout below it. Outside any repository the search goes up to the filesystem's root, but reads
only files the user running fa-lint owns, as git trusts only a repository its user owns
(``safe.directory``).

A ``pyproject.toml`` on the way that cannot be read (not UTF-8, not TOML, too deep, a ``tool`` that is
not a table) may have been the configuration, so the search ends there too: it is reported as a located
problem (FAL900) and the files below it are checked with the defaults, never with a configuration found
above it. fa-lint's own configuration must be valid: an unknown key, a wrong type or an unknown rule
code is a ``ConfigError`` (exit 2), with the file and line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from fa_lint._records import NamedTuple

if TYPE_CHECKING:  # the model is loaded with the checker, not for --version
    from fa_lint.model import ParseProblem
    from fa_lint.syntax.tomldoc import TomlDoc

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
# In one folder the first of these that holds fa-lint's configuration wins (ruff's order for its own
# .ruff.toml, ruff.toml and pyproject.toml); a pyproject.toml without [tool.fa-lint] holds none.
NAMES = (".fa-lint.toml", "fa-lint.toml", "pyproject.toml")


class ConfigError(Exception):
    pass


class Config(NamedTuple):
    """What one configuration file says. A NamedTuple, as immutable as a frozen dataclass and a tenth of
    its cost to define on every start (``_replace`` derives one from another)."""

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
        """The folder per-file-ignores and exclude globs are relative to: the config file's."""
        return os.path.dirname(os.path.abspath(self.path)) if self.path else os.getcwd()


DEFAULT = Config()
Codes = Callable[[Iterable[str]], list[str]]  # the selectors no rule code starts with


def _read(path: str) -> TomlDoc | ParseProblem:
    """A TOML file as a document, or where it cannot be read, located the way the lint run locates it."""
    from fa_lint.files.read import read_text, too_deep
    from fa_lint.model import ParseProblem
    from fa_lint.syntax import tomldoc

    text = read_text(path)
    if isinstance(text, ParseProblem):
        return text
    try:
        # a pyproject.toml is linted too: its document is kept for that pass
        doc = tomldoc.load(path, text, keep=os.path.basename(path) == "pyproject.toml")
    except RecursionError:  # tomllib recurses once per level of nesting
        return too_deep(path)
    if isinstance(doc, ParseProblem):
        from fa_lint.syntax import templates

        return templates.recognised(text, doc)  # a Jinja template is not read, and says so
    return doc


def _tool(doc: TomlDoc) -> dict[str, Any] | ParseProblem:
    from fa_lint.model import ParseProblem

    tool = doc.data.get("tool", {})
    if not isinstance(tool, dict):
        start, end = doc.key_location(("tool",))
        return ParseProblem(doc.index.location(start, end), "tool must be a table")
    return tool


def _at(doc: TomlDoc, path: tuple[str, ...]) -> str:
    """``file:line:col`` of a key, for a configuration error."""
    start, end = doc.key_location(path)
    return str(doc.index.location(start, end))


def parse_version(text: str, where: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise ConfigError(f"{where}: {text!r} is not a version") from None


def load(path: str, unknown_codes: Codes | None = None) -> Config:
    """The configuration in ``path``: a pyproject.toml's [tool.fa-lint], or a fa-lint.toml's top level.

    An invalid one is fa-lint's own error (exit 2), as in ruff; ``unknown_codes`` (the rule registry's
    check) makes a selector no rule code starts with one too.
    """
    from fa_lint.model import ParseProblem

    doc = _read(path)
    if isinstance(doc, ParseProblem):
        raise ConfigError(f"{doc.location}: cannot read configuration: {doc.message}")
    return _from(path, doc, unknown_codes)


def _from(path: str, doc: TomlDoc, unknown_codes: Codes | None) -> Config:  # noqa: C901 - complexity 13, to split or justify (issue 45)
    from fa_lint.model import ParseProblem

    # fa-lint's own file holds the keys at its top; any other name (``--config cfg.toml``) is read as
    # a pyproject.toml when it has a [tool] table, as fa-lint's own file otherwise.
    base = os.path.basename(path)
    own = base in NAMES[:2] or (base != "pyproject.toml" and "tool" not in doc.data)
    if own:
        table: Any = doc.data
        prefix: tuple[str, ...] = ()
        name = os.path.basename(path)
    else:
        tool = _tool(doc)
        if isinstance(tool, ParseProblem):
            raise ConfigError(f"{tool.location}: cannot read configuration: {tool.message}")
        table = tool.get("fa-lint", {})
        prefix = ("tool", "fa-lint")
        name = "[tool.fa-lint]"
        if not isinstance(table, dict):
            raise ConfigError(f"{_at(doc, prefix)}: [tool.fa-lint] must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(
            f"{_at(doc, (*prefix, unknown[0]))}: unknown {name} key(s): {', '.join(unknown)} "
            f"(known: {', '.join(KEYS)})"
        )
    for key, kind in KEYS.items():
        where = (*prefix, key)
        if key in table and not isinstance(table[key], kind):
            raise ConfigError(f"{_at(doc, where)}: {name} {key} must be a {kind.__name__}")
        if kind is list and not all(isinstance(x, str) for x in table.get(key, [])):
            raise ConfigError(f"{_at(doc, where)}: {name} {key} must be a list of strings")
    per_file = table.get("per-file-ignores", {})
    for glob, codes in per_file.items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            where = (*prefix, "per-file-ignores", glob)
            raise ConfigError(
                f"{_at(doc, where)}: {name} per-file-ignores {glob!r} must be a list of strings"
            )
    if unknown_codes is not None:
        lists = [(key, (*prefix, key), table.get(key, [])) for key in ("select", "ignore")]
        lists += [
            (f"per-file-ignores {g!r}", (*prefix, "per-file-ignores", g), c) for g, c in per_file.items()
        ]
        for label, where, codes in lists:
            bad = unknown_codes(c.strip().upper() for c in codes)
            if bad:
                raise ConfigError(f"{_at(doc, where)}: {name} {label}: {unknown_selectors(bad)}")
    mv = table.get("min-version")
    return Config(
        path=path,
        min_version=parse_version(mv, f"{_at(doc, (*prefix, 'min-version'))}: {name} min-version")
        if mv
        else None,
        select=tuple(c.strip().upper() for c in table.get("select", ())),
        ignore=tuple(c.strip().upper() for c in table.get("ignore", ())),
        exclude=tuple(table.get("exclude", ())),
        force_exclude=bool(table.get("force-exclude", False)),
        strict=bool(table.get("strict", False)),
        respect_gitignore=bool(table.get("respect-gitignore", True)),
        per_file_ignores=tuple(
            (glob, tuple(c.strip().upper() for c in codes)) for glob, codes in per_file.items()
        ),
        new_from_rev=table.get("new-from-rev") or None,
    )


def overrides(texts: Iterable[str], unknown_codes: Codes | None = None) -> dict[str, Any]:
    """``--config 'key = value'`` (ruff's inline override): the Config fields the given TOML sets, checked
    as a configuration file's keys are; each wins over that key of every file's configuration."""
    from fa_lint.model import ParseProblem
    from fa_lint.syntax import tomldoc

    fields: dict[str, Any] = {}
    for text in texts:
        doc = tomldoc.load("--config", text)
        if isinstance(doc, ParseProblem):
            raise ConfigError(f"--config {text!r} is neither a file nor a TOML 'key = value' ({doc.message})")
        given = _from("--config", doc, unknown_codes)
        tool = doc.data.get("tool")
        table = tool.get("fa-lint", {}) if isinstance(tool, dict) else doc.data
        if not table:
            raise ConfigError(f"--config {text!r} sets no [tool.fa-lint] key")
        for key in table:  # _from has refused any key not in KEYS
            field = key.replace("-", "_")
            fields[field] = getattr(given, field)
    return fields


def unknown_selectors(bad: list[str]) -> str:
    """ruff's wording for a code that selects no rule, with the code nearest the first."""
    plural = "s" if len(bad) > 1 else ""
    hint = suggestion(bad[0])
    listed = "'fa-lint --list-rules' lists the codes"
    return f"unknown rule selector{plural} {', '.join(bad)} ({f'{hint} ' if hint else ''}{listed})"


def suggestion(given: str) -> str:
    """ruff's "did you mean": the rule code or name nearest a mistyped one, as a sentence ('' if none).
    Only an error asks, so the rule registry is loaded only then."""
    import difflib

    from fa_lint.rules import RULES

    upper = given.strip().upper()
    prefixed = [code for code in RULES if code.startswith(upper)]
    if prefixed:  # a prefix (which --select takes) where one code is wanted
        return f"the codes starting with it: {', '.join(prefixed)}."
    close = difflib.get_close_matches(upper, list(RULES), n=1, cutoff=0.6)
    if not close:
        names = {r.name: r.code for r in RULES.values()}
        close = [f"{n} ({names[n]})" for n in difflib.get_close_matches(given.strip().lower(), names, n=1)]
    return f"did you mean {close[0]}?" if close else ""


class Resolver:
    """Each path's nearest configuration (see the module's docstring), looked up once per folder.

    ``problems`` collects the unreadable pyproject.toml files the searches ended at, each located, for
    the run to report as findings of those files.
    """

    def __init__(
        self,
        unknown_codes: Codes | None = None,
        *,
        read: bool = True,
        overrides: dict[str, Any] | None = None,
    ) -> None:
        self._unknown = unknown_codes
        self._overrides = overrides or {}  # --config 'key = value': over every configuration found
        self._read = read  # False: only find the files (their paths), never read nor judge their keys
        self._folders: dict[str, Config] = {}  # real folder -> the configuration that governs it
        self._named: dict[str, Config] = {}  # the same, by the folder's name as the run gives it
        self._tops: dict[str, str | None] = {}  # real folder -> its repository's top, None outside one
        self.problems: dict[str, ParseProblem] = {}  # by the file's path, each once

    def nearest(self, path: str) -> Config:
        """The configuration that governs ``path`` (a file, or a folder and what lies in it)."""
        folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
        found = self._named.get(folder)  # files of one folder ask in turn: one realpath for them all
        if found is not None:
            return found
        real = os.path.realpath(folder)
        found = self._folders.get(real)
        if found is not None:
            self._named[folder] = found
            return found
        top = self._top(real)
        passed: list[str] = []
        here = real
        while True:
            cached = self._folders.get(here)
            if cached is not None:
                found = cached
                break
            passed.append(here)
            own = self._own(here, top=top)
            if own is not None:
                found = own
                break
            parent = os.path.dirname(here)
            if here in (top, parent):
                found = DEFAULT
                break
            here = parent
        if self._overrides and found is not cached:  # a cached one has them already
            found = found._replace(**self._overrides)
        for folder_passed in passed:
            self._folders[folder_passed] = found
        self._named[folder] = found
        return found

    def _top(self, real: str) -> str | None:
        """The top of the git repository holding a folder (the folder with ``.git``), or None."""
        seen = []
        here: str | None = real
        while here is not None and here not in self._tops:
            seen.append(here)
            if os.path.exists(os.path.join(here, ".git")):
                self._tops[here] = here
                break
            parent = os.path.dirname(here)
            here = None if parent == here else parent
        top = self._tops.get(here) if here is not None else None
        for folder in seen:
            self._tops[folder] = top
        return top

    def _own(self, folder: str, *, top: str | None) -> Config | None:
        """The configuration a folder holds; DEFAULT where its pyproject.toml cannot be read (the search
        ends there); None where it holds none and the search goes on above. Outside any repository
        (no ``top``) a file another user owns is no one's configuration but theirs: passed over. Inside
        one, a file that is a symbolic link out of the repository (``top``) is not read."""
        mine_only = top is None
        for name in NAMES:
            candidate = os.path.join(folder, name)
            if not os.path.isfile(candidate) or (mine_only and not _mine(candidate)):
                continue
            try:
                found = self._candidate(candidate, name, top)
            except ConfigError:
                raise
            except Exception as exc:  # fa-lint's bug: said (FAL902), and the search ends as at a bad file
                from fa_lint.model import Location, internal_error

                shown = _shown(candidate)
                where = Location(shown, 1, 1, 1, 1)
                self.problems.setdefault(shown, internal_error(where, exc, "reading this configuration"))
                return DEFAULT
            if found is not None:
                return found
        return None

    def _candidate(self, candidate: str, name: str, top: str | None) -> Config | None:
        """The configuration one file holds (DEFAULT where it cannot be read; None where it holds none)."""
        from fa_lint.model import Location, ParseProblem

        shown = _shown(candidate)
        if top is not None and not _within(os.path.realpath(candidate), top):
            # a committed link to a file outside the repository: what it says is no one's here, and
            # reading it would also echo its first TOML error; the search ends as at a bad pyproject
            message = "configuration file links outside the repository; fa-lint read no configuration from it"
            self.problems.setdefault(shown, ParseProblem(Location(shown, 1, 1, 1, 1), message))
            return DEFAULT
        if name != "pyproject.toml":
            return load(shown, self._unknown) if self._read else Config(path=shown)
        doc = _read(shown)
        tool = doc if isinstance(doc, ParseProblem) else _tool(doc)
        if isinstance(tool, ParseProblem):
            message = f"{tool.message}; fa-lint read no configuration from it"
            self.problems.setdefault(shown, tool._replace(message=message, entry=""))
            return DEFAULT
        if "fa-lint" in tool:
            assert not isinstance(doc, ParseProblem)
            return _from(shown, doc, self._unknown) if self._read else Config(path=shown)
        return None


def _within(real: str, top: str) -> bool:
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _mine(path: str) -> bool:
    """Whether the user running fa-lint owns a file (git's safe.directory test; always so on Windows)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return True
    try:
        return bool(os.stat(path).st_uid == getuid())
    except OSError:
        return False


def _shown(path: str) -> str:
    """A configuration file's path as messages and findings name it: relative to the current folder
    when it lies below it (as the walk names the same file), else absolute."""
    rel = os.path.relpath(path)
    return path if rel.startswith(os.pardir) else rel


def find(start: str = ".") -> tuple[str | None, tuple[ParseProblem, ...]]:
    """The configuration file governing ``start``, and the unreadable pyproject.toml the search ended at;
    found, not read: ``load`` judges it (and raises ConfigError)."""
    resolver = Resolver(read=False)
    found = resolver.nearest(start)
    return found.path, tuple(resolver.problems.values())
