"""Where a command's packages come from and how its sdists get built: what the install rules read.

Index URLs (options and ``PIP_INDEX_URL``-style variables), uv's torch backend, and whether the build
is isolated (``--no-build-isolation``, ``PIP_NO_BUILD_ISOLATION``, PDM's and build's ``--no-isolation``).
"""

from __future__ import annotations

from fa_lint.model import FLASH_ATTN, InstallOptions, Location, normalize
from fa_lint.shell.commands import ASSIGN, Install, unwrap
from fa_lint.shell.parse import Command
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
# what turns off a tool's isolated build: uv and pip say --no-build-isolation, PDM and build say
# --no-isolation (build also -n)
_NO_ISOLATION = {"pdm": {"--no-isolation"}, "build": {"--no-isolation", "-n"}}


def install_options(  # noqa: C901 - complexity 25, to split or justify (issue 45)
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
        if eq and ASSIGN.match(word.text):
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
    pre = unsure = False
    urls: list[str] = []
    backend: str | None = None
    # (most commands run where none of these is set: nothing to look up, each up the scopes)
    if not _VARIABLES.isdisjoint(prefix) or state.scope.holds_any(_VARIABLES):
        if inst.installer == "pip" and variable("PIP_NO_BUILD_ISOLATION").lower() in _FALSE:
            build = "no-isolation"
        if inst.installer == "uv" and variable("UV_NO_BUILD_ISOLATION").lower() in _TRUE:
            build = "no-isolation"
        pre = inst.installer == "pip" and variable("PIP_PRE").lower() in _TRUE
        for k in _INDEX_VARIABLES:  # one that is set, but to no one value (a branch sets it): some index
            if k in prefix or state.scope.get(k) is not None:
                value = variable(k)
                urls += value.split()
                unsure = unsure or not value
        backend = (variable("UV_TORCH_BACKEND") or None) if inst.installer == "uv" else None
    no_deps = False
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
            elif flag in _INDEX_OPTIONS:
                unsure = True
        elif flag == "--pre":
            pre = True
        elif flag == "--no-build-isolation" or flag in _NO_ISOLATION.get(inst.installer, ()):
            build = "no-isolation"
        elif flag in ("--no-use-pep517", "--use-pep517") and build != "no-isolation":
            build = "legacy" if flag == "--no-use-pep517" else "pep517"
        elif flag in ("--no-deps", "--no-dependencies"):
            no_deps = True
    return InstallOptions(inst.installer, build, tuple(urls), backend, command, step, pre, no_deps, unsure)
