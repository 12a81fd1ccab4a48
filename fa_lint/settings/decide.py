"""Which findings to keep: --select/--ignore by code prefix, per-file ignores, suppression comments."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from fa_lint.files.needles import compiled
from fa_lint.model import INTERNAL, Finding
from fa_lint.settings.resolved import PerFile

# flake8's bare or coded noqa comment, and fa-lint's own "# fa-lint: ignore[FAL001]".
# Patterns, compiled the first time a finding's line has a comment.
_NOQA = r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,?\s*[A-Z]+[0-9]+)*))?"
_OWN = r"#\s*fa-lint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?"


# Each format's comment syntax (``syntax.comments``), by the catalogue's format name: a suppression is
# read only from a comment. tox and setup.cfg lists are pip's lines; a Pipfile.lock (JSON) has none.
STYLES = {
    "requirements": "pip",
    "tox": "pip",
    "setup.cfg": "pip",
    "python-version": "pip",
    "pylock": "toml",
    "uv.lock": "toml",
    "poetry.lock": "toml",
    "pdm.lock": "toml",
    "pipfile": "toml",
    "pyproject": "toml",
    "pixi": "toml",
    "pipfile.lock": "none",
    "pixi.lock": "yaml",
    "conda-lock": "yaml",
    "conda": "yaml",
    "workflow": "yaml",
    "gitlab-ci": "yaml",
    "cluster": "yaml",
    "compose": "yaml",
    "training-config": "yaml",
    "dockerfile": "dockerfile",
    "shell": "shell",
    "makefile": "shell",
    "justfile": "shell",
    "notebook": "notebook",
    "batch": "batch",
    "powershell": "powershell",
    "setup.py": "python",
    "nox": "python",
    "python-app": "python",
}


def selected(code: str, select: Iterable[str], ignore: Iterable[str]) -> bool:
    select = tuple(select)
    if select and not any(code.startswith(p) for p in select):
        return False
    return not any(code.startswith(p) for p in ignore)


def file_ignores(path: str, per_file: PerFile, root: str) -> tuple[str, ...]:
    """The code prefixes ignored in ``path``: globs match its path relative to ``root``, or its name.
    The globs are indexed once per list (``fa_lint.files.needles``), not tried one by one on every file."""
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


# A file-level exemption: ruff's file-level noqa comment with fa-lint's name (``fa-lint: noqa`` after a
# ``#``, with ``: CODES`` or without) on a line of its own, anywhere in the file. ruff's own spelling
# counts too when it names codes; a bare one (ruff's or flake8's) silences those tools in a setup.py,
# and is not read as an order to stop checking flash-attn there.
_FILE = re.compile(
    r"^[ \t]*#[ \t]*(?P<who>fa-lint|ruff):[ \t]*noqa\b"
    r"(?::[ \t]*(?P<codes>[A-Za-z]+[0-9]+(?:[ \t]*,?[ \t]*[A-Za-z]+[0-9]+)*))?",
    re.I | re.M,
)


def file_suppressions(text: str, starts: dict[int, int]) -> set[str] | None:
    """Codes a file-level ``# fa-lint: noqa: CODES`` exempts the whole file from; an empty set: every
    code (``# fa-lint: noqa``); None: no exemption. ``starts``: where each line's comment begins
    (``syntax.comments.starts``): a "#" inside a string or a URL is no comment, so it exempts nothing."""
    codes: set[str] | None = None
    line, counted = 1, 0  # the line a match is on, counted on from the last match, not from the top
    for m in _FILE.finditer(text):
        line += text.count("\n", counted, m.start())
        counted = m.start()
        line_start = text.rfind("\n", 0, m.start()) + 1
        if starts.get(line) != text.index("#", line_start) - line_start:
            continue
        listed = m.group("codes")
        if not listed:
            if m.group("who").lower() == "fa-lint":
                return set()
            continue
        codes = (codes or set()) | {c.upper() for c in re.findall(r"[A-Za-z]+[0-9]+", listed)}
    return codes


def _exempt(code: str, codes: set[str] | None) -> bool:
    """Whether ``codes`` (a comment's: None, none; empty, every code; else code prefixes) covers ``code``."""
    return codes is not None and (not codes or any(code.startswith(c) for c in codes))


def suppressed(finding: Finding, lines: list[str], starts: dict[int, int]) -> bool:
    """Whether a comment on a line of the finding's span suppresses it. ``starts``: where each line's
    comment begins (``syntax.comments.starts``); text before it is never read as a comment."""
    loc = finding.location
    for n in range(loc.line, min(loc.end_line, len(lines)) + 1):
        col = starts.get(n)
        if col is not None and _exempt(finding.code, suppressions(lines[n - 1][col:])):
            return True
    return False


def apply(
    found: Iterable[Finding],
    texts: Mapping[str, str],
    select: Iterable[str],
    ignore: Iterable[str],
    per_file: PerFile = (),
    root: str = ".",
    formats: Mapping[str, str] | None = None,
    comments: bool = True,
) -> tuple[list[Finding], int]:
    """The findings kept, and how many comments suppressed (fa-lint's own bugs, FAL902, are always
    kept). ``formats``: each file's format (the
    catalogue's name), which says where its comments are; a file of no known format is read by the
    YAML rule (a "#" after a blank, outside a quoted value), the strictest of them. ``comments``
    False: no comment suppresses (what the findings are with every ``noqa`` taken away)."""
    lines: dict[str, list[str]] = {}  # split only for files with findings
    starts: dict[str, dict[int, int]] = {}  # the same files' comment columns
    exempt: dict[str, set[str] | None] = {}  # file-level noqa, read only for files with findings
    ignore = tuple(ignore)
    ignored: dict[str, tuple[str, ...]] = {}  # per file, computed once
    kept, dropped = [], 0
    # one finding per rule, span and package: a clone's tag places its flash-attn and its hopper/
    # (flash-attn-3) builds on one word, and each is its own problem
    seen: set[tuple[str, object, str | None]] = set()
    for f in sorted(found, key=lambda f: (f.location, f.code)):
        path = f.location.path
        if path not in ignored:
            ignored[path] = ignore + file_ignores(path, per_file, root) if per_file else ignore
        internal = f.code == INTERNAL  # fa-lint's own bug: no selection or comment hides it
        key = (f.code, f.location, f.package)
        if key in seen or not (internal or selected(f.code, select, ignored[path])):
            continue
        seen.add(key)
        if internal or not comments:
            kept.append(f)
            continue
        if path not in lines:
            text, starts[path] = _read(texts.get(path), STYLES.get((formats or {}).get(path, ""), "yaml"))
            lines[path] = text.split("\n") if text is not None else []
            exempt[path] = file_suppressions(text, starts[path]) if text else None
        if _exempt(f.code, exempt[path]) or suppressed(f, lines[path], starts[path]):
            dropped += 1
        else:
            kept.append(f)
    return kept, dropped


# What every suppression holds (_NOQA, _OWN and _FILE, as re.I reads them): a file without any has
# no comment worth finding, and is not scanned for them (tokenizing a Python file with a finding was
# most of this step). Not for the formats read through ``_OPENERS``, whose text is normalized first.
_MAY_SUPPRESS = r"noqa|fa-lint:\s*ignore"

# formats whose comments open with no "#" (a batch file's REM), or whose "#" may sit anywhere
_OPENERS = frozenset({"batch", "powershell", "notebook"})


def _read(text: str | None, style: str) -> tuple[str | None, dict[int, int]]:
    """A file's text as the suppression comments are read in it, and where each line's comment starts."""
    if text is None or ("#" not in text and style not in _OPENERS):
        return text, {}
    if style not in _OPENERS and re.search(_MAY_SUPPRESS, text, re.I) is None:
        return text, {}  # no comment here can suppress: not scanned for comments
    found = comment_starts(text, style)
    if style in _OPENERS:
        from fa_lint.syntax import comments

        text = comments.normalized(text, style, found)
    return text, found


def comment_starts(text: str, style: str) -> dict[int, int]:
    """``syntax.comments.starts`` (a Dockerfile's: ``sources.docker_comments``, which knows its
    instructions), imported only once a file with a finding has a "#" in it: a clean run, and most
    runs of pre-commit, never load the comment scanners."""
    if style == "dockerfile":
        from fa_lint.sources.docker_comments import comment_starts as dockerfile

        return dockerfile(text)
    from fa_lint.syntax import comments

    return comments.starts(text, style)
