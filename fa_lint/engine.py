"""The pipeline: discover -> parse -> resolve -> rules -> decide. No printing, no exiting."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType

from fa_lint import kb
from fa_lint._gc import fewer_collections
from fa_lint._records import NamedTuple
from fa_lint.code.readers import uses_of
from fa_lint.code.uses import Use
from fa_lint.files.bounds import off_limits
from fa_lint.files.discover import Found, GitIgnore, Target, excluded, find
from fa_lint.files.project import Includers, Roots, companions, including, load, reached
from fa_lint.files.read import read_text
from fa_lint.kb.assess import Policy
from fa_lint.machine.environments import build
from fa_lint.model import (
    INTERNAL,
    BuildConfig,
    FileResult,
    Finding,
    Image,
    Location,
    NotRun,
    ParseProblem,
    Requirement,
    Setting,
    internal_error,
)
from fa_lint.rules import CHECKS, PACKAGES, RULES, Context, settle
from fa_lint.rules._base import Answers, Check
from fa_lint.rules.unread import internal
from fa_lint.settings import decide, unused
from fa_lint.settings.resolved import Scopes, Settings
from fa_lint.syntax.text import TextIndex


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
    """What a run read: its files, which were read only for context (``hidden``), and what the rules
    read of them, under the run's policy (``context``; ``Context.replace`` gives it another)."""

    files: dict[str, FileResult]
    hidden: set[str]
    context: Context


def _read(
    paths: list[str], settings: Settings, given: Mapping[str, bytes] | None, base: kb.KnowledgeBase
) -> _Read:
    ignored = GitIgnore() if settings.respect_gitignore else None
    found = _found(paths, settings, ignored)
    targets = found.targets
    context = companions(targets, ignored)
    named = [t for t in targets if t.explicit and t.path != "-"]  # a bare "-" is stdin, no file
    roots_of = Roots()  # project_root, each folder's answer kept for this run
    includers = Includers([], {})  # the project's files that include a named one
    if named:
        walked = [p for p in paths if os.path.isdir(p)]
        known = [*targets, *context]
        includers = including(named, known, settings.exclude, ignored, walked, roots_of, PACKAGES)
        context += includers.targets
    roots = {roots_of(p) for p in paths}
    files, problems, unfollowed = load([*targets, *context], given, includers.parsed, roots, PACKAGES)
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
    read = list(_uses(files, hidden, roots))
    uses = tuple(u for u in read if isinstance(u, Use))
    problems += [p for p in read if isinstance(p, ParseProblem)]  # a crash reading one file's code
    return _Read(
        files,
        hidden,
        Context(
            base,
            _policy(settings, base),
            Answers(),
            tuple(records.requirements),
            (*problems, *records.problems),
            tuple(unfollowed),
            build(files, {t.path for t in (*targets, *context)}),
            tuple(records.configs),
            tuple(records.machine),
            tuple(records.not_run),
            uses,
            found.python_files > 0,  # a walk searched Python files for the code layer's words
        ),
    )


class _Records(NamedTuple):
    """Every record of the files, by kind, in file order."""

    requirements: list[Requirement]
    problems: list[ParseProblem]
    configs: list[BuildConfig]
    machine: list[Setting | Image]  # what the files say about the machines (a stage's image too)
    not_run: list[NotRun]


def _by_kind(files: Mapping[str, FileResult]) -> _Records:
    out = _Records([], [], [], [], [])
    for f in files.values():
        for rec in f.records:
            if isinstance(rec, Requirement):
                out.requirements.append(rec)
            elif isinstance(rec, ParseProblem):
                out.problems.append(rec)
            elif isinstance(rec, BuildConfig):
                out.configs.append(rec)
            elif isinstance(rec, (Setting, Image)):
                out.machine.append(rec)
            elif isinstance(rec, NotRun):
                out.not_run.append(rec)
    return out


def context(paths: Iterable[str], settings: Settings | None = None) -> Context:
    """What the rules would read of ``paths``, under the run's policy: for ``fa-lint wheel``."""
    with fewer_collections():
        return _read(list(paths), settings or Settings(), None, kb.load()).context


def _check(paths: list[str], settings: Settings, given: Mapping[str, bytes] | None) -> Report:
    base = kb.load()
    read = _read(paths, settings, given, base)
    files, hidden, run = read
    policy = run.policy
    # Each file is judged by its own configuration's min-version: the rules run once per one in force.
    scoped = settings.scoped
    by_file = {path: _policy(scoped(path), base) for path in files} if scoped is not None else {}
    policies = set(by_file.values()) or {policy}

    def findings(policy: Policy) -> Iterator[Finding]:
        ctx = run if policy == run.policy else run.replace(policy)
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
    found = _stable(found, settings)
    select, ignore, per_file = settings.select, settings.ignore, settings.per_file_ignores
    every = found  # the comments FAL903 judges are judged against every rule's findings
    if settings.scoped is not None:
        found = [f for f in found if _selected(f, settings.scoped)]
        select, ignore, per_file = (), (), ()
    formats = {p: f.source for p, f in files.items()}
    kept, suppressed = decide.apply(
        found, texts, select, ignore, per_file, settings.root, formats, settings.noqa
    )
    checked = tuple(p for p in files if p not in hidden)
    if settings.noqa:  # with no comment read (--add-noqa's recheck), none is unused
        kept = unused.added(kept, every, texts, formats, checked, lambda p: _unused_selected(p, settings))
    kept = _fixable(kept, settings)
    return Report(tuple(kept), checked, suppressed, base, policy, texts, tuple(paths), formats)


def _found(paths: list[str], settings: Settings, ignored: GitIgnore | None) -> Found:
    found = find(paths, settings.exclude, ignored, settings.force_exclude, settings.extension)
    if settings.scoped is None:
        return found
    scoped = settings.scoped
    return found._replace(targets=[t for t in found.targets if not _scope_excludes(t, scoped(t.path))])


def targets(paths: list[str], settings: Settings) -> list[str]:
    """The files a run over ``paths`` checks (``--show-files``): found, not read."""
    ignored = GitIgnore() if settings.respect_gitignore else None
    return [t.path for t in _found(paths, settings, ignored).targets if t.path != "-"]


def _uses(files: Mapping[str, FileResult], hidden: set[str], roots: set[str]) -> Iterator[Use | ParseProblem]:
    """What the checked files' code does (fa_lint.code): Python read with ast, command lines as text,
    and each ``[tool.kernels.dependencies]`` against the ``kernels.lock`` beside it. An exception
    reading one file is fa-lint's bug: it costs that file's uses only, and is said (a problem)."""
    real: list[str] | None = None  # the roots' real paths, for the locks' only
    for path, f in files.items():
        if path in hidden or f.text is None:
            continue
        try:
            yield from uses_of(path, f.source, f.text)
        except Exception as exc:
            yield internal_error(Location(path, 1, 1, 1, 1), exc, "reading the code in this file")
        if f.source == "pyproject" and "[tool.kernels" in f.text:
            real = real if real is not None else [os.path.realpath(r) for r in roots]
            yield from _locked(path, f.text, real)


def _locked(path: str, text: str, roots: list[str]) -> list[Use] | list[ParseProblem]:
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
        return [internal_error(Location(lock, 1, 1, 1, 1), exc, "reading this lock")]


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


def _own(settings: Settings, path: str) -> Settings:
    return settings.scoped(path) if settings.scoped is not None else settings


def _stable(found: Iterable[Finding], settings: Settings) -> list[Finding]:
    """The findings, less those of a rule marked preview where its file's settings are not in
    preview (ruff's ``--preview``: such rules are off unless it is given)."""
    preview = {code for code, rule in RULES.items() if rule.preview}
    return [f for f in found if f.code not in preview or _own(settings, f.location.path).preview]


def _fixable(found: list[Finding], settings: Settings) -> list[Finding]:
    """The findings, each without its fix where its file's settings do not let --fix fix its rule
    (``fixable``, ``unfixable``): as ruff, the fix is taken away as the finding is made."""
    return [
        f._replace(fix=None) if f.fix is not None and not _own(settings, f.location.path).fixes(f.code) else f
        for f in found
    ]


def _selected(finding: Finding, scoped: Scopes) -> bool:
    if finding.code == INTERNAL:  # fa-lint's own bug: no configuration turns it off
        return True
    own = scoped(finding.location.path)
    path = finding.location.path
    ignore = own.ignore + decide.file_ignores(path, own.per_file_ignores, own.root)
    return decide.selected(finding.code, own.select, ignore)


def _unused_selected(path: str, settings: Settings) -> bool:
    """Whether FAL903 (``settings.unused``) is selected for ``path``, by its own settings."""
    own = settings.scoped(path) if settings.scoped is not None else settings
    return unused.chosen(own.select, own.ignore + decide.file_ignores(path, own.per_file_ignores, own.root))


def _involves(finding: Finding, hidden: set[str]) -> bool:
    """Whether a finding concerns a checked file: it is in one, or relates to a line of one."""
    return finding.location.path not in hidden or any(r.path not in hidden for r in finding.related)
