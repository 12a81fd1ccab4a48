"""``--add-noqa`` (ruff's): a ``# noqa: CODES`` comment at the end of each line with a finding, so a
project can adopt fa-lint (or a new rule) and fix the old findings one at a time.

A comment is added only where it changes nothing but the suppression:

- never after a line that goes on with a ``\\`` (the comment would end the continuation: pip would read
  the next line as another requirement, the shell as another command);
- only where the file's own syntax reads it as a comment, as fa-lint's suppression does
  (``settings.decide.comment_starts``): never in a format without comments (a JSON lock), after a
  Dockerfile's exec-form ``RUN [...]`` (BuildKit would then run the line as a shell command), an
  ``ENV``, ``ARG`` or ``FROM`` line, or inside a quoted string that goes on to the next line;
- and each file is written only when fa-lint reads it the same way afterwards: with every comment's
  suppression taken away, the very same findings as before (the comment changed no meaning), and the
  findings on the commented lines suppressed.

A file that is not UTF-8 is left alone. Each file is replaced atomically, as ``--fix`` replaces it.
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

# A file's findings with its text replaced by these bytes; ``noqa`` False: with no comment suppressing.
Recheck = Callable[[str, bytes, bool], "Report"]
Refused = list[tuple[str, int, str]]  # (path, line, why)


class Added(NamedTuple):
    comments: int  # lines that got a comment
    files: int
    refused: tuple[tuple[str, int, str], ...]  # (path, line, why)


_NO_COMMENT = "the file's syntax has no comment there (a comment would be its text, or change it)"
_CHANGED = "fa-lint reads the file differently with the comment: it would change what the file does"
_EXEC_FORM = (
    "a comment after an exec-form array makes it no JSON: BuildKit would run the line as a shell command"
)


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
# formats whose suppression is no hash comment at a line's end (a batch REM, a notebook's JSON string) or
# whose comment scanner reads a normalised text: the rechecks alone judge their comments
_RECHECKED = frozenset({"notebook", "batch"})


def _seen(report: Report, path: str) -> set[tuple[str, int, str]]:
    return {(f.code, f.location.line, f.message) for f in report.findings if f.location.path == path}


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def add(
    findings: Iterable[Finding],
    recheck: Recheck,
    write: Callable[[str, bytes], None],
    read: Callable[[str], bytes] = _read,
) -> Added:
    """Comment each finding's line, file by file; ``read`` gives a file's bytes, ``write`` takes the
    new ones, ``recheck`` says what fa-lint finds in given bytes (with or without suppressions)."""
    comments = files = 0
    refused: Refused = []
    for path, lines in _wanted(findings).items():
        new, added = _commented(path, lines, recheck, refused, read)
        if not added:
            continue
        try:
            write(path, new)
        except OSError as exc:
            refused += [(path, n, f"cannot write the file: {exc.strerror or exc}") for n in sorted(added)]
            continue
        comments += len(added)
        files += 1
    return Added(comments, files, tuple(refused))


def _commented(
    path: str, lines: dict[int, set[str]], recheck: Recheck, refused: Refused, read: Callable[[str], bytes]
) -> tuple[bytes, dict[int, set[str]]]:
    """The file's bytes with the comments, and the lines that got one (none: leave it as it is)."""
    try:
        data = read(path)
    except OSError as exc:
        refused += [(path, n, f"cannot read the file: {exc.strerror or exc}") for n in sorted(lines)]
        return b"", {}
    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    try:
        text = data[len(bom) :].decode("utf-8")
    except UnicodeDecodeError:
        refused += [(path, n, "the file is not UTF-8") for n in sorted(lines)]
        return b"", {}
    before = recheck(path, data, False)
    split, added = _placed(text, lines, before.formats.get(path, ""), path, refused)
    if not added:
        return b"", {}
    new = bom + "\n".join(split).encode("utf-8")
    if _seen(recheck(path, new, False), path) != _seen(before, path):
        refused += [(path, n, _CHANGED) for n in sorted(added)]
        return b"", {}
    left = {n for _, n, _ in _seen(recheck(path, new, True), path) if n in added}
    if left:  # a comment fa-lint's own reading does not take for one
        refused += [(path, n, _NO_COMMENT) for n in sorted(added)]
        return b"", {}
    return new, added


def _placed(
    text: str, lines: dict[int, set[str]], fmt: str, path: str, refused: Refused
) -> tuple[list[str], dict[int, set[str]]]:
    """The lines with a comment appended where the format reads it as one."""
    from fa_lint.settings.decide import STYLES, comment_starts

    original = text.split("\n")
    split = list(original)
    added: dict[int, set[str]] = {}
    for n, codes in sorted(lines.items()):
        if not 1 <= n <= len(split):
            continue
        why = _unfit(split[n - 1], fmt, path)
        if why:
            refused.append((path, n, why))
            continue
        commented = _comment(split[n - 1], codes, path)
        if commented is None:
            refused.append((path, n, "the line holds no one line of a cell to end with a comment"))
            continue
        split[n - 1] = commented
        added[n] = codes
    style = STYLES.get(fmt, "yaml")
    checked = style not in _RECHECKED
    starts = comment_starts("\n".join(split), style) if added and checked else {}
    arrays = _exec_forms(text) if added and style == "dockerfile" else set()
    for n in list(added):
        why = _EXEC_FORM if n in arrays else _NO_COMMENT
        if n in arrays or (checked and starts.get(n) != split[n - 1].rindex("  # noqa: ") + 2):
            refused.append((path, n, why))
            split[n - 1] = original[n - 1]
            del added[n]
    return split, added


def _unfit(line: str, fmt: str, path: str) -> str:
    """Why no comment may end this line, whatever the comment rules say ("" where one may)."""
    goes_on = _GOES_ON.get(path.lower().rsplit(".", 1)[-1], "\\")
    if line.rstrip(" \t\r").endswith(goes_on):
        return f"the line goes on with a '{goes_on}': a comment would end it"
    if fmt == "makefile" and not line.startswith("\t") and "=" in line:
        # GNU make keeps the blanks before a comment in a variable's value (its manual, 6.2, the
        # `dir := /foo/bar    # ...` example; `FA := 2.4.2  # c` then `echo "[$(FA)]"` prints `[2.4.2  ]`)
        return "a comment after a Makefile variable's value would leave blanks at the end of the value"
    return ""


def _exec_forms(text: str) -> set[int]:
    from fa_lint.sources.docker_comments import exec_form_lines

    return exec_form_lines(text)
