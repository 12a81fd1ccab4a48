"""``--format azure``: Azure Pipelines logging commands (``##vso[task.logissue ...]``), which the agent
shows as errors and warnings on the run's summary, as ruff's ``azure`` output does.

The agent reads a command wherever ``##vso[`` stands in a line and ends its properties at the first
``]`` after it (azure-pipelines-agent ``Command.TryParse``); in a property it unescapes ``%3B``,
``%0D``, ``%0A`` and ``%5D`` (``CommandStringConvertor``), so those characters are written so. The
message after ``]`` is the finding's printable text, in which ``printable`` has already broken every
``##vso[`` and line break: one finding is one command, and no file can add another.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from fa_lint.model import Finding, Severity
from fa_lint.report._common import printable

if TYPE_CHECKING:
    from fa_lint.engine import Report

# logissue knows only error and warning; an info finding is a warning there, as ruff makes it
TYPE = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "warning"}
_PROPERTY = str.maketrans({";": "%3B", "\r": "%0D", "\n": "%0A", "]": "%5D"})


def command(f: Finding, path: str) -> str:
    loc = f.location
    props = {
        "type": TYPE[f.severity],
        "sourcepath": printable(path),
        "linenumber": str(loc.line),
        "columnnumber": str(loc.column),
        "code": f.code,
    }
    joined = "".join(f"{k}={v.translate(_PROPERTY)};" for k, v in props.items())
    return f"##vso[task.logissue {joined}]{printable(f.message)}"


def render(report: Report, **_: object) -> str:
    # an absolute path, as ruff writes it: the build agent makes a path the repository's own only when
    # File.Exists(path) from its own folder, not the step's (BuildJobExtension.ConvertLocalPath)
    return "".join(command(f, os.path.abspath(f.location.path)) + "\n" for f in report.findings)
