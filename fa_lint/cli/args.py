"""The command line's parsers, and what every subcommand shares: usage errors, writing output."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from typing import Any, TextIO

from packaging.version import Version

from fa_lint.settings import config

FORMATS = (
    "text",
    "concise",
    "json",
    "sarif",
    "github",
    "gitlab",
    "json-lines",
    "junit",
    "rdjson",
    "pylint",
    "azure",
    "grouped",
)
ALIASES = {"full": "text"}  # ruff's name for the format fa-lint calls text
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
# the formats --statistics and --show-fixes print in (json: --statistics too)
LISTING = ("text", "concise", "grouped")


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


# The subcommands, each with the line `fa-lint --help` shows for it (argparse's subparsers would take a
# folder named like a subcommand for one, and the lint options would have to follow a word).
COMMANDS = {
    "verify": "prove the installed flash-attn works, on the GPU host (fa-lint verify --help)",
    "rule": "explain a rule: what it finds, why, how to fix and suppress it",
    "releases": "every flash-attn release: paged KV, and prebuilt wheels for a torch",
    "bot-config": "print a Renovate preset or a dependabot.yml that keeps the floor",
    "completion": "print a shell completion script: bash, zsh or fish",
}


class _Parser(argparse.ArgumentParser):
    """argparse, without its abbreviations (``--form json`` is no ``--format``: a later option of that
    prefix would change what an old command line means), and with the subcommands in ``--help``."""

    def __init__(self, commands: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(formatter_class=_Help, allow_abbrev=False, **kwargs)
        self.commands = commands or {}

    def format_help(self) -> str:
        text = super().format_help()
        if not self.commands:
            return text
        width = max(map(len, self.commands)) + 2
        listed = "".join(f"  {name:<{width}}{what}\n" for name, what in self.commands.items())
        parts = text.split("\n\n")
        at = 2 if self.description else 1  # after the usage and the description
        return "\n\n".join([*parts[:at], f"commands:\n{listed.rstrip()}", *parts[at:]])

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        raise UsageError(message)


class UsageError(Exception):
    pass


def paths_named(argv: list[str], p: argparse.ArgumentParser) -> list[str]:
    """``argv`` with every argument that names an existing file or folder moved after ``--``: a path,
    never an option. pre-commit appends the changed files' names to the hook's command line with no
    ``--`` before them (its ``args`` come first, so the hook cannot end the options itself), and
    argparse reads a committed ``-o../x.sh`` as ``-o ../x.sh`` (the report written outside the
    checkout, the file never checked), ``--exclude=*/x.sh`` as an option, and so on for every option
    with its value glued on. A name pre-commit passes always exists; an option a person types never
    does, unless the folder holds a file of that very name, which git resolves the same way (a
    revision or a path: the file is the path). The value of an option that takes one stays its value.
    Applied only under pre-commit (``PRE_COMMIT=1``): on any other command line the options are the
    user's, and a file the checkout commits must not change how they are read.
    """
    takes_value = {
        option
        for action in p._actions  # (argparse has no public list of its options)
        if action.nargs != 0
        for option in action.option_strings
    }
    options: list[str] = []
    paths: list[str] = []
    moved = False
    value_next = False
    for i, arg in enumerate(argv):
        if arg == "--":
            paths += argv[i + 1 :]
            break
        if value_next:
            value_next = False
            options.append(arg)
        elif arg.startswith("-") and arg != "-" and os.path.lexists(arg):
            paths.append(arg)
            moved = True
        elif arg.startswith("-") and arg != "-":
            value_next = arg in takes_value
            options.append(arg)
        else:
            paths.append(arg)
    # argparse takes the paths in one run: all of them after "--", in the order given
    return [*options, "--", *paths] if moved else argv


def codes(values: list[str] | None) -> tuple[str, ...]:
    return tuple(c.strip().upper() for v in values or () for c in v.split(",") if c.strip())


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        commands=COMMANDS,
        prog="fa-lint",
        usage="fa-lint [options] [PATH ...]\n       fa-lint {" + ",".join(COMMANDS) + "} ...",
        description="Find flash-attn pins that cannot run paged-KV attention (flash_attn_with_kvcache "
        "block_table), in requirements, pyproject, lock, conda, Docker and shell files.",
        epilog="Each file's configuration is the nearest .fa-lint.toml, fa-lint.toml or pyproject.toml with "
        "[tool.fa-lint], up to its repository's top; options given here win over it. Exit codes: 0 no "
        "error findings, 1 error findings (warnings too with --strict), 2 usage or internal error (FAL902).",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to check (default: .)")
    p.add_argument(
        "--format",
        "--output-format",  # ruff's name
        dest="format",
        choices=(*FORMATS, *ALIASES),
        default="text",
        metavar="FORMAT",
        help=f"output format: {', '.join(FORMATS)} (default: text, a finding with its source, notes and "
        "fix, also named full as in ruff; concise: a line each)",
    )
    p.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--select", action="append", metavar="CODES", help="only these rule codes or prefixes")
    p.add_argument(
        "--extend-select",
        action="append",
        metavar="CODES",
        help="these rule codes or prefixes too, beside --select or the configuration's select",
    )
    p.add_argument("--ignore", action="append", metavar="CODES", help="skip these rule codes or prefixes")
    p.add_argument(
        "--per-file-ignores",
        action="append",
        metavar="GLOB:CODES",
        help="skip these codes in files matching GLOB (replaces the configuration's per-file-ignores)",
    )
    p.add_argument(
        "--extend-per-file-ignores",
        action="append",
        metavar="GLOB:CODES",
        help="as --per-file-ignores, beside the configuration's",
    )
    p.add_argument(
        "--min-version",
        metavar="VERSION",
        help="lowest acceptable flash-attn (default: the first release with block_table)",
    )
    p.add_argument(
        "--exclude", action="append", metavar="GLOB", help="skip matching paths when walking folders"
    )
    p.add_argument(
        "--extend-exclude",
        action="append",
        metavar="GLOB",
        help="skip these too, beside --exclude or the configuration's exclude",
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
        "--fix",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="apply safe fixes in place (only the fixed spans change); --no-fix: do not (the last wins)",
    )
    p.add_argument(
        "--fix-only",
        action="store_true",
        help="apply the fixes and report nothing else: exit 0 whatever is left (ruff's)",
    )
    p.add_argument(
        "--exit-non-zero-on-fix",
        action="store_true",
        help="with --fix or --fix-only, exit 1 when a file was changed, even with nothing left to report",
    )
    p.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix, --diff or --show-fixes, also move exact pins to another release",
    )
    p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change no file")
    p.add_argument(
        "--add-noqa",
        action="store_true",
        help="add a '# noqa: CODES' comment to each line with a finding, where the file reads the same after",
    )
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
    p.add_argument("-e", "--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour text output (auto: on a terminal, or where FORCE_COLOR or CLICOLOR_FORCE is set; "
        "never where NO_COLOR is, nor on a TERM=dumb terminal)",
    )
    quiet = p.add_mutually_exclusive_group()
    quiet.add_argument(
        "-q", "--quiet", action="store_true", help="print the findings, but no summary or notice (ruff's)"
    )
    quiet.add_argument(
        "-s", "--silent", action="store_true", help="print nothing; the exit code still tells (ruff's)"
    )
    p.add_argument(
        "--config",
        action="append",
        metavar="FILE|KEY=VALUE",
        help="use this configuration file for every file (a pyproject.toml's [tool.fa-lint], or a "
        "fa-lint.toml); or, as a TOML 'key = value', override that key of every file's configuration "
        "(repeatable)",
    )
    p.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="say on stderr which configuration governs each file checked",
    )
    p.add_argument(
        "--show-files", action="store_true", help="print the files that would be checked, and exit"
    )
    p.add_argument(
        "--show-settings",
        action="store_true",
        help="print each configuration the files checked use, resolved with the command line, and exit",
    )
    p.add_argument(
        "--list-rules", action="store_true", help="print every rule and exit ('fa-lint rule' explains one)"
    )
    p.add_argument("--version", action="store_true", help="print the version and knowledge-base date")
    return p


def bot_parser() -> argparse.ArgumentParser:
    from fa_lint.cli.bots import BOTS, COOLDOWN, ECOSYSTEMS, VERSIONING

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
    p.add_argument(
        "--cooldown",
        type=int,
        default=COOLDOWN,
        metavar="DAYS",
        help=f"dependabot: days a new release waits before it is proposed (default: {COOLDOWN}; 0: none)",
    )
    p.add_argument("-o", "--output-file", metavar="FILE", help="write the config to FILE instead of stdout")
    p.add_argument("--config", metavar="FILE", help="read the configuration from this file")
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
    p.add_argument(
        "--output-format",
        "--format",
        dest="output_format",
        choices=("text", "json"),
        default="text",
        help="text: the rule's page (default); json: its code, name, severity, summary, URL and page",
    )
    return p


def known(selectors: tuple[str, ...], option: str) -> tuple[str, ...]:
    """``selectors``, when each selects some rule; a usage error naming the others (ruff's)."""
    from fa_lint.rules import unknown

    bad = unknown(selectors)
    if bad:
        raise UsageError(f"{option}: {config.unknown_selectors(bad)}")
    return selectors


def config_file(args: argparse.Namespace) -> str | None:
    """``--config``'s file: the one value that cannot be a ``key = value`` override.

    Read as typed, never from the checked tree: a value that is a TOML override of fa-lint's keys is
    one, whatever file of that name the checkout holds. ruff takes an existing file first
    (crates/ruff/src/args.rs ``ConfigArgumentParser``), so there a pull request that commits a file
    named like a CI job's ``--config 'ignore = [...]'`` replaces the override with its own file; here
    that file is not read (``resolver`` says so). A value ending in ``.toml`` is a file."""
    given = args.config
    if given is None or isinstance(given, str):  # bot-config's --config is a file alone
        return given
    files = [v for v in given if not _override(v)]
    for v in files:
        if not os.path.exists(v):
            if "=" in v:  # what is wrong with it as TOML (a ConfigError, as for an override)
                config.overrides([v])
            raise UsageError(
                f"--config {v}: no such file; a TOML 'key = value' overrides one key instead "
                """(e.g. --config 'ignore = ["FAL002"]')"""
            )
    if len(files) > 1:
        raise UsageError(f"--config: one configuration file, not {len(files)} (the others can be KEY=VALUE)")
    return files[0] if files else None


@functools.lru_cache(maxsize=64)
def _override(value: str) -> bool:
    """Whether a ``--config`` value is a TOML ``key = value`` (what it sets, and its codes, are
    checked with the override: an unknown key is an error there, not a file to look for)."""
    if "=" not in value or value.lower().endswith(".toml"):
        return False
    from fa_lint.model import ParseProblem
    from fa_lint.syntax import tomldoc

    doc = tomldoc.load("--config", value)
    return not isinstance(doc, ParseProblem) and bool(doc.data)


def _shadowed(args: argparse.Namespace) -> list[str]:
    """The overrides a file of the same name would have been read for, as ruff reads them."""
    given = args.config
    if given is None or isinstance(given, str):
        return []
    return [v for v in given if _override(v) and os.path.lexists(v)]


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The configuration keys ``--config 'key = value'`` sets, over every file's configuration."""
    given = args.config
    if given is None or isinstance(given, str):
        return {}
    from fa_lint.rules import unknown

    return config.overrides([v for v in given if _override(v)], unknown)


def resolver(args: argparse.Namespace, err: TextIO | None = None) -> config.Resolver | None:
    """Where each file's configuration comes from: None when one file (``--config``) or none
    (``--isolated``) governs them all. On ``err``, each override a file of its name is not read for."""
    for v in _shadowed(args):
        say(
            err or sys.stderr,
            f"--config {v}: read as the override it is typed as; the file of that name is not read "
            f"(to read it, give its path: --config ./{v})",
        )
    if args.isolated or config_file(args):
        return None
    from fa_lint.rules import unknown

    return config.Resolver(unknown, overrides=overrides(args))


def configuration(
    args: argparse.Namespace, paths: list[str] | None = None, found: config.Resolver | None = None
) -> config.Config:
    """The run's configuration: ``--config``'s, or the nearest to the paths checked (their common
    folder), which sets what applies to the whole run (``new-from-rev``, ``respect-gitignore``);
    with the ``--config 'key = value'`` overrides over it."""
    from fa_lint.rules import unknown

    if args.isolated:
        return config.Config()._replace(**overrides(args))
    file = config_file(args)
    if file:
        return config.load(file, unknown)._replace(**overrides(args))
    found = found or config.Resolver(unknown, overrides=overrides(args))
    where = [os.path.abspath(p) for p in paths or ["."] if p != "-"] or [os.getcwd()]
    return found.nearest(os.path.commonpath(where))


def min_version(args: argparse.Namespace, cfg: config.Config) -> Version | None:
    if args.min_version:
        return config.parse_version(args.min_version, "--min-version")
    return cfg.min_version


def write(text: str, path: str | None, out: TextIO) -> None:
    if not path:
        out.write(text)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def say(err: TextIO, message: str) -> None:
    """One line on stderr; its paths, fix titles and reasons can come from checked files."""
    from fa_lint.report._common import printable

    err.write(f"fa-lint: {printable(message)}\n")
