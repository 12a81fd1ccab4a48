"""pixi manifests: ``pixi.toml``, and ``[tool.pixi]`` inside pyproject.toml.

``[dependencies]`` (and host/build) are conda packages, read as conda MatchSpec versions;
``[pypi-dependencies]`` are PyPI's, as a PEP 440 string or a table (``version``, ``git`` with
``tag``/``rev``/``branch``, ``url``, ``path``). ``[target.<platform>.*]`` entries carry the platform
as a marker; ``[feature.<name>.*]`` tables are scoped to the feature, and each ``[environments]``
entry installs the default feature (unless ``no-default-feature``) with its listed features.
"""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import Group, Parsed, ParseProblem, Requirement, Setting
from fa_lint.sources.pipfile import versioned
from fa_lint.syntax import matchspec, tomldoc
from fa_lint.syntax.tables import (
    WrongType,
    entry_text,
    get,
    problem,
    settings,
    source_table,
    table,
    texts,
    typed,
    wrong_type,
)
from fa_lint.syntax.text import excerpt
from fa_lint.syntax.tomldoc import TomlDoc, TomlPath

NAME = "pixi"
CONDA = ("dependencies", "host-dependencies", "build-dependencies")
_OS = {"linux": "linux", "osx": "darwin", "win": "win32"}


def parse(path: str, text: str) -> Iterator[Parsed]:
    doc = tomldoc.load(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    yield from tables(doc, (), "default", NAME)
    yield from _environments(doc)
    from fa_lint.sources.buildsettings import pixi_options

    yield from pixi_options(doc, ())


def tables(doc: TomlDoc, base: TomlPath, default: str, source: str) -> Iterator[Parsed]:
    """Every dependency table of a pixi manifest under ``base``; the default feature is ``default``.
    The ``platforms`` each solves for are settings of the machine (a feature's own, scoped to it)."""
    yield from _feature(doc, base, default, source)
    yield from _system_cuda(doc, base, "")
    for top in ("workspace", "project"):
        yield from settings(doc, (*base, top, "platforms"), "platform", "pixi platforms")
    yield from _not_a_table(doc, (*base, "feature"))
    for feature in table(doc, (*base, "feature")):
        yield from _feature(doc, (*base, "feature", feature), f"feature:{feature}", source)
        yield from _system_cuda(doc, (*base, "feature", feature), f"feature:{feature}")
        where = (*base, "feature", feature, "platforms")
        yield from settings(doc, where, "platform", "pixi platforms", f"feature:{feature}")


def _system_cuda(doc: TomlDoc, base: TomlPath, scope: str) -> Iterator[Setting]:
    """``[system-requirements] cuda = "12"``: the CUDA the machine's driver is declared to provide (pixi's
    ``__cuda`` virtual package); a feature's own is one of the machines its environments run on."""
    path = (*base, "system-requirements", "cuda")
    value = get(doc.data, path)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        start, end = doc.value_location(path)
        yield Setting(
            doc.index.location(start, end),
            "driver",
            "pixi system-requirements",
            str(value),
            "",
            possible=bool(scope),
        )


def _feature(doc: TomlDoc, base: TomlPath, scope: str, source: str) -> Iterator[Parsed]:
    places: list[tuple[TomlPath, str | None]] = [(base, None)]
    yield from _not_a_table(doc, (*base, "target"))
    for platform in table(doc, (*base, "target")):
        os_name = _OS.get(platform.split("-", 1)[0])
        marker = f'sys_platform == "{os_name}"' if os_name else None
        places.append(((*base, "target", platform), marker))
    for where, marker in places:
        for key in (*CONDA, "pypi-dependencies"):
            yield from _not_a_table(doc, (*where, key))
        for key in CONDA:
            for name in table(doc, (*where, key)):
                yield from _conda_entry(doc, (*where, key, name), name, scope, marker, source)
        for name in table(doc, (*where, "pypi-dependencies")):
            yield from _pypi_entry(doc, (*where, "pypi-dependencies", name), name, scope, marker, source)


def _not_a_table(doc: TomlDoc, path: TomlPath) -> Iterator[Parsed]:
    """pixi refuses a manifest whose dependency tables are of another type; so does fa-lint, located."""
    value = get(doc.data, path)
    if value is not None and not isinstance(value, dict):
        yield problem(doc, path, f"{'.'.join(map(str, path))} must be a table")


def _conda_entry(
    doc: TomlDoc, where: TomlPath, name: str, scope: str, marker: str | None, source: str
) -> Iterator[Parsed]:
    value = get(doc.data, where)
    version = value.get("version", "*") if isinstance(value, dict) else value
    if not isinstance(version, str):
        yield problem(doc, where, f"version of {excerpt(name)} must be a string", entry=True)
        return
    start, end = doc.key_location(where)
    rec = matchspec.matchspec(f"{name} {version}", doc.index.location(start, end), source, scope=scope)
    if isinstance(rec, Requirement):
        rec = rec._replace(raw=f'{name} = "{version}"', marker=marker)
    if rec is not None:  # None: another package's conda version, which PEP 440 cannot say
        yield rec


def _pypi_entry(
    doc: TomlDoc, where: TomlPath, name: str, scope: str, marker: str | None, source: str
) -> Iterator[Parsed]:
    value = get(doc.data, where)
    if isinstance(value, dict) and ({"git", "url", "path"} & value.keys()):
        for rec in source_table(doc, where, name, value, scope, source):
            yield rec._replace(marker=marker) if isinstance(rec, Requirement) else rec
        return
    version = value.get("version", "*") if isinstance(value, dict) else value
    try:
        extras = texts(value, "extras") if isinstance(value, dict) else []
    except WrongType as exc:
        yield wrong_type(doc, where, exc, f"PyPI dependency {excerpt(name)}", entry_text(name, value))
        return
    yield versioned(doc, where, name, version, source, marker=marker, extras=frozenset(extras), scope=scope)


def _environments(doc: TomlDoc) -> Iterator[Parsed]:
    envs = get(doc.data, ("environments",))
    if not isinstance(envs, dict) or "default" not in envs:
        yield Group(doc.index.location(0, 0), "env:default", ("default",))
    if not isinstance(envs, dict):
        if envs is not None:
            yield problem(doc, ("environments",), "environments must be a table")
        return
    for env, value in envs.items():
        base: TomlPath = ("environments", env) if isinstance(value, dict) else ("environments",)
        try:  # pixi refuses an environment of the wrong shape
            if isinstance(value, dict):
                features = texts(value, "features")
                alone = bool(typed(value, ("no-default-feature",), bool, "a boolean"))
            else:
                features, alone = texts(envs, env), False
        except WrongType as exc:
            yield wrong_type(doc, base, exc, f"pixi environment {excerpt(env)}")
            continue
        scopes = ([] if alone else ["default"]) + [f"feature:{f}" for f in features]
        start, end = doc.key_location(("environments", env))
        yield Group(doc.index.location(start, end), f"env:{env}", tuple(scopes))
