"""What the oldest supported Python (3.10) lacks."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

if sys.version_info >= (3, 11):
    from contextlib import chdir
else:  # pragma: no cover - exercised on Python 3.10 only

    @contextlib.contextmanager
    def chdir(path: str | os.PathLike[str]) -> Iterator[None]:
        """``contextlib.chdir`` (Python 3.11): work in ``path``, then go back."""
        before = os.getcwd()
        os.chdir(path)
        try:
            yield
        finally:
            os.chdir(before)


__all__ = ["chdir"]
