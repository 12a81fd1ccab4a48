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

import bisect
import io
import re
from collections.abc import Callable

# "dockerfile" is read where the instructions are known (fa_lint.sources.docker_comments, which
# fa_lint.settings.decide calls): a format reader is above this layer.
STYLES = ("pip", "toml", "yaml", "shell", "python", "dockerfile", "notebook", "batch", "powershell", "none")
# pip's rule: "#" at the line's start or after whitespace
_PIP = re.compile(r"(?:^|(?<=\s))#")
# what ends a shell word, so that the next "#" starts one (and a comment)
_SHELL_BREAKS = frozenset(" \t\n;&|()<>")


def starts(text: str, style: str) -> dict[int, int]:
    """{line number (1-based): column (0-based) of the ``#`` that opens its comment}; lines without a
    comment are absent. ``none``: the format has no comments (JSON)."""
    if style == "pip":
        return _by_line(text, _pip)
    if style == "yaml":
        return _yaml(text)
    if style == "toml":
        return _toml(text)
    if style == "shell":
        return _shell(text)
    if style == "python":
        return _python(text)
    if style == "dockerfile":
        raise ValueError("a Dockerfile's comments are fa_lint.sources.docker_comments.comment_starts'")
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


def _yaml(text: str) -> dict[int, int]:
    """YAML: a "#" at a line's start or after a blank, between the tokens PyYAML's scanner reads (the
    reader fa-lint's YAML formats go through): never inside a scalar, quoted ones over several lines
    included, an anchor or a tag. Past a point the scanner cannot read, no comment counts. A block
    scalar holds no YAML comment; a literal one (``|``) is read as the shell script it is where
    fa-lint reads one (a workflow's ``run: |``), with the shell's comments; a folded one (``>``) joins
    its lines with blanks, so a "#" in it would comment out the lines after it: it holds none."""
    spans, literals, end = _yaml_tokens(text)
    starts = [span[0] for span in spans]
    out: dict[int, int] = {}
    line, line_start = 1, 0
    at = text.find("#", 0, end)
    while at >= 0:
        line += text.count("\n", line_start, at)
        line_start = text.rfind("\n", 0, at) + 1
        i = bisect.bisect_right(starts, at) - 1
        inside = i >= 0 and at < spans[i][1]
        if not inside and (at == line_start or text[at - 1] in " \t"):
            out.setdefault(line, at - line_start)
            at = text.find("\n", at)  # the rest of the line is the comment
            at = -1 if at < 0 else text.find("#", at, end)
        else:
            at = text.find("#", at + 1, end)
    for first, last in literals:
        out.update({first + k: c for k, c in _shell("\n".join(text.split("\n")[first:last])).items()})
    return out


def _yaml_tokens(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int]:
    """The (start, end) offsets of each token PyYAML's scanner reads, the lines (first, past the
    last, 0-based) of each literal block scalar's content, and where the scanner stopped."""
    import yaml  # only for a YAML file with a finding and a "#"

    # libyaml's scanner where PyYAML was built with it: the same tokens and marks (in characters) as
    # PyYAML's own, six times faster (4 MB of lock entries: 0.7 s, 4.5 s)
    spans: list[tuple[int, int]] = []
    literals: list[tuple[int, int]] = []
    end = len(text)
    try:
        for token in yaml.scan(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            start, stop = token.start_mark.index, token.end_mark.index
            if stop > start:
                spans.append((start, stop))
            if isinstance(token, yaml.ScalarToken) and token.style == "|":
                first = text.count("\n", 0, start) + 1  # the content starts on the line after the "|"
                literals.append(
                    (first, text.count("\n", 0, stop) + (stop == len(text) or text[stop - 1] != "\n"))
                )
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        end = mark.index if mark is not None else 0
    return spans, literals, end


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
            end = _line_end(text, i)
            i, col = end, col + end - i
            continue
        i, col = i + 1, col + 1
    return out


def _line_end(text: str, i: int, also: str = "") -> int:
    """Past a comment that opens at ``i``: the line break that ends it (or ``also``, before it); the
    text's end where neither follows."""
    end = text.find("\n", i)
    end = len(text) if end < 0 else end
    if also:
        other = text.find(also, i, end)
        end = end if other < 0 else other
    return end


def _shell(text: str) -> dict[int, int]:
    """The shell's rule (bash, and the sh of a Dockerfile's RUN or a Makefile's recipe): "#" that
    starts a word (after an unquoted, unescaped blank or operator) comments out the rest of its line,
    outside every quote and expansion: '...' as written, "..." and $"..." with backslash escapes,
    ANSI-C $'...' where a backslash escapes any character (``\\'`` too), ${...}, $((...)) and ((...)).
    A command substitution ($(...) or backticks) is a script of its own, whose comments count, even
    inside "..."; each of these may span lines and nest. A here-document's body (``<<EOF`` to ``EOF``)
    is text, whose "#" and quotes are no shell syntax."""
    return _ShellScan(text).run()


# What opens a quote or expansion in a script or inside "...", longest first: the context it opens.
_OPENERS = (("$((", "(("), ("${", "${"), ("$(", "$("), ("$'", "$'"), ('$"', '"'), ("`", "`"))
_SCRIPTS = frozenset({"", "$(", "`"})
_IN_DOUBLE = tuple(
    o for o in _OPENERS if o[0] not in ("$'", '$"')
)  # "$'x'" inside "..." is text  # contexts read as a script: words, comments, quotes


class _ShellScan:
    """One pass over a script with a stack of the quotes and expansions it is inside ("" at the top)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.out: dict[int, int] = {}
        self.stack = [""]  # the contexts we are inside, innermost last
        self.depth = [0]  # in each, the parentheses it opened of its own
        self.line, self.line_start = 1, 0
        self.word_start = True  # the next character would start a word
        self.pending: list[tuple[str, bool]] = []  # here-documents whose bodies start after this line

    def run(self) -> dict[int, int]:
        i, n = 0, len(self.text)
        while i < n:
            if self.text[i] == "\n":
                i = self._newline(i)
                continue
            context = self.stack[-1]
            i = self._script(i, context) if context in _SCRIPTS else _STEPS[context](self, i)
        return self.out

    def _newline(self, i: int) -> int:
        self.line, self.line_start = self.line + 1, i + 1
        if self.stack[-1] in _SCRIPTS:
            self.word_start = True
            if self.pending:
                end, self.line = _bodies(self.text, i, self.line, self.pending)
                self.line_start, self.pending = end + 1, []
                return end + 1
        return i + 1

    def _escape(self, i: int) -> int:
        """Past a backslash and the character it escapes (a line break too)."""
        if self.text[i + 1 : i + 2] == "\n":
            self.line, self.line_start = self.line + 1, i + 2
        return i + 2

    def _push(self, context: str) -> None:
        self.stack.append(context)
        self.depth.append(0)

    def _pop(self) -> None:
        self.stack.pop()
        self.depth.pop()

    def _open(self, i: int, openers: tuple[tuple[str, str], ...] = _OPENERS) -> int | None:
        """Past a quote or expansion that opens at ``i``, now on the stack; None where none does."""
        for opener, context in openers:
            if self.text.startswith(opener, i):
                self._push(context)
                self.word_start = context in _SCRIPTS
                return i + len(opener)
        return None

    def _script(self, i: int, context: str) -> int:
        text, c = self.text, self.text[i]
        starts_word, self.word_start = self.word_start, False
        if c == "\\":
            return self._escape(i)
        if c == "#" and starts_word:  # to the line's end; in backticks to the closing one (bash
            if context != "`":  # finds it first), and not recorded: what follows it is no comment
                self.out[self.line] = i - self.line_start
            return _line_end(text, i, "`" if context == "`" else "")
        if c in "'\"":
            self._push(c)
            return i + 1
        if context and self._closes(i, context):
            return i + 1
        opened = self._open(i) if c in "$`" else None
        if opened is not None:
            return opened
        return self._operator(i, c, starts_word)

    def _closes(self, i: int, context: str) -> bool:
        """Whether a `` ` `` or ``)`` at ``i`` ends the substitution we are in (and leave it)."""
        c = self.text[i]
        if (context == "`" and c == "`") or (context == "$(" and c == ")" and self.depth[-1] == 0):
            self._pop()
            self.word_start = False
            return True
        if context == "$(" and c in "()":
            self.depth[-1] += 1 if c == "(" else -1
        return False

    def _operator(self, i: int, c: str, starts_word: bool) -> int:
        text = self.text
        if text.startswith("<<<", i):  # a here-string: one word, no body
            return i + 3
        if text.startswith("((", i) and starts_word:  # (( a << b )): arithmetic, no here-document
            self._push("((")
            return i + 2
        if text.startswith("<<", i):
            found = _heredoc(text, i + 2)
            if found is not None:
                self.pending.append(found[:2])
                return found[2]
        self.word_start = c in _SHELL_BREAKS
        return i + 1

    def _quoted(self, i: int) -> int:
        """Inside '...' (no escapes), "..." or $'...'."""
        context, c = self.stack[-1], self.text[i]
        if c == "\\" and context != "'":
            return self._escape(i)
        if c == context[-1]:
            self._pop()
            return i + 1
        opened = self._open(i, _IN_DOUBLE) if context == '"' and c in "$`" else None
        return i + 1 if opened is None else opened

    def _expansion(self, i: int) -> int:
        """Inside ${...} or an arithmetic ((...)): no comments; quotes and expansions nest."""
        context, c = self.stack[-1], self.text[i]
        if c == "\\":
            return self._escape(i)
        if self._ends_expansion(i, context):
            self._pop()
            return i + (1 if context == "${" else 2)
        if context == "((" and c in "()":
            self.depth[-1] += 1 if c == "(" else -1
        if c in "'\"" and context == "${":
            self._push(c)
            return i + 1
        opened = self._open(i) if c in "$`" else None
        return i + 1 if opened is None else opened

    def _ends_expansion(self, i: int, context: str) -> bool:
        if context == "${":
            return self.text[i] == "}"
        return self.depth[-1] == 0 and self.text.startswith("))", i)


_STEPS: dict[str, Callable[[_ShellScan, int], int]] = {
    "'": _ShellScan._quoted,
    '"': _ShellScan._quoted,
    "$'": _ShellScan._quoted,
    "${": _ShellScan._expansion,
    "((": _ShellScan._expansion,
}


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
