"""uv.lock: ``[[package]]`` entries; one name may appear once per set of resolution markers."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Parsed
from fa_lint.syntax import pep508, tomllock
from fa_lint.syntax.tables import subtable, text, texts

NAME = "uv.lock"


def _url(pkg: tomllock.Package) -> str | None:
    git = text(pkg, "source", "git")
    if git is not None:
        import urllib.parse  # git sources only

        # uv writes git sources as "https://host/repo?tag=v2.5.0#<commit>"
        parts = pep508.split_url(git)
        if parts is None:  # an unclosed IPv6 host; the later checks see it as a URL with no version
            return f"git+{git}"
        query = urllib.parse.parse_qs(parts.query)
        ref = (query.get("tag") or query.get("rev") or query.get("branch") or [parts.fragment])[0]
        base = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        return f"git+{base}@{ref}" if ref else f"git+{base}"
    return text(pkg, "source", "url") or text(pkg, "source", "path") or text(pkg, "source", "directory")


def _scope(pkg: tomllock.Package) -> str:
    markers = texts(pkg, "resolution-markers")
    return "lock; " + " or ".join(markers) if markers else "lock"


def _project(pkg: tomllock.Package) -> bool:
    """The project itself or a workspace member, not a dependency."""
    source = subtable(pkg, "source")
    return "editable" in source or "virtual" in source


def parse(path: str, text: str) -> Iterator[Parsed]:
    return tomllock.parse(path, text, source=NAME, tool="uv", url=_url, scope=_scope, skip=_project)
