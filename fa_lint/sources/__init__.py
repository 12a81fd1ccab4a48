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
    conda_lock,
    dockerfile,
    makefile,
    nox,
    pdm_lock,
    pipfile,
    pipfile_lock,
    pixi,
    pixi_lock,
    poetry_lock,
    pylock,
    pyproject,
    python_version,
    requirements,
    setup_cfg,
    setup_py,
    shell,
    tox,
    uv_lock,
    workflow,
)


class Source(Protocol):
    NAME: str
    PATTERNS: tuple[str, ...]

    def parse(self, path: str, text: str) -> Iterable[Parsed]: ...


class Sniffed(Source, Protocol):
    """A format some files of other names have too, told apart by a look at their head."""

    CANDIDATES: tuple[str, ...]

    def sniff(self, head: str, *, complete: bool) -> bool: ...


# Order matters: discovery gives a file to the first source whose pattern matches it.
SOURCES: dict[str, Source] = {
    m.NAME: m
    for m in (
        pylock,
        uv_lock,
        poetry_lock,
        pdm_lock,
        pipfile_lock,
        pixi_lock,
        conda_lock,
        pipfile,
        pyproject,
        pixi,
        setup_cfg,
        setup_py,
        tox,
        nox,
        conda,
        workflow,
        dockerfile,
        shell,
        requirements,
        makefile,
        python_version,
    )
}

# Names that may be these formats; discovery reads the first few KiB to decide.
SNIFFED: dict[str, Sniffed] = {m.NAME: m for m in (conda, requirements)}
