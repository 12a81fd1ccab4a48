"""pip requirements and constraints files, read with pip-requirements-parser."""

from __future__ import annotations

import copy
import functools
import optparse
import re
import shlex
from collections.abc import Callable, Iterator
from typing import Any

from fa_lint.model import FLASH_ATTN, Include, InstallOptions, Parsed, ParseProblem, Requirement, normalize
from fa_lint.sources import _reqs
from fa_lint.sources._text import SPLITLINES, TextIndex, excerpt, line_starts

NAME = "requirements"
PATTERNS = (
    "*requirements*.txt",
    "*requirements*.in",
    "requirements/**/*.txt",
    "requirements*.lock",  # pip-compile, uv pip compile and rye write requirements syntax
    "constraints*.txt",
    "constraints*.in",
    "constraints/*.txt",
)
# pip-tools inputs have any name ("dev.in", "base.in"); so do autotools and setuptools templates
# (Makefile.in, config.h.in, MANIFEST.in). The head of the file tells them apart.
CANDIDATES = ("*.in",)

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
_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # what ends a line for str.splitlines()
_HASH_OPTION = re.compile(r"(?<!\S)--(?:h|requi)")  # --hash, --require-hashes, or a prefix of them
# -i/--index-url, --extra-index-url, -f/--find-links, or a prefix of them
_INDEX_OPTION = re.compile(r"(?<!\S)(?:-[if]|--(?:i|ex|f))")
_NAME = re.compile(r"\s*(?:(?:-e|--editable)\s+)?([A-Za-z0-9][A-Za-z0-9._-]*)")


@functools.cache
def _line_parser() -> Callable[[str], tuple[str, Any, list[str]]]:
    """pip-requirements-parser's ``get_line_parser()``, with its option parser built once.

    The library builds a new optparse parser for every line (about half of its parse time) so that
    append options never share a default list between lines; a deep copy of the defaults per line
    gives the same isolation.
    """
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


def _whole_install(text: str) -> tuple[bool, InstallOptions | None]:
    """What a file's options say of the whole install, wherever they stand: one --hash (or
    --require-hashes) puts it in pip's hash-checking mode, and index options (-i, --extra-index-url,
    -f) apply to every requirement.

    A pass of its own, before any requirement is read, so that requirements can be handed on one at a
    time; only lines with such an option (or a prefix optparse accepts for one) go through the parser.
    """
    wanted = [p for p in (_HASH_OPTION, _INDEX_OPTION) if p.search(text)]
    hashed = False
    urls: list[str] = []
    if wanted:
        import pip_requirements_parser as prp

        line_parser = _line_parser()
        for numbered in prp.preprocess(text):
            if isinstance(numbered, prp.CommentLine) or not any(p.search(numbered.line) for p in wanted):
                continue
            try:
                args, options, _ = line_parser(numbered.line)
            except Exception:  # the library raises bare Exceptions on bad lines; the main pass reports them
                continue
            hashed = hashed or bool(options.hashes or options.require_hashes)
            if not args:  # an option line: pip takes no index options on a requirement's line
                urls += filter(None, [options.index_url, *(options.extra_index_urls or [])])
                urls += options.find_links or []
            if hashed and _HASH_OPTION in wanted:
                wanted.remove(_HASH_OPTION)
                if not wanted:
                    break
    return hashed, InstallOptions(index_urls=tuple(urls)) if urls else None


def parse(path: str, text: str) -> Iterator[Parsed]:
    import pip_requirements_parser as prp

    index = TextIndex(path, text)
    starts = [*line_starts(text, SPLITLINES), len(text)]  # pip numbers lines with str.splitlines()
    hashed, options = _whole_install(text)
    for item in _items(text):  # one at a time: the library's records weigh ~2 KB a line
        number = item.requirement_line.line_number
        at = starts[min(number, len(starts)) - 1]  # where pip's line starts
        physical = text[at : starts[min(number, len(starts) - 1)]].rstrip(_BREAKS)
        if isinstance(item, prp.IncorrectRequirementLine):
            continue  # options pip ignores with a warning, not an error
        if isinstance(item, prp.InvalidRequirementLine):
            yield from _invalid(index, at, physical, item.requirement_line.line, item.error_message)
        elif isinstance(item, prp.OptionLine):
            where = index.location(at, at + len(physical))
            for target in item.options.get("requirements", []):
                yield Include(where, target)
            for target in item.options.get("constraints", []):
                yield Include(where, target, constraint=True)
        elif isinstance(item, prp.InstallRequirement):
            rec = _requirement(index, at, physical, item, hashed, options)
            if rec is not None:
                yield rec


def _span(line: str) -> tuple[int, int]:
    start = _LEAD.match(line)
    s = start.end() if start else 0
    tail = _TAIL.search(line, s)
    e = tail.start() if tail else len(line.rstrip())
    return s, e


def _requirement(
    index: TextIndex, at: int, physical: str, item: Any, hashed: bool, options: InstallOptions | None
) -> Requirement | None:
    name = normalize(item.req.name) if item.req else None
    if name is None and item.link is not None:
        name = _reqs.name_from_url(item.link.url)
    if name is None:
        return None  # a local project path such as "-e ."; nothing fa-lint can judge
    s, e = _span(physical)
    logical = item.requirement_line.line
    ls, le = _span(logical)
    raw = logical[ls:le]
    rec = _reqs.parse(raw, index.location(at + s, at + e), NAME, hash_checked=hashed, options=options)
    return rec if isinstance(rec, Requirement) else None


def _invalid(index: TextIndex, at: int, physical: str, logical: str, message: str) -> Iterator[Parsed]:
    s, e = _span(physical)
    where = index.location(at + s, at + e)
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
    yield ParseProblem(where, f"pip cannot parse {excerpt(logical)}: {first}", logical.strip())
