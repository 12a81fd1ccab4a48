"""``fa-lint releases``: every flash-attn release with its paged-KV facts and prebuilt wheels.

The table people search flash-attn's issues for -- which release has a wheel for my torch, my
Python, my CUDA -- printed from the knowledge base, never from the network.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from fa_lint import kb
from fa_lint.kb import Build, Release

COLUMNS = ("release", "date", "paged KV", "page block", "torch wheels", "CPython", "CUDA")
NIGHTLY = "*"  # marks a torch whose wheels were built against a nightly of it


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
        epilog=f"'{NIGHTLY}' after a torch version: its wheels were built against a nightly of it. "
        "'?': no tag to read the release workflow from. 'none': setup.py fetches no wheel, pip compiles.",
    )
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--torch", metavar="X.Y", help="only releases with a wheel for this torch major.minor")
    p.add_argument("--python", metavar="3.Y", help="only releases with a wheel for this CPython")
    p.add_argument(
        "--cuda", metavar="X[.Y]", help="only releases with a wheel for torch's CUDA X.Y (or any X.*)"
    )
    return p


def _order(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def _builds(release: Release, args: argparse.Namespace) -> list[Build]:
    w = release.wheels
    if w is None or not w.fetched:
        return []
    out = list(w.builds)
    if args.torch:
        out = [b for b in out if b.torch == args.torch]
    if args.python:
        out = [b for b in out if b.python == args.python]
    if args.cuda:
        if "." in args.cuda:
            named = w.cuda_name(args.cuda)
            out = [b for b in out if b.cuda == named]
        else:
            out = [b for b in out if w.cuda_name(f"{args.cuda}.0") == b.cuda or b.cuda.startswith(args.cuda)]
    return out


def _filtered(base: kb.KnowledgeBase, args: argparse.Namespace) -> list[Release]:
    wanted = args.torch or args.python or args.cuda
    return [r for r in base.installable if not wanted or _builds(r, args)]


def record(release: Release) -> dict[str, Any]:
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
        }
    return {
        "version": str(release.version),
        "uploaded": release.uploaded,
        "paged_kv": release.has(kb.PAGED_KV),
        "page_block_multiple": release.page_block_multiple,
        "wheels": wheels,
    }


def _span(values: Sequence[str]) -> str:
    return values[0] if len(values) == 1 else f"{values[0]}-{values[-1]}"


def row(release: Release) -> tuple[str, ...]:
    w = release.wheels
    if w is None:
        torch = python = cuda = "?"
    elif not w.fetched:
        torch, python, cuda = "none", "", ""
    else:
        torch = " ".join(t + (NIGHTLY if w.built_against(t) else "") for t in w.torch)
        python = _span(sorted(w.python, key=_order))
        cuda = " ".join(f"cu{c}" for c in w.cuda)
    return (
        str(release.version),
        release.uploaded or "",
        "yes" if release.has(kb.PAGED_KV) else "no",
        str(release.page_block_multiple or ""),
        torch,
        python,
        cuda,
    )


def text(releases: Sequence[Release]) -> str:
    rows = [COLUMNS, *(row(r) for r in releases)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]]) + "\n"


def markdown(releases: Sequence[Release]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row(r)) + " |" for r in releases]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str], out: TextIO) -> int:
    args = parser().parse_args(list(argv))
    base = kb.load()
    found = _filtered(base, args)
    if args.format == "json":
        doc = {"knowledge_base": base.date, "releases": [record(r) for r in found]}
        out.write(json.dumps(doc, indent=2) + "\n")
    else:
        out.write((markdown if args.format == "markdown" else text)(found))
    return 0
