"""``--add-noqa`` (ruff's): a ``# noqa: CODES`` comment at the end of each line with a finding, so a
project can adopt fa-lint (or a new rule) and fix the old findings one at a time.

A comment is added only where it changes nothing but the suppression: never after a line that goes on
with a ``\\`` (the comment would end the continuation: pip would read the next line as another
requirement, the shell as another command), and each file is written only when fa-lint reads it the
same way afterwards: the same findings, less those the comments suppress. A file whose format has no
comments (a JSON lock) fails that test and is left alone, as a file that is not UTF-8 is. Each file is
replaced atomically, as ``--fix`` replaces it.
"""

from __future__ import annotations

import codecs
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from fa_lint._records import NamedTuple

if TYPE_CHECKING:
    from fa_lint.engine import Report
    from fa_lint.model import Finding

Recheck = Callable[[str, bytes], "Report"]  # a file's findings with its text replaced by these bytes


class Added(NamedTuple):
    comments: int  # lines that got a comment
    files: int
    refused: tuple[tuple[str, int, str], ...]  # (path, line, why)


def _wanted(findings: Iterable[Finding]) -> dict[str, dict[int, set[str]]]:
    by_path: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    for f in findings:
        if f.location.path != "-":
            by_path[f.location.path][f.location.line].add(f.code)
    return by_path


def _comment(line: str, codes: set[str], path: str = "") -> str | None:
    """The line with the comment before its line ending (a CRLF file keeps its ``\\r``), written as
    the file's format writes one: a batch file's ``& REM``, inside a notebook's JSON string (at the end
    of the cell's line it holds). None where the format gives the line no place for one."""
    body, cr = (line[:-1], "\r") if line.endswith("\r") else (line, "")
    comment = f"# noqa: {', '.join(sorted(codes))}"
    suffix = path.lower().rsplit(".", 1)[-1] if "." in path else ""
    if suffix in ("bat", "cmd"):
        return f"{body}  & REM {comment[2:]}{cr}"
    if suffix == "ipynb":
        return _in_string(body, comment, cr)
    return f"{body}  {comment}{cr}"


def _in_string(body: str, comment: str, cr: str) -> str | None:
    """A notebook's JSON line that holds one line of a cell (``"!pip install ...\\n",``): the comment
    goes inside its string, before the escaped line break."""
    m = re.fullmatch(r'(\s*(?:"source"\s*:\s*\[?\s*)?"(?:[^"\\]|\\[^n])*)((?:\\n)?"\s*,?\s*\]?\s*,?)', body)
    if m is None:
        return None
    return f"{m.group(1)}  {comment}{m.group(2)}{cr}"


# what continues a line in each format: a comment after it would end the line early
_GOES_ON = {"bat": "^", "cmd": "^", "ps1": "`"}


def _seen(report: Report, path: str) -> set[tuple[str, int, str]]:
    return {(f.code, f.location.line, f.message) for f in report.findings if f.location.path == path}


def _commented(
    path: str, split: list[str], lines: dict[int, set[str]], refused: list[tuple[str, int, str]]
) -> dict[int, set[str]]:
    """Each line of ``split`` with a finding given its comment, in place; the lines that got one."""
    added: dict[int, set[str]] = {}
    goes_on = _GOES_ON.get(path.lower().rsplit(".", 1)[-1], "\\")
    for n, codes in sorted(lines.items()):
        if not 1 <= n <= len(split):
            continue
        if split[n - 1].rstrip(" \t\r").endswith(goes_on):
            refused.append((path, n, f"the line goes on with a '{goes_on}': a comment would end it"))
            continue
        commented = _comment(split[n - 1], codes, path)
        if commented is None:
            refused.append((path, n, "the line holds no one line of a cell to end with a comment"))
            continue
        split[n - 1] = commented
        added[n] = codes
    return added


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def add(
    findings: Iterable[Finding],
    recheck: Recheck,
    write: Callable[[str, bytes], None],
    read: Callable[[str], bytes] = _read,
) -> Added:
    """Comment each finding's line, file by file; ``read`` gives a file's bytes (an editor's unsaved
    text, for ``fa-lint server``), ``write`` takes the new ones."""
    comments = files = 0
    refused: list[tuple[str, int, str]] = []
    for path, lines in _wanted(findings).items():
        try:
            data = read(path)
        except OSError as exc:
            refused += [(path, n, f"cannot read the file: {exc.strerror or exc}") for n in sorted(lines)]
            continue
        bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
        try:
            text = data[len(bom) :].decode("utf-8")
        except UnicodeDecodeError:
            refused += [(path, n, "the file is not UTF-8") for n in sorted(lines)]
            continue
        split = text.split("\n")
        added = _commented(path, split, lines, refused)
        if not added:
            continue
        new = bom + "\n".join(split).encode("utf-8")
        before = _seen(recheck(path, data), path)
        hidden = {(c, n, m) for c, n, m in before if c in added.get(n, ())}
        if _seen(recheck(path, new), path) != before - hidden:
            why = "fa-lint would read the file differently with the comment (a format without comments?)"
            refused += [(path, n, why) for n in sorted(added)]
            continue
        try:
            write(path, new)
        except OSError as exc:
            refused += [(path, n, f"cannot write the file: {exc.strerror or exc}") for n in sorted(added)]
            continue
        comments += len(added)
        files += 1
    return Added(comments, files, tuple(refused))
