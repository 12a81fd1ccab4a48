"""What a flash-attn release wheel's ``cxx11abiTRUE|FALSE`` label says, as
``scripts/build_abi_label_kb.py`` read each tag's setup.py and release workflow (``abi_label.json``).

The workflow names each wheel by its matrix value (``cxx11abi${{ matrix.cxx11_abi }}``) and passes it as
``FLASH_ATTENTION_FORCE_CXX11_ABI``; setup.py only ever forces the ABI *on*
(``if FORCE_CXX11_ABI: torch._C._GLIBCXX_USE_CXX11_ABI = True``). A ``FALSE`` wheel is therefore built
with the ABI of the torch it was built against: the old one before torch 2.7, the new one from 2.7.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from packaging.version import Version


@functools.cache
def _releases() -> dict[Version, dict[str, Any]]:
    doc = json.loads(resources.files(__package__).joinpath("abi_label.json").read_text(encoding="utf-8"))
    return {Version(k): v for k, v in doc["releases"].items()}


def follows_torch(release: Version) -> str | None:
    """Where the release's setup.py shows a ``FALSE`` build takes the building torch's ABI (its line
    that forces the ABI on, the only one there is), or None: a tag it never read, or one that can
    force the ABI off, where the label keeps its meaning."""
    record = _releases().get(Version(release.public))
    if record is None or record["forces_off"]:
        return None
    found: list[str] = record["forces_on"]
    return found[0] if found else f"{release}: setup.py never sets the ABI"
