"""``--format github``: GitHub Actions workflow commands, shown as annotations on a pull request's diff.

The escaping follows the Actions runner: in a command's message ``%``, CR and LF are percent-encoded,
and in its properties ``:`` and ``,`` as well, since they separate the properties.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fa_lint.model import Finding, Severity
from fa_lint.report._common import escaped, in_repository, printable
from fa_lint.report.text import summary

if TYPE_CHECKING:
    from fa_lint.engine import Report

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding, shown: Callable[[str], str | None] | None = None) -> str:
    """One workflow command; ``shown`` (``_common.in_repository``) gives the path from the repository's
    top, which the runner resolves ``file=`` against wherever the step ran fa-lint."""
    path = printable((shown or in_repository())(f.location.path) or f.location.path)
    f = escaped(f)
    loc = f.location
    props = {
        "file": path,
        "line": loc.line,
        "col": loc.column,
        "endLine": max(loc.end_line, loc.line),
        "endColumn": loc.end_column,
        "title": f"{f.code} {f.name}",
    }
    joined = ",".join(f"{k}={_property(str(v))}" for k, v in props.items())
    body = "\n".join(
        [f"{f.code} {f.message}", *(f"note: {n}" for n in f.notes), *([f"help: {f.help}"] if f.help else [])]
    )
    return f"::{COMMAND[f.severity]} {joined}::{_data(body)}"


def render(report: Report, *, fixable: bool = True, **_: object) -> str:
    shown = in_repository()
    lines = "".join(annotation(f, shown) + "\n" for f in report.findings)
    return lines + summary(report, fixable=fixable) + "\n"
