"""tox.ini: the ``deps`` of ``[testenv]`` and ``[testenv:NAME]``, one environment per testenv.

A testenv without ``deps`` of its own takes ``[testenv]``'s, and likewise for ``install_command``
(whose ``-c FILE`` constrains every install) and ``commands_pre``/``commands``/``commands_post``
(whose ``pip install ...`` lines are read as a shell script's are). A line ``gpu: flash-attn==2.4.2``
(factor conditions: ``a,b`` either, ``a-b`` both, ``!a`` not) belongs to the testenvs whose name has
those factors; ``{[testenv]deps}`` brings in another section's lines; ``{toxinidir}`` is the file's
folder, ``{env:NAME:default}`` its default. Environment names come from ``envlist`` (with its
``py{310,311}-{cpu,gpu}`` braces) and the ``[testenv:NAME]`` sections.

The factor expansion and conditions are written here, not taken from tox: tox does them inside its
configuration loader (tox.config.loader.ini.factor), which is not a public API, changes between majors
(tox 3 and 4 differ), and importing tox would bring its plugin system and virtualenv into a linter that
only reads the file. The rules are tox's documented ones ("Generative environment lists", "Factors and
factor-conditional settings"), small enough to state in the two functions below.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from fa_lint.model import FLASH_ATTN, Group, Include, Location, Parsed, ParseProblem, Requirement, normalize
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import Scope, State
from fa_lint.syntax import ini, pep508
from fa_lint.syntax.text import TextIndex, excerpt

NAME = "tox"
BASE = "testenv"
INHERITED = ("install_command", "commands_pre", "commands", "commands_post")

_CONDITION = re.compile(r"^(?P<cond>[!\w.{},-]+):\s+(?P<dep>\S.*)$")
_REFERENCE = re.compile(r"^\{\[(?P<section>[^\]]+)\]deps\}$")
_INCLUDE = re.compile(r"^(-r|--requirement|-c|--constraint)\s*=?\s*(\S+)$")
_EDITABLE = re.compile(r"^(?:-e|--editable)\s*=?\s*")
Lines = dict[
    str, list[tuple[str | None, str | None, int]]
]  # section -> (factor condition, referenced section, line)
_SUBSTITUTION = re.compile(r"\{(?:env:(?P<var>\w+)(?::(?P<default>[^}]*))?|(?P<other>[^{}]*))\}")


MAX_NAMES = 10_000  # environment names tox's braces make in one file (envlist and section names together)
MAX_ALTERNATIVES = 100_000  # factor alternatives the braces of one file's conditions make, all together
# Scopes the environments of one file take in, all together. A chain of sections each bringing in the one
# before ({[testenv:x]deps}) gives each environment its whole chain: n^2/2 scopes. Past this, an
# environment's {[...]deps} lines are not followed (as requirements files' MAX_CLOSURES does for -r).
MAX_SCOPES = 250_000


class _Budget:
    """What one file may still expand; ``crossed`` is set at the first expansion past it, which is
    cut short there (tox makes the whole product: ``{a,b}`` 26 times over is 67 million names)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = limit
        self.crossed = 0  # how many the expansion that crossed it would have made

    def take(self, wanted: int) -> int:
        granted = min(wanted, self.left)
        self.left -= granted
        if granted < wanted and not self.crossed:
            self.crossed = wanted
        return granted


def braces(text: str, budget: _Budget | None = None) -> list[str]:
    """tox's generative names: ``py{310,311}-gpu`` is py310-gpu and py311-gpu (at most what ``budget``
    has left: tox's own ``expand_factors`` makes the whole product, which grows exponentially)."""
    choices = _choices(text)
    wanted = math.prod(len(c) for c in choices)
    count = wanted if budget is None else budget.take(wanted)
    return ["".join(c).strip() for c in itertools.islice(itertools.product(*choices), count)]


def _choices(text: str) -> list[list[str]]:
    parts = re.split(r"\{([^{}]*)\}", text)
    return [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]


def _split_list(value: str) -> list[str]:
    """An ``envlist`` split at the commas outside braces, in one pass (a look-ahead for the closing
    brace from every comma would read the rest of the line again at each)."""
    items, depth, start = [], 0, 0
    for m in re.finditer(r"[{},]", value):
        c = m.group()
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif depth == 0:
            items.append(value[start : m.start()])
            start = m.end()
    return [*items, value[start:]]


Alternative = tuple[frozenset[str], frozenset[str]]  # the factors an environment must have, and must not


def _alternatives(condition: str, budget: _Budget | None = None) -> list[Alternative] | None:
    """A factor condition as its alternatives (``a,b`` either, ``a-b`` both, ``!a`` not, braces
    expanded); None when the braces make more than ``budget`` has left."""
    found: list[Alternative] = []
    for part in _split_list(condition):
        charged = budget if "{" in part else None  # plain text makes as many as it has commas
        expanded = braces(part, charged)
        if charged is not None and len(expanded) < math.prod(len(c) for c in _choices(part)):
            return None  # cut short by the budget
        for alternative in (a for e in expanded for a in e.split(",")):
            wanted = [f for f in alternative.split("-") if f]
            if wanted:
                found.append(
                    (
                        frozenset(f for f in wanted if not f.startswith("!")),
                        frozenset(f[1:] for f in wanted if f[:1] == "!"),
                    )
                )
    return found


def applies(condition: str, env: str) -> bool:
    """Whether a factor condition selects the environment ``env`` (``py311-gpu``)."""
    factors = set(env.split("-"))
    return any(pos <= factors and factors.isdisjoint(neg) for pos, neg in _alternatives(condition) or [])


class _Selector:
    """Which factor conditions select each environment, found from an index of the environments by
    factor: an alternative with a factor is tested only against the environments that have its
    rarest one, so n environments and n lines ``eI: ...`` cost n tests, not n^2. An alternative of
    negations alone (``!gpu``) is tested against every environment."""

    def __init__(self, envs: list[str]) -> None:
        self._factors = {env: frozenset(env.split("-")) for env in envs}
        self._having: dict[str, list[str]] = defaultdict(list)
        for env, factors in self._factors.items():
            for factor in factors:
                self._having[factor].append(env)
        self.selects: dict[str, set[str]] = defaultdict(set)  # environment -> conditions

    def add(self, condition: str, alternatives: list[Alternative]) -> None:
        for pos, neg in alternatives:
            candidates = min((self._having.get(f, []) for f in pos), key=len) if pos else self._factors
            for env in candidates:
                factors = self._factors[env]
                if pos <= factors and factors.isdisjoint(neg):
                    self.selects[env].add(condition)


def _substitute(text: str) -> tuple[str, str | None]:
    """The line with tox's substitutions made, and the first one only the run knows (or None)."""
    unresolved: list[str] = []

    def sub(m: re.Match[str]) -> str:
        if m["var"] is not None:
            if m["default"] is not None:
                return m["default"]
            unresolved.append(m.group())
            return m.group()
        other = m["other"]
        if other == "toxinidir":
            return "."
        if other in ("posargs", ""):
            return ""
        unresolved.append(m.group())
        return m.group()

    out = _SUBSTITUTION.sub(sub, text)
    return out, (unresolved[0] if unresolved else None)


def parse(path: str, text: str) -> Iterator[Parsed]:  # noqa: C901 - complexity 12: one pass over tox.ini's values, a branch per key tox reads (envlist, inherited commands, deps and their references), filling the tables _groups reads
    index = TextIndex(path, text)
    problem = ini.check(index, "tox.ini")
    if problem is not None:
        yield problem
        return
    envlist: list[str] = []
    sections: dict[str, int] = {}  # testenv section -> header line
    lines: Lines = defaultdict(list)
    commands: dict[tuple[str, str], list[_Command]] = defaultdict(list)  # (section, inherited key)
    for m in re.finditer(r"^\[(testenv(?::[^\]]+)?)\]", text, re.M):
        sections[m.group(1).strip()] = index.position(m.start())[0]
    names = _Budget(MAX_NAMES)
    for section, key, line, col, value in ini.values(text):
        if section == "tox" and key == "envlist":
            crossed = names.crossed
            envlist += [n for item in _split_list(value) for n in braces(item.strip(), names) if n]
            if names.crossed and not crossed:
                yield _not_expanded(index.whole_line(line), value, names, "names")
        if not (section == BASE or section.startswith(f"{BASE}:")):
            continue
        if key in INHERITED:
            _add_line(commands[section, key], index.offset(line, col), value, key != "install_command")
        if key != "deps":
            continue
        item = re.split(r"(?<!\s)\s+#", value, maxsplit=1)[0].strip()
        cond = _CONDITION.match(item)
        condition = cond["cond"] if cond else None
        dep = cond["dep"] if cond else item
        ref = _REFERENCE.match(dep)
        lines[section].append((condition, ref["section"].strip() if ref else None, line))
        if ref:
            continue
        start = index.offset(line, col) + (cond.start("dep") if cond else 0)
        scope = section + (f"[{condition}]" if condition else "")
        yield from _dep(index, start, dep, scope)
    for (section, key), found in commands.items():
        for command in found:
            yield from _command(index, section, key, command)
    yield from _groups(index, envlist, sections, lines, commands, names)


@dataclass
class _Command:
    """One command of a ``commands*`` value: its factor condition and text, continuations included."""

    condition: str | None
    start: int
    end: int
    open: bool  # ends with a backslash: the next line continues it


def _add_line(found: list[_Command], start: int, value: str, conditional: bool) -> None:
    end = start + len(value)
    if found and found[-1].open:
        found[-1].end = end
    else:
        cond = _CONDITION.match(value) if conditional else None
        begin = start + (cond.start("dep") if cond else 0)
        found.append(_Command(cond["cond"] if cond else None, begin, end, False))
    found[-1].open = value.endswith("\\")


def _command(index: TextIndex, section: str, key: str, command: _Command) -> Iterator[Parsed]:
    """Installs of a ``commands*`` line (tox runs each as a command); ``install_command``'s ``-c``."""
    scope = f"{section} {key}" + (f"[{command.condition}]" if command.condition else "")
    if key == "install_command":
        text = index.text[command.start : command.end]
        for m in re.finditer(r"(?:^|\s)(?:-c|--constraint)(?:=|\s+)(\S+)", text):
            target, _ = _substitute(m.group(1))
            where = index.location(command.start + m.start(1), command.start + m.end(1))
            yield Include(where, target, constraint=True, scope=scope)
        return
    scanner = Scanner(index, NAME, scope=scope)
    scanner.run(command.start, command.end, State(Scope()))
    yield from scanner.finish()


def _dep(index: TextIndex, start: int, dep: str, scope: str) -> Iterator[Parsed]:
    where = index.location(start, start + len(dep))
    text, unresolved = _substitute(dep)
    inc = _INCLUDE.match(text)
    if inc:
        yield Include(where, inc.group(2), constraint=inc.group(1) in ("-c", "--constraint"), scope=scope)
        return
    editable = _EDITABLE.match(text)
    if editable:
        text = text[editable.end() :]
    elif text.startswith("-"):
        return  # an install option (--pre, -i URL...): nothing to judge
    if not text or (text.startswith((".", "/")) and not pep508.looks_like_archive(text)):
        return  # the project itself, or a local folder
    if unresolved:
        name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", text)
        if name and normalize(name.group()) == FLASH_ATTN and not pep508.looks_like_url(text):
            yield Requirement(FLASH_ATTN, dep, where, NAME, unresolved=unresolved, scope=scope)
        return
    yield pep508.parse(text, where, NAME, scope=scope)


def _groups(  # noqa: C901 - complexity 17: tox's factor selection in one place (expanding each condition once, then each environment's chosen lines), as tox itself does it; split, the tables would travel through every part
    index: TextIndex,
    envlist: list[str],
    sections: dict[str, int],
    lines: Lines,
    commands: dict[tuple[str, str], list[_Command]],
    names: _Budget,
) -> Iterator[Parsed]:
    named: dict[str, str] = {}
    for s, header in sections.items():
        if s == BASE:
            continue
        crossed = names.crossed
        named.update((n, s) for n in braces(s.split(":", 1)[1], names))
        if names.crossed and not crossed:
            yield _not_expanded(index.whole_line(header), f"[{s}]", names, "names")
    envs = list(dict.fromkeys([*envlist, *named])) or [BASE]
    selector = _Selector(envs)
    # every conditional item of the file: deps lines (section, i) and commands ((section, key), i)
    where: dict[str, list[tuple[str | tuple[str, str], int]]] = defaultdict(list)  # condition -> places
    alternatives = _Budget(MAX_ALTERNATIVES)
    Place = str | tuple[str, str]
    conditions: list[tuple[Place, int, str | None, int]] = [
        (section, i, c, line) for section, found in lines.items() for i, (c, _, line) in enumerate(found)
    ]
    conditions += [
        (owner, i, c.condition, index.position(c.start)[0])
        for owner, found in commands.items()
        for i, c in enumerate(found)
    ]
    for place, i, condition, line in conditions:
        if condition is None:
            continue
        if condition not in where:
            crossed = alternatives.crossed
            expanded = _alternatives(condition, alternatives)
            if expanded is not None:
                selector.add(condition, expanded)
            elif not crossed:
                yield _not_expanded(index.whole_line(line), condition, alternatives, "alternatives")
        where[condition].append((place, i))
    # the lines that hold for every environment: unconditional {[other]deps} lines, unconditional commands
    fixed = {
        s: [i for i, (c, ref, _) in enumerate(found) if c is None and ref is not None]
        for s, found in lines.items()
    }
    fixed_commands = {
        o: [i for i, c in enumerate(found) if c.condition is None] for o, found in commands.items()
    }
    seen: set[tuple[str, ...]] = set()
    taken, told = 0, False
    for env in envs:
        section = named.get(env, BASE)
        chosen: dict[str | tuple[str, str], list[int]] = defaultdict(list)
        for condition in selector.selects.get(env, ()):
            for place, i in where[condition]:
                chosen[place].append(i)
        follow = taken < MAX_SCOPES
        found = list(_scopes(section if section in lines else BASE, lines, fixed, chosen, follow))
        if not follow and not told:  # said once, at the first environment left without its references
            told = True
            yield ParseProblem(
                index.whole_line(sections.get(section, 1)),
                f"tox environments not all composed: past {MAX_SCOPES:,} scopes (sections and conditional"
                " lines) taken in by this file's environments, the {[...]deps} lines of the rest are"
                " not followed",
            )
        for key in INHERITED:
            owner = next((s for s in (section, BASE) if (s, key) in commands), None)
            if owner is None:
                continue
            cmds = commands[owner, key]
            for j in _in_order(fixed_commands[owner, key], chosen.get((owner, key), [])):
                cond = cmds[j].condition
                found.append(f"{owner} {key}" + (f"[{cond}]" if cond else ""))
        scopes = tuple(dict.fromkeys(found))
        taken += len(scopes)
        if scopes in seen:
            continue  # py310-gpu and py311-gpu install the same lines: one environment is enough
        seen.add(scopes)
        yield Group(
            index.whole_line(sections.get(section, 1)), f"testenv:{env}" if env != BASE else BASE, scopes
        )


def _not_expanded(where: Location, text: str, budget: _Budget, what: str) -> ParseProblem:
    return ParseProblem(
        where,
        f"tox braces not all expanded: {excerpt(text)} makes {budget.crossed:,} {what}, past the"
        f" {budget.limit:,} fa-lint expands in a file; the rest are not checked",
    )


def _in_order(fixed: list[int], chosen: list[int]) -> list[int]:
    """The places of the lines that hold for every environment, with those chosen for one, in order."""
    return sorted([*fixed, *chosen]) if chosen else fixed


def _scopes(
    section: str,
    lines: Lines,
    fixed: dict[str, list[int]],
    chosen: dict[str | tuple[str, str], list[int]],
    follow: bool = True,
) -> Iterator[str]:
    """The scopes an environment installs from ``section``: its own, those of the conditional lines
    ``chosen`` for it, and what the ``{[other]deps}`` lines it reaches bring in (a stack of its own)."""
    seen = {section}
    pending = [(section, iter(_in_order(fixed.get(section, []), chosen.get(section, []))))]
    yield section
    while pending:
        current, places = pending[-1]
        for i in places:
            condition, ref, _ = lines[current][i]
            if ref is None:
                yield f"{current}[{condition}]"
            elif follow and ref not in seen:
                seen.add(ref)
                yield ref
                pending.append((ref, iter(_in_order(fixed.get(ref, []), chosen.get(ref, [])))))
                break
        else:
            pending.pop()
