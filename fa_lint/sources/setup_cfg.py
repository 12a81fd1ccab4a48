"""setup.cfg: ``[options] install_requires`` and friends, and ``[options.extras_require]``."""

from __future__ import annotations

import configparser
import re
from collections.abc import Iterator

from fa_lint.model import Include, Parsed, ParseProblem
from fa_lint.sources import _reqs
from fa_lint.sources._text import TextIndex

NAME = "setup.cfg"
PATTERNS = ("setup.cfg",)
OPTIONS = {"install_requires": "project", "setup_requires": "build-system", "tests_require": "tests"}

_SECTION = re.compile(r"^\[([^\]]+)\]")
_KEY = re.compile(r"^([^\s=:#;][^=:]*?)\s*[=:]\s*(.*?)\s*$")


def _values(text: str) -> Iterator[tuple[str, str, int, int, str]]:
    """(section, key, line, column, item) for every line of every value, with positions.

    configparser reads the file for meaning but keeps no line numbers, so values are walked here
    the same way: a key at the start of a line, then indented continuation lines.
    """
    section, key = "", ""
    for n, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        if not line[0].isspace():
            header = _SECTION.match(line)
            if header:
                section, key = header.group(1).strip(), ""
                continue
            m = _KEY.match(line.rstrip("\r"))
            if not m:
                continue
            key = m.group(1).strip()
            if m.group(2):
                yield section, key, n, m.start(2) + 1, m.group(2)
        elif key:
            yield section, key, n, len(line) - len(line.lstrip()) + 1, stripped


def parse(path: str, text: str) -> Iterator[Parsed]:
    index = TextIndex(path, text)
    try:
        configparser.ConfigParser(interpolation=None, strict=False).read_string(text, source=path)
    except configparser.Error as exc:
        line = getattr(exc, "lineno", None) or 1
        yield ParseProblem(index.whole_line(line), f"invalid setup.cfg: {exc.message.splitlines()[0]}")
        return
    for section, key, line, col, value in _values(text):
        if section == "options" and key in OPTIONS:
            scope = OPTIONS[key]
        elif section == "options.extras_require":
            scope = f"extra:{key}"
        else:
            continue
        item = re.split(r"\s+#", value, maxsplit=1)[0].rstrip()
        start = index.offset(line, col)
        if item.startswith("file:"):
            where = index.location(start, start + len(item))
            for target in item[5:].split(","):
                if target.strip():
                    yield Include(where, target.strip(), scope=scope)
            continue
        yield _reqs.at(index, start, start + len(item), NAME, scope=scope)
