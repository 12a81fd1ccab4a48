"""Jinja templates named like dependency files: a ``pyproject.toml`` or ``setup.py`` that a generator
renders (huggingface/kernels' ``kernel-builder/src/pyproject/templates/``, cookiecutter projects) is
not the file an installer reads, and a parser that stops on its ``{{ name }}`` has found no broken
dependency file.

A file is taken for a template only where its parse failed and Jinja's own syntax explains it: a tag
(``{{ ... }}`` or ``{% ... %}``) on the line the parser stopped at, or a line that is one Jinja
statement (``{% if data_globs %}``, ``{% endfor %}``), which no Python, TOML, YAML or requirements
file has. A ``{{`` elsewhere proves nothing: an f-string writes a literal brace that way
(``f"{{x}}"``), and a TOML string may hold one.
"""

from __future__ import annotations

import re

from fa_lint.model import ParseProblem

# Jinja's default delimiters (jinja2.defaults: VARIABLE_START_STRING "{{", BLOCK_START_STRING "{%"),
# with the whitespace-control "-" they allow; one line each, as the generators write them
_TAG = re.compile(r"\{\{-?[^{}\n]*?-?\}\}|\{%-?[^\n]*?-?%\}")
# A line that is a Jinja statement and nothing else: its keywords (Jinja's "List of Control
# Structures": if/elif/else/endif, for/endfor, set, block, macro, call, filter, with, raw, include,
# import, extends)
_STATEMENT = re.compile(
    r"^[ \t]*\{%-?[ \t]*(?:if|elif|else|endif|for|endfor|set|endset|block|endblock|macro|endmacro|call|"
    r"endcall|filter|endfilter|with|endwith|raw|endraw|include|import|from|extends)\b[^\n]*?-?%\}[ \t]*$",
    re.M,
)
_SHOWN = 40  # characters of a tag quoted in a message


def tag(text: str, problem: ParseProblem) -> tuple[str, int] | None:
    """The Jinja tag that makes a file that failed to parse a template, and its line; None where
    the failure is not Jinja's doing (see the module's docstring)."""
    if problem.entry:
        return None  # one entry the parser skipped: the rest of the file was read as its format
    line = problem.location.line
    own = _line(text, line)
    m = _TAG.search(own)
    if m is not None:
        return m.group()[:_SHOWN], line
    m = _STATEMENT.search(text)
    if m is None:
        return None
    return m.group().strip()[:_SHOWN], text.count("\n", 0, m.start()) + 1


def _line(text: str, number: int) -> str:
    """The text of 1-based line ``number`` ("" past the end)."""
    start = 0
    for _ in range(number - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return ""
    end = text.find("\n", start)
    return text[start : end if end >= 0 else len(text)]


def recognised(text: str, problem: ParseProblem) -> ParseProblem:
    """``problem``, marked as a template's where Jinja's syntax explains it."""
    found = tag(text, problem)
    if found is None:
        return problem
    shown, line = found
    where = "" if line == problem.location.line else f" at line {line}"
    return problem._replace(template=f"`{shown}`{where}")
