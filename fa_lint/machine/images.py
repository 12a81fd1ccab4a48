"""The torch a base image ships: its tag says so (``pytorch/pytorch:2.4.0-...``), or, for an NGC
PyTorch container, NVIDIA's release notes as the torch knowledge base holds them."""

from __future__ import annotations

from packaging.version import Version

from fa_lint._lazy import Lazy
from fa_lint.kb import torch as torch_kb
from fa_lint.model import Image

# Images that come with more than torch: a later unpinned install of these finds them in place.
_BUNDLED = {"pytorch/pytorch": frozenset({"torchvision", "torchaudio"})}


def bundled(image: Image) -> frozenset[str]:
    """The torch libraries an image has besides torch."""
    return next((b for name, b in _BUNDLED.items() if name in image.reference), frozenset())


def image_torch(image: Image) -> tuple[Version, str] | None:
    """The torch a base image ships and what says so: its tag (``pytorch/pytorch:2.4.0-...``), or, for
    an NGC container whose release notes the knowledge base holds, that release's torch."""
    if image.torch is not None:
        return image.torch, f"the base image {image.reference}"
    row = ngc_release(image.reference)
    if row is None:
        return None
    return Version(
        row["torch"]
    ), f"the base image {image.reference} (torch {row['torch']}, NVIDIA's release notes)"


def ngc_release(reference: str) -> dict[str, str] | None:
    """What NVIDIA's release notes say an NGC PyTorch container holds, where the data has that tag."""
    m = _NGC_TAG().match(reference)
    if m is None:
        return None
    found: dict[str, str] | None = (
        torch_kb.load().data.get("images", {}).get(_NGC, {}).get("tags", {}).get(m.group(1))
    )
    return found


_NGC = "nvcr.io/nvidia/pytorch"
_NGC_TAG = Lazy(r"^nvcr\.io/nvidia/pytorch:([0-9]{2}\.[0-9]{2})-py3")
