"""Where a command's packages come from and how its sdists get built: what the install rules read.

Index URLs (options and ``PIP_INDEX_URL``-style variables), uv's torch backend, and whether the build
is isolated (``--no-build-isolation``, ``PIP_NO_BUILD_ISOLATION``, PDM's and build's ``--no-isolation``).
"""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint._records import NamedTuple
from fa_lint.model import FLASH_ATTN, InstallOptions, Location, normalize
from fa_lint.shell.commands import ASSIGN, Install, unwrap
from fa_lint.shell.parse import Command, Word
from fa_lint.shell.variables import State, expand

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
_VARIABLES = frozenset(
    {*_INDEX_VARIABLES, "PIP_NO_BUILD_ISOLATION", "UV_NO_BUILD_ISOLATION", "PIP_PRE", "UV_TORCH_BACKEND"}
)
_TRUE = {"y", "yes", "t", "true", "on", "1"}
_FALSE = {"n", "no", "f", "false", "off", "0"}


class Tool(NamedTuple):
    """What one installer reads, beyond the options every one of them shares (``_shared``): its
    variables, and its own spelling of a build without isolation."""

    isolated: bool = True  # whether it builds an sdist isolated unless told otherwise
    no_isolation: frozenset[str] = frozenset({"--no-build-isolation"})  # the options that turn it off
    # the variable that turns isolation off, and the values that do (pip reads PIP_NO_BUILD_ISOLATION
    # as the value of build_isolation: strtobool in pip/_internal/cli/parser.py, so "0" turns it off)
    no_isolation_variable: tuple[str, frozenset[str]] | None = None
    pre_variable: str = ""  # the variable that admits pre-releases
    backend_variable: str = ""  # the variable that picks the torch backend


# The installers by name (``Install.installer``); any other (Poetry, conda) reads the shared options only.
TOOLS = {
    "pip": Tool(no_isolation_variable=("PIP_NO_BUILD_ISOLATION", frozenset(_FALSE)), pre_variable="PIP_PRE"),
    "uv": Tool(
        no_isolation_variable=("UV_NO_BUILD_ISOLATION", frozenset(_TRUE)), backend_variable="UV_TORCH_BACKEND"
    ),
    # PDM and build say --no-isolation (build also -n)
    "pdm": Tool(no_isolation=frozenset({"--no-build-isolation", "--no-isolation"})),
    "build": Tool(no_isolation=frozenset({"--no-build-isolation", "--no-isolation", "-n"})),
    # setup.py runs in the interpreter that runs it, torch and all
    "setup.py": Tool(isolated=False),
}
_OTHER = Tool()


def install_options(
    inst: Install, cmd: Command, state: State, make: bool, command: Location | None = None, step: int = 0
) -> InstallOptions:
    """The options of one install command that say where packages come from and how sdists build.

    Variables come from the command's own ``VAR=x`` prefixes (also after ``env``/``sudo``), then from
    the shell's; a variable a branch may set either way turns nothing off. What the installer itself
    reads is its ``Tool``.
    """
    tool = TOOLS.get(inst.installer, _OTHER)
    found = _Found(tool)
    values = _Values(cmd, state, make)
    # (most commands run where none of these is set: nothing to look up, each up the scopes)
    if not _VARIABLES.isdisjoint(values.prefix) or state.scope.holds_any(_VARIABLES):
        _variables(tool, values, found)
    args = iter(inst.args)
    for word in args:
        _option(tool, word, args, values, found)
    return InstallOptions(
        inst.installer,
        found.build,
        tuple(found.urls),
        found.backend,
        command,
        step,
        found.pre,
        found.no_deps,
        found.unsure,
    )


class _Found:
    """What the command's variables and options have said so far (a plain class: each one changes it)."""

    __slots__ = ("backend", "build", "no_deps", "pre", "unsure", "urls")

    def __init__(self, tool: Tool) -> None:
        self.build = "" if tool.isolated else "no-isolation"
        self.pre = False
        self.unsure = False  # an index is set to no one value (a branch sets it): some index
        self.urls: list[str] = []
        self.backend: str | None = None
        self.no_deps = False


class _Values:
    """The one value a word or a variable surely has, for one command: "" when it has none, or several."""

    __slots__ = ("make", "prefix", "state")

    def __init__(self, cmd: Command, state: State, make: bool) -> None:
        self.state = state
        self.make = make
        self.prefix = dict(cmd.env)
        first = unwrap(cmd.words)
        for word in cmd.words:  # `env X=1 pip ...`, `sudo X=1 pip ...`: the prefix command's assignments
            if first and word.start >= first[0].start:
                break
            name, eq, value = word.text.partition("=")
            if eq and ASSIGN.match(word.text):
                self.prefix[name] = value

    def one(self, text: str) -> str:
        exp = expand(text, self.state.scope, self.make)
        return "" if exp.unresolved or len(exp.texts) > 1 else exp.text.strip()

    def variable(self, name: str) -> str:
        if name in self.prefix:
            return self.one(self.prefix[name])
        values = self.state.scope.get(name)  # kept expanded, or as written when that failed
        if values is None or len(values) != 1 or values[0] is None or "$" in values[0] or "`" in values[0]:
            return ""
        return values[0].strip()

    def is_set(self, name: str) -> bool:
        return name in self.prefix or self.state.scope.get(name) is not None


def _variables(tool: Tool, values: _Values, found: _Found) -> None:
    """What the installer's variables and the index variables say."""
    if tool.no_isolation_variable is not None:
        name, off = tool.no_isolation_variable
        if values.variable(name).lower() in off:
            found.build = "no-isolation"
    found.pre = bool(tool.pre_variable) and values.variable(tool.pre_variable).lower() in _TRUE
    for k in _INDEX_VARIABLES:  # one that is set, but to no one value (a branch sets it): some index
        if values.is_set(k):
            value = values.variable(k)
            found.urls += value.split()
            found.unsure = found.unsure or not value
    if tool.backend_variable:
        found.backend = values.variable(tool.backend_variable) or None


def _option(tool: Tool, word: Word, args: Iterator[Word], values: _Values, found: _Found) -> None:
    """One option of the command (its value taken from ``args`` when it is the next word)."""
    flag, eq, value = word.text.partition("=")
    if flag in _VALUED:
        if not eq:
            following = next(args, None)
            value = following.text if following else ""
        _valued(flag, values.one(value), found)
    elif flag == "--pre":
        found.pre = True
    elif flag in tool.no_isolation:
        found.build = "no-isolation"
    elif flag in ("--no-use-pep517", "--use-pep517") and found.build != "no-isolation":
        found.build = "legacy" if flag == "--no-use-pep517" else "pep517"
    elif flag in ("--no-deps", "--no-dependencies"):
        found.no_deps = True


def _valued(flag: str, value: str, found: _Found) -> None:
    """An option with a value: the torch backend, a package built without isolation, an index."""
    if flag == "--torch-backend":
        found.backend = value or None
    elif flag == "--no-build-isolation-package":
        found.build = "no-isolation" if normalize(value or "-") == FLASH_ATTN else found.build
    elif value:
        found.urls.append(value)
    elif flag in _INDEX_OPTIONS:
        found.unsure = True
