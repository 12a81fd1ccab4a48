"""Reading one file: its bytes within the limits, their decoding, and its format's parser.

A file that cannot be read, decoded or parsed is a located ``ParseProblem``, never an exception:
it costs that file, never the run.
"""

from __future__ import annotations

import codecs
import os
import stat
import sys
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import BinaryIO

from fa_lint._lazy import Lazy
from fa_lint.model import FileResult, Image, Location, Parsed, ParseProblem, Requirement, internal_error
from fa_lint.sources import SOURCES

MAX_BYTES = 16 * 1024 * 1024


def _problem(path: str, message: str, line: int = 1, column: int = 1) -> ParseProblem:
    return ParseProblem(Location(path, line, column, line, column), message)


def read_text(path: str, coding: str | None = None) -> str | ParseProblem:
    """A file's text, or why it cannot be had: missing, too large, binary, not UTF-8/16. ``coding``:
    whose rule a declared encoding follows (``decode``)."""
    try:
        # unbuffered: the file is read whole, in one call, with no buffer object between
        with open(path, "rb", buffering=0) as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                # a device or a pipe (a committed link to /dev/zero, a process substitution): its size
                # says nothing, so read up to the limit and no further
                data = _read_up_to(f, MAX_BYTES + 1)
                if len(data) > MAX_BYTES:
                    return _problem(path, f"not a regular file, and longer than {MAX_BYTES} bytes")
                return decode(path, data, coding)
            if st.st_size > MAX_BYTES:
                return _problem(
                    path, f"file is too large to check ({st.st_size} bytes; the limit is {MAX_BYTES})"
                )
            data = f.readall()
    except OSError as exc:
        return _problem(path, f"cannot read file: {exc.strerror or exc}")
    return decode(path, data, coding)


def _read_up_to(f: BinaryIO, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit and (chunk := f.read(min(limit - size, 1 << 20))):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


# The tools that read a file honour an encoding it declares, and so must fa-lint, or a pin they see can
# hide in what it reads as a comment (UTF-7's "+AAo-" is a line break). CODINGS: whose rule each format
# follows; the rest (TOML, YAML, JSON, shell) declare none.
# - "pip": pip's requirements files (pip 23.2.1 src/pip/_internal/utils/encoding.py:7-36, ``BOMS``,
#   ``ENCODING_RE`` and ``auto_decode``; pip-requirements-parser 32.0.1 copies it, line 677): a byte
#   order mark (UTF-8, UTF-16, UTF-32, in that order), else ``coding[:=]\s*([-\w.]+)`` on one of the
#   first two lines (split at "\n") that starts with "#", whose codec then decodes the whole file.
# - "python": PEP 263, as CPython's tokenizer reads it (``tokenize.detect_encoding``: a UTF-8 BOM, or a
#   coding comment on line 1, or on line 2 after a blank or comment line).
CODINGS = {"requirements": "pip", "setup.py": "python", "nox": "python", "python-app": "python"}
_PIP_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF32, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
)
_PIP_CODING = Lazy(rb"coding[:=]\s*([-\w.]+)")
# Names of UTF-8 itself: a declaration of one changes nothing (one of ASCII is read as declared: pip and
# CPython refuse a byte above 127 then).
_UTF8 = frozenset({"utf-8", "utf_8", "utf8", "u8", "utf", "cp65001"})
_SURROGATE = Lazy("[\ud800-\udfff]")


def declared(data: bytes, coding: str) -> tuple[str, int] | None:
    """The encoding a file declares by ``coding``'s rule (see CODINGS), and the line that says so; None
    where it declares none, or one that reads as UTF-8 (what fa-lint reads by default)."""
    if coding == "pip":
        if data.startswith(tuple(bom for bom, _ in _PIP_BOMS)):
            return None  # the byte order marks, as decode reads them
        for n, line in enumerate(data.split(b"\n", 2)[:2], 1):
            m = _PIP_CODING().search(line) if line[:1] == b"#" else None
            if m is not None:
                name = m.group(1).decode("ascii")
                return None if name.lower() in _UTF8 else (name, n)
        return None
    if coding == "python":
        if data.startswith(codecs.BOM_UTF8):
            return None
        import io
        import tokenize

        try:
            name, lines = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:
            # "unknown encoding: x" is CPython's refusal of the file; any other (a first line that is not
            # UTF-8) declares nothing, and the UTF-8 reading reports the byte
            message = str(exc)
            if not message.startswith("unknown encoding"):
                return None
            return message.rpartition(": ")[2].strip(), _declaration_line(data)
        if name.lower() in _UTF8:
            return None
        return name, len(lines)
    return None


def _first_two_lines(data: bytes) -> bytes:
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    return data if second < 0 else data[:second]


def _declaration_line(data: bytes) -> int:
    head = data.split(b"\n", 2)[:2]
    return next((n for n, line in enumerate(head, 1) if b"coding" in line), 1)


def _decode_declared(path: str, data: bytes, name: str, line: int, tool: str) -> str | ParseProblem:
    """The whole file decoded by the codec it declares, as ``tool`` decodes it."""
    try:
        text = data.decode(name)
    except LookupError:  # no such codec, or one of bytes to bytes ("hex", "zlib")
        return _problem(
            path, f"file declares encoding {name!r}, which is no text encoding {tool} can read it with", line
        )
    except UnicodeDecodeError as exc:
        at = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return _problem(path, f"file is not valid {name} (the encoding it declares)", at, column)
    except UnicodeError as exc:
        return _problem(path, f"file declares encoding {name!r}, which does not decode it: {exc}", line)
    lone = _SURROGATE().search(text)  # UTF-7 and unicode_escape decode to one; no parser or writer takes it
    if lone is not None:
        at = text.count("\n", 0, lone.start()) + 1
        column = lone.start() - (text.rfind("\n", 0, lone.start()) + 1) + 1
        return _problem(path, f"file decodes ({name}) to a lone surrogate, which is no character", at, column)
    return text


def decode(path: str, data: bytes, coding: str | None = None) -> str | ParseProblem:
    """Bytes as text the way pip and the TOML/YAML readers take them: UTF-8 (BOM or not), or UTF-16;
    with ``coding`` (see CODINGS), in the encoding the file declares, as its tool decodes it."""
    if len(data) > MAX_BYTES:
        return _problem(path, f"file is too large to check ({len(data)} bytes; the limit is {MAX_BYTES})")
    if coding == "pip" and data.startswith(codecs.BOM_UTF32_BE):  # the one mark below pip reads alone
        return _decode_declared(path, data[len(codecs.BOM_UTF32_BE) :], "utf-32-be", 1, "pip")
    if coding is not None and b"coding" in _first_two_lines(data):
        found = declared(data, coding)
        if found is not None:
            if b"\0" in data:
                line = data.count(b"\n", 0, data.index(b"\0")) + 1
                return _problem(
                    path, "file is binary (it contains NUL bytes), not a text dependency file", line
                )
            tool = "pip" if coding == "pip" else "Python"
            return _decode_declared(path, data, *found, tool)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            return _problem(path, "file starts with a UTF-16 byte order mark but is not UTF-16")
    if b"\0" in data:
        line = data.count(b"\n", 0, data.index(b"\0")) + 1
        return _problem(path, "file is binary (it contains NUL bytes), not a text dependency file", line)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return _problem(path, f"file is not valid UTF-8 (byte 0x{data[exc.start]:02x})", line, column)


def too_deep(path: str) -> ParseProblem:
    return _problem(path, "file nests too deeply to read (thousands of levels of brackets)")


# Python converts no run of more digits than this to an int (sys.get_int_max_str_digits, CVE-2020-10735):
# packaging's Version raises ValueError on one, wherever a rule first compares the version.
DIGITS = (getattr(sys, "get_int_max_str_digits", lambda: 0)() or 4300) + 1
_LONG_NUMBER = Lazy(f"[0-9]{{{DIGITS}}}")


_TOO_LONG = f"a number of {DIGITS} digits or more, which Python does not read"


def _long_number(r: Requirement) -> ParseProblem:
    return ParseProblem(r.location, f"version has {_TOO_LONG}", r.raw)


def _holds_long_number(r: Requirement) -> bool:
    """Whether a version the rules will compare holds one (the specifier may come from a variable's
    value, not the text written)."""
    if len(r.raw) >= DIGITS and _LONG_NUMBER().search(r.raw):
        return True
    for specifier in (r.specifier, *r.alternatives):
        for s in specifier:
            if len(s.version) >= DIGITS and _LONG_NUMBER().search(s.version):
                return True
    return False


def _kept(records: Iterable[Parsed], steps: set[tuple[int, str]], keep: Keep) -> Iterator[Parsed]:
    """Requirements of packages no rule reads (not in ``keep``) are dropped as they are parsed, all
    but the first of each install step and scope (``steps``: those that have theirs): some rules ask
    whether a command, a file or a lock installs anything at all (an install of something may have
    brought torch), not what. A kept one whose text holds a number no int can take is a problem of
    its own (it would raise in a rule)."""
    for r in records:
        if isinstance(r, Image) and len(r.reference) >= DIGITS and _LONG_NUMBER().search(r.reference):
            yield r._replace(python=None, cuda=None)  # the tag says nothing Python can read
            yield ParseProblem(r.location, _TOO_LONG, r.reference)
            continue
        if not isinstance(r, Requirement):
            yield r
            continue
        if keep is not None and r.name not in keep:
            if (r.step, r.scope) in steps:
                continue
            steps.add((r.step, r.scope))
        yield _long_number(r) if _holds_long_number(r) else r


# The packages whose requirements a check keeps (the engine gives the rules' ``rules.PACKAGES``, so
# memory follows what can be found, not the size of the files); None keeps every one.
Keep = Collection[str] | None


def parse_file(
    path: str,
    source: str,
    data: bytes | None = None,
    build_args: Mapping[str, tuple[str, ...]] | None = None,
    keep: Keep = None,
) -> FileResult:
    """One file's records; ``data`` stands in for the file's bytes (text piped to --stdin-filename);
    ``build_args``, for a Dockerfile, the values other files' ``docker build --build-arg`` give it;
    ``keep``, the packages whose every requirement is kept (``Keep``)."""
    coding = CODINGS.get(source)
    text = read_text(path, coding) if data is None else decode(path, data, coding)
    if isinstance(text, ParseProblem):
        return FileResult(path, source, None, (text,))
    return FileResult(path, source, text, tuple(_records(path, source, text, build_args, keep)))


def _records(
    path: str, source: str, text: str, build_args: Mapping[str, tuple[str, ...]] | None, keep: Keep
) -> list[Parsed]:
    """The file's records. An exception in its parser costs the rest of the file only: the records
    read before it are kept, with the problem (an internal error is fa-lint's bug, said as such)."""
    steps: set[tuple[int, str]] = set()

    def dropped(name: str, step: int, scope: str) -> bool:  # what _kept will drop (sources.Dropped)
        return keep is not None and name not in keep and (step, scope) in steps

    records: list[Parsed] = []
    try:
        if build_args and source == "dockerfile":
            from fa_lint.sources import dockerfile  # only where another file builds it with arguments

            records.extend(_kept(dockerfile.parse(path, text, build_args), steps, keep))
        else:
            records.extend(_kept(SOURCES[source].parse(path, text, dropped), steps, keep))
    except RecursionError:  # the readers (json, tomllib, PyYAML) recurse once per level of nesting
        records.append(too_deep(path))
    except Exception as exc:  # a parser bug must cost one file, never the run
        records.append(_raised(path, text, exc))
    if any(isinstance(r, ParseProblem) and not r.entry and not r.internal for r in records):
        from fa_lint.syntax import templates  # only for a file that could not be read

        records = [templates.recognised(text, r) if isinstance(r, ParseProblem) else r for r in records]
    return records


def _raised(path: str, text: str, exc: Exception) -> ParseProblem:
    """What an exception in a parser means: a version or a literal too long for int(), wherever it
    was read, is the file's; anything else is fa-lint's own bug."""
    number = _LONG_NUMBER().search(text) if isinstance(exc, ValueError) else None
    if number is None:
        return internal_error(Location(path, 1, 1, 1, 1), exc)
    line = text.count("\n", 0, number.start()) + 1
    column = number.start() - (text.rfind("\n", 0, number.start()) + 1) + 1
    return _problem(path, f"a number of {DIGITS} digits or more, which Python does not read", line, column)
