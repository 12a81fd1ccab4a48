"""``fa-lint [PATHS...]`` and ``fa-lint verify``: argument parsing, config merge, exit codes.

Exit codes: 0 no error findings, 1 at least one error finding (warnings too with --strict),
2 usage, configuration or internal error.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from packaging.version import Version

from fa_lint import __version__, config

if TYPE_CHECKING:
    from fa_lint.engine import Report, Settings
    from fa_lint.fix import Outcome
    from fa_lint.model import Finding, Fix
    from fa_lint.newfromrev import Baseline
    from fa_lint.report.text import ShownFixes

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FORMATS = ("text", "concise", "json", "sarif", "github", "gitlab")
LISTING = ("text", "concise")  # the formats --statistics and --show-fixes print in (json: --statistics too)


class _Help(argparse.HelpFormatter):
    """argparse's formatter, told the terminal's width as ``shutil.get_terminal_size`` finds it.

    argparse makes a formatter for every argument it adds, and each asks shutil for the width: shutil
    (with bz2, lzma and zlib) imported on every run, for text that only ``--help`` shows.
    """

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_columns() - 2)


def _columns() -> int:
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0 and sys.__stdout__ is not None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Parser(argparse.ArgumentParser):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(formatter_class=_Help, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def _codes(values: list[str] | None) -> tuple[str, ...]:
    return tuple(c.strip().upper() for v in values or () for c in v.split(",") if c.strip())


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="fa-lint",
        description="Find flash-attn pins that cannot run paged-KV attention (flash_attn_with_kvcache "
        "block_table), in requirements, pyproject, lock, conda, Docker and shell files.",
        epilog="Run 'fa-lint rule FAL001' for what a rule finds and how to fix it, 'fa-lint verify --help' "
        "for the runtime check on a GPU host, 'fa-lint releases --help' for every release's paged-KV facts "
        "and prebuilt wheels, and 'fa-lint bot-config --help' for Renovate and Dependabot configs.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to check (default: .)")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="output format (default: text, a finding with its source, notes and fix; concise: a line each)",
    )
    p.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--select", action="append", metavar="CODES", help="only these rule codes or prefixes")
    p.add_argument("--ignore", action="append", metavar="CODES", help="skip these rule codes or prefixes")
    p.add_argument(
        "--min-version",
        metavar="VERSION",
        help="lowest acceptable flash-attn (default: the first release with block_table)",
    )
    p.add_argument(
        "--exclude", action="append", metavar="GLOB", help="skip matching paths when walking folders"
    )
    p.add_argument(
        "--force-exclude",
        action="store_true",
        default=None,
        help="apply --exclude (and [tool.fa-lint] exclude) to files named on the command line too",
    )
    p.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="check standard input as the file NAME (its format, folder and includes); "
        "also what 'fa-lint -' reads, as requirements",
    )
    p.add_argument(
        "--respect-gitignore",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="leave out what .gitignore leaves out when walking folders (default: on)",
    )
    p.add_argument(
        "--new-from-rev",
        metavar="REV",
        help="report only findings new since git revision REV, and those on lines changed since "
        "(e.g. origin/main in a pull request)",
    )
    p.add_argument(
        "--fix", action="store_true", help="apply safe fixes in place (only the fixed spans change)"
    )
    p.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix, --diff or --show-fixes, also move exact pins to another release",
    )
    p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change no file")
    p.add_argument(
        "--show-fixes",
        action="store_true",
        help="list each edit --fix makes (with --fix) or would make, before the summary",
    )
    p.add_argument(
        "--statistics",
        action="store_true",
        help="print how often each rule was found, with its name, most frequent first",
    )
    p.add_argument("--strict", action="store_true", default=None, help="exit 1 on warnings too")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour text output (auto: on a terminal, unless NO_COLOR is set)",
    )
    p.add_argument("--config", metavar="PYPROJECT", help="read [tool.fa-lint] from this file")
    p.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    p.add_argument(
        "--list-rules", action="store_true", help="print every rule and exit ('fa-lint rule' explains one)"
    )
    p.add_argument("--version", action="store_true", help="print the version and knowledge-base date")
    return p


def bot_parser() -> argparse.ArgumentParser:
    from fa_lint.bots import BOTS, ECOSYSTEMS, VERSIONING

    p = _Parser(
        prog="fa-lint bot-config",
        description="Print a Renovate preset or a dependabot.yml that never proposes a flash-attn release "
        "below the policy (the first release with block_table, or --min-version / [tool.fa-lint]).",
    )
    p.add_argument("bot", choices=BOTS)
    p.add_argument("--min-version", metavar="VERSION", help="lowest flash-attn a bot may propose")
    p.add_argument(
        "--ecosystem",
        action="append",
        choices=ECOSYSTEMS,
        help="dependabot: an update entry per ecosystem (default: pip)",
    )
    p.add_argument(
        "--directory",
        action="append",
        metavar="DIR",
        help="dependabot: where the manifests are, repeatable, globs allowed (default: /)",
    )
    p.add_argument(
        "--versioning-strategy",
        choices=tuple(VERSIONING),
        default="increase",
        help="dependabot: how updates change a requirement (default: increase, which raises a floor "
        "like >=2.3; auto leaves the key out)",
    )
    p.add_argument("-o", "--output-file", metavar="FILE", help="write the config to FILE instead of stdout")
    p.add_argument("--config", metavar="PYPROJECT", help="read [tool.fa-lint] from this file")
    p.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    return p


def rule_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="fa-lint rule",
        description="Explain a rule: what it finds, why it matters, how to fix and how to suppress it "
        "(the page docs/rules/CODE.md holds the same text).",
    )
    p.add_argument("code", nargs="?", metavar="CODE", help="a rule code (FAL001) or name (paged-kv-missing)")
    p.add_argument("--all", action="store_true", help="explain every rule")
    return p


def rule(args: argparse.Namespace, out: TextIO) -> int:
    from fa_lint.rules import RULES, page

    if args.all == bool(args.code):
        raise _UsageError("give one rule code, or --all")
    if args.all:
        codes = list(RULES)
    else:
        found = [r.code for r in RULES.values() if args.code.upper() == r.code or args.code.lower() == r.name]
        if not found:
            raise _UsageError(f"unknown rule {args.code!r}; 'fa-lint --list-rules' lists them")
        codes = found
    out.write("\n".join(page(code) for code in codes))
    return EXIT_OK


def _version() -> str:
    from fa_lint import kb

    base = kb.load()
    return (
        f"fa-lint {__version__} (knowledge base {base.date}: {len(base.installable)} flash-attn "
        f"releases, newest {base.newest}; paged KV since {base.first_with(kb.PAGED_KV)})"
    )


def _list_rules(out: TextIO) -> None:
    from fa_lint.rules import RULES

    for rule in RULES.values():
        out.write(f"{rule.code}  {rule.name:<28} {rule.severity.value:<8} {rule.summary}\n")


def _use_color(choice: str, stream: TextIO) -> bool:
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def _config(args: argparse.Namespace) -> config.Config:
    if args.isolated:
        return config.Config()
    if args.config:
        return config.load(args.config)
    path, skipped = config.find()
    found = config.load(path) if path else config.Config()
    return found._replace(problems=skipped)


def _min_version(args: argparse.Namespace, cfg: config.Config) -> Version | None:
    if args.min_version:
        return config.parse_version(args.min_version, "--min-version")
    return cfg.min_version


def _write(text: str, path: str | None, out: TextIO) -> None:
    if not path:
        out.write(text)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise _UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def bot_config(args: argparse.Namespace, out: TextIO) -> int:
    from fa_lint import bots, kb
    from fa_lint.resolve import Policy

    base = kb.load()
    min_version = _min_version(args, _config(args))
    policy = Policy(min_version) if min_version else Policy.default(base)
    if args.bot == "renovate":
        text = bots.renovate(policy, base)
    else:
        ecosystems = tuple(dict.fromkeys(args.ecosystem or ["pip"]))
        directories = tuple(dict.fromkeys(args.directory or ["/"]))
        text = bots.dependabot(policy, base, ecosystems, directories, args.versioning_strategy)
    _write(text, args.output_file, out)
    return EXIT_OK


MAX_FIX_PASSES = 4  # a fix can make another possible: quoting a word, then raising its floor


def _say(err: TextIO, message: str) -> None:
    """One line on stderr; its paths, fix titles and reasons can come from checked files."""
    from fa_lint.report._common import printable

    err.write(f"fa-lint: {printable(message)}\n")


def _skipped(outcomes: list[Outcome], err: TextIO) -> None:
    for o in outcomes:
        for f, why in o.skipped:
            _say(err, f"not fixed: {f.location}: {f.title}: {why}")


def _diff(report: Report, unsafe: bool, out: TextIO, err: TextIO) -> int:
    from fa_lint import fix
    from fa_lint.report.text import plural

    outcomes = fix.run(report.findings, unsafe=unsafe, dry_run=True)
    changed = [o for o in outcomes if o.applied]
    for o in changed:
        out.write(o.diff())
    _skipped(outcomes, err)
    n = sum(len(o.applied) for o in changed)
    fixes = f"{n} fix" if n == 1 else f"{n} fixes"
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
    from fa_lint import fix
    from fa_lint.report.text import ShownFixes

    outcomes = fix.run(report.findings, unsafe=unsafe, dry_run=True)
    _skipped(outcomes, err)
    held = 0 if unsafe else len({f.fix for f in report.findings if f.fix is not None and not f.fix.safe})
    return ShownFixes(tuple(_edits(report, outcomes)), done=False, held=held)


def _fix(
    report: Report, recheck: Callable[[], Report], unsafe: bool, err: TextIO
) -> tuple[Report, ShownFixes]:
    from fa_lint import fix
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
    if fixed:
        n = sum(fixed.values())
        err.write(f"fa-lint: fixed {plural(n, 'finding')} in {plural(len(fixed), 'file')}\n")
    for hint in hints:
        _say(err, f"relock: {hint}")
    held = 0 if unsafe else len({f.fix for f in report.findings if f.fix is not None and not f.fix.safe})
    return report, ShownFixes(tuple(edits), done=True, held=held)


def _stdin() -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    return stream.read() if stream is not None else sys.stdin.read().encode("utf-8")


def _baseline(rev: str, paths: list[str], settings: Settings) -> Baseline:
    """What ``rev`` had; a usage error outside a git repository or for a revision git does not know."""
    from fa_lint import engine, newfromrev

    def at_rev(moved: list[str], relocate: newfromrev.Relocate) -> Report:
        # The configuration's problems are the working tree's: REV's copy of them would hide them.
        return engine.check(moved, settings._replace(root=relocate(settings.root), problems=()))

    try:
        return newfromrev.against(rev, paths, at_rev)
    except newfromrev.RevisionError as exc:
        raise _UsageError(str(exc)) from None


def lint(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from fa_lint import engine
    from fa_lint.report import renderer

    cfg = _config(args)
    min_version = _min_version(args, cfg)
    settings = engine.Settings(
        select=_codes(args.select) or cfg.select,
        ignore=_codes(args.ignore) or cfg.ignore,
        min_version=min_version,
        exclude=tuple(args.exclude or ()) or cfg.exclude,
        force_exclude=cfg.force_exclude if args.force_exclude is None else args.force_exclude,
        respect_gitignore=cfg.respect_gitignore if args.respect_gitignore is None else args.respect_gitignore,
        per_file_ignores=cfg.per_file_ignores,
        root=cfg.root,
        problems=cfg.problems,
    )
    paths = args.paths or ["."]
    given = None
    rev = cfg.new_from_rev if args.new_from_rev is None else args.new_from_rev  # "" turns it off
    if args.stdin_filename or paths == ["-"]:
        if rev:
            raise _UsageError(
                "--new-from-rev compares files with a git revision; it cannot check standard input"
            )
        if args.paths not in ([], ["-"]):
            raise _UsageError("--stdin-filename checks standard input: give no other paths")
        if args.fix or args.diff or args.show_fixes:
            raise _UsageError(
                "--fix, --diff and --show-fixes work on files; they cannot work on standard input"
            )
        paths = [args.stdin_filename or "-"]
        given = {paths[0]: _stdin()}
    if args.show_fixes and args.format not in LISTING:
        raise _UsageError("--show-fixes lists fixes in the text output: use --format text or concise")
    if args.statistics and args.format not in (*LISTING, "json"):
        raise _UsageError("--statistics prints a table: use --format text, concise or json")
    missing = [p for p in paths if not os.path.exists(p) and not (given and p in given)]
    if missing:
        _say(err, f"no such file or folder: {', '.join(missing)}")
        return EXIT_USAGE
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
    if args.diff:
        return _diff(report, args.unsafe_fixes, out, err)
    shown = None
    if args.fix:
        report, shown = _fix(report, check, args.unsafe_fixes, err)
    elif args.show_fixes:
        shown = _would_fix(report, args.unsafe_fixes, err)
    if not report.files and (args.format not in LISTING or args.statistics):  # the listings say so
        _say(err, f"no dependency files found in {', '.join(paths)}; nothing to check")
    if hidden:
        _say(err, f"--new-from-rev {rev}: left out {hidden} finding(s) {rev} already had")
    fixable = given is None  # --fix cannot take standard input
    if args.statistics:
        text = _statistics(report, args.format, args.unsafe_fixes, fixable)
    else:
        color = not args.output_file and _use_color(args.color, out)
        text = renderer(args.format)(
            report, color=color, fixable=fixable, fixes=shown if args.show_fixes else None
        )
    _write(text, args.output_file, out)
    if args.exit_zero:
        return EXIT_OK
    strict = args.strict if args.strict is not None else cfg.strict
    worst = {f.severity.value for f in report.findings}
    if "error" in worst or (strict and "warning" in worst):
        return EXIT_FINDINGS
    return EXIT_OK


def _statistics(report: Report, fmt: str, unsafe: bool, fixable: bool) -> str:
    from fa_lint.report import statistics
    from fa_lint.report.text import summary

    stats = statistics.count(report.findings, unsafe=unsafe, fixable=fixable)
    if fmt == "json":
        return statistics.as_json(stats)
    return statistics.text(stats) + summary(report, fixable=fixable) + "\n"


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    from fa_lint._gc import fewer_collections  # imports, checks and output: the whole run

    with fewer_collections():
        return _main(argv, out, err)


def entry() -> int:
    """The ``fa-lint`` command: ``main()`` in a process that ends with it.

    At exit Python looks for reference cycles among every object still alive (10 ms and more after
    a large file); none of them outlives the process, so they are frozen out of that search. They are
    frozen before the collector's pace is restored: the young generation then holds everything the
    run made, and the first allocation after restoring would trigger a pass over all of it (3 ms on
    a small run, for objects that die with the process anyway).
    """
    from fa_lint._gc import fewer_collections

    with fewer_collections():
        code = _main(None, None, None)
        gc.freeze()
    return code


def _main(argv: Sequence[str] | None, out: TextIO | None, err: TextIO | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out, err = out or sys.stdout, err or sys.stderr
    try:
        if argv[:1] == ["verify"]:  # inside the try: Ctrl-C and a closed pipe end it cleanly too
            from fa_lint.verify.cli import main as verify_main

            return verify_main(argv[1:], out=out, err=err)
        if argv[:1] == ["bot-config"]:
            return bot_config(bot_parser().parse_args(argv[1:]), out)
        if argv[:1] == ["releases"]:
            from fa_lint.releases import main as releases_main

            return releases_main(argv[1:], out)
        if argv[:1] == ["rule"]:
            return rule(rule_parser().parse_args(argv[1:]), out)
        args = parser().parse_args(argv)
        if args.version:
            out.write(_version() + "\n")
            return EXIT_OK
        if args.list_rules:
            _list_rules(out)
            return EXIT_OK
        return lint(args, out, err)
    except _UsageError as exc:
        _say(err, f"error: {exc}")
        return EXIT_USAGE
    except config.ConfigError as exc:
        _say(err, f"configuration error: {exc}")
        return EXIT_USAGE
    except SystemExit as exc:  # argparse's --help
        return int(exc.code or 0)
    except BrokenPipeError:  # `fa-lint ... | head`: the reader is gone, and so is anyone to tell
        if out is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.write("fa-lint: interrupted\n")
        return EXIT_USAGE
    except Exception as exc:  # the contract is exit 2 and a message, never a traceback
        _say(err, f"internal error: {type(exc).__name__}: {exc}")
        err.write("Please report it with the file that caused it.\n")
        return EXIT_USAGE
