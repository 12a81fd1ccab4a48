#!/usr/bin/env python3
"""Regenerate fa_lint/kb/installers.json: how each installer builds an sdist, per release, from its source.

Maintainer script; fa-lint never runs it. flash-attn publishes an sdist with no pyproject.toml whose
setup.py imports torch first, so whether an installer builds it where torch can be seen decides whether
the install works (FAL012). What decides that is each installer's own code, read here at every release
tag of a git checkout (bare is fine), with the tag, file and line that show it:

* pip (``src/pip/_internal/pyproject.py``): when a project with no pyproject.toml is built with PEP 517
  (isolated) rather than the legacy ``setup.py`` path, which sees the environment's torch;
* uv: the first release with each ``[tool.uv]`` setting that gives flash-attn's build torch
  (``no-build-isolation-package``, ``extra-build-dependencies``, ``match-runtime``), the first that
  refuses ``match-runtime`` for a package without static metadata, and the releases that read the
  ``Dynamic:`` fields of an sdist's PKG-INFO without regard to case (setuptools writes
  ``Dynamic: requires-dist``, so those releases take flash-attn's metadata as dynamic and refuse
  ``match-runtime`` for it);
* pixi: the first release with ``[pypi-options] no-build-isolation`` (a list of names; later also
  ``true``), and the first whose pixi.toml reader skips a ``[tool]`` table unread;
* PDM: the ``build_isolation`` setting (on unless set off) and ``[tool.pdm.options]``;
* Poetry: the first release whose installer builds every sdist through its isolated builder.

    python scripts/build_installers_kb.py --pip ../pip --uv ../uv --pixi ../pixi --pdm ../pdm \\
        --poetry ../poetry [--output fa_lint/kb/installers.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

Found = str | None  # "TAG:path:line: text", or None


def tags(repo: Path, since: str = "0") -> list[str]:
    """The final release tags of ``repo`` (``25.3``, ``v0.29.0``), oldest first, from ``since`` on."""
    out = subprocess.run(["git", "-C", str(repo), "tag"], check=True, capture_output=True, text=True).stdout
    found = []
    for tag in out.split():
        try:
            version = Version(tag.removeprefix("v"))
        except InvalidVersion:
            continue
        if not version.is_prerelease and not version.is_devrelease and version >= Version(since):
            found.append((version, tag))
    return [t for _, t in sorted(found)]


def grep(repo: Path, tag: str, pattern: str, paths: tuple[str, ...]) -> Found:
    """The first line under ``paths`` at ``tag`` that matches ``pattern`` (a Perl regex), as evidence."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "grep", "-n", "-P", "-I", pattern, tag, "--", *paths],
        check=False,
        capture_output=True,
        text=True,
    )
    for line in proc.stdout.splitlines():
        if "/tests/" not in line and "/test_" not in line:
            at, _, text = _split(line)
            return f"{at}: {text.strip()}"
    return None


def _split(line: str) -> tuple[str, str, str]:
    """``TAG:path:line:text`` as ("TAG:path:line", ":", "text")."""
    parts = line.split(":", 3)
    return ":".join(parts[:3]), ":", parts[3] if len(parts) > 3 else ""


def first(all_tags: list[str], holds: Callable[[str], Found]) -> dict[str, Any] | None:
    """Where ``holds`` finds its line: the first tag (``since``), the first tag after it where the line
    is gone (``until``, None while the last tag still has it), each tag read in turn, with the evidence
    of the first and of the last tag that has it."""
    seen = [(t, holds(t)) for t in all_tags]
    start = next((i for i, (_, e) in enumerate(seen) if e), None)
    if start is None:
        return None
    end = next((i for i in range(start, len(seen)) if not seen[i][1]), len(seen))
    if any(e for _, e in seen[end:]):
        raise SystemExit(f"{seen[start][1]}: the fact comes and goes after {seen[end][0]}: read the tags")
    return {
        "since": seen[start][0].removeprefix("v"),
        "until": seen[end][0].removeprefix("v") if end < len(seen) else None,
        "evidence": seen[start][1],
        "last": seen[end - 1][1],
    }


def every(all_tags: list[str], holds: Callable[[str], Found]) -> list[dict[str, str]]:
    """Every tag where ``holds`` finds its line (a fact that came and went), with its evidence."""
    return [{"release": t.removeprefix("v"), "evidence": e} for t in all_tags if (e := holds(t))]


# --- pip --------------------------------------------------------------------------------------------

PIP_FILE = ("src/pip/_internal/pyproject.py",)


def pip(repo: Path) -> dict[str, Any]:
    """When pip builds a project with no pyproject.toml (flash-attn's sdist) in isolation."""
    all_tags = tags(repo, "20.0")
    legacy = first(
        all_tags, lambda t: grep(repo, t, r"^(?!.*def ).*\buse_pep517\b.*= ?has_pyproject\b", PIP_FILE)
    )
    setuptools = first(all_tags, lambda t: grep(repo, t, r'find_spec\("setuptools"\)', PIP_FILE))
    wheel = first(all_tags, lambda t: grep(repo, t, r'find_spec\("wheel"\)', PIP_FILE))
    # from the release whose pyproject.py has no legacy path left: no use_pep517 decision at all
    gone = next(
        (
            t
            for t in all_tags
            if grep(repo, t, r"\buse_pep517\b", PIP_FILE) is None and Version(t) > Version("23")
        ),
        None,
    )
    resolver = ("src/pip/_internal/resolution/resolvelib/candidates.py",)
    name_check = first(
        all_tags,
        lambda t: grep(repo, t, r"self\._name != dist\.canonical_name|MetadataInconsistent\(", resolver),
    )
    return {
        "metadata_name_check": name_check,
        "legacy_unless_pyproject": legacy,
        "isolated_without_setuptools": setuptools,
        "isolated_without_wheel": wheel,
        "always_isolated_since": gone,
        "always_isolated_evidence": f"{gone}:{PIP_FILE[0]}: no use_pep517 decision left (the legacy "
        "setup.py path is gone; load_pyproject_toml assumes setuptools.build_meta:__legacy__)"
        if gone
        else None,
    }


# --- uv ---------------------------------------------------------------------------------------------


def uv(repo: Path) -> dict[str, Any]:
    all_tags = tags(repo, "0.1.0")
    settings = ("crates/uv-settings/src/settings.rs", "crates/uv-workspace/src/pyproject.rs")
    found: dict[str, Any] = {
        "no_build_isolation_package": first(
            all_tags, lambda t: grep(repo, t, r"pub no_build_isolation_package\b", settings)
        ),
        "extra_build_dependencies": first(
            all_tags, lambda t: grep(repo, t, r"pub extra_build_dependencies\b", settings)
        ),
        "match_runtime": first(all_tags, lambda t: grep(repo, t, r"\bmatch_runtime\b", settings)),
        "match_runtime_refused_without_static_metadata": first(
            all_tags,
            lambda t: grep(
                repo,
                t,
                r"does not declare static metadata, making runtime-matching",
                ("crates/uv-build-frontend",),
            ),
        ),
        "extra_build_dependencies_stable": first(
            all_tags[all_tags.index("0.8.4") :] if "0.8.4" in all_tags else all_tags,
            lambda t: (
                None
                if grep(repo, t, r"The `extra-build-dependencies` option is experimental", ("crates/uv/src",))
                else f"{t}:crates/uv/src: no 'experimental' warning for extra-build-dependencies"
            ),
        ),
    }
    resolver = ("crates/uv-pypi-types/src/metadata/metadata_resolver.rs",)
    recent = [t for t in all_tags if Version(t) >= Version("0.8.0")]
    found["dynamic_case_insensitive"] = every(
        recent, lambda t: grep(repo, t, r'eq_ignore_ascii_case\("Requires-Dist"\)', resolver)
    )
    return found


# --- pixi -------------------------------------------------------------------------------------------


def pixi(repo: Path) -> dict[str, Any]:
    all_tags = tags(repo, "0.10.0")
    code = ("crates", "src")
    return {
        "no_build_isolation": first(
            all_tags,
            lambda t: grep(
                repo, t, r"\bno_build_isolation\b\s*:\s*(Option<Vec<String>>|NoBuildIsolation)", code
            ),
        ),
        "no_build_isolation_all": first(
            all_tags, lambda t: grep(repo, t, r"NoBuildIsolation::All\b", ("crates",))
        ),
        "tool_table_ignored": first(
            all_tags,
            lambda t: grep(repo, t, r'rename = "tool"\)?\]|Parse the tool section by ignoring it', code),
        ),
        "extra_build_dependencies": first(
            all_tags, lambda t: grep(repo, t, r'"extra-build-dependencies"', ("crates/pixi_manifest",))
        ),
    }


# --- PDM --------------------------------------------------------------------------------------------


def pdm(repo: Path) -> dict[str, Any]:
    all_tags = tags(repo, "2.0.0")
    return {
        "build_isolation_setting": first(
            all_tags,
            lambda t: grep(repo, t, r'"build_isolation": ConfigItem', ("src/pdm/project/config.py",)),
        ),
        "no_isolation_option": first(
            all_tags, lambda t: grep(repo, t, r'"--no-isolation"', ("src/pdm/cli/options.py",))
        ),
        "options_table": first(
            all_tags, lambda t: grep(repo, t, r'settings\.get\("options"', ("src/pdm/core.py",))
        ),
    }


# --- Poetry -----------------------------------------------------------------------------------------


def poetry(repo: Path) -> dict[str, Any]:
    all_tags = tags(repo, "1.2.0")
    chef = ("src/poetry/installation/chef.py",)
    switch = r"(no[-_]build[-_]isolation|build[-_]isolation)"
    latest = all_tags[-1]
    return {
        "isolated_builder": first(
            all_tags, lambda t: grep(repo, t, r"isolated_builder\(|IsolatedEnv\(|isolated_build_env\(", chef)
        ),
        # pip installed sdists before the modern installer became the default (installer.modern-installation)
        "modern_installation_default": first(
            all_tags,
            lambda t: grep(repo, t, r'"modern-installation": True', ("src/poetry/config/config.py",)),
        ),
        "modern_installation_removed": first(
            all_tags[all_tags.index("1.4.0") :] if "1.4.0" in all_tags else all_tags,
            lambda t: (
                None
                if grep(repo, t, r"modern-installation", ("src/poetry/config/config.py",))
                else f"{t}:src/poetry/config/config.py: no installer.modern-installation setting"
            ),
        ),
        "isolation_switch_at_latest": grep(repo, latest, switch, ("src/poetry",)),
        "latest": latest,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    for name in ("pip", "uv", "pixi", "pdm", "poetry"):
        ap.add_argument(f"--{name}", type=Path, required=True, help=f"{name} git checkout (bare is fine)")
    ap.add_argument("--output", type=Path, default=Path("fa_lint/kb/installers.json"))
    args = ap.parse_args(argv)
    doc: dict[str, Any] = {
        "schema": 1,
        "generator": "scripts/build_installers_kb.py",
        "sources": {
            "pip": "https://github.com/pypa/pip",
            "uv": "https://github.com/astral-sh/uv",
            "pixi": "https://github.com/prefix-dev/pixi",
            "pdm": "https://github.com/pdm-project/pdm",
            "poetry": "https://github.com/python-poetry/poetry",
        },
        "pip": pip(args.pip),
        "uv": uv(args.uv),
        "pixi": pixi(args.pixi),
        "pdm": pdm(args.pdm),
        "poetry": poetry(args.poetry),
    }
    if doc["poetry"]["isolation_switch_at_latest"]:
        print("Poetry's latest release has a build-isolation switch: read it", file=sys.stderr)
        return 1
    args.output.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
