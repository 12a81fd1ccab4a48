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
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from fa_lint.model import FLASH_ATTN, Group, Include, Parsed, Requirement, normalize
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import Scope, State
from fa_lint.syntax import ini, pep508
from fa_lint.syntax.text import TextIndex

NAME = "tox"
BASE = "testenv"
INHERITED = ("install_command", "commands_pre", "commands", "commands_post")

_CONDITION = re.compile(r"^(?P<cond>[!\w.{},-]+):\s+(?P<dep>\S.*)$")
_REFERENCE = re.compile(r"^\{\[(?P<section>[^\]]+)\]deps\}$")
_INCLUDE = re.compile(r"^(-r|--requirement|-c|--constraint)\s*=?\s*(\S+)$")
_EDITABLE = re.compile(r"^(?:-e|--editable)\s*=?\s*")
Lines = dict[str, list[tuple[str | None, str | None]]]  # section -> (factor condition, referenced section)
_SUBSTITUTION = re.compile(r"\{(?:env:(?P<var>\w+)(?::(?P<default>[^}]*))?|(?P<other>[^{}]*))\}")


def braces(text: str) -> list[str]:
    """tox's generative names: ``py{310,311}-gpu`` is py310-gpu and py311-gpu."""
    parts = re.split(r"\{([^{}]*)\}", text)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(c).strip() for c in itertools.product(*choices)]


def applies(condition: str, env: str) -> bool:
    """Whether a factor condition selects the environment ``env`` (``py311-gpu``)."""
    factors = set(env.split("-"))
    for alternative in (a for expanded in braces(condition) for a in expanded.split(",")):
        wanted = [f for f in alternative.split("-") if f]
        if wanted and all((f[1:] not in factors) if f.startswith("!") else (f in factors) for f in wanted):
            return True
    return False


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


def parse(path: str, text: str) -> Iterator[Parsed]:
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
    for section, key, line, col, value in ini.values(text):
        if section == "tox" and key == "envlist":
            envlist += [n for item in re.split(r",(?![^{]*\})", value) for n in braces(item.strip()) if n]
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
        lines[section].append((condition, ref["section"].strip() if ref else None))
        if ref:
            continue
        start = index.offset(line, col) + (cond.start("dep") if cond else 0)
        scope = section + (f"[{condition}]" if condition else "")
        yield from _dep(index, start, dep, scope)
    for (section, key), found in commands.items():
        for command in found:
            yield from _command(index, section, key, command)
    conditions = {where: [c.condition for c in found] for where, found in commands.items()}
    yield from _groups(index, envlist, sections, lines, conditions)


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


def _groups(
    index: TextIndex,
    envlist: list[str],
    sections: dict[str, int],
    lines: Lines,
    commands: dict[tuple[str, str], list[str | None]],
) -> Iterator[Group]:
    named = {n: s for s in sections if s != BASE for n in braces(s.split(":", 1)[1])}
    envs = list(dict.fromkeys([*envlist, *named])) or [BASE]
    seen: set[tuple[str, ...]] = set()
    for env in envs:
        section = named.get(env, BASE)
        found = list(_scopes(section if section in lines else BASE, env, lines, set()))
        for key in INHERITED:
            owner = next((s for s in (section, BASE) if (s, key) in commands), None)
            for cond in commands.get((owner or "", key), []):
                if cond is None or applies(cond, env):
                    found.append(f"{owner} {key}" + (f"[{cond}]" if cond else ""))
        scopes = tuple(dict.fromkeys(found))
        if scopes in seen:
            continue  # py310-gpu and py311-gpu install the same lines: one environment is enough
        seen.add(scopes)
        line = sections.get(section, 1)
        yield Group(index.whole_line(line), f"testenv:{env}" if env != BASE else BASE, scopes)


def _scopes(section: str, env: str, lines: Lines, seen: set[str]) -> Iterator[str]:
    if section in seen:
        return
    seen.add(section)
    yield section
    for condition, ref in lines.get(section, []):
        if condition is not None and not applies(condition, env):
            continue
        if ref is not None:
            yield from _scopes(ref, env, lines, seen)
        elif condition is not None:
            yield f"{section}[{condition}]"
