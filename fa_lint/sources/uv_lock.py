"""uv.lock: ``[[package]]`` entries; one name may appear once per set of resolution markers."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Parsed
from fa_lint.sources import _reqs, locks

NAME = "uv.lock"


def _url(pkg: locks.Package) -> str | None:
    source = locks.table(pkg, "source")
    if isinstance(source.get("git"), str):
        import urllib.parse

        # uv writes git sources as "https://host/repo?tag=v2.5.0#<commit>"
        parts = _reqs.split_url(str(source["git"]))
        if parts is None:  # an unclosed IPv6 host; the later checks see it as a URL with no version
            return f"git+{source['git']}"
        query = urllib.parse.parse_qs(parts.query)
        ref = (query.get("tag") or query.get("rev") or query.get("branch") or [parts.fragment])[0]
        base = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        return f"git+{base}@{ref}" if ref else f"git+{base}"
    for key in ("url", "path", "directory"):
        if isinstance(source.get(key), str):
            return str(source[key])
    return None


def _scope(pkg: locks.Package) -> str:
    markers = pkg.get("resolution-markers")
    return "lock; " + " or ".join(map(str, markers)) if markers else "lock"


def _project(pkg: locks.Package) -> bool:
    """The project itself or a workspace member, not a dependency."""
    source = locks.table(pkg, "source")
    return "editable" in source or "virtual" in source


def parse(path: str, text: str) -> Iterator[Parsed]:
    return locks.parse(path, text, source=NAME, tool="uv", url=_url, scope=_scope, skip=_project)
