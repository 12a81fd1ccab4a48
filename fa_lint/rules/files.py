"""FAL900, FAL010: files fa-lint could not read, and includes it did not follow."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Finding, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.sources._text import excerpt

UNREADABLE = Rule(
    "FAL900",
    "unreadable-file",
    Severity.ERROR,
    "A file fa-lint could not read or parse; its requirements went unchecked.",
)
INCLUDE_NOT_FOLLOWED = Rule(
    "FAL010",
    "include-not-followed",
    Severity.INFO,
    "An included requirements file that fa-lint did not read (a URL, or a path outside the repository).",
)
RULES = (UNREADABLE, INCLUDE_NOT_FOLLOWED)
PACKAGES: frozenset[str] = frozenset()  # no requirement: parse problems and includes


def check(ctx: Context) -> Iterator[Finding]:
    for problem in ctx.problems:
        yield UNREADABLE.finding(problem.location, problem.message)
    for inc, why in ctx.unfollowed:
        msg = f"included file {excerpt(inc.target)} was not checked: {why}; check it separately"
        yield INCLUDE_NOT_FOLLOWED.finding(inc.location, msg)
