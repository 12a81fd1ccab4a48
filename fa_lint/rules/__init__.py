"""The rules: a registry that the engine runs and that docs and tests enumerate."""

from __future__ import annotations

from fa_lint.rules import environment, files, shell, versions, wheel
from fa_lint.rules._base import Check, Context, Rule
from fa_lint.rules._fixes import settle

FAMILIES = (versions, environment, wheel, shell, files)
CHECKS: tuple[Check, ...] = tuple(f.check for f in FAMILIES)
RULES: dict[str, Rule] = dict(sorted((r.code, r) for f in FAMILIES for r in f.RULES))
# The packages some rule reads. The engine keeps the requirement records of these only, so memory
# follows what can be found, not the size of the files (a 16 MB requirements file of other packages).
# A family that does not declare PACKAGES reads every package, and then every record is kept.
PACKAGES: frozenset[str] | None = (
    frozenset().union(*(f.PACKAGES for f in FAMILIES))
    if all(hasattr(f, "PACKAGES") for f in FAMILIES)
    else None
)

__all__ = ["CHECKS", "PACKAGES", "RULES", "Context", "Rule", "settle"]
