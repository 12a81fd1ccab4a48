"""``fa-lint [PATHS...]`` and its subcommands (``verify``, ``rule``, ``releases``, ``wheel``,
``bot-config``, ``completion``, ``server``):
the entry point, which dispatches, and turns every error into a message and an exit code.

Exit codes: 0 no error findings, 1 at least one error finding (warnings too with --strict),
2 usage, configuration or internal error.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from fa_lint.cli.args import (
    EXIT_OK,
    EXIT_USAGE,
    FORMATS,
    UsageError,
    bot_parser,
    parser,
    paths_named,
    rule_parser,
    say,
)
from fa_lint.cli.lint import lint
from fa_lint.cli.subcommands import bot_config, list_rules, rule, version
from fa_lint.settings import config

__all__ = ["FORMATS", "entry", "main"]


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


def _verify(argv: list[str], out: TextIO, err: TextIO) -> int:
    from fa_lint.verify.cli import main as verify_main

    return verify_main(argv, out=out, err=err)


def _releases(argv: list[str], out: TextIO, err: TextIO) -> int:
    from fa_lint.cli.releases import main as releases_main

    return releases_main(argv, out)


def _wheel(argv: list[str], out: TextIO, err: TextIO) -> int:
    from fa_lint.cli.wheel import main as wheel_main

    return wheel_main(argv, out)


def _server(argv: list[str], out: TextIO, err: TextIO) -> int:
    from fa_lint.server import main as server_main

    return server_main(argv, err)


def _completion(argv: list[str], out: TextIO, err: TextIO) -> int:
    from fa_lint.cli.completion import completion_parser, script

    out.write(script(completion_parser().parse_args(argv).shell))
    return EXIT_OK


# Each subcommand, by its word; what follows the word is its own argv. (Plain ``fa-lint`` lints.)
_SUBCOMMANDS: dict[str, Callable[[list[str], TextIO, TextIO], int]] = {
    "verify": _verify,
    "bot-config": lambda argv, out, err: bot_config(bot_parser().parse_args(argv), out),
    "releases": _releases,
    "wheel": _wheel,
    "rule": lambda argv, out, err: rule(rule_parser().parse_args(argv), out),
    "completion": _completion,
    "server": _server,
}


def _lint(argv: list[str], out: TextIO, err: TextIO) -> int:
    lint_parser = parser()
    # only in a hook pre-commit runs (it sets PRE_COMMIT=1, pre_commit/commands/run.py): elsewhere a
    # committed file named "--format" must not turn a CI job's own "--format sarif" into two paths
    hooked = os.environ.get("PRE_COMMIT") == "1"
    args = lint_parser.parse_args(paths_named(argv, lint_parser) if hooked else argv)
    if args.version:
        out.write(version() + "\n")
        return EXIT_OK
    if args.list_rules:
        list_rules(out)
        return EXIT_OK
    return lint(args, out, err)


def _main(argv: Sequence[str] | None, out: TextIO | None, err: TextIO | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out, err = out or sys.stdout, err or sys.stderr
    try:
        sub = _SUBCOMMANDS.get(argv[0]) if argv else None
        if sub is not None:  # inside the try: Ctrl-C and a closed pipe end it cleanly too
            return sub(argv[1:], out, err)
        return _lint(argv, out, err)
    except UsageError as exc:
        say(err, f"error: {exc}")
        return EXIT_USAGE
    except config.ConfigError as exc:
        say(err, f"configuration error: {exc}")
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
        # fa-lint's bug, said as ruff says a crash ("Ruff crashed. If you could open an issue at: ...
        # quoting the executed command, along with the relevant file contents", crates/ruff/src/lib.rs)
        say(err, f"internal error: {type(exc).__name__}: {exc}")
        err.write(
            "This is a bug in fa-lint, not in the files it checked. Please report it at "
            "https://github.com/fa-lint/fa-lint/issues/new, quoting the command, what `fa-lint --version` "
            "says and the files it checked.\n"
        )
        return EXIT_USAGE
