"""A .gitignore line compiled as git reads it (``dir.c`` ``add_pattern``, ``wildmatch.c``), for
``fa_lint.files.gitignore``.

A glob with at most one unbounded wildcard (or one per folder level, none of ``**``) becomes a regular
expression, which cannot backtrack past a linear cost; any other runs on a small automaton, step by
step, a constant number of states per character (git's own wildmatch is not exponential either).
"""

from __future__ import annotations

import re

from fa_lint._records import NamedTuple

# A compiled glob is a list of tokens: a regex for one character (a literal, ``?``, a bracket), or one
# of the unbounded wildcards below, whose regexes are in _WILD.
_STAR, _GLOBSTAR, _DIRS = "*", "**", "**/"
_WILD = {_STAR: "[^/]*", _GLOBSTAR: ".*", _DIRS: "(?:.*/)?"}
_CLASSES = {  # wildmatch's POSIX classes, in the C locale it uses
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\x0b\\x0c\\r ",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


class _Bad(Exception):
    """A glob wildmatch aborts on (an unclosed ``[``, a trailing ``\\``): it never matches."""


def _bracket(glob: str, i: int) -> tuple[str, int]:  # noqa: C901 - complexity 14: a scanner of one bracket expression as wildmatch.c reads it, a branch per kind of character (escape, range, class, literal) sharing the index; split, each part would pass the index back
    """The regex for the bracket expression that opens at ``glob[i]``, and the index after it; as
    wildmatch reads one: ``!`` or ``^`` negates, a first ``]`` is literal, ``\\`` escapes, ``a-z`` is a
    range, ``[:alpha:]`` a class; it never matches "/"."""
    n = len(glob)
    i += 1
    negated = i < n and glob[i] in "!^"
    i += negated
    items: list[str] = []
    prev: str | None = None  # the character a "-" makes a range from
    first = True
    while True:
        if i >= n:
            raise _Bad
        c = glob[i]
        if c == "]" and not first:
            break
        first = False
        if c == "\\":
            i += 1
            if i >= n:
                raise _Bad
            prev = glob[i]
            items.append(re.escape(prev))
        elif c == "-" and prev is not None and i + 1 < n and glob[i + 1] != "]":
            i += 1
            hi = glob[i]
            if hi == "\\":
                i += 1
                if i >= n:
                    raise _Bad
                hi = glob[i]
            if prev <= hi:  # else empty: git tests each end, and none lies between
                items.append(f"{re.escape(prev)}-{re.escape(hi)}")
            prev = None
        elif c == "[" and glob.startswith("[:", i):
            end = glob.find("]", i + 2)
            if end < 0:
                raise _Bad
            if glob[end - 1] != ":" or end - 1 < i + 2:  # no ":]": the "[" is a character
                prev = "["
                items.append(re.escape(prev))
            else:
                name = glob[i + 2 : end - 1]
                if name not in _CLASSES:
                    raise _Bad
                items.append(_CLASSES[name])
                prev = None
                i = end
        else:
            prev = c
            items.append(re.escape(c))
        i += 1
    body = "".join(items)
    return (f"[^/{body}]" if negated else f"(?!/)[{body}]"), i + 1


def _tokens(glob: str, pathname: bool = False) -> list[str]:
    """A glob as tokens (see _WILD); ``**`` is special only as a whole folder level, as in git. For a
    pattern with a "/" (``pathname``), git compares the text before the first wildcard character
    itself and hands wildmatch the rest: a ``**`` right after that text then counts as at the start
    (``a**/b`` matches ``ab`` and ``a/x/b``), and so it does here."""
    out: list[str] = []
    i, n = 0, len(glob)
    literal = next((k for k, c in enumerate(glob) if c in "*?[\\"), n) if pathname else -1
    while i < n:
        c = glob[i]
        if c == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            whole = j - i >= 2 and (i == 0 or glob[i - 1] == "/" or i == literal)
            if whole and j == n:
                out.append(_GLOBSTAR)
            elif whole and (glob.startswith("/", j) or glob.startswith("\\/", j)):
                out.append(_DIRS)  # "**/": no folder, or any number of them
                j += 1 if glob[j] == "/" else 2
            else:
                out.append(_STAR)
            i = j
            continue
        if c == "[":
            piece, i = _bracket(glob, i)
            out.append(piece)
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "\\":
            i += 1
            if i >= n:
                raise _Bad
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return out


def _linear(tokens: list[str]) -> bool:
    """Whether Python's ``re`` matches these tokens in linear time: one unbounded wildcard at most, or
    single stars each confined to a folder level of its own (a "/" between them, and no ``**``)."""
    wild = [t for t in tokens if t in _WILD]
    if len(wild) <= 1:
        return True
    if _GLOBSTAR in wild or _DIRS in wild:
        return False
    stars = 0
    for t in tokens:
        stars = 0 if t == "/" else stars + (t == _STAR)
        if stars > 1:
            return False
    return True


class _Automaton:
    """A glob as a nondeterministic automaton (Thompson's construction), run over the text a character
    at a time on a set of states: O(len(text) x len(glob)) whatever the glob. Each step taken is kept
    (a DFA built as it is used), so the many similar names of a walk cost a lookup a character."""

    _CACHE = 4096  # steps kept per glob

    def __init__(self, tokens: list[str]) -> None:
        self.tests: list[re.Pattern[str] | None] = []  # a character's test, or None for a choice
        self.next: list[tuple[int, ...]] = []  # where each node goes; -1 accepts
        nxt = -1
        for t in reversed(tokens):
            if t == _DIRS:  # ([^/]*/)*: a folder name and its "/", any number of times
                loop = self._node(None, (-2, nxt))
                level = self._node(None, (-2, self._node("/", (loop,))))
                self.next[level] = (self._node("[^/]", (level,)), self.next[level][1])
                self.next[loop] = (level, nxt)
                nxt = loop
            elif t in _WILD:
                loop = self._node(None, (-2, nxt))
                self.next[loop] = (self._node("." if t == _GLOBSTAR else "[^/]", (loop,)), nxt)
                nxt = loop
            else:
                nxt = self._node(t, (nxt,))
        self.start = self._closure([nxt])
        self.steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def _node(self, test: str | None, nxt: tuple[int, ...]) -> int:
        self.tests.append(re.compile(test, re.S) if test is not None else None)
        self.next.append(nxt)
        return len(self.tests) - 1

    def _closure(self, states: list[int]) -> frozenset[int]:
        seen: set[int] = set()
        while states:
            s = states.pop()
            if s not in seen:
                seen.add(s)
                if s >= 0 and self.tests[s] is None:
                    states.extend(self.next[s])
        return frozenset(seen)

    def fullmatch(self, text: str) -> bool:
        states = self.start
        for c in text:
            found = self.steps.get((states, c))
            if found is None:
                moved: list[int] = []
                for s in states:
                    test = self.tests[s] if s >= 0 else None
                    if test is not None and test.fullmatch(c):
                        moved += self.next[s]
                found = self._closure(moved)
                if len(self.steps) < self._CACHE:
                    self.steps[(states, c)] = found
            if not found:
                return False
            states = found
        return -1 in states


class _Regex:
    """A glob's regex, compiled when a path is first tried against it: a project's .gitignore has
    dozens of lines, most never tried (the index of needles picks a few), and compiling them all
    cost more than the rest of reading it."""

    __slots__ = ("_compiled", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: re.Pattern[str] | None = None

    def fullmatch(self, text: str) -> re.Match[str] | None:
        if self._compiled is None:
            self._compiled = re.compile(self.source, re.S)
        return self._compiled.fullmatch(text)


class Pattern(NamedTuple):
    """One .gitignore line, compiled."""

    match: _Regex | _Automaton | None  # None: a glob git never matches
    literal: str | None  # the name itself, for a basename pattern with no wildcard
    negated: bool
    dir_only: bool
    basename: bool  # no "/" but a trailing one: matched against the last component at any depth
    needle: str = ""  # the longest stretch of plain characters every text it matches holds

    def matches(self, rel: str, name: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        text = name if self.basename else rel
        if self.literal is not None:
            return text == self.literal
        return self.match is not None and bool(self.match.fullmatch(text))


def _trim(line: str) -> str:
    """git's trim_trailing_spaces: trailing blanks go, but for one escaped with a backslash."""
    end = len(line)
    while end and line[end - 1] == " ":
        backslashes = len(line[: end - 1]) - len(line[: end - 1].rstrip("\\"))
        if backslashes % 2:
            break
        end -= 1
    return line[:end]


def compile_line(line: str) -> Pattern | None:
    """A .gitignore line as git reads it (``dir.c`` ``add_pattern``), or None for a blank or comment."""
    line = line[:-1] if line.endswith("\r") else line
    if not line or line.startswith("#"):
        return None
    line = _trim(line)
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]
    if not line:
        return None
    basename = "/" not in line
    if not basename and line.startswith("/"):
        line = line[1:]
    try:
        tokens = _tokens(line, pathname=not basename)
    except _Bad:
        return Pattern(None, None, negated, dir_only, basename)
    if all(t not in _WILD and not t.startswith(("[", "(")) for t in tokens):  # a name: compared
        literal = "".join(re.sub(r"\\(.)", r"\1", t, flags=re.S) for t in tokens)
        return Pattern(None, literal, negated, dir_only, basename)
    if _linear(tokens):
        regex: _Regex | _Automaton = _Regex("".join(_WILD.get(t, t) for t in tokens))
    else:
        regex = _Automaton(tokens)
    return Pattern(regex, None, negated, dir_only, basename, _needle(tokens))


def _needle(tokens: list[str]) -> str:
    """The longest run of plain characters in a glob's tokens: text the glob matches holds it."""
    runs, run = [""], ""
    for t in tokens:
        if t in _WILD or t.startswith(("[", "(")):  # a wildcard, ``?`` or a bracket
            runs.append(run)
            run = ""
        else:
            run += re.sub(r"\\(.)", r"\1", t, flags=re.S)
    return max([*runs, run], key=len)
