"""Reading a git checkout (bare is fine) for the scripts that build fa_lint/kb: a sibling module, not a
package; a script run as ``python scripts/X.py`` finds it on its own folder's path."""

from __future__ import annotations

import subprocess
from pathlib import Path

from packaging.version import InvalidVersion, Version


def git(repo: Path, *args: str) -> str:
    """``git -C repo ARGS``'s output; a failing command raises."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def git_file(repo: Path, rev: str, path: str) -> str | None:
    """The text of ``path`` at ``rev``; None where it has none."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "show", f"{rev}:{path}"], check=False, capture_output=True, text=True
    )
    return proc.stdout if proc.returncode == 0 else None


def release_tags(repo: Path, major: int) -> list[tuple[Version, str]]:
    """The tags of ``repo`` that read as a release of ``major`` (``v2.6.3``, ``2.6.3``), with their
    versions, in version order (then by name, as ``git tag`` lists them)."""
    found = []
    for tag in git(repo, "tag").split():
        try:
            version = Version(tag.removeprefix("v"))
        except InvalidVersion:
            continue
        if version.major == major:
            found.append((version, tag))
    return sorted(found)
