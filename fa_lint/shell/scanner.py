"""What the commands of a script install: records from the commands the walk hands over.

``fa_lint.shell.walk`` walks the script and hands over each command it runs, certain or possible, with
the variables and working directory in force. Here the command's words become records: installs
(``Requirement``, ``Include``) and uninstalls (``Uninstall``), in command order (``step``), for pip and
uv (``pip install``, ``uv pip install``, ``uv add``), Poetry and PDM (``add``/``remove``), conda, and
``setup.py``/``python -m build``. What a script builds from a clone it made is ``builds``; wheels one
command makes and another installs are ``wheels``; which tool a command runs is ``commands``.

It is over 500 lines: one class reads the words of every packaging command with the state they share (the
file's step count, its clones and wheels, a shell stop that keeps commands from running); split, each
part would take all of it.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from packaging.specifiers import SpecifierSet

from fa_lint.model import (
    BUILD_VARIABLES,
    FLASH_ATTN,
    FLASH_REPOS,
    SUBDIRECTORIES,
    Include,
    InstallOptions,
    Location,
    NotRun,
    Parsed,
    ParseProblem,
    Requirement,
    Setting,
    Uninstall,
    normalize,
)
from fa_lint.shell import redirects
from fa_lint.shell.builds import Clones
from fa_lint.shell.commands import CONDA_ARGS, PIP_INSTALL_ARGS, UPGRADE, Install, install, option, unwrap
from fa_lint.shell.options import install_options
from fa_lint.shell.parse import Chunk, Command, Word
from fa_lint.shell.redirects import Effect
from fa_lint.shell.settings import toolkit
from fa_lint.shell.stops import Stop
from fa_lint.shell.variables import Budget, State, expand
from fa_lint.shell.walk import SHELLS, Walk
from fa_lint.shell.wheels import Wheels
from fa_lint.syntax import pep508
from fa_lint.syntax.text import TextIndex

_FAMILY = frozenset(SUBDIRECTORIES.values())  # flash-attn, flash-attn-3, flash-attn-4


def _poetry_word(word: Word) -> Word:
    """``poetry add name@^2.5`` as the PEP 508 text pip would read (``name>=2.5,<3``)."""
    name, at, constraint = word.text.partition("@")
    if not at or "://" in constraint or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._\[\],-]*", name.strip()):
        return word
    if constraint.strip() == "latest":
        return word._replace(text=name.strip())
    from fa_lint.syntax import poetry  # for `poetry add` only

    try:
        alternatives = poetry.specifiers(constraint)
    except poetry.PoetryConstraintError:
        return word  # left as written: not a requirement fa-lint can read
    if len(alternatives) != 1:
        return word
    return word._replace(text=f"{name.strip()}{alternatives[0]}")


def _path(text: str) -> bool:
    """pip reads an argument as a local path when it has a slash or starts with a dot."""
    return not pep508.looks_like_url(text) and ("/" in text or text.startswith(".")) and "@" not in text


class Scanner:
    """Turns the commands of one file into records; shared by shell, Docker, workflows, Make."""

    def __init__(
        self,
        index: TextIndex,
        source: str,
        scope: str = "",
        include_map: Callable[[str, int], str | None] | None = None,
    ) -> None:
        self.index = index
        self.source = source
        self.scope = scope
        self.include_map = include_map
        self.step = 0  # packaging commands seen so far in the file
        self.records: list[Parsed] = []
        self.clones = Clones(self._location, source)
        self.wheels = Wheels()
        self.budget = Budget()  # the file's, whichever scopes its scripts start from
        # A shell stop before this file's next commands, which the format says carries over (a RUN's
        # syntax error stops the image build): they never run. Set by the format, read by ``run``.
        self.halted: Stop | None = None
        self.stopped: Stop | None = None  # the syntax error the last ``run`` stopped at, if any

    # the walk's entry points

    def run(self, start: int, end: int, state: State, text: str | None = None, make: bool = False) -> None:
        """Read the file's text from ``start`` to ``end`` as a script (``text``: what the parser reads)."""
        chunk = Chunk(self.index.text[start:end], start, parse=text)
        state.scope.adopt(self.budget)
        walk = Walk(chunk, self, make, stop=self.halted)
        walk.run(state)
        self.stopped = walk.stopped

    def command(self, cmd: Command, state: State, possible: bool, make: bool) -> Word | None:
        words = self._resolve_head(cmd.words, state, make)
        if not words:
            return None
        head = posixpath.basename(words[0].text)
        found = toolkit(words)
        if found is not None:
            self._setting("toolkit", found[2], found[1], self._location(found[0]), possible)
        if head in SHELLS:
            flags = [w for w in words[1:] if w.text.startswith("-")]
            rest = [w for w in words[1:] if not w.text.startswith("-")]
            if any("c" in f.text.lstrip("-") and not f.text.startswith("--") for f in flags) and rest:
                return rest[0]
            return None
        if head == "git":
            self.clones.git(words[1:], state, make)
            return None
        inst = install(words)
        if inst is None:
            return None
        self._prefix(cmd, words, state, possible, make)
        self.step += 1
        upgrade = any(w.text in UPGRADE for w in inst.args)
        where = self.index.location(cmd.start, cmd.end) if cmd.end > cmd.start else None
        options = install_options(inst, cmd, state, make, where, self.step)  # once per command
        context = _Context(state, possible, make, cmd, upgrade, options)
        if self._never_runs(inst, context):
            return None
        if inst.verb == "uninstall":
            self._uninstall(inst, context)
        elif inst.tool == "conda":
            self._conda(inst.args, context)
        elif inst.tool in ("setup.py", "build"):
            self._setup(inst, context)
        elif inst.verb in ("wheel", "download"):
            self._wheel(inst, context)
        else:
            self._install(inst, context)
        return None

    def skipped(self, cmd: Command, state: State, stop: Stop, make: bool) -> Word | None:
        """A command the shell never runs (``stop`` says why): its flash-attn words are kept as
        ``NotRun``, for FAL007; nothing of it is installed, cloned or built."""
        words = self._resolve_head(cmd.words, state, make)
        if words and posixpath.basename(words[0].text) in SHELLS:
            return self.command(Command(words, cmd.start, cmd.end), state, False, make)  # its -c script
        inst = install(words) if words else None
        if inst is not None:
            here = cmd.start <= stop.start < cmd.end  # the command that holds the syntax error
            at = None if here else self.index.location(stop.start, stop.end)
            why = stop.why if at is None else stop.reason(cmd.start, at.line)
            c = _Context(state, False, make, cmd, False, install_options(inst, cmd, state, make, None, 0))
            self._not_run(inst, c, why, True, stop.cause, at, stop)
        return None

    def problem(self, start: int, end: int, message: str) -> None:
        self.records.append(ParseProblem(self.index.location(start, end), message))

    def assign(self, name: str, value: str, start: int, end: int, possible: bool) -> None:
        """``export MAX_JOBS=4``: in force for the install commands after it."""
        if name in BUILD_VARIABLES:
            self._setting("env", name, value, self.index.location(start, end), possible)

    def _prefix(self, cmd: Command, words: list[Word], state: State, possible: bool, make: bool) -> None:
        """``MAX_JOBS=4 pip install flash-attn``: set for this one install command."""
        for name, value in cmd.env.items():
            if name not in BUILD_VARIABLES:
                continue
            m = re.compile(rf"{name}=(?:\"[^\"]*\"|'[^']*'|\S*)").search(
                self.index.text, cmd.start, words[0].start if words else cmd.end
            )
            if m is None:
                continue
            exp = expand(value, state.scope, make)
            text = value if exp.unresolved else exp.text
            self._setting("env", name, text, self.index.location(m.start(), m.end()), possible, self.step + 1)

    def _setting(
        self, kind: str, name: str, value: str, where: Location, possible: bool, until: int | None = None
    ) -> None:
        self.records.append(Setting(where, kind, name, value, self.scope, self.step, until, possible))

    def exec_form(self, words: list[Word], state: State) -> None:
        """Docker's ``RUN ["pip", "install", ...]``: one command, no shell in between."""
        cmd = Command(words, words[0].start, words[-1].end) if words else Command([])
        if self.halted is not None:
            self.skipped(cmd, state, self.halted, False)
        else:
            self.command(cmd, state, False, False)

    def drain(self) -> list[Parsed]:
        out, self.records = self.records, []
        return out

    def finish(self) -> list[Parsed]:
        """What is left: wheels built or downloaded and never installed in this file are judged where made."""
        self.records += self.wheels.leftovers()
        return self.drain()

    def copy(self, source: str, dest: str) -> None:
        """``COPY --from=stage SRC DEST``: wheels made in SRC are now in DEST too."""
        self.wheels.copy(source, dest)

    # words

    def _resolve_head(self, words: list[Word], state: State, make: bool) -> list[Word]:
        """The command name as run: ``$PIP install`` with PIP=pip3, ``$SUDO pip`` with SUDO empty."""
        for _ in range(3):
            words = unwrap(words)
            if not words or "$" not in words[0].text or words[0].quoted:
                return words
            exp = expand(words[0].text, state.scope, make)
            if exp.unresolved or len(exp.texts) > 1:
                return words
            w = words[0]
            words = [Word(t, w.start, w.end) for t in exp.text.split()] + words[1:]
        return words

    def _build(self, folder: str, c: _Context) -> Requirement | None:
        where = self.index.location(c.cmd.start, c.cmd.end)
        if self.clones.holds(folder):  # a clone this file made: what its repository builds
            return self.clones.built(folder, where, c.cmd.env)
        return self._checkout(folder, where, c)

    def _checkout(self, folder: str, where: Location, c: _Context) -> Requirement | None:
        """A build of a flash-attention folder no command here made: a git submodule or a vendored
        copy the repository may hold (``fa_lint.checkouts`` reads which), or a folder it cannot see."""
        name, base = None, folder
        for inside, dist in sorted(SUBDIRECTORIES.items(), key=lambda kv: -len(kv[0])):
            if not inside or base.endswith("/" + inside):
                name, base = dist, base[: len(base) - len(inside)].rstrip("/")
                break
        if name is None or posixpath.basename(base).lower() not in FLASH_REPOS:
            return None
        path: str | None = base
        if self.include_map is not None:  # a folder in the image: where COPY took it from
            path = self.include_map(base, c.cmd.start)
        readable = path is not None and not posixpath.isabs(path) and "$" not in path and ".." not in path
        inside = folder[len(base) :].lstrip("/")
        return Requirement(
            name,
            folder,
            where,
            self.source,
            url=folder,
            build=f"the folder {base}" + (f" ({inside})" if inside else ""),
            checkout=path if readable and path else "",
        )

    def _location(self, word: Word) -> Location:
        start, end = word.start, word.end
        text = self.index.text
        if word.quoted and end - start >= 2 and text[start] in "'\"" and text[end - 1] == text[start]:
            start, end = start + 1, end - 1
            if text[start - 2 : start] == "\\" + text[start - 1]:  # \"...\" inside bash -c "..."
                end -= 1
        return self.index.location(start, end)

    def _fields(self, c: _Context) -> dict[str, Any]:
        """What every record of the current command carries."""
        return {
            "scope": self.scope,
            "step": self.step,
            "possible": c.possible,
            "upgrade": c.upgrade,
            "options": c.options,
        }

    def _emit(self, rec: Requirement | Include | Uninstall, c: _Context) -> None:
        fields = self._fields(c)
        if isinstance(rec, Uninstall):
            del fields["upgrade"], fields["options"]
        elif rec.options is not None:
            del fields["options"]  # a wheel another command built: how that command built it
        if any(getattr(rec, k) != v for k, v in fields.items()):  # made by another command
            rec = dataclasses.replace(rec, **fields)
        self.records.append(rec)

    # pip install and friends

    def _install(self, inst: Install, c: _Context) -> None:
        args = iter(inst.args)
        editable = no_index = False
        find_links: list[str] = []
        for word in args:
            text = word.text
            m = re.match(r"^(-r|--requirement|-c|--constraint)(?:=|(?=.))(.+)$", text)
            if text in ("-r", "--requirement", "-c", "--constraint") or m:
                target = Word(m.group(2), word.start, word.end) if m else next(args, None)
                if target is not None:
                    self._include(target, text.startswith(("-c", "--c")), c)
                continue
            if text in ("-e", "--editable"):
                editable = True
                continue
            if text == "--no-index":
                no_index = True
                continue
            links = option(word, ("-f", "--find-links"), args)
            if links is not None:
                find_links.append(c.state.folder(links.text, c.make))
                continue
            if text.startswith("-"):
                if text in PIP_INSTALL_ARGS:
                    next(args, None)
                continue
            poetry = inst.tool == "poetry"
            rec = self._target(_poetry_word(word) if poetry else word, editable, c)
            editable = False
            if rec is None:
                continue
            if poetry and rec.raw != word.text and rec.build is None:
                rec = dataclasses.replace(rec, raw=word.text)  # as written, and so no PEP 508 edit for --fix
            if no_index and rec.url is None:  # only the wheels in the --find-links folders can install
                rec = self.wheels.take(find_links, rec.name, "") or rec
            self._emit(rec, c)

    def _target(self, word: Word, editable: bool, c: _Context) -> Requirement | None:
        """One install argument: a requirement, a local folder, or wheels from a folder."""
        text = expand(word.text, c.state.scope, c.make).text.strip()
        path = re.sub(r"\[[^\]]*\]$", "", text)  # .[dev]
        if pep508.looks_like_archive(path) and any(ch in path for ch in "*?["):
            folder, _, pattern = path.rpartition("/")
            return self.wheels.take([c.state.folder(folder or ".", c.make)], None, pattern)
        if (_path(path) and not pep508.looks_like_archive(path)) or (
            editable and not pep508.looks_like_url(path)
        ):
            return self._build(c.state.folder(re.sub(r"\[[^\]]*\]$", "", word.text), c.make), c)
        return self._requirement(word, c)

    def _requirement(self, word: Word, c: _Context) -> Requirement | None:
        exp = expand(word.text, c.state.scope, c.make)
        text = exp.text.strip()
        if (
            not text
            or text in (".", "..")
            or (text.startswith((".", "/")) and not pep508.looks_like_archive(text))
        ):
            return None
        where = self._location(word)
        if exp.unresolved:
            name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", word.text)
            family = normalize(name.group()) if name else ""
            # flash-attn-3 and -4 too: no mention of the family is dropped (issue 10), judged or not
            if family in _FAMILY and not pep508.looks_like_url(word.text):
                return Requirement(
                    family,
                    word.text,
                    where,
                    self.source,
                    unresolved=exp.unresolved,
                    redirected=self._cut_text(word) if word.cut else None,
                    **self._fields(c),
                )
            wheel = pep508.name_from_url(text)
            if wheel == FLASH_ATTN:  # a wheel URL whose tags are variables still names its version
                rec = pep508.parse(text, where, self.source, **self._fields(c))
                return rec if isinstance(rec, Requirement) else None
            return None
        # Keep the words as written ("flash-attn==${FA_VER}"); the specifier holds their value.
        cut = self._cut_text(word) if word.cut else None
        fields = {"raw": word.text, "redirected": cut, **self._fields(c)}
        if len(exp.texts) == 1:
            rec = pep508.parse(exp.texts[0].strip(), where, self.source, **fields)
            return rec if isinstance(rec, Requirement) else None
        found = [pep508.parse(t.strip(), where, self.source) for t in exp.texts]
        recs = [r for r in found if isinstance(r, Requirement)]
        if len(recs) != len(found) or len({r.name for r in recs}) != 1:
            return None
        return dataclasses.replace(recs[0] if len(recs) == 1 else _either(recs), **fields)

    def _cut_text(self, word: Word) -> str:
        """What the shell took as a redirect: '>=2.5' in an unquoted flash-attn>=2.5."""
        found = redirects.read(self.index.text, word.end)
        return found.text if found else (word.cut or ">")

    def _never_runs(self, inst: Install, c: _Context) -> bool:
        """Whether the shell never runs this command: a word of it runs into an input redirect from
        a file (``flash-attn<=2.6.3`` reads ``=2.6.3``) or an operator with no file after it. Nothing
        of it is installed or removed; its flash-attn words are kept as ``NotRun``, for FAL007."""
        found = ((w, redirects.read(self.index.text, w.end)) for w in inst.args if w.cut)
        failing = next(((w, r) for w, r in found if r is not None and r.effect is not Effect.RUNS), None)
        if failing is None:
            return False
        cause, why = failing
        self._not_run(inst, c, why.why(), why.effect is Effect.STOPS, cause.text + why.text)
        return True

    def _not_run(
        self,
        inst: Install,
        c: _Context,
        why: str,
        stops: bool,
        cause: str,
        at: Location | None = None,
        stop: Stop | None = None,
    ) -> None:
        """Each flash-attn word of a command the shell never runs, as ``NotRun``; ``stop``'s own word
        (``flash-attn<``, its operator cut off by the walk) keeps what the shell took from it."""
        for word in inst.args:
            rec = None if word.text.startswith("-") else self._requirement(word, c)
            if rec is not None and rec.name in _FAMILY:
                if stop is not None and (word.start, word.end + len(stop.op)) == (stop.start, stop.end):
                    rec = dataclasses.replace(rec, redirected=stop.op)
                self.records.append(NotRun(rec, why, stops, cause, at))

    def _include(self, word: Word, constraint: bool, c: _Context) -> None:
        exp = expand(word.text, c.state.scope, c.make)
        if exp.unresolved:
            return
        path = exp.text
        if self.include_map is not None:
            mapped = self.include_map(path, word.start)
            if mapped is None:
                return
            path = mapped
        self._emit(Include(self._location(word), path, constraint=constraint, optional=True), c)

    def _conda(self, args: list[Word], c: _Context) -> None:
        it = iter(args)
        for word in it:
            if word.text.startswith("-"):
                if word.text in CONDA_ARGS:
                    next(it, None)
                continue
            exp = expand(word.text, c.state.scope, c.make)
            if exp.unresolved:
                continue
            from fa_lint.syntax import matchspec  # for `conda install` only

            rec = matchspec.matchspec(exp.text, self._location(word), self.source, **self._fields(c))
            if isinstance(rec, Requirement):
                self._emit(rec, c)

    def _uninstall(self, inst: Install, c: _Context) -> None:
        args = iter(inst.args)
        for word in args:
            if word.text.startswith("-"):
                if word.text in ("-r", "--requirement", *CONDA_ARGS, *PIP_INSTALL_ARGS):
                    next(args, None)
                continue
            text = expand(word.text, c.state.scope, c.make).text
            m = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", text.split("::")[-1])
            if m:
                self._emit(Uninstall(self._location(word), normalize(m.group())), c)

    # wheels: made in one command, installed by another

    def _wheel(self, inst: Install, c: _Context) -> None:
        """``pip wheel SPEC -w DIR`` / ``pip download SPEC -d DIR``: the wheels wait in DIR."""
        names = ("-w", "--wheel-dir") if inst.verb == "wheel" else ("-d", "--dest", "--dest-dir")
        args = iter(inst.args)
        folder = c.state.cwd
        made: list[Requirement] = []
        for word in args:
            value = option(word, names, args)
            if value is not None:
                folder = c.state.folder(value.text, c.make)
                continue
            if word.text.startswith("-"):
                if word.text in PIP_INSTALL_ARGS or word.text in (
                    "-r",
                    "--requirement",
                    "-c",
                    "--constraint",
                ):
                    next(args, None)
                continue
            rec = self._target(word, False, c)
            if rec is not None:
                made.append(
                    dataclasses.replace(
                        rec,
                        scope=self.scope,
                        step=self.step,
                        possible=c.possible,
                        options=rec.options or c.options,  # the build happens here, as this command says
                    )
                )
        self.wheels.put(folder, made)

    def _setup(self, inst: Install, c: _Context) -> None:
        """``python setup.py install|develop|bdist_wheel`` and ``python -m build`` in the working folder."""
        if inst.tool == "setup.py" and inst.verb not in ("install", "develop", "bdist_wheel"):
            return
        source, out = ".", None
        args = iter(inst.args)
        for word in args:
            value = option(word, ("-d", "--dist-dir", "-o", "--outdir"), args)
            if value is not None:
                out = value.text
            elif inst.tool == "build" and not word.text.startswith("-"):
                source = word.text
        folder = c.state.folder(source, c.make)
        rec = self._build(folder, c)
        if rec is None:
            return
        if inst.verb in ("install", "develop"):
            self._emit(rec, c)
            return
        dist = c.state.folder(out, c.make) if out else posixpath.join(folder, "dist")
        made = dataclasses.replace(
            rec, scope=self.scope, step=self.step, possible=c.possible, options=c.options
        )
        self.wheels.put(dist, [made])


class _Context(NamedTuple):
    """What one command runs with: the shell's state, whether it surely runs, and the command."""

    state: State
    possible: bool
    make: bool
    cmd: Command
    upgrade: bool  # -U, --force-reinstall...: it reinstalls what is already there
    options: InstallOptions = InstallOptions()  # where packages come from, how sdists build


def _either(recs: list[Requirement]) -> Requirement:
    """One word that can become several requirements (a variable a branch set): it admits any of them."""
    alternatives: list[SpecifierSet] = []
    for r in recs:
        if r.version is not None:
            alternatives.append(SpecifierSet(f"=={r.version.public}"))
        else:
            alternatives += r.alternatives or (r.specifier,)
    return dataclasses.replace(
        recs[0], specifier=SpecifierSet(), version=None, url=None, alternatives=tuple(alternatives)
    )
