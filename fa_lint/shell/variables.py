"""Shell variables as the walk knows them: each name's possible values, and their expansion in words.

A variable set in one branch of an ``if`` has the values of every branch (and may be unset); a word
that references it expands to each text it can become, up to a bound (``MAX_VALUES``). What the
substitutions of one file add up to is bounded too (``Budget``): ``V="$V$V"`` doubles a value per line.
"""

from __future__ import annotations

import itertools
import posixpath
import re
from collections.abc import Mapping

from fa_lint._records import NamedTuple
from fa_lint.shell.parse import Clock

# A variable's possible values after the walk so far; None stands for "may be unset".
Values = tuple[str | None, ...]
MAX_VALUES = 16  # alternatives kept per variable and per expanded word
# Characters substitutions may add in one file, all expansions together: as much as the largest file
# fa-lint reads (read.MAX_BYTES), so that no 357-byte script of doublings takes more time or memory
# than a file at the size limit does.
MAX_EXPANDED = 16 * 1024 * 1024


class Budget:
    """What is left of one file's ``MAX_EXPANDED``; ``crossed`` once an expansion would go past it,
    from when on every substitution is refused (the word is left unresolved)."""

    __slots__ = ("clock", "crossed", "left", "reported")

    def __init__(self, chars: int = MAX_EXPANDED) -> None:
        self.left = chars
        self.crossed = False
        self.reported = False  # the file's one diagnostic for it is written
        self.clock = Clock()  # and the file's parses' seconds of error recovery (shell.parse)

    def take(self, chars: int) -> bool:
        if self.crossed or chars > self.left:
            self.crossed = True
            return False
        self.left -= chars
        return True

    def message(self) -> str:
        return f"variables expand past {MAX_EXPANDED:,} characters in this file; not followed from here on"


class Scope:
    """Shell variables, layered: a branch writes its own layer over what was set before it."""

    def __init__(
        self,
        parent: Scope | None = None,
        values: Mapping[str, str] | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.parent = parent
        self.local: dict[str, Values] = {k: (v,) for k, v in (values or {}).items()}
        self._budget = budget if budget is not None or parent is not None else Budget()

    @property
    def budget(self) -> Budget:
        """The file's budget, held by the outermost scope (a reader may hand it another: ``adopt``)."""
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        assert scope._budget is not None
        return scope._budget

    def adopt(self, budget: Budget) -> None:
        """Count this scope's expansions, and its children's, against ``budget`` (the file's)."""
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        scope._budget = budget

    def get(self, name: str) -> Values | None:
        scope: Scope | None = self
        while scope is not None:
            found = scope.local.get(name)
            if found is not None:
                return found
            scope = scope.parent
        return None

    def holds_any(self, names: frozenset[str]) -> bool:
        """Whether any of ``names`` is set here or in a scope below."""
        scope: Scope | None = self
        while scope is not None:
            # a keys view against a set iterates the shorter of the two; frozenset.isdisjoint(dict)
            # would iterate the whole dict, every variable a stage has set, at every command
            if not scope.local.keys().isdisjoint(names):
                return True
            scope = scope.parent
        return False

    def set(self, name: str, values: Values) -> None:
        self.local[name] = values

    def child(self) -> Scope:
        return Scope(self)


# The repeats inside braces and parentheses are bounded (_INSIDE characters): an unbounded one that
# finds no closing brace reads to the end of the text, from every "${" of it, which is quadratic in a
# word of many. A longer default or substitution is left as written, and so unresolved.
_INSIDE = 4096
_VAR = re.compile(
    r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*|[0-9@*])(?:(:?[-=])([^}]{0,"
    + str(_INSIDE)
    + r"}))?\}|([A-Za-z_][A-Za-z0-9_]*|[0-9@*])|\(([A-Za-z_][A-Za-z0-9_]*)\))"
)
# what no value can replace: a CI expression, a command substitution, ${X%%.*} and the like
_OPAQUE = re.compile(r"\$\{\{.{0,N}?\}\}|\$\(.{0,N}?\)|`[^`]*`|\$\{[^}]{0,N}\}".replace("N", str(_INSIDE)))


# GitHub's env context in a run: script (names compare case-insensitively there; here as written)
_ENV_CONTEXT = re.compile(
    r"\$\{\{[ \t]*env(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[[ \t]*'([A-Za-z_][A-Za-z0-9_]*)'[ \t]*\])[ \t]*\}\}"
)


def _env_reference(m: re.Match[str]) -> str:
    return "${" + (m.group(1) or m.group(2)) + "}"


class Expanded(NamedTuple):
    texts: tuple[str, ...]  # every text the word can become (one, unless a branch set it)
    unresolved: str | None  # the first reference with no value

    @property
    def text(self) -> str:
        return self.texts[0]


def expand(text: str, scope: Scope, make: bool = False) -> Expanded:  # noqa: C901 - complexity 11, to split or justify (issue 45)
    """Substitute ``$X``, ``${X}``, ``${X:-default}`` (and ``$(X)`` in Makefiles) from known values."""
    if make:
        text = text.replace("$$", "$")  # make's escape for the shell's own $
    if "$" not in text and "`" not in text:
        return Expanded((text,), None)
    if "${{" in text:  # a workflow's ${{ env.NAME }}: GitHub puts the env value there before the shell runs
        text = _ENV_CONTEXT.sub(_env_reference, text)
    missing: list[str] = []
    pieces: list[tuple[str, ...]] = []
    substituted: dict[int, str] = {}  # the pieces that are values, not the word's own text
    pos = 0
    for m in _VAR.finditer(text):
        pieces.append((text[pos : m.start()],))
        pos = m.end()
        name = m.group(1) or m.group(4) or m.group(5)
        if m.group(5) and not make:
            missing.append(m.group())  # $(command) substitution: unknowable
            pieces.append((m.group(),))
            continue
        values = scope.get(name)
        default = m.group(3) if m.group(2) is not None else None
        options = [
            default if v is None or (v == "" and (m.group(2) or "").startswith(":")) else v
            for v in values or (None,)
        ]
        if None in options:
            missing.append(m.group())
            pieces.append((m.group(),))
        else:
            substituted[len(pieces)] = m.group()
            pieces.append(tuple(dict.fromkeys(o for o in options if o is not None)))
    pieces.append((text[pos:],))
    combos = list(itertools.islice(itertools.product(*pieces), MAX_VALUES))
    if substituted:
        added = sum(len(combo[i]) for combo in combos for i in substituted)
        if not scope.budget.take(added):  # counted before any of it is joined
            return Expanded((text,), next(iter(substituted.values())))
    texts = tuple("".join(p) for p in combos)
    if not missing:
        left = _OPAQUE.search(texts[0]) or (None if make else _VAR.search(texts[0]))
        if left:
            missing.append(left.group())  # only running it tells, or a value that was itself unknown
    return Expanded(texts, missing[0] if missing else None)


class State:
    """What a command sees: the variables in force and the working directory."""

    __slots__ = ("cwd", "dirs", "scope")

    def __init__(self, scope: Scope, cwd: str = ".", dirs: list[str] | None = None) -> None:
        self.scope = scope
        self.cwd = cwd
        self.dirs = [] if dirs is None else dirs  # the pushd stack

    def folder(self, text: str, make: bool = False) -> str:
        """The folder a word names, from the working directory; an unknown one stays as written, so
        ``cd $DIR`` still meets ``git clone URL $DIR``."""
        exp = expand(text, self.scope, make)
        path = text if exp.unresolved else exp.text
        return posixpath.normpath(posixpath.join(self.cwd, path))

    def cd(self, head: str, args: list[str], make: bool = False) -> None:
        """``cd``, ``pushd`` or ``popd`` with these arguments."""
        if head == "popd":
            self.cwd = self.dirs.pop() if self.dirs else self.cwd
            return
        if head == "pushd":
            self.dirs.append(self.cwd)
        target = next((a for a in args if not a.startswith("-") or a == "-"), None)
        if target is None or target == "-":
            self.cwd = "~" if target is None else self.cwd
            return
        exp = expand(target, self.scope, make)
        # an unknown folder stays as written, so `cd $DIR` still meets `git clone URL $DIR`
        path = target if exp.unresolved or len(exp.texts) > 1 else exp.text
        self.cwd = posixpath.normpath(posixpath.join(self.cwd, path))

    def fork(self) -> State:
        return State(self.scope.child(), self.cwd, list(self.dirs))

    def merge(self, branches: list[State], exhaustive: bool) -> None:
        """After a branch point: each variable a branch set has the values any branch left it."""
        names = dict.fromkeys(n for b in branches for n in b.scope.local)
        for name in names:
            before = self.scope.get(name) or (None,)
            found: list[str | None] = []
            for b in branches:
                found += b.scope.local.get(name, before)
            if not exhaustive:
                found += before
            self.scope.set(name, tuple(dict.fromkeys(found))[:MAX_VALUES])
        cwds = {b.cwd for b in branches}
        if exhaustive and len(cwds) == 1:
            self.cwd = cwds.pop()


# How deep a chain of variables naming variables is followed (A names B names C ...): make and GitLab
# follow any depth; past this the reference is left as written (unresolved, so FAL009), and the walk
# never recurses deeper than this whatever a file chains.
MAX_DEPTH = 64
_KEPT = "\0"  # make's "$$" while a value is expanded: the shell's "$", for the recipe's own expansion


class Definitions:
    """Variables whose values name others (``FA_SPEC = flash-attn==$(FA_VERSION)``), expanded all the
    way down as make (a recursive ``=`` variable, when used), GitLab (a variable inside a variable)
    and just expand them before any shell runs; a shell's own assignments are expanded when made,
    one level (``expand``).

    Each name's expansion is kept until a definition it read changes (make's ``:=`` expands at its
    line, with the values of then). A cycle, a chain deeper than ``MAX_DEPTH`` or the file's
    ``Budget`` spent leaves the reference as written, so the word using it is unresolved. Each name
    expanded costs one character of the budget besides what it adds, so that no file of empty values
    naming each other twice (``B = $(A)$(A)``, ``C = $(B)$(B)``...) walks longer than the budget allows.
    """

    def __init__(self, budget: Budget, make: bool = False) -> None:
        self.raw: dict[str, str] = {}
        self.budget = budget
        self.make = make
        self._memo: dict[str, str] = {}
        self._read: set[str] = set()  # names the kept expansions looked up, set or not
        self._open: set[str] = set()  # names being expanded: one met again is a cycle
        self._literal: set[str] = set()

    def define(self, name: str, value: str, literal: bool = False) -> None:
        """Set ``name``; a ``literal`` value is used as written (GitLab's ``expand: false``)."""
        if name in self._read:
            self._memo.clear()
            self._read.clear()
        self.raw[name] = value
        if literal:
            self._literal.add(name)
        else:
            self._literal.discard(name)

    def literal(self, name: str) -> bool:
        """Whether ``name``'s value is used as written (its last ``define`` was ``literal``)."""
        return name in self._literal

    def expand(self, text: str) -> str:
        """``text`` with every reference to a defined name expanded (make's ``$$`` kept)."""
        return self._expand(text, 0)

    def values(self) -> dict[str, str]:
        """Every name's value, expanded; one that cannot be (a cycle) partly, its reference kept. A value
        that expands to nothing is empty (``B = $(A)`` after ``A =``), as make makes it."""
        return {
            name: raw if (value := self._value(name, 0)) is None else value for name, raw in self.raw.items()
        }

    def _value(self, name: str, depth: int) -> str | None:
        self._read.add(name)
        if name in self._memo or name in self._literal:
            return self._memo.get(name, self.raw.get(name))
        if name not in self.raw or name in self._open or depth >= MAX_DEPTH or not self.budget.take(1):
            return None
        self._open.add(name)
        value = self._expand(self.raw[name], depth + 1)
        self._open.discard(name)
        self._memo[name] = value
        return value

    def _expand(self, text: str, depth: int) -> str:
        if "$" not in text:
            return text
        if self.make:
            text = text.replace("$$", _KEPT)
        scope = Scope(budget=self.budget)
        for m in _VAR.finditer(text):
            name = m.group(1) or m.group(4) or m.group(5)
            if name in self.raw and name not in scope.local:
                value = self._value(name, depth)
                if value is not None:
                    scope.local[name] = (value,)
        out = expand(text, scope, self.make).text
        return out.replace(_KEPT, "$$") if self.make else out
