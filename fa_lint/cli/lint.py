"""``fa-lint [PATHS...]``: check, fix, diff, and print the report; the exit code from its findings."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from fa_lint.cli.args import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, LISTING, UsageError, say, write

if TYPE_CHECKING:
    from fa_lint.cli.newfromrev import Baseline
    from fa_lint.cli.partition import Arguments
    from fa_lint.engine import Report
    from fa_lint.fixes.apply import Outcome
    from fa_lint.model import Finding, Fix
    from fa_lint.report.text import ShownFixes
    from fa_lint.settings.overrides import Overrides
    from fa_lint.settings.resolved import Settings
    from fa_lint.settings.scopes import Workspace


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
    from fa_lint.settings.scopes import Nearest

    def at_rev(moved: list[str], relocate: newfromrev.Relocate) -> Report:
        # The configuration's problems are the working tree's: REV's copy of them would hide them.
        scoped = settings.scoped
        if isinstance(scoped, Nearest):  # REV's files, judged by the working tree's configurations
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


def _add_noqa(report: Report, settings: Settings, err: TextIO, run: Arguments) -> int:
    """``--add-noqa``: ruff's, and like ruff's it exits 0: the findings are suppressed, not fixed."""
    from fa_lint import engine
    from fa_lint.cli.addnoqa import add
    from fa_lint.fixes import apply as fix
    from fa_lint.report.text import plural

    def recheck(path: str, data: bytes, noqa: bool) -> Report:
        return engine.check([path], settings._replace(noqa=noqa), {path: data})

    added = add(report.findings, recheck, fix.write, reason=run.noqa_reason)
    for path, line, why in added.refused:
        say(err, f"no noqa added: {path}:{line}: {why}")
    if not run.quiet:
        comments = plural(added.comments, "noqa comment")
        err.write(f"fa-lint: added {comments} to {plural(added.files, 'file')}\n")
    return EXIT_OK


def _statistics(report: Report, fmt: str, unsafe: bool, fixable: bool) -> str:
    from fa_lint.report import statistics
    from fa_lint.report.text import summary

    stats = statistics.count(report.findings, unsafe=unsafe, fixable=fixable)
    if fmt == "json":
        return statistics.as_json(stats)
    return statistics.text(stats) + summary(report, fixable=fixable) + "\n"


def lint(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The command line split once into the run's arguments and the configuration overrides, then
    the run (again on each change under ``--watch``)."""
    from fa_lint.cli.partition import partition

    run, overrides = partition(args, err)
    if not run.watch:
        return _once(run, overrides, out, err)
    from fa_lint.cli import watch

    _watchable(run)
    return watch.loop(lambda: _once(run, overrides, out, err), lambda: _watched(run, overrides), out, err)


def _once(run: Arguments, overrides: Overrides, out: TextIO, err: TextIO) -> int:
    """One run: the settings resolved once (``settings.scopes.Workspace``), then each step."""
    from fa_lint.settings.scopes import Workspace

    space = Workspace(overrides, list(run.paths) or ["."])
    paths, given = _inputs(run, space.settings)
    _compatible(run, space.settings)
    missing = [p for p in paths if not os.path.exists(p) and not (given and p in given)]
    if missing:
        say(err, f"no such file or folder: {', '.join(missing)}")
        return EXIT_USAGE
    if run.show_files or run.show_settings:
        return _show(run, space, paths, given, out)
    checked = _Checked(paths, space.settings, given)
    report = checked()
    if run.verbose:
        from fa_lint.cli.show import governing

        for line in governing(report.files, space):
            say(err, line)
    unsafe = space.settings.unsafe_fixes
    if run.diff:
        return _diff(report, unsafe, io.StringIO() if run.silent else out, err, run.quiet)
    if run.add_noqa:
        return _add_noqa(report, space.settings, err, run)
    return _reported(run, space, checked, report, out, err)


def _watchable(run: Arguments) -> None:
    """ruff's conflicts with ``--watch``: what prints once, or changes the files, or reads stdin."""
    once = {"--add-noqa": run.add_noqa, "--diff": run.diff, "--statistics": run.statistics}
    once |= {"--show-files": run.show_files, "--show-settings": run.show_settings}
    given = [name for name, on in once.items() if on]
    if given or _stdin_run(run):
        raise UsageError(f"--watch cannot go with {', '.join(given) or 'standard input'}")


def _watched(run: Arguments, overrides: Overrides) -> list[str]:
    """What ``--watch`` watches: the files a run checks, and the configurations that govern them."""
    from fa_lint import engine
    from fa_lint.settings.scopes import Workspace

    space = Workspace(overrides, list(run.paths) or ["."])
    files = engine.targets(list(run.paths) or ["."], space.settings)
    configs = {space.nearest(f).path for f in files} | {space.config.path}
    return [*files, *sorted(c for c in configs if c)]


def _inputs(run: Arguments, settings: Settings) -> tuple[list[str], dict[str, bytes] | None]:
    """The paths to check, and standard input's bytes when it is what is checked."""
    paths = list(run.paths) or ["."]
    if not (run.stdin_filename or paths == ["-"]):
        return paths, None
    if settings.new_from_rev:
        raise UsageError("--new-from-rev compares files with a git revision; it cannot check standard input")
    if run.paths not in ((), ("-",)):
        raise UsageError("--stdin-filename checks standard input: give no other paths")
    if run.fix or run.diff or run.show_fixes or run.add_noqa:
        raise UsageError(
            "--fix, --diff, --show-fixes and --add-noqa work on files; they cannot work on standard input"
        )
    name = run.stdin_filename or "-"
    return [name], {name: _stdin()}


def _compatible(run: Arguments, settings: Settings) -> None:
    """A usage error for options that cannot go together."""
    if run.add_noqa and (run.fix or run.diff):
        raise UsageError("--add-noqa suppresses the findings; it cannot also fix them (--fix, --diff)")
    if run.add_noqa and not settings.noqa:  # ruff's conflict: the comments it adds would not count
        raise UsageError("--add-noqa adds noqa comments; --ignore-noqa would not read them")
    if run.show_fixes and run.format not in LISTING:
        raise UsageError("--show-fixes lists fixes in the text output: use --format text, concise or grouped")
    if run.statistics and run.format not in (*LISTING, "json"):
        raise UsageError("--statistics prints a table: use --format text, concise, grouped or json")


def _show(
    run: Arguments, space: Workspace, paths: list[str], given: dict[str, bytes] | None, out: TextIO
) -> int:
    """``--show-files`` and ``--show-settings``: what a run would check, and with which settings."""
    from fa_lint import engine
    from fa_lint.cli.show import files, settings_of

    listed = list(given) if given else engine.targets(paths, space.settings)
    out.write(files(listed) if run.show_files else settings_of(listed, space))
    return EXIT_OK


class _Checked:
    """The check a run makes (again after each fix): the engine's report, narrowed to what the change
    brings under ``--new-from-rev`` (``hidden``: how many findings the baseline already had)."""

    def __init__(self, paths: list[str], settings: Settings, given: dict[str, bytes] | None) -> None:
        self.paths, self.settings, self.given = paths, settings, given
        rev = settings.new_from_rev
        self.base = _baseline(rev, paths, settings) if rev else None
        self.hidden = 0

    def __call__(self) -> Report:
        from fa_lint import engine

        report = engine.check(self.paths, self.settings, self.given)
        if self.base is None:
            return report
        kept = self.base.narrow(report)
        self.hidden = kept.hidden
        return kept.report


def _reported(
    run: Arguments, space: Workspace, checked: _Checked, report: Report, out: TextIO, err: TextIO
) -> int:
    """Fix what is asked, print the report (or its statistics), and say how the run ends."""
    report, shown, changed_fails = _fixed(run, checked, report, err)
    if run.fix_only:  # ruff's: the fixes are the whole report, and what is left fails nothing
        if run.show_fixes and not run.silent and shown is not None:
            from fa_lint.report.text import shown_fixes

            write("".join(f"{line}\n" for line in shown_fixes(shown)), run.output_file, out)
        return EXIT_FINDINGS if changed_fails else EXIT_OK
    listing = run.format in LISTING and not run.statistics  # a listing says so itself
    if not report.files and not listing and not run.quiet:
        say(err, f"no dependency files found in {', '.join(checked.paths)}; nothing to check")
    rev = space.settings.new_from_rev
    if checked.hidden and not run.quiet:
        say(err, f"--new-from-rev {rev}: left out {checked.hidden} finding(s) {rev} already had")
    text = _text(run, space, report, shown, out)
    if run.output_file or not run.silent:
        write(text, run.output_file, out)
    return _status(report, run, space, changed_fails, err)


def _fixed(
    run: Arguments, checked: _Checked, report: Report, err: TextIO
) -> tuple[Report, ShownFixes | None, bool]:
    """``--fix`` (and the edits it made) or ``--show-fixes`` alone (the edits it would make); whether
    a changed file fails the run (``--exit-non-zero-on-fix``, ruff's: for a hook or CI job that must not
    pass with fixes nobody has looked at; ``--exit-zero`` still wins, as in ruff)."""
    unsafe = checked.settings.unsafe_fixes
    if run.fix:
        report, shown = _fix(report, checked, unsafe, err, run.quiet)
        return report, shown, bool(shown.edits) and run.exit_non_zero_on_fix and not run.exit_zero
    if run.show_fixes:
        return report, _would_fix(report, unsafe, err), False
    return report, None, False


def _text(run: Arguments, space: Workspace, report: Report, shown: ShownFixes | None, out: TextIO) -> str:
    """The report in its format, or its statistics."""
    from fa_lint.report import renderer

    fixable = not _stdin_run(run)  # --fix cannot take standard input
    if run.statistics:
        return _statistics(report, run.format, space.settings.unsafe_fixes, fixable)
    extra = {}
    if run.format == "sarif":  # the pipeline it runs in, for Azure DevOps' code scanning
        from fa_lint.report.sarif import automation

        extra = {"automation": automation(os.environ, space.settings.sarif_category)}
    return renderer(run.format)(
        report,
        color=not run.output_file and _use_color(run.color, out),
        fixable=fixable,
        fixes=shown if run.show_fixes else None,
        quiet=run.quiet,
        fails=lambda f: _fails(f, space),  # which findings fail the run (junit's failures)
        **extra,
    )


def _stdin_run(run: Arguments) -> bool:
    return bool(run.stdin_filename) or list(run.paths) == ["-"]


def _status(report: Report, run: Arguments, space: Workspace, changed_fails: bool, err: TextIO) -> int:
    """The exit status. fa-lint's own bug (FAL902) is 2, said once on stderr, whatever else was
    found: ruff exits 2 (``ExitStatus::Error``) for a panic and asks for a report
    (crates/ruff/src/lib.rs), and a run that could not read everything passes nothing; 1 for an
    error finding (a warning too under --strict) or a fix made under --exit-non-zero-on-fix.
    --exit-zero makes it 0 in every case, as in ruff."""
    if run.exit_zero:
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
    return EXIT_FINDINGS if any(_fails(f, space) for f in report.findings) else EXIT_OK


def _fails(f: Finding, space: Workspace) -> bool:
    """An error fails the run; a warning too where its file's settings are strict (``--strict``, or
    ``strict`` in its configuration)."""
    if f.severity.value == "error":  # (the values: --version loads no model)
        return True
    return f.severity.value == "warning" and space.of(f.location.path).strict
