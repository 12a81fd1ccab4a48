"""``.python-version``: the Python uv and pyenv run a project with (its first version line)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.specifiers import SpecifierSet

from fa_lint.model import Kind, Parsed, Requirement
from fa_lint.syntax.text import TextIndex

NAME = "python-version"

# "3.12", "3.12.4", "cpython@3.12", "cpython-3.12.4": CPython. pyenv's other names ("pypy3.10",
# "system", a virtualenv's name) say nothing fa-lint can use. ASCII digits only.
_CPYTHON = re.compile(r"(?:cpython[@-])?(3\.[0-9]+)(?:\.[0-9]+)?(?:[a-z]+[0-9]*)?", re.I)


def parse(path: str, text: str) -> Iterator[Parsed]:
    index = TextIndex(path, text)
    offset = 0
    for line in text.split("\n"):
        stripped = line.strip()
        start = offset + len(line) - len(line.lstrip())
        offset += len(line) + 1
        if not stripped or stripped.startswith("#"):
            continue
        m = _CPYTHON.fullmatch(stripped)
        if m:
            yield Requirement(
                "python",
                stripped,
                index.location(start, start + len(stripped)),
                NAME,
                specifier=SpecifierSet(f"=={m.group(1)}.*"),
                kind=Kind.CONSTRAINT,
                scope="python",
            )
        return  # the first version line is the one that runs
