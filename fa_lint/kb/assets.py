"""The wheels attached to each flash-attn GitHub release, from published listings of its assets.

``fa_lint/kb/assets.json`` is written by ``scripts/build_assets_kb.py`` from files generated from
GitHub's asset list of each release, with the sha256 GitHub publishes (see the script for the source
and why a listing is complete or partial). A complete listing decides that a wheel does not exist, for
a torch that reached PyPI before the listing was made; a partial one only that the wheels it names do.
Read the first time a rule asks whether a release has a wheel.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping

from fa_lint._records import NamedTuple

RELEASES = "https://github.com/Dao-AILab/flash-attention/releases/download/"
# A release wheel's name, as publish.yml and build.yml write it (the listings' own names).
_NAME = re.compile(
    r"flash_attn-(?P<version>[^+-]+)\+cu(?P<cuda>\d+)torch(?P<torch>\d+\.\d+)cxx11abi(?P<abi>TRUE|FALSE)"
    r"-cp(?P<py>\d)(?P<pyminor>\d+)-cp\d+-(?P<platform>\w+)\.whl"
)


class Asset(NamedTuple):
    """One wheel file of a release, by the parts of its name that vary, with where it is cited."""

    file: str
    torch: str  # "2.9"
    python: str  # "3.12"
    cuda: str  # as the name writes it: "12", "118"
    cxx11_abi: bool
    platform: str  # "linux_x86_64", "linux_aarch64"
    sha256: str | None
    at: str  # the listing's file and line

    @property
    def url(self) -> str:
        version = self.file.split("-", 2)[1].split("+", 1)[0]
        return f"{RELEASES}v{version}/{self.file.replace('+', '%2B')}"


class Listing(NamedTuple):
    """What one release's published listing says."""

    complete: bool  # every wheel asset the release had at ``as_of`` is in ``assets``
    as_of: str  # UTC ISO 8601: when the listing was written (its commit)
    source: str  # the listing file
    why: str  # why it is complete, or partial
    assets: tuple[Asset, ...]


def parse(name: str, sha256: str | None = None, at: str = "") -> Asset | None:
    """A release wheel's file name read into its parts; None: not one."""
    m = _NAME.fullmatch(name)
    if m is None:
        return None
    return Asset(
        name,
        m["torch"],
        f"{m['py']}.{m['pyminor']}",
        m["cuda"],
        m["abi"] == "TRUE",
        m["platform"],
        sha256,
        at,
    )


def from_dict(doc: Mapping[str, object]) -> dict[str, Listing]:
    releases = doc.get("releases")
    out: dict[str, Listing] = {}
    for version, d in releases.items() if isinstance(releases, dict) else ():
        assets = tuple(a for a in (parse(x["file"], x.get("sha256"), x["at"]) for x in d["assets"]) if a)
        out[version] = Listing(bool(d["complete"]), d["as_of"], d["source"], d["why"], assets)
    return out


@functools.cache
def load() -> dict[str, Listing]:
    """Each listed release (its version as PyPI writes it: "2.8.0.post2") to its listing."""
    # as fa_lint.kb.data reads a data file (from a folder or a zip alike), without importing the
    # package this module is imported by
    read = getattr(__spec__.loader, "get_data", None)
    if read is None:
        raise FileNotFoundError("assets.json")
    return from_dict(json.loads(read(os.path.join(os.path.dirname(__file__), "assets.json"))))


def of(version: str) -> Listing | None:
    return load().get(version)
