"""Dockerfiles and Containerfiles: pip, uv and conda installs in RUN, with ARG/ENV values.

Instructions are split by hand and each RUN's shell is read by tree-sitter-bash (``fa_lint.shell``).
tree-sitter-dockerfile was measured for the splitting and not taken: it does not know the
``# escape=`` directive (a backtick-continued file comes out as ERROR nodes), its 0.2.0 wheel loads
through a deprecated API that warns on import, and it would only replace the forty lines below.
dockerfile-parse drops the column of each word and the comment lines inside a continued RUN.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import re
from collections.abc import Callable, Iterator, Mapping

from packaging.version import Version

from fa_lint._records import NamedTuple
from fa_lint.model import BUILD_VARIABLES, Image, Location, Parsed, ParseProblem, Setting
from fa_lint.shell.commands import shell_script, unwrap
from fa_lint.shell.parse import Chunk, Word, basename
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.stops import Stop
from fa_lint.shell.variables import Scope, State, expand
from fa_lint.shell.walk import SHELLS
from fa_lint.syntax.text import TextIndex

NAME = "dockerfile"

_INSTRUCTION = re.compile(r"^[ \t]*([A-Za-z]+)(?=[ \t]|$)")
_HEREDOC = re.compile(r"<<(-?)(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_FLAG = re.compile(r"--[a-z-]+(?:=(?:\"[^\"]*\"|'[^']*'|\S+))?")


class Instruction(NamedTuple):
    keyword: str
    start: int  # offset of the keyword
    args: int  # offset where the arguments start
    end: int  # end of the last continued line
    # the text from ``args`` to ``end`` as the builder reads it: comment and blank lines inside a
    # continuation blanked out, and a non-backslash escape before a line end blanked too (same length)
    body: str
    heredocs: tuple[tuple[int, int], ...] = ()  # (start, end) of each heredoc body
    last: int = 0  # end of the last heredoc terminator line (``end`` when there is none)


class _State:
    def __init__(self) -> None:
        self.variables = Scope()  # ARG and ENV values
        self.build_args: Mapping[str, tuple[str, ...]] = {}  # what other files' docker build gives an ARG
        # (source in the build context, where it lands in the image): a folder ends in "/"
        self.copies: list[tuple[str, str]] = []
        self.workdir = "/"
        self.folders = {"/"}  # folders the image has: each WORKDIR and its parents, each COPY's folder
        self.stage = "stage:0"
        self.stages = 0
        # stages whose build stopped at a RUN's syntax error (exit status 2 fails the RUN, and the
        # build with it): no later instruction of theirs runs, nor of a stage built FROM them
        self.halted: dict[str, Stop] = {}


# BuildKit's parser directive (frontend/dockerfile/parser/parser.go, ``reDirectives``), Go's ``\s``
# spelled out: Python's also matches other scripts' spaces.
_DIRECTIVE = re.compile(r"#[\t\n\f\r ]*([a-zA-Z][a-zA-Z0-9]*)[\t\n\f\r ]*=[\t\n\f\r ]*(.+?)[\t\n\f\r ]*$")


def _escape(text: str) -> str:
    """The escape token, as BuildKit reads ``# escape=``: directives come first, one a line, before
    any other line (a blank line, a comment or an unknown directive ends them); only ``\\`` and a
    backtick are tokens (any other value fails the build, which then reads nothing)."""
    for line in text.removeprefix("\ufeff").split("\n"):
        m = _DIRECTIVE.match(line.rstrip("\r\n").lstrip())
        if m is None or m.group(1).lower() not in ("escape", "syntax"):
            break
        if m.group(1).lower() == "escape":
            return m.group(2) if m.group(2) in ("\\", "`") else "\\"
    return "\\"


def _continues(line: str, esc: str) -> bool:
    """Whether a line continues on the next: BuildKit's ``lineContinuationRegex`` (parser.go,
    ``setEscapeToken``), the escape token then blanks at the line's end, not itself escaped."""
    bare = line.rstrip("\r\n").rstrip(" \t")
    return bare.endswith(esc) and not bare.endswith(esc + esc)


def instructions(index: TextIndex) -> Iterator[Instruction | ParseProblem]:  # noqa: C901 - complexity 13, to split or justify (issue 45)
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
        dropped: set[int] = set()  # comment and blank lines inside the continuation
        while _continues(lines[n], esc) and n + 1 < len(lines):
            n += 1
            while n + 1 < len(lines) and (not lines[n].strip() or lines[n].lstrip().startswith("#")):
                dropped.add(n)
                n += 1
        end = starts[n] + len(lines[n])
        parts = []
        for k in range(first, n + 1):
            line = lines[k][m.end(1) :] if k == first else lines[k]
            newline = "\n" if k < n else ""
            if k in dropped:  # Docker drops these lines before the shell sees the command
                line, newline = " " * len(line), " " if newline else ""
            elif k < n and esc != "\\":  # the shell knows no backtick continuation: join the lines
                cut = len(line.rstrip("\r").rstrip(" \t")) - 1
                line, newline = line[:cut] + " " + line[cut + 1 :], " "
            elif k < n and line.rstrip("\r").endswith((" ", "\t")):  # BuildKit drops the `\` and the
                # blanks after it; the shell would read `\ ` as an escaped blank: the blanks go first
                cr = line[len(line.rstrip("\r")) :]
                bare = line.rstrip("\r").rstrip(" \t")
                line = bare[:-1] + " " * (len(line) - len(bare) - len(cr)) + "\\" + cr
            parts.append(line + newline)
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
        last = starts[n] + len(lines[n])
        args = starts[first] + m.end(1)
        yield Instruction(
            m.group(1).upper(), starts[first] + m.start(1), args, end, "".join(parts), tuple(heredocs), last
        )
        n += 1


def _args_start(text: str, i: int) -> int:
    """Skip RUN's own flags (--mount=..., --network=...)."""
    while True:
        while i < len(text) and text[i] in " \t\\\r\n":
            i += 1
        m = _FLAG.match(text, i)
        if not m:
            return i
        i = m.end()


def parse(path: str, text: str, build_args: Mapping[str, tuple[str, ...]] | None = None) -> Iterator[Parsed]:
    """``build_args``: the values other files build it with (``docker build --build-arg``), for the
    ``ARG`` lines that have no default of their own."""
    index = TextIndex(path, text)
    state = _State()
    state.build_args = build_args or {}
    scanner = Scanner(index, NAME, include_map=_image_to_repo(state))
    state.variables.adopt(scanner.budget)  # ARG and ENV count against the file's budget as RUN does
    for ins in instructions(index):
        if isinstance(ins, ParseProblem):
            yield ins
        else:
            yield from _instruction(index, ins, state, scanner)
            budget = scanner.budget
            if budget.crossed and not budget.reported:  # an ARG, ENV, FROM or WORKDIR crossed it
                budget.reported = True
                yield ParseProblem(index.location(ins.start, ins.end), budget.message())
            yield from scanner.drain()
    yield from scanner.finish()


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
# AMD's rocm/pytorch: "Using a Docker image with PyTorch pre-installed ... docker pull rocm/pytorch:latest"
# (https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.2.0/how-to/3rd-party/pytorch-install.html);
# its tags name the torch (rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0). Tags without "pytorch"
# in them are not known to: rocm2.9_ubuntu18.04_py3.6 had no torch for Python 3 (ROCm/pytorch#515).
# Pattern texts, compiled by re on the first FROM that names rocm/pytorch.
_ROCM_PYTORCH = _REGISTRY + r"rocm/pytorch(?:(?::latest)?(?:@|$)|:(\S*pytorch\S*))"
_ROCM_TAG = r"_py([0-9]+\.[0-9]+)(?=_)|_pytorch_(?:release_)?([0-9]+\.[0-9]+(?:\.[0-9]+)?)(?![0-9.])"
# nvidia/cuda:12.1.1-devel-ubuntu22.04: a CUDA toolkit, no torch
_CUDA_IMAGE = re.compile(r"^(?:docker\.io/|nvcr\.io/)?nvidia/cuda:([0-9]+\.[0-9]+)")
_NGC_PYTORCH = re.compile(r"^nvcr\.io/nvidia/pytorch:")
# Images that come without torch: whatever a stage built on them has, its own commands installed.
# AMD's rocm/dev-ubuntu-22.04 (and -20.04, -24.04...) is ubuntu with the rocm-dev packages and nothing
# more (ROCm/ROCm-docker, dev/Dockerfile-ubuntu-22.04): rocm/pytorch is the image with torch.
_NO_TORCH = re.compile(
    _REGISTRY + r"(?:python|ubuntu|debian|alpine|continuumio/miniconda3|condaforge/miniforge3"
    r"|mambaorg/micromamba|rocm/dev-ubuntu-[0-9.]+)(?::|@|$)"
)


def image(reference: str, location: Location, scope: str) -> Image:
    py = _PYTHON_IMAGE.match(reference)
    pt = _PYTORCH_IMAGE.match(reference)
    cuda = _CUDA_IMAGE.match(reference)
    rocm = re.match(_ROCM_PYTORCH, reference) if "rocm/pytorch" in reference else None
    python, torch = (py.group(1) if py else None), (pt.group(1) if pt else None)
    has_torch: bool | None = None
    if re.match(_REGISTRY + r"pytorch/pytorch(?::|@|$)", reference) or _NGC_PYTORCH.match(reference):
        has_torch = True
    elif rocm:
        has_torch = True
        for m in re.finditer(_ROCM_TAG, rocm.group(1) or ""):
            python, torch = python or m.group(1), torch or m.group(2)
    elif cuda or _NO_TORCH.match(reference):
        has_torch = False
    return Image(
        location,
        reference,
        scope,
        python=python,
        torch=Version(torch) if torch else None,
        cxx11_abi=True if _NGC_PYTORCH.match(reference) else None,
        cuda=(pt.group(2) if pt else None) or (cuda.group(1) if cuda else None),
        has_torch=has_torch,
    )


def _instruction(index: TextIndex, ins: Instruction, state: _State, scanner: Scanner) -> Iterator[Parsed]:
    args = ins.body
    if ins.keyword == "FROM":
        state.stages += 1
        m = re.search(r"\s[Aa][Ss]\s+(\S+)", args)
        state.stage = scanner.scope = f"stage:{m.group(1)}" if m else f"stage:{state.stages - 1}"
        state.workdir = "/"
        state.copies, state.folders = [], {"/"}  # a new stage starts from its own image
        ref = re.search(r"(?:^|\s)(?!--)(\S+)", args)
        base = state.halted.get(f"stage:{ref.group(1)}") if ref else None
        if base is not None:
            state.halted[state.stage] = base  # built on a stage that never finished
        if ref:
            start = ins.args + ref.start(1)
            expanded = expand(ref.group(1), state.variables).text
            yield image(expanded, index.location(start, ins.args + ref.end(1)), state.stage)
        platform = re.search(r"--platform=(\S+)", args)
        if platform:  # the stage's CPU (linux/arm64): the machine layer reads it (machine/cpu.py)
            start, end = ins.args + platform.start(1), ins.args + platform.end(1)
            value = expand(platform.group(1), state.variables).text
            yield Setting(index.location(start, end), "platform", "FROM --platform", value, state.stage)
    elif ins.keyword in ("ARG", "ENV"):
        yield from _assign(index, ins, args, state, scanner)
    elif ins.keyword == "WORKDIR":
        path = expand(args.strip().strip("\"'"), state.variables).text
        state.workdir = posixpath.normpath(posixpath.join(state.workdir, path))
        _made(state.workdir, state)
    elif ins.keyword in ("COPY", "ADD") and not ins.heredocs:
        yield from _toolkit(index, ins, args, state, scanner)
        _copy(args, state, scanner)
    elif ins.keyword == "RUN":
        _run(index, ins, state, scanner)


def _assign(
    index: TextIndex, ins: Instruction, args: str, state: _State, scanner: Scanner
) -> Iterator[Setting]:
    """ARG and ENV values; those a build reads (``BUILD_VARIABLES``) are settings of the stage's
    installs from here on (an ``ARG`` with no default: set from outside, value unknown)."""
    found = list(re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|\S*)", args))
    pairs = [(m.group(1), m.group(2), m.start(), m.end()) for m in found]
    if not pairs and ins.keyword == "ENV":  # legacy "ENV NAME value"
        m = re.match(r"(\s*)([A-Za-z_][A-Za-z0-9_]*)\s+(.*?)\s*$", args, re.S)
        pairs = [(m.group(2), m.group(3), len(m.group(1)), m.end(3))] if m else []
    elif not pairs:  # ARG NAME
        m = re.match(r"(\s*)([A-Za-z_][A-Za-z0-9_]*)\s*$", args)
        given = state.build_args.get(m.group(2), ()) if m else ()
        if m and given:  # a value only the build command gives: each one another file builds it with
            state.variables.set(m.group(2), tuple(given))
        if m and m.group(2) in BUILD_VARIABLES:
            where = index.location(ins.args + m.start(2), ins.args + m.end(2))
            yield Setting(where, "env", m.group(2), "", state.stage, scanner.step)
    for name, quoted, start, end in pairs:
        exp = expand(quoted.strip("\"'"), state.variables)
        state.variables.set(name, exp.texts)
        if name in BUILD_VARIABLES:
            value = quoted.strip("\"'") if exp.unresolved else exp.text
            where = index.location(ins.args + start, ins.args + end)
            yield Setting(where, "env", name, value, state.stage, scanner.step)


def _toolkit(
    index: TextIndex, ins: Instruction, args: str, state: _State, scanner: Scanner
) -> Iterator[Setting]:
    """``COPY --from=nvidia/cuda:12.1.1-devel-... /usr/local/cuda /usr/local/cuda``: a toolkit copied in."""
    words = [w.strip("\"'") for w in args.split() if w != "\\"]
    stage = next((w for w in words if w.startswith("--from=")), None)
    words = [w for w in words if not w.startswith("--")]
    if stage is not None and any("cuda" in w for w in words[:-1]):
        m = re.search(r"nvidia/cuda:(\d+\.\d+)", stage)
        where = index.location(ins.args, ins.end)
        yield Setting(where, "toolkit", "COPY --from", m.group(1) if m else "", state.stage, scanner.step)


def _made(folder: str, state: _State) -> None:
    """A folder the image now has, and its parents."""
    while folder not in state.folders:
        state.folders.add(folder)
        folder = posixpath.dirname(folder)


def _copy(args: str, state: _State, scanner: Scanner) -> None:
    """``COPY [--flags] SRC... DEST`` (or its JSON form). DEST is a folder, which each SRC lands in,
    when it ends in ``/``, is the working folder (``.``) or another the image has (a WORKDIR), or
    there are several SRC or a wildcard; else it is the file's own new name (the Dockerfile reference:
    a DEST without a trailing slash "will be considered a regular file")."""
    body = args.strip()
    flags = re.match(r"(?:--\S+\s+)*", body)
    rest = body[flags.end() :] if flags else body
    words: list[str] = []
    if rest.startswith("["):
        try:
            items = json.loads(rest.replace("\\\n", ""))
        except json.JSONDecodeError:
            items = None
        if isinstance(items, list) and all(isinstance(x, str) for x in items):
            words = items
    if not words:
        words = [w.strip("\"'") for w in rest.split() if w != "\\"]
    stage = re.search(r"(?:^|\s)--from=(\S+)", body[: flags.end()] if flags else "")
    if len(words) < 2:
        return
    sources, dest = words[:-1], words[-1]
    target = posixpath.normpath(posixpath.join(state.workdir, dest))
    folder = (
        dest.endswith("/")
        or dest in (".", "..")
        or target in state.folders
        or len(sources) > 1
        or any(ch in src for src in sources for ch in "*?[")
    )
    _made(target if folder else posixpath.dirname(target), state)
    for src in sources:
        if stage is not None:  # wheels built in another stage
            scanner.copy(src, posixpath.join(target, posixpath.basename(src)) if folder else target)
        else:
            state.copies.append((src, target.rstrip("/") + "/" if folder else target))


def _image_to_repo(state: _State) -> Callable[[str, int], str | None]:
    """Map a path inside the image back to the build context, through COPY/ADD and WORKDIR."""

    def mapping(path: str, offset: int) -> str | None:
        target = posixpath.normpath(posixpath.join(state.workdir, path))
        for src, dest in reversed(state.copies):
            d = posixpath.normpath(dest)
            name = posixpath.basename(src.rstrip("/"))
            # a folder's contents land in DEST, not the folder itself: `.`, `reqs/`, and `reqs`,
            # which names no file (fa-lint reads no folder here to tell)
            folder = src in (".", "./") or src.endswith("/") or "." not in name
            if dest.endswith("/") and posixpath.dirname(target) == d:
                if fnmatch.fnmatchcase(posixpath.basename(target), name):  # the file, or a wildcard's
                    return posixpath.join(posixpath.dirname(src), posixpath.basename(target))
            elif target == d:
                return src
            if folder and target.startswith(d + "/"):
                return posixpath.normpath(posixpath.join(src, target[len(d) + 1 :]))
        return None

    return mapping


def _run(index: TextIndex, ins: Instruction, state: _State, scanner: Scanner) -> None:
    body = ins.body
    skip = _args_start(body, 0)
    start = ins.args + skip
    for flag in _FLAG.finditer(body, 0, skip):  # --mount=type=bind,from=build,src=/wheels,target=/w
        mount = dict(
            p.partition("=")[::2] for p in flag.group().removeprefix("--mount=").strip("\"'").split(",")
        )
        if flag.group().startswith("--mount=") and "from" in mount:
            source = mount.get("source") or mount.get("src") or "/"
            scanner.copy(
                source, mount.get("target") or mount.get("dst") or mount.get("destination") or source
            )
    # Shell variables die with the RUN; ARG and ENV values live on, as does WORKDIR (not cd).
    shell = State(state.variables.child(), state.workdir)
    scanner.halted = state.halted.get(state.stage)
    scanner.stopped = None
    if not (body.startswith("[", skip) and _exec_form(index, body[skip:], start, scanner, shell)):
        _shell_form(index, ins, skip, scanner, shell)
    if scanner.stopped is not None and state.stage not in state.halted:
        line = index.location(ins.start, ins.start).line
        after = (
            f"the RUN at line {line} stops at a syntax error (`{scanner.stopped.cause}`, exit status 2), "
            "and the image build with it: no later instruction of its stage runs"
        )
        state.halted[state.stage] = scanner.stopped._replace(after=after)
    scanner.halted = None


def _shell_form(index: TextIndex, ins: Instruction, skip: int, scanner: Scanner, shell: State) -> None:
    body, start = ins.body, ins.args + skip
    if ins.heredocs and re.fullmatch(r"<<-?['\"]?\w+['\"]?\s*", body[skip:]):
        for a, b in ins.heredocs:  # RUN <<EOF: the body is the script
            scanner.run(a, b, shell)
            if scanner.stopped is not None:
                scanner.halted = scanner.halted or scanner.stopped  # the heredoc's shell has exited
    else:  # heredocs given to a command are read as the shell reads them: data, or a script for bash
        scanner.run(start, ins.last, shell, text=body[skip:] + index.text[ins.end : ins.last])


def exec_json(raw: str) -> list[object] | None:
    """An exec form's array, read as BuildKit reads it: JSON of the whole text (a continuation's
    line breaks taken out); None where the text is no JSON array."""
    try:
        items = json.loads(raw.replace("\\\n", ""))
    except json.JSONDecodeError:
        return None
    return items if isinstance(items, list) else None


def _exec_form(index: TextIndex, raw: str, start: int, scanner: Scanner, shell: State) -> bool:
    """An exec-form ``RUN [...]``; False where the text is not JSON, which BuildKit then runs as the
    shell form, the whole text as one shell command (``parseMaybeJSON``, frontend/dockerfile/parser/
    line_parsers.go: ``json.Unmarshal`` of the whole rest, so ``[...]  # note`` is the shell form). An
    array that holds something other than strings fails the build (``errDockerfileNotStringArray``):
    nothing of it runs."""
    array = exec_json(raw)
    if array is None:
        return False
    items = [x for x in array if isinstance(x, str)]
    if len(items) < len(array):
        return True
    text, end = index.text, start + len(raw)
    words, pos = [], start
    for item in items:
        q = text.find(json.dumps(item), pos, end)
        q = text.find('"', pos, end) if q < 0 else q
        close = text.find('"', q + 1, end)
        while close > 0 and text[close - 1] == "\\":
            close = text.find('"', close + 1, end)
        words.append(Word(item, q, close + 1, quoted=True))
        pos = close + 1
    # ["bash", "-c", "pip install ..."] (also after a prefix: ["/usr/bin/env", "bash", "-c", ...]):
    # the script, each character placed in the file
    inner = unwrap(words)
    found = shell_script([w.text for w in inner]) if inner and basename(inner[0].text) in SHELLS else None
    script = None
    if found is not None:
        w = inner[found]
        script = Chunk(w.text, positions=_string_positions(text, w.start, w.end, w.text))
    scanner.exec_form(words, shell, script)
    return True


def _string_positions(text: str, start: int, end: int, value: str) -> list[int]:
    """The file offset of each character of a JSON string written at ``start:end`` (its quotes
    included): an escape (``\\"``, ``\\n``, ``\\u00e9``) is placed at its backslash, and Docker's
    line continuations inside it are skipped. Where the decoding disagrees with ``json`` (a surrogate
    pair, a string that is not where it was looked for), every character is placed at the string."""
    out: list[int] = []
    i = start + 1
    while i < end - 1:
        if text[i] != "\\":
            out.append(i)
            i += 1
        elif text[i + 1 : i + 2] == "\n":
            i += 2
        else:
            out.append(i)
            i += 6 if text[i + 1 : i + 2] == "u" else 2
    return out if len(out) == len(value) else [start] * len(value)
