"""Write fa_lint/kb/assets.json: the files attached to each flash-attn GitHub release, from published
listings of them, each with the file and line it was read from.

flash-attn attaches wheels to a release after its tag (``build.yml``'s ``workflow_dispatch``), so the
tag's ``publish.yml`` is only a lower bound of what a release has. What a release has is what its asset
list says; no file in the flash-attention repository holds it, and fa-lint never asks GitHub. So the
listing comes from a public file generated from that list:

* ``sirati/nix-torch-bin-pascal``'s ``pkgs/flash-attn/binary-hashes/vX.Y.Z.nix``: written by its
  ``generate-hashes`` from the GitHub API's asset list of the release (every ``.whl`` asset, paginated
  past 100), with the sha256 GitHub publishes for each asset (``digest``). An asset without a digest is
  left out and the tag is listed in ``missing-digests.txt`` (assets uploaded before GitHub computed
  digests): such a listing is partial, every other one complete. The generator also leaves out a name
  it cannot parse (none of flash-attn's wheel names) and a ``cxx11abiFALSE`` wheel with no
  ``cxx11abiTRUE`` twin: a complete listing says "no" for a TRUE wheel, and for a FALSE one only where
  its TRUE twin is listed.

A complete listing is complete as of the commit that wrote it (``as_of``): a wheel attached later is
not in it, so it decides only for a torch (and CPython) that reached PyPI before then.

Usage::

    python scripts/build_assets_kb.py --nix-repo /work/.mirror/sirati+nix-torch-bin-pascal/repo
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import sys
from pathlib import Path
from typing import Any

from gitrepo import git, git_file
from kb_wheels import WHEEL_NAME, utc

REPO = "sirati/nix-torch-bin-pascal"
FOLDER = "pkgs/flash-attn/binary-hashes"
MISSING = "pkgs/flash-attn/missing-digests.txt"
# The generator's lines that make a listing complete: each must still read so at the commit used.
GENERATOR = {
    "generate-hashes/source_github/wheel_source.py": (
        'wheel_filter or (lambda name: name.endswith(".whl"))',  # every .whl asset
        "if len(inline_assets) < 100:",  # the release's inline list, else every page of its assets
        "self.skipped_no_digest.append(name)",  # no digest: left out, and the tag recorded
    ),
    "generate-hashes/github_release_runner/collector.py": (
        "skipping FALSE-only wheel.",  # a FALSE wheel with no TRUE twin is left out
    ),
}
OUT = Path(__file__).resolve().parent.parent / "fa_lint" / "kb" / "assets.json"
_ENTRY = re.compile(
    r'name = "(?P<file>[^"]+)";\s*\n\s*url = "(?P<url>[^"]+)";\s*\n\s*hash = "sha256-(?P<sri>[^"]+)";'
)


class AssetsError(Exception):
    """A listing shaped in a way this script does not know: never guess."""


def _hex(sri: str) -> str:
    return base64.b64decode(sri).hex()


def generator_lines(repo: Path, commit: str) -> list[str]:
    """``path:line: text`` for each generator line that makes a listing complete."""
    out = []
    for path, needles in GENERATOR.items():
        text = git_file(repo, commit, path)
        if text is None:
            raise AssetsError(f"{commit[:12]}:{path}: missing")
        lines = text.splitlines()
        for needle in needles:
            at = next((i for i, line in enumerate(lines) if needle in line), None)
            if at is None:
                raise AssetsError(f"{commit[:12]}:{path}: no line reads {needle!r}")
            out.append(f"{REPO}@{commit[:12]}:{path}:{at + 1}: {lines[at].strip()}")
    return out


def listing(text: str, where: str) -> list[dict[str, Any]]:
    """Every wheel a .nix listing names, with its sha256 (hex) and line."""
    found = []
    for m in _ENTRY.finditer(text):
        name = WHEEL_NAME.fullmatch(m["file"])
        url = m["url"].replace("%2B", "+")
        release = "https://github.com/Dao-AILab/flash-attention/releases/download/"
        if name is None or url != f"{release}v{name['version']}/{m['file']}":
            raise AssetsError(f"{where}: {m['file']!r} is not a flash-attn release wheel at its URL")
        line = text.count("\n", 0, m.start()) + 1
        found.append({"file": m["file"], "sha256": _hex(m["sri"]), "at": f"{where}:{line}"})
    if not found:
        raise AssetsError(f"{where}: no wheel listed")
    return found


def _tag_of(files: list[dict[str, Any]], where: str) -> str:
    versions = {WHEEL_NAME.fullmatch(f["file"])["version"] for f in files}  # type: ignore[index]
    if len(versions) != 1:
        raise AssetsError(f"{where}: wheels of several releases {sorted(versions)}")
    return versions.pop()


def build(repo: Path, commit: str) -> dict[str, Any]:
    date = utc(git(repo, "show", "-s", "--format=%cI", commit).strip())
    missing_text = git_file(repo, commit, MISSING) or ""
    partial = {
        line.strip().removeprefix("v"): i + 1
        for i, line in enumerate(missing_text.splitlines())
        if line.strip() and not line.startswith("#")
    }
    generator = generator_lines(repo, commit)
    releases: dict[str, Any] = {}
    for path in git(repo, "ls-tree", "--name-only", commit, f"{FOLDER}/").split():
        where = f"{REPO}@{commit[:12]}:{path}"
        files = listing(git_file(repo, commit, path) or "", where)
        version = _tag_of(files, where)
        complete = version not in partial
        releases[version] = {
            "complete": complete,
            "as_of": date,
            "source": where,
            "why": "every .whl asset of the release had a digest, so every one the generator parses is listed"
            if complete
            else f"{REPO}@{commit[:12]}:{MISSING}:{partial[version]} lists v{version}: its assets "
            "without a digest are left out",
            "assets": files,
        }
    ordered = sorted(releases, key=lambda v: [int(p) if p.isdigit() else 0 for p in re.split(r"[.a-z]+", v)])
    return {
        "about": __doc__.split("\n\n")[0] if __doc__ else "",
        "generator": generator,
        "releases": {v: releases[v] for v in ordered},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--nix-repo", type=Path, required=True, help=f"a clone (bare is fine) of {REPO}")
    ap.add_argument("--commit", default="4c35b95ac35ef2334e4154d1d7bb93986354357c")
    ap.add_argument("-o", "--output", type=Path, default=OUT)
    args = ap.parse_args(argv)
    try:
        doc = build(args.nix_repo, args.commit)
    except AssetsError as exc:
        print(f"build_assets_kb: {exc}", file=sys.stderr)
        return 1
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
