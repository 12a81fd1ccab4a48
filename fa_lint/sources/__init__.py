"""One module per file format, each a ``Source``: name patterns plus ``parse(path, text)``.

A parser returns located records -- requirements, includes and problems -- and never raises on
bad input, never runs the file, and never touches the network.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from fa_lint.model import Parsed
from fa_lint.sources import (
    conda,
    dockerfile,
    makefile,
    pdm_lock,
    pipfile,
    pipfile_lock,
    poetry_lock,
    pylock,
    pyproject,
    python_version,
    requirements,
    setup_cfg,
    setup_py,
    shell,
    uv_lock,
    workflow,
)


class Source(Protocol):
    NAME: str
    PATTERNS: tuple[str, ...]

    def parse(self, path: str, text: str) -> Iterable[Parsed]: ...


# Order matters: discovery gives a file to the first source whose pattern matches it.
SOURCES: dict[str, Source] = {
    m.NAME: m
    for m in (
        pylock,
        uv_lock,
        poetry_lock,
        pdm_lock,
        pipfile_lock,
        pipfile,
        pyproject,
        setup_cfg,
        setup_py,
        conda,
        workflow,
        dockerfile,
        shell,
        requirements,
        makefile,
        python_version,
    )
}
