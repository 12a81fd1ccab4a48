"""FAL012 on a project's own manifest: the installer that installs it, and whether that installer builds
flash-attn's sdist where torch can be seen.

A pyproject.toml, setup.py or setup.cfg whose dependencies hold flash-attn is installed by its
installer even where no script says so: uv, pixi, PDM or Poetry where its tool tables or lock say so,
else ``pip install .``. Each is judged with its own build settings, from its source per release
(``fa_lint/kb/installers.json``): uv's ``no-build-isolation-package`` and ``extra-build-dependencies``
(with the uv release the project or its CI names), pixi's ``[pypi-options] no-build-isolation``, PDM's
``--no-isolation`` default options, Poetry (no switch), pip's own default. A project a script installs
is judged at that command instead (``install._command``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from fa_lint._records import NamedTuple
from fa_lint.kb import installers as kb_installers
from fa_lint.machine.environments import Environment
from fa_lint.model import FLASH_ATTN, BuildConfig, Location, Requirement, Setting, Severity
from fa_lint.rules._base import Context, once
from fa_lint.rules._fal012 import NO_TORCH

# uv 0.11.0 refused match-runtime for flash-attn: it read the sdist's PKG-INFO `Dynamic:` fields without
# regard to case (the release's metadata_resolver.rs, in installers.json), and setuptools writes
# `Dynamic: requires-dist`, so flash-attn's metadata counted as dynamic. Reports: astral-sh/uv#18690 (the
# error), #18692 (the revert in 0.11.1), embeddings-benchmark/mteb#4295 (the error as CI printed it).
MATCH_RUNTIME_UV = (
    'match-runtime needs uv other than 0.11.0, which refuses it for flash-attn ("`flash-attn` does not '
    'declare static metadata, making runtime-matching impossible"; fixed in 0.11.1): keep '
    '[tool.uv] required-version = ">=0.11.1" or setup-uv\'s version off 0.11.0'
)
SOURCES = frozenset({"pyproject", "setup.py", "setup.cfg", "pixi"})
# the order an installer is named in when several could install the project (a lock's first)
ORDER = ("uv", "pixi", "pdm", "poetry")


class Verdict(NamedTuple):
    """What FAL012 says of a project's flash-attn: its headline, severity, notes and help."""

    headline: str
    severity: Severity
    notes: tuple[str, ...]
    help: str


def judge(ctx: Context, env: Environment, req: Requirement) -> Verdict | None:
    """FAL012 on ``req`` as its project's installer installs it, or None where the build sees torch."""
    if req.source not in SOURCES or req.scope == "build-system" or req.tool == "conda":
        return None
    path = req.location.path
    configs = ctx.builds_in(path)
    tools = {b.tool for b in configs if b.read} | {t for t in ctx.lock_tools(env) if t in ORDER}
    if req.source == "pixi":
        tools.add("pixi")
    if not tools:
        # a lock of another tool (pylock.toml) says what installs, not `pip install .`
        return None if env.locked else _pip(ctx, req)
    verdicts = [JUDGES[tool](ctx, req, configs) for tool in ORDER if tool in tools]
    if not verdicts or any(v is None for v in verdicts):
        return None  # an installer the project names builds it where torch is
    return verdicts[0]


# --- pip ----------------------------------------------------------------------------------------------


def _pip(ctx: Context, req: Requirement) -> Verdict | None:
    """``pip install .`` of a project whose own dependencies hold flash-attn (not an extra or a group:
    only what a plain install brings), where no command of the repository installs the project."""
    if req.scope != "project" or req.source == "pixi" or req.location in _installed_by_commands(ctx):
        return None
    facts = kb_installers.load()
    setuptools = facts.fact("pip.isolated_without_wheel")
    notes = (
        NO_TORCH,
        f"pip {facts.pip_always_isolated} and later build every sdist with PEP 517, in isolation "
        f"({facts.pip_always_evidence}); pip {setuptools.since}-{_before(setuptools)} do so unless "
        f"setuptools and wheel are installed ({setuptools.evidence})",
        "even pip's legacy build sees only a torch installed before this command: pip reads every "
        "requirement's metadata, flash-attn's setup.py included, before it installs any, torch too",
        "no command in the files read installs this project: it is judged as `pip install .` installs it",
    )
    return Verdict(
        "`pip install .` may build flash-attn in isolation, without torch; install torch, then "
        "`pip install --no-build-isolation`",
        Severity.WARNING,
        notes,
        "install torch first and the project with `pip install --no-build-isolation .` (and say so where "
        "the project says how to install it), or take flash-attn from a release wheel URL",
    )


def _before(fact: kb_installers.Fact) -> str:
    """The last release line of a range that ends: 25.3 -> "25.2"."""
    until = fact.until
    if until is None:
        return "now"
    return f"{until.major}.{until.minor - 1}" if until.minor else f"{until.major - 1}.x"


@once
def _installed_by_commands(ctx: Context) -> frozenset[Location]:
    """The manifest entries a command of the repository installs (``pip install -e .`` read through)."""
    return frozenset(
        r.location
        for env in ctx.environments
        for r in (*env.members, *env.superseded)
        if r.options is not None and r.options.installer
    )


# --- uv -----------------------------------------------------------------------------------------------


def _uv(ctx: Context, req: Requirement, configs: list[BuildConfig]) -> Verdict | None:
    config = next((b for b in configs if b.tool == "uv"), None)
    if config is None or not (_allows(config) or FLASH_ATTN in config.torch_for):
        return Verdict(
            "uv builds flash-attn in isolation, where torch is missing; "
            'set [tool.uv] no-build-isolation-package = ["flash-attn"]',
            Severity.ERROR,
            (
                NO_TORCH,
                "uv builds every sdist in isolation unless [tool.uv] no-build-isolation-package names it "
                "or [tool.uv.extra-build-dependencies] gives it torch",
                MATCH_RUNTIME_UV,
            ),
            'add [tool.uv.extra-build-dependencies] flash-attn = [{ requirement = "torch", '
            'match-runtime = true }], or no-build-isolation-package = ["flash-attn"] with torch '
            "a dependency",
        )
    for setting in _uv_releases(ctx, req):
        found = _uv_release(config, setting)
        if found is not None:
            return found
    return None


def _allows(config: BuildConfig) -> bool:
    return bool({"*", FLASH_ATTN} & config.no_isolation)


def _uv_releases(ctx: Context, req: Requirement) -> Iterator[Setting]:
    """The uv release settings that bear on this project: its own required-version first, then CI's."""
    found = [s for s in ctx.settings if isinstance(s, Setting) and s.kind == "installer" and s.name == "uv"]
    yield from (s for s in found if s.location.path == req.location.path)
    yield from (s for s in found if s.location.path != req.location.path)


def _uv_release(config: BuildConfig, setting: Setting) -> Verdict | None:
    """What one named uv release makes of the settings the project relies on."""
    version = kb_installers.version(setting.value)
    if version is None:
        return None  # a range or "latest": no one release
    facts = kb_installers.load()
    own = setting.location.path == config.location.path
    where = "[tool.uv] required-version" if own else "setup-uv's version"
    said = f"{where} {setting.value} ({setting.location})"
    severity = Severity.ERROR if own else Severity.WARNING
    refused = next((e for v, e in facts.uv_dynamic_case_insensitive if v == version), None)
    if refused is not None and FLASH_ATTN in config.runtime_for and not _allows(config):
        return Verdict(
            f"uv {version} refuses match-runtime for flash-attn (`does not declare static metadata`); "
            "use uv 0.11.1 or later",
            severity,
            (
                f"{said} runs uv {version}",
                MATCH_RUNTIME_UV,
                f"uv {version} reads `Dynamic:` without case: {refused}",
            ),
            f'set {where} off {version} (required-version = ">=0.11.1")',
        )
    setting_fact = "uv.no_build_isolation_package" if _allows(config) else "uv.extra_build_dependencies"
    fact = facts.fact(setting_fact)
    if version < fact.since:
        key = setting_fact.split(".", 1)[1].replace("_", "-")
        return Verdict(
            f"uv {version} has no {key} (from uv {fact.since}): it builds flash-attn in isolation, where "
            "torch is missing",
            severity,
            (
                NO_TORCH,
                f"{said} runs uv {version}",
                f"{key} first appears in uv {fact.since}: {fact.evidence}",
            ),
            f"use uv {fact.since} or later",
        )
    return None


# --- pixi, PDM, Poetry --------------------------------------------------------------------------------


def _pixi(ctx: Context, req: Requirement, configs: list[BuildConfig]) -> Verdict | None:
    if any(b.tool == "pixi" and b.read and _allows(b) for b in configs):
        return None
    facts = kb_installers.load()
    since = facts.fact("pixi.no_build_isolation")
    notes = [
        NO_TORCH,
        "pixi builds PyPI sdists in isolation (through uv's build frontend) unless [pypi-options] "
        f"no-build-isolation names them (pixi {since.since} and later: {since.evidence}); it installs "
        "them after the conda packages, so a conda pytorch is there for a build without isolation",
    ]
    misplaced = next((b for b in configs if b.tool == "pixi" and not b.read and _allows(b)), None)
    if misplaced is not None:
        ignored = facts.fact("pixi.tool_table_ignored")
        notes.append(
            f"{misplaced.location} names flash-attn under [tool.pixi.pypi-options], which pixi never reads "
            f"in a pixi.toml: it skips the [tool] table ({ignored.last}); the key belongs in [pypi-options]"
        )
    table = "[tool.pixi.pypi-options]" if req.source == "pyproject" else "[pypi-options]"
    return Verdict(
        f"pixi builds flash-attn in isolation, without torch; "
        f'set {table} no-build-isolation = ["flash-attn"]',
        Severity.ERROR,
        tuple(notes),
        f'add {table} no-build-isolation = ["flash-attn"] (pixi {since.since} or later), with pytorch a '
        "dependency; or take flash-attn from conda-forge's flash-attn package",
    )


def _pdm(ctx: Context, req: Requirement, configs: list[BuildConfig]) -> Verdict | None:
    if any(b.tool == "pdm" and _allows(b) for b in configs):
        return None
    facts = kb_installers.load()
    setting, options = facts.fact("pdm.build_isolation_setting"), facts.fact("pdm.options_table")
    return Verdict(
        "PDM builds flash-attn in isolation, where torch is missing; install it with --no-isolation",
        Severity.WARNING,  # a pdm.toml or PDM_BUILD_ISOLATION, which fa-lint does not read, may turn it off
        (
            NO_TORCH,
            f"PDM's build_isolation setting is on unless set off (PDM {setting.since} and later: "
            f"{setting.evidence}), in pdm.toml or by PDM_BUILD_ISOLATION; neither is read here",
            f"[tool.pdm.options] gives a command its default options (PDM {options.since}: "
            f"{options.evidence})",
        ),
        'add [tool.pdm.options] install = ["--no-isolation"] (and sync, add, lock alike), with torch a '
        "dependency",
    )


def _poetry(ctx: Context, req: Requirement, configs: list[BuildConfig]) -> Verdict | None:
    facts = kb_installers.load()
    chef, removed = facts.fact("poetry.isolated_builder"), facts.fact("poetry.modern_installation_removed")
    return Verdict(
        "Poetry builds flash-attn in isolation, where torch is missing; use a wheel URL for it",
        Severity.ERROR,
        (
            NO_TORCH,
            "Poetry builds every sdist in isolation and has no option to turn it off",
            f"its installer builds through an isolated builder from Poetry {chef.since} ({chef.last}); "
            f"installer.modern-installation, which let pip install instead, is gone from {removed.since}",
        ),
        'point flash-attn at a release wheel (flash-attn = { url = "...whl" }), or install it '
        "outside Poetry with 'pip install --no-build-isolation flash-attn'",
    )


JUDGES: dict[str, Callable[[Context, Requirement, list[BuildConfig]], Verdict | None]] = {
    "uv": _uv,
    "pixi": _pixi,
    "pdm": _pdm,
    "poetry": _poetry,
}
