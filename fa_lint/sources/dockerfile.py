"""Dockerfiles and Containerfiles: pip, uv and conda installs in RUN, with ARG/ENV values.

Written by hand: dockerfile-parse drops the column of each word and the comment lines inside a
continued RUN, and neither can be recovered afterwards.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from packaging.version import Version

from fa_lint.model import Image, Location, Parsed, ParseProblem
from fa_lint.sources import _shell
from fa_lint.sources._text import TextIndex

NAME = "dockerfile"
PATTERNS = ("Dockerfile", "Dockerfile.*", "*.Dockerfile", "*.dockerfile", "Containerfile", "Containerfile.*")

_INSTRUCTION = re.compile(r"^[ \t]*([A-Za-z]+)(?=[ \t]|$)")
_HEREDOC = re.compile(r"<<(-?)(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_FLAG = re.compile(r"--[a-z-]+(?:=(?:\"[^\"]*\"|'[^']*'|\S+))?")


@dataclass(frozen=True, slots=True)
class Instruction:
    keyword: str
    start: int  # offset of the keyword
    args: int  # offset where the arguments start
    end: int  # end of the last continued line
    masked: str  # the file text with comment lines inside this instruction blanked out
    heredocs: tuple[tuple[int, int], ...] = ()  # (start, end) of each heredoc body


@dataclass
class _State:
    variables: list[tuple[int, str, str]] = field(default_factory=list)  # (offset, name, value)
    copies: list[tuple[str, str]] = field(default_factory=list)  # (source in context, dest in image)
    workdir: str = "/"
    stage: str = "stage:0"
    stages: int = 0

    def at(self, offset: int) -> dict[str, str]:
        return {name: value for off, name, value in self.variables if off <= offset}


def _escape(text: str) -> str:
    m = re.match(r"(?:[ \t]*#[ \t]*[a-z]+[ \t]*=.*\n)*?[ \t]*#[ \t]*escape[ \t]*=[ \t]*([\\`])", text, re.I)
    return m.group(1) if m else "\\"


def instructions(index: TextIndex) -> Iterator[Instruction | ParseProblem]:
    """Logical instructions, with continuation lines joined and heredoc bodies attached."""
    text = index.text
    esc = _escape(text)
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    n = 0
    while n < len(lines):
        line = lines[n]
        m = _INSTRUCTION.match(line)
        if not line.strip() or line.lstrip().startswith("#") or not m:
            n += 1
            continue
        first = n
        comments: list[tuple[int, int]] = []
        while lines[n].rstrip("\r").rstrip(" \t").endswith(esc) and n + 1 < len(lines):
            n += 1
            while n + 1 < len(lines) and (not lines[n].strip() or lines[n].lstrip().startswith("#")):
                if lines[n].lstrip().startswith("#"):
                    comments.append((starts[n], starts[n + 1]))
                n += 1
        end = starts[n] + len(lines[n])
        heredocs = []
        for h in _HEREDOC.finditer(text, starts[first], end):
            body_start = starts[n + 1] if n + 1 < len(lines) else len(text)
            delim, strip = h.group(3), bool(h.group(1))
            k = n + 1
            while k < len(lines) and (lines[k].lstrip("\t") if strip else lines[k]).rstrip("\r") != delim:
                k += 1
            if k >= len(lines):
                yield ParseProblem(index.location(h.start(), h.end()), f"heredoc <<{delim} is never closed")
                return
            heredocs.append((body_start, starts[k]))
            n = k
        masked = text
        for a, b in reversed(comments):  # Docker drops these lines before the shell sees the command
            masked = masked[:a] + " " * (b - a) + masked[b:]
        yield Instruction(
            m.group(1).upper(),
            starts[first] + m.start(1),
            starts[first] + m.end(1),
            end,
            masked,
            tuple(heredocs),
        )
        n += 1


def _args_start(text: str, i: int, end: int) -> int:
    """Skip RUN's own flags (--mount=..., --network=...)."""
    while True:
        while i < end and text[i] in " \t\\\r\n":
            i += 1
        m = _FLAG.match(text, i)
        if not m or m.end() > end:
            return i
        i = m.end()


def parse(path: str, text: str) -> Iterator[Parsed]:
    index = TextIndex(path, text)
    state = _State()
    scanner = _shell.Scanner(index, NAME, state.at, include_map=_image_to_repo(state))
    for ins in instructions(index):
        if isinstance(ins, ParseProblem):
            yield ins
        else:
            yield from _instruction(index, ins, state, scanner)


# Known base images. The C++ ABI of NVIDIA's NGC PyTorch images is stated by flash-attn's own release
# workflow (.github/workflows/publish.yml at v2.8.3.post1, lines 49-52): "nvcr images have Pytorch
# compiled with C++11 ABI". ASCII digits only: \d also matches other scripts' digits
# ("python:۳.1"), which no tag parser reads.
_REGISTRY = r"^(?:docker\.io/)?(?:library/)?"
_PYTHON_IMAGE = re.compile(_REGISTRY + r"python:([0-9]+\.[0-9]+)")
# pytorch/pytorch:2.4.0-cuda12.1-cudnn9-devel: the torch release and the CUDA it was built with
_PYTORCH_IMAGE = re.compile(
    _REGISTRY + r"pytorch/pytorch:([0-9]+\.[0-9]+(?:\.[0-9]+)?)(?:-cuda([0-9]+\.[0-9]+))?(?![0-9.])"
)
# nvidia/cuda:12.1.1-devel-ubuntu22.04: a CUDA toolkit, no torch
_CUDA_IMAGE = re.compile(r"^(?:docker\.io/|nvcr\.io/)?nvidia/cuda:([0-9]+\.[0-9]+)")
_NGC_PYTORCH = re.compile(r"^nvcr\.io/nvidia/pytorch:")
# Images that come without torch: whatever a stage built on them has, its own commands installed.
_NO_TORCH = re.compile(
    _REGISTRY + r"(?:python|ubuntu|debian|alpine|continuumio/miniconda3|condaforge/miniforge3"
    r"|mambaorg/micromamba)(?::|@|$)"
)


def image(reference: str, location: Location, scope: str) -> Image:
    py = _PYTHON_IMAGE.match(reference)
    pt = _PYTORCH_IMAGE.match(reference)
    cuda = _CUDA_IMAGE.match(reference)
    has_torch: bool | None = None
    if re.match(_REGISTRY + r"pytorch/pytorch(?::|@|$)", reference) or _NGC_PYTORCH.match(reference):
        has_torch = True
    elif cuda or _NO_TORCH.match(reference):
        has_torch = False
    return Image(
        location,
        reference,
        scope,
        python=py.group(1) if py else None,
        torch=Version(pt.group(1)) if pt else None,
        cxx11_abi=True if _NGC_PYTORCH.match(reference) else None,
        cuda=(pt.group(2) if pt else None) or (cuda.group(1) if cuda else None),
        has_torch=has_torch,
    )


def _instruction(
    index: TextIndex, ins: Instruction, state: _State, scanner: _shell.Scanner
) -> Iterator[Parsed]:
    text = ins.masked
    args = text[ins.args : ins.end]
    if ins.keyword == "FROM":
        state.stages += 1
        m = re.search(r"\s[Aa][Ss]\s+(\S+)", args)
        state.stage = scanner.scope = f"stage:{m.group(1)}" if m else f"stage:{state.stages - 1}"
        state.workdir = "/"
        ref = re.search(r"(?:^|\s)(?!--)(\S+)", args)
        if ref:
            start = ins.args + ref.start(1)
            expanded = _shell.expand(ref.group(1), state.at(ins.start)).text
            yield image(expanded, index.location(start, ins.args + ref.end(1)), state.stage)
    elif ins.keyword in ("ARG", "ENV"):
        _assign(ins, args, state)
    elif ins.keyword == "WORKDIR":
        state.workdir = posixpath.join(state.workdir, args.strip().strip("\"'"))
    elif ins.keyword in ("COPY", "ADD") and not ins.heredocs:
        words = [w for w in args.split() if not w.startswith("--") and w != "\\"]
        if len(words) >= 2:
            dest = posixpath.join(state.workdir, words[-1].strip("\"'"))
            state.copies += [(src.strip("\"'"), dest) for src in words[:-1]]
    elif ins.keyword == "RUN":
        yield from _run(index, ins, state, scanner)


def _assign(ins: Instruction, args: str, state: _State) -> None:
    body = args.strip()
    pairs = re.findall(r"([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|\S*)", body)
    if not pairs and ins.keyword == "ENV":  # legacy "ENV NAME value"
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s+(.*)", body, re.S)
        pairs = [(m.group(1), m.group(2).strip())] if m else []
    known = state.at(ins.start)
    for name, quoted in pairs:
        state.variables.append((ins.start, name, _shell.expand(quoted.strip("\"'"), known).text))


def _image_to_repo(state: _State) -> Callable[[str, int], str | None]:
    """Map a path inside the image back to the build context, through COPY/ADD and WORKDIR."""

    def mapping(path: str, offset: int) -> str | None:
        target = posixpath.normpath(posixpath.join(state.workdir, path))
        for src, dest in reversed(state.copies):
            d = posixpath.normpath(dest)
            if target == d or (dest.endswith("/") and target == posixpath.join(d, posixpath.basename(src))):
                return src
            if target.startswith(d + "/") and (src in (".", "./") or src.endswith("/")):
                return posixpath.normpath(posixpath.join(src, target[len(d) + 1 :]))
        return None

    return mapping


def _run(index: TextIndex, ins: Instruction, state: _State, scanner: _shell.Scanner) -> Iterator[Parsed]:
    text = ins.masked
    start = _args_start(text, ins.args, ins.end)
    variables_before = len(state.variables)
    if text.startswith("[", start):
        yield from _exec_form(index, text, start, ins.end, scanner)
        return
    spans = [(start, ins.end)]
    if ins.heredocs and re.match(r"<<-?['\"]?\w+['\"]?\s*$", text[start : ins.end]):
        spans = list(ins.heredocs)  # RUN <<EOF: the body is the script
    for a, b in spans:
        for cmd in _shell.commands(text, a, b):
            for name, value, off in _shell.assignments(cmd):
                state.variables.append((off, name, _shell.expand(value, state.at(off)).text))
            yield from scanner.records(cmd)
    # Shell variables die with the RUN; ARG and ENV values live on.
    del state.variables[variables_before:]


def _exec_form(
    index: TextIndex, text: str, start: int, end: int, scanner: _shell.Scanner
) -> Iterator[Parsed]:
    raw = text[start:end]
    try:
        items = json.loads(raw.replace("\\\n", ""))
    except json.JSONDecodeError:
        return  # not JSON: Docker runs it through the shell as written
    if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
        return
    words, pos = [], start
    for item in items:
        q = text.find(json.dumps(item), pos, end)
        q = text.find('"', pos, end) if q < 0 else q
        close = text.find('"', q + 1, end)
        while close > 0 and text[close - 1] == "\\":
            close = text.find('"', close + 1, end)
        words.append(_shell.Word(item, q, close + 1, quoted=True))
        pos = close + 1
    yield from scanner.records(_shell.Command(words))
