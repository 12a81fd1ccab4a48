"""Pin fa-lint's own action, wherever the project shows a workflow that uses it, to a release's commit.

Every ``uses: fa-lint/fa-lint@...`` line of the workflow preset and of the docs' YAML becomes
``uses: fa-lint/fa-lint@<commit>  # vX.Y.Z``: a commit, because a tag can be moved (zizmor's
``unpinned-uses`` audit, and GitHub's own hardening guide), with the tag beside it, the comment Renovate's
and Dependabot's ``github-actions`` updates read to propose the next release's commit.

A file inside a tag cannot name that tag's own commit, so the release workflow runs this after the tag
vX.Y.Z is pushed, and opens a pull request with what it changed (.github/workflows/release.yml, job
``pin-presets``)::

    python scripts/pin_action.py v0.2.0 0123456789abcdef0123456789abcdef01234567
    python scripts/pin_action.py --check    # every place pins one commit, with a tag beside it

Exit codes: 0 done (or consistent), 1 ``--check`` found a place unpinned or pinned differently, 2 usage.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FILES = ("presets/github-workflow.yml", "docs/pull-requests.md", "README.md")
USES = re.compile(r"^(?P<lead>\s*-?\s*uses:\s*)fa-lint/fa-lint@(?P<ref>\S+)(?P<comment>[ \t]+#.*)?$", re.M)
SHA = re.compile(r"[0-9a-f]{40}")
TAG = re.compile(r"v\d+\.\d+\.\d+")


def pins(text: str) -> list[tuple[str, str]]:
    """Each ``uses: fa-lint/fa-lint@REF  # COMMENT`` line's ref and comment (without the ``#``)."""
    return [(m["ref"], (m["comment"] or "").strip().lstrip("#").strip()) for m in USES.finditer(text)]


def pin(text: str, tag: str, sha: str) -> str:
    return USES.sub(lambda m: f"{m['lead']}fa-lint/fa-lint@{sha}  # {tag}", text)


def check(root: Path = REPO) -> list[str]:
    """What is wrong with the pins: a place that is not a commit with a tag beside it, or another pin."""
    problems, seen = [], set()
    for name in FILES:
        for ref, comment in pins((root / name).read_text(encoding="utf-8")):
            if not SHA.fullmatch(ref) or not TAG.fullmatch(comment):
                problems.append(f"{name}: fa-lint/fa-lint@{ref} is not a commit with its tag in a comment")
            seen.add((ref, comment))
    if len(seen) > 1:
        problems.append(f"the files pin different commits: {sorted(seen)}")
    return problems


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        problems = check()
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    if len(argv) != 2 or not TAG.fullmatch(argv[0]) or not SHA.fullmatch(argv[1]):
        print("usage: pin_action.py vX.Y.Z COMMIT (40 hex digits) | --check", file=sys.stderr)
        return 2
    tag, sha = argv
    for name in FILES:
        path = REPO / name
        text = path.read_text(encoding="utf-8")
        path.write_text(pin(text, tag, sha), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
