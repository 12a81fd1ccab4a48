"""What every rule is (a stable code, a kebab-case name, a default severity, a docs page), and what
every rule reads (the context)."""

from __future__ import annotations

import functools
import os
from collections import defaultdict
from collections.abc import Hashable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from packaging.version import Version

from fa_lint._records import NamedTuple
from fa_lint.code.uses import Use
from fa_lint.kb import KnowledgeBase
from fa_lint.kb.assess import Assessment, Policy, assess, assessed_as
from fa_lint.machine import toolchain
from fa_lint.machine.environments import SEQUENTIAL, Environment, label, split
from fa_lint.model import (
    BuildConfig,
    Finding,
    Image,
    Include,
    Kind,
    Location,
    NotRun,
    ParseProblem,
    Requirement,
    Setting,
    Severity,
)

if TYPE_CHECKING:
    from fa_lint.kb.transformers import TransformersFacts
    from fa_lint.machine.target import Machines, Target

DOCS = "https://github.com/fa-lint/fa-lint/blob/main/docs/"
DOCS_URL = DOCS + "rules/{code}.md"


class Rule(NamedTuple):
    code: str
    name: str
    severity: Severity  # the default: what a finding has unless the rule says otherwise
    summary: str
    also: tuple[Severity, ...] = ()  # the other severities its findings take, by context (its page says when)

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    @property
    def severities(self) -> tuple[Severity, ...]:
        """Every severity the rule's findings can have, the default first."""
        return (self.severity, *self.also)

    def finding(self, location: Location, message: str, **fields: Any) -> Finding:
        severity = fields.pop("severity", self.severity)
        return Finding(self.code, self.name, severity, location, message, url=self.url, **fields)


exact = toolchain.exact  # the single version a requirement fixes


class Context:
    """What the rules read: the knowledge base and policy, and everything the checked files say."""

    def __init__(
        self,
        kb: KnowledgeBase,
        policy: Policy,
        requirements: tuple[Requirement, ...],
        problems: tuple[ParseProblem, ...] = (),
        unfollowed: tuple[tuple[Include, str], ...] = (),
        environments: tuple[Environment, ...] = (),
        builds: tuple[BuildConfig, ...] = (),
        settings: tuple[Setting | Image, ...] = (),
        not_run: tuple[NotRun, ...] = (),
        uses: tuple[Use, ...] = (),
        code_read: bool = False,
    ) -> None:
        self.kb = kb
        self.policy = policy
        self.requirements = requirements
        self.problems = problems
        self.unfollowed = unfollowed  # includes fa-lint did not read, and why
        self.environments = environments
        self.builds = builds  # [tool.uv], [tool.poetry]: how projects build sdists
        self.not_run = not_run  # installs the shell never runs (FAL007 says why; nothing judges them)
        self.settings = settings  # what the files say about the machines (fa_lint.machine.target)
        self.uses = uses  # what the project's code runs (fa_lint.code)
        self.code_read = code_read  # a walk searched Python files for uses: "none takes it" means something

    def with_policy(self, policy: Policy) -> Context:
        """The same files judged under another policy (a ROCm target's floor): its own caches, since
        assessments and fixes depend on the policy."""
        return Context(
            self.kb,
            policy,
            self.requirements,
            self.problems,
            self.unfollowed,
            self.environments,
            builds=self.builds,
            settings=self.settings,
            not_run=self.not_run,
        )

    @functools.cached_property
    def _machines(self) -> Machines:
        from fa_lint.machine.target import Machines  # only runs whose files say something build it

        return Machines(self.settings, self.environments)

    def target(self, env: Environment) -> Target:
        """The machine ``env`` lands on: GPUs, platform, C library, nvcc, build variables."""
        return self._machines.of(env)

    @functools.cached_property
    def transformers(self) -> TransformersFacts:
        """What transformers does with flash-attn, read when a finding first explains it."""
        from fa_lint.kb import transformers

        return transformers.load()

    @functools.cached_property
    def _by_location(self) -> dict[Location, list[Environment]]:
        index: dict[Location, list[Environment]] = defaultdict(list)
        for env in self.environments:
            for loc in dict.fromkeys(r.location for r in (*env.members, *env.locked, *env.superseded)):
                index[loc].append(env)
        return index

    @functools.cached_property
    def _assessments(self) -> dict[Hashable, Assessment]:
        return {}

    def assessment(self, req: Requirement) -> Assessment:
        """What one requirement admits; computed once however many rules ask, and once for equal ones."""
        key = assessed_as(req)
        found = self._assessments.get(key)
        if found is None:
            found = self._assessments[key] = assess(req, self.kb, self.policy)
        return found

    @functools.cached_property
    def _toolchains(self) -> dict[int, toolchain.Toolchain]:
        return {}

    @functools.cached_property
    def memo(self) -> dict[Any, Any]:
        """Results rules compute once per run and look up per requirement (keys start with a name)."""
        return {}

    def toolchain(self, env: Environment) -> toolchain.Toolchain:
        """What torch, CUDA and CPython ``env`` runs; computed once per environment."""
        found = self._toolchains.get(id(env))
        if found is None:
            found = self._toolchains[id(env)] = toolchain.of(env, self._python_version(env))
        return found

    @functools.cached_property
    def _python_versions(self) -> dict[str, Requirement]:
        return {
            os.path.dirname(r.location.path): r for r in self.requirements if r.source == "python-version"
        }

    def _python_version(self, env: Environment) -> list[Requirement]:
        """The nearest ``.python-version`` at or above a project's folder: what uv and pyenv run.

        An image or a script picks its own Python, so theirs never counts.
        """
        if env.images or any(r.source in SEQUENTIAL for r in env.members):
            return []
        folder = os.path.dirname(split(env.name)[0])
        pinned = self._python_versions
        while folder not in pinned:
            parent = os.path.dirname(folder)
            if parent == folder:
                return []
            folder = parent
        return [pinned[folder]]

    @functools.cached_property
    def _builds(self) -> dict[str, list[BuildConfig]]:
        by_path: dict[str, list[BuildConfig]] = defaultdict(list)
        for b in self.builds:
            by_path[b.location.path].append(b)
        return by_path

    def builds_in(self, path: str) -> list[BuildConfig]:
        """The build settings (``[tool.uv]``, ``[tool.poetry]``) of one file: looked up, not searched
        for among every file's once a requirement."""
        return self._builds.get(path, [])

    def lock_tools(self, env: Environment) -> frozenset[str | None]:
        """The tools that wrote the lock entries of an environment: once per environment."""
        key = ("lock tools", id(env))
        if key not in self.memo:
            self.memo[key] = frozenset(r.tool for r in env.locked)
        found: frozenset[str | None] = self.memo[key]
        return found

    def environments_of(self, req: Requirement) -> list[Environment]:
        return self._by_location.get(req.location, [])

    def from_source(self, req: Requirement) -> bool:
        """Whether one of the requirement's environments takes its package from a git or URL source, or a
        source build: that replaces the index, so the source's own record is what installs."""
        return any(
            r.kind is Kind.SOURCE and (r.url or r.build)
            for env in self.environments_of(req)
            for r in env.of(req.name)
        )

    @functools.cached_property
    def _satisfied(self) -> dict[Location, Requirement]:
        return {later.location: earlier for env in self.environments for later, earlier in env.satisfied}

    @functools.cached_property
    def _by_name(self) -> dict[str, Environment]:
        return {env.name: env for env in self.environments}

    def building(self, env: Environment, req: Requirement) -> Environment:
        """The environment whose machine builds ``req``: the builder stage whose command made the wheel
        that ``env`` installs (its nvcc, torch and variables are the ones setup.py sees), else ``env``."""
        built_in = req.options.built_in if req.options is not None else ""
        if not built_in or built_in == req.scope:
            return env
        name = label(req.location.path, built_in)
        found = self._by_name.get(name)
        if found is None:  # a builder stage that installs nothing of its own: its base image is all it has
            images = tuple(
                i
                for i in self.settings
                if isinstance(i, Image) and i.location.path == req.location.path and i.scope == built_in
            )
            found = self._by_name[name] = Environment(name, (), images=images)
        return found

    def satisfied_by(self, req: Requirement) -> Requirement | None:
        """The earlier install that leaves this one nothing to do (pip without --upgrade keeps it)."""
        return self._satisfied.get(req.location)

    def environment_name(self, req: Requirement) -> str | None:
        """The most specific install this requirement belongs to."""
        envs = self.environments_of(req)
        own = [e for e in envs if e.name.startswith(req.location.path)] or envs
        return min(own, key=lambda e: len(e.members)).name if own else None

    @functools.cached_property
    def _pins(self) -> dict[tuple[tuple[int, ...], str], tuple[Version, Requirement | None] | None]:
        return {}

    def pinned(self, req: Requirement, name: str) -> tuple[Version, Requirement | None] | None:
        """The one version of ``name`` the environments of ``req`` pin, and where (None: an image).

        Worked out once per set of environments: every requirement of a file shares the same set.
        """
        envs = self.environments_of(req)
        key = (tuple(map(id, envs)), name)
        if key not in self._pins:
            self._pins[key] = self._pinned(envs, name)
        return self._pins[key]

    def _pinned(self, envs: list[Environment], name: str) -> tuple[Version, Requirement | None] | None:
        found: dict[Version, Requirement | None] = {}
        for env in envs:
            for other in (*env.of(name, locked=True), *env.of(name)):
                v = exact(other)
                if v is not None:
                    found.setdefault(Version(v.public), other)
            if name == "torch":
                for image in env.images:
                    if image.torch is not None:
                        found.setdefault(image.torch, None)
        return next(iter(found.items())) if len(found) == 1 else None


class Check(Protocol):
    def __call__(self, ctx: Context) -> Iterator[Finding]: ...
