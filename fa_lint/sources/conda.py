"""conda environment files: conda-native packages and the ``pip:`` list (with its ``-r`` files).

``conda env create`` (and ``update``) installs its own packages first, then writes the ``pip:`` list,
one entry a line, to a temporary requirements file beside the environment file and runs
``python -m pip install -U -r FILE --exists-action=b`` once in the new environment
(``conda/env/installers/pip.py``, called from ``conda/cli/install.py``). So each entry is a line of a
requirements file, installed by one pip command: pip's file options (``--extra-index-url``, ``--pre``,
...), a requirement with ``--hash``/``--config-settings``, or ``-r``/``-e``. An option pip takes only
on its command line (``--no-build-isolation``) makes pip stop with "no such option", and conda with it.
The ``variables:`` of the file are written to the environment after pip has run (the same
``install.py``), so none of them reaches that pip.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml

from fa_lint.model import Image, Include, InstallOptions, Location, Parsed, ParseProblem, Setting
from fa_lint.syntax import matchspec, pep508, yamldoc
from fa_lint.syntax.text import TextIndex, excerpt

NAME = "conda"
_TOP_DEPENDENCIES = re.compile(r"^dependencies[ \t]*:", re.M)

_INCLUDE = re.compile(r"^(-r|--requirement|-c|--constraint)(?:\s+|=)(.+)$")
# The options pip reads in a requirements file (SUPPORTED_OPTIONS of pip/_internal/req/req_file.py,
# pip 25.3), and those a requirement line may carry (SUPPORTED_OPTIONS_REQ); optparse also takes a
# long option's unambiguous prefix.
_FILE_OPTIONS = (
    "--index-url",
    "--pypi-url",
    "--extra-index-url",
    "--no-index",
    "--constraint",
    "--requirement",
    "--editable",
    "--find-links",
    "--no-binary",
    "--only-binary",
    "--prefer-binary",
    "--require-hashes",
    "--pre",
    "--trusted-host",
    "--use-feature",
)
_SHORT = {"-i", "-c", "-r", "-e", "-f"}
_REQUIREMENT_OPTIONS = ("--hash", "--config-settings")
_INDEX = re.compile(r"^(?:-i|--index-url|--pypi-url|--extra-index-url|-f|--find-links)(?:\s+|=)(\S+)")
# where a requirement's own options begin: pip ends a requirement at whitespace and a dash
_TAIL = re.compile(r"\s+(?=--?[A-Za-z])")
# a line of `conda env export`: name=version=build, the channel before it in some versions
_EXPORTED = re.compile(r"^(?:[^:\s]+::)?[A-Za-z0-9_.+-]+=[^=\s]+=[^=\s]+$")
# conda's pip step: one command, after conda's packages (their step 0), reinstalling what it lists
PIP_STEP = 1


def sniff(head: str, *, complete: bool) -> bool:
    return _TOP_DEPENDENCIES.search(head) is not None


def _platforms(index: TextIndex, root: yaml.Node | None, text: str) -> Iterator[Setting]:
    """conda-lock's platforms key: the platforms the environment is locked (and so installed) for."""
    platforms = yamldoc.get(root, "platforms")
    if isinstance(platforms, yaml.SequenceNode):
        for item in platforms.value:
            if isinstance(item, yaml.ScalarNode):
                start, end = yamldoc.span(item, text)
                yield Setting(index.location(start, end), "platform", "conda-lock platforms", str(item.value))


def parse(path: str, text: str) -> Iterator[Parsed]:
    doc = yamldoc.document(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    index, root = doc
    yield from _platforms(index, root, text)
    deps = yamldoc.get(root, "dependencies")
    if deps is None:
        return
    if not isinstance(deps, yaml.SequenceNode):
        start, end = deps.start_mark.index, deps.end_mark.index
        yield ParseProblem(index.location(start, end), "dependencies must be a list")
        return
    exported, torch = any(isinstance(item, yaml.ScalarNode) for item in deps.value), False
    for item in deps.value:
        if isinstance(item, yaml.ScalarNode):
            spec = str(item.value).strip()
            exported = exported and _EXPORTED.match(spec) is not None
            torch = torch or "torch" in spec.split("=", 1)[0].split(" ", 1)[0].lower()
            start, end = yamldoc.span(item, text)
            rec = matchspec.matchspec(str(item.value), index.location(start, end), NAME, scope="conda")
            if rec is not None:  # None: another package's conda version, which PEP 440 cannot say
                yield rec
        elif isinstance(item, yaml.MappingNode):
            pip = yamldoc.get(item, "pip")
            if isinstance(pip, yaml.SequenceNode):
                yield from _pip(index, pip)
    if exported and not torch:
        # `conda env export` lists every package of the environment, each with its build: one with no
        # torch among them (torchvision and the like would bring it) has none when its pip step runs
        start, end = yamldoc.span(deps, text)
        yield Image(index.location(start, end), f"the conda packages of {path}", "conda", has_torch=False)


def _pip(index: TextIndex, pip: yaml.SequenceNode) -> Iterator[Parsed]:
    entries = [(str(e.value).strip(), e) for e in pip.value if isinstance(e, yaml.ScalarNode)]
    urls = tuple(m.group(1) for value, _ in entries if (m := _INDEX.match(value)))
    pre = any(value == "--pre" for value, _ in entries)
    options = InstallOptions("pip", index_urls=urls, step=PIP_STEP, pre=pre)
    fields: dict[str, Any] = {"scope": "pip", "step": PIP_STEP, "upgrade": True, "options": options}
    for value, entry in entries:
        start, end = yamldoc.span(entry, index.text)
        where = index.location(start, end)
        inc = _INCLUDE.match(value)
        if inc:
            constraint = inc.group(1) in ("-c", "--constraint")
            # what the file installs is installed by conda's pip command, found at this line
            here = {**fields, "options": options._replace(command=where)}
            yield Include(where, inc.group(2).strip(), constraint=constraint, **here)
            continue
        if value.startswith("-"):
            flag = value.split(None, 1)[0].split("=", 1)[0]
            if not (flag in _SHORT or _known(flag, _FILE_OPTIONS)):
                yield _refused(where, flag, value)
            continue  # --extra-index-url and friends, -e and the project's own folder
        if value.startswith((".", "/")) and not pep508.looks_like_archive(value):
            continue  # the project's own folder
        requirement, *rest = _TAIL.split(value, 1)
        flags = [w.split("=", 1)[0] for w in rest[0].split() if w.startswith("-")] if rest else []
        wrong = next((f for f in flags if not (f == "-C" or _known(f, _REQUIREMENT_OPTIONS))), None)
        if wrong is not None:
            yield _refused(where, wrong, value)
            continue
        yield pep508.parse(requirement, where, NAME, raw=value, **fields)


def _known(flag: str, options: tuple[str, ...]) -> bool:
    """An option pip's parser takes: one of ``options``, or a prefix of only one of them."""
    return flag in options or (len(flag) > 2 and len([o for o in options if o.startswith(flag)]) == 1)


def _refused(where: Location, flag: str, entry: str) -> ParseProblem:
    return ParseProblem(
        where,
        f"pip takes no {excerpt(flag)} in a requirements file, and conda runs the pip: list as one: "
        "pip stops with 'no such option' and installs nothing of the list",
        entry,
    )
