"""FAL007: a version specifier the shell reads as a redirect."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import FLASH_ATTN, Finding, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._fixes import quote_word
from fa_lint.rules._text import fit

UNQUOTED_SPECIFIER = Rule(
    "FAL007",
    "unquoted-specifier-redirect",
    Severity.WARNING,
    "An unquoted '>' or '<' in a shell pip install is a redirect, so the version constraint is lost.",
)
RULES = (UNQUOTED_SPECIFIER,)
PACKAGES = frozenset({FLASH_ATTN})  # the requirements this rule reads


def check(ctx: Context) -> Iterator[Finding]:
    for req in ctx.requirements:
        if req.name != FLASH_ATTN or not req.redirected:
            continue
        cut = req.redirected
        meant = f"{req.raw}{cut}"
        if cut.startswith(">"):
            effect = (
                f"the shell runs 'pip install {req.raw}' with its output sent to a file named "
                f"'{cut.lstrip('>')}', so pip installs the newest flash-attn and never sees '{cut}'"
            )
        else:
            effect = (
                f"the shell reads standard input from a file named '{cut.lstrip('<')}', so the command "
                f"fails, or installs an unconstrained '{req.raw}'"
            )
        headline = fit(
            'unquoted `{meant}`: the shell takes `{cut}` as a redirect; quote it: "{meant}"',
            meant=meant,
            cut=cut,
        )
        fixed = quote_word(req)
        yield UNQUOTED_SPECIFIER.finding(
            req.location,
            headline,
            package=FLASH_ATTN,
            requirement=meant,
            fix=fixed,
            notes=(effect,),
            help=fixed.title if fixed else f'quote it: "{meant}"',
        )
