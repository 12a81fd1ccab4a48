#!/usr/bin/env python3
"""Regenerate fa_lint/kb/flash_attn.json from flash-attn's own source.

Maintainer script; fa-lint never runs it. For every flash-attn release on PyPI it reads
``flash_attn/flash_attn_interface.py`` as the release shipped it -- from the ``vX.Y.Z`` tag of a
flash-attention git checkout, or, for the few releases that have no tag, from the release's sdist --
and parses it with ``ast`` (never importing it). FA3 facts come from the history of
``hopper/flash_attn_interface.py`` on the checkout's default branch.

    python scripts/build_kb.py --repo ../flash-attention --pypi-json flash-attn.json \
        --sdist-dir sdists/ [--download-sdists] [--output fa_lint/kb/flash_attn.json]

``--pypi-json`` is the file https://pypi.org/pypi/flash-attn/json returns; ``--fetch-pypi`` fetches it.
Releases with neither a tag nor an sdist are an error: the script never guesses.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import re
import subprocess
import sys
import tarfile
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from packaging.version import Version

# The same ast reading fa-lint verify applies to an installed interface file.
from fa_lint.verify.probe import function_params

INTERFACE = "flash_attn/flash_attn_interface.py"
FLASH_API = "csrc/flash_attn/flash_api.cpp"
FA3_INTERFACE = "hopper/flash_attn_interface.py"
FA3_SETUP = "hopper/setup.py"
FUNCTION = "flash_attn_with_kvcache"
PYPI_JSON = "https://pypi.org/pypi/flash-attn/json"

# A feature is named after the flash_attn_with_kvcache parameter that first exposes it.
FEATURES = {
    "block_table": "paged-kv",
    "cache_batch_idx": "cache-batch-idx",
    "rotary_cos": "rotary",
    "window_size": "sliding-window",
    "alibi_slopes": "alibi",
    "softcap": "softcap",
    "cache_leftpad": "cache-leftpad",
    "return_softmax_lse": "return-lse",
}
PAGE_BLOCK_RE = re.compile(r"page_block_size\s*%\s*(\d+)\s*==\s*0")


def kvcache_params(source: str) -> list[str] | None:
    """Parameter names of the module-level flash_attn_with_kvcache, or None when absent."""
    return function_params(source).get(FUNCTION)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def git_file(repo: Path, rev: str, path: str) -> str | None:
    proc = subprocess.run(
        ["git", "-C", str(repo), "show", f"{rev}:{path}"], check=False, capture_output=True, text=True
    )
    return proc.stdout if proc.returncode == 0 else None


def sdist_files(sdist: Path, *wanted: str) -> dict[str, str]:
    found: dict[str, str] = {}
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            # sdists hold one top-level folder, flash_attn-X.Y.Z/
            inner = member.name.split("/", 1)[-1]
            if inner in wanted and member.isfile():
                data = tar.extractfile(member)
                if data is not None:
                    found[inner] = io.TextIOWrapper(data, encoding="utf-8").read()
    return found


def release_record(
    version: str, uploaded: str | None, yanked: bool, source: str, interface: str | None, api: str | None
) -> dict[str, Any]:
    params = kvcache_params(interface) if interface is not None else None
    multiple = None
    if api is not None and (m := PAGE_BLOCK_RE.search(api)):
        multiple = int(m.group(1))
    features = []
    if params is not None:
        features.append("kvcache")
        features += [f for p, f in FEATURES.items() if p in params]
    return {
        "version": version,
        "uploaded": uploaded,
        "yanked": yanked,
        "source": source,
        "kvcache_params": params,
        "features": features,
        "page_block_multiple": multiple if params and "block_table" in params else None,
    }


def fa3_facts(repo: Path) -> dict[str, Any]:
    """First default-branch commits whose FA3 interface names each paged-KV parameter, per function.

    FA3 took paged KV as ``block_table`` on flash_attn_varlen_func first (Nov 2024, while the
    kvcache entry point still had it commented out), then as ``page_table`` everywhere (Jan 2025).
    """
    log = git(repo, "log", "--reverse", "--format=%H %cs", "HEAD", "--", FA3_INTERFACE)
    first: dict[str, dict[str, dict[str, str]]] = {}
    last: dict[str, list[str]] = {}
    for line in log.splitlines():
        commit, date = line.split()
        text = git_file(repo, commit, FA3_INTERFACE)
        if text is None:
            continue
        try:
            functions = function_params(text)
        except SyntaxError:
            continue
        last = functions
        for fn in ("flash_attn_with_kvcache", "flash_attn_varlen_func"):
            for name in ("block_table", "page_table"):
                if name in functions.get(fn, ()):
                    first.setdefault(fn, {}).setdefault(name, {"commit": commit[:12], "date": date})
    setup = git_file(repo, "HEAD", FA3_SETUP) or ""
    m = re.search(r'PACKAGE_NAME\s*=\s*"([^"]+)"', setup)
    return {
        "distribution": m.group(1) if m else None,
        "module": "flash_attn_interface",
        "paged_params_since": first,
        "kvcache_paged_param_now": next(
            (p for p in ("page_table", "block_table") if p in last.get(FUNCTION, ())), None
        ),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="flash-attention git checkout (bare is fine)")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--pypi-json", type=Path, help="saved copy of " + PYPI_JSON)
    src.add_argument("--fetch-pypi", action="store_true", help="fetch " + PYPI_JSON)
    ap.add_argument("--sdist-dir", type=Path, help="sdists for releases without a git tag")
    ap.add_argument("--download-sdists", action="store_true", help="download missing sdists into --sdist-dir")
    ap.add_argument("--output", type=Path, default=Path(__file__).parents[1] / "fa_lint/kb/flash_attn.json")
    args = ap.parse_args(argv)

    if args.fetch_pypi:
        with urllib.request.urlopen(PYPI_JSON, timeout=60) as resp:
            pypi = json.load(resp)
    else:
        pypi = json.loads(args.pypi_json.read_text())
    tags = set(git(args.repo, "tag").split())
    releases = []
    for version, files in sorted(pypi["releases"].items(), key=lambda kv: Version(kv[0])):
        if not files:
            continue
        uploaded = min(f["upload_time"] for f in files)[:10]
        yanked = all(f.get("yanked") for f in files)
        tag = f"v{version}"
        if tag in tags:
            record = release_record(
                version,
                uploaded,
                yanked,
                f"tag {tag}",
                git_file(args.repo, tag, INTERFACE),
                git_file(args.repo, tag, FLASH_API),
            )
        else:
            sdist = next((f for f in files if f["packagetype"] == "sdist"), None)
            if sdist is None or args.sdist_dir is None:
                print(f"error: {version} has no tag {tag} and no sdist to read", file=sys.stderr)
                return 1
            path = args.sdist_dir / sdist["filename"]
            if not path.exists():
                if not args.download_sdists:
                    print(f"error: {path} missing (use --download-sdists)", file=sys.stderr)
                    return 1
                args.sdist_dir.mkdir(parents=True, exist_ok=True)
                # PyPI mirrors may answer with URLs relative to the JSON document
                urllib.request.urlretrieve(urllib.parse.urljoin(PYPI_JSON, sdist["url"]), path)
            found = sdist_files(path, INTERFACE, FLASH_API)
            record = release_record(
                version,
                uploaded,
                yanked,
                f"sdist {sdist['filename']}",
                found.get(INTERFACE),
                found.get(FLASH_API),
            )
        releases.append(record)

    newest_upload = max(r["uploaded"] for r in releases)
    doc = {
        "schema": 1,
        "generated": dt.date.today().isoformat(),
        "pypi_snapshot": newest_upload,
        "generator": "scripts/build_kb.py",
        "features": {"kvcache": FUNCTION, **{f: p for p, f in FEATURES.items()}},
        "releases": releases,
        "fa3": fa3_facts(args.repo),
    }
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.output}: {len(releases)} releases", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
