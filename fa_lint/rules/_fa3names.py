"""FAL022's names: the distribution a build of flash-attention's ``hopper/`` really installs, against the
name the requirement gives it and the name transformers looks for.

hopper/setup.py's ``PACKAGE_NAME`` was ``flashattn-hopper`` (to v2.7.2.post1), ``flash_attn`` (v2.7.3 to
v2.7.4.post1: FlashAttention 2's own name) and is ``flash_attn_3`` from v2.8.0 (``fa_lint/kb/fa3.json``,
every tag and commit read by ``scripts/build_fa3_kb.py``). So ``git+...@v2.7.4.post1#subdirectory=hopper``
installs a distribution named flash-attn, and transformers, which finds FA3 only as the ``flash-attn-3``
distribution (5.4 and later: its ``flash_attn_interface`` module; 4.53 to 4.57: a ``flash_attn_3``
module and distribution), never sees it. A ``#egg=`` name that is not the one the build names makes pip
discard the build (its resolver checks the metadata's name against the requested one: ``installers.json``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fa_lint._records import NamedTuple
from fa_lint.code.uses import ATTN, Use
from fa_lint.model import FA3, FLASH_ATTN, Image, Kind, Requirement, Severity, normalize
from fa_lint.rules._base import Context
from fa_lint.rules._text import TRANSFORMERS

if TYPE_CHECKING:
    from fa_lint.kb.fa3 import Fa3KnowledgeBase


class Built(NamedTuple):
    """The distribution a hopper/ build installs, and the fact that says so."""

    distribution: str
    why: str


class Named(NamedTuple):
    """A FAL022 finding on a hopper/ build's name: headline, severity, notes, help."""

    headline: str
    severity: Severity
    notes: tuple[str, ...]
    help: str


def hopper_build(req: Requirement, kb: Fa3KnowledgeBase) -> Built | None:
    """What ``pip install 'git+<flash-attention>@REF#subdirectory=hopper'`` installs: the name at a
    release tag, or the default branch's; None for a fork, another folder or a ref fa-lint cannot date."""
    from fa_lint.kb import forks
    from fa_lint.syntax import pep508

    url = req.url or ""
    parts = pep508.split_url(url)
    sub = re.search(r"(?:^|&)subdirectory=([^&]*)", parts.fragment if parts else "")
    if not url.startswith("git+") or sub is None or sub.group(1).strip("/") != "hopper":
        return None
    if forks.builds(url) != FLASH_ATTN or forks.fork(url, named=True) is not None or not kb.names:
        return None
    ref = pep508.vcs_ref(url)
    if ref is None:
        name = kb.names[-1].distribution
        first = next(n for n in kb.names if n.distribution == name)
        return Built(
            name,
            f"the default branch's hopper/setup.py names it so since {first.fact.date} ({first.fact.at})",
        )
    found = kb.names_at_tags.get(ref)
    if found is None:
        return None
    return Built(
        found, f"hopper/setup.py at {ref} names PACKAGE_NAME {found!r} (fa_lint/kb/fa3.json names_at_tags)"
    )


def judge(ctx: Context, req: Requirement, kb: Fa3KnowledgeBase) -> Named | None:
    """The egg name against the build's, then the build's name against transformers'."""
    built = hopper_build(req, kb)
    if built is None:
        return None
    egg = re.search(r"(?:^|&)egg=([A-Za-z0-9_.-]+)", (req.url or "").split("#", 1)[-1])
    if egg is not None and normalize(egg.group(1)) != built.distribution:
        return _egg(req, built, egg.group(1))
    if built.distribution == FA3:
        return None
    return _unseen(ctx, req, built, kb)


def _egg(req: Requirement, built: Built, asked: str) -> Named:
    from fa_lint.kb import installers

    check = installers.load().facts.get("pip.metadata_name_check")
    notes = [built.why]
    if check is not None:
        notes.append(
            f"pip (from {check.since}) discards a build whose metadata names another project than the one "
            f"requested ({check.last}): 'has inconsistent name: expected {normalize(asked)!r}, but "
            f"metadata has {built.distribution!r}', then finds nothing to install"
        )
    return Named(
        f"`#egg={asked}` is not what hopper/ builds here ({built.distribution}): the install fails",
        Severity.ERROR,
        tuple(notes),
        f"name the build as it names itself: `{built.distribution} @ git+...#subdirectory=hopper`, or drop "
        "#egg=",
    )


def _unseen(ctx: Context, req: Requirement, built: Built, kb: Fa3KnowledgeBase) -> Named:
    pin = ctx.pinned(req, TRANSFORMERS)
    detection = kb.detection(str(pin[0]) if pin else kb.detections[-1].version) if kb.detections else None
    notes = [built.why]
    if built.distribution == FLASH_ATTN:
        notes.append(
            "it installs as flash-attn 3.0.0b1, FlashAttention 2's own distribution name: pip replaces one "
            "with the other, and whatever reads flash-attn's version sees 3.0.0b1"
        )
    if detection is not None:
        which = f"transformers {pin[0]}" if pin else f"transformers {detection.version} (the newest read)"
        dist = f"from the {detection.distribution} distribution" if detection.distribution else ""
        notes.append(
            f"{which} finds FA3 as the {detection.module} module {dist} ({detection.at})".replace("  ", " ")
        )
    asked = next((u for u in ctx.uses if u.kind == ATTN and u.name == "flash_attention_3"), None)
    if asked is not None:
        notes.append(
            f'the code asks for attn_implementation="flash_attention_3" at {asked.location}: it fails'
        )
    return Named(
        f"this hopper/ build installs `{built.distribution}`, not {FA3}: transformers never finds it as FA3",
        Severity.ERROR if asked is not None else Severity.WARNING,
        tuple(notes),
        "build hopper/ from v2.8.0 or later (it names itself flash_attn_3), or call flash_attn_interface "
        "directly rather than through transformers",
    )


def unguarded_import(ctx: Context, use: Use, kb: Fa3KnowledgeBase) -> Named | None:
    """An unguarded ``import flash_attn_interface`` where the files install flash-attn 2 and no FA3: the
    module is FA3's alone, so it raises ModuleNotFoundError. Not judged where anything could bring FA3
    (a hopper/ build, flash-attn-3, a base image, an install fa-lint could not read)."""
    fa2, fa3 = _installed(ctx)
    if fa2 is None or fa3 or ctx.unfollowed or any(isinstance(s, Image) for s in ctx.settings):
        return None  # a base image (a stage that installs nothing too) may hold FA3
    listing = (
        "none lists py_modules"
        if not kb.fa2_py_modules
        else f"{', '.join(kb.fa2_py_modules)} list py_modules"
    )
    return Named(
        "`flash_attn_interface` is FA3's module, and only flash-attn 2 is installed: this import raises "
        "ModuleNotFoundError",
        Severity.WARNING,
        (
            f"{fa2.location} installs `{fa2.raw}`: flash-attn 2 ships flash_attn.flash_attn_interface, "
            f"never a top-level flash_attn_interface (its setup.py at {kb.fa2_tags_read}: {listing})",
            f"nothing in the files installs FA3 (hopper/, {FA3}), which is what provides the module",
            "the import is outside any try/except ImportError and any if: it runs unconditionally",
        ),
        "import from flash_attn (FA2's `from flash_attn import flash_attn_func`), install FA3 (a build of "
        f"hopper/ from v2.8.0 or later, `{FA3}`), or guard the import with try/except ImportError",
    )


def _installed(ctx: Context) -> tuple[Requirement | None, bool]:
    """A flash-attn 2 install the files make, and whether any FA3 install is there too."""
    key = "fa2 and fa3 installs"
    if key not in ctx.memo:
        fa2 = next(
            (r for r in ctx.requirements if r.name == FLASH_ATTN and r.kind in (Kind.INSTALL, Kind.LOCK)),
            None,
        )
        fa3 = any(
            r.name in (FA3, "flashattn-hopper") or "hopper" in (r.url or "") or "hopper" in (r.build or "")
            for r in ctx.requirements
        )
        ctx.memo[key] = (fa2, fa3)
    found: tuple[Requirement | None, bool] = ctx.memo[key]
    return found
