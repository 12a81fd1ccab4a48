"""``--format text``: ``path:line:col: CODE message``, one finding a line, then a summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fa_lint.model import Severity
from fa_lint.report._common import counts, escaped

if TYPE_CHECKING:
    from fa_lint.engine import Report

_COLOR = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}
_BOLD, _RESET = "\033[1m", "\033[0m"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def render(report: Report, *, color: bool = False, fixable: bool = True) -> str:
    """One line per finding, then the summary; ``fixable`` False (standard input) leaves out --fix hints."""
    lines = []
    for f in map(escaped, report.findings):
        loc = f.location
        where = f"{loc.path}:{loc.line}:{loc.column}:"
        code = f.code
        if color:
            where, code = f"{_BOLD}{where}{_RESET}", f"{_COLOR[f.severity]}{code}{_RESET}"
        mark = " [*]" if fixable and f.fix is not None and f.fix.safe else ""
        lines.append(f"{where} {code}{mark} {f.message}")
    lines.append(summary(report, fixable=fixable))
    return "\n".join(lines) + "\n"


def summary(report: Report, *, fixable: bool = True) -> str:
    """'Found 1 error, 2 warnings, 0 info in 3 files.' or 'All checks passed: ...'."""
    c = counts(report)
    text = (
        f"{plural(c['error'], 'error')}, {plural(c['warning'], 'warning')}, {c['info']} info "
        f"in {plural(len(report.files), 'file')}"
    )
    if report.suppressed:
        text += f" ({report.suppressed} suppressed)"
    text = ("Found " if report.findings else "All checks passed: ") + text + "."
    if not fixable:
        return text
    safe = sum(1 for f in report.findings if f.fix is not None and f.fix.safe)
    unsafe = sum(1 for f in report.findings if f.fix is not None and not f.fix.safe)
    if safe:
        text += f" [*] {safe} fixable with --fix"
        text += f" ({unsafe} more with --unsafe-fixes)." if unsafe else "."
    elif unsafe:
        text += f" {unsafe} fixable with --fix --unsafe-fixes."
    return text
