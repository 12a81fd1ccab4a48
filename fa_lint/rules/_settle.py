"""A fix settled with the file's text before it is final (``Fix.context``): a shell word quoted where it
stands bare, a TOML value narrowed to its quoted string, new lines written with the file's own line
ending, a word of a command a Python program runs kept only where no shell re-reads it, and a
``[tool.uv.sources]`` entry placed where the table takes one. The fixes themselves are built in
``_fixes``; this is what the engine asks of each once the file's text is at hand."""

from __future__ import annotations

import re

from fa_lint.model import Fix
from fa_lint.rules._fixes import IN_JSON
from fa_lint.syntax.text import TextIndex

_SHELL_SPECIAL = r"[\s<>|&;()]"


def _shell(fix: Fix, text: str, start: int, end: int) -> Fix | None:
    before, after = text[start - 1 : start], text[end : end + 1]
    quoted = before in ("'", '"') and before == after
    if quoted or not re.search(_SHELL_SPECIAL, fix.new):
        return fix._replace(context="")
    if fix.source in IN_JSON:  # no '"' or '\\' can be written in a JSON string as it is
        return None if re.search(r'["\\\']', fix.new) else fix._replace(new=f"'{fix.new}'", context="")
    if not re.search(r'["$`\\]', fix.new):
        return fix._replace(new=f'"{fix.new}"', context="")
    if "'" not in fix.new:
        return fix._replace(new=f"'{fix.new}'", context="")
    return None  # no quoting keeps it one word


def _toml_value(fix: Fix, index: TextIndex, start: int, end: int) -> Fix | None:
    found = list(re.finditer(r"=\s*([\"'])(" + re.escape(fix.old) + r")\1", index.text[start:end]))
    if len(found) != 1:
        return None  # no version string (Pipfile's default "*"), or one with escapes
    s, e = start + found[0].start(2), start + found[0].end(2)
    return fix._replace(location=index.location(s, e), context="")


def settle(fix: Fix, index: TextIndex) -> Fix | None:
    """Make a fix final against its file's text (see ``Fix.context``); None when none is safe."""
    if not fix.context:
        return fix
    if fix.context == "uv-sources":
        return _uv_sources(fix, index)
    loc = fix.location
    start, end = index.offset(loc.line, loc.column), index.offset(loc.end_line, loc.end_column)
    if fix.context == "shell":
        return _shell(fix, index.text, start, end)
    if fix.context == "toml-value":
        return _toml_value(fix, index, start, end)
    if fix.context == "lines":
        newline = "\r\n" if index.text[end : end + 2] == "\r\n" else "\n"
        return fix._replace(new=fix.new.replace("\n", newline), context="")
    if fix.context == "python-command":
        return _python_command(fix, index.text, start, end)
    return None


def _python_command(fix: Fix, text: str, start: int, end: int) -> Fix | None:
    """A word of an argument list (``["pip", "install", "flash-attn"]``) is a whole Python string, which
    no shell reads: the new text goes in as it is. A word of a command line in a string (``os.system(
    "pip install flash-attn")``) is read by a shell: only a new text the shell reads as one word goes
    in, since quoting it would mean quoting inside the Python string."""
    before, after = text[start - 1 : start], text[end : end + 1]
    if (before in ("'", '"') and before == after) or not re.search(_SHELL_SPECIAL, fix.new):
        return fix._replace(context="")
    return None


# [tool.uv.sources] as a header line of its own (a comment may follow), and what else can define it:
# a dotted key or a sources = ... under [tool.uv], or a subtable, where a new header would redefine it
_KEY = r"tool[ \t]*\.[ \t]*uv[ \t]*\.[ \t]*sources"
_SOURCES_HEADER = rf"(?m)^[ \t]*\[[ \t]*{_KEY}[ \t]*\][ \t]*(?:#[^\r\n]*)?\r?\n"
_SOURCES_ELSEWHERE = rf"(?m)^[ \t]*(?:\[[ \t]*{_KEY}\b|sources[ \t]*=|tool[ \t]*\.)"


def _uv_sources(fix: Fix, index: TextIndex) -> Fix | None:
    """Where a new ``[tool.uv.sources]`` entry goes: right under the table's header, or at the end of
    the file in a new table; None where the table is written another way (fix it by hand). The file's
    own line ending is kept, and ``--fix`` parses the result before it writes it."""
    text = index.text
    newline = "\r\n" if "\r\n" in text else "\n"
    entry = fix.new.replace("\n", newline)
    headers = list(re.finditer(_SOURCES_HEADER, text))
    if len(headers) == 1:
        at = headers[0].end()
    elif not headers and re.search(_SOURCES_ELSEWHERE, text) is None:
        at = len(text)
        lead = "" if not text or text.endswith("\n") else newline
        entry = f"{lead}{newline}[tool.uv.sources]{newline}{entry}"
    else:
        return None
    return fix._replace(location=index.location(at, at), old="", new=entry, context="")
