"""A Python string literal's text with the file offset of each of its characters.

A shell command line written in a Python string (``os.system("pip install flash-attn==2.4.2")``, a
triple-quoted script handed to a job) is read by the shell model, which places each word it finds
by the file offset of its characters. ``ast`` gives the decoded value and the whole literal's span,
not where each character was written, so the literal is read again here, piece by piece: implicit
concatenation (``"a" "b"``, across lines and comments), prefixes (``r``, ``f``, ``u``, ``rf``),
single and triple quotes, escapes (a decoded character is placed at its backslash; a backslash-newline
is nothing), and, in an f-string, ``{{``/``}}`` (one brace) and replacement fields, which become a
shell variable reference of their own length (``$___``): a value only the run knows. By hand, since
neither ``ast`` nor ``tokenize`` says where a decoded character came from.

``text`` returns None where the literal is not one this reads (bytes, a piece it cannot find the end
of): the caller then has no words to place, and reads nothing from it.
"""

from __future__ import annotations

import ast
import codecs
import re

_PIECE = re.compile(r"([rRuUfF]{0,2})('''|\"\"\"|'|\")")
_BETWEEN = re.compile(r"(?:[ \t\r\n\f]|\\\r?\n|#[^\n]*)*")  # between pieces: blanks, joins, comments
# an escape Python decodes in a str literal (the others keep their backslash)
_ESCAPE = re.compile(
    r"\\(?:\r?\n|[\\'\"abfnrtv]|[0-7]{1,3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}\n]*\})"
)

Placed = list[tuple[str, int]]  # each character of the text and its file offset


def text(source: str, start: int, end: int) -> tuple[str, list[int]] | None:
    """The literal written at ``source[start:end]`` (an ``ast`` node's span), as (text, offsets)."""
    out: Placed = []
    i = start
    while True:
        i = _BETWEEN.match(source, i).end()  # type: ignore[union-attr]  # (?:...)* always matches
        if i >= end:
            break
        m = _PIECE.match(source, i, end)
        if m is None:
            return None
        piece = _piece(source, m, end, out)
        if piece is None:
            return None
        i = piece
    return "".join(c for c, _ in out), [at for _, at in out]


def _piece(source: str, m: re.Match[str], end: int, out: Placed) -> int | None:
    """Read one piece of the literal into ``out``; the offset after its closing quote."""
    prefix, quote = m.group(1).lower(), m.group(2)
    raw, formatted = "r" in prefix, "f" in prefix
    i = m.end()
    while i < end:
        if source.startswith(quote, i):
            return i + len(quote)
        if formatted and source[i] in "{}":
            i = _brace(source, i, end, out)
        elif source[i] == "\\" and not raw:
            i = _escape(source, i, out)
        elif source[i] == "\\":  # a raw string keeps the backslash, and the quote after it
            out += [(source[i], i), (source[i + 1], i + 1)] if i + 1 < end else [(source[i], i)]
            i += 2
        else:
            out.append((source[i], i))
            i += 1
    return None


def _escape(source: str, i: int, out: Placed) -> int:
    m = _ESCAPE.match(source, i)
    if m is None:  # not an escape Python knows: the backslash stays, as Python keeps it
        out.append(("\\", i))
        return i + 1
    found = m.group()
    if found[1] in "\r\n":
        return m.end()  # a backslash at the end of a line joins the lines
    decoded = codecs.decode(found.encode("ascii", "backslashreplace"), "unicode_escape")
    out += [(c, i) for c in decoded]
    return m.end()


def _brace(source: str, i: int, end: int, out: Placed) -> int:
    """``{{`` or ``}}`` is one brace; ``{expression...}`` a field, written as ``$___`` of its length."""
    if source.startswith(source[i] * 2, i):
        out.append((source[i], i))
        return i + 2
    if source[i] == "}":  # a lone closing brace is a syntax error: kept, ast refused the file anyway
        out.append(("}", i))
        return i + 1
    close = _field_end(source, i, end)
    out += [("$" if k == i else "_", k) for k in range(i, close)]
    return close


def _field_end(source: str, i: int, end: int) -> int:
    """The offset after the ``}`` that closes the replacement field opened at ``i``: brackets nest,
    and a string inside the expression is skipped whole."""
    depth, k = 0, i
    while k < end:
        c = source[k]
        if c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
            if depth == 0:
                return k + 1
        elif c in "'\"":
            k = _skip_string(source, k, end)
            continue
        k += 1
    return end


def _skip_string(source: str, k: int, end: int) -> int:
    quote = source[k] * 3 if source.startswith(source[k] * 3, k) else source[k]
    k += len(quote)
    while k < end and not source.startswith(quote, k):
        k += 2 if source[k] == "\\" else 1
    return k + len(quote)


def literal(source: str, node: ast.expr, start: int, end: int) -> tuple[str, list[int]] | None:
    """``text`` for a str constant or an f-string; for a constant, only where it agrees with what
    ``ast`` decoded (anything else this reads wrong is given no places rather than wrong ones)."""
    if isinstance(node, ast.Constant) and not isinstance(node.value, str):
        return None
    if not isinstance(node, (ast.Constant, ast.JoinedStr)):
        return None
    found = text(source, start, end)
    if found is not None and isinstance(node, ast.Constant) and found[0] != node.value:
        return None
    return found
