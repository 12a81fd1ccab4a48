"""``fa-lint [PATHS...]``: check, fix, diff, and print the report; the exit code from its findings."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from fa_lint.cli.args import (
    ALIASES,
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    LISTING,
    UsageError,
    codes,
    configuration,
    known,
    min_version,
    resolver,
    say,
    write,
)
from fa_lint.settings import config

if TYPE_CHECKING:
    from fa_lint.cli.newfromrev import Baseline, Relocate
    from fa_lint.engine import Report, Settings
    from fa_lint.fixes.apply import Outcome
    from fa_lint.model import Finding, Fix, ParseProblem
    from fa_lint.report.text import ShownFixes


def _use_color(choice: str, stream: TextIO) -> bool:
    """--color always/never decide; else NO_COLOR turns colour off (no-color.org; it wins, as in
    CPython's own colouring), FORCE_COLOR (any value) or CLICOLOR_FORCE (not 0) turn it on where there
    is no terminal, a CI log that shows colour (force-color.org, bixense.com/clicolors), CLICOLOR=0
    and TERM=dumb (Emacs' shell, a terminal that prints escapes as they are; CPython's own colouring
    checks it too) turn it off, and then a terminal decides.

    Written out rather than taken from a library: colorama and rich decide colour for Windows consoles
    and their own markup, and neither reads the same variables in this order; the rule is these lines."""
    if choice != "auto":
        return choice == "always"
    env = os.environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR") or env.get("CLICOLOR_FORCE", "0") not in ("", "0"):
        return True
    if env.get("CLICOLOR") == "0" or env.get("TERM") == "dumb":  # a terminal that shows no colour
        return False
    return hasattr(stream, "isatty") and stream.isatty()


MAX_FIX_PASSES = 4  # a fix can make another possible: quoting a word, then raising its floor


def _skipped(outcomes: list[Outcome], err: TextIO) -> None:
    for o in outcomes:
        for f, why in o.skipped:
            say(err, f"not fixed: {f.location}: {f.title}: {why}")


def _diff(report: Report, unsafe: bool, out: TextIO, err: TextIO, quiet: bool) -> int:
    from fa_lint.fixes import apply as fix
    from fa_lint.report.text import plural

    outcomes = fix.run(report.findings, unsafe=unsafe, dry_run=True)
    changed = [o for o in outcomes if o.applied]
    for o in changed:
        text, escaped = o.patch()
        out.write(text)
        if escaped:  # the patch is printed as it is, but for these
            say(
                err,
                f"--diff shows {escaped} line(s) of {o.path} escaped: a terminal or CI runner acts on them",
            )
    _skipped(outcomes, err)
    n = sum(len(o.applied) for o in changed)
    fixes = f"{n} fix" if n == 1 else f"{n} fixes"
    if not quiet:
        err.write(f"fa-lint: {fixes} in {plural(len(changed), 'file')} would be applied\n")
    return EXIT_FINDINGS if changed else EXIT_OK


def _edits(report: Report, outcomes: list[Outcome]) -> list[tuple[Finding, Fix]]:
    """Each edit made, with the (first) finding that asked for it."""
    owner: dict[Fix, Finding] = {}
    for f in report.findings:
        if f.fix is not None:
            owner.setdefault(f.fix, f)
    return [(owner[x], x) for o in outcomes for x in o.applied if x in owner]


def _would_fix(report: Report, unsafe: bool, err: TextIO) -> ShownFixes:
    """--show-fixes without --fix: the edits --fix would make now, found by making them in memory."""
    from fa_lint.fixes import apply as fix
    from fa_lint.report.text import ShownFixes

    outcomes = fix.run(report.findings, unsafe=unsafe, dry_run=True)
    _skipped(outcomes, err)
    held = 0 if unsafe else len({f.fix for f in report.findings if f.fix is not None and not f.fix.safe})
    return ShownFixes(tuple(_edits(report, outcomes)), done=False, held=held)


def _fix(
    report: Report, recheck: Callable[[], Report], unsafe: bool, err: TextIO, quiet: bool
) -> tuple[Report, ShownFixes]:
    from fa_lint.fixes import apply as fix
    from fa_lint.report.text import ShownFixes, plural

    fixed: dict[str, int] = {}
    hints: dict[str, None] = {}
    edits: list[tuple[Finding, Fix]] = []
    for _ in range(MAX_FIX_PASSES):
        outcomes = fix.run(report.findings, unsafe=unsafe)
        hints.update(dict.fromkeys(fix.relock(outcomes)))
        edits += _edits(report, outcomes)
        for o in outcomes:
            if o.applied:
                fixed[o.path] = fixed.get(o.path, 0) + len(o.applied)
        if not any(o.applied for o in outcomes):
            _skipped(outcomes, err)
            break
        report = recheck()
    if fixed and not quiet:
        n = sum(fixed.values())
        err.write(f"fa-lint: fixed {plural(n, 'finding')} in {plural(len(fixed), 'file')}\n")
    for hint in hints:
        say(err, f"relock: {hint}")
    held = 0 if unsafe else len({f.fix for f in report.findings if f.fix is not None and not f.fix.safe})
    return report, ShownFixes(tuple(edits), done=True, held=held)


def _stdin() -> bytes:
    """Standard input up to one byte past the size limit: enough to refuse it, never all of it."""
    from fa_lint.files.read import MAX_BYTES

    stream = getattr(sys.stdin, "buffer", None)
    if stream is not None:
        return bytes(stream.read(MAX_BYTES + 1))
    return sys.stdin.read(MAX_BYTES + 1).encode("utf-8")


def _baseline(rev: str, paths: list[str], settings: Settings) -> Baseline:
    """What ``rev`` had; a usage error outside a git repository or for a revision git does not know."""
    from fa_lint import engine
    from fa_lint.cli import newfromrev

    def at_rev(moved: list[str], relocate: newfromrev.Relocate) -> Report:
        # The configuration's problems are the working tree's: REV's copy of them would hide them.
        scoped = settings.scoped
        if isinstance(scoped, _Scopes):  # REV's files, judged by the working tree's configurations
            there = os.path.realpath(relocate(top))

            def back(path: str) -> str:
                real = os.path.realpath(path)
                inside = real == there or real.startswith(there + os.sep)
                return top + real[len(there) :] if inside else path

            scoped = scoped.moved(back)
        # REV's files are all tracked ones, which no .gitignore leaves out (git's rule).
        moved_settings = settings._replace(
            root=relocate(settings.root), problems=(), scoped=scoped, respect_gitignore=False
        )
        return engine.check(moved, moved_settings)

    try:
        top = os.path.realpath(newfromrev.toplevel())
        return newfromrev.against(rev, paths, at_rev)
    except newfromrev.RevisionError as exc:
        raise UsageError(str(exc)) from None


class _Scopes:
    """Each file's settings (``engine.Scopes``): its nearest configuration, the command line over it.

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

    def moved(self, back: Relocate) -> _Scopes:
        return _Scopes(self._found, self._make, back)


def _settings(args: argparse.Namespace, cfg: config.Config, prune: bool) -> Settings:
    """The settings of the files ``cfg`` governs: the command line's options win over it."""
    from fa_lint import engine

    select = known(codes(args.select), "--select") or cfg.select
    extend = known(codes(args.extend_select), "--extend-select")
    ignore = known(codes(args.ignore), "--ignore")
    per_file = cfg.per_file_ignores if args.per_file_ignores is None else _per_file(args.per_file_ignores)
    # --exclude and --extend-exclude hold for every file (the walk applies them); a configuration's,
    # relative to its folder
    if prune:
        exclude: tuple[str, ...] = (*(args.exclude or ()), *(args.extend_exclude or ()))
    else:
        exclude = () if args.exclude else cfg.exclude
    return engine.Settings(
        select=select + extend if select else (),  # none selected: every rule already is
        ignore=ignore or cfg.ignore,
        min_version=min_version(args, cfg),
        exclude=exclude,
        force_exclude=cfg.force_exclude if args.force_exclude is None else args.force_exclude,
        respect_gitignore=cfg.respect_gitignore if args.respect_gitignore is None else args.respect_gitignore,
        per_file_ignores=per_file + _per_file(args.extend_per_file_ignores or []),
        root=cfg.root,
    )


def _per_file(given: list[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``--per-file-ignores GLOB:CODES`` (ruff's form), as the configuration's key holds them."""
    out = []
    for value in given:
        glob, colon, listed = value.rpartition(":")
        if not colon or not glob.strip():
            raise UsageError(f"--per-file-ignores {value!r}: give GLOB:CODES, e.g. 'docker/*:FAL012'")
        out.append((glob.strip(), known(codes([listed]), "--per-file-ignores")))
    return tuple(out)


def prepared(
    args: argparse.Namespace, paths: list[str], err: TextIO | None = None
) -> tuple[Settings, config.Config, config.Resolver | None]:
    """The run's settings for ``paths`` (each file's own configuration under the command line), the
    run's configuration, and the resolver that finds each file's; for ``lint`` and ``fa-lint server``."""
    found = resolver(args, err)
    cfg = configuration(args, paths, found)
    settings = _settings(args, cfg, prune=True)
    # The walk prunes what the run's configuration excludes where its globs mean the same relative to
    # the current folder; every file's own configuration is applied to it after (Settings.scoped).
    here = found is None or cfg.path is None or cfg.root == os.path.realpath(os.getcwd())
    if not args.exclude and here:
        settings = settings._replace(exclude=(*cfg.exclude, *(args.extend_exclude or ())))
    if found is not None:
        settings = settings._replace(scoped=_Scopes(found, lambda c: _settings(args, c, prune=False)))
    return settings, cfg, found


def lint(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:  # noqa: C901 - complexity 30, to split or justify (issue 45)
    from fa_lint import engine
    from fa_lint.report import renderer

    paths = args.paths or ["."]
    args.format = ALIASES.get(args.format, args.format)
    args.fix = args.fix or args.fix_only
    quiet = args.quiet or args.silent  # the findings alone; --silent: not even those
    settings, cfg, found = prepared(args, paths, err)
    given = None
    rev = cfg.new_from_rev if args.new_from_rev is None else args.new_from_rev  # "" turns it off
    if args.stdin_filename or paths == ["-"]:
        if rev:
            raise UsageError(
                "--new-from-rev compares files with a git revision; it cannot check standard input"
            )
        if args.paths not in ([], ["-"]):
            raise UsageError("--stdin-filename checks standard input: give no other paths")
        if args.fix or args.diff or args.show_fixes or args.add_noqa:
            raise UsageError(
                "--fix, --diff, --show-fixes and --add-noqa work on files; they cannot work on standard input"
            )
        paths = [args.stdin_filename or "-"]
        given = {paths[0]: _stdin()}
    if args.add_noqa and (args.fix or args.diff):
        raise UsageError("--add-noqa suppresses the findings; it cannot also fix them (--fix, --diff)")
    if args.show_fixes and args.format not in LISTING:
        raise UsageError("--show-fixes lists fixes in the text output: use --format text, concise or grouped")
    if args.statistics and args.format not in (*LISTING, "json"):
        raise UsageError("--statistics prints a table: use --format text, concise, grouped or json")
    missing = [p for p in paths if not os.path.exists(p) and not (given and p in given)]
    if missing:
        say(err, f"no such file or folder: {', '.join(missing)}")
        return EXIT_USAGE
    if args.show_files or args.show_settings:
        from fa_lint.cli.show import files, settings_of

        listed = list(given) if given else engine.targets(paths, settings)
        if args.show_files:
            out.write(files(listed))
        else:
            out.write(
                settings_of(listed, cfg, found, lambda c: _settings(args, c, prune=found is None), args)
            )
        return EXIT_OK
    base = _baseline(rev, paths, settings) if rev else None
    hidden = 0

    def check() -> Report:
        nonlocal hidden
        report = engine.check(paths, settings, given)
        if base is None:
            return report
        kept = base.narrow(report)
        hidden = kept.hidden
        return kept.report

    report = check()
    if args.verbose:
        from fa_lint.cli.show import governing

        for line in governing(report.files, cfg, found):
            say(err, line)
    if args.diff:
        return _diff(report, args.unsafe_fixes, io.StringIO() if args.silent else out, err, quiet)
    if args.add_noqa:
        return _add_noqa(report, settings, err, quiet)
    shown = None
    # --exit-non-zero-on-fix (ruff's): a changed file fails the run, for a hook or CI job that must
    # not pass with fixes nobody has looked at (--exit-zero still wins, as in ruff)
    changed_fails = False
    if args.fix:
        report, shown = _fix(report, check, args.unsafe_fixes, err, quiet)
        changed_fails = bool(shown.edits) and args.exit_non_zero_on_fix and not args.exit_zero
        if args.fix_only:  # ruff's: the fixes are the whole report, and what is left fails nothing
            if args.show_fixes and not args.silent:
                from fa_lint.report.text import shown_fixes

                write("".join(f"{line}\n" for line in shown_fixes(shown)), args.output_file, out)
            return EXIT_FINDINGS if changed_fails else EXIT_OK
    elif args.show_fixes:
        shown = _would_fix(report, args.unsafe_fixes, err)
    if not report.files and (args.format not in LISTING or args.statistics) and not quiet:  # listings say so
        say(err, f"no dependency files found in {', '.join(paths)}; nothing to check")
    if hidden and not quiet:
        say(err, f"--new-from-rev {rev}: left out {hidden} finding(s) {rev} already had")
    fixable = given is None  # --fix cannot take standard input
    if args.statistics:
        text = _statistics(report, args.format, args.unsafe_fixes, fixable)
    else:
        color = not args.output_file and _use_color(args.color, out)
        extra = {}
        if args.format == "sarif":  # the pipeline it runs in, for Azure DevOps' code scanning
            from fa_lint.report.sarif import azure_pipeline

            extra = {"automation": azure_pipeline(os.environ)}
        text = renderer(args.format)(
            report,
            color=color,
            fixable=fixable,
            fixes=shown if args.show_fixes else None,
            quiet=quiet,
            fails=lambda f: _fails(f, args, cfg, found),  # which findings fail the run (junit's failures)
            **extra,
        )
    if args.output_file or not args.silent:
        write(text, args.output_file, out)
    return _status(report, args, cfg, found, changed_fails, err)


def _status(
    report: Report,
    args: argparse.Namespace,
    cfg: config.Config,
    found: config.Resolver | None,
    changed_fails: bool,
    err: TextIO,
) -> int:
    """The exit status. fa-lint's own bug (FAL902) is 2, said once on stderr, whatever else was
    found: ruff exits 2 (``ExitStatus::Error``) for a panic and asks for a report
    (crates/ruff/src/lib.rs), and a run that could not read everything passes nothing; 1 for an
    error finding (a warning too under --strict) or a fix made under --exit-non-zero-on-fix.
    --exit-zero makes it 0 in every case, as in ruff."""
    if args.exit_zero:
        return EXIT_OK
    from fa_lint import __version__
    from fa_lint.model import INTERNAL  # (a report is loaded: so is the model)
    from fa_lint.rules.unread import REPORT

    crashed = {f.location.path for f in report.findings if f.code == INTERNAL}
    if crashed:
        say(
            err,
            f"internal error in fa-lint {__version__} on {len(crashed)} file(s) ({INTERNAL} in the report): "
            "a bug in fa-lint, not in the files; what it could not read went unchecked, everything else was "
            f"checked; {REPORT}",
        )
        return EXIT_USAGE
    if changed_fails:
        return EXIT_FINDINGS
    return EXIT_FINDINGS if any(_fails(f, args, cfg, found) for f in report.findings) else EXIT_OK


def _add_noqa(report: Report, settings: Settings, err: TextIO, quiet: bool) -> int:
    """``--add-noqa``: ruff's, and like ruff's it exits 0: the findings are suppressed, not fixed."""
    from fa_lint import engine
    from fa_lint.cli.addnoqa import add
    from fa_lint.fixes import apply as fix
    from fa_lint.report.text import plural

    def recheck(path: str, data: bytes, noqa: bool) -> Report:
        return engine.check([path], settings._replace(noqa=noqa), {path: data})

    added = add(report.findings, recheck, fix.write)
    for path, line, why in added.refused:
        say(err, f"no noqa added: {path}:{line}: {why}")
    if not quiet:
        comments = plural(added.comments, "noqa comment")
        err.write(f"fa-lint: added {comments} to {plural(added.files, 'file')}\n")
    return EXIT_OK


def _fails(f: Finding, args: argparse.Namespace, cfg: config.Config, found: config.Resolver | None) -> bool:
    """An error fails the run; a warning too under --strict, or ``strict`` in its file's configuration."""
    if f.severity.value == "error":  # (the values: --version loads no model)
        return True
    if f.severity.value != "warning":
        return False
    if args.strict is not None:
        return bool(args.strict)
    return (found.nearest(f.location.path) if found is not None else cfg).strict


def _statistics(report: Report, fmt: str, unsafe: bool, fixable: bool) -> str:
    from fa_lint.report import statistics
    from fa_lint.report.text import summary

    stats = statistics.count(report.findings, unsafe=unsafe, fixable=fixable)
    if fmt == "json":
        return statistics.as_json(stats)
    return statistics.text(stats) + summary(report, fixable=fixable) + "\n"
