"""``--fix``: apply the findings' edits to their files, each only at its own span, atomically.

Every byte outside an edited span is kept as it was (encoding, BOM, line endings). An edit is made only
when the span still reads what the finding saw, and a file is written only when it still parses, with
no new problem, and now holds the new requirement.
"""

from __future__ import annotations

import codecs
import os
import stat
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from fa_lint.files import read
from fa_lint.files.discover import Target
from fa_lint.files.project import companions, off_limits, project_root
from fa_lint.fixes.diff import changed_lines, unified
from fa_lint.model import FLASH_ATTN, Finding, Fix, NotRun, ParseProblem, Requirement
from fa_lint.report._common import printable
from fa_lint.rules._text import RELOCK_ALL
from fa_lint.sources import SOURCES
from fa_lint.syntax.text import TextIndex


@dataclass(frozen=True, slots=True)
class Outcome:
    """What ``--fix`` did to one file: the edits it made and the ones it left, with the reason."""

    path: str
    before: bytes
    after: bytes
    applied: tuple[Fix, ...] = ()
    skipped: tuple[tuple[Fix, str], ...] = ()
    # what the applied fixes replaced: (start, end, new text), offsets into ``before``'s text (no BOM)
    edits: tuple[tuple[int, int, str], ...] = ()

    def diff(self) -> str:
        return self.patch()[0]

    def patch(self) -> tuple[str, int]:
        """The unified diff, and how many of its lines were escaped (``_shown``): the file names are
        quoted as git quotes them, so none can start a line of its own. It is built from the spans
        the fixes replaced (``edits``), not by diffing the whole file again."""
        before, after = self.before.decode("utf-8-sig"), self.after.decode("utf-8-sig")
        edits = self.edits or ([(0, len(before), after)] if before != after else [])
        old, new, changes = changed_lines(before, edits)
        fromfile, tofile = quoted("a/" + self.path), quoted("b/" + self.path)
        out, escaped = [], 0
        for n, line in enumerate(unified(old, new, changes, (fromfile, tofile))):
            shown = _shown(line) if n >= 2 and line[:1] in " +-" else line  # a line of the file
            escaped += shown != line
            out.append(shown if shown.endswith("\n") else shown + "\n\\ No newline at end of file\n")
        return "".join(out), escaped


def quoted(path: str) -> str:
    """A path as git writes it in a diff header: in double quotes, with C escapes (octal for each
    byte of a character outside ASCII, as core.quotePath does), when it holds anything but plain
    printable ASCII; as it is otherwise. A path holding "##" is quoted too, its "#" written as octal
    (``\\043``, which ``git apply`` and ``patch`` read back): a CI log would act on "##[" or "##vso["
    in a header line (``report._common.printable``)."""
    raw = os.fsencode(path.replace(os.sep, "/"))
    hashes = b"##" in raw
    if not hashes and all(0x20 <= b < 0x7F and b not in b'"\\' for b in raw):
        return path

    def char(b: int) -> str:
        if hashes and b == 0x23:
            return "\\043"
        return _QUOTE.get(b) or (chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}")

    return '"' + "".join(map(char, raw)) + '"'


_QUOTE = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\"}


def _shown(line: str) -> str:
    """A line of the diff, escaped (``report._common.printable``) when a terminal or a CI runner would
    act on it: a control character (a tab and a line's closing CR aside), a Unicode line break or bidi
    control, ``##[`` anywhere, or, on a context line, ``::`` after the blanks that open it (a runner
    trims them before it looks). Such a line no longer applies as a patch line; stderr says so."""
    body = line.rstrip("\n")
    ending = line[len(body) :]
    if body.endswith("\r"):  # a CRLF file's line end: harmless, and part of the patch
        body, ending = body[:-1], "\r" + ending
    prefix, text = body[:1], body[1:]
    acted = (
        not text.replace("\t", " ").isprintable()
        or "##[" in text
        or (prefix == " " and text.lstrip().startswith("::"))
    )
    return prefix + printable(text) + ending if acted else line


def wanted(findings: Iterable[Finding], unsafe: bool) -> dict[str, list[Fix]]:
    """The fixes to try, by file, in file order."""
    by_path: dict[str, list[Fix]] = defaultdict(list)
    for f in findings:
        if f.fix is not None and (f.fix.safe or unsafe) and f.fix not in by_path[f.fix.location.path]:
            by_path[f.fix.location.path].append(f.fix)
    for fixes in by_path.values():
        fixes.sort(key=lambda x: x.location)
    return dict(by_path)


def _flash_attn(records: Iterable[object]) -> tuple[list[str], int]:
    """The flash-attn requirements a file asks for, run or not (FAL007's quoting turns an install the
    shell never runs into one it runs), and its parse problems."""
    records = list(records)
    reqs = [r.requirement if isinstance(r, NotRun) else r for r in records]
    raws = [r.raw for r in reqs if isinstance(r, Requirement) and r.name == FLASH_ATTN]
    problems = sum(isinstance(r, ParseProblem) for r in records)
    return raws, problems


def _parses_the_same(path: str, text: str, new_text: str, applied: list[Fix]) -> bool:
    """Whether the edited file parses with no new problem, holds each fix's new requirement, and as many
    flash-attn requirements as before plus those the fixes add (a wheel's lines, a uv source)."""
    source = applied[0].source
    if source not in SOURCES:
        return True
    before, problems_before = _flash_attn(SOURCES[source].parse(path, text))
    after, problems_after = _flash_attn(SOURCES[source].parse(path, new_text))
    grown = len(before) + sum(f.adds for f in applied)
    return (
        problems_after <= problems_before
        and len(after) == grown
        and {f.expect for f in applied} <= set(after)
    )


def edit(path: str, fixes: list[Fix]) -> Outcome:
    """The file with ``fixes`` applied in memory; nothing is written here."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        why = f"cannot read the file: {exc.strerror or exc}"
        return Outcome(path, b"", b"", skipped=tuple((f, why) for f in fixes))
    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    try:
        text = data[len(bom) :].decode("utf-8")
    except UnicodeDecodeError:
        return Outcome(path, data, data, skipped=tuple((f, "the file is not UTF-8") for f in fixes))
    coding = read.CODINGS.get(fixes[0].source) if fixes else None
    if coding is not None and read.declared(data, coding) is not None:
        # pip or Python read the file in another encoding than UTF-8: an edit made in UTF-8 could
        # change what they read anywhere in it (a "+" in UTF-7)
        why = "the file declares an encoding other than UTF-8; fix it by hand"
        return Outcome(path, data, data, skipped=tuple((f, why) for f in fixes))
    index = TextIndex(path, text)
    applied: list[tuple[int, int, Fix]] = []
    skipped: list[tuple[Fix, str]] = []
    for fix in fixes:
        loc = fix.location
        start, end = index.offset(loc.line, loc.column), index.offset(loc.end_line, loc.end_column)
        if text[start:end] != fix.old:
            skipped.append((fix, f"the file no longer reads {fix.old!r} there"))
        elif applied and start < applied[-1][1]:
            skipped.append((fix, "it overlaps another fix; run --fix again"))
        else:
            applied.append((start, end, fix))
    if not applied:
        return Outcome(path, data, data, skipped=tuple(skipped))
    pieces, at = [], 0
    for start, end, fix in applied:  # one join: slicing the whole text again at each fix is n^2
        pieces += [text[at:start], fix.new]
        at = end
    new_text = "".join([*pieces, text[at:]])
    if not _parses_the_same(path, text, new_text, [f for _, _, f in applied]):
        why = "the file would not parse the same way afterwards"
        return Outcome(path, data, data, skipped=(*skipped, *((f, why) for _, _, f in applied)))
    after_bytes = bom + new_text.encode("utf-8")
    edits = tuple((start, end, fix.new) for start, end, fix in applied)
    return Outcome(path, data, after_bytes, tuple(f for _, _, f in applied), tuple(skipped), edits)


class Refused(OSError):
    """A file ``--fix`` will not replace, with the reason."""


def write(path: str, data: bytes) -> None:
    """Replace the file's bytes atomically, keeping its mode; a symlink keeps pointing at its target,
    which must lie inside the project root (``project.project_root``) and outside ``.git``.

    A read-only file is left alone (the replacement would go through: only the folder's write bit
    is asked), as an editor or ruff would fail to write it; so is a file with other hard links, which
    a replacement would split from them (ruff writes in place and keeps them; fa-lint keeps the
    edit atomic instead, and says so).
    """
    real = os.path.realpath(path)
    where = off_limits(path, [project_root(path)])
    if where is not None:
        # a committed link (pre-commit names it like any file) to a file of the machine: the check
        # read it because it was named, but what --fix writes stays inside the project
        raise Refused(f"the file links {where}; fix the file it points at itself")
    st = os.stat(real)
    mode = stat.S_IMODE(st.st_mode)
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(real, os.W_OK):
        raise Refused("the file is read-only")
    if st.st_nlink > 1:
        raise Refused(f"the file has {st.st_nlink - 1} other hard link(s), which a rewrite would split")
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(real), prefix=".fa-lint-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def run(findings: Iterable[Finding], *, unsafe: bool = False, dry_run: bool = False) -> list[Outcome]:
    outcomes = []
    for path, fixes in wanted(findings, unsafe).items():
        o = edit(path, fixes)
        if o.applied and not dry_run:
            try:
                write(o.path, o.after)
            except OSError as exc:
                why = (
                    str(exc) if isinstance(exc, Refused) else f"cannot write the file: {exc.strerror or exc}"
                )
                o = Outcome(path, o.before, o.before, skipped=(*o.skipped, *((f, why) for f in o.applied)))
        outcomes.append(o)
    return outcomes


# Which tool owns each lock format, to name the command that brings the lock in line again.
_LOCK_TOOL = {
    "uv.lock": "uv",
    "poetry.lock": "poetry",
    "pdm.lock": "pdm",
    "pipfile.lock": "pipenv",
    "pylock": "pylock",
}


def relock(outcomes: Iterable[Outcome]) -> list[str]:
    """Locks beside a fixed manifest record its old requirement: say how to bring each in line."""
    fixed = [Target(o.path, o.applied[0].source, explicit=True) for o in outcomes if o.applied]
    hints = []
    for manifest in fixed:
        for lock in companions([manifest]):
            command = RELOCK_ALL[_LOCK_TOOL[lock.source]]
            hints.append(f"{manifest.path} changed and {lock.path} records its old requirements: {command}")
    return hints
