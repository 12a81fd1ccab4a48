"""The pipeline: discover -> parse -> resolve -> rules -> decide. No printing, no exiting."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, Protocol

from packaging.version import Version

from fa_lint import kb
from fa_lint._gc import fewer_collections
from fa_lint._records import NamedTuple
from fa_lint.code.readers import uses_of
from fa_lint.code.uses import Use
from fa_lint.files.discover import GitIgnore, Target, discover, excluded
from fa_lint.files.project import companions, includers, load, off_limits, project_root, reached
from fa_lint.files.read import read_text
from fa_lint.kb.assess import Policy
from fa_lint.machine.environments import Environment, build
from fa_lint.model import (
    INTERNAL,
    BuildConfig,
    FileResult,
    Finding,
    Image,
    Include,
    Location,
    NotRun,
    ParseProblem,
    Requirement,
    Setting,
    internal_error,
)
from fa_lint.rules import CHECKS, Context, settle
from fa_lint.rules._base import Check
from fa_lint.rules.unread import internal
from fa_lint.settings import decide
from fa_lint.syntax.text import TextIndex


class Settings(NamedTuple):
    """How to check. A NamedTuple, as immutable as a frozen dataclass and a tenth of its cost to
    define on every start (``_replace`` derives one from another)."""

    select: tuple[str, ...] = ()  # code prefixes; empty selects every rule
    ignore: tuple[str, ...] = ()
    min_version: Version | None = None
    exclude: tuple[str, ...] = ()
    force_exclude: bool = False  # exclude files named on the command line too (pre-commit names them)
    per_file_ignores: decide.PerFile = ()
    root: str = "."  # the folder per_file_ignores globs are relative to
    respect_gitignore: bool = True
    problems: tuple[ParseProblem, ...] = ()  # found reading the configuration; reported as FAL900
    scoped: Scopes | None = None  # each file's own settings, from its nearest configuration
    noqa: bool = True  # suppression comments count (--add-noqa's recheck turns them off)


class Scopes(Protocol):
    """The settings of each file: its nearest configuration's, with the command line's options over
    them (the cli makes them from ``config.Resolver``). Asked once per file a run finds and per file a
    finding is in; ``problems`` are the configuration files the searches could not read."""

    def __call__(self, path: str) -> Settings: ...

    def problems(self) -> tuple[ParseProblem, ...]: ...


class Report(NamedTuple):
    """A run's findings, the files it checked and what it knew to judge them."""

    findings: tuple[Finding, ...]
    files: tuple[str, ...]
    suppressed: int
    kb: kb.KnowledgeBase
    policy: Policy
    texts: Mapping[str, str] = MappingProxyType({})  # each file read, for code frames
    paths: tuple[str, ...] = ()  # what was asked for: the files and folders given
    formats: Mapping[str, str] = MappingProxyType({})  # each file read, its format (where its comments are)


def _settled(findings: Iterable[Finding], texts: dict[str, str]) -> list[Finding]:
    """Fixes that depend on the text around them are made final here (or dropped)."""
    indexes: dict[str, TextIndex] = {}
    out = []
    for finding in findings:
        fix = finding.fix
        if fix is None or not fix.context:
            out.append(finding)
            continue
        path = fix.location.path
        if path not in indexes and path in texts:
            indexes[path] = TextIndex(path, texts[path])
        final = settle(fix, indexes[path]) if path in indexes else None
        out.append(finding._replace(fix=final))
    return out


def check(
    paths: Iterable[str], settings: Settings | None = None, given: Mapping[str, bytes] | None = None
) -> Report:
    """Check files and folders; ``given`` maps a path to bytes to check in place of the file's."""
    with fewer_collections():
        return _check(list(paths), settings or Settings(), given)


class _Read(NamedTuple):
    """What a run read from its files: their records by kind, the environments they make, and which
    files were read only for context (``hidden``)."""

    files: dict[str, FileResult]
    hidden: set[str]
    requirements: tuple[Requirement, ...]
    problems: tuple[ParseProblem, ...]
    unfollowed: tuple[tuple[Include, str], ...]
    environments: tuple[Environment, ...]
    configs: tuple[BuildConfig, ...]
    machine: tuple[Setting | Image, ...]
    not_run: tuple[NotRun, ...]
    uses: tuple[Use, ...]
    code_read: bool

    def context(self, base: kb.KnowledgeBase, policy: Policy) -> Context:
        return Context(
            base,
            policy,
            self.requirements,
            self.problems,
            self.unfollowed,
            self.environments,
            builds=self.configs,
            settings=self.machine,
            not_run=self.not_run,
            uses=self.uses,
            code_read=self.code_read,
        )


def _read(paths: list[str], settings: Settings, given: Mapping[str, bytes] | None) -> _Read:
    ignored = GitIgnore() if settings.respect_gitignore else None
    searched = [0]  # the Python files the walk searched for the code layer's words
    targets = _targets(paths, settings, ignored, searched)
    context = companions(targets, ignored)
    named = [t for t in targets if t.explicit and t.path != "-"]  # a bare "-" is stdin, no file
    parsed: dict[str, FileResult] = {}
    known_roots: dict[str, str] = {}  # project_root's, for this run
    if named:
        walked = [p for p in paths if os.path.isdir(p)]
        context += includers(
            named, [*targets, *context], settings.exclude, ignored, parsed, walked, known_roots
        )
    roots = {project_root(p, known_roots) for p in paths}
    files, problems, unfollowed = load([*targets, *context], given, parsed, roots)
    if any(isinstance(r, Requirement) and r.checkout is not None for f in files.values() for r in f.records):
        from fa_lint.files import checkouts  # source builds of a folder the repository holds: few runs

        checkouts.resolve(files, [os.path.realpath(r) for r in roots])
    problems += settings.problems
    if settings.scoped is not None:
        for path in files:  # every file read has its scope looked up, so every search has ended
            settings.scoped(path)
        problems += settings.scoped.problems()
    # Files read only for context (a lock beside a manifest, a file that includes a named one):
    # their findings are reported only when they involve a checked file (a FAL004 or FAL006 whose
    # related locations are in one), as the same run over the whole project would report them.
    hidden = set(files) - reached(files, [t.path for t in targets])
    records = _by_kind(files)
    uses = _uses(files, hidden, roots, problems)  # a crash reading one file's code is said in problems
    return _Read(
        files,
        hidden,
        records[Requirement],
        (*problems, *records[ParseProblem]),
        tuple(unfollowed),
        build(files, {t.path for t in (*targets, *context)}),
        records[BuildConfig],
        records[Setting],  # what the files say about the machines (a stage's image too)
        records[NotRun],
        uses,
        searched[0] > 0,
    )


def _by_kind(files: Mapping[str, FileResult]) -> dict[type, tuple[Any, ...]]:
    """Every record of the files, by kind, in file order (an Image goes with the Settings)."""
    kinds: dict[type, list[Any]] = {k: [] for k in (Requirement, ParseProblem, BuildConfig, Setting, NotRun)}
    for f in files.values():
        for rec in f.records:
            kind = next((k for k in _KINDS if isinstance(rec, k)), None)
            if kind is not None:
                kinds[Setting if kind is Image else kind].append(rec)
    return {k: tuple(v) for k, v in kinds.items()}


_KINDS = (Requirement, ParseProblem, BuildConfig, Setting, Image, NotRun)


def context(paths: Iterable[str], settings: Settings | None = None) -> Context:
    """What the rules would read of ``paths``, under the run's policy: for ``fa-lint wheel``."""
    settings = settings or Settings()
    base = kb.load()
    with fewer_collections():
        return _read(list(paths), settings, None).context(base, _policy(settings, base))


def _check(paths: list[str], settings: Settings, given: Mapping[str, bytes] | None) -> Report:
    base = kb.load()
    policy = _policy(settings, base)
    read = _read(paths, settings, given)
    files, hidden = read.files, read.hidden
    # Each file is judged by its own configuration's min-version: the rules run once per one in force.
    scoped = settings.scoped
    by_file = {path: _policy(scoped(path), base) for path in files} if scoped is not None else {}
    policies = set(by_file.values()) or {policy}

    def findings(policy: Policy) -> Iterator[Finding]:
        ctx = read.context(base, policy)
        where = next(iter(files), paths[0] if paths else ".")
        return (f for c in CHECKS for f in _judged(c, ctx, where) if _involves(f, hidden))

    texts = {p: f.text for p, f in files.items() if f.text is not None}
    if len(policies) == 1:
        (policy,) = policies  # the run's, or the one every file's configuration sets
        found = _settled(findings(policy), texts)
    else:
        found = _settled(
            (f for p in policies for f in findings(p) if by_file.get(f.location.path, policy) == p), texts
        )
    select, ignore, per_file = settings.select, settings.ignore, settings.per_file_ignores
    if settings.scoped is not None:
        found = [f for f in found if _selected(f, settings.scoped)]
        select, ignore, per_file = (), (), ()
    formats = {p: f.source for p, f in files.items()}
    kept, suppressed = decide.apply(
        found, texts, select, ignore, per_file, settings.root, formats, settings.noqa
    )
    checked = tuple(p for p in files if p not in hidden)
    return Report(tuple(kept), checked, suppressed, base, policy, texts, tuple(paths), formats)


def _targets(
    paths: list[str], settings: Settings, ignored: GitIgnore | None, searched: list[int] | None = None
) -> list[Target]:
    targets = list(discover(paths, settings.exclude, ignored, settings.force_exclude, searched))
    if settings.scoped is not None:
        targets = [t for t in targets if not _scope_excludes(t, settings.scoped(t.path))]
    return targets


def targets(paths: list[str], settings: Settings) -> list[str]:
    """The files a run over ``paths`` checks (``--show-files``): found, not read."""
    ignored = GitIgnore() if settings.respect_gitignore else None
    return [t.path for t in _targets(paths, settings, ignored) if t.path != "-"]


def _uses(
    files: Mapping[str, FileResult], hidden: set[str], roots: set[str], problems: list[ParseProblem]
) -> tuple[Use, ...]:
    """What the checked files' code does (fa_lint.code): Python read with ast, command lines as text,
    and each ``[tool.kernels.dependencies]`` against the ``kernels.lock`` beside it. An exception
    reading one file is fa-lint's bug: it costs that file's uses only, and is said (``problems``)."""
    found: list[Use] = []
    real: list[str] | None = None  # the roots' real paths, for the locks' only
    for path, f in files.items():
        if path in hidden or f.text is None:
            continue
        try:
            found += uses_of(path, f.source, f.text)
        except Exception as exc:
            problems.append(internal_error(Location(path, 1, 1, 1, 1), exc, "reading the code in this file"))
        if f.source == "pyproject" and "[tool.kernels" in f.text:
            real = real if real is not None else [os.path.realpath(r) for r in roots]
            found += _locked(path, f.text, real, problems)
    return tuple(found)


def _locked(path: str, text: str, roots: list[str], problems: list[ParseProblem]) -> list[Use]:
    """The ``kernels.lock`` beside a pyproject.toml that asks for kernels, against what it asks."""
    lock = os.path.join(os.path.dirname(path), "kernels.lock")
    if not os.path.isfile(lock) or off_limits(lock, roots) is not None:
        return []
    from fa_lint.code.command_lines import lock_uses  # for projects that lock kernels only

    locked = read_text(lock)
    if not isinstance(locked, str):
        return []
    try:
        return lock_uses(path, text, lock, locked)
    except Exception as exc:
        problems.append(internal_error(Location(lock, 1, 1, 1, 1), exc, "reading this lock"))
        return []


def _judged(check: Check, ctx: Context, where: str) -> Iterator[Finding]:
    """One family of rules' findings. An exception in it is fa-lint's bug: the findings it gave
    before stand, the other families still judge every file, and a FAL902 says which family went
    unfinished (at the first file read: a rule judges them all)."""
    try:
        yield from check(ctx)
    except Exception as exc:
        family = getattr(check, "__module__", "a rule").rpartition(".")[2]
        problem = internal_error(Location(where, 1, 1, 1, 1), exc, f"judging the files (rules {family})")
        yield internal(problem)


def _policy(settings: Settings, base: kb.KnowledgeBase) -> Policy:
    return Policy(settings.min_version) if settings.min_version else Policy.default(base)


def _scope_excludes(target: Target, own: Settings) -> bool:
    """Whether the file's own configuration leaves it out: its ``exclude`` globs, relative to that
    configuration's folder, match the file or a folder on the way to it (as they would prune the walk),
    for files found by walking, and for named ones under ``force-exclude``."""
    if not own.exclude or (target.explicit and not own.force_exclude):
        return False
    rel = os.path.relpath(os.path.abspath(target.path), own.root)
    if rel.startswith(os.pardir):
        return False
    parts = rel.split(os.sep)
    return any(excluded("/".join(parts[:n]), own.exclude) for n in range(1, len(parts) + 1))


def _selected(finding: Finding, scoped: Scopes) -> bool:
    if finding.code == INTERNAL:  # fa-lint's own bug: no configuration turns it off
        return True
    own = scoped(finding.location.path)
    path = finding.location.path
    ignore = own.ignore + decide.file_ignores(path, own.per_file_ignores, own.root)
    return decide.selected(finding.code, own.select, ignore)


def _involves(finding: Finding, hidden: set[str]) -> bool:
    """Whether a finding concerns a checked file: it is in one, or relates to a line of one."""
    return finding.location.path not in hidden or any(r.path not in hidden for r in finding.related)
