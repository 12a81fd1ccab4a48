"""What the editor is told: findings as LSP diagnostics, fixes and ``noqa`` comments as code actions, rule
pages as hover text. Pure functions of fa-lint's records and the LSP types, so they are tested without a
client; ``lsp`` wires them to the protocol.

Positions: fa-lint counts lines and code points from 1 (end column exclusive), LSP lines from 0 and
characters in the unit the client and server agreed on (UTF-16 unless the client offers another). The
conversion goes through the document's own lines (``to_client``), so a span after an emoji or a CJK
character lands where the editor draws it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from lsprotocol import types

from fa_lint.model import Finding, Fix, Location, Severity

SOURCE = "fa-lint"
SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
ToClient = Callable[[Sequence[str], types.Range], types.Range]  # code points -> the client's units


def span(loc: Location) -> types.Range:
    """A fa-lint span as an LSP range in code points (0-based lines and characters, end exclusive)."""
    start = types.Position(line=max(loc.line - 1, 0), character=max(loc.column - 1, 0))
    end_line = max(loc.end_line, loc.line) - 1
    end = types.Position(line=end_line, character=max(loc.end_column - 1, 0))
    if (end.line, end.character) < (start.line, start.character):
        end = start
    return types.Range(start=start, end=end)


def diagnostic(f: Finding, lines: Sequence[str], to_client: ToClient) -> types.Diagnostic:
    """One finding: the headline as the message, the notes and help after it, the rule's page linked."""
    details = [*f.notes, *([f"help: {f.help}"] if f.help else [])]
    return types.Diagnostic(
        range=to_client(lines, span(f.location)),
        message="\n".join([f.message, *details]),
        severity=SEVERITY[f.severity],
        code=f.code,
        code_description=types.CodeDescription(href=f.url),
        source=SOURCE,
        data={"name": f.name},
    )


def fix_action(
    f: Finding, fix: Fix, uri_of: Callable[[str], str], lines_of: Callable[[str], Sequence[str]], to: ToClient
) -> types.CodeAction:
    """The fix ``--fix`` would make (``--unsafe-fixes`` for an unsafe one), as one workspace edit."""
    path = fix.location.path
    edit = types.TextEdit(range=to(lines_of(path), span(fix.location)), new_text=fix.new)
    unsafe = "" if fix.safe else " (unsafe: it changes what installs)"
    return types.CodeAction(
        title=f"{f.code}: {fix.title}{unsafe}",
        kind=types.CodeActionKind.QuickFix,
        is_preferred=fix.safe,
        edit=types.WorkspaceEdit(changes={uri_of(path): [edit]}),
    )


def noqa_action(
    codes: Iterable[str], uri: str, line: int, old: str, new: str, lines: Sequence[str], to: ToClient
) -> types.CodeAction:
    """Suppress ``codes`` on a line: the line's text replaced by itself with the comment ``addnoqa``
    adds (``old`` -> ``new``, both without the line ending)."""
    whole = types.Range(
        start=types.Position(line=line - 1, character=0),
        end=types.Position(line=line - 1, character=len(old)),
    )
    return types.CodeAction(
        title=f"Suppress {', '.join(sorted(codes))} on this line (# noqa)",
        kind=types.CodeActionKind.QuickFix,
        edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=to(lines, whole), new_text=new)]}),
    )


def overlaps(a: types.Range, b: types.Range) -> bool:
    """Whether two ranges share a position, an empty range counting as the point it is."""
    a_start, a_end = (a.start.line, a.start.character), (a.end.line, a.end.character)
    b_start, b_end = (b.start.line, b.start.character), (b.end.line, b.end.character)
    return a_start <= b_end and b_start <= a_end


def hover(pages: Sequence[str]) -> types.Hover:
    """The rule pages of the findings under the cursor, as Markdown, one after the other."""
    text = "\n\n---\n\n".join(pages)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))
