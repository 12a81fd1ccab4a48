"""Finding install commands (pip, uv, poetry, pdm, conda) in shell text, with exact positions.

Hand-written because ``shlex`` reports no offsets and ``bashlex`` gives up on common constructs
(heredocs, ``[[ ]]``, arrays). This lexer knows just enough of POSIX shell -- quoting, ``\\``
continuations, comments, operators, redirects, ``$(...)``/backticks and heredocs -- to split
commands into words whose offsets point back into the original file. Nothing is ever run.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from fa_lint.model import FLASH_ATTN, Include, InstallOptions, Parsed, Requirement, normalize
from fa_lint.sources import _conda, _poetry, _reqs
from fa_lint.sources._text import TextIndex


@dataclass(frozen=True, slots=True)
class Word:
    text: str  # after quote removal; variable references are kept as written
    start: int  # offsets into the file text
    end: int
    quoted: bool = False
    cut: str | None = None  # the redirect operator that ended this word mid-token (flash-attn>=2.5)


@dataclass(slots=True)
class Command:
    words: list[Word] = field(default_factory=list)
    redirects: list[tuple[str, Word | None]] = field(default_factory=list)


_OPS = ("&&", "||", ";;", ";", "|", "&", "(", ")")
_REDIRECT = re.compile(r"\d?(?P<op><<<|<<-|<<|>>|>&|<&|>\||&>>|&>|<>|<|>)")
_SPACE = " \t\r"


class _Lexer:
    def __init__(self, text: str, start: int, end: int) -> None:
        self.s = text
        self.i = start
        self.end = end
        self.heredocs: list[tuple[str, bool]] = []

    def commands(self) -> Iterator[Command]:
        cmd = Command()
        pending_redirect: str | None = None
        while self.i < self.end:
            c = self.s[self.i]
            if c in _SPACE:
                self.i += 1
            elif self.s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "\n":
                self.i += 1
                self._skip_heredocs()
                yield cmd
                cmd = Command()
            elif c == "#":
                nl = self.s.find("\n", self.i, self.end)
                self.i = self.end if nl < 0 else nl
            elif self.s.startswith("&>", self.i):
                self.i += 2
                self._word()  # the file both streams go to
            elif any(self.s.startswith(op, self.i) for op in _OPS):
                op = next(op for op in _OPS if self.s.startswith(op, self.i))
                self.i += len(op)
                yield cmd
                cmd = Command()
            elif self._redirect_at(self.i):
                op = self._redirect_op()
                if op.startswith("<<") and not op.startswith("<<<"):
                    delim = self._word()
                    if delim is not None:
                        self.heredocs.append((delim.text, op == "<<-"))
                    continue
                pending_redirect = op
                if op.endswith("&") and self.i < self.end and self.s[self.i].isdigit():
                    self.i += 1  # 2>&1
                    cmd.redirects.append((op, None))
                    pending_redirect = None
            else:
                word = self._word()
                if word is None:
                    continue
                if pending_redirect is not None:
                    cmd.redirects.append((pending_redirect, word))
                    pending_redirect = None
                else:
                    cmd.words.append(word)
                    if word.cut:
                        pending_redirect = word.cut
        yield cmd

    def _redirect_at(self, i: int) -> bool:
        s = self.s
        return s[i] in "<>" or (
            s[i].isdigit()
            and i + 1 < self.end
            and s[i + 1] in "<>"
            and (i == 0 or s[i - 1] in _SPACE + "\n;&|")
        )

    def _redirect_op(self) -> str:
        m = _REDIRECT.match(self.s, self.i)
        assert m is not None
        self.i = m.end()
        return m.group("op")

    def _skip_heredocs(self) -> None:
        for delim, strip_tabs in self.heredocs:
            while self.i < self.end:
                nl = self.s.find("\n", self.i, self.end)
                line = self.s[self.i : self.end if nl < 0 else nl]
                self.i = self.end if nl < 0 else nl + 1
                if (line.lstrip("\t") if strip_tabs else line).rstrip("\r") == delim:
                    break
        self.heredocs = []

    def _balanced(self, i: int, open_: str, close: str) -> int:
        """Index after the ``close`` matching the ``open_`` at ``i`` (quotes respected)."""
        depth, j = 0, i
        while j < self.end:
            c = self.s[j]
            if c == "\\":
                j += 2
                continue
            if c in "'\"":
                k = self.s.find(c, j + 1, self.end)
                j = self.end if k < 0 else k + 1
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return self.end

    def _word(self) -> Word | None:
        s, start = self.s, self.i
        out: list[str] = []
        quoted = False
        while self.i < self.end:
            c = s[self.i]
            if c in _SPACE or c == "\n":
                break
            if s.startswith("\\\n", self.i):
                self.i += 2
                continue
            if c == "\\":
                out.append(s[self.i + 1 : self.i + 2])
                self.i = min(self.i + 2, self.end)
                continue
            if c == "'":
                k = s.find("'", self.i + 1, self.end)
                k = self.end if k < 0 else k
                out.append(s[self.i + 1 : k])
                self.i, quoted = min(k + 1, self.end), True  # an unclosed quote ends at the end
                continue
            if c == '"':
                j = self.i + 1
                piece: list[str] = []
                while j < self.end and s[j] != '"':
                    if s[j] == "\\" and j + 1 < self.end and s[j + 1] in '"\\$`\n':
                        piece.append("" if s[j + 1] == "\n" else s[j + 1])
                        j += 2
                    elif s.startswith("$(", j):
                        k = self._balanced(j + 1, "(", ")")
                        piece.append(s[j:k])
                        j = k
                    else:
                        piece.append(s[j])
                        j += 1
                out.append("".join(piece))
                self.i, quoted = min(j + 1, self.end), True
                continue
            if s.startswith("$(", self.i):
                k = self._balanced(self.i + 1, "(", ")")
                out.append(s[self.i : k])
                self.i = k
                continue
            if s.startswith("${", self.i):
                k = self._balanced(self.i + 1, "{", "}")
                out.append(s[self.i : k])
                self.i = k
                continue
            if c == "`":
                k = s.find("`", self.i + 1, self.end)
                k = self.end if k < 0 else k + 1
                out.append(s[self.i : k])
                self.i = k
                continue
            if c in ";|&()" or (c in "<>" and self.i > start):
                if c in "<>":
                    word = Word("".join(out), start, self.i, quoted, cut=self._peek_redirect())
                    return word
                break
            if c in "<>":
                break
            out.append(c)
            self.i += 1
        if self.i == start:
            self.i += 1  # a lone character the lexer has no use for
            return None
        return Word("".join(out), start, self.i, quoted)

    def _peek_redirect(self) -> str:
        m = _REDIRECT.match(self.s, self.i)
        return m.group("op") if m else ">"


def commands(text: str, start: int = 0, end: int | None = None) -> Iterator[Command]:
    for cmd in _Lexer(text, start, len(text) if end is None else end).commands():
        if cmd.words:
            yield cmd


# --- variables ---------------------------------------------------------------------------------

_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
_VAR = re.compile(
    r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*)|\(([A-Za-z_][A-Za-z0-9_]*)\))"
)


@dataclass(frozen=True, slots=True)
class Expanded:
    text: str
    unresolved: str | None  # the first reference with no value


def expand(text: str, variables: Mapping[str, str], make: bool = False) -> Expanded:
    """Substitute ``$X``, ``${X}``, ``${X:-default}`` (and ``$(X)`` in Makefiles) from known values."""
    missing: list[str] = []

    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(4) or m.group(5)
        if m.group(5) and not make:
            missing.append(m.group())  # $(command) substitution: unknowable
            return m.group()
        if name in variables:
            return variables[name]
        if m.group(2) is not None:
            return m.group(3)
        missing.append(m.group())
        return m.group()

    out = _VAR.sub(sub, text)
    opaque = re.search(r"\$\{\{.*?\}\}|\$\(.*?\)|`[^`]*`", out)
    if not missing and opaque:
        missing.append(opaque.group())  # command substitution or a CI expression: only running it tells
    return Expanded(out, missing[0] if missing else None)


# --- install commands ----------------------------------------------------------------------------

_PREFIX = {
    "sudo",
    "env",
    "time",
    "nohup",
    "exec",
    "command",
    "then",
    "else",
    "do",
    "if",
    "elif",
    "while",
    "until",
    "!",
    "{",
    "xargs",
}
_SUDO_ARGS = {"-u", "-g", "-C", "-D", "-h", "-p", "-U"}
_PIP_GLOBAL_ARGS = {
    "--log",
    "--proxy",
    "--retries",
    "--timeout",
    "--exists-action",
    "--trusted-host",
    "--cert",
    "--client-cert",
    "--cache-dir",
    "--python",
    "--use-feature",
    "--use-deprecated",
    "--keyring-provider",
}
_PIP_INSTALL_ARGS = {
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--src",
    "--upgrade-strategy",
    "--progress-bar",
    "--global-option",
    "-C",
    "--config-settings",
    "--no-binary",
    "--only-binary",
    "--report",
    "--root-user-action",
    "--group",
    "--python",
    "-p",
    "--index-strategy",
    "--extra",
    "--resolution",
    "--prerelease",
    "--exclude-newer",
    "--link-mode",
    "--torch-backend",
    "-P",
    "--upgrade-package",
    "--reinstall-package",
    "--no-build-isolation-package",
    "--overrides",
    "--build-constraints",
    "-b",
    "--default-index",
    "--index",
    # uv add, pdm add, poetry add
    "-G",
    "-E",
    "--extras",
    "--source",
    "--markers",
    "-L",
    "--lockfile",
    "--project",
    "--optional",
    "--marker",
    "--tag",
    "--branch",
    "--rev",
    "--package",
    "--script",
    "--bounds",
    *_PIP_GLOBAL_ARGS,
}
_CONDA_ARGS = {"-c", "--channel", "-n", "--name", "-p", "--prefix", "--file", "--override-channels"}
# pip and uv: options that install even over a version already there that satisfies the requirement
_UPGRADE = {"-U", "--upgrade", "--force-reinstall", "-I", "--ignore-installed", "--reinstall", "--update-all"}
_CONDA_RUN_ARGS = {"-n", "--name", "-p", "--prefix", "--cwd"}
_UV_RUN_ARGS = {
    "--with",
    "--with-editable",
    "--with-requirements",
    "-p",
    "--python",
    "--extra",
    "--group",
    "--only-group",
    "--no-group",
    "--package",
    "--env-file",
    "--directory",
    "--project",
    "--index",
    "--default-index",
    "-i",
    "--index-url",
    "--extra-index-url",
}
_PYTHON = re.compile(r"^(?:.*/)?python(?:\d+(?:\.\d+)*)?(?:\.exe)?$")
_PIP = re.compile(r"^(?:.*/)?pip(?:\d+(?:\.\d+)*)?(?:\.exe)?$")
_CONDA = re.compile(r"^(?:.*/)?(?:conda|mamba|micromamba)$")


@dataclass(frozen=True, slots=True)
class Install:
    """The arguments of one install command: pip-style or conda-style."""

    tool: str  # "pip", "poetry" (its name@constraint words) or "conda"
    args: list[Word]
    installer: str = "pip"  # the program that installs: "pip", "uv", "poetry", "pdm", "conda"


def install(cmd: Command) -> Install | None:
    """The install arguments of ``pip install`` (any spelling), ``uv add`` or ``conda install``.

    ``conda run -n ENV`` (and its mamba/micromamba spellings) and ``uv run`` are followed to the
    command they run.
    """
    words = list(cmd.words)
    while words and (words[0].text in _PREFIX or _ASSIGN.match(words[0].text)):
        first = words.pop(0).text
        if first == "sudo":
            while words and words[0].text.startswith("-"):
                flag = words.pop(0).text
                if flag in _SUDO_ARGS and words:
                    words.pop(0)
    if not words:
        return None
    head = words[0].text
    rest = words[1:]
    front = "pip"
    if _PYTHON.match(head):
        while rest and rest[0].text.startswith("-") and rest[0].text != "-m":
            rest = rest[1:]
        if len(rest) < 2 or rest[0].text != "-m" or rest[1].text != "pip":
            return None
        rest = rest[2:]
    elif head in ("uv", "uv.exe") or head.endswith("/uv"):
        if rest and rest[0].text == "add":
            return Install("pip", rest[1:], "uv")
        if rest and rest[0].text == "run":
            return install(Command(_after_options(rest[1:], _UV_RUN_ARGS)))
        if not rest or rest[0].text != "pip":
            return None
        rest, front = rest[1:], "uv"
    elif head in ("poetry", "pdm") and rest and rest[0].text == "add":
        return Install(head if head == "poetry" else "pip", rest[1:], head)
    elif _CONDA.match(head):
        if rest and rest[0].text == "run":
            return install(Command(_after_options(rest[1:], _CONDA_RUN_ARGS)))
        if not rest or rest[0].text != "install":
            return None
        return Install("conda", rest[1:], "conda")
    elif not _PIP.match(head):
        return None
    rest = _after_options(rest, _PIP_GLOBAL_ARGS)
    if not rest or rest[0].text != "install":
        return None
    return Install("pip", rest[1:], front)


# Where packages come from, and how sdists get built: what the install rules read of a command.
_INDEX_OPTIONS = {
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "--index",
    "--default-index",
}
_INDEX_VARIABLES = (
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_INDEX",
)
# pip's strtobool (pip/_internal/utils/misc.py); any other value is an error pip reports itself
_TRUE = {"y", "yes", "t", "true", "on", "1"}
_FALSE = {"n", "no", "f", "false", "off", "0"}


def install_options(
    cmd: Command, inst: Install, variables: Mapping[str, str], make: bool = False
) -> InstallOptions:
    """The options of one install command that say where packages come from and how sdists build.

    pip reads ``PIP_NO_BUILD_ISOLATION`` as the value of ``build_isolation`` (strtobool in
    ``pip/_internal/cli/parser.py``), so ``PIP_NO_BUILD_ISOLATION=0`` is what turns isolation off.
    """
    env = dict(variables)
    for word in cmd.words:  # VAR=value before the command: its environment
        m = _ASSIGN.match(word.text)
        if m is None:
            break
        env[m.group(1)] = expand(m.group(2), variables, make).text
    build = ""
    pip_flag = env.get("PIP_NO_BUILD_ISOLATION")
    if inst.installer == "pip" and pip_flag is not None and pip_flag.strip().lower() in _FALSE:
        build = "no-isolation"
    if inst.installer == "uv" and env.get("UV_NO_BUILD_ISOLATION", "").strip().lower() in _TRUE:
        build = "no-isolation"
    urls = [u for k in _INDEX_VARIABLES for u in env.get(k, "").split()]
    backend = env.get("UV_TORCH_BACKEND") if inst.installer == "uv" else None
    args = iter(inst.args)
    for word in args:
        flag, eq, value = word.text.partition("=")
        if flag in (*_INDEX_OPTIONS, "--torch-backend", "--no-build-isolation-package"):
            if not eq:
                following = next(args, None)
                value = following.text if following else ""
            value = expand(value, variables, make).text
            if flag == "--torch-backend":
                backend = value
            elif flag == "--no-build-isolation-package":
                build = "no-isolation" if normalize(value) == FLASH_ATTN else build
            else:
                urls.append(value)
        elif flag == "--no-build-isolation" or (flag == "--no-isolation" and inst.installer == "pdm"):
            build = "no-isolation"
        elif flag in ("--no-use-pep517", "--use-pep517") and build != "no-isolation":
            build = "legacy" if flag == "--no-use-pep517" else "pep517"
    return InstallOptions(inst.installer, build, tuple(urls), backend)


def _after_options(words: list[Word], with_value: set[str]) -> list[Word]:
    """The words after the leading options (``--name ENV`` takes its value along)."""
    rest = list(words)
    while rest and rest[0].text.startswith("-"):
        flag = rest.pop(0).text
        if flag in with_value and rest:
            rest.pop(0)
    return rest


def _poetry_word(word: Word) -> Word:
    """``poetry add name@^2.5`` as the PEP 508 text pip would read (``name>=2.5,<3``)."""
    name, at, constraint = word.text.partition("@")
    if not at or "://" in constraint or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._\[\],-]*", name.strip()):
        return word
    if constraint.strip() == "latest":
        return dataclasses.replace(word, text=name.strip())
    try:
        alternatives = _poetry.specifiers(constraint)
    except _poetry.PoetryConstraintError:
        return word  # left as written: not a requirement fa-lint can read
    if len(alternatives) != 1:
        return word
    return dataclasses.replace(word, text=f"{name.strip()}{alternatives[0]}")


@dataclass
class Scanner:
    """Turns install commands in one file into records; shared by shell, Docker, workflows, Make."""

    index: TextIndex
    source: str
    variables: Callable[[int], Mapping[str, str]]  # the variables in force at an offset
    scope: str = ""
    make: bool = False
    include_map: Callable[[str, int], str | None] | None = None
    step: int = 0  # install commands seen so far in the file
    upgrade: bool = False  # the current command reinstalls what is already there

    def records(self, cmd: Command) -> Iterator[Parsed]:
        inst = install(cmd)
        if inst is None:
            return
        self.step += 1
        self.upgrade = any(w.text in _UPGRADE for w in inst.args)
        options = dataclasses.replace(
            install_options(cmd, inst, self.variables(cmd.words[0].start), self.make),
            command=self.index.location(cmd.words[0].start, cmd.words[-1].end),
        )
        if inst.tool == "conda":
            yield from self._conda(inst.args, options)
            return
        args = iter(inst.args)
        editable = False
        for word in args:
            text = word.text
            m = re.match(r"^(-r|--requirement|-c|--constraint)(?:=|(?=.))(.+)$", text)
            if text in ("-r", "--requirement", "-c", "--constraint") or m:
                target = Word(m.group(2), word.start, word.end) if m else next(args, None)
                if target is not None:
                    yield from self._include(target, text.startswith(("-c", "--c")), options)
                continue
            if text in ("-e", "--editable"):
                editable = True
                continue
            if text.startswith("-"):
                if text in _PIP_INSTALL_ARGS:
                    next(args, None)
                continue
            poetry = inst.tool == "poetry"
            rec = self._requirement(_poetry_word(word) if poetry else word, editable)
            editable = False
            if rec is not None:
                raw = word.text if poetry else rec.raw  # as written, and so no PEP 508 edit for --fix
                yield dataclasses.replace(rec, step=self.step, upgrade=self.upgrade, raw=raw, options=options)

    def _location(self, word: Word) -> tuple[int, int]:
        start, end = word.start, word.end
        if (
            word.quoted
            and end - start >= 2
            and self.index.text[start] in "'\""
            and self.index.text[end - 1] == self.index.text[start]
        ):
            return start + 1, end - 1
        return start, end

    def _requirement(self, word: Word, editable: bool) -> Requirement | None:
        exp = expand(word.text, self.variables(word.start), self.make)
        text = exp.text.strip()
        if (
            not text
            or text in (".", "..")
            or (text.startswith((".", "/")) and not _reqs.looks_like_archive(text))
        ):
            return None
        start, end = self._location(word)
        where = self.index.location(start, end)
        if exp.unresolved:
            name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", word.text)
            if name and normalize(name.group()) == FLASH_ATTN and not _reqs.looks_like_url(word.text):
                return Requirement(
                    FLASH_ATTN,
                    word.text,
                    where,
                    self.source,
                    unresolved=exp.unresolved,
                    scope=self.scope,
                    redirected=word.cut and self._cut_text(word),
                )
            wheel = _reqs.name_from_url(text)
            if wheel == FLASH_ATTN:  # a wheel URL whose tags are variables still names its version
                rec = _reqs.parse(text, where, self.source, scope=self.scope)
                return rec if isinstance(rec, Requirement) else None
            return None
        rec = _reqs.parse(text, where, self.source, scope=self.scope)
        if not isinstance(rec, Requirement):
            return None
        # Keep the words as written ("flash-attn==${FA_VER}"); the specifier holds their value.
        return dataclasses.replace(rec, raw=word.text, redirected=self._cut_text(word) if word.cut else None)

    def _cut_text(self, word: Word) -> str:
        """What the shell took as a redirect: '>=2.5' in an unquoted flash-attn>=2.5."""
        m = re.compile(r"[<>][^\s;&|]*").match(self.index.text, word.end)
        return m.group() if m else (word.cut or ">")

    def _include(self, word: Word, constraint: bool, options: InstallOptions) -> Iterator[Parsed]:
        exp = expand(word.text, self.variables(word.start), self.make)
        if exp.unresolved:
            return
        path = exp.text
        if self.include_map is not None:
            mapped = self.include_map(path, word.start)
            if mapped is None:
                return
            path = mapped
        start, end = self._location(word)
        yield Include(
            self.index.location(start, end),
            path,
            constraint=constraint,
            scope=self.scope,
            optional=True,
            step=self.step,
            upgrade=self.upgrade,
            options=options,
        )

    def _conda(self, args: list[Word], options: InstallOptions) -> Iterator[Parsed]:
        it = iter(args)
        for word in it:
            if word.text.startswith("-"):
                if word.text in _CONDA_ARGS:
                    next(it, None)
                continue
            exp = expand(word.text, self.variables(word.start), self.make)
            if exp.unresolved:
                continue
            start, end = self._location(word)
            where = self.index.location(start, end)
            rec = _conda.matchspec(
                exp.text, where, self.source, scope=self.scope, step=self.step, upgrade=self.upgrade
            )
            if isinstance(rec, Requirement):
                yield dataclasses.replace(rec, options=options)


def assignments(cmd: Command) -> Iterator[tuple[str, str, int]]:
    """``NAME=value`` words that set shell variables: a bare assignment or ``export``/``declare``."""
    words = cmd.words
    if words and words[0].text in ("export", "declare", "local", "readonly", "typeset"):
        words = [w for w in words[1:] if not w.text.startswith("-")]
    elif not all(_ASSIGN.match(w.text) for w in words):
        return  # VAR=x cmd sets VAR for cmd only
    for w in words:
        m = _ASSIGN.match(w.text)
        if m:
            yield m.group(1), m.group(2), w.start
