"""setup.cfg: ``[options] install_requires`` and friends, and ``[options.extras_require]``."""

from __future__ import annotations

import re
from collections.abc import Iterator

from fa_lint.model import Include, Parsed
from fa_lint.syntax import ini, pep508
from fa_lint.syntax.text import TextIndex

NAME = "setup.cfg"
OPTIONS = {"install_requires": "project", "setup_requires": "build-system", "tests_require": "tests"}


def parse(path: str, text: str) -> Iterator[Parsed]:
    index = TextIndex(path, text)
    problem = ini.check(index, "setup.cfg")
    if problem is not None:
        yield problem
        return
    for section, key, line, col, value in ini.values(text):
        if section == "options" and key in OPTIONS:
            scope = OPTIONS[key]
        elif section == "options.extras_require":
            scope = f"extra:{key}"
        else:
            continue
        item = re.split(r"(?<!\s)\s+#", value, maxsplit=1)[0].rstrip()
        start = index.offset(line, col)
        if item.startswith("file:"):
            where = index.location(start, start + len(item))
            for target in item[5:].split(","):
                if target.strip():
                    yield Include(where, target.strip(), scope=scope)
            continue
        yield pep508.at(index, start, start + len(item), NAME, scope=scope)
