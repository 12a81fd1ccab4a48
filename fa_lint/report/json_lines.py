"""``--format json-lines``: one finding a line, each the object ``--format json`` lists (ruff's
``json-lines``), for tools that read a stream: ``jq -c``, log shippers, reviewdog's ``rdjsonl`` adapters.

A line holds no raw line break: the encoder escapes every control character and writes ASCII only, so a
Unicode line separator in a file name cannot split one finding over two lines.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from fa_lint.report._common import unforgeable
from fa_lint.report.json_format import finding

if TYPE_CHECKING:
    from fa_lint.engine import Report


def render(report: Report, **_: object) -> str:
    return "".join(unforgeable(json.dumps(finding(f), separators=(",", ":"))) + "\n" for f in report.findings)
