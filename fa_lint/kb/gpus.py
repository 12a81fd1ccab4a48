"""NVIDIA GPUs by the names files give them, and their compute capability (``gpus.json``: data from
NVIDIA's tables, each row with its source)."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from fa_lint._records import NamedTuple
from fa_lint.kb.builds import Capability


class Gpu(NamedTuple):
    name: str  # "NVIDIA A100"
    cc: Capability  # (8, 0)
    source: str  # where the capability is stated
    cpu: str = ""  # "aarch64": it only comes with an Arm host CPU (Grace); "" where nothing says

    @property
    def capability(self) -> str:
        return f"{self.cc[0]}.{self.cc[1]}"


@functools.cache
def _doc() -> dict[str, Any]:
    from fa_lint.kb import data

    doc: dict[str, Any] = json.loads(data("gpus.json"))
    return doc


@functools.cache
def _patterns() -> tuple[tuple[re.Pattern[str], Gpu], ...]:
    doc = _doc()
    out = []
    for row in doc["gpus"]:
        major, minor = row["cc"].split(".")
        gpu = Gpu(row["name"], (int(major), int(minor)), doc["sources"][row["source"]], row.get("cpu", ""))
        for m in row["match"]:
            out.append((re.compile(rf"(?<![a-z0-9])(?:{m})(?![a-z0-9])"), gpu))
    return tuple(out)


def _normal(text: str) -> str:
    return re.sub(r"[\s_./-]+", "-", text.lower())


def named(text: str) -> Gpu | None:
    """The one GPU a label or product name names (``a100``, ``NVIDIA-A100-SXM4-80GB``,
    ``nvidia-tesla-t4``, ``H100:8``); None when it names none, or several."""
    norm = _normal(text)
    found = {gpu for pattern, gpu in _patterns() if pattern.search(norm)}
    return found.pop() if len(found) == 1 else None


def _instance_row(text: str) -> dict[str, Any] | None:
    text = text.strip().lower()
    aws = re.fullmatch(r"(?:ml\.)?([a-z0-9-]+)\.[a-z0-9]+", text)
    gcp = re.fullmatch(r"([a-z][a-z0-9]*-[a-z]+)-\d+g?", text)  # a2-highgpu-1g, g2-standard-4
    rows = _doc()["instances"]
    if aws is not None:
        return next((r for r in rows if r["family"] == aws.group(1) and "cloud" not in r), None)
    if gcp is not None:
        return next((r for r in rows if r["family"] == gcp.group(1) and r.get("cloud") == "gcp"), None)
    return None


def instance(text: str) -> Gpu | None:
    """The GPU of an AWS instance type (``g5.2xlarge``, SageMaker's ``ml.p4d.24xlarge``) or a GCP machine
    type (``a2-highgpu-1g``, ``g2-standard-4``)."""
    row = _instance_row(text)
    if row is None:
        return None
    doc = _doc()
    gpu = next(g for p, g in _patterns() if g.name == row["gpu"])
    return gpu._replace(source=f"{gpu.source}; {doc['sources'][row['source']]}")


def instance_arch(text: str) -> str | None:
    """The CPU architecture of an instance type whose family gpus.json marks (``g5g.xlarge``: aarch64)."""
    row = _instance_row(text)
    arch = row.get("arch") if row is not None else None
    return str(arch) if arch else None


def runner_tag(text: str) -> Gpu | None:
    """The GPU of a hosted CI runner whose tag names none (GitLab's ``saas-linux-medium-amd64-gpu-standard``
    is a T4): its provider's records, in ``gpus.json`` ``runner_tags``."""
    doc = _doc()
    row = next((r for r in doc.get("runner_tags", ()) if r["tag"] == text.strip().lower()), None)
    if row is None:
        return None
    gpu = next(g for _, g in _patterns() if g.name == row["gpu"])
    return gpu._replace(source=f"{gpu.source}; {doc['sources'][row['source']]}")
