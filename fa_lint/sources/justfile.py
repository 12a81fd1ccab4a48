"""Justfiles (``just``'s ``justfile``): recipe lines that install, with ``{{variables}}`` from the file.

just runs each line of a recipe in its own shell, as make does (``sources/makefile.py``), after
replacing each ``{{ expression }}`` with its value; a recipe whose body starts with ``#!`` (or marked
``[script]``) is one script. Written by hand: no Python library reads justfiles, and only three things
matter here: ``name := "value"`` assignments, where recipes and their bodies are, and ``{{ }}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from fa_lint.model import Parsed, Requirement
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import Budget, Definitions, Scope, State
from fa_lint.syntax.text import TextIndex

NAME = "justfile"

# name := expression, export included; the expression is read when it joins string literals and
# other variables with "+" (``"flash-attn==" + fa_version``); others (backticks, functions, paths
# joined with "/", if/else) have no value fa-lint can know.
_ASSIGN = re.compile(r"^(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:=[ \t]*(.*)$", re.M)
_TERM = re.compile(
    r"""[ \t]*(?:"((?:[^"\\\n]|\\[nrt"\\])*)"|'([^'\n]*)'|([A-Za-z_][A-Za-z0-9_]*))[ \t]*(\+|#.*|$)"""
)
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}
# A recipe's header: [@]name params...: dependencies (never "name :=", an assignment)
_RECIPE = re.compile(r"^@?[A-Za-z_][A-Za-z0-9_-]*(?:[ \t][^\n:]*)?:(?!=)")
_ATTRIBUTE = re.compile(r"^\[([^\]\n]*)\][ \t]*$")
_INTERPOLATION = re.compile(r"\{\{(.*?)\}\}")
_PLAIN = re.compile(r"[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*")
_PREFIX = re.compile(r"^([ \t]+)([@-]*)")


def _expanded(text: str, known: Mapping[str, str]) -> str:
    """The text as the shell reads it, the same length: ``{{name}}`` of a variable the file gives a
    value becomes ``${name-}`` (padded with empty ``""``, so the columns stay the file's); any other
    expression (a recipe's parameter, a function) one unknown word, ``$___``, which the shell model
    reports as never set, as it does a workflow's ``${{ }}``."""

    def replace(m: re.Match[str]) -> str:
        size = len(m.group())
        plain = _PLAIN.fullmatch(m.group(1))
        extra = size - (len(plain.group(1)) + 4) if plain is not None else -1
        if plain is None or plain.group(1) not in known or extra < 0:
            return "$" + "_" * (size - 1)
        name = plain.group(1)
        head = f"${{{name}-}}" if extra % 2 == 0 else f"${{{name}:-}}"
        return head + '""' * (extra // 2)

    return _INTERPOLATION.sub(replace, text)


def _bodies(text: str) -> Iterator[tuple[int, list[tuple[int, str]], bool]]:
    """Each recipe: its body's lines (offset, text) and whether it is one script (shebang, [script])."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    n, script = 0, False
    while n < len(lines):
        line = lines[n].rstrip("\r")
        attribute = _ATTRIBUTE.match(line)
        if attribute:
            script = script or attribute.group(1).strip().startswith("script")
            n += 1
            continue
        if not _RECIPE.match(line):
            script = False if line.strip() and not line.startswith("#") else script
            n += 1
            continue
        body: list[tuple[int, str]] = []
        n += 1
        while n < len(lines) and (lines[n][:1] in (" ", "\t") or not lines[n].strip()):
            if lines[n].strip():
                body.append((offsets[n], lines[n]))
            elif n + 1 < len(lines) and lines[n + 1][:1] not in (" ", "\t"):
                break
            n += 1
        shebang = bool(body) and body[0][1].strip().startswith("#!")
        yield offsets[n] if n < len(lines) else len(text), body, script or shebang
        script = False


def _unescape(m: re.Match[str]) -> str:
    return _ESCAPES[m.group(1)]


def _template(expression: str) -> str | None:
    """A ``+`` expression as one value to expand, make's way (``$(name)`` a variable, ``$$`` a
    ``$``; ``$(?)`` a term that cannot be read), or None when no term of it can be read."""
    out: list[str] = []
    pos = 0
    while True:
        m = _TERM.match(expression, pos)
        if m is None:  # a term fa-lint cannot read: what came before it is still known
            return "".join(out) + "$(?)" if out else None
        if m.group(3) is not None:
            out.append(f"$({m.group(3)})")
        else:
            quoted = m.group(1)
            literal = m.group(2) if quoted is None else re.sub(r"\\(.)", _unescape, quoted)
            out.append(literal.replace("$", "$$"))
        if m.group(4) != "+":
            return "".join(out)
        pos = m.end()


def _variables(text: str, budget: Budget) -> dict[str, str]:
    """The file's variables: just evaluates each assignment, the variables it names first, whatever
    their order in the file (a cycle is just's error); the last assignment of a name counts."""
    found = Definitions(budget, make=True)
    for m in _ASSIGN.finditer(text):
        template = _template(m.group(2))
        if template is not None:
            found.define(m.group(1), template)
    # what is left of make's spelling is the shell's: $(...), a value fa-lint cannot know
    return {name: value.replace("$$", "$") for name, value in found.values().items()}


def parse(path: str, text: str) -> Iterator[Parsed]:  # noqa: C901 - complexity 11: each recipe body read as just runs it (one script after a shebang, else line by line with make's continuations), through one scanner and the restored() closure over the file's text
    budget = Budget()  # the file's: its scanner's too, which reports it once crossed
    variables = _variables(text, budget)
    # The shell model reads words from the text it is given: it is given the file with each {{ }}
    # written as the shell would expand it, of the same length, so every position is the file's.
    seen = _expanded(text, variables)
    index = TextIndex(path, seen)
    scanner = Scanner(index, NAME)
    scanner.budget = budget

    def restored(record: Parsed) -> Parsed:
        """A requirement as the justfile writes it (``{{FA}}``), where its text was expanded."""
        if not isinstance(record, Requirement):
            return record
        loc = record.location
        start, end = index.offset(loc.line, loc.column), index.offset(loc.end_line, loc.end_column)
        if text[start:end] == seen[start:end]:
            return record
        written = text[start:end]
        unknown = next(
            (m.group() for m in _INTERPOLATION.finditer(written) if m.group(1).strip() not in variables), None
        )
        return record._replace(raw=written, unresolved=record.unresolved and (unknown or written))

    for _, body, whole in _bodies(seen):
        if not body:
            continue
        if whole:  # one script: from the line after the shebang to the body's end
            lines = body[1:] if body[0][1].strip().startswith("#!") else body
            if lines:
                start, end = lines[0][0], lines[-1][0] + len(lines[-1][1])
                scanner.run(start, end, State(Scope(values=variables)))
                yield from map(restored, scanner.drain())
            continue
        joined: list[tuple[int, str]] = []
        for offset, line in body:  # a line ending in "\" goes on with the next one, as in make
            if joined and joined[-1][1].rstrip("\r").endswith("\\"):
                start = joined[-1][0]
                joined[-1] = (start, seen[start : offset + len(line)])
            else:
                joined.append((offset, line))
        for offset, line in joined:  # each line its own shell, its @ and - prefixes blanked
            m = _PREFIX.match(line)
            shell = line if m is None else m.group(1) + " " * len(m.group(2)) + line[m.end() :]
            scanner.run(offset, offset + len(line), State(Scope(values=variables)), text=shell)
            yield from map(restored, scanner.drain())
    yield from map(restored, scanner.finish())
