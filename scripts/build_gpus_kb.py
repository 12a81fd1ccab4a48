#!/usr/bin/env python3
"""Validate and rewrite fa_lint/kb/gpus.json: NVIDIA GPUs by name, and their compute capability.

Maintainer script; fa-lint never runs it. NVIDIA publishes the table as a web page
(https://developer.nvidia.com/cuda-gpus) that no script of ours can fetch reliably, so gpus.json is
data: every row names its source (a key of ``sources``) and the architecture family of its chip
(``arch``). This script is what keeps the data honest:

* every row's capability is one its family has (``architectures``: NVIDIA's compute capability per
  architecture, with its own source), so a row copied wrong (a Turing card at 8.6) fails here;
* every source key exists, every capability reads ``X.Y``, every pattern compiles;
* no two rows claim one spelling: each row's own name, in the spellings files use (``RTX 2070``,
  ``rtx2070``, ``RTX-2070``, ``nvidia-geforce-rtx-2070``, ``rtx_2070`` as a Slurm gres type), maps
  to that row and no other;
* every instance family names a GPU row (or says whose GPU it is, ``vendor``, when it is not NVIDIA's);
* rows are written in one order (capability, newest first; then name) so a diff shows only the change.

AWS instance families are not typed in: ``--aws-from`` reads them from a checkout of
aws/karpenter-provider-aws, whose ``website/content/en/*/reference/instance-types.md`` Karpenter generates
from the EC2 API (each instance type's ``karpenter.k8s.aws/instance-gpu-name``,
``instance-gpu-manufacturer`` and ``kubernetes.io/arch`` labels), and writes one row a family with the
file, commit and line it read (``evidence``). Families no version of that file lists keep their curated
rows (each with its own source).

    python scripts/build_gpus_kb.py            # rewrite gpus.json in canonical order
    python scripts/build_gpus_kb.py --check    # exit 1 on a problem or a file that is not canonical
    python scripts/build_gpus_kb.py --aws-from /path/to/karpenter-provider-aws   # refresh the AWS rows
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

KB = Path(__file__).resolve().parent.parent / "fa_lint" / "kb" / "gpus.json"


def _normal(text: str) -> str:
    # the same normalisation as fa_lint.kb.gpus: lower case, any run of space _ . / - as one -
    return re.sub(r"[\s_./-]+", "-", text.lower())


def _matches(row: dict[str, Any], text: str) -> bool:
    norm = _normal(text)
    return any(re.search(rf"(?<![a-z0-9])(?:{m})(?![a-z0-9])", norm) for m in row["match"])


def spellings(name: str) -> list[str]:
    """How files write a GPU's name: the product name, without the brand, glued, dashed, GKE-style."""
    # "Quadro" stays: a bare "RTX 6000" is Quadro RTX 6000 or RTX 6000 Ada, and names neither
    short = re.sub(r"^(?:NVIDIA|GeForce|Tesla|Jetson)\s+", "", name)
    if name.startswith("Jetson ") and not re.search(r"\d", short):
        short = name  # "Nano" alone names nothing: the Orin Nano is another Jetson
    out = [name, short, short.replace(" ", "-"), short.replace(" ", "_")]
    if short.count(" ") == 1:  # two words glue: RTX2070, TITANRTX (not RTXPRO6000Blackwell)
        out.append(short.replace(" ", ""))
    out.append("nvidia-" + _normal(name).removeprefix("nvidia-"))
    return list(dict.fromkeys(out))


def _named(rows: list[dict[str, Any]], text: str) -> list[str]:
    return [r["name"] for r in rows if _matches(r, text)]


def _architecture_problems(doc: dict[str, Any]) -> list[str]:
    return [
        f"architecture {key}: unknown source {arch['source']!r}"
        for key, arch in doc["architectures"].items()
        if arch["source"] not in doc["sources"]
    ]


def _row_problems(doc: dict[str, Any], row: dict[str, Any]) -> list[str]:
    out: list[str] = []
    families = {k: set(v["cc"]) for k, v in doc["architectures"].items()}
    name = row["name"]
    if row["source"] not in doc["sources"]:
        out.append(f"{name}: unknown source {row['source']!r}")
    if not re.fullmatch(r"\d+\.\d", row["cc"]):
        out.append(f"{name}: capability {row['cc']!r} is not X.Y")
    if row.get("arch") not in families:
        out.append(f"{name}: unknown architecture {row.get('arch')!r}")
    elif row["cc"] not in families[row["arch"]]:
        has = sorted(families[row["arch"]])
        out.append(f"{name}: {row['arch']} GPUs have compute capability {has}, not {row['cc']}")
    if "cpu" in row and row.get("cpu_source") not in doc["sources"]:
        out.append(f"{name}: its cpu has no source")
    for m in row["match"]:
        try:
            re.compile(m)
        except re.error as e:
            out.append(f"{name}: pattern {m!r}: {e}")
    return out


def _spelling_problems(rows: list[dict[str, Any]], row: dict[str, Any]) -> list[str]:
    out = []
    for text in spellings(row["name"]):
        hits = _named(rows, text)
        if hits != [row["name"]]:
            out.append(f"{row['name']}: {text!r} matches {hits or 'no row'}")
    return out


def _instance_problems(doc: dict[str, Any]) -> list[str]:
    out: list[str] = []
    names = {r["name"] for r in doc["gpus"]}
    for row in doc["instances"] + doc.get("runner_tags", []):
        if row["source"] not in doc["sources"]:
            out.append(f"{row}: unknown source")
        if row["gpu"] is None and not row.get("vendor"):
            out.append(f"{row}: no GPU and no vendor: say whose GPU it is")
        elif row["gpu"] is not None and row["gpu"] not in names:
            out.append(f"{row}: no GPU row named {row['gpu']!r}")
        if row["source"] == "aws-karpenter" and not re.fullmatch(
            r"aws/karpenter-provider-aws@[0-9a-f]{40}:\S+:\d+ .+", row.get("evidence", "")
        ):
            out.append(f"{row}: a row read from Karpenter's table names the file, commit and line it read")
    return out


def _rule_problems(doc: dict[str, Any]) -> list[str]:
    """The model-number spellings (``3090``, ``1080ti``) must each name one GPU row."""
    out = []
    rules = doc.get("model_numbers", {})
    if rules and rules.get("source") not in doc["sources"]:
        out.append("model_numbers: unknown source")
    for pattern, prefix in rules.get("rules", ()):
        for number in ("1080ti", "2080ti", "3090", "4090", "1660super"):
            if re.fullmatch(pattern, number) and len(_named(doc["gpus"], prefix + number)) != 1:
                out.append(f"model_numbers: {number!r} as {prefix + number!r} names no one GPU")
    families = doc.get("gpu_instance_families", {})
    if families and families.get("source") not in doc["sources"]:
        out.append("gpu_instance_families: unknown source")
    return out


def problems(doc: dict[str, Any]) -> list[str]:
    rows = doc["gpus"]
    out = _architecture_problems(doc)
    for row in rows:
        out += _row_problems(doc, row) + _spelling_problems(rows, row)
    return out + _instance_problems(doc) + _rule_problems(doc)


# --- AWS instance families, read from Karpenter's table generated from the EC2 API -----------------

_FAMILY = re.compile(r"^## (\S+) Family\s*$")
_LABEL = re.compile(
    r"^\s*\|(karpenter\.k8s\.aws/instance-gpu-(?:name|manufacturer)|kubernetes\.io/arch)\|([^|]+)\|"
)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def karpenter_families(repo: Path) -> dict[str, dict[str, str]]:
    """family -> its GPU name, maker, CPU architecture and where each was read, over every version's table
    at the checkout's HEAD (a newer version's table wins; older ones keep retired families: p2, g3)."""
    commit = _git(repo, "rev-parse", "HEAD").strip()
    paths = sorted(
        p
        for p in _git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
        if p.endswith("reference/instance-types.md")
    )
    found: dict[str, dict[str, str]] = {}
    for path in sorted(paths, key=_version_order):
        for fam, facts in _families(
            _git(repo, "show", f"HEAD:{path}"), f"aws/karpenter-provider-aws@{commit}:{path}"
        ).items():
            found[fam] = facts
    return found


def _version_order(path: str) -> tuple[int, tuple[int, ...], str]:
    """v1.0 < v1.12 < v1.14 < preview < docs: a later table's row for a family wins."""
    version = path.split("/")[3]
    if re.fullmatch(r"v[\d.]+", version):
        return (0, tuple(int(n) for n in version[1:].split(".")), version)
    return (1, (), version)


def _families(text: str, where: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    family = ""
    for number, line in enumerate(text.splitlines(), 1):
        m = _FAMILY.match(line)
        if m:
            family = m.group(1)
            continue
        label = _LABEL.match(line)
        if label is None or not family:
            continue
        key = label.group(1).rsplit("/", 1)[-1]
        facts = out.setdefault(family, {})
        if key == "instance-gpu-name" and "name" not in facts:
            facts["name"], facts["evidence"] = (
                label.group(2),
                f"{where}:{number} |{label.group(1)}|{label.group(2)}|",
            )
        elif key == "instance-gpu-manufacturer":
            facts.setdefault("maker", label.group(2))
        elif key == "arch" and "name" in facts:
            facts.setdefault("arch", label.group(2))
    return {f: v for f, v in out.items() if "name" in v}


def aws_rows(doc: dict[str, Any], families: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """One row a family, its GPU the row the label names (``a10g`` is NVIDIA A10G); another maker's GPU
    (g4ad's ``radeon-pro-v520``) is kept as that maker's, with no GPU row."""
    out = []
    for family, facts in sorted(families.items()):
        row: dict[str, Any] = {
            "family": family,
            "gpu": None,
            "source": "aws-karpenter",
            "evidence": facts["evidence"],
        }
        if facts.get("maker") == "nvidia":
            hits = _named(doc["gpus"], facts["name"])
            if len(hits) != 1:
                raise SystemExit(
                    f"{family}: GPU name {facts['name']!r} maps to {hits or 'no row'}: add a row or a pattern"
                )
            row["gpu"] = hits[0]
        else:
            row["vendor"] = facts.get("maker", "unknown")
        if facts.get("arch") == "arm64":
            row["arch"] = "aarch64"
        out.append(row)
    return out


def refresh_aws(doc: dict[str, Any], repo: Path) -> dict[str, Any]:
    rows = aws_rows(doc, karpenter_families(repo))
    read = {r["family"] for r in rows}
    kept = [r for r in doc["instances"] if r.get("cloud") or r["family"] not in read]
    kept = [r for r in kept if r["source"] != "aws-karpenter"]
    return {**doc, "instances": rows + kept}


def canonical(doc: dict[str, Any]) -> str:
    doc = dict(doc)
    doc["gpus"] = sorted(doc["gpus"], key=lambda r: (tuple(-int(p) for p in r["cc"].split(".")), r["name"]))
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 on a problem")
    parser.add_argument("--kb", type=Path, default=KB)
    parser.add_argument("--aws-from", type=Path, help="a checkout of aws/karpenter-provider-aws")
    args = parser.parse_args(argv)
    text = args.kb.read_text(encoding="utf-8")
    doc = json.loads(text)
    if args.aws_from is not None:
        doc = refresh_aws(doc, args.aws_from)
    found = problems(doc)
    for p in found:
        print(f"{args.kb}: {p}", file=sys.stderr)
    if found:
        return 1
    want = canonical(doc)
    if args.check:
        if want != text:
            print(f"{args.kb}: not in canonical order; run scripts/build_gpus_kb.py", file=sys.stderr)
            return 1
        return 0
    args.kb.write_text(want, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
