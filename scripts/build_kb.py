#!/usr/bin/env python3
"""Regenerate fa_lint/kb/flash_attn.json from flash-attn's own source.

Maintainer script; fa-lint never runs it. For every flash-attn release on PyPI it reads
``flash_attn/flash_attn_interface.py`` as the release shipped it -- from the ``vX.Y.Z`` tag of a
flash-attention git checkout, or, for the few releases that have no tag, from the release's sdist --
and parses it with ``ast`` (never importing it). FA3 facts come from the history of
``hopper/flash_attn_interface.py`` on the checkout's default branch.

    python scripts/build_kb.py --repo ../flash-attention --pypi-json flash-attn.json \
        --torch-json torch.json --seen scripts/data/flash_attn_wheels_seen.json \
        --sdist-dir sdists/ [--download-sdists] [--output fa_lint/kb/flash_attn.json]

``--pypi-json`` is the file https://pypi.org/pypi/flash-attn/json returns and ``--torch-json`` the one
https://pypi.org/pypi/torch/json returns (torch's upload times: when each torch series came out);
``--fetch-pypi`` fetches both. ``--seen`` lists release wheels public files show, that no tag's matrix
built (wheels attached to a release later). Releases with neither a tag nor an sdist are an error: the
script never guesses.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import re
import sys
import tarfile
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from gitrepo import git, git_file
from kb_wheels import (
    SETUP,
    TORCH_JSON,
    WheelFactsError,
    later_builds,
    seen_wheels,
    torch_index,
    utc,
    wheel_facts,
)
from packaging.version import Version

# The same ast reading fa-lint verify applies to an installed interface file.
from fa_lint.verify.probe import function_params

INTERFACE = "flash_attn/flash_attn_interface.py"
FLASH_API = "csrc/flash_attn/flash_api.cpp"
# The ROCm build (Composable Kernel backend) checks the page size of its own kvcache entry point.
CK_KVCACHE = "csrc/flash_attn_ck/mha_fwd_kvcache.cpp"
FA3_INTERFACE = "hopper/flash_attn_interface.py"
FA3_SETUP = "hopper/setup.py"
FUNCTION = "flash_attn_with_kvcache"
VARLEN = "flash_attn_varlen_func"
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
# ... and after a flash_attn_varlen_func parameter: paged KV on the varlen entry point (2.5.7).
VARLEN_FEATURES = {"block_table": "paged-varlen"}
PAGE_BLOCK_RE = re.compile(r"page_block_size\s*%\s*(\d+)\s*==\s*0")


def kvcache_params(source: str) -> list[str] | None:
    """Parameter names of the module-level flash_attn_with_kvcache, or None when absent."""
    return function_params(source).get(FUNCTION)


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


def _multiple(text: str | None, where: str) -> dict[str, Any] | None:
    """The ``page_block_size % N == 0`` check of a C++ file: N, and the line it is on."""
    if text is None or not (m := PAGE_BLOCK_RE.search(text)):
        return None
    line = text.count("\n", 0, m.start())
    return {"multiple": int(m[1]), "at": f"{where}:{line + 1}", "text": text.splitlines()[line].strip()}


def release_record(
    version: str,
    uploaded: str | None,
    yanked: bool,
    source: str,
    interface: str | None,
    api: str | None,
    wheels: dict[str, Any] | None = None,
    *,
    tagged: str | None = None,
    ck: str | None = None,
) -> dict[str, Any]:
    functions = function_params(interface) if interface is not None else {}
    params = functions.get(FUNCTION)
    varlen = functions.get(VARLEN, [])
    multiple = None
    if api is not None and (m := PAGE_BLOCK_RE.search(api)):
        multiple = int(m.group(1))
    features = []
    if params is not None:
        features.append("kvcache")
        features += [f for p, f in FEATURES.items() if p in params]
    features += [f for p, f in VARLEN_FEATURES.items() if p in varlen]
    where = source.removeprefix("tag ").removeprefix("sdist ")
    rocm = _multiple(ck, f"{where}:{CK_KVCACHE}") if params and "block_table" in params else None
    record = {
        "version": version,
        "uploaded": uploaded,
        "yanked": yanked,
        "source": source,
        "kvcache_params": params,
        "features": features,
        "page_block_multiple": multiple if params and "block_table" in params else None,
        # None: no tag to read the release workflow from (an sdist-only release), so unknown.
        "wheels": wheels,
    }
    if tagged is not None:
        record["tagged"] = tagged  # when the tagged commit was made: what its matrix could know of
    if rocm is not None:
        record["rocm_page_block"] = rocm
    return record


def fa3_facts(repo: Path) -> dict[str, Any]:
    """First default-branch commits whose FA3 interface names each paged-KV parameter, per function,
    and the first commit after that where it is gone again (``until``).

    FA3 took paged KV as ``block_table`` on flash_attn_varlen_func first (Nov 2024, while the
    kvcache entry point still had it commented out), then as ``page_table`` everywhere (Jan 2025).
    """
    log = git(repo, "log", "--reverse", "--first-parent", "--format=%H %cs", "HEAD", "--", FA3_INTERFACE)
    first: dict[str, dict[str, dict[str, Any]]] = {}
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
                seen = first.get(fn, {}).get(name)
                if name in functions.get(fn, ()):
                    if seen is None:
                        first.setdefault(fn, {})[name] = {"commit": commit[:12], "date": date}
                    elif "until" in seen:
                        del seen["until"]  # back again: only the last removal counts
                elif seen is not None and "until" not in seen:
                    seen["until"] = {"commit": commit[:12], "date": date}
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


def _fetch(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=120) as resp:
        return json.load(resp)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="flash-attention git checkout (bare is fine)")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--pypi-json", type=Path, help="saved copy of " + PYPI_JSON)
    src.add_argument("--fetch-pypi", action="store_true", help=f"fetch {PYPI_JSON} and {TORCH_JSON}")
    ap.add_argument("--torch-json", type=Path, help="saved copy of " + TORCH_JSON)
    ap.add_argument("--seen", type=Path, help="release wheels public files show that no matrix built")
    ap.add_argument("--sdist-dir", type=Path, help="sdists for releases without a git tag")
    ap.add_argument("--download-sdists", action="store_true", help="download missing sdists into --sdist-dir")
    ap.add_argument("--output", type=Path, default=Path(__file__).parents[1] / "fa_lint/kb/flash_attn.json")
    args = ap.parse_args(argv)

    pypi = _fetch(PYPI_JSON) if args.fetch_pypi else json.loads(args.pypi_json.read_text())
    torch_doc = _fetch(TORCH_JSON) if args.fetch_pypi else None
    if args.torch_json is not None:
        torch_doc = json.loads(args.torch_json.read_text())
    tags = set(git(args.repo, "tag").split())
    try:
        releases = _releases(args, pypi, tags)
        if isinstance(releases, str):
            print(f"error: {releases}", file=sys.stderr)
            return 1
        if args.seen is not None:
            for version, seen in seen_wheels(args.seen, releases).items():
                next(r for r in releases if r["version"] == version)["wheels"]["seen"] = seen
        later = later_builds(args.repo)
    except WheelFactsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1

    newest_upload = max(r["uploaded"] for r in releases)
    doc: dict[str, Any] = {
        "schema": 3,
        "generated": dt.date.today().isoformat(),
        "pypi_snapshot": newest_upload,
        "generator": "scripts/build_kb.py",
        "features": {
            "kvcache": FUNCTION,
            **{f: p for p, f in FEATURES.items()},
            **{f: f"{VARLEN}({p}=...)" for p, f in VARLEN_FEATURES.items()},
        },
        "releases": releases,
        "fa3": fa3_facts(args.repo),
        "later_builds": later,
    }
    if torch_doc is not None:
        doc["torch"] = torch_index(torch_doc)
    else:
        print(
            "warning: no --torch-json: no torch release dates, so no wheel is judged unknown", file=sys.stderr
        )
    args.output.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.output}: {len(releases)} releases", file=sys.stderr)
    return 0


def _releases(args: argparse.Namespace, pypi: dict[str, Any], tags: set[str]) -> list[dict[str, Any]] | str:
    """One record per release on PyPI, or why one cannot be read."""
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
                wheel_facts(args.repo, tag),
                tagged=utc(git(args.repo, "log", "-1", "--format=%cI", tag).strip()),
                ck=git_file(args.repo, tag, CK_KVCACHE),
            )
        else:
            sdist = next((f for f in files if f["packagetype"] == "sdist"), None)
            if sdist is None or args.sdist_dir is None:
                return f"{version} has no tag {tag} and no sdist to read"
            path = args.sdist_dir / sdist["filename"]
            if not path.exists():
                if not args.download_sdists:
                    return f"{path} missing (use --download-sdists)"
                args.sdist_dir.mkdir(parents=True, exist_ok=True)
                # PyPI mirrors may answer with URLs relative to the JSON document
                urllib.request.urlretrieve(urllib.parse.urljoin(PYPI_JSON, sdist["url"]), path)
            found = sdist_files(path, INTERFACE, FLASH_API, SETUP, CK_KVCACHE)
            record = release_record(
                version,
                uploaded,
                yanked,
                f"sdist {sdist['filename']}",
                found.get(INTERFACE),
                found.get(FLASH_API),
                _sdist_wheels(sdist["filename"], found.get(SETUP)),
                ck=found.get(CK_KVCACHE),
            )
        releases.append(record)
    return releases


def _sdist_wheels(filename: str, setup: str | None) -> dict[str, Any] | None:
    """An sdist's setup.py without BASE_WHEEL_URL fetches nothing: known. One with it fetches the wheels of
    a workflow no tag shows: unknown (None)."""
    if setup is None or "BASE_WHEEL_URL" in setup:
        return None
    return {
        "fetched": False,
        "evidence": {"setup": {"at": f"{filename}:{SETUP}", "text": "no BASE_WHEEL_URL"}},
    }


if __name__ == "__main__":
    sys.exit(main())
