"""The rules: a registry that the engine runs and that docs and tests enumerate."""

from __future__ import annotations

import re

from fa_lint.model import SUBDIRECTORIES
from fa_lint.rules import environment, fa4, files, install, shell, torch_conflict, versions, wheel
from fa_lint.rules._base import DOCS, Check, Context, Rule
from fa_lint.rules._fixes import settle

FAMILIES = (versions, environment, wheel, install, shell, files, fa4, torch_conflict)
CHECKS: tuple[Check, ...] = tuple(f.check for f in FAMILIES)
RULES: dict[str, Rule] = dict(sorted((r.code, r) for f in FAMILIES for r in f.RULES))
# The packages some rule reads. The engine keeps the requirement records of these only, so memory
# follows what can be found, not the size of the files (a 16 MB requirements file of other packages).
# A family that does not declare PACKAGES reads every package, and then every record is kept. The
# flash-attn family's records (flash-attn-3 too, which no rule judges yet; flash-attn-4 is FAL017's)
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
    return f"# {code} `{rule.name}`\n\n**Severity:** {rule.severity.value}\n\n{body}"


__all__ = ["CHECKS", "PACKAGES", "RULES", "Context", "Rule", "page", "settle"]
