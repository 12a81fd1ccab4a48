"""The rules: a registry that the engine runs and that docs and tests enumerate."""

from __future__ import annotations

from fa_lint.rules import environment, files, install, shell, versions, wheel
from fa_lint.rules._base import Check, Context, Rule
from fa_lint.rules._fixes import settle

FAMILIES = (versions, environment, wheel, install, shell, files)
CHECKS: tuple[Check, ...] = tuple(f.check for f in FAMILIES)
RULES: dict[str, Rule] = dict(sorted((r.code, r) for f in FAMILIES for r in f.RULES))

__all__ = ["CHECKS", "RULES", "Context", "Rule", "settle"]
