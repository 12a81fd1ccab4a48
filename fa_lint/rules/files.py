"""FAL900, FAL901, FAL010: what fa-lint could not read, and includes it did not follow."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Finding, ParseProblem, Severity, mentions_flash_attn
from fa_lint.rules._base import Context, Rule

UNREADABLE = Rule(
    "FAL900",
    "unreadable-file",
    Severity.ERROR,
    "A file fa-lint could not read or parse; its requirements went unchecked.",
)
SKIPPED_ENTRY = Rule(
    "FAL901",
    "skipped-entry",
    Severity.WARNING,
    "One dependency entry fa-lint could not read, whose text does not name flash-attn; it was skipped.",
)
INCLUDE_NOT_FOLLOWED = Rule(
    "FAL010",
    "include-not-followed",
    Severity.INFO,
    "An included requirements file that fa-lint did not read (a URL, or a path outside the repository).",
)
RULES = (UNREADABLE, SKIPPED_ENTRY, INCLUDE_NOT_FOLLOWED)


def check(ctx: Context) -> Iterator[Finding]:
    for problem in ctx.problems:
        if skippable(problem):
            msg = f"skipped, not checked: {problem.message}"
            yield SKIPPED_ENTRY.finding(problem.location, msg)
        else:
            yield UNREADABLE.finding(problem.location, problem.message)
    for inc in ctx.unfollowed:
        what = "a URL, which fa-lint never fetches" if "://" in inc.target else "not in the checked tree"
        msg = f"included file {inc.target!r} was not checked: {what}; check it separately"
        yield INCLUDE_NOT_FOLLOWED.finding(inc.location, msg)


def skippable(problem: ParseProblem) -> bool:
    """One unreadable entry that plainly is not flash-attn costs a warning, not the run.

    Installers disagree at the edges (uv takes a URL with its ``;marker`` glued on, pip does not), and
    fa-lint judges only flash-attn; an unreadable entry that names it, or a whole file, stays an error.
    """
    return bool(problem.entry) and not mentions_flash_attn(problem.entry)
