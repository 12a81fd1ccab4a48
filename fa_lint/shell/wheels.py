"""Wheels made by one command and installed by another: ``pip wheel SPEC -w DIR``,
``pip download SPEC -d DIR`` and a build's ``dist/``, taken by ``pip install DIR/*.whl`` or
``pip install --no-index --find-links DIR NAME``. The spec is judged at the install that takes it,
where it is written; a wheel never installed in the file is judged where it was made.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable

from fa_lint.model import Requirement


class _Wheel:
    """A wheel a command put in a folder, waiting for the install that takes it from there."""

    def __init__(self, record: Requirement) -> None:
        self.record = record
        self.taken = False


def _dist_file(name: str, version: str) -> str:
    return f"{name.replace('-', '_')}-{version or '0'}-py3-none-any.whl"


class Wheels:
    """The wheels of one file, by the folder they were put in."""

    def __init__(self) -> None:
        self.folders: dict[str, list[_Wheel]] = {}

    def put(self, folder: str, records: Iterable[Requirement]) -> None:
        self.folders.setdefault(posixpath.normpath(folder), []).extend(_Wheel(r) for r in records)

    def take(self, folders: list[str], name: str | None, pattern: str) -> Requirement | None:
        """The wheel an install takes from a folder: by name (--find-links) or by file pattern."""
        for folder in folders:
            for w in self.folders.get(folder, []):
                r = w.record
                version = str(r.version or next((s.version for s in r.specifier if s.operator == "=="), ""))
                if (name and r.name == name) or (
                    pattern and fnmatch.fnmatch(_dist_file(r.name, version), pattern)
                ):
                    w.taken = True
                    return r
        return None

    def copy(self, source: str, dest: str) -> None:
        """``COPY --from=stage SRC DEST``: wheels made in SRC are now in DEST too."""
        src, dst = posixpath.normpath(source), posixpath.normpath(dest)
        for folder, found in list(self.folders.items()):
            if folder == src or folder.startswith(src + "/"):
                self.folders.setdefault(
                    posixpath.join(dst, folder[len(src) :].lstrip("/")).rstrip("/"), found
                )

    def leftovers(self) -> list[Requirement]:
        """Wheels no install took, each once."""
        out = []
        for found in self.folders.values():
            for w in found:
                if not w.taken:
                    w.taken = True
                    out.append(w.record)
        return out
