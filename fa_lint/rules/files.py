"""FAL900, FAL010: files fa-lint could not read, and includes it did not follow."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Finding, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._text import HEADLINE, clip, fit

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


def check(ctx: Context) -> Iterator[Finding]:
    for problem in ctx.problems:
        whole = problem.message
        headline = clip(whole, HEADLINE)
        yield UNREADABLE.finding(
            problem.location,
            headline,
            notes=(whole,) if headline != whole else (),
            help="fix the file where the headline says, or leave it out (`--exclude`) if it pins nothing",
        )
    for inc in ctx.unfollowed:
        url = "://" in inc.target
        why = "fa-lint never fetches URLs" if url else "it is outside the checked tree"
        yield INCLUDE_NOT_FOLLOWED.finding(
            inc.location,
            fit(f"included `{{target}}` was not checked ({why}); check it separately", target=inc.target),
            notes=("the requirements in that file went unchecked",),
            help="check the included file on its own" + (", or vendor it into the repository" if url else ""),
        )
