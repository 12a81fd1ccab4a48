"""``fa-lint [PATHS...]`` and ``fa-lint verify``: argument parsing, config merge, exit codes.

Exit codes: 0 no error findings, 1 at least one error finding (warnings too with --strict),
2 usage, configuration or internal error.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from packaging.version import Version

from fa_lint import __version__, config

if TYPE_CHECKING:
    from fa_lint.engine import Report
    from fa_lint.fix import Outcome

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FORMATS = ("text", "json", "sarif", "github", "gitlab")


class _Parser(argparse.ArgumentParser):
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
        epilog="Run 'fa-lint verify --help' for the runtime check on a GPU host, and "
        "'fa-lint bot-config --help' for Renovate and Dependabot configs.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to check (default: .)")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
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
        "--fix", action="store_true", help="apply safe fixes in place (only the fixed spans change)"
    )
    p.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix or --diff, also move exact pins to another release",
    )
    p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change no file")
    p.add_argument("--strict", action="store_true", default=None, help="exit 1 on warnings too")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.add_argument("--config", metavar="PYPROJECT", help="read [tool.fa-lint] from this file")
    p.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    p.add_argument("--list-rules", action="store_true", help="print every rule and exit")
    p.add_argument("--version", action="store_true", help="print the version and knowledge-base date")
    return p


def bot_parser() -> argparse.ArgumentParser:
    from fa_lint.bots import BOTS, ECOSYSTEMS

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
    p.add_argument("--directory", default="/", help="dependabot: where the manifests are (default: /)")
    p.add_argument("-o", "--output-file", metavar="FILE", help="write the config to FILE instead of stdout")
    p.add_argument("--config", metavar="PYPROJECT", help="read [tool.fa-lint] from this file")
    p.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    return p


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
    return dataclasses.replace(found, problems=skipped)


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
        text = bots.dependabot(policy, base, ecosystems, args.directory)
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


def _fix(report: Report, recheck: Callable[[], Report], unsafe: bool, err: TextIO) -> Report:
    from fa_lint import fix
    from fa_lint.report.text import plural

    fixed: dict[str, int] = {}
    hints: dict[str, None] = {}
    for _ in range(MAX_FIX_PASSES):
        outcomes = fix.run(report.findings, unsafe=unsafe)
        hints.update(dict.fromkeys(fix.relock(outcomes)))
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
    return report


def _stdin() -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    return stream.read() if stream is not None else sys.stdin.read().encode("utf-8")


def lint(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from fa_lint import engine
    from fa_lint.report import FORMATS as RENDER

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
    if args.stdin_filename or paths == ["-"]:
        if args.paths not in ([], ["-"]):
            raise _UsageError("--stdin-filename checks standard input: give no other paths")
        if args.fix or args.diff:
            raise _UsageError("--fix and --diff rewrite files; they cannot work on standard input")
        paths = [args.stdin_filename or "-"]
        given = {paths[0]: _stdin()}
    missing = [p for p in paths if not os.path.exists(p) and not (given and p in given)]
    if missing:
        _say(err, f"no such file or folder: {', '.join(missing)}")
        return EXIT_USAGE
    report = engine.check(paths, settings, given)
    if args.diff:
        return _diff(report, args.unsafe_fixes, out, err)
    if args.fix:
        report = _fix(report, lambda: engine.check(paths, settings), args.unsafe_fixes, err)
    if not report.files:
        _say(err, f"no dependency files found in {', '.join(paths)}; nothing to check")
    color = not args.output_file and _use_color(args.color, out)
    text = RENDER[args.format](report, color=color, fixable=given is None)  # --fix cannot take stdin
    _write(text, args.output_file, out)
    if args.exit_zero:
        return EXIT_OK
    strict = args.strict if args.strict is not None else cfg.strict
    worst = {f.severity.value for f in report.findings}
    if "error" in worst or (strict and "warning" in worst):
        return EXIT_FINDINGS
    return EXIT_OK


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out, err = out or sys.stdout, err or sys.stderr
    try:
        if argv[:1] == ["verify"]:  # inside the try: Ctrl-C and a closed pipe end it cleanly too
            from fa_lint.verify.cli import main as verify_main

            return verify_main(argv[1:], out=out, err=err)
        if argv[:1] == ["bot-config"]:
            return bot_config(bot_parser().parse_args(argv[1:]), out)
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
