"""uv sources with a marker, an extra or a group apply only where they say (FAL006, FAL004, FAL012).

uv's facts (docs/concepts/projects/dependencies.md, "Platform-specific sources" and "Multiple
sources"; crates/uv-distribution/src/metadata/lowering.rs): a source with ``marker`` is used where
the marker holds, and uv "falls back to PyPI on all other platforms" (lowering adds the requirement
under the negation of every source's marker); a source with ``extra = "x"`` or ``group = "x"``
applies only to the requirement listed under that extra or group, every other requirement on the
package resolves as if it had no source. uv resolves every extra and group together into one lock,
unless ``[tool.uv] conflicts`` declares some apart: then each fork's versions sit in the same lock
(docs/concepts/projects/config.md, "Conflicting dependencies"). flash-attn's setup.py imports torch,
so uv (which always isolates) fails to build an sdist without build settings (FAL012's page).
"""

from __future__ import annotations

from typing import Any

from tests.conftest import run

WHEEL = (
    "https://github.com/mjun0812/flash-attention-prebuild-wheels/releases/download/v0.9.0/"
    "flash_attn-2.8.3+cu128torch2.10-cp312-cp312-linux_x86_64.whl"
)
WHEEL_13 = WHEEL.replace("cu128", "cu130")
BUILD, BUILD_13 = "2.8.3+cu128torch2.10", "2.8.3+cu130torch2.10"
NO_ISOLATION = '[tool.uv]\nno-build-isolation-package = ["flash-attn"]\n'


def _lock(*entries: tuple[str, str]) -> str:
    """A uv.lock with one flash-attn entry per (version, source) pair."""
    out = 'version = 1\nrequires-python = ">=3.12"\n'
    for version, source in entries:
        where = f'{{ url = "{source}" }}' if source.startswith("http") else f'{{ registry = "{source}" }}'
        out += f'\n[[package]]\nname = "flash-attn"\nversion = "{version}"\nsource = {where}\n'
    return out


def _pyproject(deps: str, sources: str, rest: str = NO_ISOLATION) -> str:
    head = '[project]\nname = "x"\nversion = "0"\nrequires-python = ">=3.12"\n'
    return f"{head}dependencies = [{deps}]\n{rest}[tool.uv.sources]\nflash-attn = {sources}\n"


def _found(project: Any, files: dict[str, str], *select: str) -> list[tuple[str, int, str]]:
    project(files)
    args = ("--select", ",".join(select)) if select else ()
    out = run("--format", "json", "--isolated", *args, ".").json["findings"]
    return sorted((f["path"], f["line"], f["code"]) for f in out)


PYPI = "https://pypi.org/simple"


def test_a_marked_source_leaves_the_index_where_its_marker_does_not_hold(project: Any) -> None:
    manifest = _pyproject('"flash-attn>=2.6"', f'{{ url = "{WHEEL}", marker = "sys_platform == \'linux\'" }}')
    # Linux gets the wheel's build, every other platform the index's 2.8.3: neither is stale
    lock = _lock((BUILD, WHEEL), ("2.8.3", PYPI))
    assert _found(project, {"pyproject.toml": manifest, "uv.lock": lock}, "FAL006") == []
    # what neither the source nor the requirement admits still is
    lock = _lock((BUILD, WHEEL), ("2.5.8", PYPI))
    assert _found(project, {"pyproject.toml": manifest, "uv.lock": lock}, "FAL006") == [
        ("uv.lock", 10, "FAL006")
    ]
    # without the marker the source applies everywhere: the index's 2.8.3 is not what it installs
    unmarked = _pyproject('"flash-attn>=2.6"', f'{{ url = "{WHEEL}" }}')
    lock = _lock((BUILD, WHEEL), ("2.8.3", PYPI))
    assert _found(project, {"pyproject.toml": unmarked, "uv.lock": lock}, "FAL006") == [
        ("uv.lock", 10, "FAL006")
    ]


def test_a_source_for_an_extra_applies_only_to_what_the_extra_lists(project: Any) -> None:
    source = f'{{ url = "{WHEEL}", extra = "gpu" }}'
    # flash-attn is a main dependency, not the extra's: the source never applies, the index does
    manifest = _pyproject('"flash-attn>=2.6"', source)
    lock = _lock(("2.7.4", PYPI))
    assert _found(project, {"pyproject.toml": manifest, "uv.lock": lock}, "FAL006") == []
    # listed under the extra (its name as uv normalizes it), the source decides what that install gets
    extra = '[project.optional-dependencies]\nGPU = ["flash-attn>=2.6"]\n'
    manifest = _pyproject("", source, rest=extra + NO_ISOLATION)
    assert _found(project, {"pyproject.toml": manifest, "uv.lock": lock}, "FAL006") == [
        ("uv.lock", 5, "FAL006")
    ]
    assert _found(project, {"pyproject.toml": manifest, "uv.lock": _lock((BUILD, WHEEL))}, "FAL006") == []


def test_group_sources_with_conflicts_are_forks_of_one_lock(project: Any) -> None:
    # allenai/open-instruct's shape: the main dependency from the index, one wheel per CUDA group, the
    # two groups declared conflicting; the lock holds all three
    groups = (
        '[dependency-groups]\ncuda12 = ["flash-attn>=2.8.3"]\ncuda13 = ["flash-attn>=2.8.3"]\n'
        '[tool.uv]\nno-build-isolation-package = ["flash-attn"]\n'
        'conflicts = [[{ group = "cuda12" }, { group = "cuda13" }]]\n'
    )
    sources = (
        f'[\n  {{ url = "{WHEEL}", group = "cuda12" }},\n  {{ url = "{WHEEL_13}", group = "cuda13" }},\n]'
    )
    manifest = _pyproject('"flash-attn>=2.8.3"', sources, rest=groups)
    lock = _lock((BUILD, WHEEL), (BUILD_13, WHEEL_13), ("2.8.3.post1", PYPI))
    assert _found(project, {"pyproject.toml": manifest, "uv.lock": lock}, "FAL006") == []
    # an entry none of the forks admits is stale, and said once
    lock = _lock((BUILD, WHEEL), (BUILD_13, WHEEL_13), ("2.8.2", PYPI))
    assert _found(project, {"pyproject.toml": manifest, "uv.lock": lock}, "FAL006") == [
        ("uv.lock", 15, "FAL006")
    ]


def test_without_conflicts_every_group_is_in_the_one_resolution(project: Any) -> None:
    # uv resolves the group together with the main dependencies: the group's source fixes the one
    # flash-attn of the lock, so an index release there is stale
    rest = '[dependency-groups]\ncuda12 = ["flash-attn>=2.8.3"]\n' + NO_ISOLATION
    manifest = _pyproject('"flash-attn>=2.8.3"', f'{{ url = "{WHEEL}", group = "cuda12" }}', rest=rest)
    lock = _lock(("2.8.3.post1", PYPI))
    found = _found(project, {"pyproject.toml": manifest, "uv.lock": lock}, "FAL006")
    assert found == [("uv.lock", 5, "FAL006")]


def test_a_source_for_an_extra_is_not_combined_with_the_main_install(project: Any) -> None:
    older = WHEEL.replace("2.8.3+cu128torch2.10", "2.5.8+cu122torch2.3")
    rest = '[project.optional-dependencies]\nlegacy = ["flash-attn"]\n' + NO_ISOLATION
    manifest = _pyproject('"flash-attn>=2.6"', f'{{ url = "{older}", extra = "legacy" }}', rest=rest)
    project({"pyproject.toml": manifest})
    out = run("--format", "json", "--isolated", "--select", "FAL004", ".").json["findings"]
    # with the extra, uv needs one flash-attn for both: >=2.6 and the source's 2.5.8 admit none; the
    # main install alone is never given the extra's source
    assert [(f["line"], f["environment"]) for f in out] == [(5, "pyproject.toml [extra:legacy]")]


def test_a_wheel_source_builds_nothing_only_where_it_applies(project: Any) -> None:
    rest = '[dependency-groups]\ncuda12 = ["flash-attn>=2.8.3"]\n[tool.uv]\n'
    manifest = _pyproject('"flash-attn>=2.8.3"', f'{{ url = "{WHEEL}", group = "cuda12" }}', rest=rest)
    # the main dependency, outside the group, is the index's sdist: uv builds it in isolation
    assert _found(project, {"pyproject.toml": manifest}, "FAL012") == [("pyproject.toml", 5, "FAL012")]
    # a source without a condition serves every requirement: nothing builds
    manifest = _pyproject('"flash-attn>=2.8.3"', f'{{ url = "{WHEEL}" }}', rest="[tool.uv]\n")
    assert _found(project, {"pyproject.toml": manifest}, "FAL012") == []
    # one for Linux only leaves the other platforms the sdist
    marked = f'{{ url = "{WHEEL}", marker = "sys_platform == \'linux\'" }}'
    manifest = _pyproject('"flash-attn>=2.8.3"', marked, rest="[tool.uv]\n")
    assert _found(project, {"pyproject.toml": manifest}, "FAL012") == [("pyproject.toml", 5, "FAL012")]


def test_a_requirement_a_source_always_serves_is_judged_by_the_source(project: Any) -> None:
    # uv installs the unmarked source's build for the unpinned requirement: only the source is judged
    manifest = _pyproject('"flash-attn"', f'{{ url = "{WHEEL}" }}')
    assert _found(project, {"pyproject.toml": manifest}, "FAL001", "FAL002") == []
    # with a marker, other platforms get what the unpinned requirement admits from the index
    marked = _pyproject('"flash-attn"', f'{{ url = "{WHEEL}", marker = "sys_platform == \'linux\'" }}')
    assert _found(project, {"pyproject.toml": marked}, "FAL001", "FAL002") == [
        ("pyproject.toml", 5, "FAL002")
    ]
