"""The records every layer shares: where a thing is, what a file asks for, what fa-lint found.

Only the standard library and ``packaging`` here; everything else depends on this module.

Every record is a NamedTuple: as immutable as a frozen dataclass, derived with ``_replace``, and a
fifth of the cost to define on every start (a frozen dataclass with slots costs about a millisecond)
and to make (a frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``).
"""

from __future__ import annotations

import enum
import functools
import re

from packaging.ranges import VersionRange
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from fa_lint._records import NamedTuple

FLASH_ATTN = "flash-attn"
FA3, FA4 = "flash-attn-3", "flash-attn-4"  # FlashAttention 3 (hopper/) and 4 (flash_attn/cute)
# Repositories whose source builds the flash-attn distribution.
FLASH_REPOS = {"flash-attention", "flash_attention", "flash-attn"}
# What each folder of a flash-attention checkout builds (upstream hopper/setup.py: PACKAGE_NAME
# "flash_attn_3", "flashattn-hopper" before 2025; flash_attn/cute/pyproject.toml: "flash-attn-4",
# "flash-attn-cute" before). Other folders (csrc/layer_norm, ...) build other packages.
SUBDIRECTORIES = {"": FLASH_ATTN, "hopper": FA3, "flash_attn/cute": FA4}
# flash-attn, flash_attn, Flash.Attn, flash-attn-3, flash_attn_4 or the flash-attention repository (a
# version may follow: flash_attn-2.5.8+cu122...whl), but not a longer name that merely contains one
# (vllm-flash-attn, flash_attn_interface, flash-attn-fused-dense, FLASH_ATTN_CUDA_ARCHS).
# (A pattern, compiled on first use: most runs never ask.)
_MENTION = (
    r"(?<![A-Za-z0-9_.-])flash[-_.]+(?:attn(?:[-_.]+[34])?|attention)(?![A-Za-z0-9_]|[-.](?!git\b)[A-Za-z])"
)


_ANY = SpecifierSet()


@functools.lru_cache(maxsize=4096)
def _range(specifier: SpecifierSet) -> VersionRange:
    """A specifier's range, built once per specifier (equal ones admit the same versions): building
    it costs more than most questions asked of it, and a project repeats its specifiers."""
    return specifier.to_range()


def normalize(name: str) -> str:
    """PEP 503 name: ``Flash_Attn`` and ``flash.attn`` are both ``flash-attn``.

    PEP 503's ``re.sub(r"[-_.]+", "-", name).lower()``, computed as ``packaging.utils.canonicalize_name``
    does: that module imports packaging.tags (subprocess, platform, logging), a tenth of a lockfile's
    run, for these lines.
    """
    value = name.lower().replace("_", "-").replace(".", "-")
    while "--" in value:
        value = value.replace("--", "-")
    return value


def mentions_flash_attn(text: str) -> bool:
    """Whether text names flash-attn, its FA3/FA4 packages (any PEP 503 spelling) or its repository."""
    return re.search(_MENTION, text, re.I) is not None


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


class Kind(str, enum.Enum):
    """How a requirement takes part in an install."""

    INSTALL = "install"  # asks for the package
    CONSTRAINT = "constraint"  # limits the version if something else asks (-c, uv constraints)
    OVERRIDE = "override"  # replaces every other requirement on the package (uv overrides)
    SOURCE = "source"  # says where the project's own requirement comes from (uv/Poetry sources)
    LOCK = "lock"  # a lockfile entry: exactly what installs


class Location(NamedTuple):
    """A span in a file; lines and columns are 1-based, the end column exclusive. Ordered as its
    fields are (a tuple's order), and made by the thousand: a tuple is the cheapest record to create
    and import (a frozen dataclass with order costs a millisecond of start-up)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


class InstallOptions(NamedTuple):
    """What an install command (or a requirements file's option lines) says beyond the requirements."""

    installer: str = ""  # "pip", "uv", "poetry", "pdm", "conda"; "" when no command says (a file)
    # How it builds an sdist, when the command says: "no-isolation" (--no-build-isolation, uv's
    # --no-build-isolation-package flash-attn, PIP_NO_BUILD_ISOLATION=0), "legacy" (pip's
    # --no-use-pep517: setup.py without isolation), "pep517" (--use-pep517: always isolated)
    build: str = ""
    index_urls: tuple[str, ...] = ()  # --index-url, --extra-index-url, --find-links, in order
    torch_backend: str | None = None  # uv's --torch-backend (cu126, cpu, auto)
    command: Location | None = None  # the whole install command, for findings about it
    # which command of its file, as Requirement.step: a wheel that ``pip wheel`` builds is installed by
    # a later command (the requirement's step), but built, and built as this one says, here
    step: int = 0
    pre: bool = False  # pre-releases count: pip's --pre (PIP_PRE), a requirements file's --pre line
    no_deps: bool = False  # --no-deps: it installs what it names and none of their requirements
    index_unsure: bool = False  # an index option or variable with no one value (a branch sets it)
    # the scope (a Dockerfile stage) of the command that built it: a wheel a builder stage makes and
    # another stage installs (COPY --from, RUN --mount=from) was built with the builder's toolchain
    built_in: str = ""

    def through(self, inner: InstallOptions | None) -> InstallOptions:
        """A command's options for what it installs from a ``-r`` file with options of its own."""
        if inner is None:
            return self
        urls = tuple(dict.fromkeys((*self.index_urls, *inner.index_urls)))
        return self._replace(index_urls=urls, pre=self.pre or inner.pre)


class Requirement(NamedTuple):
    """One thing a file asks pip (or uv, Poetry, conda...) to install, and where it says so."""

    name: str  # PEP 503-normalised distribution name
    raw: str  # the requirement as written, without the surrounding quotes
    location: Location
    source: str  # the format that produced it: "requirements", "pyproject", "uv.lock", ...
    specifier: SpecifierSet = _ANY  # shared: a SpecifierSet is never changed in place
    # Poetry and conda allow "a || b": the requirement admits what any alternative admits.
    alternatives: tuple[SpecifierSet, ...] = ()
    # The one version a URL, wheel filename, VCS tag or lock entry fixes, local label included.
    version: Version | None = None
    url: str | None = None
    marker: str | None = None
    extras: frozenset[str] = frozenset()
    kind: Kind = Kind.INSTALL
    scope: str = ""  # the part of the file, e.g. "project.dependencies", "extra:gpu", "stage:build"
    unresolved: str | None = None  # a variable the file never gives a value, e.g. "${FA_VER}"
    redirected: str | None = None  # text an unquoted shell ">" or "<" took away from the spec
    tool: str | None = None  # a lock entry's owner ("uv", "poetry", "pdm", "pipenv"), or "conda"
    step: int = 0  # which install command of a script or image, in order (a later one replaces earlier)
    upgrade: bool = False  # that command reinstalls what is already there (-U, --force-reinstall, ...)
    hash_checked: bool = False  # its file puts pip in hash-checking mode: a new pin needs a new hash
    # A script's install that may not run: after "||", in an if/case branch or loop, in a function
    # never called. Judged on its own; it neither replaces nor satisfies another install for sure.
    possible: bool = False
    build: str | None = None  # a source build, what it builds: "flash-attention cloned at tag v2.3.3"
    # A source build of a folder no command of the file made (`cd third_party/flash-attention && pip
    # install .`): the folder, relative to the file's own (a Dockerfile's: its build context). What
    # the repository holds there, a vendored copy or a git submodule, is read by fa_lint.files.checkouts.
    checkout: str | None = None
    options: InstallOptions | None = None  # how the command (or file) that asks for it installs

    @property
    def version_range(self) -> VersionRange:
        """Every version this requirement admits, as packaging's range algebra sees it."""
        if self.version is not None:
            return _range(SpecifierSet(f"=={self.version.public}"))
        if self.alternatives:
            out = VersionRange.empty()
            for alt in self.alternatives:
                out = out.union(_range(alt))
            return out
        return _range(self.specifier)

    @property
    def build_step(self) -> int:
        """Which command builds it: a ``pip wheel`` before the install that takes the wheel
        (``InstallOptions.step``), else its own ``step``."""
        return self.options.step if self.options is not None and self.options.step else self.step

    @property
    def constraint_text(self) -> str:
        """The version part as a reader would write it: '==2.4.2', '>=2.0,<3', 'any'."""
        if self.version is not None:
            return f"=={self.version}"
        if self.alternatives:
            return " || ".join(pretty(a) or "*" for a in self.alternatives)
        return pretty(self.specifier) or "any"


_OPERATOR_ORDER = {">=": 0, ">": 0, "~=": 1, "==": 2, "===": 2, "!=": 3, "<=": 4, "<": 4}


def pretty(spec: SpecifierSet) -> str:
    """'>=2,<3' rather than packaging's alphabetical '<3,>=2'."""
    return ",".join(str(s) for s in sorted(spec, key=lambda s: (_OPERATOR_ORDER[s.operator], s.version)))


class Include(NamedTuple):
    """A file another file pulls in: ``-r``/``-c`` lines, conda ``-r``, Docker ``pip install -r``."""

    location: Location
    target: str  # as written, relative to the including file's folder
    constraint: bool = False
    scope: str = ""
    optional: bool = False  # a missing target is no error (e.g. a path inside a Docker image)
    step: int = 0
    upgrade: bool = False  # as Requirement.upgrade, for what the included file installs
    possible: bool = False  # as Requirement.possible
    options: InstallOptions | None = None  # as Requirement.options, for what the included file installs
    # the scopes of the target it installs, all when empty: `pip install .[dev]` installs a project's
    # dependencies and its dev extra, not its build-system table or its other extras
    scopes: tuple[str, ...] = ()
    override: bool = False  # uv's --override FILE: each line replaces every request for its package
    # the format the target is read as, when the include says (a Makefile's ``include``, ``make -f``):
    # "makefile"; empty, a requirements file (or, for an optional one, the format its name says)
    source: str = ""


class Uninstall(NamedTuple):
    """A script's ``pip uninstall NAME`` (or uv, conda, Poetry, PDM): what it removes, in command order."""

    location: Location
    name: str  # PEP 503-normalised
    scope: str = ""
    step: int = 0  # as Requirement.step
    possible: bool = False  # as Requirement.possible: a possible uninstall removes nothing for sure


class Image(NamedTuple):
    """What a Dockerfile's base image brings: ``FROM python:3.11``, ``FROM pytorch/pytorch:2.3.0-...``."""

    location: Location
    reference: str
    scope: str
    python: str | None = None  # "3.11"
    torch: Version | None = None
    cxx11_abi: bool | None = None  # the C++ ABI its torch was built with, when known
    cuda: str | None = None  # the CUDA its torch was built with, or the toolkit it ships: "12.1"
    has_torch: bool | None = None  # whether torch comes installed; None when the image is not known
    # what names it as the machine's base, for messages: a Dockerfile's FROM, a workflow job's
    # container:, a GitLab job's image: (each is the image its commands run in)
    said: str = "FROM"


class BuildConfig(NamedTuple):
    """A project tool's table (``[tool.uv]``, ``[tool.poetry]``, ``[tool.pdm]``, pixi's ``[pypi-options]``):
    how it builds the sdists it installs."""

    location: Location
    tool: str  # "uv", "poetry", "pdm", "pixi"
    no_isolation: frozenset[str] = frozenset()  # packages built without isolation; "*": every one
    torch_for: frozenset[str] = frozenset()  # packages whose extra build dependencies bring torch
    # [tool.uv] conflicts: extras or groups resolved apart, so the one lock holds each fork's versions
    conflicts: bool = False
    # [tool.uv] default-groups: the dependency groups `uv sync` installs unless told otherwise (uv's
    # default is ["dev"]; "all" is every group, written ("*",))
    default_groups: tuple[str, ...] = ("dev",)
    # packages whose torch build dependency has match-runtime = true (uv's extra-build-dependencies)
    runtime_for: frozenset[str] = frozenset()
    # False: a table the tool never reads where it is written (pixi.toml's [tool.pixi.pypi-options]:
    # pixi skips a pixi.toml's [tool] table unread); its settings say what the author meant
    read: bool = True


class Group(NamedTuple):
    """One install a file composes from some of its scopes: a pixi environment, a tox testenv."""

    location: Location
    name: str  # "env:cuda", "testenv:py311-gpu"
    scopes: tuple[str, ...]  # the scopes whose requirements and includes it installs


class ParseProblem(NamedTuple):
    """A file, or part of one, fa-lint could not read. Data, never an exception."""

    location: Location
    message: str
    # The one entry that could not be read, as written, when the rest of the file was read: a
    # requirement line, a list item. Empty when the whole file (or an include) failed.
    entry: str = ""
    # Where the file is a Jinja template that failed to parse as its format: the tag that says so and
    # its line ("`{{ name }}` at line 2"); empty otherwise (fa_lint.syntax.templates)
    template: str = ""
    # fa-lint's own bug (an exception inside it), not the file's: reported as FAL902, never FAL900
    internal: bool = False


# An exception's text can quote the file (a KeyError of a line): no more of it than an excerpt.
_CRASH_TEXT = 32
# The code of fa-lint's own bugs (rules/unread.py): never selected away, ignored or suppressed, as
# ruff's panic diagnostic is no rule a configuration can turn off; the run exits 2 for one.
INTERNAL = "FAL902"


def internal_error(location: Location, exc: BaseException, doing: str = "reading this file") -> ParseProblem:
    """What fa-lint says where its own code raised: that it is fa-lint's bug, in the file it was
    reading (ruff's panic diagnostic: "Panicked ... when checking `path`", then "This indicates a bug
    in Ruff", crates/ruff_linter/src/message/mod.rs ``create_panic_diagnostic``)."""
    text = str(exc)
    text = text if len(text) <= _CRASH_TEXT else text[: _CRASH_TEXT - 3] + "..."
    detail = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return ParseProblem(location, f"internal error in fa-lint while {doing} ({detail})", internal=True)


class NotRun(NamedTuple):
    """An install whose command the shell never runs: an unquoted ``flash-attn<=2.6.3`` has it read
    its input from a file named ``=2.6.3``, and a ``<`` with nothing after it is a syntax error. The
    requirement as written is kept for the finding that says so; no other rule judges it."""

    requirement: Requirement  # as the word asks, with ``redirected`` the text the shell took
    why: str  # what the shell does instead: "the shell opens a file named `=2.6.3` ..."
    stops: bool = False  # a syntax error: the shell runs nothing of the line and exits
    cause: str = ""  # the word that makes it so, as written: "flash-attn<=2.6.3", or "torch<2.4"
    # where that word is, when it is in an earlier command the shell stopped at (a syntax error ends
    # the script, and a RUN's the image build): this install comes after it and never runs
    at: Location | None = None


# conda packages that bring an nvcc (fa_lint.machine.target reads their versions)
CONDA_NVCC = frozenset({"cuda-nvcc", "cuda-toolkit", "cudatoolkit-dev", "cuda-compiler", "cuda"})
# The environment variables flash-attn's setup.py and torch's cpp_extension read while building, which
# files set to say how (and for which GPUs) flash-attn compiles; a Setting of kind "env" names one.
BUILD_VARIABLES = frozenset(
    {
        "FLASH_ATTN_CUDA_ARCHS",
        "TORCH_CUDA_ARCH_LIST",
        "FLASH_ATTENTION_FORCE_BUILD",
        "FLASH_ATTENTION_SKIP_CUDA_BUILD",
        "FLASH_ATTENTION_DISABLE_SM80",  # FlashAttention 3's hopper/setup.py: no sm_80 kernels
        "MAX_JOBS",
        "NVCC_THREADS",
        "CUDA_HOME",
        "CUDA_PATH",
        "CONDA_OVERRIDE_CUDA",  # conda's __cuda: the driver CUDA conda solves for (machine/driver.py)
        "GPU_ARCHS",  # flash-attn's ROCm build: the gfx archs it compiles for (kb/rocm.json)
        "PYTORCH_ROCM_ARCH",  # the gfx archs a ROCm build of torch and its extensions target
        "FLASH_ATTENTION_TRITON_AMD_ENABLE",  # flash-attn's Triton backend on ROCm (no arch check)
    }
)


class Setting(NamedTuple):
    """What a file says about the machine an install lands on, where it says it (``fa_lint.machine``
    reads these): an environment variable a build reads, a GPU or platform the file targets, a CUDA
    toolkit it installs."""

    location: Location
    kind: str  # "env", "gpu", "platform", "toolkit"
    name: str  # env: the variable; otherwise what says it: "runs-on", "accelerators", "apt", "matrix"...
    value: str  # as written (expanded where the file's own variables allow); "" when it has none
    scope: str = ""
    # In a script or stage, the install commands it applies to: those whose step is past ``after`` and
    # at most ``until`` (None: to the end). ``VAR=x pip install ...`` applies to that one command.
    after: int = 0
    until: int | None = None
    possible: bool = False  # one of several (a matrix value, a branch): the target may be another


class BuildArg(NamedTuple):
    """``docker build --build-arg NAME=VALUE -f PATH``: a value for an ``ARG`` of another file, the
    Dockerfile at ``dockerfile`` (as the command names it, from its working folder)."""

    location: Location
    dockerfile: str
    name: str
    value: str


Parsed = (
    Requirement
    | Include
    | Uninstall
    | Image
    | Group
    | BuildConfig
    | Setting
    | ParseProblem
    | NotRun
    | BuildArg
)


class FileResult(NamedTuple):
    """One file as parsed: its format, its text (None when unreadable) and its records."""

    path: str
    source: str
    text: str | None
    records: tuple[Parsed, ...]


class Fix(NamedTuple):
    """Replace the text at ``location``, which must still read ``old``, with ``new``.

    Safe fixes only take away what is wrong (a lower bound below the policy, a shell redirect);
    unsafe ones change what installs (a pin moved to another release) and need ``--unsafe-fixes``.
    """

    location: Location
    old: str
    new: str
    title: str
    safe: bool = True
    source: str = ""  # the format of the file, to check that it still parses after the edit
    expect: str = ""  # the requirement as that format's parser will read it after the edit
    # What the engine must settle with the file's text before the fix is final: "shell" (quote the
    # new word where it stands bare), "toml-value" (narrow the span to the quoted version string),
    # "python-command" (a word of a command a Python program runs: kept only where no shell reads it
    # into something else, see fa_lint.rules._fixes),
    # "lines" (write the file's own line ending between the new lines), "uv-sources" (the span is where
    # the [tool.uv.sources] table takes a new entry).
    context: str = ""
    adds: int = 0  # requirements of the package the edit adds beside the one it rewrites (more lines)


class Finding(NamedTuple):
    """What a rule found, where, and how to fix it."""

    code: str
    name: str
    severity: Severity
    location: Location
    message: str
    package: str | None = None
    requirement: str | None = None
    admitted: tuple[str, ...] | None = None
    url: str = ""
    environment: str | None = None
    related: tuple[Location, ...] = ()
    fix: Fix | None = None
    # ``message`` is the headline (what is wrong, and the fix, in about a line); the rest goes here,
    # so a terminal, an annotation and a SARIF viewer can each show as much as fits.
    notes: tuple[str, ...] = ()  # what breaks and for whom, the lock or environment context
    help: str = ""  # the action that fixes it, e.g. "require flash-attn>=2.5.0"
