"""Running git on a checkout without running anything the checkout controls.

A repository's own ``.git/config`` is not the user's: a downloaded archive or a shared folder can bring
one, and git runs commands it names: ``core.fsmonitor`` when it reads the index, hooks
(``core.hooksPath``), a pager, textconv and external diff drivers (``diff.<driver>.textconv``,
``.command``, ``diff.external``: the diff options ``--no-textconv --no-ext-diff``), the filter drivers
that ``.gitattributes`` selects (``filter.<name>.clean``/``.process``, run on each work-tree file a
diff reads), and, to fetch an object a partial clone lacks, a transport (``core.sshCommand``,
``remote.<name>.url`` with ``ext::``, credential helpers and askpass programs). Each of those is
turned off on the command line, which outranks every configuration file: ``SAFE`` for all of them
but the filters, whose names only the configuration holds, so every command but the few that never
read a file's content (``_NO_CONTENT``) first asks for them (``filters_off``). Settings git reads
only from the user's own files (``trace2.*``) a repository cannot set. git itself is looked for only
in absolute ``PATH`` folders outside the checkout, so that a committed executable named ``git`` is
never the one run, and it is told to take no optional lock (``GIT_OPTIONAL_LOCKS=0``: ``git diff``
would otherwise rewrite the index) so that nothing in the repository is written.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

# Configuration that makes git run a program, turned off (git reads -c after every file). An empty
# core.fsmonitor is off for every git since the setting exists ("false" was a hook's path before 2.36).
# protocol.allow=never: no transport at all (a partial clone's lazy fetch would start ssh or a remote
# helper the configuration names); gc.auto=0 and maintenance.auto=false: no background work.
SAFE = (
    "--no-pager",
    "-c",
    "core.fsmonitor=",
    "-c",
    "core.hooksPath=" + os.devnull,
    "-c",
    "protocol.allow=never",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
)
# The environment of every git run: no optional lock (so no index refresh written back), no lazy fetch
# of missing objects (git 2.44+), no prompt for a password, and no protocol at all: GIT_ALLOW_PROTOCOL
# allows only those it lists, whatever protocol.<name>.allow a repository sets (which outranks the
# protocol.allow of SAFE), and no protocol is named "none".
QUIET = {
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ALLOW_PROTOCOL": "none",
}
# What would make git read another repository than the one asked about (a hook's environment).
_ELSEWHERE = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_NAMESPACE")
# Commands that never pass a file's content through a filter driver (``cat-file`` only with
# ``--filters``/``--textconv``, which fa-lint never gives): no need to ask which filters exist.
_NO_CONTENT = frozenset({"rev-parse", "ls-tree", "ls-files", "config"})


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
    unfiltered = () if args[0] in _NO_CONTENT else filters_off(cwd, isolated=isolated)
    code, out, err = _call(args, cwd, data, isolated=isolated, timeout=timeout, options=unfiltered)
    if code:
        raise GitError(_last_line(err))
    return out


def filters_off(cwd: str, *, isolated: bool = False) -> tuple[str, ...]:
    """``-c`` options that turn off every filter driver the configuration defines (its own files, the
    user's, the system's): a program named in ``filter.<name>.clean``, ``.smudge`` or ``.process``,
    which git runs on a file that ``.gitattributes`` (committed, or ``.git/info/attributes``) gives
    ``filter=<name>``. An empty command is no filter, and ``required=false`` lets the file through
    unfiltered. A name ``-c`` cannot spell (``=`` or a line break in it) is refused: git is not run."""
    code, out, err = _call(
        ["config", "-z", "--name-only", "--get-regexp", r"^filter\."], cwd, isolated=isolated
    )
    if code not in (0, 1):  # 1: no such key
        raise GitError(_last_line(err))
    names = {
        key[len("filter.") : key.rfind(".")] for key in out.decode("utf-8", "surrogateescape").split("\0")
    }
    names.discard("")
    off: list[str] = []
    for name in sorted(names):
        if "=" in name or "\n" in name:
            raise GitError(f"the configuration defines a filter git cannot be told to skip ({name!r})")
        for key, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            off += ["-c", f"filter.{name}.{key}={value}"]
    return tuple(off)


def _last_line(err: bytes) -> str:
    return (err.decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1]


def _environment(isolated: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not isolated or k not in _ELSEWHERE}
    env.update(QUIET)
    return env


def _call(
    args: Sequence[str],
    cwd: str,
    data: bytes | None = None,
    *,
    isolated: bool = False,
    timeout: float | None = None,
    options: Sequence[str] = (),
) -> tuple[int, bytes, bytes]:
    import subprocess

    git = executable()
    if git is None:
        raise GitError("git is not installed (or not on PATH)")
    real = os.path.realpath(cwd)
    if git.startswith(real.rstrip(os.sep) + os.sep):
        raise GitError(f"the git found on PATH ({git}) lies inside the folder being checked")
    try:
        proc = subprocess.run(
            [git, *SAFE, *options, *args],
            cwd=cwd,
            input=data,
            capture_output=True,
            check=False,
            env=_environment(isolated),
            timeout=timeout,
            stdin=subprocess.DEVNULL if data is None else None,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {timeout} s") from None
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}") from None
    return proc.returncode, proc.stdout, proc.stderr


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
                env=_environment(False),
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
