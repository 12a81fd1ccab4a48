"""FAL903 (``unused-noqa``, ruff's RUF100): the suppression comments that suppress nothing.

Read exactly where ``settings.decide`` reads them, with its patterns, in each format's own comments
(``decide._read``: pip, TOML, YAML, shell, Dockerfile, Python, notebook, batch, PowerShell): a line's
``# noqa``, ``# noqa: CODES`` and ``# fa-lint: ignore[CODES]``, and the file-level ``# fa-lint: noqa:
CODES`` (or ruff's ``# ruff: noqa: CODES``) on a line of its own. Each is judged against the findings
of every rule before selection, as ruff's ``checkers/noqa.rs`` (``check_noqa``) judges its directives
against every diagnostic: a comment is used when it is the one that suppresses a finding, in the order
``decide.apply`` tries them (the file-level exemption first, then the lines of the finding's span, then
the comments of a line from the left). A code is reported when it is

- unused: it names a rule, and no finding it covers is on the comment's lines (for a file-level comment,
  in the file);
- unknown: ``FAL`` and a number that names no rule (ruff reports these as RUF102);
- duplicated: written twice in one comment.

A blanket comment (no codes) is reported when it suppresses nothing, except a bare ``# noqa`` in Python
or a notebook, which ruff and flake8 read too. In a ``# noqa``/``# ruff: noqa`` comment only fa-lint's
codes (``FAL...``) are judged: ``E501`` or ``F401`` there are another linter's. A comment whose codes
cover FAL903 is never reported, nor is any in a file a bare ``# fa-lint: noqa`` exempts (ruff's
self-ignore and file exemption).

The fix (safe, as ruff's) takes away the reported codes and keeps the rest of the list; where no code
would be left, the whole comment goes (never leaving a bare ``# noqa``, which would suppress every
code): with the blanks before it at a line's end, the whole line when the comment is all of it. Text
after it on the line is kept: another comment, a reason (the opener stays so it remains a comment), a
``\\`` that continues the line. No other byte changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from fa_lint._lazy import Lazy
from fa_lint._records import NamedTuple
from fa_lint.model import INTERNAL, Finding, Fix, Location, internal_error
from fa_lint.rules import RULES
from fa_lint.rules.noqa import EXPLICIT, UNUSED_NOQA
from fa_lint.rules.unread import internal
from fa_lint.settings.decide import _FILE, _NOQA, _OWN, STYLES, _read

CODE = UNUSED_NOQA.code
_CODE_TOKEN = Lazy(r"[A-Za-z]+[0-9]+")
_MARKS = Lazy("noqa|fa-lint", re.I)  # a file with neither holds no suppression comment
# comment styles where a bare noqa comment belongs to ruff and flake8 as much as to fa-lint
_SHARED_BLANKET = frozenset({"python", "notebook"})
# what continues a line onto the next in each style: a comment line after one is kept (as "#")
_GOES_ON = {"batch": "^", "powershell": "`"}
_Key = tuple[int, int, int]  # (line, column of the comment, index of the code; -1 for a blanket)


class _Code(NamedTuple):
    text: str  # upper case
    start: int  # columns in the line
    end: int


class _Directive(NamedTuple):
    line: int
    start: int  # column of its "#" in the line as decide reads it (a batch REM is a "#" there)
    end: int  # past its codes (past the word for a blanket)
    codes: tuple[_Code, ...]  # empty: a blanket
    shared: bool  # flake8's noqa comment, or ruff's file-level one: other linters read it too
    whole_file: bool


def explicit(extend: Iterable[str]) -> tuple[str, ...]:
    """The selection for ``--extend-select`` with no ``--select``: every rule ("FAL") and the rules
    only their own code turns on; empty where ``extend`` names none of those (every rule is already
    selected)."""
    named = tuple(c for c in extend if c in EXPLICIT)
    return ("FAL", *named) if named else ()


def chosen(select: tuple[str, ...], ignore: tuple[str, ...]) -> bool:
    """Whether FAL903 runs: its code among the selectors (no prefix turns it on), and not ignored."""
    # ALL (the empty prefix) is everything, as ruff's ALL takes in RUF100
    return (CODE in select or "" in select) and not any(CODE.startswith(p) for p in ignore)


def added(
    kept: list[Finding],
    found: Iterable[Finding],
    texts: Mapping[str, str],
    formats: Mapping[str, str],
    checked: Iterable[str],
    wanted: Callable[[str], bool],
) -> list[Finding]:
    """``kept`` (the findings ``decide.apply`` kept, in its order) with FAL903's findings among them,
    for each checked file ``wanted`` says FAL903 is selected in; ``found``: every rule's findings."""
    paths = [p for p in checked if p in texts and wanted(p) and _MARKS().search(texts[p])]
    if not paths:
        return kept
    by_path: dict[str, list[Finding]] = {p: [] for p in paths}
    for f in found:
        if f.code != INTERNAL and f.location.path in by_path:
            by_path[f.location.path].append(f)
    new = [u for p in paths for u in _guarded(p, texts[p], formats.get(p, ""), by_path[p])]
    return sorted([*kept, *new], key=lambda f: (f.location, f.code)) if new else kept


def _guarded(path: str, raw: str, fmt: str, findings: list[Finding]) -> list[Finding]:
    """``unused``; an exception in it is fa-lint's bug (FAL902), costing this file's FAL903 only."""
    try:
        return unused(path, raw, fmt, findings)
    except Exception as exc:
        problem = internal_error(Location(path, 1, 1, 1, 1), exc, "judging its suppression comments (FAL903)")
        return [internal(problem)]


def unused(path: str, raw: str, fmt: str, findings: list[Finding]) -> list[Finding]:
    """The FAL903 findings of one file, judged against ``findings`` (every rule's, in this file)."""
    style = STYLES.get(fmt, "yaml")
    text, starts = _read(raw, style)
    if text is None or not starts:
        return []
    whole = _file_directives(text, starts)
    if whole is None or any(_covers_self(d) for d in whole):
        return []  # a bare "# fa-lint: noqa", or one naming FAL903: nothing of this file is reported
    lines = text.split("\n")
    by_line = _line_directives(lines, starts)
    used = _used(findings, whole, by_line, len(lines))
    split = raw.split("\n")
    offsets = [0]
    for line in split:
        offsets.append(offsets[-1] + len(line) + 1)
    ctx = _Context(path, fmt, style, split, lines, starts, raw, offsets)
    out = []
    for d in (*whole, *(d for ds in by_line.values() for d in ds)):
        finding = _judged(d, used, ctx)
        if finding is not None:
            out.append(finding)
    return out


def _file_directives(text: str, starts: dict[int, int]) -> list[_Directive] | None:
    """The file-level comments with codes, read as ``decide.file_suppressions`` reads them; None where
    a bare ``# fa-lint: noqa`` exempts the whole file."""
    out = []
    line, counted = 1, 0
    for m in _FILE.finditer(text):
        line += text.count("\n", counted, m.start())
        counted = m.start()
        line_start = text.rfind("\n", 0, m.start()) + 1
        col = text.index("#", line_start) - line_start
        if starts.get(line) != col:
            continue
        if not m.group("codes"):
            if m.group("who").lower() == "fa-lint":
                return None
            continue
        codes = _codes(m.group("codes"), m.start("codes") - line_start)
        shared = m.group("who").lower() == "ruff"
        out.append(_Directive(line, col, m.end() - line_start, codes, shared, True))
    return out


def _codes(listed: str, at: int) -> tuple[_Code, ...]:
    return tuple(
        _Code(t.group().upper(), at + t.start(), at + t.end()) for t in _CODE_TOKEN().finditer(listed)
    )


def _line_directives(lines: list[str], starts: dict[int, int]) -> dict[int, list[_Directive]]:
    """Each line's comments, from the left, read as ``decide.suppressions`` reads them."""
    out: dict[int, list[_Directive]] = {}
    for n, col in sorted(starts.items()):
        if n > len(lines) or "#" not in lines[n - 1][col:]:
            continue
        found = []
        for pattern, shared in ((_NOQA, True), (_OWN, False)):
            for m in re.finditer(pattern, lines[n - 1][col:], re.I):
                listed = m.group("codes") or ""
                codes = _codes(listed, col + m.start("codes")) if listed.strip() else ()
                found.append(_Directive(n, col + m.start(), col + m.end(), codes, shared, False))
        if found:
            out[n] = sorted(found, key=lambda d: d.start)
    return out


def _covering(d: _Directive, code: str) -> set[_Key]:
    """The parts of ``d`` that suppress ``code``: the blanket, or each code that is a prefix of it."""
    if not d.codes:
        return {(d.line, d.start, -1)}
    return {(d.line, d.start, i) for i, c in enumerate(d.codes) if code.startswith(c.text)}


def _covers_self(d: _Directive) -> bool:
    return any(CODE.startswith(c.text) for c in d.codes)


def _used(
    findings: list[Finding], whole: list[_Directive], by_line: dict[int, list[_Directive]], count: int
) -> set[_Key]:
    """The comments (and codes) that suppress some finding, each finding credited to the comment
    ``decide.apply`` finds first."""
    used: set[_Key] = set()
    for f in findings:
        exempt = set().union(*(_covering(d, f.code) for d in whole))
        if exempt:
            used |= exempt
            continue
        loc = f.location
        for n in range(loc.line, min(loc.end_line, count) + 1):
            hit = next((k for d in by_line.get(n, ()) if (k := _covering(d, f.code))), None)
            if hit:
                used |= hit
                break
    return used


class _Context(NamedTuple):
    path: str
    fmt: str
    style: str
    raw: list[str]  # the file's lines as written
    read: list[str]  # as decide reads them (a batch REM written "#")
    starts: dict[int, int]
    text: str  # the file as written
    offsets: list[int]  # where each line starts in it


def _problems(d: _Directive, used: set[_Key]) -> dict[int, str]:
    """Each reported code of ``d`` (by index), and why: unused, unknown or duplicated."""
    out: dict[int, str] = {}
    seen: set[str] = set()
    for i, c in enumerate(d.codes):
        if d.shared and not c.text.startswith("FAL"):
            continue  # another linter's code in a comment it reads too
        if c.text in seen:
            out[i] = "duplicated"
        elif not any(code.startswith(c.text) for code in RULES):
            out[i] = "unknown"
        elif (d.line, d.start, i) not in used:
            out[i] = "unused"
        seen.add(c.text)
    return out


def _judged(d: _Directive, used: set[_Key], ctx: _Context) -> Finding | None:
    if not d.codes:
        if (d.line, d.start, -1) in used or (d.shared and ctx.style in _SHARED_BLANKET):
            return None
        return _finding(d, ctx, "unused blanket suppression: it suppresses no finding", set())
    if _covers_self(d):
        return None
    problems = _problems(d, used)
    if not problems:
        return None
    kinds = ("unused", "unknown", "duplicated")
    parts = [
        f"{kind}: {', '.join(d.codes[i].text for i in sorted(problems) if problems[i] == kind)}"
        for kind in kinds
        if kind in problems.values()
    ]
    where = "file-level suppression" if d.whole_file else "suppression"
    return _finding(d, ctx, f"unused {where} ({'; '.join(parts)})", set(problems))


def _finding(d: _Directive, ctx: _Context, message: str, dropped: set[int]) -> Finding:
    everything = len(dropped) == len(d.codes)
    fix = _fix(d, ctx, dropped, everything)
    scope = "in this file" if d.whole_file else "on this line"
    block = d.start > 0 and ctx.raw[d.line - 1].startswith("<#", d.start - 1)  # at a PowerShell "<#"
    return UNUSED_NOQA.finding(
        Location(ctx.path, d.line, d.start + 1 - block, d.line, d.end + 1),
        message,
        fix=fix,
        notes=(
            f"no finding {'of the codes it names ' if d.codes else ''}is {scope}: the comment "
            "suppresses nothing today, and would hide a new finding there",
        ),
        help="remove the comment" if everything else "remove the codes it does not use",
    )


def _fix(d: _Directive, ctx: _Context, dropped: set[int], everything: bool) -> Fix | None:
    edit = _whole(d, ctx) if everything else _fewer(d, ctx, dropped)
    if edit is None:
        return None
    line, col, end_line, end_col, new = edit
    old = ctx.text[ctx.offsets[line - 1] + col : ctx.offsets[end_line - 1] + end_col]
    title = "remove the unused suppression" if everything else "remove the unused codes"
    return Fix(Location(ctx.path, line, col + 1, end_line, end_col + 1), old, new, title, True, ctx.fmt)


_Edit = tuple[int, int, int, int, str]  # line, column, end line, end column (0-based columns), new


def _fewer(d: _Directive, ctx: _Context, dropped: set[int]) -> _Edit:
    """The codes list without the dropped codes; each kept code keeps the separator that followed it."""
    raw = ctx.raw[d.line - 1]
    first, last = d.codes[0].start, d.codes[-1].end
    kept = [i for i in range(len(d.codes)) if i not in dropped]
    pieces = []
    for j, i in enumerate(kept):
        if j:
            prev = kept[j - 1]
            pieces.append(raw[d.codes[prev].end : d.codes[prev + 1].start])
        pieces.append(raw[d.codes[i].start : d.codes[i].end])
    return d.line, first, d.line, last, "".join(pieces)


def _whole(d: _Directive, ctx: _Context) -> _Edit | None:
    """The edit that takes the whole comment ``d`` away (see the module's docstring)."""
    n, raw = d.line, ctx.raw[d.line - 1]
    body = raw[:-1] if raw.endswith("\r") else raw
    c = ctx.starts.get(n, d.start)
    first = d.start == c or (body.startswith("<#", c) and d.start == c + 1)  # the comment's opener
    end, closer = _comment_end(body, d.end, ctx.style, c)
    tail = body[d.end : end]
    if first and not tail.strip() and closer >= 0:
        return _comment_gone(d, ctx, body, c, end + closer)
    if tail.lstrip().startswith("#") and body[d.start] == "#":  # another comment follows: it stays
        return n, d.start, n, d.end + len(tail) - len(tail.lstrip()), ""
    if first:  # a reason follows, or the comment must stay: keep its opener, and the rest
        return n, _opener_end(raw, ctx.read[n - 1], d.start), n, d.end, _gap(tail)
    if not tail.strip():  # a reason, then the directive: the reason stays
        before = body[: d.start]
        return n, len(before.rstrip(" \t")), n, d.end, ""
    return n, d.start + 1, n, d.end, _gap(tail)


def _gap(tail: str) -> str:
    """What keeps the text after a removed directive apart from the opener before it."""
    return " " if tail and not tail[0].isspace() else ""


def _opener_end(raw: str, read: str, at: int) -> int:
    """Past the opener of the comment whose "#" (as decide reads it) is at ``at``: a batch file's
    ``REM`` or ``::`` is written there as "#" and blanks, a PowerShell block's ``<#`` as " #"."""
    i = at + 1
    while i < min(len(raw), len(read)) and raw[i] != read[i]:
        i += 1
    return i


def _comment_end(body: str, at: int, style: str, c: int) -> tuple[int, int]:
    """Where the comment that holds the directive ending at ``at`` ends, and the length of its closer
    (a PowerShell block's ``#>``; -1 where the block goes on to the next line). A notebook's comment
    ends at the escaped line break or the quote that ends its JSON string."""
    if style == "notebook":
        i = at
        while i < len(body) and body[i] != '"' and not body.startswith("\\n", i):
            i += 2 if body[i] == "\\" else 1
        return min(i, len(body)), 0
    if style == "powershell" and body.startswith("<#", c):
        close = body.find("#>", at)
        return (close, 2) if close >= 0 else (len(body), -1)
    return len(body), 0


def _comment_gone(d: _Directive, ctx: _Context, body: str, c: int, end: int) -> _Edit:
    """The comment from ``c`` to ``end`` is nothing but ``d``: take it away with the blanks before it,
    or the whole line where it is all of it."""
    n = d.line
    before, after = body[:c], body[end:]
    lead = len(before) - len(before.rstrip(" \t"))
    if ctx.style == "notebook":  # inside a JSON string: the line of the cell stays, maybe empty
        return n, c - lead, n, end, ""
    if not before.strip() and not after.strip():
        if not _continued(ctx, n):
            return (n, 0, n + 1, 0, "") if n < len(ctx.raw) else (n, 0, n, len(ctx.raw[n - 1]), "")
        return n, _opener_end(ctx.raw[n - 1], ctx.read[n - 1], d.start), n, d.end, ""
    if ctx.style == "batch":  # "& REM ..." would leave a bare "&": keep "REM"
        return n, _opener_end(ctx.raw[n - 1], ctx.read[n - 1], d.start), n, d.end, ""
    if after.strip():  # a PowerShell block with code after it on the line
        return n, c, n, end + len(after) - len(after.lstrip()), ""
    if ctx.fmt == "makefile" and not body.startswith("\t"):
        lead = 0  # GNU make keeps the blanks before a variable's comment in its value
    return n, c - lead, n, len(body), ""


def _continued(ctx: _Context, n: int) -> bool:
    """Whether the line before ``n`` goes on onto it: taking line ``n`` away would join the next."""
    if n == 1:
        return False
    return ctx.raw[n - 2].rstrip(" \t\r").endswith(_GOES_ON.get(ctx.style, "\\"))
