"""NVIDIA GPUs by the names files give them, and their compute capability (``gpus.json``: data from
NVIDIA's tables, each row with its source)."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from fa_lint._lazy import Lazy
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
def _rows() -> tuple[tuple[str, str, Gpu], ...]:
    """Each name pattern of gpus.json (a fragment of a regex), the text every match of it holds, and
    its GPU, in the file's order."""
    doc = _doc()
    out: list[tuple[str, str, Gpu]] = []
    for row in doc["gpus"]:
        major, minor = row["cc"].split(".")
        gpu = Gpu(row["name"], (int(major), int(minor)), doc["sources"][row["source"]], row.get("cpu", ""))
        out.extend((m, held(m), gpu) for m in row["match"])
    return tuple(out)


@functools.cache
def _compiled(fragment: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z0-9])(?:{fragment})(?![a-z0-9])")


_META = frozenset("\\[](){}|?*+.^$")
_FLAGS = frozenset("aiLmsux-")


def held(fragment: str) -> str:
    """The longest text every match of a regex fragment holds: a run of plain characters written at its
    top level (outside groups and classes) with no quantifier on its last one; "" where the fragment
    has a ``|`` at its top level, or no such run.

    A name is looked for with each of gpus.json's 122 patterns, and compiling them all cost 15 ms a
    run, most of a run's regex compiling; a pattern whose text is not in the name cannot match it, and
    is never compiled. (Written by hand: ``re`` gives no way to ask a pattern what it must match short
    of its own parser, which costs what compiling does.)
    """
    if fragment.startswith("(?") and fragment[2:3] in _FLAGS:
        return ""  # (?i) and the like change what a plain character matches
    runs: list[str] = []
    run = ""
    depth = 0
    i = 0
    while i < len(fragment):
        c = fragment[i]
        i += 1
        if c not in _META:
            if depth == 0:
                run += c
                continue
        elif c == "|" and depth == 0:
            return ""
        elif c in "?*+{" and depth == 0:
            run = run[:-1]  # the character before is optional or repeated (a "+" at least once: dropped too)
        i = _past(fragment, c, i)
        depth += (c == "(") - (c == ")")
        runs.append(run)
        run = ""
    runs.append(run)
    return max(runs, key=len)


def _past(fragment: str, c: str, i: int) -> int:
    """Where ``held`` reads on after ``c`` (at ``i - 1``): past what an escape escapes, a class to its
    "]" (one first, after a "^", is a member, and so is one escaped), a ``{m,n}`` to its "}"."""
    if c == "\\":
        return i + 1
    if c == "[":
        i += fragment[i : i + 1] == "^"
        i += fragment[i : i + 1] == "]"
        while i < len(fragment) and fragment[i] != "]":
            i += 2 if fragment[i] == "\\" else 1
        return i + 1
    if c == "{":
        end = fragment.find("}", i)
        return len(fragment) if end < 0 else end + 1
    return i


def _normal(text: str) -> str:
    return re.sub(r"[\s_./-]+", "-", text.lower())


def named(text: str) -> Gpu | None:
    """The one GPU a label or product name names (``a100``, ``NVIDIA-A100-SXM4-80GB``,
    ``nvidia-tesla-t4``, ``H100:8``); None when it names none, or several."""
    norm = _normal(text)
    found = {gpu for fragment, needs, gpu in _rows() if needs in norm and _compiled(fragment).search(norm)}
    return found.pop() if len(found) == 1 else None


def model_number(text: str) -> Gpu | None:
    """A GeForce card named by its model number alone, as Slurm sites name their gres types
    (``--gres=gpu:2080ti:1``, ``3090``, ``1080ti``): the GTX or RTX card of that number
    (gpus.json ``model_numbers``, with its source)."""
    norm = _normal(text).split(":", 1)[0].replace("-", "")  # 2080ti:1, as SkyPilot writes a count
    for pattern, prefix in _doc().get("model_numbers", {}).get("rules", ()):
        if re.fullmatch(pattern, norm):
            return named(prefix + norm)
    return None


def gpu_named(text: str) -> Gpu | None:
    """What a name that certainly names a GPU (a Slurm type, SkyPilot's accelerators, Modal's ``gpu=``)
    maps to: its product name, or a GeForce model number."""
    return named(text) or model_number(text)


# Azure VM sizes: Standard_<family><vCPUs><features>[_<accelerator>][_v<N>] (Standard_NC24ads_A100_v4)
_AZURE = Lazy(r"standard_(n[a-z]{1,2})\d+[a-z]*((?:_(?!v\d+$)[a-z][a-z0-9]*)*)(?:_(v\d+))?")
_AWS = Lazy(r"(?:ml\.)?([a-z0-9-]+)\.[a-z0-9-]+")
_GCP = Lazy(r"([a-z][a-z0-9]*-[a-z]+)-\d+g?")  # a2-highgpu-1g, g2-standard-4


def _cloud(text: str) -> tuple[str, str, str] | None:
    """(cloud, family, accelerator the name spells or "") of an instance type."""
    text = text.strip().lower()
    azure = _AZURE().fullmatch(text)
    if azure is not None:
        family = azure.group(1) + (f"-{azure.group(3)}" if azure.group(3) else "")
        return "azure", family, azure.group(2).strip("_")  # Standard_ND128isr_NDR_GB200_v6: "ndr_gb200"
    aws = _AWS().fullmatch(text)
    if aws is not None:
        return "aws", aws.group(1), ""
    gcp = _GCP().fullmatch(text)
    return ("gcp", gcp.group(1), "") if gcp is not None else None


def _instance_row(text: str) -> dict[str, Any] | None:
    found = _cloud(text)
    if found is None:
        return None
    cloud, family, _ = found
    rows = _doc()["instances"]
    return next((r for r in rows if r["family"] == family and r.get("cloud", "aws") == cloud), None)


def instance(text: str) -> Gpu | None:
    """The GPU of an AWS instance type (``g5.2xlarge``, SageMaker's ``ml.p4d.24xlarge``), a GCP machine
    type (``a2-highgpu-1g``, ``g2-standard-4``) or an Azure VM size (``Standard_NC6s_v3``, and one that
    names its GPU: ``Standard_NC24ads_A100_v4``)."""
    found = _cloud(text)
    if found is not None and found[2]:  # the size names its accelerator
        gpu = named(found[2])
        sizes = _doc()["sources"].get("azure-sizes", "")
        return gpu._replace(source=f"{gpu.source}; {sizes}") if gpu is not None else None
    row = _instance_row(text)
    if row is None or row["gpu"] is None:
        return None
    doc = _doc()
    gpu = next(g for _, _, g in _rows() if g.name == row["gpu"])
    return gpu._replace(source=f"{gpu.source}; {doc['sources'][row['source']]}")


def gpu_instance(text: str) -> bool:
    """Whether an instance type is one of its cloud's GPU families (AWS p*/g*, GCP's accelerator-optimized
    series, Azure's N sizes), so that a GPU it has, but fa-lint cannot map, is said, not passed: ``m5.large``
    has no GPU, ``p7.48xlarge`` has one fa-lint does not know."""
    found = _cloud(text)
    if found is None:
        return False
    pattern = _doc().get("gpu_instance_families", {}).get(found[0])
    return pattern is not None and re.match(pattern, found[1]) is not None


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
    gpu = next(g for _, _, g in _rows() if g.name == row["gpu"])
    return gpu._replace(source=f"{gpu.source}; {doc['sources'][row['source']]}")
