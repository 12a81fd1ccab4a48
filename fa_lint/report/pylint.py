"""``--format pylint``: ``path:line: [CODE] headline``, the line format pylint's ``parseable`` output and
ruff's ``pylint`` share, which editors' and CI's problem matchers read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fa_lint.report._common import printable

if TYPE_CHECKING:
    from fa_lint.engine import Report


def render(report: Report, **_: object) -> str:
    return "".join(
        f"{printable(f.location.path)}:{f.location.line}: [{f.code}] {printable(f.message)}\n"
        for f in report.findings
    )
