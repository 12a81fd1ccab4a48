"""``docker build`` (``docker buildx build``, ``docker image build``, ``podman build``, ``buildah
build``): the values its ``--build-arg NAME=VALUE`` options give the ``ARG`` lines of the Dockerfile it
builds (``-f PATH``, else ``Dockerfile`` in the build context).

Read by ``fa_lint.files.project``, which hands them to that Dockerfile's reader: an ``ARG FLASH_ATTN_VERSION``
with no default then has the value a script, a workflow step or a Makefile builds it with.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator

from fa_lint.model import BuildArg, Location
from fa_lint.shell.commands import option
from fa_lint.shell.parse import Word, basename
from fa_lint.shell.variables import State, expand

# the options of `docker build` that take a value (the Docker CLI reference), besides -f and --build-arg
_VALUED = frozenset(
    {
        "-t",
        "--tag",
        "--target",
        "--platform",
        "--label",
        "--network",
        "--progress",
        "--secret",
        "--ssh",
        "--cache-from",
        "--cache-to",
        "--output",
        "-o",
        "--iidfile",
        "--add-host",
        "--shm-size",
        "-m",
        "--memory",
        "--cpu-shares",
        "--isolation",
        "--ulimit",
        "--build-context",
        "--builder",
        "--metadata-file",
        "--attest",
        "--annotation",
        "--allow",
        "--call",
    }
)
TOOLS = ("docker", "podman", "buildah")


def _build(words: list[Word]) -> list[Word] | None:
    """The arguments of ``docker build`` (``docker buildx build``, ``podman bud``...); None for any
    other command."""
    if not words or basename(words[0].text) not in TOOLS:
        return None
    rest = words[1:]
    if rest and rest[0].text in ("buildx", "image", "builder"):
        rest = rest[1:]
    return rest[1:] if rest and rest[0].text in ("build", "bud") else None


def build_args(
    words: list[Word], state: State, make: bool, locate: Callable[[Word], Location]
) -> list[BuildArg]:
    """The build arguments a ``docker build`` command gives its Dockerfile; [] for any other command."""
    args = _build(words)
    if args is None:
        return []
    dockerfile: str | None = None
    context = "."
    found: list[tuple[Word, str, str]] = []
    it: Iterator[Word] = iter(args)
    for word in it:
        value = option(word, ("-f", "--file"), it)
        if value is not None:
            dockerfile = _text(value, state, make)
            continue
        value = option(word, ("--build-arg",), it)
        if value is not None:
            name, eq, given = _text(value, state, make).partition("=")
            if eq and name and "$" not in name:
                found.append((value, name, given))
            continue
        if word.text.startswith("-"):
            if word.text in _VALUED:
                next(it, None)
            continue
        context = _text(word, state, make)
    if not found or dockerfile == "-" or "://" in context or context == "-":
        return []
    path = dockerfile if dockerfile is not None else posixpath.join(context, "Dockerfile")
    where = state.folder(path, make)
    return [BuildArg(locate(word), where, name, value) for word, name, value in found if "$" not in value]


def _text(word: Word, state: State, make: bool) -> str:
    exp = expand(word.text, state.scope, make)
    return word.text if exp.unresolved or len(exp.texts) > 1 else exp.text
