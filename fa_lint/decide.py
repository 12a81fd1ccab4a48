"""Which findings to keep: --select/--ignore by code prefix, per-file ignores, suppression comments."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from fa_lint.model import Finding
from fa_lint.needles import compiled

# flake8's bare or coded noqa comment, and fa-lint's own "# fa-lint: ignore[FAL001]".
# Patterns, compiled the first time a finding's line has a comment.
_NOQA = r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,?\s*[A-Z]+[0-9]+)*))?"
_OWN = r"#\s*fa-lint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?"


def selected(code: str, select: Iterable[str], ignore: Iterable[str]) -> bool:
    select = tuple(select)
    if select and not any(code.startswith(p) for p in select):
        return False
    return not any(code.startswith(p) for p in ignore)


PerFile = tuple[tuple[str, tuple[str, ...]], ...]  # (glob, code prefixes), as [tool.fa-lint] has them


def file_ignores(path: str, per_file: PerFile, root: str) -> tuple[str, ...]:
    """The code prefixes ignored in ``path``: globs match its path relative to ``root``, or its name.
    The globs are indexed once per list (``fa_lint.needles``), not tried one by one on every file."""
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    name = os.path.basename(path)
    globs = compiled(per_file, lambda: [glob for glob, _ in per_file], case=True)
    return tuple(code for i in globs.matching(rel, name) for code in per_file[i][1])


def suppressions(line: str) -> set[str] | None:
    """Codes a comment on this line suppresses; an empty set means all; None means none."""
    if "#" not in line:
        return None
    codes: set[str] | None = None
    for pattern in (_NOQA, _OWN):
        for m in re.finditer(pattern, line, re.I):
            listed = m.group("codes")
            if not listed or not listed.strip():
                return set()
            codes = (codes or set()) | {c.upper() for c in re.findall(r"[A-Za-z]+[0-9]+", listed)}
    return codes


def suppressed(finding: Finding, lines: list[str]) -> bool:
    loc = finding.location
    for n in range(loc.line, min(loc.end_line, len(lines)) + 1):
        codes = suppressions(lines[n - 1])
        if codes is not None and (not codes or any(finding.code.startswith(c) for c in codes)):
            return True
    return False


def apply(
    found: Iterable[Finding],
    texts: Mapping[str, str],
    select: Iterable[str],
    ignore: Iterable[str],
    per_file: PerFile = (),
    root: str = ".",
) -> tuple[list[Finding], int]:
    lines: dict[str, list[str]] = {}  # split only for files with findings
    ignore = tuple(ignore)
    ignored: dict[str, tuple[str, ...]] = {}  # per file, computed once
    kept, dropped = [], 0
    seen: set[tuple[str, object]] = set()
    for f in sorted(found, key=lambda f: (f.location, f.code)):
        path = f.location.path
        if path not in ignored:
            ignored[path] = ignore + file_ignores(path, per_file, root) if per_file else ignore
        if (f.code, f.location) in seen or not selected(f.code, select, ignored[path]):
            continue
        seen.add((f.code, f.location))
        if path not in lines:
            lines[path] = texts[path].split("\n") if path in texts else []
        if suppressed(f, lines[path]):
            dropped += 1
        else:
            kept.append(f)
    return kept, dropped
