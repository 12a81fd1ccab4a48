#!/usr/bin/env python3
"""Regenerate fa_lint/kb/images.json: which distribution (and so which C library) a base image runs.

Maintainer script; fa-lint never runs it. Two public records, read from git checkouts, never guessed:

- docker-library/official-images: ``library/<repo>`` lists every tag of an official image with the folder
  it is built from (``Directory: 3.12/slim-bookworm``) or, for ubuntu, the release number among its
  tags. The whole history is read, so a tag that is no longer built (``python:3.8``, ``ubuntu:20.04``)
  maps to what it last pointed at.
- mayeut/pep600_compliance: ``cache/x86_64/<distro>-<version>.json`` holds the ``glibc_version`` that
  project measured in each distribution's own container image (files it dropped are read from history).

- ContinuumIO/docker-images and conda-forge/miniforge-images: which base each published
  continuumio/miniconda3 and condaforge/miniforge3 (mambaforge, ...) tag was built from, by the
  workflows that push it (scripts/images_derived.py);
- the modal client's wheel (``pip download --no-deps modal``): the Dockerfile ``Image.debian_slim()``
  and ``Image.micromamba()`` write, and the Debian release of each image-builder version.

The rows no script can reach (what the flavors of ``nvidia/cuda`` and ``pytorch/pytorch`` carry, the
distribution of pytorch/pytorch and NGC ``nvcr.io/nvidia/pytorch`` releases, which C library Alpine
uses) come from scripts/data/images.json, each with its source, and are copied in.

    python scripts/build_images_kb.py --official-images ../.mirror/docker-library+official-images/repo \
        --pep600 ../.mirror/mayeut+pep600_compliance/repo \
        --miniconda ../.mirror/ContinuumIO+docker-images/repo \
        --miniforge ../.mirror/conda-forge+miniforge-images/repo \
        --modal-wheel modal-1.6.4-py3-none-any.whl [--output fa_lint/kb/images.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import images_derived as derived  # noqa: E402  (a sibling script, not a package)
from gitrepo import git, git_file  # noqa: E402

CURATED = ROOT / "scripts/data/images.json"
REPOS = ("ubuntu", "debian", "python", "rockylinux", "almalinux", "amazonlinux", "centos", "oraclelinux")
# Debian's release names, from library/debian itself: each block tags a suite and its number together
_SUITE_IN_DIR = re.compile(r"^(?:[\d.]+(?:-rc)?/)?(?:slim-)?([a-z]+?)(\d[\d.]*)?(?:/|$)")


class ImagesError(Exception):
    """A record shaped in a way this script does not know."""


def blocks(text: str) -> Iterator[dict[str, str]]:
    """The RFC 2822-like entries of a library file."""
    current: dict[str, str] = {}
    for line in [*text.splitlines(), ""]:
        if not line.strip():
            if current:
                yield current
            current = {}
        elif line.startswith("#"):
            continue
        elif line[0] not in " \t" and ":" in line:
            key, _, value = line.partition(":")
            current[key.strip()] = value.strip()
    return


def tags_of(block: dict[str, str]) -> list[str]:
    return [
        t.strip() for t in f"{block.get('Tags', '')},{block.get('SharedTags', '')}".split(",") if t.strip()
    ]


def show(repo: Path, commit: str, path: str) -> str:
    """A file at a commit; empty where that commit deleted it."""
    return git_file(repo, commit, path) or ""


def history(repo: Path, name: str) -> list[tuple[str, str]]:
    """(commit, date) of every version of library/NAME, oldest first."""
    out = git(repo, "log", "--reverse", "--format=%H %cs", "--", f"library/{name}")
    return [tuple(line.split()) for line in out.splitlines()]  # type: ignore[misc]


def suites(repo: Path) -> dict[str, str]:
    """Debian suite name -> "debian-N", from every library/debian block that tags both."""
    found: dict[str, str] = {}
    for commit, _ in history(repo, "debian"):
        for block in blocks(show(repo, commit, "library/debian")):
            tags = tags_of(block)
            numbers = [t for t in tags if re.fullmatch(r"\d+", t)]
            names = [
                t for t in tags if re.fullmatch(r"[a-z]+", t) and t not in ("latest", "stable", "testing")
            ]
            if len(numbers) == 1 and len(names) == 1 and not names[0].startswith(("old", "un", "exp", "rc")):
                found[names[0]] = f"debian-{numbers[0]}"
    return found


def distro_of(name: str, block: dict[str, str], debian: dict[str, str]) -> str | None:
    """The distribution one block of library/NAME is built on, as pep600_compliance names it."""
    tags = tags_of(block)
    directory = block.get("Directory", "")
    if "windows" in directory or "nanoserver" in directory or any("windows" in t for t in tags):
        return "windows"
    if name == "ubuntu":
        version = next((t for t in tags if re.fullmatch(r"\d\d\.\d\d", t)), None)
        return f"ubuntu-{version}" if version else None
    if name in ("debian", "python"):
        m = _SUITE_IN_DIR.match(directory)
        if m is None:
            return None
        if m.group(1) == "alpine":
            return "alpine"
        return debian.get(m.group(1))
    numbers = sorted((t for t in tags if re.fullmatch(r"\d+", t)), key=int)
    if name == "centos" and not numbers:
        numbers = [t.removeprefix("centos") for t in tags if re.fullmatch(r"centos\d+", t)]
    return f"{name}-{numbers[0]}" if numbers else None


def image_tags(repo: Path, name: str, debian: dict[str, str]) -> dict[str, dict[str, str]]:
    """Every tag library/NAME has ever listed -> the distribution it last pointed at, and when."""
    seen: dict[str, dict[str, str]] = {}
    for commit, date in history(repo, name):
        for block in blocks(show(repo, commit, f"library/{name}")):
            distro = distro_of(name, block, debian)
            if distro is None or distro == "windows":
                continue  # a tag shared with windows builds: its Linux entry decides
            for tag in tags_of(block):
                seen[tag] = {"distro": distro, "seen": date}
    return seen


def glibc(repo: Path) -> dict[str, dict[str, str]]:
    """pep600_compliance's measured glibc of each x86_64 distribution image, current files and dropped."""
    head = git(repo, "rev-parse", "HEAD").strip()[:12]
    out: dict[str, dict[str, str]] = {}
    names = set(git(repo, "ls-tree", "--name-only", "HEAD", "cache/x86_64/").split())
    dropped = git(repo, "log", "--diff-filter=D", "--name-only", "--format=", "--", "cache/x86_64/").split()
    for path in sorted(names | set(dropped)):
        if not path.endswith(".json"):
            continue
        rev = head if path in names else git(repo, "log", "-1", "--format=%H", "--", path).strip() + "^"
        text = git(repo, "show", f"{rev}:{path}")
        m = re.search(r'"glibc_version": "([\d.]+)"', text)
        if m is None:
            raise ImagesError(f"{path}: no glibc_version")
        commit = git(repo, "rev-parse", rev).strip()[:12]
        out[Path(path).stem] = {"glibc": m.group(1), "at": f"mayeut/pep600_compliance@{commit}:{path}"}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--official-images", type=Path, required=True, help="docker-library/official-images")
    ap.add_argument("--pep600", type=Path, required=True, help="mayeut/pep600_compliance")
    ap.add_argument("--miniconda", type=Path, required=True, help="ContinuumIO/docker-images")
    ap.add_argument("--miniforge", type=Path, required=True, help="conda-forge/miniforge-images")
    ap.add_argument("--modal-wheel", type=Path, required=True, help="the modal client's wheel")
    ap.add_argument("--output", type=Path, default=ROOT / "fa_lint/kb/images.json")
    args = ap.parse_args(argv)
    try:
        doc = build(args.official_images, args.pep600)
        doc["derived"] = [
            derived.miniconda(args.miniconda, doc["tags"]),
            *derived.miniforge(args.miniforge, doc["tags"]),
        ]
        doc["modal"] = derived.modal(args.modal_wheel, doc["debian_suites"])
    except (ImagesError, derived.DerivedError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    args.output.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def build(official: Path, pep600: Path) -> dict[str, Any]:
    debian = suites(official)
    libc = glibc(pep600)
    tags: dict[str, dict[str, str]] = {}
    for name in REPOS:
        found = image_tags(official, name, debian)
        if name == "python":
            # a tag that names its suite (3.11-slim-bookworm, 3.12-alpine3.20) is read from the name
            found = {t: v for t, v in found.items() if not _names_suite(t, debian)}
        tags[name] = {t: v["distro"] for t, v in sorted(found.items())}
    curated = json.loads(CURATED.read_text(encoding="utf-8"))
    head = git(official, "log", "-1", "--format=%H %cs").split()
    return {
        "schema": 1,
        "generated": dt.date.today().isoformat(),
        "generator": "scripts/build_images_kb.py",
        "official_images": {"commit": head[0][:12], "date": head[1]},
        "debian_suites": debian,
        "glibc": libc,
        "tags": tags,
        **curated,
    }


def _names_suite(tag: str, debian: dict[str, str]) -> bool:
    return "alpine" in tag or any(re.search(rf"(?:^|-){s}(?:$|-)", tag) for s in debian)


if __name__ == "__main__":
    sys.exit(main())
