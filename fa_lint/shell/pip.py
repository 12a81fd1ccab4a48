"""pip's install and uninstall arguments, as pip, uv (``uv pip install``, ``uv add``), Poetry and PDM
(``add``/``remove``) take them: requirements, ``-r``/``-c`` files, editable and local folders, wheels
from a folder (``--no-index --find-links DIR``, ``DIR/*.whl``), and the names an uninstall removes.
Poetry's ``name@^2.5`` is read as the PEP 508 text pip would read.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from packaging.specifiers import SpecifierSet

from fa_lint.model import FLASH_ATTN, SUBDIRECTORIES, Include, Requirement, Uninstall, normalize
from fa_lint.shell.commands import CONDA_ARGS, PIP_INSTALL_ARGS, Install, option
from fa_lint.shell.context import Context, Sink
from fa_lint.shell.parse import Word
from fa_lint.shell.pybuild import folder as build_folder
from fa_lint.shell.redirects import read as read_redirect
from fa_lint.shell.variables import Expanded, expand
from fa_lint.syntax import pep508

FAMILY = frozenset(SUBDIRECTORIES.values())  # flash-attn, flash-attn-3, flash-attn-4
_INCLUDE = re.compile(r"^(-r|--requirement|-c|--constraints?|--overrides?)(?:=|(?=.))(.+)$")
# uv's spellings besides pip's: --constraints (an alias), --override FILE and --overrides (uv's
# crates/uv-cli/src/lib.rs: `overrides`, alias "override", env UV_OVERRIDE, value_delimiter ' ')
_INCLUDES = ("-r", "--requirement", "-c", "--constraint", "--constraints", "--override", "--overrides")
# the variables that name constraint and override files, for commands not given them (pip reads
# each option from PIP_<OPTION>; uv's pip interface documents UV_CONSTRAINT and UV_OVERRIDE), each
# a whitespace-separated list of files
_FROM_ENVIRONMENT = {
    "pip": (("PIP_CONSTRAINT", False),),
    "uv": (("UV_CONSTRAINT", False), ("UV_OVERRIDE", True)),
}
_EXTRAS = re.compile(r"\[[^\]]*\]$")  # .[dev]
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def install(scanner: Sink, inst: Install, c: Context) -> None:
    """``pip install ARGS``, ``uv add ARGS``, ``poetry add ARGS``...: each argument's record."""
    split: dict[int, str] = {}  # a field of an expansion -> the expansion as written
    expanded: dict[int, Expanded] = {}  # a word _fields expanded and kept whole -> its expansion
    args = iter(_fields(inst.args, c, split, expanded))
    line = _Line()
    for word in args:
        if word.text.startswith("-"):
            _option(scanner, inst, c, word, args, line)
            continue
        rec = _argument(scanner, inst, c, word, line, expanded.get(id(word)))
        line.editable = False
        if rec is None:
            continue
        if id(word) in split:
            rec = rec._replace(raw=split[id(word)])  # `$(PKGS)`: as written, and so not for --fix to edit
        if line.no_index and rec.url is None:  # only the wheels in the --find-links folders can install
            rec = scanner.wheels.take(line.find_links, rec.name, "") or rec
        scanner.emit(rec, c)
    if inst.verb == "install" and inst.installer in _FROM_ENVIRONMENT:
        _environment_files(scanner, inst, c, line.given)


class _Line:
    """What an install command's options have said so far (a plain class: each option changes it)."""

    __slots__ = ("editable", "find_links", "given", "no_index")

    def __init__(self) -> None:
        self.editable = False  # -e: the next argument is an editable install
        self.no_index = False
        self.find_links: list[str] = []  # the folders of -f/--find-links
        self.given: set[bool] = set()  # overrides, constraints: an option on the line wins over a variable


def _option(scanner: Sink, inst: Install, c: Context, word: Word, args: Iterator[Word], line: _Line) -> None:
    """One option of an install command, and its value (taken from ``args`` when it is the next word)."""
    text = word.text
    m = _INCLUDE.match(text) if text not in _INCLUDES else None
    if text in _INCLUDES or m:
        override = text.startswith("--o")
        if (override or text.startswith("--constraints")) and inst.installer != "uv":
            return  # pip knows neither
        found = Word(m.group(2), word.start, word.end) if m else next(args, None)
        if found is not None:
            constraint = text.startswith(("-c", "--c"))
            if constraint or override:
                line.given.add(override)
            include(scanner, found, constraint, c, override)
    elif text in ("-e", "--editable"):
        line.editable = True
    elif text == "--no-index":
        line.no_index = True
    elif (links := option(word, ("-f", "--find-links"), args)) is not None:
        line.find_links.append(c.state.folder(links.text, c.make))
    elif text in PIP_INSTALL_ARGS:
        next(args, None)


def _argument(
    scanner: Sink, inst: Install, c: Context, word: Word, line: _Line, exp: Expanded | None
) -> Requirement | None:
    """What one argument installs; Poetry's ``name@^2.5`` read as pip would read it, kept as written."""
    if inst.tool != "poetry":
        return target(scanner, word, line.editable, c, exp)
    rec = target(scanner, _poetry_word(word), line.editable, c)
    if rec is not None and rec.raw != word.text and rec.build is None:
        rec = rec._replace(raw=word.text)  # as written, and so no PEP 508 edit for --fix
    return rec


def _environment_files(scanner: Sink, inst: Install, c: Context, given: set[bool]) -> None:
    """``PIP_CONSTRAINT``, ``UV_CONSTRAINT``, ``UV_OVERRIDE``: set on the command (``UV_OVERRIDE=o.txt uv
    pip install``) or before it (``export``, Docker's ``ENV``, a workflow's ``env:``), each names
    files the install reads as ``-c``/``--override`` would, unless the command gives that option."""
    head = c.cmd.words[0] if c.cmd.words else None
    if head is None:
        return
    for name, override in _FROM_ENVIRONMENT[inst.installer]:
        if override in given:
            continue
        value = c.cmd.env.get(name)
        if value is None:  # looked up, not expanded: most installs have none of these set
            values = c.state.scope.get(name)
            if values is None or len(values) != 1 or values[0] is None:
                continue  # not set, or not known
            value = values[0]
        exp = expand(value, c.state.scope, c.make)
        if exp.unresolved or len(exp.texts) > 1:
            continue
        for path in exp.text.split():
            include(scanner, Word(path, head.start, head.end), not override, c, override, written=head)


def _fields(
    words: list[Word], c: Context, split: dict[int, str], expanded: dict[int, Expanded]
) -> list[Word]:
    """The arguments as the shell splits them: an unquoted expansion whose value holds several
    words (``$(PKGS)`` with ``PKGS := torch==2.3.1`` then ``PKGS += flash-attn==2.4.2``) is that
    many arguments, each located at the expansion (``split`` keeps what each field was written as;
    ``expanded`` each word expanded here and kept whole, so that it is not expanded twice)."""
    if not any("$" in w.text and not w.quoted for w in words):
        return words
    out: list[Word] = []
    for w in words:
        if "$" in w.text and not w.quoted:
            exp = expand(w.text, c.state.scope, c.make)
            fields = exp.text.split() if not exp.unresolved and len(exp.texts) == 1 else []
            if len(fields) > 1:
                for f in fields:
                    out.append(Word(f, w.start, w.end))
                    split[id(out[-1])] = w.text
                continue
            expanded[id(w)] = exp
        out.append(w)
    return out


def uninstall(scanner: Sink, inst: Install, c: Context) -> None:
    """``pip uninstall NAME``, ``uv remove``, ``conda remove``...: the names it removes."""
    args = iter(inst.args)
    for word in args:
        if word.text.startswith("-"):
            if word.text in ("-r", "--requirement", *CONDA_ARGS, *PIP_INSTALL_ARGS):
                next(args, None)
            continue
        text = expand(word.text, c.state.scope, c.make).text
        m = _NAME.match(text.split("::")[-1])
        if m:
            scanner.emit(Uninstall(scanner.location(word), normalize(m.group())), c)


def target(
    scanner: Sink, word: Word, editable: bool, c: Context, exp: Expanded | None = None
) -> Requirement | None:
    """One install argument: a requirement, a local folder, or wheels from a folder (``exp``: the
    word expanded, where the caller has done it already)."""
    exp = expand(word.text, c.state.scope, c.make) if exp is None else exp
    text = exp.text.strip()
    path = _EXTRAS.sub("", text) if text.endswith("]") else text
    if pep508.looks_like_archive(path) and any(ch in path for ch in "*?["):
        folder, _, pattern = path.rpartition("/")
        return scanner.wheels.take([c.state.folder(folder or ".", c.make)], None, pattern)
    if (_path(path) and not pep508.looks_like_archive(path)) or (
        editable and not pep508.looks_like_url(path)
    ):
        folder = c.state.folder(_EXTRAS.sub("", word.text), c.make)
        built = build_folder(scanner, folder, c)
        if built is None:
            _project(scanner, word, folder, text, c)
        return built
    return requirement(scanner, word, c, exp)


_PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py")  # where a project's dependencies are


def _project(scanner: Sink, word: Word, folder: str, text: str, c: Context) -> None:
    """``pip install .[dev]`` of a folder of this repository: pip installs the project's dependencies
    (and the extras named), each as ``pip install`` would; an sdist among them is built as this
    command says (isolated unless --no-build-isolation). A clone's or a download's folder is another
    project's; a folder in an image is the repository's where a COPY put it there."""
    if scanner.clones.foreign(folder):
        return
    path: str | None = folder
    if scanner.include_map is not None:
        path = scanner.include_map(folder, word.start)
    if path is None or posixpath.isabs(path) or "$" in path:
        return
    extras = _EXTRAS.search(text)
    named = [e.strip() for e in extras.group()[1:-1].split(",")] if extras else []
    scopes = ("project", *(f"extra:{normalize(e)}" for e in named if e))
    for name in _PROJECT_FILES:
        target = posixpath.normpath(posixpath.join(path, name))
        scanner.emit(Include(scanner.location(word), target, optional=True, scopes=scopes), c)


def requirement(scanner: Sink, word: Word, c: Context, exp: Expanded | None = None) -> Requirement | None:
    """The requirement one word names, as written, with the values its variables may have
    (``exp``: the word expanded, where the caller has done it already)."""
    exp = expand(word.text, c.state.scope, c.make) if exp is None else exp
    text = exp.text.strip()
    if (
        not text
        or text in (".", "..")
        or (text.startswith((".", "/")) and not pep508.looks_like_archive(text))
    ):
        return None
    where = scanner.location(word)
    if exp.unresolved:
        # as written (`flash-attn==$V`), or as far as its variables expand (`$SPEC`, whose value
        # `flash-attn==$(V)` names one with none): a family's name either way is a mention
        name = _NAME.match(word.text) or _NAME.match(text)
        family = normalize(name.group()) if name else ""
        # flash-attn-3 and -4 too: no mention of the family is dropped (issue 10), judged or not
        if family in FAMILY and not pep508.looks_like_url(word.text) and not pep508.looks_like_url(text):
            return Requirement(
                family,
                word.text,
                where,
                scanner.source,
                unresolved=exp.unresolved,
                redirected=_cut_text(scanner, word) if word.cut else None,
                **scanner.fields(c),
            )
        wheel = pep508.name_from_url(text)
        if wheel == FLASH_ATTN:  # a wheel URL whose tags are variables still names its version
            rec = pep508.parse(text, where, scanner.source, **scanner.fields(c))
            return rec if isinstance(rec, Requirement) else None
        return None
    # Keep the words as written ("flash-attn==${FA_VER}"); the specifier holds their value.
    cut = _cut_text(scanner, word) if word.cut else None
    fields = {"raw": word.text, "redirected": cut, **scanner.fields(c)}
    if len(exp.texts) == 1:
        rec = pep508.parse(exp.texts[0].strip(), where, scanner.source, **fields)
        return rec if isinstance(rec, Requirement) else None
    found = [pep508.parse(t.strip(), where, scanner.source) for t in exp.texts]
    recs = [r for r in found if isinstance(r, Requirement)]
    if len(recs) != len(found) or len({r.name for r in recs}) != 1:
        return None
    return (recs[0] if len(recs) == 1 else _either(recs))._replace(**fields)


def include(
    scanner: Sink,
    word: Word,
    constraint: bool,
    c: Context,
    override: bool = False,
    written: Word | None = None,
) -> None:
    """``-r FILE`` / ``-c FILE`` / ``--override FILE``: the file it reads, where the format says it
    is (``written``: where the file is named, when that is not ``word``, a variable's value)."""
    exp = expand(word.text, c.state.scope, c.make)
    if exp.unresolved:
        return
    path = exp.text
    if scanner.clones.foreign(c.state.folder(path, c.make)):
        return  # a file of a clone or a download: another project's, not this repository's
    if scanner.include_map is not None:
        mapped = scanner.include_map(path, word.start)
        if mapped is None:
            return
        path = mapped
    where = scanner.location(written or word)
    scanner.emit(Include(where, path, constraint=constraint, optional=True, override=override), c)


def _cut_text(scanner: Sink, word: Word) -> str:
    """What the shell took as a redirect: '>=2.5' in an unquoted flash-attn>=2.5."""
    found = read_redirect(scanner.index.text, word.end)
    return found.text if found else (word.cut or ">")


def _poetry_word(word: Word) -> Word:
    """``poetry add name@^2.5`` as the PEP 508 text pip would read (``name>=2.5,<3``)."""
    name, at, constraint = word.text.partition("@")
    if not at or "://" in constraint or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._\[\],-]*", name.strip()):
        return word
    if constraint.strip() == "latest":
        return word._replace(text=name.strip())
    from fa_lint.syntax import poetry  # for `poetry add` only

    try:
        alternatives = poetry.specifiers(constraint)
    except poetry.PoetryConstraintError:
        return word  # left as written: not a requirement fa-lint can read
    if len(alternatives) != 1:
        return word
    return word._replace(text=f"{name.strip()}{alternatives[0]}")


def _path(text: str) -> bool:
    """pip reads an argument as a local path when it has a slash or starts with a dot."""
    return not pep508.looks_like_url(text) and ("/" in text or text.startswith(".")) and "@" not in text


def _either(recs: list[Requirement]) -> Requirement:
    """One word that can become several requirements (a variable a branch set): it admits any of them."""
    alternatives: list[SpecifierSet] = []
    for r in recs:
        if r.version is not None:
            alternatives.append(SpecifierSet(f"=={r.version.public}"))
        else:
            alternatives += r.alternatives or (r.specifier,)
    return recs[0]._replace(
        specifier=SpecifierSet(), version=None, url=None, alternatives=tuple(alternatives)
    )
