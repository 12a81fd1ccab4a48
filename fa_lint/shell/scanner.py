"""What the commands of a script install: records from the commands the walk hands over.

``fa_lint.shell.walk`` walks the script and hands over each command it runs, certain or possible, with
the variables and working directory in force. The ``Scanner`` holds what one file's commands share
(its records, the step count, its clones and wheels, a shell stop that keeps commands from running) and
hands each packaging command to its family's reader: ``pip`` (pip, uv, Poetry and PDM: install and
uninstall), ``twostep`` (``pip wheel``/``pip download``), ``pybuild`` (``setup.py``, ``python -m
build``, a folder's build) and ``conda``. Which tool a command runs is ``commands``; what a script
builds from a clone it made is ``builds``; wheels one command makes and another installs are ``wheels``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fa_lint.model import (
    BUILD_VARIABLES,
    Include,
    Location,
    NotRun,
    Parsed,
    ParseProblem,
    Requirement,
    Setting,
    Uninstall,
    internal_error,
)
from fa_lint.shell import conda, docker, makefiles, pip, pybuild, redirects, twostep
from fa_lint.shell.builds import OUTPUTS, Clones
from fa_lint.shell.commands import UPGRADE, Install, install, shell_script, unwrap
from fa_lint.shell.context import Context
from fa_lint.shell.options import install_options
from fa_lint.shell.parse import Chunk, Command, Word, basename
from fa_lint.shell.redirects import Effect
from fa_lint.shell.settings import toolkit
from fa_lint.shell.stops import Stop
from fa_lint.shell.variables import Budget, State, expand
from fa_lint.shell.walk import SHELLS, Walk
from fa_lint.shell.wheels import Wheels
from fa_lint.syntax.text import TextIndex


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
        self.clones = Clones(self.location, source)
        self.wheels = Wheels()
        self.budget = Budget()  # the file's, whichever scopes its scripts start from
        # A shell stop before this file's next commands, which the format says carries over (a RUN's
        # syntax error stops the image build): they never run. Set by the format, read by ``run``.
        self.halted: Stop | None = None
        self.stopped: Stop | None = None  # the syntax error the last ``run`` stopped at, if any

    # the walk's entry points

    def run(self, start: int, end: int, state: State, text: str | None = None, make: bool = False) -> None:
        """Read the file's text from ``start`` to ``end`` as a script (``text``: what the parser reads)."""
        self.script(Chunk(self.index.text[start:end], start, parse=text), state, make)

    def script(self, chunk: Chunk, state: State, make: bool = False, possible: bool = False) -> None:
        """Read a script placed in the file by ``chunk``: the file's own text, or a decoded string
        (``possible``: the script itself may not run, as a Python call inside an ``if`` or a notebook's
        ``!`` line inside a Python ``if`` may not)."""
        state.scope.adopt(self.budget)
        walk = Walk(chunk, self, make, stop=self.halted)
        walk.run(state, possible=possible)
        self.stopped = walk.stopped

    def command(self, cmd: Command, state: State, possible: bool, make: bool) -> Word | None:  # noqa: C901 - complexity 11, to split or justify (issue 45)
        words = self._resolve_head(cmd.words, state, make)
        if not words:
            return None
        head = basename(words[0].text)
        found = toolkit(words, head)
        if found is not None:
            self._setting("toolkit", found[2], found[1], self.location(found[0]), possible)
        if head in SHELLS:
            script = shell_script([w.text for w in words])
            return None if script is None else words[script]
        if self._tool(head, words, state, make):
            return None
        inst = install(words)
        if inst is None:
            return None
        self._prefix(cmd, words, state, possible, make)
        self.step += 1
        upgrade = any(w.text in UPGRADE for w in inst.args)
        where = self.index.location(cmd.start, cmd.end) if cmd.end > cmd.start else None
        options = install_options(inst, cmd, state, make, where, self.step)  # once per command
        context = Context(state, possible, make, cmd, upgrade, options)
        if self._never_runs(inst, context):
            return None
        if inst.verb == "uninstall":
            pip.uninstall(self, inst, context)
        elif inst.tool == "conda":
            conda.install(self, inst, context)
        elif inst.tool in ("setup.py", "build"):
            pybuild.setup(self, inst, context)
        elif inst.verb in ("wheel", "download"):
            twostep.wheel(self, inst, context)
        else:
            pip.install(self, inst, context)
        return None

    def _tool(self, head: str, words: list[Word], state: State, make: bool) -> bool:
        """A command that clones, downloads, builds an image or runs make: what it leaves behind."""
        if head == "git":
            self.clones.git(words[1:], state, make)
        elif head in docker.TOOLS:
            self.records += docker.build_args(words, state, make, self.location)
        elif head in OUTPUTS:
            self.clones.download(head, words[1:], state, make)
        elif head in makefiles.TOOLS:
            self.records += makefiles.included(self, words, state, make)
        else:
            return False
        return True

    def skipped(self, cmd: Command, state: State, stop: Stop, make: bool) -> Word | None:
        """A command the shell never runs (``stop`` says why): its flash-attn words are kept as
        ``NotRun``, for FAL007; nothing of it is installed, cloned or built."""
        words = self._resolve_head(cmd.words, state, make)
        if words and basename(words[0].text) in SHELLS:
            return self.command(Command(words, cmd.start, cmd.end), state, False, make)  # its -c script
        inst = install(words) if words else None
        if inst is not None:
            here = cmd.start <= stop.start < cmd.end  # the command that holds the syntax error
            at = None if here else self.index.location(stop.start, stop.end)
            why = stop.why if at is None else stop.reason(cmd.start, at.line)
            c = Context(state, False, make, cmd, False, install_options(inst, cmd, state, make, None, 0))
            self._not_run(inst, c, why, True, stop.cause, at, stop)
        return None

    def problem(self, start: int, end: int, message: str) -> None:
        self.records.append(ParseProblem(self.index.location(start, end), message))

    def internal(self, start: int, end: int, exc: Exception) -> None:
        self.records.append(internal_error(self.index.location(start, end), exc, "reading this statement"))

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

    def exec_form(self, words: list[Word], state: State, script: Chunk | None = None) -> None:
        """Docker's ``RUN ["pip", "install", ...]``: one command, no shell in between; a shell's ``-c``
        script (``["bash", "-c", "..."]``, its characters placed by ``script``) is read as a script."""
        if script is not None:
            self.script(script, state)
            return
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

    def location(self, word: Word) -> Location:
        """Where a word is in the file: inside its quotes, for a quoted one."""
        start, end = word.start, word.end
        text = self.index.text
        if word.quoted and end - start >= 2 and text[start] in "'\"" and text[end - 1] == text[start]:
            start, end = start + 1, end - 1
            if text[start - 2 : start] == "\\" + text[start - 1]:  # \"...\" inside bash -c "..."
                end -= 1
        elif word.quoted and text[start : start + 2] == '\\"' and text[end - 1 : end + 1] == '\\"':
            start, end = start + 2, end - 1  # "..." in an exec-form RUN's JSON string: each " is a \"
        return self.index.location(start, end)

    def fields(self, c: Context) -> dict[str, Any]:
        """What every record of the current command carries."""
        return {
            "scope": self.scope,
            "step": self.step,
            "possible": c.possible,
            "upgrade": c.upgrade,
            "options": c.options,
        }

    def emit(self, rec: Requirement | Include | Uninstall, c: Context) -> None:
        """Record what the command installs or removes, with what every record of it carries."""
        fields = self.fields(c)
        if isinstance(rec, Uninstall):
            del fields["upgrade"], fields["options"]
        elif rec.options is not None:
            del fields["options"]  # a wheel another command built: how that command built it
        if any(getattr(rec, k) != v for k, v in fields.items()):  # made by another command
            rec = rec._replace(**fields)
        self.records.append(rec)

    # commands the shell never runs

    def _never_runs(self, inst: Install, c: Context) -> bool:
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
        c: Context,
        why: str,
        stops: bool,
        cause: str,
        at: Location | None = None,
        stop: Stop | None = None,
    ) -> None:
        """Each flash-attn word of a command the shell never runs, as ``NotRun``; ``stop``'s own word
        (``flash-attn<``, its operator cut off by the walk) keeps what the shell took from it."""
        for word in inst.args:
            rec = None if word.text.startswith("-") else pip.requirement(self, word, c)
            if rec is not None and rec.name in pip.FAMILY:
                if stop is not None and (word.start, word.end + len(stop.op)) == (stop.start, stop.end):
                    rec = rec._replace(redirected=stop.op)
                self.records.append(NotRun(rec, why, stops, cause, at))
