"""What a project's tool tables say of how its installer builds sdists (FAL012 reads them): uv's
``[tool.uv]`` isolation settings, pixi's ``[pypi-options]``, PDM's ``[tool.pdm.options]``, and the uv
release a project requires. Which keys each installer reads, since which release, is in
``fa_lint/kb/installers.json`` (from each installer's source)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from fa_lint.model import BuildConfig, Parsed, Setting, normalize
from fa_lint.syntax.tables import WrongType, get, subtable, texts, typed, wrong_type

if TYPE_CHECKING:  # (a workflow reads INSTALLER only: no TOML reader, no tomllib, for it)
    from fa_lint.syntax.tomldoc import TomlDoc, TomlPath

# the kind of Setting that names an installer's release: name "uv", value as written ("==0.11.0")
INSTALLER = "installer"


class UvIsolation:
    """``[tool.uv]``'s packages built without isolation, those whose extra build dependencies bring
    torch, and those of them whose torch has ``match-runtime = true``."""

    def __init__(self) -> None:
        self.no_isolation: set[str] = set()
        self.torch_for: set[str] = set()
        self.runtime_for: set[str] = set()

    def read(self, uv: dict[str, Any]) -> None:
        """Raises WrongType where uv refuses a setting; what was read before it stays read."""
        self.no_isolation.update(normalize(n) for n in texts(uv, "no-build-isolation-package"))
        if typed(uv, ("no-build-isolation",), bool, "a boolean"):
            self.no_isolation.add("*")
        for package in subtable(uv, "extra-build-dependencies"):
            deps = typed(uv, ("extra-build-dependencies", package), list, "an array") or []
            for i, dep in enumerate(deps):
                if names_torch(dep, ("extra-build-dependencies", package, i)):
                    self.torch_for.add(normalize(package))
                    if isinstance(dep, dict) and dep.get("match-runtime") is True:
                        self.runtime_for.add(normalize(package))


def names_torch(dep: Any, path: TomlPath) -> bool:
    """An extra build dependency on torch: ``"torch==2.6.0"`` or ``{requirement = "torch", ...}``."""
    if isinstance(dep, dict):
        path, dep = (*path, "requirement"), dep.get("requirement")
    if not isinstance(dep, str):
        raise WrongType(path, "a requirement string")
    name = dep.split(";", 1)[0].strip()
    end = next((i for i, c in enumerate(name) if not (c.isalnum() or c in "._-")), len(name))
    return normalize(name[:end]) in ("torch", "pytorch")


def uv_required(doc: TomlDoc) -> Iterator[Setting]:
    """``[tool.uv] required-version``: the uv releases the project runs under (uv refuses another)."""
    path: TomlPath = ("tool", "uv", "required-version")
    value = get(doc.data, path)
    if isinstance(value, str):
        start, end = doc.value_location(path)
        yield Setting(doc.index.location(start, end), INSTALLER, "uv", value)


def pixi_options(doc: TomlDoc, base: TomlPath) -> Iterator[Parsed]:
    """pixi's ``[pypi-options] no-build-isolation`` (a list of names; ``true`` for every package) at
    ``base`` and in each feature. In a pixi.toml, a ``[tool.pixi.pypi-options]`` table is one pixi never
    reads (it skips a pixi.toml's ``[tool]`` table): kept, with ``read=False``, for what it meant."""
    places: list[tuple[TomlPath, bool]] = [(base, True)]
    top = get(doc.data, base) if base else doc.data
    features = (
        top.get("feature") if isinstance(top, dict) else None
    )  # pixi refuses another type: tables.py says
    places += [((*base, "feature", f), True) for f in (features if isinstance(features, dict) else {})]
    if not base:
        places.append((("tool", "pixi"), False))
    for where, read in places:
        found = _no_isolation(doc, (*where, "pypi-options"))
        if isinstance(found, set):
            start, end = doc.key_location((*where, "pypi-options"))
            yield BuildConfig(doc.index.location(start, end), "pixi", frozenset(found), read=read)
        elif found is not None:
            yield found


def _no_isolation(doc: TomlDoc, path: TomlPath) -> set[str] | Parsed | None:
    options = get(doc.data, path)
    if not isinstance(options, dict):
        return None
    value = options.get("no-build-isolation")
    if value is True:
        return {"*"}
    try:
        return {normalize(n) for n in texts(options, "no-build-isolation")} if value is not False else set()
    except WrongType as exc:
        return wrong_type(doc, path, exc, "[pypi-options]")


# the PDM commands that install a project's dependencies, and so build its sdists
_PDM_INSTALLS = ("install", "sync", "add", "update", "lock")


def pdm_config(doc: TomlDoc) -> Iterator[Parsed]:
    """``[tool.pdm]``: PDM builds in isolation unless ``--no-isolation`` is among the default options
    ``[tool.pdm.options]`` gives a command that installs (PDM 2.7.0's core.py reads that table)."""
    pdm = get(doc.data, ("tool", "pdm"))
    if not isinstance(pdm, dict):
        return
    options = subtable(pdm, "options")
    off = any(
        "--no-isolation" in (value if isinstance(value, list) else [])
        for command, value in options.items()
        if command in _PDM_INSTALLS
    )
    start, end = doc.key_location(("tool", "pdm"))
    yield BuildConfig(doc.index.location(start, end), "pdm", frozenset({"*"}) if off else frozenset())
