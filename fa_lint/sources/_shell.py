"""What the commands of a script install: pip, uv, Poetry, PDM, conda, source builds, wheel two-steps.

``_bash`` walks the script and hands over each command it runs, certain or possible, with the
variables and working directory in force. Here the command's words become records: installs
(``Requirement``, ``Include``) and uninstalls (``Uninstall``), in command order (``step``). The
files a script makes along the way are followed within the file:

- ``git clone [-b TAG] .../flash-attention [DIR]`` (and a later ``git checkout TAG``) is built by
  ``pip install .``, ``pip install -e DIR``, ``python setup.py install|develop|bdist_wheel``,
  ``pip wheel .``, in the clone (flash-attn at that tag), in ``hopper`` (flash-attn-3) or in
  ``flash_attn/cute`` (flash-attn-4); a build of a branch, a commit or nothing is a version the
  file does not say;
- ``pip wheel SPEC -w DIR`` / ``pip download SPEC -d DIR`` (and a build's ``dist/``) are installed by
  ``pip install DIR/*.whl`` or ``pip install --no-index --find-links DIR NAME``: the spec is judged
  at that install, where it is written.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import posixpath
import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from packaging.specifiers import SpecifierSet

from fa_lint.model import (
    FLASH_ATTN,
    Include,
    InstallOptions,
    Location,
    Parsed,
    ParseProblem,
    Requirement,
    Uninstall,
    normalize,
)
from fa_lint.sources import _conda, _poetry, _reqs
from fa_lint.sources._bash import Chunk, Command, State, Walk, Word, expand
from fa_lint.sources._text import TextIndex

# --- which tool a command runs -------------------------------------------------------------------

_PREFIXES = {  # a command that runs the next one -> its options that take a value
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-U", "-r", "-t", "-T"},
    "env": {"-u", "-C", "-S"},
    "xargs": {"-n", "-I", "-P", "-L", "-s", "-d", "-E", "-a"},
    "nice": {"-n"},
    "stdbuf": {"-i", "-o", "-e"},
    "time": set(),
    "nohup": set(),
    "exec": set(),
    "command": set(),
    "builtin": set(),
}
_FAMILY = frozenset(_reqs.SUBDIRECTORIES.values())  # flash-attn, flash-attn-3, flash-attn-4

_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
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
    "--build-option",
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
_RUNNERS = {  # tool run -> the options of "run" that take a value
    "conda": {"-n", "--name", "-p", "--prefix", "--cwd"},
    "uv": {
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
    },
    "poetry": set(),
    "pipenv": set(),
    "pdm": set(),
}
_PYTHON = re.compile(r"^(?:.*/)?python(?:\d+(?:\.\d+)*)?(?:\.exe)?$")
_PIP = re.compile(r"^(?:.*/)?pip(?:\d+(?:\.\d+)*)?(?:\.exe)?$")
_CONDA = re.compile(r"^(?:.*/)?(?:conda|mamba|micromamba)$")
_SHELLS = {"bash", "sh", "zsh", "dash"}
_VERBS = {"add": "install", "install": "install", "remove": "uninstall", "uninstall": "uninstall"}


class Install(NamedTuple):
    """One packaging command: its tool, what it does and its arguments."""

    tool: str  # "pip" (also uv, PDM), "poetry" (its name@constraint words), "conda", "setup.py", "build"
    verb: str  # "install", "uninstall", "wheel", "download"; setup.py's own command
    args: list[Word]
    # the program that installs or builds: "pip", "uv", "poetry", "pdm", "conda", "setup.py", "build"
    installer: str = "pip"


def _after_options(words: list[Word], with_value: set[str]) -> list[Word]:
    """The words after the leading options (``--name ENV`` takes its value along)."""
    rest = list(words)
    while rest and rest[0].text.startswith("-"):
        flag = rest.pop(0).text
        if flag in with_value and rest:
            rest.pop(0)
    return rest


def unwrap(words: list[Word]) -> list[Word]:
    """The command a prefix runs: ``sudo -H``, ``env X=1``, ``conda run -n ENV``, ``uv run``..."""
    rest = list(words)
    while rest:
        head = posixpath.basename(rest[0].text)
        if head in _PREFIXES or _ASSIGN.match(rest[0].text):
            rest.pop(0)
            while rest and (rest[0].text.startswith("-") or _ASSIGN.match(rest[0].text)):
                flag = rest.pop(0).text
                if flag in _PREFIXES.get(head, ()) and rest:
                    rest.pop(0)
        elif len(rest) > 1 and rest[1].text == "run" and (head in _RUNNERS or _CONDA.match(head)):
            rest = _after_options(rest[2:], _RUNNERS.get(head, _RUNNERS["conda"]))
        else:
            return rest
    return rest


def install(words: list[Word]) -> Install | None:
    """The packaging command in ``pip install`` (any spelling), ``uv add``, ``conda install``...,
    ``python setup.py install`` or ``python -m build``; ``conda run``/``uv run`` are followed."""
    words = unwrap(words)
    if not words:
        return None
    head, rest = posixpath.basename(words[0].text), words[1:]
    front = "pip"
    if _PYTHON.match(head):
        while rest and rest[0].text.startswith("-") and rest[0].text != "-m":
            rest = rest[1:]
        if rest and posixpath.basename(rest[0].text) == "setup.py":
            verbs = [w for w in rest[1:] if not w.text.startswith("-")]
            return Install("setup.py", verbs[0].text, rest[1:], "setup.py") if verbs else None
        if len(rest) < 2 or rest[0].text != "-m":
            return None
        if rest[1].text == "build":
            return Install("build", "wheel", rest[2:], "build")
        if rest[1].text != "pip":
            return None
        rest = rest[2:]
    elif head in ("uv", "uv.exe"):
        if rest and rest[0].text in ("add", "remove"):
            return Install("pip", _VERBS[rest[0].text], rest[1:], "uv")
        if rest and rest[0].text == "build":
            return Install("build", "wheel", rest[1:], "uv")
        if not rest or rest[0].text != "pip":
            return None
        rest, front = rest[1:], "uv"
    elif head in ("poetry", "pdm") and rest and rest[0].text in ("add", "remove"):
        return Install(head if head == "poetry" else "pip", _VERBS[rest[0].text], rest[1:], head)
    elif _CONDA.match(head):
        if not rest or rest[0].text not in _VERBS or rest[0].text == "add":
            return None
        return Install("conda", _VERBS[rest[0].text], rest[1:], "conda")
    elif not _PIP.match(head):
        return None
    rest = _after_options(rest, _PIP_GLOBAL_ARGS)
    if not rest or rest[0].text not in ("install", "uninstall", "wheel", "download"):
        return None
    return Install("pip", rest[0].text, rest[1:], front)


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
_VALUED = {*_INDEX_OPTIONS, "--torch-backend", "--no-build-isolation-package"}  # options with a value
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
# what turns off a tool's isolated build: uv and pip say --no-build-isolation, PDM and build say
# --no-isolation (build also -n)
_NO_ISOLATION = {"pdm": {"--no-isolation"}, "build": {"--no-isolation", "-n"}}


def install_options(
    inst: Install, cmd: Command, state: State, make: bool, command: Location | None = None, step: int = 0
) -> InstallOptions:
    """The options of one install command that say where packages come from and how sdists build.

    Variables come from the command's own ``VAR=x`` prefixes (also after ``env``/``sudo``), then from
    the shell's. pip reads ``PIP_NO_BUILD_ISOLATION`` as the value of ``build_isolation`` (strtobool in
    ``pip/_internal/cli/parser.py``), so ``PIP_NO_BUILD_ISOLATION=0`` is what turns isolation off; a
    variable a branch may set either way turns nothing off.
    """
    prefix = dict(cmd.env)
    first = unwrap(cmd.words)
    for word in cmd.words:  # `env X=1 pip ...`, `sudo X=1 pip ...`: assignments the prefix command makes
        if first and word.start >= first[0].start:
            break
        name, eq, value = word.text.partition("=")
        if eq and _ASSIGN.match(word.text):
            prefix[name] = value

    def one(text: str) -> str:
        """The one value a word surely has; "" when it has none, or several (a branch set it)."""
        exp = expand(text, state.scope, make)
        return "" if exp.unresolved or len(exp.texts) > 1 else exp.text.strip()

    def variable(name: str) -> str:
        if name in prefix:
            return one(prefix[name])
        values = state.scope.get(name)  # kept expanded, or as written when that failed
        if values is None or len(values) != 1 or values[0] is None or "$" in values[0] or "`" in values[0]:
            return ""
        return values[0].strip()

    build = ""
    if inst.installer == "setup.py":
        build = "no-isolation"  # setup.py runs in the interpreter that runs it, torch and all
    if inst.installer == "pip" and variable("PIP_NO_BUILD_ISOLATION").lower() in _FALSE:
        build = "no-isolation"
    if inst.installer == "uv" and variable("UV_NO_BUILD_ISOLATION").lower() in _TRUE:
        build = "no-isolation"
    urls = [u for k in _INDEX_VARIABLES for u in variable(k).split()]
    backend = (variable("UV_TORCH_BACKEND") or None) if inst.installer == "uv" else None
    args = iter(inst.args)
    for word in args:
        flag, eq, value = word.text.partition("=")
        if flag in _VALUED:
            if not eq:
                following = next(args, None)
                value = following.text if following else ""
            value = one(value)
            if flag == "--torch-backend":
                backend = value or None
            elif flag == "--no-build-isolation-package":
                build = "no-isolation" if normalize(value or "-") == FLASH_ATTN else build
            elif value:
                urls.append(value)
        elif flag == "--no-build-isolation" or flag in _NO_ISOLATION.get(inst.installer, ()):
            build = "no-isolation"
        elif flag in ("--no-use-pep517", "--use-pep517") and build != "no-isolation":
            build = "legacy" if flag == "--no-use-pep517" else "pep517"
    return InstallOptions(inst.installer, build, tuple(urls), backend, command, step)


def _poetry_word(word: Word) -> Word:
    """``poetry add name@^2.5`` as the PEP 508 text pip would read (``name>=2.5,<3``)."""
    name, at, constraint = word.text.partition("@")
    if not at or "://" in constraint or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._\[\],-]*", name.strip()):
        return word
    if constraint.strip() == "latest":
        return word._replace(text=name.strip())
    try:
        alternatives = _poetry.specifiers(constraint)
    except _poetry.PoetryConstraintError:
        return word  # left as written: not a requirement fa-lint can read
    if len(alternatives) != 1:
        return word
    return word._replace(text=f"{name.strip()}{alternatives[0]}")


def _option(word: Word, names: tuple[str, ...], args: Iterator[Word]) -> Word | None:
    """The value of ``-w DIR``, ``-wDIR``, ``--wheel-dir DIR`` or ``--wheel-dir=DIR`` at ``word``."""
    text = word.text
    for name in names:
        if text == name:
            return next(args, None)
        glued = name + "=" if name.startswith("--") else name
        if text.startswith(glued) and len(text) > len(glued):
            offset = len(glued) if not word.quoted else 0
            return Word(text[len(glued) :], word.start + offset, word.end, word.quoted)
    return None


def _path(text: str) -> bool:
    """pip reads an argument as a local path when it has a slash or starts with a dot."""
    return not _reqs.looks_like_url(text) and ("/" in text or text.startswith(".")) and "@" not in text


# --- source builds --------------------------------------------------------------------------------

_GIT_VALUE_ARGS = {
    "-b",
    "--branch",
    "--depth",
    "-j",
    "--jobs",
    "-c",
    "--config",
    "-o",
    "--origin",
    "--reference",
}
_COMMIT = re.compile(r"^[0-9a-f]{7,40}$")


class _Clone:
    def __init__(self, url: str) -> None:
        self.url = url
        self.ref: str | None = None  # -b TAG or a later checkout
        self.ref_at: Location | None = None  # where that ref is written
        self.unresolved: str | None = None


class _Wheel:
    """A wheel a command put in a folder, waiting for the install that takes it from there."""

    def __init__(self, record: Requirement) -> None:
        self.record = record
        self.taken = False


def _dist_file(name: str, version: str) -> str:
    return f"{name.replace('-', '_')}-{version or '0'}-py3-none-any.whl"


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
        self.clones: dict[str, _Clone] = {}  # folder -> what was cloned there
        self.wheels: dict[str, list[_Wheel]] = {}  # folder -> wheels put there
        self.fetched: str | None = None  # the ref of the last `git fetch REMOTE REF`, for FETCH_HEAD

    # the walk's entry points

    def run(self, start: int, end: int, state: State, text: str | None = None, make: bool = False) -> None:
        """Read the file's text from ``start`` to ``end`` as a script (``text``: what the parser reads)."""
        chunk = Chunk(self.index.text[start:end], start, parse=text)
        Walk(chunk, self, make).run(state)

    def command(self, cmd: Command, state: State, possible: bool, make: bool) -> Word | None:
        words = self._resolve_head(cmd.words, state, make)
        if not words:
            return None
        head = posixpath.basename(words[0].text)
        if head in _SHELLS:
            flags = [w for w in words[1:] if w.text.startswith("-")]
            rest = [w for w in words[1:] if not w.text.startswith("-")]
            if any("c" in f.text.lstrip("-") and not f.text.startswith("--") for f in flags) and rest:
                return rest[0]
            return None
        if head == "git":
            self._git(words[1:], state, cmd, make)
            return None
        inst = install(words)
        if inst is None:
            return None
        self.step += 1
        upgrade = any(w.text in _UPGRADE for w in inst.args)
        where = self.index.location(cmd.start, cmd.end) if cmd.end > cmd.start else None
        options = install_options(inst, cmd, state, make, where, self.step)  # once per command
        context = _Context(state, possible, make, cmd, upgrade, options)
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

    def problem(self, start: int, end: int, message: str) -> None:
        self.records.append(ParseProblem(self.index.location(start, end), message))

    def exec_form(self, words: list[Word], state: State) -> None:
        """Docker's ``RUN ["pip", "install", ...]``: one command, no shell in between."""
        self.command(
            Command(words, words[0].start, words[-1].end) if words else Command([]), state, False, False
        )

    def drain(self) -> list[Parsed]:
        out, self.records = self.records, []
        return out

    def finish(self) -> list[Parsed]:
        """What is left: wheels built or downloaded and never installed in this file are judged where made."""
        for found in self.wheels.values():
            for w in found:
                if not w.taken:
                    w.taken = True
                    self.records.append(w.record)
        return self.drain()

    def copy(self, source: str, dest: str) -> None:
        """``COPY --from=stage SRC DEST``: wheels made in SRC are now in DEST too."""
        src, dst = posixpath.normpath(source), posixpath.normpath(dest)
        for folder, found in list(self.wheels.items()):
            if folder == src or folder.startswith(src + "/"):
                self.wheels.setdefault(posixpath.join(dst, folder[len(src) :].lstrip("/")).rstrip("/"), found)

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
            links = _option(word, ("-f", "--find-links"), args)
            if links is not None:
                find_links.append(self._folder(links.text, c))
                continue
            if text.startswith("-"):
                if text in _PIP_INSTALL_ARGS:
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
                rec = self._take(find_links, rec.name, "") or rec
            self._emit(rec, c)

    def _target(self, word: Word, editable: bool, c: _Context) -> Requirement | None:
        """One install argument: a requirement, a local folder, or wheels from a folder."""
        text = expand(word.text, c.state.scope, c.make).text.strip()
        path = re.sub(r"\[[^\]]*\]$", "", text)  # .[dev]
        if _reqs.looks_like_archive(path) and any(ch in path for ch in "*?["):
            folder, _, pattern = path.rpartition("/")
            return self._take([self._folder(folder or ".", c)], None, pattern)
        if (_path(path) and not _reqs.looks_like_archive(path)) or (
            editable and not _reqs.looks_like_url(path)
        ):
            return self._built(self._folder(re.sub(r"\[[^\]]*\]$", "", word.text), c), c)
        return self._requirement(word, c)

    def _requirement(self, word: Word, c: _Context) -> Requirement | None:
        exp = expand(word.text, c.state.scope, c.make)
        text = exp.text.strip()
        if (
            not text
            or text in (".", "..")
            or (text.startswith((".", "/")) and not _reqs.looks_like_archive(text))
        ):
            return None
        where = self._location(word)
        if exp.unresolved:
            name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", word.text)
            family = normalize(name.group()) if name else ""
            # flash-attn-3 and -4 too: no mention of the family is dropped (issue 10), judged or not
            if family in _FAMILY and not _reqs.looks_like_url(word.text):
                return Requirement(
                    family,
                    word.text,
                    where,
                    self.source,
                    unresolved=exp.unresolved,
                    redirected=self._cut_text(word) if word.cut else None,
                    **self._fields(c),
                )
            wheel = _reqs.name_from_url(text)
            if wheel == FLASH_ATTN:  # a wheel URL whose tags are variables still names its version
                rec = _reqs.parse(text, where, self.source, **self._fields(c))
                return rec if isinstance(rec, Requirement) else None
            return None
        # Keep the words as written ("flash-attn==${FA_VER}"); the specifier holds their value.
        cut = self._cut_text(word) if word.cut else None
        fields = {"raw": word.text, "redirected": cut, **self._fields(c)}
        if len(exp.texts) == 1:
            rec = _reqs.parse(exp.texts[0].strip(), where, self.source, **fields)
            return rec if isinstance(rec, Requirement) else None
        found = [_reqs.parse(t.strip(), where, self.source) for t in exp.texts]
        recs = [r for r in found if isinstance(r, Requirement)]
        if len(recs) != len(found) or len({r.name for r in recs}) != 1:
            return None
        return dataclasses.replace(recs[0] if len(recs) == 1 else _either(recs), **fields)

    def _cut_text(self, word: Word) -> str:
        """What the shell took as a redirect: '>=2.5' in an unquoted flash-attn>=2.5."""
        m = re.compile(r"[<>][^\s;&|]*").match(self.index.text, word.end)
        return m.group() if m else (word.cut or ">")

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
                if word.text in _CONDA_ARGS:
                    next(it, None)
                continue
            exp = expand(word.text, c.state.scope, c.make)
            if exp.unresolved:
                continue
            rec = _conda.matchspec(exp.text, self._location(word), self.source, **self._fields(c))
            if isinstance(rec, Requirement):
                self._emit(rec, c)

    def _uninstall(self, inst: Install, c: _Context) -> None:
        args = iter(inst.args)
        for word in args:
            if word.text.startswith("-"):
                if word.text in ("-r", "--requirement", *_CONDA_ARGS, *_PIP_INSTALL_ARGS):
                    next(args, None)
                continue
            text = expand(word.text, c.state.scope, c.make).text
            m = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", text.split("::")[-1])
            if m:
                self._emit(Uninstall(self._location(word), normalize(m.group())), c)

    # wheels: made in one command, installed by another

    def _folder(self, text: str, c: _Context) -> str:
        exp = expand(text, c.state.scope, c.make)
        path = text if exp.unresolved else exp.text  # unknown folders stay as written, to match
        return posixpath.normpath(posixpath.join(c.state.cwd, path))

    def _wheel(self, inst: Install, c: _Context) -> None:
        """``pip wheel SPEC -w DIR`` / ``pip download SPEC -d DIR``: the wheels wait in DIR."""
        names = ("-w", "--wheel-dir") if inst.verb == "wheel" else ("-d", "--dest", "--dest-dir")
        args = iter(inst.args)
        folder = c.state.cwd
        made: list[Requirement] = []
        for word in args:
            value = _option(word, names, args)
            if value is not None:
                folder = self._folder(value.text, c)
                continue
            if word.text.startswith("-"):
                if word.text in _PIP_INSTALL_ARGS or word.text in (
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
        self.wheels.setdefault(posixpath.normpath(folder), []).extend(_Wheel(r) for r in made)

    def _take(self, folders: list[str], name: str | None, pattern: str) -> Requirement | None:
        """The wheel an install takes from a folder: by name (--find-links) or by file pattern."""
        for folder in folders:
            for w in self.wheels.get(folder, []):
                r = w.record
                version = str(r.version or next((s.version for s in r.specifier if s.operator == "=="), ""))
                if (name and r.name == name) or (
                    pattern and fnmatch.fnmatch(_dist_file(r.name, version), pattern)
                ):
                    w.taken = True
                    return r
        return None

    def _setup(self, inst: Install, c: _Context) -> None:
        """``python setup.py install|develop|bdist_wheel`` and ``python -m build`` in the working folder."""
        if inst.tool == "setup.py" and inst.verb not in ("install", "develop", "bdist_wheel"):
            return
        source, out = ".", None
        args = iter(inst.args)
        for word in args:
            value = _option(word, ("-d", "--dist-dir", "-o", "--outdir"), args)
            if value is not None:
                out = value.text
            elif inst.tool == "build" and not word.text.startswith("-"):
                source = word.text
        folder = self._folder(source, c)
        rec = self._built(folder, c)
        if rec is None:
            return
        if inst.verb in ("install", "develop"):
            self._emit(rec, c)
            return
        dist = self._folder(out, c) if out else posixpath.join(folder, "dist")
        made = dataclasses.replace(
            rec, scope=self.scope, step=self.step, possible=c.possible, options=c.options
        )
        self.wheels.setdefault(posixpath.normpath(dist), []).append(_Wheel(made))

    # source builds

    def _git(self, args: list[Word], state: State, cmd: Command, make: bool) -> None:
        cwd = state.cwd
        while len(args) >= 2 and args[0].text in ("-C", "-c"):
            if args[0].text == "-C":
                cwd = self._folder(args[1].text, _Context(state, False, make, cmd, False))
            args = args[2:]
        if not args:
            return
        verb, rest = args[0].text, args[1:]
        c = _Context(State(state.scope, cwd), False, make, cmd, False)
        if verb == "clone":
            self._clone(rest, c)
        elif verb in ("checkout", "switch", "reset"):
            self._checkout(rest, c)
        elif verb == "fetch":
            positional = [w for w in rest if not w.text.startswith("-")]
            self.fetched = positional[-1].text if len(positional) >= 2 else None

    def _clone(self, args: list[Word], c: _Context) -> None:
        positional: list[Word] = []
        ref: Word | None = None
        it = iter(args)
        for word in it:
            value = _option(word, ("-b", "--branch"), it)
            if value is not None:
                ref = value
            elif word.text.startswith("-"):
                if word.text in _GIT_VALUE_ARGS:
                    next(it, None)
            else:
                positional.append(word)
        if not positional:
            return
        url = expand(positional[0].text, c.state.scope, c.make).text
        repo = url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
        if repo.lower() not in _reqs.FLASH_REPOS:
            return
        clone = _Clone(url.removeprefix("git+"))
        if ref is not None:
            self._set_ref(clone, ref, c)
        self.clones[self._folder(positional[1].text if len(positional) > 1 else repo, c)] = clone

    def _set_ref(self, clone: _Clone, word: Word, c: _Context) -> None:
        exp = expand(word.text, c.state.scope, c.make)
        clone.ref = word.text if exp.unresolved else exp.text
        clone.unresolved = exp.unresolved
        clone.ref_at = self._location(word)
        if clone.ref == "FETCH_HEAD" and self.fetched:
            clone.ref = self.fetched

    def _checkout(self, args: list[Word], c: _Context) -> None:
        found = self._clone_of(c.state.cwd)
        if found is None:
            return
        it = iter(args)
        ref: Word | None = None
        for word in it:
            if word.text == "--":
                break
            if word.text in ("-b", "-B", "-c", "-C"):
                next(it, None)
            elif not word.text.startswith("-"):
                ref = ref or word
        if ref is not None:
            self._set_ref(found[0], ref, c)

    def _clone_of(self, folder: str) -> tuple[_Clone, str] | None:
        """The clone a folder is in, and the folder's path inside it."""
        path, inside = folder, ""
        while True:
            if path in self.clones:
                return self.clones[path], inside
            parent, base = posixpath.split(path)
            if not base or parent == path:
                return None
            path, inside = parent, posixpath.join(base, inside).rstrip("/")

    def _built(self, folder: str, c: _Context) -> Requirement | None:
        """What building ``folder`` installs, when it is (a part of) a flash-attention clone."""
        found = self._clone_of(folder)
        if found is None:
            return None
        clone, inside = found
        name = _reqs.SUBDIRECTORIES.get(inside)
        if name is None:
            return None
        ref = clone.ref
        for prefix in ("refs/tags/", "tags/", "origin/"):
            ref = ref.removeprefix(prefix) if ref else ref
        sub = f"#subdirectory={inside}" if inside else ""
        url = f"git+{clone.url}" + (f"@{ref}" if ref else "") + sub
        version = _reqs.tag_version(ref) if name == FLASH_ATTN and not clone.unresolved else None
        if ref is None:
            what = f"{clone.url} on its default branch"
        elif version is not None or name != FLASH_ATTN:
            what = f"{clone.url} at {ref}"
        elif _COMMIT.match(ref):
            what = f"{clone.url} at commit {ref}"
        else:
            what = f"{clone.url} at {ref!r}, a branch or a tag that names no release"
        where = clone.ref_at or self.index.location(c.cmd.start, c.cmd.end)
        return Requirement(
            name,
            url,
            where,
            self.source,
            version=version,
            url=url,
            unresolved=clone.unresolved,
            build=what,
        )


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
