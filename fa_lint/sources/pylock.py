"""PEP 751 ``pylock.toml`` / ``pylock.<name>.toml``, validated with ``packaging.pylock``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from packaging.pylock import Pylock, PylockValidationError

from fa_lint.model import Parsed, ParseProblem
from fa_lint.syntax import tomldoc, tomllock

NAME = "pylock"


def _url(pkg: dict[str, Any]) -> str | None:
    vcs = pkg.get("vcs")
    if isinstance(vcs, dict):
        ref = vcs.get("requested-revision") or vcs.get("commit-id") or ""
        return f"git+{vcs.get('url') or vcs.get('path')}@{ref}".rstrip("@")
    archive = pkg.get("archive")
    if isinstance(archive, dict):
        return archive.get("url") or archive.get("path")
    for wheel in pkg.get("wheels") or []:
        if isinstance(wheel, dict):
            return wheel.get("url") or wheel.get("path") or wheel.get("name")
    sdist = pkg.get("sdist")
    if isinstance(sdist, dict):
        return sdist.get("url") or sdist.get("path") or sdist.get("name")
    return None


def parse(path: str, text: str) -> Iterator[Parsed]:
    doc = tomldoc.load(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    try:
        Pylock.from_dict(doc.data)
    except PylockValidationError as exc:
        yield ParseProblem(doc.index.location(0, 0), f"invalid pylock file: {exc}")
        return
    yield from tomllock.parse(path, text, source=NAME, tool="pylock", key="packages", url=_url, doc=doc)
