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


class Archs(NamedTuple):
    """The ROCm archs setup.py accepts in GPU_ARCHS, for a run of releases."""

    since: Version
    until: Version | None  # the first release with another list; None: to the latest
    archs: tuple[str, ...]  # "native", "gfx90a", ...
    evidence: str  # "v2.6.2:setup.py:124: allowed_archs = [...]"


class Rocm(NamedTuple):
    paged_kv_since: Version
    evidence: str  # "v2.7.0:csrc/flash_attn_ck/flash_api.cpp:121: m.def(\"fwd_kvcache\", ..."
    without: tuple[Version, ...]  # releases with a ROCm build but no fwd_kvcache
    first_build: Version | None  # the first release whose setup.py builds for ROCm at all
    archs: tuple[Archs, ...] = ()
    gpu_archs: str = ""  # the line that reads GPU_ARCHS (default "native", split on ";")
    triton: tuple[Version, str] | None = None  # the first release with the Triton backend, and its line

    def accepted(self, release: Version) -> Archs | None:
        """The archs ``release``'s ROCm build accepts; None before it has one."""
        return next(
            (a for a in self.archs if a.since <= release and (a.until is None or release < a.until)), None
        )


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
        tuple(
            Archs(
                Version(a["since"]),
                Version(a["until"]) if a["until"] else None,
                tuple(a["archs"]),
                a["evidence"],
            )
            for a in doc.get("archs", ())
        ),
        doc.get("gpu_archs_variable") or "",
        _tagged(doc.get("triton_backend")),
    )


def _tagged(evidence: str | None) -> tuple[Version, str] | None:
    """``"v2.7.1:setup.py:64: ..."`` as (2.7.1, the evidence)."""
    if not evidence:
        return None
    return Version(evidence.split(":", 1)[0].removeprefix("v")), evidence
