"""flash-attn on a ROCm torch: from which release its Composable Kernel backend has paged KV, as
``scripts/build_rocm_kb.py`` read each tag's setup.py and ``csrc/flash_attn_ck`` (``rocm.json``).

On ROCm, setup.py builds ``csrc/flash_attn_ck`` (from 2.6.2; no ROCm build before), and
``flash_attn_with_kvcache`` calls that module's ``fwd_kvcache``, which the backend binds, with a block
table, only from a later release: before it the call fails at the first decode step.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

from packaging.version import Version

from fa_lint._records import NamedTuple


class Rocm(NamedTuple):
    paged_kv_since: Version
    evidence: str  # "v2.7.0:csrc/flash_attn_ck/flash_api.cpp:121: m.def(\"fwd_kvcache\", ..."
    without: tuple[Version, ...]  # releases with a ROCm build but no fwd_kvcache
    first_build: Version | None  # the first release whose setup.py builds for ROCm at all


@functools.cache
def load() -> Rocm:
    doc = json.loads(resources.files(__package__).joinpath("rocm.json").read_text(encoding="utf-8"))
    return Rocm(
        Version(doc["paged_kv_since"]),
        doc["evidence"]["fwd_kvcache"],
        tuple(Version(v) for v in doc["rocm_build_without_kvcache"]),
        Version(doc["first_rocm_build"].split(":", 1)[0].removeprefix("v"))
        if doc["first_rocm_build"]
        else None,
    )
