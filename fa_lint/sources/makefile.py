"""Makefiles, when named explicitly: recipe lines that install, with ``$(VAR)`` from the file.

Read by hand: no Python library parses a Makefile (the packages named for it on PyPI run make, or
generate Makefiles), and only GNU make itself knows the whole language. What is needed is narrow and
stable across makes: tab-led recipe lines with their ``\\`` continuations, and simple ``VAR = value``
definitions for ``$(VAR)``; a recipe is then read as the shell script it is, with the shell parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fa_lint.model import Include, Parsed
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import Budget, Definitions, Scope, State, expand
from fa_lint.syntax.text import TextIndex

NAME = "makefile"

# The value's trailing blanks are cut in code: "(.*?)[ \t]*$" retries the blanks at each step, n^2.
# (``export``, ``override`` and ``private`` before a definition set it as well)
_DEFINE = re.compile(
    r"^(?:(?:export|override|private)[ \t]+)*"
    r"([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*(:::=|::=|:=|\?=|\+=|=)[ \t]*(.*)$",
    re.M,
)
_RECIPE = re.compile(r"^(\t[ \t]*)([@+-]*)")
_INCLUDE = re.compile(r"^(-?include|sinclude)[ \t]+([^#\n]*)", re.M)
# `UV ?= $(shell which uv)`: the path of the tool that name finds, so `$(UV) pip install` runs uv (a
# command's name counts by its basename). Only these two lookups: any other $(shell ...) is what the
# run prints, which fa-lint never runs a program to learn.
_WHICH = re.compile(r"^\$[({]shell[ \t]+(?:which|command[ \t]+-v)[ \t]+([A-Za-z0-9_.+-]+)[^)}]*[)}]$")


def recipes(text: str) -> Iterator[tuple[int, int, str]]:
    """Each recipe line (tab-led, with its ``\\`` continuations) as make hands it to its own shell:
    start and end offsets, and the text without make's ``@``/``-``/``+`` prefix (same length)."""
    start = 0
    lines = text.split("\n")
    n = 0
    while n < len(lines):
        m = _RECIPE.match(lines[n])
        offset = start
        if m is None:
            start += len(lines[n]) + 1
            n += 1
            continue
        shell = [m.group(1) + " " * len(m.group(2)) + lines[n][m.end() :]]
        while lines[n].rstrip("\r").endswith("\\") and n + 1 < len(lines):
            start += len(lines[n]) + 1
            n += 1
            shell.append(lines[n])
        start += len(lines[n]) + 1
        n += 1
        body = "\n".join(shell)
        yield offset, offset + len(body), body


def parse(path: str, text: str) -> Iterator[Parsed]:
    scanner = Scanner(TextIndex(path, text), NAME)
    variables = _variables(text, scanner.budget)
    yield from _includes(scanner.index, variables)
    for start, end, shell in recipes(text):  # each line its own shell: a cd ends with its line
        scanner.run(start, end, State(Scope(values=variables)), text=shell, make=True)
        yield from scanner.drain()
    yield from scanner.finish()


def _includes(index: TextIndex, variables: dict[str, str]) -> Iterator[Include]:
    """``include FILE...`` (``-include``, ``sinclude``): each file make reads in its place, read as a
    Makefile too (a fragment of any name: ``Makefile-cuda``, ``config/flash.inc``), from the
    including file's folder. A name fa-lint cannot expand, or a glob, is not followed."""
    for m in _INCLUDE.finditer(index.text):
        for w in re.finditer(r"\S+", m.group(2)):
            start = m.start(2) + w.start()
            exp = expand(w.group(), Scope(values=variables), make=True)
            if exp.unresolved or any(c in exp.text for c in "*?[%"):
                continue
            for name in exp.text.split():
                where = index.location(start, start + len(w.group()))
                yield Include(where, name, optional=True, source=NAME)


def _value(text: str) -> str:
    found = _WHICH.match(text)
    return found.group(1) if found else text


def _variables(text: str, budget: Budget) -> dict[str, str]:
    """The file's variables as its recipes see them (GNU make, "The Two Flavors of Variables"): a
    ``=`` variable expands its value when used, so with the last value of every variable it names;
    ``:=`` (``::=``, ``:::=``) expands it at its line; ``?=`` sets only an unset name; ``+=`` appends,
    keeping the flavour (a ``:=`` variable's addition is expanded at once)."""
    found = Definitions(budget, make=True)  # a simple variable is defined literal: its value is final
    for m in _DEFINE.finditer(text):
        name, op, value = m.group(1), m.group(2), _value(m.group(3).rstrip(" \t"))
        if op == "?=" and name in found.raw:
            continue
        if op == "+=" and name in found.raw:
            simple = found.literal(name)
            added = found.expand(value) if simple else value
            found.define(name, found.raw[name] + " " + added, literal=simple)
            continue
        simple = op in (":=", "::=", ":::=")
        if simple:
            value = found.expand(value)
        # a simple variable's value is final: what it names that was not defined yet stays unknown
        # (make's environment may set it), never the value a later line gives that name
        found.define(name, value, literal=simple)
    return found.values()
