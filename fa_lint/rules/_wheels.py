"""Whether ``pip install flash-attn==X`` gets a prebuilt wheel in an environment, and which release does.

setup.py fetches the release wheel named for the running torch major.minor, torch's CUDA, C++ ABI
and CPython (see ``fa_lint.kb.wheels``); without one, pip compiles flash-attn from source. A wheel
the release workflow built against a torch nightly (``2.3.0.dev20240126``) carries the ``torch2.3``
name, so setup.py fetches it for a released torch 2.3 too and nothing compiles; fa-lint counts it
as a wheel, but prefers, when it picks a release, one whose wheel was built against a released torch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fa_lint.kb import Availability, Release, Wheels
from fa_lint.kb.wheels import X86
from fa_lint.machine.toolchain import Toolchain


def fits(release: Release, tools: Toolchain) -> bool | None:
    """Whether setup.py finds a prebuilt wheel of ``release`` for ``tools``; None: cannot tell."""
    key = (id(release.wheels), release.version, tools)
    if key not in _FITS:
        _FITS[key] = (release.wheels, _fits(release, tools))  # holding the wheels keeps their id unique
    return _FITS[key][1]


# The same few (release, toolchain) pairs come back for every requirement of a large file.
_FITS: dict[tuple[int, object, Toolchain], tuple[object, bool | None]] = {}


def _fits(release: Release, tools: Toolchain) -> bool | None:
    w = release.wheels
    if tools.torch is None or w is None:
        return None
    cuda = tools.cuda.value if tools.cuda else None
    found = w.has(tools.torch.value, tools.pythons or None, cuda, tools.cxx11_abi)
    # unknown: a torch newer than the tag, whose wheel only a later build could have attached
    return None if found is Availability.UNKNOWN else found is Availability.YES


def stable(release: Release, tools: Toolchain) -> bool:
    """A wheel exists and was built against a released torch, not a nightly."""
    w = release.wheels
    return (
        bool(fits(release, tools))
        and w is not None
        and tools.torch is not None
        and (w.built_against(tools.torch.value) is None)
    )


def span(values: Sequence[str]) -> str:
    """'1.12-2.2' for a run of versions, or the one value."""
    if not values:
        return "none"
    return values[0] if len(values) == 1 else f"{values[0]}-{values[-1]}"


def missing(release: Release, tools: Toolchain) -> str:
    """Which part of the environment the release has no wheel for, in a few words."""
    w = release.wheels
    assert w is not None and tools.torch is not None
    torch = tools.torch.value
    if not w.fetched:
        return f"{release}'s setup.py fetches no prebuilt wheel"
    if not w.matching(torch) and not w.assets_for(torch):
        return f"{release} has no wheel for torch {torch} (it has torch {span(series(w))}{listed(w)})"
    pythons = tools.pythons or None
    if pythons is not None and not w.matching(torch, pythons):
        have = sorted({b.python for b in w.matching(torch)}, key=lambda v: tuple(map(int, v.split("."))))
        python = tools.python.value if tools.python else ""
        return f"{release} has no wheel for CPython {python} with torch {torch} (it has CPython {span(have)})"
    cuda = tools.cuda.value if tools.cuda else None
    if cuda is not None and not w.matching(torch, pythons, cuda):
        name = w.cuda_name(cuda, torch)
        if name is None:
            return f"{release} has no wheel for a {cuda} torch (only CUDA builds)"
        names = ", ".join(f"cu{c}" for c in sorted({b.cuda for b in w.matching(torch, pythons)}))
        return f"{release} has no cu{name} wheel for torch {torch} with CUDA {cuda} (it has {names})"
    return f"{release} has no wheel for the C++ ABI of this torch"


def series(w: Wheels) -> list[str]:
    """Every torch series the release has a Linux x86_64 wheel for: its matrix's, and those public
    files show (listed, or seen)."""
    found = {*w.torch, *(b.torch for b in w.seen)}
    found |= {a.torch for a in (w.listed.assets if w.listed else ()) if a.platform == X86}
    return sorted(found, key=lambda v: tuple(map(int, v.split("."))))


def listed(w: Wheels) -> str:
    """Where the release's complete asset listing comes from, for a note that rests on it."""
    listing = w.listed
    if listing is None or not listing.complete:
        return ""
    return f"; per its release assets as listed on {listing.as_of[:10]} in {listing.source}"


def lacking(release: Release, tools: Toolchain) -> str:
    """The part of the environment with no wheel, for a headline: 'torch 2.3', 'CUDA 11.8 (torch 2.6)'."""
    w = release.wheels
    assert w is not None and tools.torch is not None
    torch = tools.torch.value
    if not w.fetched or not w.matching(torch):
        return f"torch {torch}"
    pythons = tools.pythons or None
    if pythons is not None and not w.matching(torch, pythons):
        return f"torch {torch} on CPython {tools.python.value if tools.python else ''}"
    cuda = tools.cuda.value if tools.cuda else ""
    if cuda and w.cuda_name(cuda, torch) is None:
        return f"a {cuda} torch"
    return f"torch {torch} with CUDA {cuda}" if cuda else f"torch {torch}"


def pick(candidates: Iterable[Release], tools: Iterable[Toolchain]) -> Release | None:
    """The first candidate with a wheel for every known toolchain, a released-torch build first.

    With no toolchain known, the first candidate: nothing says a wheel matters.
    """
    ordered = list(candidates)
    known = [t for t in tools if t.torch is not None]
    if not known:
        return ordered[0] if ordered else None
    for good in (stable, lambda r, t: bool(fits(r, t))):
        found = next((r for r in ordered if all(good(r, t) for t in known)), None)
        if found is not None:
            return found
    return None
