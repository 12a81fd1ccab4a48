"""``--format text``, ``concise`` and ``grouped``: ruff's ``full``, ``concise`` and ``grouped`` output.

``text`` gives each finding a header (``path:line:col: CODE [severity] [*] headline``), the source with
the span marked, ``= note:`` lines and a ``= help:`` line; ``concise`` the header alone; ``grouped`` each
file's name once, then ``line:col CODE [severity] [*] headline`` under it. All end with a summary.
Every string taken from a checked file passes through ``printable``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fa_lint._records import NamedTuple
from fa_lint.model import Finding, Fix, Severity
from fa_lint.report import frame
from fa_lint.report._common import counts, printable

if TYPE_CHECKING:
    from fa_lint.engine import Report

_COLOR = {Severity.ERROR: "\033[1;31m", Severity.WARNING: "\033[1;33m", Severity.INFO: "\033[1;36m"}
_BOLD, _BLUE, _CYAN, _RESET = "\033[1m", "\033[1;34m", "\033[1;36m", "\033[0m"


class ShownFixes(NamedTuple):
    """What ``--show-fixes`` lists: the edits ``--fix`` made, or would make, each with its finding."""

    edits: tuple[tuple[Finding, Fix], ...]
    done: bool  # after --fix: made, not would-be
    held: int = 0  # unsafe fixes left out, for want of --unsafe-fixes


class _Paint(NamedTuple):
    on: bool

    def __call__(self, code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if self.on and text else text


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _header(f: Finding, paint: _Paint, fixable: bool) -> str:
    loc = f.location
    where = paint(_BOLD, f"{printable(loc.path)}:{loc.line}:{loc.column}:")
    return f"{where} {_said(f, paint, fixable)}"


def _said(f: Finding, paint: _Paint, fixable: bool) -> str:
    """``CODE [severity] [*] headline``: a header after its place."""
    mark = " [*]" if fixable and f.fix is not None and f.fix.safe else ""
    # The severity in words, not colour alone: a log, a pipe or a colour-blind reader sees which
    # findings fail the run. After the code, so that "path:line:col: CODE" stays what tools match.
    label = paint(_COLOR[f.severity], f"{f.code} [{f.severity.value}]")
    return f"{label}{mark} {printable(f.message)}"


def _help(f: Finding, fixable: bool) -> str:
    text = printable(f.help)
    if not fixable or f.fix is None:
        return text
    return f"[*] {text}" if f.fix.safe else f"{text}; `--fix --unsafe-fixes` applies it"


# A location as notes write it ("requirements.txt:4:1"), left out when findings are compared: the same
# finding in near-identical files names each file's own lines.
_WHERE = r"[^\s()']+:\d+(?::\d+)?"


def _same(f: Finding) -> tuple[object, ...]:
    """What makes two findings the same problem for a reader: everything but where they are."""
    import re  # the pattern compiles on the first finding only

    return (f.code, f.severity, f.message, f.help, tuple(re.sub(_WHERE, "", n) for n in f.notes))


def _full(f: Finding, source: list[str] | None, paint: _Paint, fixable: bool) -> list[str]:
    out = [_header(f, paint, fixable)]
    if source is not None:

        def style(role: str, text: str) -> str:
            return paint(_BLUE if role == "gutter" else _COLOR[f.severity], text)

        out += frame.draw(source, f.location, f.code, style)
    out += [f"  {paint(_BOLD, '= note')}: {printable(n)}" for n in f.notes]
    if f.help:
        out.append(f"  {paint(_CYAN, '= help')}: {_help(f, fixable)}")
    return [*out, ""]


def render(
    report: Report,
    *,
    color: bool = False,
    fixable: bool = True,
    fixes: ShownFixes | None = None,
    quiet: bool = False,
    **_: object,
) -> str:
    """Every finding in full, then the fixes (with ``--show-fixes``) and the summary.

    ``fixable`` False (standard input, which --fix cannot take) leaves out every --fix hint.
    """
    paint = _Paint(color)
    split: dict[str, list[str]] = {}  # each file split once, however many findings it has
    for path in {f.location.path for f in report.findings} & set(report.texts):
        split[path] = frame.lines(report.texts[path])
    lines: list[str] = []
    first: dict[tuple[object, ...], Finding] = {}
    previous: Finding | None = None
    repeats = 0
    for f in report.findings:
        same = first.setdefault(_same(f), f)
        if same is not f:
            repeats += 1
            # one problem, one block: a repeat (near-identical scripts, a copied Dockerfile) keeps its
            # header line, which editors and CI logs match, and points at the block above
            at = same.location
            lines += [
                _header(f, paint, fixable),
                f"  {paint(_BOLD, '= note')}: the same as {printable(at.path)}:{at.line}:{at.column} above",
                "",
            ]
        else:
            # findings on the same span share its frame: it is drawn once, for the first
            spanned = previous is not None and previous.location[:3] == f.location[:3]
            lines += _full(f, None if spanned else split.get(f.location.path), paint, fixable)
        previous = f
    return _end(lines, report, fixable, fixes, quiet, repeats)


def concise(
    report: Report,
    *,
    color: bool = False,
    fixable: bool = True,
    fixes: ShownFixes | None = None,
    quiet: bool = False,
    **_: object,
) -> str:
    """One line a finding, then the fixes (with ``--show-fixes``) and the summary."""
    paint = _Paint(color)
    lines = [_header(f, paint, fixable) for f in report.findings]
    return _end(lines, report, fixable, fixes, quiet)


def grouped(
    report: Report,
    *,
    color: bool = False,
    fixable: bool = True,
    fixes: ShownFixes | None = None,
    quiet: bool = False,
    **_: object,
) -> str:
    """Each file's name, then one line a finding under it, lines and columns aligned as ruff aligns them."""
    paint = _Paint(color)
    by_file: dict[str, list[Finding]] = {}
    for f in report.findings:  # sorted by path already: a file's findings stay in order
        by_file.setdefault(f.location.path, []).append(f)
    lines: list[str] = []
    for path, found in by_file.items():
        rows = max(len(str(f.location.line)) for f in found)
        columns = max(len(str(f.location.column)) for f in found)
        lines.append(paint(_BOLD, f"{printable(path)}:"))
        for f in found:
            where = f"{f.location.line:>{rows}}:{f.location.column:<{columns}}"
            lines.append(f"  {where} {_said(f, paint, fixable)}")
        lines.append("")
    return _end(lines, report, fixable, fixes, quiet)


def _end(
    lines: list[str], report: Report, fixable: bool, fixes: ShownFixes | None, quiet: bool, repeats: int = 0
) -> str:
    """The findings' lines, then the fixes (asked for) and the summary, which ``quiet`` leaves out;
    ``repeats``: the findings shown as the same as one above."""
    if fixes is not None:
        lines += [*shown_fixes(fixes), ""]
    if quiet:
        while lines and not lines[-1]:  # the blank line after the last finding or the fixes
            lines.pop()
        return "".join(f"{line}\n" for line in lines)
    lines.append(summary(report, fixable=fixable, repeats=repeats))
    return "\n".join(lines) + "\n"


def shown_fixes(fixes: ShownFixes) -> list[str]:
    """``--show-fixes``: each edit, where it is, the code it fixes, and the text before and after."""
    more = "1 more fix" if fixes.held == 1 else f"{fixes.held} more fixes"
    held = f" ({more} with --unsafe-fixes)" if fixes.held else ""
    if not fixes.edits:
        return [f"No fixes {'applied' if fixes.done else 'available'}{held}."]
    n = plural(len(fixes.edits), "finding")
    out = [f"{'Fixed' if fixes.done else 'Would fix'} {n}{held}:"]
    for finding, fix in fixes.edits:
        unsafe = "" if fix.safe else " (unsafe)"
        old, new = printable(fix.old), printable(fix.new)
        out.append(f"  {printable(str(fix.location))}: {finding.code} `{old}` -> `{new}`{unsafe}")
    return out


def summary(report: Report, *, fixable: bool = True, repeats: int = 0) -> str:
    """'Found 1 error, 2 warnings, 0 info in 3 files.' or 'All checks passed: ...'; ``repeats``, the
    findings the full text showed as the same as one above, are said among the counts (a copied
    script's findings count each, and the reader sees why there are so many)."""
    if not report.files:  # "all checks passed" would claim checks that never ran
        return f"No dependency files found under {printable(', '.join(report.paths) or '.')}"
    c = counts(report)
    text = (
        f"{plural(c['error'], 'error')}, {plural(c['warning'], 'warning')}, {c['info']} info "
        f"in {plural(len(report.files), 'file')}"
    )
    aside = [f"{report.suppressed} suppressed"] if report.suppressed else []
    if repeats:
        aside.append(f"{repeats} the same as one above")
    if aside:
        text += f" ({', '.join(aside)})"
    text = ("Found " if report.findings else "All checks passed: ") + text + "."
    if not fixable:
        return text
    safe = sum(1 for f in report.findings if f.fix is not None and f.fix.safe)
    unsafe = sum(1 for f in report.findings if f.fix is not None and not f.fix.safe)
    if safe:
        text += f" [*] {safe} fixable with --fix"
        text += f" ({unsafe} more with --unsafe-fixes)." if unsafe else "."
    elif unsafe:
        text += f" {unsafe} fixable with --fix --unsafe-fixes."
    return text
