"""``--watch`` (ruff's): check, then check again whenever a watched file changes, until Ctrl-C.

ruff watches with the ``notify`` crate (crates/ruff/src/lib.rs: "Starting linter in watch mode...",
then "File change detected..." before each run). Here the files are polled: each file a run checks and
each configuration that governs one, by modification time and size, every ``INTERVAL`` seconds, with
the standard library alone (no watcher library is a dependency). The list is made again after each
run, so a file created since is watched too. Ctrl-C ends it with exit 0: watching has no verdict.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import TextIO

INTERVAL = 0.5  # seconds between two looks at the files
RELIST = 4  # every this many looks, the files are found again (a new file in a watched folder)
sleep = time.sleep  # the clock: a test replaces it to change files, or to press Ctrl-C

Stamp = dict[str, tuple[int, int] | None]


def stamp(paths: Iterable[str]) -> Stamp:
    """Each file's modification time and size (None: gone, or not readable)."""
    found: Stamp = {}
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            found[path] = None
            continue
        found[path] = (st.st_mtime_ns, st.st_size)
    return found


def _clear(out: TextIO) -> None:
    """ruff clears the screen before each run; only a terminal is cleared (a log keeps every run)."""
    if hasattr(out, "isatty") and out.isatty():
        out.write("\x1b[2J\x1b[H")


def _run(once: Callable[[], int], out: TextIO, err: TextIO) -> None:
    """One run; a configuration made invalid while watching is said, and the watch goes on."""
    from fa_lint.settings.config import ConfigError

    try:
        once()
    except ConfigError as exc:
        err.write(f"fa-lint: configuration error: {exc}\n")
    out.flush()


def _listed(watched: Callable[[], list[str]], before: Iterable[str]) -> list[str]:
    """The files to watch now (those before while a configuration cannot be read)."""
    from fa_lint.settings.config import ConfigError

    try:
        return watched()
    except ConfigError:
        return list(before)


def loop(once: Callable[[], int], watched: Callable[[], list[str]], out: TextIO, err: TextIO) -> int:
    """Run ``once``, then again whenever a file ``watched`` names changes; 0 on Ctrl-C."""
    try:
        _clear(out)
        err.write("Starting linter in watch mode...\n")
        _run(once, out, err)
        seen = stamp(_listed(watched, []))
        looks = 0
        while True:
            sleep(INTERVAL)
            looks += 1
            if stamp(_listed(watched, seen) if looks % RELIST == 0 else seen) == seen:
                continue
            _clear(out)
            err.write("File change detected...\n")
            _run(once, out, err)
            seen = stamp(_listed(watched, seen))
    except KeyboardInterrupt:
        return 0
