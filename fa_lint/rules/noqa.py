"""FAL903: a suppression comment that suppresses nothing (ruff's RUF100, ``unused-noqa``).

Its findings are made where the suppression comments are read, after every other rule has judged the
files (``fa_lint.settings.unused``): a comment is unused only against the findings of all the rules,
which no rule sees. The check here finds nothing; the rule is in the registry for its code, its name,
its page and its selection.
"""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Finding, Severity
from fa_lint.rules._base import Context, Rule

UNUSED_NOQA = Rule(
    "FAL903",
    "unused-noqa",
    Severity.WARNING,
    "A suppression comment (`# noqa: FAL001`) that suppresses nothing; run only when selected by its code.",
)
RULES = (UNUSED_NOQA,)
PACKAGES: frozenset[str] = frozenset()  # no requirement: the other rules' findings and the comments
# Rules that no prefix and no empty selection turn on: only a selector that is their very code (as
# ruff's explicit-preview-rules). An unused comment is harmless, and a configuration's
# ``select = ["FAL"]`` ("every rule") written before FAL903 existed must not start failing on one.
EXPLICIT = frozenset({UNUSED_NOQA.code})


def check(ctx: Context) -> Iterator[Finding]:
    return iter(())
