"""``fa-lint completion bash|zsh|fish``: a completion script, made from the parsers themselves.

Each command's options, the values of those with choices (``--format``), the rule codes, and files for
the options that take a path: generated from argparse's own records, so a new option or rule completes
without anyone editing a script. Written by hand because argcomplete and shtab would be a dependency
(and argcomplete a Python start per Tab) for the few lines each shell needs.

bash: ``eval "$(fa-lint completion bash)"`` in ~/.bashrc, or the output saved as
``~/.local/share/bash-completion/completions/fa-lint``. zsh: the same script through ``bashcompinit``
(``eval "$(fa-lint completion zsh)"``). fish:
``fa-lint completion fish > ~/.config/fish/completions/fa-lint.fish``.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterator

from fa_lint._records import NamedTuple

SHELLS = ("bash", "zsh", "fish")
_PATHS = ("FILE", "PATH", "NAME", "PYPROJECT", "DIR")  # metavars whose values are paths


class _Option(NamedTuple):
    names: tuple[str, ...]
    values: tuple[str, ...] | None  # None: takes no value; (): a free value; else its choices
    files: bool  # the value is a path
    help: str


class _Command(NamedTuple):
    name: str  # "" for fa-lint itself
    options: tuple[_Option, ...]
    words: tuple[str, ...]  # what a positional argument may be, beside paths
    files: bool  # a positional argument may be a path


def _commands() -> list[_Command]:
    from fa_lint.cli import args
    from fa_lint.cli.releases import parser as releases
    from fa_lint.cli.wheel import parser as wheel
    from fa_lint.rules import RULES
    from fa_lint.server import parser as server
    from fa_lint.verify.cli import parser as verify

    parsers = {
        "": args.parser(),
        "verify": verify(),
        "rule": args.rule_parser(),
        "releases": releases(),
        "wheel": wheel(),
        "bot-config": args.bot_parser(),
        "completion": completion_parser(),
        "server": server(),
    }
    out = []
    for name, p in parsers.items():
        options: list[_Option] = []
        words: list[str] = []
        files = False
        for action in p._actions:  # argparse keeps no public list of them
            if action.option_strings:
                takes = action.nargs != 0
                metavar = str(action.metavar or "")
                choices = tuple(map(str, action.choices)) if action.choices else ()
                options.append(
                    _Option(
                        tuple(action.option_strings),
                        choices if takes else None,
                        # "FILE|KEY=VALUE" (--config) completes as a file too
                        takes and not choices and metavar.upper().split("|")[0] in _PATHS,
                        (action.help or "").split(" (")[0].replace("%%", "%"),
                    )
                )
            elif action.choices:
                words += map(str, action.choices)
            elif name == "rule":
                words += [*RULES, *(r.name for r in RULES.values())]
            else:
                files = True
        out.append(_Command(name, tuple(options), tuple(words), files))
    out[0] = out[0]._replace(words=tuple(n for n in parsers if n))
    return out


def completion_parser() -> argparse.ArgumentParser:
    from fa_lint.cli.args import _Parser

    p = _Parser(prog="fa-lint completion", description="Print a shell completion script for fa-lint.")
    p.add_argument("shell", choices=SHELLS)
    return p


def script(shell: str) -> str:
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell]()


def _words(values: Iterator[str] | tuple[str, ...]) -> str:
    return shlex.quote(" ".join(values))


def _bash() -> str:
    commands = _commands()
    cases = []
    for c in commands:
        lines = [f'    "{c.name}")', '        case "$prev" in']
        for o in c.options:
            if o.values is None:
                continue
            pattern = "|".join(o.names)
            if o.files:
                lines.append(f'            {pattern}) COMPREPLY=($(compgen -f -- "$cur")); return ;;')
            elif o.values:
                offer = f'COMPREPLY=($(compgen -W {_words(o.values)} -- "$cur"))'
                lines.append(f"            {pattern}) {offer}; return ;;")
            else:  # a free value: nothing to offer
                lines.append(f"            {pattern}) return ;;")
        opts = _words(n for o in c.options for n in o.names)
        lines += [
            "        esac",
            f'        if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W {opts} -- "$cur")); return; fi',
        ]
        if c.words:  # the subcommands only as the first word; a command's own words anywhere
            only = "[[ $COMP_CWORD -eq 1 ]] && " if not c.name else ""
            lines.append(f'        {only}COMPREPLY+=($(compgen -W {_words(c.words)} -- "$cur"))')
        if c.files:
            lines.append('        COMPREPLY+=($(compgen -f -- "$cur"))')
        cases.append("\n".join([*lines, "        ;;"]))
    names = "|".join(c.name for c in commands if c.name)
    return (
        "# fa-lint completion for bash (generated by `fa-lint completion bash`)\n"
        "_fa_lint() {\n"
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd=""\n'
        "    COMPREPLY=()\n"
        "    if [[ $COMP_CWORD -gt 1 ]]; then\n"
        f'        case "${{COMP_WORDS[1]}}" in {names}) cmd="${{COMP_WORDS[1]}}" ;; esac\n'
        "    fi\n"
        '    case "$cmd" in\n' + "\n".join(cases) + "\n    esac\n"
        "}\n"
        "complete -o filenames -o bashdefault -F _fa_lint fa-lint\n"
    )


def _zsh() -> str:
    return (
        "#compdef fa-lint\n"
        "# fa-lint completion for zsh (generated by `fa-lint completion zsh`): bash's, through bashcompinit\n"
        "autoload -U +X bashcompinit && bashcompinit\n" + _bash().split("\n", 1)[1]
    )


def _fish() -> str:
    commands = _commands()
    names = " ".join(c.name for c in commands if c.name)
    lines = [
        "# fa-lint completion for fish (generated by `fa-lint completion fish`)",
        "complete -c fa-lint -f",
    ]
    for c in commands:
        if c.name:
            cond = f"__fish_seen_subcommand_from {c.name}"
            lines.append(f"complete -c fa-lint -n '__fish_use_subcommand' -a {c.name}")
        else:
            cond = f"not __fish_seen_subcommand_from {names}"
        for o in c.options:
            flags = " ".join(f"-l {n[2:]}" if n.startswith("--") else f"-s {n[1:]}" for n in o.names)
            value = ""
            if o.values:
                value = f" -x -a {shlex.quote(' '.join(o.values))}"
            elif o.files:
                value = " -r -F"
            elif o.values == ():
                value = " -x"
            described = f" -d {shlex.quote(o.help)}" if o.help else ""
            lines.append(f"complete -c fa-lint -n '{cond}' {flags}{value}{described}")
        if c.words and c.name:
            lines.append(f"complete -c fa-lint -n '{cond}' -a {shlex.quote(' '.join(c.words))}")
        if c.files:
            lines.append(f"complete -c fa-lint -n '{cond}' -F")
    return "\n".join(lines) + "\n"
