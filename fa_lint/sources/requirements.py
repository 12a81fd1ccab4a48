"""pip requirements and constraints files, read with pip-requirements-parser.

Files whose every line is plain -- a requirement by name, with extras, a version and a marker; ``-r``
or ``-c`` with a path; an index option; a comment -- are read without it: the library imports
urllib.request, http.client, email and ssl when it loads (about 30 ms, more than the rest of a small
run), and on such lines it does nothing but what ``packaging`` does. One line that needs pip's own
syntax (``--hash``, ``-e``, a URL or path, a ``\\`` continuation, a variable, any other option) sends
the whole file to the library. tests/test_sources.py checks that both readings agree.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

from fa_lint.model import FLASH_ATTN, Include, InstallOptions, Parsed, ParseProblem, Requirement, normalize
from fa_lint.sources import _reqs
from fa_lint.sources._text import TextIndex

NAME = "requirements"

# A line of a requirements file: an option, a local path, a URL, or a name with what may follow it.
# One operator char is never enough: "CC = gcc" (Makefile.in) and "include x" (MANIFEST.in) fail.
_SNIFF = re.compile(
    r"""^(?:-[rcefi]\s*\S|--[a-z][a-z-]*(?:[=\s]|$)|\.{1,2}(?:/\S*)?(?:\[[^\]]*\])?$|[a-z][a-z0-9+.-]*:\S+
    |[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\]\s*)?(?:(?:===?|[<>!~]=|[<>])\s*\S|;|@\s*\S|\\?$|\s\#))""",
    re.X,
)

_LEAD = re.compile(r"\s*(?:(?:-e|--editable)(?:\s*=\s*|\s+))?")
# pip ends a requirement at an option ("--hash=...") or a comment, which needs whitespace before "#".
_TAIL = re.compile(r"\s+(?:--?[A-Za-z]|#)|\s*\\$")
_ENV_VAR = re.compile(r"\$\{[A-Za-z0-9_]+\}")
_NAME = re.compile(r"\s*(?:(?:-e|--editable)\s+)?([A-Za-z0-9][A-Za-z0-9._-]*)")

# What a plain line may be. A requirement: a name, extras, a version part, then anything after ";"
# (a marker, which packaging checks); no "@", "/", quotes or "-" before the marker, which pip reads
# as a URL, a path or an option. An option: the few that take one plain word (or none), exactly as
# pip spells them (optparse would take an abbreviation; the library reads those).
_PLAIN = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9._-]*[ \t]*(?:\[[A-Za-z0-9._, \t-]*\][ \t]*)?[A-Za-z0-9.*+!=<>~,() \t]*(?:;.*)?"
)
_OPTION = re.compile(
    r"(?P<option>-r|--requirement|-c|--constraint|-i|--index-url|--extra-index-url|-f|--find-links"
    r"|--trusted-host)(?: +|=)(?P<value>[^\s\"'\\=$][^\s\"'\\$]*)|--pre|--no-index|--prefer-binary"
)
_INCLUDES = {"-r": False, "--requirement": False, "-c": True, "--constraint": True}  # option: constraint
_INDEXES = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links"}
# pip reads a requirement that ends like an archive (extras aside) as a file to install.
_ARCHIVE = re.compile(r"\.(?:whl|zip|tbz|txz|tlz|tgz|tar|tar\.(?:gz|bz2|xz|lz|lzma))(?:\[[^\]]+\])?$", re.I)
# pip-requirements-parser's comment syntax: "#" at the start or after whitespace.
_COMMENT = re.compile(r"(^|\s+)(#.*)$")


@functools.cache
def _line_parser() -> Callable[[str], tuple[str, Any, list[str]]]:
    """pip-requirements-parser's ``get_line_parser()``, with its option parser built once.

    The library builds a new optparse parser for every line (about half of its parse time) so that
    append options never share a default list between lines; a deep copy of the defaults per line
    gives the same isolation.
    """
    import copy
    import optparse
    import shlex

    import pip_requirements_parser as prp

    parser = prp.build_parser()

    def parse_line(line: str) -> tuple[str, Any, list[str]]:
        defaults = optparse.Values(copy.deepcopy(parser.get_default_values().__dict__))
        args, options = prp.break_args_options(line)
        opts, arguments = parser.parse_args(shlex.split(options), defaults)
        return args, opts, arguments

    return parse_line


def _items(text: str) -> Iterator[Any]:
    """pip-requirements-parser's records for one file's text, without it re-reading the file.

    The library only parses files by name; its line-level API below is what ``from_file`` runs.
    Imported here, not at module level: it costs ~150 ms and only requirements files need it.
    """
    import pip_requirements_parser as prp

    line_parser = _line_parser()
    for numbered in prp.preprocess(text):
        number, line = numbered
        if isinstance(numbered, prp.CommentLine):
            continue
        rline = prp.RequirementLine(line=line, line_number=number, filename="")
        try:
            req_string, options, arguments = line_parser(line)
            parsed = prp.ParsedLine(rline, req_string, options, False, arguments)
            for item in prp.handle_line(parsed):
                is_req = isinstance(item, prp.ParsedRequirement)
                yield prp.build_req_from_parsedreq(item) if is_req else item
        except Exception as exc:  # the library raises bare Exceptions on bad lines
            yield prp.InvalidRequirementLine(requirement_line=rline, error_message=str(exc))


def sniff(head: str, *, complete: bool) -> bool:
    """Whether every line the head shows reads as a requirement, an option or a path."""
    lines = head.split("\n")
    if not complete:
        lines.pop()  # cut mid-line
    entries = [s for s in (line.strip() for line in lines) if s and not s.startswith("#")]
    return bool(entries) and all(_SNIFF.match(s) for s in entries)


def parse(path: str, text: str) -> Iterator[Parsed]:
    index = TextIndex(path, text)
    lines = text.splitlines()  # the library numbers lines this way
    plain = _plain(index, lines)
    return iter(plain) if plain is not None else _pip(index, lines)


def _plain(index: TextIndex, lines: list[str]) -> list[Parsed] | None:
    """The records of a file of plain lines; None when a line needs pip's parser."""
    out: list[Parsed] = []
    urls: list[str] = []  # index options, in the order _index_urls gives them
    for number, physical in enumerate(lines, start=1):
        if physical.endswith("\\"):
            return None
        # as the library splits a line: text, then a comment, each stripped
        parts = [p.strip() for p in _COMMENT.split(physical) if p.strip()]
        logical = parts[0] if parts and not parts[0].startswith("#") else ""
        if not logical:
            continue
        option = _OPTION.fullmatch(logical)
        if option is not None:
            constraint = _INCLUDES.get(option["option"] or "")
            if constraint is not None:
                out.append(Include(index.whole_line(number), option["value"], constraint=constraint))
            elif option["option"] in _INDEXES:
                urls.append(option["value"])
            continue
        head = logical.split(";", 1)[0].rstrip()
        if not _PLAIN.fullmatch(logical) or " -" in logical or _ARCHIVE.search(head):
            return None
        rec = _requirement(index, number, physical, logical)
        if rec is None or rec.url is not None:
            return None  # packaging refuses it: the library says how pip does
        out.append(rec)
    if urls:  # they apply to the whole install, wherever they stand in the file
        options = InstallOptions(index_urls=tuple(urls))
        return [dataclasses.replace(r, options=options) if isinstance(r, Requirement) else r for r in out]
    return out


def _pip(index: TextIndex, lines: list[str]) -> Iterator[Parsed]:
    import pip_requirements_parser as prp

    items = list(_items(index.text))
    # One --hash (or --require-hashes) puts the whole install in pip's hash-checking mode.
    hashed = any(
        getattr(item, "hash_options", None)
        or (isinstance(item, prp.OptionLine) and item.options.get("require_hashes"))
        for item in items
    )
    # Index options apply to the whole install, wherever they stand in the file.
    urls = tuple(_index_urls(items))
    options = InstallOptions(index_urls=urls) if urls else None
    for item in items:
        number = item.requirement_line.line_number
        physical = lines[number - 1] if number <= len(lines) else ""
        if isinstance(item, prp.IncorrectRequirementLine):
            continue  # options pip ignores with a warning, not an error
        if isinstance(item, prp.InvalidRequirementLine):
            yield from _invalid(index, number, physical, item.requirement_line.line, item.error_message)
        elif isinstance(item, prp.OptionLine):
            where = index.whole_line(number)
            for target in item.options.get("requirements", []):
                yield Include(where, target)
            for target in item.options.get("constraints", []):
                yield Include(where, target, constraint=True)
        elif isinstance(item, prp.InstallRequirement):
            rec = _named(index, number, physical, item)
            if rec is not None:
                yield dataclasses.replace(rec, hash_checked=hashed, options=options)


def _index_urls(items: list[Any]) -> Iterator[str]:
    import pip_requirements_parser as prp

    for item in items:
        if isinstance(item, prp.OptionLine):
            opts = item.options
            yield from filter(None, [opts.get("index_url"), *(opts.get("extra_index_urls") or [])])
            yield from opts.get("find_links") or []


def _span(line: str) -> tuple[int, int]:
    start = _LEAD.match(line)
    s = start.end() if start else 0
    tail = _TAIL.search(line, s)
    e = tail.start() if tail else len(line.rstrip())
    return s, e


def _named(index: TextIndex, number: int, physical: str, item: Any) -> Requirement | None:
    name = normalize(item.req.name) if item.req else None
    if name is None and item.link is not None:
        name = _reqs.name_from_url(item.link.url)
    if name is None:
        return None  # a local project path such as "-e ."; nothing fa-lint can judge
    return _requirement(index, number, physical, item.requirement_line.line)


def _requirement(index: TextIndex, number: int, physical: str, logical: str) -> Requirement | None:
    """The requirement of one line, located at its text on the physical line."""
    s, e = _span(physical)
    ls, le = _span(logical)
    raw = logical[ls:le]
    start = index.offset(number, s + 1)
    end = index.offset(number, e + 1)
    rec = _reqs.parse(raw, index.location(start, end), NAME)
    return rec if isinstance(rec, Requirement) else None


def _invalid(index: TextIndex, number: int, physical: str, logical: str, message: str) -> Iterator[Parsed]:
    s, e = _span(physical)
    where = index.location(index.offset(number, s + 1), index.offset(number, e + 1))
    var = _ENV_VAR.search(logical)
    if var:
        # pip substitutes ${VAR} from the environment at install time; only that environment knows.
        m = _NAME.match(logical)
        if m and normalize(m.group(1)) == FLASH_ATTN:
            ls, le = _span(logical)
            yield Requirement(
                name=FLASH_ATTN, raw=logical[ls:le], location=where, source=NAME, unresolved=var.group()
            )
        return
    first = message.strip().splitlines()[0] if message.strip() else "invalid line"
    first = re.sub(r"^(Invalid requirement:\s*:?\s*)+", "", first)
    yield ParseProblem(where, f"pip cannot parse {logical.strip()!r}: {first}", logical.strip())
