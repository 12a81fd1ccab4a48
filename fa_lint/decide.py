"""Which findings to keep: --select/--ignore by code prefix, per-file ignores, suppression comments."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping

from fa_lint.model import Finding

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
    """The code prefixes ignored in ``path``: globs match its path relative to ``root``, or its name."""
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    name = os.path.basename(path)
    return tuple(
        code
        for glob, codes in per_file
        if fnmatch.fnmatchcase(rel, glob) or fnmatch.fnmatchcase(name, glob)
        for code in codes
    )


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


# A file-level exemption: ruff's file-level noqa comment with fa-lint's name (``fa-lint: noqa`` after a
# ``#``, with ``: CODES`` or without) on a line of its own, anywhere in the file. ruff's own spelling
# counts too when it names codes; a bare one (ruff's or flake8's) silences those tools in a setup.py,
# and is not read as an order to stop checking flash-attn there.
_FILE = re.compile(
    r"^[ \t]*#[ \t]*(?P<who>fa-lint|ruff):[ \t]*noqa\b"
    r"(?::[ \t]*(?P<codes>[A-Za-z]+[0-9]+(?:[ \t]*,?[ \t]*[A-Za-z]+[0-9]+)*))?",
    re.I | re.M,
)


def file_suppressions(text: str) -> set[str] | None:
    """Codes a file-level ``# fa-lint: noqa: CODES`` exempts the whole file from; an empty set: every
    code (``# fa-lint: noqa``); None: no exemption."""
    codes: set[str] | None = None
    for m in _FILE.finditer(text):
        listed = m.group("codes")
        if not listed:
            if m.group("who").lower() == "fa-lint":
                return set()
            continue
        codes = (codes or set()) | {c.upper() for c in re.findall(r"[A-Za-z]+[0-9]+", listed)}
    return codes


def _exempt(code: str, codes: set[str] | None) -> bool:
    return codes is not None and (not codes or any(code.startswith(c) for c in codes))


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
    exempt: dict[str, set[str] | None] = {}  # file-level noqa, read only for files with findings
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
            exempt[path] = file_suppressions(texts[path]) if path in texts else None
        if _exempt(f.code, exempt[path]) or suppressed(f, lines[path]):
            dropped += 1
        else:
            kept.append(f)
    return kept, dropped
