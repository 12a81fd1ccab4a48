"""Builds of a folder: ``python setup.py install|develop|bdist_wheel``, ``python -m build`` and pip's
``pip install ./DIR``. A folder a clone of this file made builds what that clone's repository builds
(``builds``); a flash-attention folder no command here made is a git submodule or a vendored copy the
repository may hold (``fa_lint.files.checkouts`` reads which), or a folder fa-lint cannot see. A build that
makes wheels (``bdist_wheel``, ``python -m build``) puts them in its ``dist/`` for a later install.
"""

from __future__ import annotations

import posixpath

from fa_lint.model import FLASH_REPOS, SUBDIRECTORIES, Location, Requirement
from fa_lint.shell.commands import Install, option
from fa_lint.shell.context import Context, Sink


def setup(scanner: Sink, inst: Install, c: Context) -> None:
    """``python setup.py install|develop|bdist_wheel`` and ``python -m build`` in the working folder."""
    if inst.tool == "setup.py" and inst.verb not in ("install", "develop", "bdist_wheel"):
        return
    source, out = ".", None
    args = iter(inst.args)
    for word in args:
        value = option(word, ("-d", "--dist-dir", "-o", "--outdir"), args)
        if value is not None:
            out = value.text
        elif inst.tool == "build" and not word.text.startswith("-"):
            source = word.text
    where = c.state.folder(source, c.make)
    rec = folder(scanner, where, c)
    if rec is None:
        return
    if inst.verb in ("install", "develop"):
        scanner.emit(rec, c)
        return
    dist = c.state.folder(out, c.make) if out else posixpath.join(where, "dist")
    options = c.options._replace(built_in=scanner.scope)  # built here, with this stage's toolchain
    made = rec._replace(scope=scanner.scope, step=scanner.step, possible=c.possible, options=options)
    scanner.wheels.put(dist, [made])


def folder(scanner: Sink, path: str, c: Context) -> Requirement | None:
    """What building the folder ``path`` installs, if it is flash-attn's."""
    where = scanner.index.location(c.cmd.start, c.cmd.end)
    if scanner.clones.holds(path):  # a clone this file made: what its repository builds
        return scanner.clones.built(path, where, c.cmd.env)
    return _checkout(scanner, path, where, c)


def _checkout(scanner: Sink, folder: str, where: Location, c: Context) -> Requirement | None:
    """A build of a flash-attention folder no command here made: a git submodule or a vendored
    copy the repository may hold (``fa_lint.files.checkouts`` reads which), or a folder it cannot see."""
    name, base = None, folder
    for inside, dist in sorted(SUBDIRECTORIES.items(), key=lambda kv: -len(kv[0])):
        if not inside or base.endswith("/" + inside):
            name, base = dist, base[: len(base) - len(inside)].rstrip("/")
            break
    if name is None or posixpath.basename(base).lower() not in FLASH_REPOS:
        return None
    path: str | None = base
    if scanner.include_map is not None:  # a folder in the image: where COPY took it from
        path = scanner.include_map(base, c.cmd.start)
    readable = path is not None and not posixpath.isabs(path) and "$" not in path and ".." not in path
    inside = folder[len(base) :].lstrip("/")
    return Requirement(
        name,
        folder,
        where,
        scanner.source,
        url=folder,
        build=f"the folder {base}" + (f" ({inside})" if inside else ""),
        checkout=path if readable and path else "",
    )
