"""``fa-lint releases``: every flash-attn release with its paged-KV facts and prebuilt wheels.

The table people search flash-attn's issues for -- which release has a wheel for my torch, my
Python, my CUDA -- printed from the knowledge base, never from the network.

The table is a list of ``Column``s: another fact about a release is one more entry in ``COLUMNS``
(its title, its text cell and its JSON value), not another format string.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

from fa_lint import kb
from fa_lint._records import NamedTuple
from fa_lint.kb import Availability, Release, builds, images
from fa_lint.kb.builds import BuildFacts, Runtime

NIGHTLY = "*"  # marks a torch whose wheels were built against a nightly of it
SEEN = "+"  # marks a torch with a wheel public files show was attached after the tag


class Query(NamedTuple):
    """What a filter asks for: a torch major.minor, a CPython, torch's CUDA ("12.1", or a major "12")."""

    torch: str | None = None
    python: str | None = None
    cuda: str | None = None

    def __bool__(self) -> bool:
        return any(self)


NO_QUERY = Query()


class Column(NamedTuple):
    title: str
    cell: Callable[[Release, Query], str]
    # shown only when a filter is given (the answer to it)
    filtered: bool = False


class _Parser(argparse.ArgumentParser):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_abbrev=False, **kwargs)  # as fa-lint's own options: no abbreviations

    def error(self, message: str) -> NoReturn:
        """argparse's message quotes what was typed (``unrecognized arguments: ...``): escaped here."""
        from fa_lint.report._common import printable

        super().error(printable(message))


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="fa-lint releases",
        description="Every flash-attn release: date, paged KV, the page-block multiple, and the prebuilt "
        "wheels its setup.py can fetch (torch, CPython, CUDA), from fa-lint's knowledge base.",
        epilog=f"'{NIGHTLY}' after a torch version: its wheels were built against a nightly of it; "
        f"'{SEEN}': public files show a wheel for it attached after the tag. 'torch unknown': torch series "
        "that came out after the tag, whose wheels only a build after the tag could have attached (their "
        "'wheel' reads 'unknown' under a filter). '?': no tag to read the release workflow from (a filter "
        "leaves these out). 'none': setup.py fetches no wheel, pip compiles.",
    )
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--torch", metavar="X.Y", help="only releases with a wheel (or maybe one) for this torch")
    p.add_argument(
        "--python", metavar="3.Y", help="only releases with a wheel (or maybe one) for this CPython"
    )
    p.add_argument(
        "--cuda", metavar="X[.Y]", help="only releases with a wheel for torch's CUDA X.Y (or any X.*)"
    )
    return p


def _order(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def _cudas(w: kb.Wheels, cuda: str | None) -> list[str | None]:
    """torch CUDA versions to ask setup.py's name rule about: as given ("12.1"), or a major's ("12")."""
    if cuda is None:
        return [None]
    if "." in cuda:
        return [cuda]
    named = {b.cuda for b in w.builds | w.seen if b.cuda.startswith(cuda)}
    # a major alone: any of its minors; the names the release gives them stand for those minors
    return [f"{cuda}.0", *(f"{n[: len(cuda)]}.{n[len(cuda) :] or 0}" for n in sorted(named))]


def wheel(release: Release, q: Query) -> Availability | None:
    """Whether the release has a wheel for the query; None: no tag, so not known at all."""
    w = release.wheels
    if w is None:
        return None
    if not w.fetched:
        return Availability.NO
    series = [q.torch] if q.torch else sorted({*w.torch, *_attached(w), *w.later_torch()}, key=_order)
    python = [q.python] if q.python else None
    answers = {w.has(t, python, c) for t in series for c in _cudas(w, q.cuda)}
    for answer in (Availability.YES, Availability.UNKNOWN):
        if answer in answers:
            return answer
    return Availability.NO


def _filtered(base: kb.KnowledgeBase, q: Query) -> list[Release]:
    return [r for r in base.installable if not q or wheel(r, q) in (Availability.YES, Availability.UNKNOWN)]


def _span(values: Sequence[str]) -> str:
    return values[0] if len(values) == 1 else f"{values[0]}-{values[-1]}"


def _torch(release: Release, _: Query) -> str:
    w = release.wheels
    if w is None:
        return "?"
    if not w.fetched:
        return "none"
    seen = _attached(w) - set(w.torch)
    return " ".join(
        [t + (NIGHTLY if w.built_against(t) else "") for t in w.torch]
        + [t + SEEN for t in sorted(seen, key=_order)]
    )


def _attached(w: kb.Wheels) -> set[str]:
    """The torch series public files show wheels of the release for: seen, or in its asset listing."""
    return {b.torch for b in w.seen} | {a.torch for a in (w.listed.assets if w.listed else ())}


def _python(release: Release, _: Query) -> str:
    w = release.wheels
    if w is None:
        return "?"
    return _span(sorted(w.python, key=_order)) if w.fetched else ""


def _cuda(release: Release, _: Query) -> str:
    w = release.wheels
    if w is None:
        return "?"
    return " ".join(f"cu{c}" for c in w.cuda) if w.fetched else ""


def _later(release: Release, _: Query) -> str:
    w = release.wheels
    if w is None:
        return "?"
    later = w.later_torch()
    return _span(later) if later else ""


def _wheel(release: Release, q: Query) -> str:
    found = wheel(release, q)
    return "?" if found is None else found.value


def _facts(release: Release) -> BuildFacts | None:
    return builds.load().get(release.version)


def accepts(runtime: Runtime) -> str:
    """The capabilities the kvcache check accepts, as people write them: "8.0+", "8.x 9.0"."""
    parts = []
    for terms in runtime.any_of:
        ops = {(part, op): n for part, op, n in terms}
        major = ops.get(("major", "=="))
        if ops.get(("major", ">=")) is not None:
            parts.append(f"{ops[('major', '>=')]}.0+")
        elif major is not None and ops.get(("minor", ">=")) == 0:
            parts.append(f"{major}.x")
        elif major is not None and ("minor", "==") in ops:
            parts.append(f"{major}.{ops[('minor', '==')]}")
        else:
            parts.append(" & ".join(f"{p} {op} {n}" for p, op, n in terms))
    return " ".join(sorted(parts, key=lambda p: _order(p.rstrip("+x")) or (0,)))


def _accepts(release: Release, _: Query) -> str:
    facts = _facts(release)
    return accepts(facts.runtime) if facts else "?"


def _archs(release: Release, _: Query) -> str:
    """The archs each CUDA build of the release workflow compiled: one list when they agree."""
    facts = _facts(release)
    if facts is None or facts.wheels is None:
        return "?" if release.wheels is None else ""
    lists = {b.cuda: " ".join(b.sm) for b in facts.wheels.builds}
    if len(set(lists.values())) == 1:
        return next(iter(lists.values()))
    return "; ".join(f"{'.'.join(c.split('.')[:2])}: {sms}" for c, sms in lists.items())


def _build_os(release: Release, _: Query) -> str:
    facts = _facts(release)
    if facts is None or facts.wheels is None:
        return "?" if release.wheels is None else ""
    out = []
    for runner in facts.wheels.runners:
        host = images.runner(runner)
        out.append(f"{runner} (glibc {host.glibc})" if host and host.glibc else runner)
    return " ".join(out)


COLUMNS: tuple[Column, ...] = (
    Column("release", lambda r, _: str(r.version)),
    Column("date", lambda r, _: r.uploaded or ""),
    Column("paged KV", lambda r, _: "yes" if r.has(kb.PAGED_KV) else "no"),
    Column("page block", lambda r, _: str(r.page_block_multiple or "")),
    Column("torch wheels", _torch),
    Column("CPython", _python),
    Column("CUDA", _cuda),
    Column("torch unknown", _later),
    Column("accepts", _accepts),
    Column("wheel archs", _archs),
    Column("built on", _build_os),
    Column("wheel", _wheel, filtered=True),
)


def columns(q: Query) -> tuple[Column, ...]:
    return tuple(c for c in COLUMNS if bool(q) or not c.filtered)


def record(release: Release, q: Query = NO_QUERY) -> dict[str, Any]:
    w = release.wheels
    wheels: dict[str, Any] | None = None
    if w is not None:
        wheels = {
            "fetched": w.fetched,
            "torch": [{"version": t, "nightly": w.built_against(t)} for t in w.torch],
            "python": list(w.python),
            "cuda": list(w.cuda),
            "cxx11_abi": sorted({b.cxx11_abi for b in w.builds}),
            "platforms": list(w.platforms),
            "seen": sorted(f"torch{b.torch}-cp{b.python}-cu{b.cuda}-cxx11abi{b.cxx11_abi}" for b in w.seen),
            "torch_unknown": list(w.later_torch()),
            "assets": None
            if w.listed is None
            else {
                "complete": w.listed.complete,
                "as_of": w.listed.as_of,
                "source": w.listed.source,
                "files": [a.file for a in w.listed.assets],
            },
        }
    out = {
        "version": str(release.version),
        "uploaded": release.uploaded,
        "tagged": release.tagged,
        "paged_kv": release.has(kb.PAGED_KV),
        "paged_varlen": release.has(kb.PAGED_VARLEN),
        "page_block_multiple": release.page_block_multiple,
        "rocm_page_block_multiple": release.rocm_page_block_multiple,
        "wheels": wheels,
    }
    facts = _facts(release)
    if facts is not None:
        out["build"] = {
            "accepts": accepts(facts.runtime),
            "archs": [
                {"sm": a.sm, "nvcc": str(a.nvcc) if a.nvcc else None, "listed": a.listed} for a in facts.archs
            ],
            "nvcc_floor": str(facts.floor),
            "wheels": None
            if facts.wheels is None
            else {
                "runners": list(facts.wheels.runners),
                "glibc": _build_os(release, NO_QUERY),
                "builds": [{"cuda": b.cuda, "sm": list(b.sm)} for b in facts.wheels.builds],
            },
        }
    if q:
        found = wheel(release, q)
        out["wheel"] = None if found is None else found.value
    return out


def row(release: Release, q: Query = NO_QUERY) -> tuple[str, ...]:
    return tuple(c.cell(release, q) for c in columns(q))


def text(releases: Sequence[Release], q: Query = NO_QUERY) -> str:
    rows = [tuple(c.title for c in columns(q)), *(row(r, q) for r in releases)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]]) + "\n"


def markdown(releases: Sequence[Release], q: Query = NO_QUERY) -> str:
    titles = [c.title for c in columns(q)]
    lines = ["| " + " | ".join(titles) + " |", "|" + "---|" * len(titles)]
    lines += ["| " + " | ".join(row(r, q)) + " |" for r in releases]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str], out: TextIO) -> int:
    args = parser().parse_args(list(argv))
    q = Query(args.torch, args.python, args.cuda)
    base = kb.load()
    found = _filtered(base, q)
    if args.format == "json":
        doc = {"knowledge_base": base.date, "releases": [record(r, q) for r in found]}
        out.write(json.dumps(doc, indent=2) + "\n")
    else:
        out.write((markdown if args.format == "markdown" else text)(found, q))
    return 0
