"""conda environment files: conda-native packages and the ``pip:`` list (with its ``-r`` files)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml

from fa_lint.model import Include, Parsed, ParseProblem, Setting
from fa_lint.syntax import matchspec, pep508, yamldoc
from fa_lint.syntax.text import TextIndex

NAME = "conda"
_TOP_DEPENDENCIES = re.compile(r"^dependencies[ \t]*:", re.M)

_INCLUDE = re.compile(r"^(-r|--requirement|-c|--constraint)(?:\s+|=)(.+)$")


def sniff(head: str, *, complete: bool) -> bool:
    return _TOP_DEPENDENCIES.search(head) is not None


def parse(path: str, text: str) -> Iterator[Parsed]:
    doc = yamldoc.document(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    index, root = doc
    # conda-lock's platforms key: the platforms the environment is locked (and so installed) for
    platforms = yamldoc.get(root, "platforms")
    if isinstance(platforms, yaml.SequenceNode):
        for item in platforms.value:
            if isinstance(item, yaml.ScalarNode):
                start, end = yamldoc.span(item, text)
                yield Setting(index.location(start, end), "platform", "conda-lock platforms", str(item.value))
    deps = yamldoc.get(root, "dependencies")
    if deps is None:
        return
    if not isinstance(deps, yaml.SequenceNode):
        start, end = deps.start_mark.index, deps.end_mark.index
        yield ParseProblem(index.location(start, end), "dependencies must be a list")
        return
    for item in deps.value:
        if isinstance(item, yaml.ScalarNode):
            start, end = yamldoc.span(item, text)
            rec = matchspec.matchspec(str(item.value), index.location(start, end), NAME, scope="conda")
            if rec is not None:  # None: another package's conda version, which PEP 440 cannot say
                yield rec
        elif isinstance(item, yaml.MappingNode):
            pip = yamldoc.get(item, "pip")
            if isinstance(pip, yaml.SequenceNode):
                yield from _pip(index, pip)


def _pip(index: TextIndex, pip: yaml.SequenceNode) -> Iterator[Parsed]:
    for entry in pip.value:
        if not isinstance(entry, yaml.ScalarNode):
            continue
        value = str(entry.value).strip()
        start, end = yamldoc.span(entry, index.text)
        where = index.location(start, end)
        inc = _INCLUDE.match(value)
        if inc:
            yield Include(
                where, inc.group(2).strip(), constraint=inc.group(1) in ("-c", "--constraint"), scope="pip"
            )
        elif value.startswith("-") or (value.startswith((".", "/")) and not pep508.looks_like_archive(value)):
            continue  # --extra-index-url and friends, or the project's own folder
        else:
            yield pep508.parse(value, where, NAME, scope="pip")
