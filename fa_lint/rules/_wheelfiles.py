"""The prebuilt wheel files of a flash-attn release for one machine (torch, CUDA, CPython, C++ ABI,
platform), with the URL they download from and the sha256 a listing publishes: what ``fa-lint wheel``
prints and what FAL011's fix writes.

setup.py downloads ``BASE_WHEEL_URL.format(tag_name=f"v{flash_version}", wheel_name=...)``, that is
``https://github.com/Dao-AILab/flash-attention/releases/download/v{version}/{name}`` (v2.8.3:setup.py:55-56,
464-466), so the URL of a wheel the tag's matrix built follows from its name. A wheel an asset listing
names carries the sha256 GitHub publishes (``fa_lint/kb/assets.json``); a matrix wheel no listing names
has none fa-lint knows.

Whether a wheel exists is ``Wheels.has``'s answer (yes, no, unknown); the files are those that answer
rests on. Which wheel setup.py asks for is its own name rule (``Wheels.cuda_name``): 2.8.1's asks a
CUDA 13 torch for the ``cu12`` wheel, so a ``cu13`` asset of its listing installs by URL only
(``WheelFile.fetched`` False).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fa_lint._records import NamedTuple
from fa_lint.kb import Availability, Release, Wheels
from fa_lint.kb.assets import RELEASES, Asset
from fa_lint.kb.wheels import X86, Build

ARM = "linux_aarch64"
PLATFORMS = (X86, ARM)  # the platforms flash-attn's releases carry wheels for (the listings' names)


class Machine(NamedTuple):
    """What a wheel must be built for; None or empty: not known, so any will do."""

    torch: str  # major.minor: "2.10"
    cuda: str | None = None  # torch's CUDA: "12.8"; "cpu", "rocm6.1"
    pythons: tuple[str, ...] = ()  # the CPython minors it may run
    cxx11_abi: bool | None = None
    platform: str = X86


class WheelFile(NamedTuple):
    file: str
    url: str
    python: str
    cxx11_abi: bool
    sha256: str | None  # None: no listing fa-lint reads publishes it
    at: str  # what says it exists: a listing's file and line, the tag's publish.yml line, a citation
    fetched: bool = True  # setup.py asks for this name; False: it installs by URL only


def _key(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def status(release: Release, m: Machine) -> Availability | None:
    """Whether setup.py finds a prebuilt wheel of ``release`` for ``m``; None: no tag to read."""
    w = release.wheels
    if w is None:
        return None
    return w.has(m.torch, list(m.pythons) or None, m.cuda, m.cxx11_abi, m.platform)


def files(release: Release, m: Machine) -> list[WheelFile]:
    """The wheel files of ``release`` that install on ``m`` (every CPython and ABI it leaves open)."""
    w = release.wheels
    if w is None or status(release, m) is not Availability.YES:
        return _by_url(w, m) if w is not None else []
    pythons = list(m.pythons) or None
    found = {a.file: _listed(a) for a in w.assets_for(m.torch, pythons, m.cuda, m.cxx11_abi, m.platform)}
    if m.platform == X86:  # the matrix builds, and the wheels public files cite, are x86_64 ones
        for b in w.matching(m.torch, pythons, m.cuda, m.cxx11_abi):
            name = _name(release, b, m.platform)
            found.setdefault(
                name, WheelFile(name, _url(name), b.python, b.cxx11_abi, None, _cited(w, b, name))
            )
    for extra in _by_url(w, m):
        found.setdefault(extra.file, extra)
    return sorted(found.values(), key=lambda f: (not f.fetched, _key(f.python), not f.cxx11_abi, f.file))


def _listed(a: Asset, fetched: bool = True) -> WheelFile:
    return WheelFile(a.file, a.url, a.python, a.cxx11_abi, a.sha256, a.at, fetched)


def _name(release: Release, b: Build, platform: str) -> str:
    """The file name setup.py asks for (v2.8.3:setup.py:464)."""
    py = b.python.replace(".", "")
    abi = "TRUE" if b.cxx11_abi else "FALSE"
    return f"flash_attn-{release.version}+cu{b.cuda}torch{b.torch}cxx11abi{abi}-cp{py}-cp{py}-{platform}.whl"


def _url(name: str) -> str:
    version = name.split("-", 2)[1].split("+", 1)[0]
    return f"{RELEASES}v{version}/{name.replace('+', '%2B')}"


def _cited(w: Wheels, b: Build, name: str) -> str:
    """Where a wheel the listings do not name is known from: a public citation, or the tag's matrix."""
    for seen in w.matrix.get("seen", ()) if b in w.seen else ():
        if seen.get("file") == name:
            return str(seen.get("source", ""))
    torch = (w.evidence or {}).get("torch") or {}
    return f"{torch.get('at', 'the tag')}: the release workflow's matrix"


def _by_url(w: Wheels, m: Machine) -> list[WheelFile]:
    """Listed wheels built for the CUDA of ``m``'s torch under a name setup.py does not ask for (2.8.1's
    ``cu13`` ones, where its setup.py asks a CUDA 13 torch for ``cu12``)."""
    if m.cuda is None or not m.cuda[:1].isdigit() or not w.fetched:
        return []
    own = "".join(m.cuda.split(".")[: w.cuda_digits])
    if w.cuda_name(m.cuda, m.torch) == own:
        return []
    return [
        _listed(a, fetched=False)
        for a in w.assets_for(m.torch, list(m.pythons) or None, None, m.cxx11_abi, m.platform)
        if a.cuda == own
    ]


def nearest(
    releases: Sequence[Release],
    anchor: int,
    m: Machine,
    usable: Callable[[Release], bool] = lambda r: True,
    answer: Availability = Availability.YES,
) -> Release | None:
    """The release of ``releases`` nearest to position ``anchor`` with a wheel for ``m`` (a tie goes to
    the newer one), one built against a released torch first; ``usable`` narrows them further.
    ``answer`` UNKNOWN: the nearest whose wheel for ``m`` is unknown instead."""
    found = [r for r in releases if usable(r) and status(r, m) is answer]
    if not found:
        return None
    order = {r.version: i for i, r in enumerate(releases)}
    released = [r for r in found if r.wheels is not None and r.wheels.built_against(m.torch) is None]
    return min(released or found, key=lambda r: (abs(order[r.version] - anchor), -order[r.version]))


def why_not(release: Release, m: Machine) -> str:
    """Why ``release`` has no wheel for ``m`` that setup.py fetches, in a sentence."""
    w = release.wheels
    if w is None:
        return f"{release} has no tag to read its release workflow from: nothing is known of its wheels"
    if not w.fetched:
        return f"{release}'s setup.py fetches no prebuilt wheel: pip compiles it"
    if m.cuda is not None and w.cuda_name(m.cuda, m.torch) is None:
        return f"{release}'s setup.py names no wheel for a {m.cuda} torch (only CUDA builds)"
    if status(release, m) is Availability.UNKNOWN:
        return (
            f"torch {m.torch} came out after v{release} was tagged and after any complete listing of its "
            "assets: whether a wheel for it was attached later is unknown"
        )
    return _lacking(release, w, m) + _listing(w)


def _lacking(release: Release, w: Wheels, m: Machine) -> str:
    torch = Machine(m.torch, platform=m.platform)
    if status(release, torch) is not Availability.YES:
        return (
            f"{release} has no {m.platform} wheel for torch {m.torch} (it has torch {_series(w, m.platform)})"
        )
    if m.pythons and status(release, torch._replace(pythons=m.pythons)) is not Availability.YES:
        have = sorted({f.python for f in files(release, torch)}, key=_key)
        return (
            f"{release} has no wheel for CPython {', '.join(m.pythons)} with torch {m.torch} "
            f"(it has CPython {', '.join(have)})"
        )
    if m.cuda is not None and status(release, m._replace(cxx11_abi=None)) is not Availability.YES:
        return (
            f"{release} has no cu{w.cuda_name(m.cuda, m.torch)} wheel for torch {m.torch} with CUDA {m.cuda}"
        )
    abi = "new (cxx11abiTRUE)" if m.cxx11_abi else "old (cxx11abiFALSE)"
    return f"{release} has no wheel for torch {m.torch} with the {abi} C++ ABI"


def _series(w: Wheels, platform: str) -> str:
    found = {a.torch for a in (w.listed.assets if w.listed else ()) if a.platform == platform}
    if platform == X86:
        found |= {*w.torch, *(b.torch for b in w.seen)}
    return ", ".join(sorted(found, key=_key)) or "none"


def _listing(w: Wheels) -> str:
    listing = w.listed
    if listing is None or not listing.complete:
        return ""
    return f"; per its release assets as listed on {listing.as_of[:10]} ({listing.source})"
