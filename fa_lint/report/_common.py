"""What several output formats say the same way."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from fa_lint import __version__

if TYPE_CHECKING:
    from fa_lint.engine import Report


def counts(report: Report) -> dict[str, int]:
    c = Counter(f.severity.value for f in report.findings)
    return {"error": c["error"], "warning": c["warning"], "info": c["info"]}


def knowledge_base(report: Report) -> dict[str, Any]:
    kb = report.kb
    return {
        "date": kb.date,
        "releases": len(kb.installable),
        "newest": str(kb.newest),
        "paged_kv_since": str(kb.first_with("paged-kv")),
        "min_version": str(report.policy.min_version),
    }


def tool() -> dict[str, str]:
    return {"name": "fa-lint", "version": __version__}
