"""SGLang's FlashAttention backends, release by release, as ``scripts/build_serving_kb.py`` read its
wheels (``serving.json``): the backend flags its server declares, and which compute-capability majors
the ``fa3`` backend's assert lets start (for a model with and without MLA)."""

from __future__ import annotations

import functools
import json

from packaging.version import Version

from fa_lint._records import NamedTuple


class Sglang(NamedTuple):
    version: Version
    flags: tuple[str, ...]  # "--attention-backend", "--prefill-attention-backend", ...
    choices: tuple[str, ...]  # which of fa3, fa4 the flags accept
    fa3: dict[int, tuple[bool, bool]]  # major -> (starts for a model without MLA, with MLA)
    fa3_at: (
        str  # the assert: "sglang-0.5.23...whl:sglang/srt/layers/attention/attention_registry.py:243: ..."
    )


@functools.cache
def load() -> tuple[Sglang, ...]:
    from fa_lint.kb import data

    doc = json.loads(data("serving.json"))
    return tuple(
        Sglang(
            Version(r["version"]),
            tuple(r["flags"]),
            tuple(r["choices"]),
            {int(m): (a[0], a[1]) for m, a in r.get("fa3", {}).get("accepts", {}).items()},
            f"{r['wheel']}:{r['fa3']['at']}" if "fa3" in r else "",
        )
        for r in doc["sglang"]
    )


def release(version: Version | None) -> Sglang:
    """The newest release read at or before ``version`` (a boundary is as exact as the releases read);
    the newest read where the version is unknown."""
    read = load()
    if version is None:
        return read[-1]
    found = [r for r in read if r.version <= version]
    return found[-1] if found else read[0]
