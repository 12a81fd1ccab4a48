"""Which packaging tool a command runs, and with which verb: ``pip install`` in any spelling,
``uv pip``/``uv add``, ``poetry add``, ``pdm add``, ``conda``/``mamba``, ``python setup.py``,
``python -m build``; the prefixes that run another command (``sudo``, ``env``, ``conda run``) are
looked through. Also the option tables the install readers share: which options take a value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from fa_lint._records import NamedTuple
from fa_lint.shell.parse import Word, basename

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

ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
PIP_GLOBAL_ARGS = {
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
PIP_INSTALL_ARGS = {
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
    *PIP_GLOBAL_ARGS,
}
CONDA_ARGS = {"-c", "--channel", "-n", "--name", "-p", "--prefix", "--file", "--override-channels"}
# pip and uv: options that install even over a version already there that satisfies the requirement
UPGRADE = {"-U", "--upgrade", "--force-reinstall", "-I", "--ignore-installed", "--reinstall", "--update-all"}
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
    if not words:
        return words
    first = words[0].text
    if (  # most commands run themselves: the words as they are, not a copy
        basename(first) not in _PREFIXES
        and "=" not in first
        and not (len(words) > 1 and words[1].text == "run")
    ):
        return words
    rest = list(words)
    while rest:
        head = basename(rest[0].text)
        if head in _PREFIXES or ASSIGN.match(rest[0].text):
            rest.pop(0)
            while rest and (rest[0].text.startswith("-") or ASSIGN.match(rest[0].text)):
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
    head = basename(words[0].text)
    if head[:1] not in ("p", "u", "c", "m"):  # python, pip, uv, poetry, pdm, conda, mamba, micromamba
        return None
    read = _reader(head)
    return read(head, words[1:]) if read is not None else None


def _reader(head: str) -> Callable[[str, list[Word]], Install | None] | None:
    """How the tool ``head`` names says what it does: each tool's words after its name."""
    if _PYTHON.match(head):
        return _python
    if head in ("uv", "uv.exe"):
        return _uv
    if head in ("poetry", "pdm"):
        return _project_tool
    if _CONDA.match(head):
        return _conda
    return _pip if _PIP.match(head) else None


def _pip(head: str, rest: list[Word], front: str = "pip") -> Install | None:
    """``pip [global options] install|uninstall|wheel|download ARGS`` (``front``: the program whose pip
    interface it is, ``uv`` for ``uv pip``)."""
    rest = _after_options(rest, PIP_GLOBAL_ARGS)
    if not rest or rest[0].text not in ("install", "uninstall", "wheel", "download"):
        return None
    return Install("pip", rest[0].text, rest[1:], front)


def _python(head: str, rest: list[Word]) -> Install | None:
    """``python setup.py VERB``, ``python -m build``, ``python -m pip ...``."""
    while rest and rest[0].text.startswith("-") and rest[0].text != "-m":
        rest = rest[1:]
    if rest and basename(rest[0].text) == "setup.py":
        verbs = [w for w in rest[1:] if not w.text.startswith("-")]
        return Install("setup.py", verbs[0].text, rest[1:], "setup.py") if verbs else None
    if len(rest) < 2 or rest[0].text != "-m":
        return None
    if rest[1].text == "build":
        return Install("build", "wheel", rest[2:], "build")
    return _pip(head, rest[2:]) if rest[1].text == "pip" else None


def _uv(head: str, rest: list[Word]) -> Install | None:
    """``uv add``/``uv remove`` (pip's arguments), ``uv build``, ``uv pip ...``."""
    verb = rest[0].text if rest else ""
    if verb in ("add", "remove"):
        return Install("pip", _VERBS[verb], rest[1:], "uv")
    if verb == "build":
        return Install("build", "wheel", rest[1:], "uv")
    return _pip(head, rest[1:], "uv") if verb == "pip" else None


def _project_tool(head: str, rest: list[Word]) -> Install | None:
    """``poetry add``/``remove`` (its own ``name@constraint`` words), ``pdm add``/``remove`` (pip's)."""
    if not rest or rest[0].text not in ("add", "remove"):
        return None
    return Install(head if head == "poetry" else "pip", _VERBS[rest[0].text], rest[1:], head)


def _conda(head: str, rest: list[Word]) -> Install | None:
    """``conda env create|update`` (from a file), ``conda create``, ``conda install|remove|uninstall``;
    mamba's and micromamba's the same."""
    if len(rest) > 1 and rest[0].text == "env" and rest[1].text in ("create", "update"):
        return Install("conda", "env", rest[2:], "conda")  # from an environment file
    if rest and rest[0].text == "create":
        return Install("conda", "create", rest[1:], "conda")  # specs, or -f FILE (micromamba)
    if not rest or rest[0].text not in _VERBS or rest[0].text == "add":
        return None
    return Install("conda", _VERBS[rest[0].text], rest[1:], "conda")


def option(word: Word, names: tuple[str, ...], args: Iterator[Word]) -> Word | None:
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


_SHELL_LONG_ARGS = {"--rcfile", "--init-file"}  # bash's long options that take a value


def shell_script(texts: list[str]) -> int | None:
    """Which of a shell's arguments (``texts[0]`` the shell) is its ``-c`` script: the first one after
    its options, when a short option cluster holds ``c`` (``-c``, ``-lc``, ``-e -c``). ``-o``/``-O``
    (and ``+o``/``+O``) take the next argument (``bash -o pipefail -c ...``); ``--`` ends the options."""
    command, i = False, 1
    while i < len(texts):
        t = texts[i]
        if t in {"--", "-"}:
            i += 1
            break
        if t.startswith("--"):
            i += 2 if t in _SHELL_LONG_ARGS else 1
            continue
        if len(t) < 2 or t[0] not in "-+":
            break
        command = command or (t[0] == "-" and "c" in t)
        i += 1 + sum(ch in "oO" for ch in t[1:])
    return i if command and i < len(texts) else None
