"""The rules: a registry that the engine runs and that docs and tests enumerate."""

from __future__ import annotations

import re
from collections.abc import Iterable

from fa_lint.model import SUBDIRECTORIES
from fa_lint.rules import (
    code,
    environment,
    fa3,
    fa4,
    gpu,
    install,
    ngc,
    nvcc,
    platform,
    redirect,
    torch_conflict,
    unread,
    versions,
    wheel,
)
from fa_lint.rules._base import DOCS, Check, Context, Rule
from fa_lint.rules._settle import settle

FAMILIES = (
    versions,
    environment,
    wheel,
    install,
    gpu,
    platform,
    nvcc,
    redirect,
    unread,
    fa4,
    torch_conflict,
    fa3,
    ngc,
    code,
)
CHECKS: tuple[Check, ...] = tuple(f.check for f in FAMILIES)
RULES: dict[str, Rule] = dict(sorted((r.code, r) for f in FAMILIES for r in f.RULES))
# The packages some rule reads. The engine keeps the requirement records of these only, so memory
# follows what can be found, not the size of the files (a 16 MB requirements file of other packages).
# A family that does not declare PACKAGES reads every package, and then every record is kept. The
# flash-attn family's records (flash-attn-3 is FAL022's, flash-attn-4 FAL017's)
# are always kept: they show that every mention of flash-attn was read.
PACKAGES: frozenset[str] | None = (
    frozenset(SUBDIRECTORIES.values()).union(*(f.PACKAGES for f in FAMILIES))
    if all(hasattr(f, "PACKAGES") for f in FAMILIES)
    else None
)


def page(code: str, links: str = DOCS) -> str:
    """A rule's page: what it finds, why it matters, how to fix and suppress it.

    The text lives in the package (``rules/pages/CODE.md``), so ``fa-lint rule`` has it in an installed
    wheel; ``docs/rules/CODE.md`` is generated from it (with ``links=""``, keeping its links relative).
    Elsewhere (a terminal, a SARIF viewer) ``links`` makes them absolute: the docs folder's URL.
    """
    from importlib import resources  # only for `fa-lint rule` and SARIF: it costs a few imports

    rule = RULES[code]
    body = resources.files(__name__).joinpath(f"pages/{code}.md").read_text(encoding="utf-8")
    if links:
        body = re.sub(r"\]\(\.\./", f"]({links}", body)
    return f"# {code} `{rule.name}`\n\n**Severity:** {severity(rule)}\n\n{body}"


def severity(rule: Rule) -> str:
    """'error', or 'error or warning, by context' for a rule whose findings take more than one."""
    names = [s.value for s in rule.severities]
    words = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"{words}, by context" if rule.also else words


def unknown(selectors: Iterable[str]) -> list[str]:
    """The selectors (code prefixes, as --select and --ignore take them) that select no rule: ruff's
    "unknown rule selector", a usage error rather than a run that quietly checks nothing."""
    return [s for s in dict.fromkeys(selectors) if not any(code.startswith(s) for code in RULES)]


__all__ = ["CHECKS", "PACKAGES", "RULES", "Context", "Rule", "page", "settle", "severity", "unknown"]
