#!/usr/bin/env python3
"""Which flash-attn release pip and uv install from a range, and how uv takes a marked source, read from
clones of pypa/pip and astral-sh/uv at each tag (no network; the clones are the arguments).

For each tag it prints, with file:line, the lines docs/wheels.md and FAL011 rest on:

- pip: the finder's sort key, in which a candidate's version comes before whether it is a wheel (only
  ``--prefer-binary`` puts wheels first, and flash-attn's PyPI files are all sdists); the resolver trying
  the finder's candidates newest first; ``pip install`` building the chosen sdists after resolving, and
  failing on a build that fails (no going back to an older release);
- uv: the default resolution strategy taking the highest version, the candidates walked from the top of
  the range; ``uv pip install`` preparing (building) what it resolved; its lowering of a
  ``[tool.uv.sources]`` entry: the requirement taken from the source where the source's marker holds
  and from the index elsewhere, a URL source keeping no version specifier.

    python scripts/installer_order.py /path/to/pip /path/to/uv [--pip-tags 26.2.1 ...] [--uv-tags 0.12.5 ...]
"""

from __future__ import annotations

import argparse
import re
import subprocess

PIP = {
    "sort key: version before wheel-or-sdist (binary_preference set only with --prefer-binary)": (
        "src/pip/_internal/index/package_finder.py",
        [r"def _sort_key\(self", r"binary_preference = 1", r"^\s+candidate\.version,$"],
    ),
    "resolver: the finder's candidates newest first": (
        "src/pip/_internal/resolution/resolvelib/factory.py",
        [r"PackageFinder returns earlier versions first", r"for ican in reversed\(icans\)"],
    ),
    "install: resolve, then build the sdists; a failed build is an error": (
        "src/pip/_internal/commands/install.py",
        [
            r"requirement_set = resolver\.resolve\(",
            r"_, build_failures = build\(",
            r"raise InstallWheelBuildError",
        ],
    ),
}
UV = {
    "strategy: highest by default": (
        "crates/uv-resolver/src/candidate_selector.rs",
        [r"ResolutionStrategy::Highest => true", r"version_map\.iter_included\(range\)\.rev\(\)"],
    ),
    "pip install: resolve, then prepare (build) what was resolved": (
        "crates/uv/src/commands/pip/install.rs",
        [r"operations::resolve\(", r"operations::install\("],
    ),
    "sources: the index where no source's marker holds; the source's marker elsewhere": (
        "crates/uv-distribution/src/metadata/lowering.rs",
        [r"let mut remaining = total\.negate\(\);", r"marker = marker\.and\(requirement\.marker\);"],
    ),
    "a URL source keeps no version specifier": (
        "crates/uv-distribution/src/metadata/lowering.rs",
        [r"^fn url_source\(", r"Ok\(RequirementSource::Url \{"],
    ),
    "no check that the URL's version matches the requirement's specifier": (
        "crates/uv-distribution-types/src/requirement.rs",
        [r"TODO\(konsti\): Track and verify version specifier"],
    ),
}


def _show(repo: str, tag: str, path: str) -> list[str]:
    out = subprocess.run(
        ["git", "-C", repo, "show", f"{tag}:{path}"],  # a bare mirror as well as a checkout
        check=False,
        capture_output=True,
        text=True,
    )
    return out.stdout.splitlines() if out.returncode == 0 else []


def _lines(lines: list[str], pattern: str) -> str:
    found = [str(i + 1) for i, text in enumerate(lines) if re.search(pattern, text)]
    return ",".join(found[:3]) or "MISSING"


def report(repo: str, tags: list[str], facts: dict[str, tuple[str, list[str]]]) -> list[str]:
    out = []
    for tag in tags:
        for what, (path, patterns) in facts.items():
            lines = _show(repo, tag, path)
            where = " ".join(f"{tag}:{path}:{_lines(lines, p)}" for p in patterns)
            out.append(f"{what}: {where}")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pip")
    p.add_argument("uv")
    p.add_argument("--pip-tags", nargs="*", default=["26.2.1"])
    p.add_argument("--uv-tags", nargs="*", default=["0.12.5"])
    args = p.parse_args()
    for line in [*report(args.pip, args.pip_tags, PIP), *report(args.uv, args.uv_tags, UV)]:
        print(line)


if __name__ == "__main__":
    main()
