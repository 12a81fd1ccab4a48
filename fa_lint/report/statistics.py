"""``--statistics``: findings counted per rule, most frequent first, as ``ruff --statistics`` prints them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from fa_lint.model import Finding


@dataclass(frozen=True, slots=True)
class Stat:
    code: str
    name: str
    count: int
    fixable_count: int  # how many of them --fix (with --unsafe-fixes, if given) can fix

    @property
    def fixable(self) -> bool:
        return self.fixable_count > 0


def count(findings: Iterable[Finding], *, unsafe: bool = False, fixable: bool = True) -> list[Stat]:
    """One ``Stat`` per code; ``fixable`` False (standard input, which --fix cannot take) counts no fix."""
    by_code: dict[str, list[Finding]] = {}
    for f in findings:
        by_code.setdefault(f.code, []).append(f)
    stats = [
        Stat(code, found[0].name, len(found), sum(fixable and _applies(f, unsafe) for f in found))
        for code, found in by_code.items()
    ]
    return sorted(stats, key=lambda s: (-s.count, s.code))


def _applies(f: Finding, unsafe: bool) -> bool:
    return f.fix is not None and (f.fix.safe or unsafe)


def text(stats: list[Stat]) -> str:
    """``count<TAB>code<TAB>[*] name`` lines; ``[*]`` when --fix can fix some of them."""
    width = max((len(str(s.count)) for s in stats), default=1)
    return "".join(f"{s.count:>{width}}\t{s.code}\t{'[*]' if s.fixable else '[ ]'} {s.name}\n" for s in stats)


def as_json(stats: list[Stat]) -> str:
    """ruff's keys: code, name, count, fixable, fixable_count."""
    rows = [{**asdict(s), "fixable": s.fixable} for s in stats]
    return (
        json.dumps(
            [{k: row[k] for k in ("code", "name", "count", "fixable", "fixable_count")} for row in rows],
            indent=2,
        )
        + "\n"
    )
