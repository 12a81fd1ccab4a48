"""FAL900, FAL901, FAL902, FAL010: what fa-lint could not read, where it failed itself, and includes it
did not follow."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import INTERNAL, Finding, ParseProblem, Severity, mentions_flash_attn
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._text import HEADLINE, clip, fit
from fa_lint.syntax.text import excerpt

UNREADABLE = Rule(
    "FAL900",
    "unreadable-file",
    Severity.ERROR,
    "A file fa-lint could not read or parse; its requirements went unchecked.",
    also=(Severity.INFO,),  # a Jinja template named like a dependency file: not read, and that is all
)
SKIPPED_ENTRY = Rule(
    "FAL901",
    "skipped-entry",
    Severity.WARNING,
    "One dependency entry fa-lint could not read, whose text does not name flash-attn; it was skipped.",
)
INTERNAL_ERROR = Rule(
    INTERNAL,
    "internal-error",
    Severity.ERROR,
    "fa-lint failed (its own bug, not the file's) while reading part of a file; that part went unchecked.",
)
INCLUDE_NOT_FOLLOWED = Rule(
    "FAL010",
    "include-not-followed",
    Severity.INFO,
    "An included requirements file that fa-lint did not read (a URL, or a path outside the repository).",
)
RULES = (UNREADABLE, SKIPPED_ENTRY, INTERNAL_ERROR, INCLUDE_NOT_FOLLOWED)
PACKAGES: frozenset[str] = frozenset()  # no requirement: parse problems and includes
# Where fa-lint's bugs are reported (ruff's panic diagnostic asks for an issue the same way).
ISSUES = "https://github.com/fa-lint/fa-lint/issues/new"
REPORT = (
    f"report it at {ISSUES} with the file (or the lines around this place), the command, and what "
    "`fa-lint --version` says"
)
# Why an include inside the checkout is not read when pip would read it.
_BOUNDED = (
    "pip would read it; fa-lint reads nothing outside the project root or inside .git, so that a pull "
    "request cannot have it print a file of the CI runner (.git/config holds actions/checkout's token)"
)


def check(ctx: Context) -> Iterator[Finding]:
    for problem in ctx.problems:
        whole = problem.message
        if problem.internal:
            yield internal(problem)
            continue
        if skippable(problem):
            headline = _skipped(whole, problem.entry)
            yield SKIPPED_ENTRY.finding(
                problem.location,
                headline,
                notes=(
                    *((whole,) if not headline.endswith(whole) else ()),
                    "fa-lint judges flash-attn only, and this entry does not name it",
                ),
                help="write it the way every installer reads it, or ignore FAL901 for this file",
            )
            continue
        if problem.template:
            yield _template(problem)
            continue
        headline = clip(whole, HEADLINE)
        yield UNREADABLE.finding(
            problem.location,
            headline,
            notes=(whole,) if headline != whole else (),
            help="fix the file where the headline says, or leave it out (`--exclude`) if it pins nothing",
        )
    for inc, why in ctx.unfollowed:
        url = "://" in inc.target
        yield INCLUDE_NOT_FOLLOWED.finding(
            inc.location,
            fit(f"included `{{target}}` was not checked ({why}); check it separately", target=inc.target),
            notes=("the requirements in that file went unchecked", *(() if url else (_BOUNDED,))),
            help="check the included file on its own" + (", or vendor it into the repository" if url else ""),
        )


def _template(problem: ParseProblem) -> Finding:
    """A Jinja template named like a dependency file: an info that it was not read. Its generator
    renders the file installers read; the template itself is none, and no pin in it went unchecked
    that an install would take."""
    return UNREADABLE.finding(
        problem.location,
        fit("not read: a Jinja template ({tag}), not a file an installer reads", tag=problem.template),
        severity=Severity.INFO,
        notes=(
            f"as its format it does not parse: {problem.message}",
            "the tool that renders it writes the real file; fa-lint reads that file where the repository "
            "holds it",
        ),
        help="nothing to fix; to leave templates out of every run, add their folder to `exclude` in "
        "[tool.fa-lint]",
    )


def internal(problem: ParseProblem) -> Finding:
    """fa-lint's own exception, said as its bug (as ruff says a panic: "This indicates a bug in Ruff",
    crates/ruff_linter/src/message/mod.rs), never as the file's: the help asks for a report, not a
    change to a file that may well be right. The run goes on; ``cli`` exits 2 for it, as ruff does."""
    headline = clip(problem.message, HEADLINE)
    return INTERNAL_ERROR.finding(
        problem.location,
        headline,
        notes=(
            *((problem.message,) if headline != problem.message else ()),
            "this is a bug in fa-lint, not a problem of the file: what fa-lint could not read here went "
            "unchecked; the rest of the file and every other file were checked",
        ),
        help=REPORT,
    )


def _skipped(message: str, entry: str) -> str:
    """FAL901's headline: the entry quoted in the message is shortened before the reason is, so a long
    entry leaves "no such option: --frobnicate" whole rather than "no such opt..."."""
    quoted = excerpt(entry)
    head, found, tail = message.partition(quoted)
    if not found:
        return clip(f"skipped, not checked: {message}", HEADLINE)
    escape = str.maketrans({"{": "{{", "}": "}}"})
    line = fit(
        f"skipped, not checked: {head.translate(escape)}{{entry}}{tail.translate(escape)}", entry=quoted
    )
    # a reason too long for the headline even beside a shortened entry: the entry stays, the end goes
    return line if len(line) <= HEADLINE else clip(f"skipped, not checked: {message}", HEADLINE)


def skippable(problem: ParseProblem) -> bool:
    """One unreadable entry that plainly is not flash-attn costs a warning, not the run.

    Installers disagree at the edges (uv takes a URL with its ``;marker`` glued on, pip does not), and
    fa-lint judges only flash-attn; an unreadable entry that names it, or a whole file, stays an error.
    """
    return bool(problem.entry) and not mentions_flash_attn(problem.entry)
