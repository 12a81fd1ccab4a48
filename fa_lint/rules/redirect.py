"""FAL007: a version specifier the shell reads as a redirect."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import FLASH_ATTN, Finding, NotRun, Requirement, Severity
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


# What follows a command that fails, by the kind of file it is in.
_AFTER = {
    "dockerfile": "the RUN fails, and the image build stops there",
    "makefile": "make stops at this recipe line (unless it runs with -k or the line starts with -)",
    "shell": "a script under `set -e` stops there; one without it goes on, without this install",
}


def _requirement(text: str) -> bool:
    """Whether pip would read ``text`` as a requirement once it is quoted."""
    from packaging.requirements import InvalidRequirement
    from packaging.requirements import Requirement as Pep508

    try:
        Pep508(text)
    except InvalidRequirement:
        return False
    return True


def check(ctx: Context) -> Iterator[Finding]:
    for req in ctx.requirements:
        if req.name == FLASH_ATTN and req.redirected:
            yield _written_to_a_file(req)
    for unrun in ctx.not_run:
        if unrun.requirement.name == FLASH_ATTN:
            yield _never_runs(unrun)


def _written_to_a_file(req: Requirement) -> Finding:
    """``>``/``>=``: the command runs with the bare name, its output written to a file."""
    cut = req.redirected or ""
    meant = f"{req.raw}{cut}"
    effect = (
        f"the shell runs 'pip install {req.raw}' with its output sent to a file named "
        f"'{cut.lstrip('>|')}', so pip installs the newest flash-attn and never sees '{cut}'"
    )
    headline = fit(
        'unquoted `{meant}`: the shell takes `{cut}` as a redirect; quote it: "{meant}"', meant=meant, cut=cut
    )
    fixed = quote_word(req)
    return UNQUOTED_SPECIFIER.finding(
        req.location,
        headline,
        package=FLASH_ATTN,
        requirement=meant,
        fix=fixed,
        notes=(effect,),
        help=fixed.title if fixed else f'quote it: "{meant}"',
    )


def _never_runs(unrun: NotRun) -> Finding:
    """``<``/``<=`` (or an operator with nothing after it): the shell never runs the command, so no
    version of it is judged."""
    req = unrun.requirement
    if unrun.at is not None:
        return _after_a_stop(unrun)
    own = bool(req.redirected)
    meant = f"{req.raw}{req.redirected or ''}"
    notes = [unrun.why]
    if own and unrun.stops:  # quoted as it is, pip would refuse it: the version is missing
        headline = fit(
            "unquoted `{meant}` is a shell syntax error; write the version and quote it", meant=meant
        )
        fixed = None
    elif own:
        headline = fit('unquoted `{meant}` makes the install fail; quote it: "{meant}"', meant=meant)
        fixed = quote_word(req) if _requirement(meant) else None  # `flash-attn< torch` reads `torch`
    else:  # another word of the command (`torch<2.4`) fails it
        headline = fit(
            "`{req}` is never installed: unquoted `{cause}` fails the command; quote it",
            req=req.raw,
            cause=unrun.cause,
        )
        fixed = None
    notes.append(_AFTER.get(req.source, _AFTER["shell"]))
    notes.append("fa-lint judges no flash-attn version for an install that cannot run")
    return UNQUOTED_SPECIFIER.finding(
        req.location,
        headline,
        package=FLASH_ATTN,
        requirement=meant,
        fix=fixed,
        notes=tuple(notes),
        help=fixed.title if fixed else f'quote it: "{unrun.cause}"',
    )


def _after_a_stop(unrun: NotRun) -> Finding:
    """An install after a syntax error: the shell (or the image build, or the job) stopped there."""
    req, at = unrun.requirement, unrun.at
    assert at is not None
    meant = f"{req.raw}{req.redirected or ''}"
    headline = fit(
        "`{req}` is never installed: the shell stops at the syntax error `{cause}` (line {line}); quote it",
        req=meant,
        cause=unrun.cause,
        line=str(at.line),
    )
    return UNQUOTED_SPECIFIER.finding(
        req.location,
        headline,
        package=FLASH_ATTN,
        requirement=meant,
        related=(at,),
        notes=(unrun.why, "fa-lint judges no flash-attn version for an install that cannot run"),
        help=f'quote the word at line {at.line} and give it a version: "{unrun.cause}..."',
    )
