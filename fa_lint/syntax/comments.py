"""Where each line's comment starts, by the rules of the tool that reads the file.

A suppression comment (``# noqa``) counts only where the file's own syntax has a comment: pip ends a
requirement line at a ``#`` that opens the line or follows a blank (``pip/_internal/req/req_file.py``
``COMMENT_RE``), so ``...whl#noqa`` is a URL's fragment; a ``#`` inside a shell, TOML, YAML or Python
string is text. Each style below gives, per line, the column where a comment starts.

Lines are counted as everywhere in fa-lint (``syntax/text``): a line ends at ``\\n``.

The scanners are written here, not taken from the readers: ``tomllib`` and PyYAML drop comments without
a position, and the shell reader (tree-sitter) sees a Dockerfile's or a Makefile's script only after its
host has joined the lines; each scanner is a single pass over the text, with no regular expression that
could backtrack. Python comments come from ``tokenize``, which is exact.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable

STYLES = ("pip", "toml", "yaml", "shell", "python", "notebook", "batch", "powershell", "none")
# pip's rule: "#" at the line's start or after whitespace
_PIP = re.compile(r"(?:^|(?<=\s))#")
# where a YAML flow scalar may open with a quote: at the value's start
_YAML_OPENS = frozenset(" \t[{,:-?")
# what ends a shell word, so that the next "#" starts one (and a comment)
_SHELL_BREAKS = frozenset(" \t\n;&|()<>")


def starts(text: str, style: str) -> dict[int, int]:
    """{line number (1-based): column (0-based) of the ``#`` that opens its comment}; lines without a
    comment are absent. ``none``: the format has no comments (JSON)."""
    if style == "pip":
        return _by_line(text, _pip)
    if style == "yaml":
        return _by_line(text, _yaml)
    if style == "toml":
        return _toml(text)
    if style == "shell":
        return _shell(text)
    if style == "python":
        return _python(text)
    if style in ("notebook", "batch", "powershell"):
        from fa_lint.syntax import script_comments  # only for these formats' files with a finding

        return script_comments.starts(text, style, _shell)
    return {}


def normalized(text: str, style: str, found: dict[int, int]) -> str:
    """The text with each comment's opener written as ``#`` (a batch file's ``REM``/``::``, a
    PowerShell ``<#``), and a notebook's whole-line comments alone on their line, so that the
    suppression comments read the same in every format; lines and columns stay where they were."""
    if style not in ("notebook", "batch", "powershell") or not found:
        return text
    from fa_lint.syntax import script_comments

    return script_comments.normalized(text, style, found)


def _by_line(text: str, first: Callable[[str], int | None]) -> dict[int, int]:
    out = {}
    for n, line in enumerate(text.split("\n"), 1):
        if "#" in line:
            col = first(line)
            if col is not None:
                out[n] = col
    return out


def _pip(line: str) -> int | None:
    m = _PIP.search(line)
    return m.start() if m else None


def _yaml(line: str) -> int | None:
    """A YAML line's comment: "#" at the start or after a blank, outside a quoted scalar, which opens
    only where a value starts (``it's`` holds no quote). A block scalar's lines are read the same way:
    a workflow's ``run: |`` is a shell script, whose comments are these."""
    quote = ""
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                if quote == "'" and line[i + 1 : i + 2] == "'":  # '' is a quote inside '...'
                    i += 1
                else:
                    quote = ""
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return i
        elif c in "'\"" and (i == 0 or line[i - 1] in _YAML_OPENS):
            quote = c
        i += 1
    return None


def _toml(text: str) -> dict[int, int]:
    """TOML: "#" outside strings, which are "...", '...', and the multi-line \"\"\"...\"\"\" and '''...'''."""
    out: dict[int, int] = {}
    line, col = 1, 0
    i, n = 0, len(text)
    quote = ""  # the delimiter of the string we are in
    while i < n:
        c = text[i]
        if c == "\n":
            line, col = line + 1, 0
            i += 1
            if len(quote) == 1:  # a one-line string cannot go on: TOML's error, not a comment
                quote = ""
            continue
        if quote:
            if c == "\\" and quote[0] == '"':
                i, col = i + 2, col + 2
                if text[i - 1 : i] == "\n":
                    line, col = line + 1, 0
                continue
            if text.startswith(quote, i):
                i, col = i + len(quote), col + len(quote)
                quote = ""
                continue
        elif c in "'\"":
            quote = c * 3 if text.startswith(c * 3, i) else c
            i, col = i + len(quote), col + len(quote)
            continue
        elif c == "#":
            out[line] = col
            i, col = _line_end(text, i, col)
            continue
        i, col = i + 1, col + 1
    return out


def _line_end(text: str, i: int, col: int) -> tuple[int, int]:
    """Past a comment that opens at ``i`` (column ``col``): the line break that ends it, and its
    column; the text's end where no line break follows."""
    end = text.find("\n", i)
    end = len(text) if end < 0 else end
    return end, col + end - i


def _shell(text: str) -> dict[int, int]:  # noqa: C901 - complexity 14, to split or justify (issue 45)
    """The shell's rule (bash, and the sh of a Dockerfile's RUN or a Makefile's recipe): "#" that
    starts a word (after an unquoted, unescaped blank or operator), outside quotes ('...' as written,
    "..." with backslash escapes), comments out the rest of its line. Quotes may span lines; a here-
    document's body (``<<EOF`` to ``EOF``) is text, whose "#" and quotes are no shell syntax."""
    out: dict[int, int] = {}
    line, col = 1, 0
    i, n = 0, len(text)
    quote = ""
    word_start = True  # the next character would start a word
    pending: list[tuple[str, bool]] = []  # here-documents whose bodies start after this line
    arithmetic = 0  # depth of (( ... ))
    while i < n:
        c = text[i]
        starts_word, word_start = word_start, False
        if c == "\\" and quote != "'":
            i, col = i + 1, col + 1  # the next character is taken as it is (a line break too)
            if text[i : i + 1] == "\n":
                line, col = line + 1, -1
        elif quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "#" and starts_word:
            out[line] = col
            i, col = _line_end(text, i, col)
            continue
        elif text.startswith("<<<", i):  # a here-string: one word, no body
            i, col = i + 3, col + 3
            continue
        elif text.startswith("((", i) or (arithmetic and text.startswith("))", i)):
            arithmetic += 1 if c == "(" else -1  # $(( a << b )): a shift, not a here-document
            i, col = i + 2, col + 2
            continue
        elif c == "<" and not arithmetic and text.startswith("<<", i):
            found = _heredoc(text, i + 2)
            if found is not None:
                delimiter, strip, after = found
                pending.append((delimiter, strip))
                col += after - i
                i = after
                continue
        else:
            word_start = c in _SHELL_BREAKS
        if c == "\n":
            line, col = line + 1, -1
            word_start = True
            if pending and not quote:
                i, line = _bodies(text, i, line, pending)
                pending = []
        i, col = i + 1, col + 1
    return out


def _heredoc(text: str, at: int) -> tuple[str, bool, int] | None:
    """The delimiter word after ``<<`` (quotes and escapes removed), whether ``<<-`` strips tabs, and
    where the word ends; None where no word follows on the line."""
    strip = text.startswith("-", at)
    j, n = at + strip, len(text)
    while j < n and text[j] in " \t":
        j += 1
    word: list[str] = []
    quote = ""
    while j < n:
        c = text[j]
        if quote:
            if c == quote:
                quote = ""
            else:
                word.append(c)
        elif c in "'\"":
            quote = c
        elif c == "\\":
            j += 1
            word.append(text[j : j + 1])
        elif c in _SHELL_BREAKS:
            break
        else:
            word.append(c)
        j += 1
    delimiter = "".join(word)
    return None if not delimiter or "\n" in delimiter else (delimiter, strip, j)


def _bodies(text: str, i: int, line: int, pending: list[tuple[str, bool]]) -> tuple[int, int]:
    """Past the bodies of the here-documents opened on the line that ends at ``i``, each up to its
    delimiter line; the line break that ends the last, and the number of the line after it."""
    n = len(text)
    for delimiter, strip in pending:
        while i + 1 < n:
            end = text.find("\n", i + 1)
            end = n if end < 0 else end
            body = text[i + 1 : end].rstrip("\r")
            i, line = end, line + 1
            if (body.lstrip("\t") if strip else body) == delimiter:
                break
    return i, line


def _python(text: str) -> dict[int, int]:
    """Python's own tokenizer: its COMMENT tokens. Past a point it cannot read, no comment counts
    (the file is then a FAL900 of its own)."""
    import tokenize  # only for a Python file with a finding: most runs read no Python comments

    out: dict[int, int] = {}
    lines = text.split("\n")
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text, newline="\n").readline):
            if tok.type == tokenize.COMMENT:
                row, col = tok.start
                if row <= len(lines) and lines[row - 1][col : col + 1] == "#":  # rows as ours count
                    out[row] = col
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return out
