"""pyproject.toml: PEP 621 and PEP 735 tables, build-system, and the uv, PDM, Poetry and pixi tables."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from fa_lint.model import BuildConfig, Include, Kind, Parsed, ParseProblem, Requirement, normalize
from fa_lint.syntax import pep508, tomldoc
from fa_lint.syntax.tables import (
    WrongType,
    entry_text,
    get,
    problem,
    settings,
    source_table,
    strings,
    subtable,
    table,
    text,
    texts,
    typed,
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
        no_isolation: set[str] = set()
        torch_for: set[str] = set()
        try:  # uv refuses a setting of the wrong type; what was read before it still counts
            no_isolation.update(normalize(n) for n in texts(uv, "no-build-isolation-package"))
            if typed(uv, ("no-build-isolation",), bool, "a boolean"):
                no_isolation.add("*")
            for package in subtable(uv, "extra-build-dependencies"):
                deps = typed(uv, ("extra-build-dependencies", package), list, "an array") or []
                if any(_names_torch(d, ("extra-build-dependencies", package, i)) for i, d in enumerate(deps)):
                    torch_for.add(normalize(package))
        except WrongType as exc:
            yield wrong_type(doc, ("tool", "uv"), exc, "[tool.uv]")
        start, end = doc.key_location(("tool", "uv"))
        forks = bool(uv.get("conflicts"))  # extras or groups uv resolves apart, each fork in the one lock
        yield BuildConfig(
            doc.index.location(start, end), "uv", frozenset(no_isolation), frozenset(torch_for), forks
        )
        # the platforms uv resolves for (environments) and must install on (required-environments)
        for key in ("environments", "required-environments"):
            yield from settings(doc, ("tool", "uv", key), "platform", f"uv {key}")
    if isinstance(get(doc.data, ("tool", "poetry")), dict):
        start, end = doc.key_location(("tool", "poetry"))
        yield BuildConfig(doc.index.location(start, end), "poetry")


def _names_torch(dep: Any, path: TomlPath) -> bool:
    """An extra build dependency on torch: ``"torch==2.6.0"`` or ``{requirement = "torch", ...}``."""
    if isinstance(dep, dict):
        path, dep = (*path, "requirement"), dep.get("requirement")
    if not isinstance(dep, str):
        raise WrongType(path, "a requirement string")
    name = dep.split(";", 1)[0].strip()
    end = next((i for i, c in enumerate(name) if not (c.isalnum() or c in "._-")), len(name))
    return normalize(name[:end]) in ("torch", "pytorch")


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
    """PEP 735 groups; a group's ``{include-group = "x"}`` brings in x's requirements, where x has them."""
    groups = get(doc.data, ("dependency-groups",))
    if not isinstance(groups, dict):
        return
    from packaging.dependency_groups import DependencyGroupResolver  # for PEP 735 groups only

    try:  # one resolver for every group: each group's requirements are parsed once, not once a use
        resolver: DependencyGroupResolver | None = DependencyGroupResolver(groups)
    except Exception:  # bad group names: every group reports them, as resolving it alone would
        resolver = None
    for group in groups:
        scope = f"group:{group}"
        try:
            (resolver or DependencyGroupResolver(groups)).resolve(group)
        except Exception as exc:  # packaging reports cycles and bad shapes, several at once in a group
            causes = "; ".join(str(e) for e in getattr(exc, "exceptions", [exc]))
            yield problem(doc, ("dependency-groups", group), f"dependency group {excerpt(group)}: {causes}")
            continue
        seen = {normalize(group)}
        pending = [group]
        while pending:
            current = pending.pop()
            yield from strings(doc, ("dependency-groups", current), NAME, scope=scope)
            for entry in groups.get(current) or []:
                included = entry.get("include-group") if isinstance(entry, dict) else None
                if isinstance(included, str) and normalize(included) not in seen:
                    seen.add(normalize(included))
                    pending += [g for g in groups if normalize(g) == normalize(included)]


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
