"""The subcommands other than linting: ``fa-lint rule``, ``bot-config``, ``--version``, ``--list-rules``."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, TextIO

from fa_lint import __version__
from fa_lint.cli.args import EXIT_OK, UsageError, write

if TYPE_CHECKING:
    from fa_lint.rules import Rule


def rule(args: argparse.Namespace, out: TextIO) -> int:
    from fa_lint.rules import RULES, page
    from fa_lint.settings.selectors import suggestion

    if args.all == bool(args.code):
        raise UsageError("give one rule code, or --all")
    if args.all:
        codes = list(RULES)
    else:
        found = [r.code for r in RULES.values() if args.code.upper() == r.code or args.code.lower() == r.name]
        if not found:
            hint = suggestion(args.code)
            raise UsageError(
                f"unknown rule {args.code!r} ({f'{hint} ' if hint else ''}'fa-lint --list-rules' lists them)"
            )
        codes = found
    if args.output_format == "json":  # ruff's `rule --output-format json`: an object, a list with --all
        shown = [_rule_json(RULES[code], page(code)) for code in codes]
        out.write(json.dumps(shown if args.all else shown[0], indent=2) + "\n")
        return EXIT_OK
    out.write("\n".join(page(code) for code in codes))
    return EXIT_OK


def _rule_json(r: Rule, text: str) -> dict[str, object]:
    return {
        "code": r.code,
        "name": r.name,
        "severity": r.severity.value,
        "severities": [s.value for s in r.severities],
        "summary": r.summary,
        "url": r.url,
        "explanation": text,
    }


def version() -> str:
    from fa_lint import kb

    base = kb.load()
    return (
        f"fa-lint {__version__} (knowledge base {base.date}: {len(base.installable)} flash-attn "
        f"releases, newest {base.newest}; paged KV since {base.first_with(kb.PAGED_KV)})"
    )


def list_rules(out: TextIO) -> None:
    from fa_lint.rules import RULES

    for rule in RULES.values():
        out.write(f"{rule.code}  {rule.name:<28} {rule.severity.value:<8} {rule.summary}\n")


def bot_config(args: argparse.Namespace, out: TextIO) -> int:
    from fa_lint import kb
    from fa_lint.cli import bots
    from fa_lint.cli.partition import floor as given_floor
    from fa_lint.kb.assess import Policy
    from fa_lint.settings.overrides import Overrides
    from fa_lint.settings.scopes import Workspace

    base = kb.load()
    config_file = None if args.isolated else args.config
    lowest = given_floor(args.min_version)
    overrides = Overrides(config_file=config_file, isolated=args.isolated, min_version=lowest)
    floor = Workspace(overrides).settings.min_version  # the current folder's configuration under them
    policy = Policy(floor) if floor else Policy.default(base)
    if args.bot == "renovate":
        text = bots.renovate(policy, base)
    else:
        ecosystems = tuple(dict.fromkeys(args.ecosystem or ["pip"]))
        directories = tuple(dict.fromkeys(args.directory or ["/"]))
        if not 0 <= args.cooldown <= bots.MAX_COOLDOWN:
            raise UsageError(f"--cooldown takes 0 to {bots.MAX_COOLDOWN} days (Dependabot's range)")
        text = bots.dependabot(policy, base, ecosystems, directories, args.versioning_strategy, args.cooldown)
    write(text, args.output_file, out)
    return EXIT_OK
