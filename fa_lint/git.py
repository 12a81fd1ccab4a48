"""Running git on a checkout without running anything the checkout controls.

A repository's own ``.git/config`` is not the user's: a downloaded archive or a shared folder can bring
one, and git runs commands it names (``core.fsmonitor`` when it reads the index, hooks, a pager,
textconv and external diff drivers). Each of those is turned off on the command line, which outranks
every configuration file; and git itself is looked for only in absolute ``PATH`` folders outside the
checkout, so that a committed executable named ``git`` is never the one run.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

# Configuration that makes git run a program, turned off (git reads -c after every file). An empty
# core.fsmonitor is off for every git since the setting exists ("false" was a hook's path before 2.36).
SAFE = ("--no-pager", "-c", "core.fsmonitor=", "-c", "core.hooksPath=" + os.devnull)
# What would make git read another repository than the one asked about (a hook's environment).
_ELSEWHERE = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_NAMESPACE")


class GitError(Exception):
    """git is missing, or said no (the message is its last line of stderr)."""


def executable() -> str | None:
    """git's absolute path, from the absolute folders of ``PATH`` only (an empty or relative entry
    would find a file of the checkout being examined); None when git is not installed."""
    return _executable(os.environ.get("PATH", ""))


@functools.cache
def _executable(path: str) -> str | None:
    import shutil  # (subprocess and shutil on first use: most runs never start git)

    folders = [p for p in path.split(os.pathsep) if p and os.path.isabs(p)]
    found = shutil.which("git", path=os.pathsep.join(folders)) if folders else None
    return os.path.abspath(found) if found else None


def run(
    args: Sequence[str],
    cwd: str,
    data: bytes | None = None,
    *,
    isolated: bool = False,
    timeout: float | None = None,
) -> bytes:
    """git's stdout for ``args`` run in ``cwd``. ``isolated``: the repository of ``cwd``, whatever a
    hook's environment (``GIT_DIR``, ``GIT_INDEX_FILE``) points at."""
    import subprocess

    git = executable()
    if git is None:
        raise GitError("git is not installed (or not on PATH)")
    real = os.path.realpath(cwd)
    if git.startswith(real.rstrip(os.sep) + os.sep):
        raise GitError(f"the git found on PATH ({git}) lies inside the folder being checked")
    env = None
    if isolated:
        env = {k: v for k, v in os.environ.items() if k not in _ELSEWHERE}
    try:
        proc = subprocess.run(
            [git, *SAFE, *args],
            cwd=cwd,
            input=data,
            capture_output=True,
            check=False,
            env=env,
            timeout=timeout,
            stdin=subprocess.DEVNULL if data is None else None,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {timeout} s") from None
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}") from None
    if proc.returncode:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"]
        raise GitError(message[-1])
    return proc.stdout


class Batch:
    """``git cat-file --batch``, one object at a time: each is asked for, read and handed back before
    the next, so no more than one object's bytes are ever held (a tree may hold gigabytes)."""

    def __init__(self, cwd: str) -> None:
        import subprocess

        git = executable()
        if git is None:
            raise GitError("git is not installed (or not on PATH)")
        try:
            self._proc = subprocess.Popen(
                [git, *SAFE, "cat-file", "--batch"],
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror or exc}") from None

    def __enter__(self) -> Batch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, name: bytes) -> bytes | None:
        """The object's bytes; None when git has no such object."""
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(name + b"\n")
            proc.stdin.flush()
        except OSError as exc:
            raise GitError(f"git cat-file stopped: {exc.strerror or exc}") from None
        header = proc.stdout.readline()
        parts = header.split()
        if len(parts) != 3:  # "<name> missing", or git is gone
            if not header:
                raise GitError("git cat-file stopped")
            return None
        size = int(parts[2])
        body = proc.stdout.read(size + 1)  # the object and the newline after it
        if len(body) != size + 1:
            raise GitError("git cat-file stopped mid-object")
        return body[:size]

    def close(self) -> None:
        import subprocess

        proc = self._proc
        if proc.stdin is not None:
            proc.stdin.close()
        if proc.stdout is not None:
            proc.stdout.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
