"""The package lists of the YAML lockfiles conda-lock and pixi write, read line by line.

Hand-written because PyYAML needs seconds (over a second even with libyaml) for the megabytes
these locks reach, for a few keys per entry. Their writers fix the layout: a top-level list of
mappings whose scalar keys sit two columns right of the dash. Only those keys are read; nested
values (dependencies, hashes) are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml

from fa_lint._records import NamedTuple
from fa_lint.model import ParseProblem
from fa_lint.syntax import yamldoc
from fa_lint.syntax.text import TextIndex, excerpt

_ITEM = re.compile(r"^( *)- ")
_KEY = re.compile(r"([A-Za-z_][\w.-]*):(?:[ \t]+(.*?))?[ \t]*$")
_TOP = re.compile(r"^(?:[A-Za-z_][\w.-]*:(?:\s|$)|#|\.\.\.|---)")


class Entry(NamedTuple):
    fields: dict[str, tuple[str, int, int]]  # key -> (scalar value, start and end of the key line)

    def get(self, key: str) -> str | None:
        found = self.fields.get(key)
        return found[0] if found else None


def _scalar(text: str) -> str:
    if text[:1] in ("'", '"'):
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            return text
        return str(value)
    return text


def entries(index: TextIndex, key: str) -> Iterator[Entry | ParseProblem]:  # noqa: C901 - complexity 12: a line scanner over the lock writers' fixed layout, a branch per kind of line (item, field, dedent, foreign line) sharing the dash's column and the entry so far
    """The entries of the top-level list ``key:``; a line no writer makes is a located problem."""
    text = index.text
    m = re.search(rf"^{re.escape(key)}:[ \t]*\r?$", text, re.M)
    if m is None:
        problem = yamldoc.load(index)  # no package list: say where the YAML breaks, if it does
        if isinstance(problem, ParseProblem):
            yield problem
        return
    pos = m.end() + 1
    item: int | None = None  # the dash's column
    fields: dict[str, tuple[str, int, int]] | None = None
    while pos < len(text):
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl
        line = text[pos:end].rstrip("\r")
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if stripped and not stripped.startswith("#"):
            dash = _ITEM.match(line)
            if dash and (item is None or indent == item):
                item = indent
                if fields is not None:
                    yield Entry(fields)
                fields = {}
                _field(fields, line, pos, indent + 2)
            elif item is not None and fields is not None and indent == item + 2:
                _field(fields, line, pos, indent)
            elif indent <= (item or 0):
                if indent == 0 and not _TOP.match(line):
                    what = f"not a line of a YAML lockfile: {excerpt(stripped)} (a merge conflict?)"
                    yield ParseProblem(index.location(pos, end), what)
                    return
                if indent < (item or 0) or not dash:
                    break
        pos = end + 1
    if fields is not None:
        yield Entry(fields)


def _field(fields: dict[str, tuple[str, int, int]], line: str, pos: int, column: int) -> None:
    m = _KEY.match(line, column)
    if m and m.group(2) is not None:
        fields.setdefault(m.group(1), (_scalar(m.group(2)), pos + column, pos + len(line)))
