"""uv.lock: ``[[package]]`` entries; one name may appear once per set of resolution markers."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator

from fa_lint.model import Parsed, ParseProblem
from fa_lint.sources import locks

NAME = "uv.lock"
PATTERNS = ("uv.lock",)


def _url(source: dict[str, object]) -> str | None:
    if isinstance(source.get("git"), str):
        # uv writes git sources as "https://host/repo?tag=v2.5.0#<commit>"
        parts = urllib.parse.urlsplit(str(source["git"]))
        query = urllib.parse.parse_qs(parts.query)
        ref = (query.get("tag") or query.get("rev") or query.get("branch") or [parts.fragment])[0]
        base = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        return f"git+{base}@{ref}" if ref else f"git+{base}"
    for key in ("url", "path", "directory"):
        if isinstance(source.get(key), str):
            return str(source[key])
    return None


def parse(path: str, text: str) -> Iterator[Parsed]:
    for e in locks.entries(path, text, "package"):
        if isinstance(e, ParseProblem):
            yield e
            continue
        doc, i, pkg = e
        source = pkg.get("source")
        if not isinstance(source, dict):
            source = {}
        if "editable" in source or "virtual" in source:
            continue  # the project itself or a workspace member
        markers = pkg.get("resolution-markers")
        scope = "lock" if not markers else "lock; " + " or ".join(map(str, markers))
        yield locks.entry(doc, ("package", i), pkg, NAME, "uv", url=_url(source), scope=scope)
