"""pyproject.toml: PEP 621 and PEP 735 tables, build-system, and the uv, PDM, Poetry and pixi tables."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from fa_lint.model import (
    BUILD_VARIABLES,
    FLASH_ATTN,
    BuildConfig,
    Include,
    Kind,
    Location,
    Parsed,
    ParseProblem,
    Requirement,
    Setting,
    normalize,
)
from fa_lint.sources import buildsettings, depgroups
from fa_lint.sources.buildsettings import UvIsolation
from fa_lint.syntax import pep508, tomldoc
from fa_lint.syntax.tables import (
    WrongType,
    entry_text,
    get,
    problem,
    settings,
    source_table,
    strings,
    table,
    text,
    wrong_type,
)
from fa_lint.syntax.text import excerpt
from fa_lint.syntax.tomldoc import TomlDoc, TomlPath

NAME = "pyproject"


def parse(path: str, text: str) -> Iterator[Parsed]:
    doc = tomldoc.load(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    yield from _python(doc, ("project", "requires-python"))
    yield from _python(doc, ("tool", "poetry", "dependencies", "python"), poetry=True)
    yield from strings(doc, ("project", "dependencies"), NAME, scope="project")
    for extra in table(doc, ("project", "optional-dependencies")):
        yield from strings(doc, ("project", "optional-dependencies", extra), NAME, scope=f"extra:{extra}")
    yield from _dependency_groups(doc)
    yield from _dynamic_files(doc)
    yield from strings(doc, ("build-system", "requires"), NAME, scope="build-system")
    yield from strings(doc, ("tool", "uv", "dev-dependencies"), NAME, scope="group:dev")
    yield from strings(
        doc, ("tool", "uv", "constraint-dependencies"), NAME, scope="uv:constraints", kind=Kind.CONSTRAINT
    )
    yield from strings(
        doc, ("tool", "uv", "override-dependencies"), NAME, scope="uv:overrides", kind=Kind.OVERRIDE
    )
    yield from _uv_sources(doc)
    yield from _pdm_overrides(doc)
    for group in table(doc, ("tool", "pdm", "dev-dependencies")):
        yield from strings(doc, ("tool", "pdm", "dev-dependencies", group), NAME, scope=f"group:{group}")
    yield from poetry(doc)
    if get(doc.data, ("tool", "pixi")) is not None:
        from fa_lint.sources import pixi  # imported for a [tool.pixi] table only

        yield from pixi.tables(doc, ("tool", "pixi"), "project", NAME)
    yield from _build_configs(doc)


def _build_configs(doc: TomlDoc) -> Iterator[Parsed]:
    """``[tool.uv]`` and ``[tool.poetry]``: the tools that build this project's sdists, and how."""
    uv = get(doc.data, ("tool", "uv"))
    if isinstance(uv, dict):
        isolation = UvIsolation()
        try:  # uv refuses a setting of the wrong type; what was read before it still counts
            isolation.read(uv)
        except WrongType as exc:
            yield wrong_type(doc, ("tool", "uv"), exc, "[tool.uv]")
        start, end = doc.key_location(("tool", "uv"))
        forks = bool(uv.get("conflicts"))  # extras or groups uv resolves apart, each fork in the one lock
        defaults = uv.get("default-groups", ["dev"])
        groups = (
            ("*",)
            if defaults == "all"
            else tuple(normalize(g) for g in defaults if isinstance(g, str))
            if isinstance(defaults, list)
            else ("dev",)  # a value uv refuses: uv stops, so nothing installs; keep uv's default
        )
        yield BuildConfig(
            doc.index.location(start, end),
            "uv",
            frozenset(isolation.no_isolation),
            frozenset(isolation.torch_for),
            forks,
            groups,
            frozenset(isolation.runtime_for),
        )
        yield from buildsettings.uv_required(doc)
        # the platforms uv resolves for (environments) and must install on (required-environments)
        for key in ("environments", "required-environments"):
            yield from settings(doc, ("tool", "uv", key), "platform", f"uv {key}")
        yield from _os_markers(doc, doc.index.location(start, end))
        yield from _build_variables(doc)
    if isinstance(get(doc.data, ("tool", "poetry")), dict):
        start, end = doc.key_location(("tool", "poetry"))
        yield BuildConfig(doc.index.location(start, end), "poetry")
    yield from buildsettings.pdm_config(doc)
    if isinstance(get(doc.data, ("tool", "pixi")), dict):
        start, end = doc.key_location(("tool", "pixi"))
        yield BuildConfig(doc.index.location(start, end), "pixi")  # pixi installs [project] dependencies
        yield from buildsettings.pixi_options(doc, ("tool", "pixi"))


_OS_WORDS = ("sys_platform", "platform_system", "os_name")


def _build_variables(doc: TomlDoc) -> Iterator[Parsed]:
    """``[tool.uv.extra-build-variables] flash-attn = { FLASH_ATTENTION_SKIP_CUDA_BUILD = "TRUE" }``: the
    environment of flash-attn's own build when uv builds it for this project, as a Setting of kind
    "env" (the same as ``ENV`` in a Dockerfile). Only flash-attn's entry counts: another package's
    variables are that package's build's, not flash-attn's."""
    table_path: TomlPath = ("tool", "uv", "extra-build-variables")
    found = get(doc.data, table_path)
    for package, variables in found.items() if isinstance(found, dict) else ():
        if normalize(package) != FLASH_ATTN or not isinstance(variables, dict):
            continue
        for name, value in variables.items():
            if name in BUILD_VARIABLES and isinstance(value, str):
                start, end = doc.key_location((*table_path, package, name))
                # after=-1: a manifest's installs are all at step 0, and a setting applies past its step
                yield Setting(doc.index.location(start, end), "env", name, value, after=-1)


def _os_markers(doc: TomlDoc, where: Location) -> Iterator[Parsed]:
    """The environment markers of a uv project that name an operating system (``sys_platform ==
    'darwin'``): uv locks for every platform, and these say the project is meant to install on them
    (FAL014 reads them against a Linux-only flash-attn wheel). One Setting per distinct marker."""
    found: list[str] = []
    deps = get(doc.data, ("project", "dependencies"))
    for dep in deps if isinstance(deps, list) else ():
        if isinstance(dep, str) and ";" in dep:
            found.append(dep.split(";", 1)[1].strip())
    sources = get(doc.data, ("tool", "uv", "sources"))
    for entry in sources.values() if isinstance(sources, dict) else ():
        for one in entry if isinstance(entry, list) else [entry]:
            if isinstance(one, dict) and isinstance(one.get("marker"), str):
                found.append(one["marker"])
    for marker in dict.fromkeys(m for m in found if any(w in m for w in _OS_WORDS)):
        yield Setting(where, "marker", "uv", marker)


def _python(doc: TomlDoc, path: TomlPath, poetry: bool = False) -> Iterator[Parsed]:
    """requires-python (or Poetry's python) as a constraint on the "python" the environment runs."""
    value = get(doc.data, path)
    if not isinstance(value, str):
        return
    alternatives = _constraint(value, poetry)
    if alternatives is None:
        yield problem(doc, path, f"invalid Python version constraint {excerpt(value)}", entry=True)
        return
    start, end = doc.value_location(path) if not poetry else doc.key_location(path)
    yield Requirement(
        "python",
        value,
        doc.index.location(start, end),
        NAME,
        specifier=alternatives[0],
        alternatives=alternatives if len(alternatives) > 1 else (),
        kind=Kind.CONSTRAINT,
        scope="python",
    )


def _constraint(value: str, poetry: bool) -> tuple[SpecifierSet, ...] | None:
    """A version constraint as PEP 440 or Poetry writes it, as alternatives; None when invalid."""
    if not poetry:
        try:
            return (SpecifierSet(value),)
        except InvalidSpecifier:
            return None
    from fa_lint.syntax.poetry import PoetryConstraintError, specifiers  # for [tool.poetry] only

    try:
        return specifiers(value)
    except (PoetryConstraintError, InvalidSpecifier):
        return None


def _dependency_groups(doc: TomlDoc) -> Iterator[Parsed]:
    """PEP 735 groups; a group's ``{include-group = "x"}`` brings in x's requirements, where x has them.

    Each group is resolved once, leaves first, from the groups it includes (already resolved), so a
    chain of n groups costs n steps, not n^2 walks (packaging's ``DependencyGroupResolver.resolve``
    walks every group's whole closure again, recursively: n^2 steps, and RecursionError past about
    a thousand). packaging still reads each group's own entries (``lookup``); the includes, missing
    groups and cycles (an error, PEP 735 says) are worked out here, with packaging's messages."""
    groups = get(doc.data, ("dependency-groups",))
    if not isinstance(groups, dict):
        return
    from packaging.dependency_groups import DependencyGroupResolver  # for PEP 735 groups only

    try:  # one resolver for every group: each group's requirements are parsed once, not once a use
        resolver = DependencyGroupResolver(groups)
    except Exception as exc:  # bad group names: every group reports them, as resolving it alone would
        for group in groups:
            yield problem(
                doc,
                ("dependency-groups", group),
                f"dependency group {excerpt(group)}: {depgroups.causes(exc)}",
            )
        return
    raw = {normalize(group): group for group in groups}  # one each: packaging refuses duplicates
    edges = {name: depgroups.includes(groups[group]) for name, group in raw.items()}
    own: dict[str, list[tuple[str, str]]] = {}
    for name in raw:
        try:
            resolver.lookup(name)
            own[name] = []
        except Exception as exc:
            own[name] = [("", depgroups.causes(exc))]
    causes, members = depgroups.resolve(
        edges, own, {n: depgroups.has_strings(groups[g]) for n, g in raw.items()}
    )
    for name, group in raw.items():
        if causes[name]:
            message = "; ".join(
                f"Cyclic dependency group include while resolving {name}: {text}" if cycle else text
                for cycle, text in causes[name]
            )
            yield problem(doc, ("dependency-groups", group), f"dependency group {excerpt(group)}: {message}")
            continue
        for member in members[name]:
            yield from strings(doc, ("dependency-groups", raw[member]), NAME, scope=f"group:{group}")


def _dynamic_files(doc: TomlDoc) -> Iterator[Parsed]:
    """Requirement files a build backend reads the project's requirements from, for each field
    ``[project] dynamic`` lists: setuptools' ``[tool.setuptools.dynamic] dependencies = {file =
    [...]}`` and ``optional-dependencies.<extra> = {file = [...]}`` (setuptools, "Configuring
    setuptools using pyproject.toml files", Dynamic Metadata), and the hatch-requirements-txt
    plugin's ``[tool.hatch.metadata.hooks.requirements_txt] files = [...]`` and its
    ``optional-dependencies.<extra> = [...]`` (its README, "Usage"). Each file is an include, read as
    setup.cfg's ``file:`` is, from the project's folder, inside the repository only."""
    dynamic = get(doc.data, ("project", "dynamic"))
    if not isinstance(dynamic, list):
        return
    setuptools: TomlPath = ("tool", "setuptools", "dynamic")
    hatch: TomlPath = ("tool", "hatch", "metadata", "hooks", "requirements_txt")
    fields: list[tuple[TomlPath, str]] = []  # where the file names are, and whose requirements they are
    if "dependencies" in dynamic:
        fields += [((*setuptools, "dependencies", "file"), "project"), ((*hatch, "files"), "project")]
    if "optional-dependencies" in dynamic:
        for base, key in ((setuptools, ("file",)), (hatch, ())):
            fields += [
                ((*base, "optional-dependencies", x, *key), f"extra:{x}")
                for x in table(doc, (*base, "optional-dependencies"))
            ]
    for path, scope in fields:
        where = path[:-1] if path[1] == "setuptools" else path  # the entry: {file = ...}, or the list
        if get(doc.data, where) is None:
            continue
        files = get(doc.data, path)
        names = [files] if isinstance(files, str) else files
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            shape = "{file = [...]}" if path[1] == "setuptools" else "a list"
            dotted = ".".join(map(str, where))
            yield problem(doc, where, f"{dotted} must be {shape} of file names", entry=True)
            continue
        for i, name in enumerate(names):
            start, end = doc.value_location(path if isinstance(files, str) else (*path, i))
            yield Include(doc.index.location(start, end), name, scope=scope)


def _pdm_overrides(doc: TomlDoc) -> Iterator[Parsed]:
    """``[tool.pdm.resolution.overrides]`` (``[tool.pdm.overrides]`` before PDM 2): each replaces
    every requirement on its package, as uv's override-dependencies do. The value is a URL, a
    specifier (``">=2.5.8"``), or else a version (``"2.4.2"``, read as ``==2.4.2``): PDM's
    ``BaseProvider.overrides`` (pdm-project/pdm, src/pdm/resolver/providers.py)."""
    for base in (("tool", "pdm", "resolution", "overrides"), ("tool", "pdm", "overrides")):
        for name in table(doc, base):
            value = get(doc.data, (*base, name))
            if not isinstance(value, str):
                yield problem(
                    doc, (*base, name), f"PDM override of {excerpt(name)} must be a string", entry=True
                )
                continue
            if "://" in value:
                line = f"{name} @ {value}"
            else:
                try:
                    SpecifierSet(value)
                    line = f"{name}{value}"
                except InvalidSpecifier:
                    line = f"{name}=={value}"
            start, end = doc.key_location((*base, name))
            where, raw = doc.index.location(start, end), doc.index.text[start:end]
            yield pep508.parse(line, where, NAME, raw=raw, scope="pdm:overrides", kind=Kind.OVERRIDE)


def _uv_sources(doc: TomlDoc) -> Iterator[Parsed]:
    """``[tool.uv.sources]``. A source with ``extra``/``group`` applies only to the requirement listed
    under that extra or dependency group (uv's lowering filters the others out); its scope says which,
    ``uv:sources extra:gpu``. A source's ``marker`` is kept as the record's: where no source's marker
    holds, uv resolves the requirement from the index (uv's ``crates/uv-distribution/src/metadata/
    lowering.rs``)."""
    base: TomlPath = ("tool", "uv", "sources")
    for name in table(doc, base):
        entry = get(doc.data, (*base, name))
        entries = entry if isinstance(entry, list) else [entry]
        for i, item in enumerate(entries):
            where = (*base, name, i) if isinstance(entry, list) else (*base, name)
            if not isinstance(item, dict):
                yield problem(doc, where, f"source of {excerpt(name)} must be a table", entry=True)
                continue
            try:
                marker, extra, group = text(item, "marker"), text(item, "extra"), text(item, "group")
            except WrongType as exc:
                yield wrong_type(doc, where, exc, f"source of {excerpt(name)}", entry_text(name, item))
                continue
            scope = " ".join(
                [
                    "uv:sources",
                    *(f"{kind}:{normalize(v)}" for kind, v in (("extra", extra), ("group", group)) if v),
                ]
            )
            for rec in source_table(doc, where, name, item, "uv:sources", NAME):
                if isinstance(rec, Requirement) and (marker or scope != "uv:sources"):
                    yield rec._replace(marker=marker or None, scope=scope)
                else:
                    yield rec


def poetry(doc: TomlDoc, source: str = NAME) -> Iterator[Parsed]:
    tables: list[tuple[TomlPath, str]] = [
        (("tool", "poetry", "dependencies"), "project"),
        (("tool", "poetry", "dev-dependencies"), "group:dev"),
    ]
    for group in table(doc, ("tool", "poetry", "group")):
        tables.append((("tool", "poetry", "group", group, "dependencies"), f"group:{group}"))
    for path, scope in tables:
        for name in table(doc, path):
            if normalize(name) == "python":
                continue
            value = get(doc.data, (*path, name))
            if isinstance(value, list):
                for i, item in enumerate(value):
                    yield from _poetry_entry(doc, (*path, name, i), name, item, scope, source)
            else:
                yield from _poetry_entry(doc, (*path, name), name, value, scope, source)


def _poetry_entry(
    doc: TomlDoc, where: TomlPath, name: str, value: Any, scope: str, source: str
) -> Iterator[Parsed]:
    from fa_lint.syntax.poetry import PoetryConstraintError, specifiers  # for [tool.poetry] only

    if isinstance(value, dict) and ({"git", "url", "path", "file"} & value.keys()):
        yield from source_table(doc, where, name, value, scope, source)
        return
    if isinstance(value, dict):
        try:
            constraint = text(value, "version") or "*"
            markers, python = text(value, "markers"), text(value, "python")
        except WrongType as exc:
            yield wrong_type(doc, where, exc, f"Poetry dependency {excerpt(name)}", entry_text(name, value))
            return
        marker = " and ".join(m for m in (markers, python and f"python {python}") if m) or None
    else:
        constraint, marker = value, None
    if not isinstance(constraint, str):
        yield problem(doc, where, f"Poetry constraint for {excerpt(name)} must be a string", entry=True)
        return
    try:
        alternatives = specifiers(constraint)
    except PoetryConstraintError as exc:
        yield problem(doc, where, str(exc), entry=True)
        return
    start, end = doc.key_location(where)
    yield Requirement(
        name=normalize(name),
        raw=f'{name} = "{constraint}"',
        location=doc.index.location(start, end),
        source=source,
        specifier=alternatives[0],
        alternatives=alternatives if len(alternatives) > 1 else (),
        marker=marker,
        scope=scope,
    )
