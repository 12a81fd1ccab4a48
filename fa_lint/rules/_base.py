"""What every rule is (a stable code, a kebab-case name, a default severity, a docs page), and what
every rule reads (the context)."""

from __future__ import annotations

import functools
import os
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterator
from typing import TYPE_CHECKING, Generic, Protocol, TypedDict, TypeVar
from weakref import WeakKeyDictionary

from packaging.version import Version

from fa_lint._records import NamedTuple
from fa_lint.code.uses import Use
from fa_lint.kb import KnowledgeBase
from fa_lint.kb.assess import Assessment, Policy, assess, assessed_as
from fa_lint.machine import toolchain
from fa_lint.machine.environments import Environment, label, split
from fa_lint.model import (
    BuildConfig,
    Finding,
    Fix,
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
from fa_lint.sources import SCRIPTS

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
    preview: bool = False  # not yet stable: its findings are reported under --preview only (ruff's)

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    @property
    def severities(self) -> tuple[Severity, ...]:
        """Every severity the rule's findings can have, the default first."""
        return (self.severity, *self.also)

    def finding(
        self,
        location: Location,
        message: str,
        *,
        severity: Severity | None = None,  # None: the rule's default
        package: str | None = None,
        requirement: str | None = None,
        admitted: tuple[str, ...] | None = None,
        environment: str | None = None,
        related: tuple[Location, ...] = (),
        fix: Fix | None = None,
        notes: tuple[str, ...] = (),
        help: str = "",
    ) -> Finding:
        """A finding of this rule, with its code, name, severity and page filled in."""
        return Finding(
            self.code,
            self.name,
            self.severity if severity is None else severity,
            location,
            message,
            package,
            requirement,
            admitted,
            self.url,
            environment,
            related,
            fix,
            notes,
            help,
        )


class About(TypedDict, total=False):
    """What a family's findings on one requirement share (``rule.finding(loc, msg, **about)``)."""

    package: str
    requirement: str
    admitted: tuple[str, ...]
    environment: str | None


exact = toolchain.exact  # the single version a requirement fixes
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Answers:
    """A context's own answers: each question (a ``Memo``) keeps its answers for a context under this
    token, so a context made by ``Context.replace`` (another policy) starts with none of them."""

    __slots__ = ("__weakref__",)


class Memo(Generic[K, V]):
    """One question the rules ask of a run, answered once per key in each context.

    Declared beside the code that asks it, typed by what it is asked and what it answers::

        _ALLOWED: Memo[tuple[Location, str, bool], VersionRange] = Memo()

        found = _ALLOWED.of(ctx)  # this context's answers so far
        if key not in found:
            found[key] = ...

    The answers live as long as the context (a weak reference to its ``Answers``): a run's are gone
    with it, and a language server's next check starts afresh.
    """

    __slots__ = ("_by_context",)

    def __init__(self) -> None:
        self._by_context: WeakKeyDictionary[Answers, dict[K, V]] = WeakKeyDictionary()

    def of(self, ctx: Context) -> dict[K, V]:
        try:
            return self._by_context[ctx.answers]
        except KeyError:
            found: dict[K, V] = {}
            self._by_context[ctx.answers] = found
            return found


def once(work: Callable[[Context], V]) -> Callable[[Context], V]:
    """``work(ctx)`` worked out once per context (an index over the run's files, a set of releases)."""
    answers: Memo[None, V] = Memo()

    @functools.wraps(work)
    def answer(ctx: Context) -> V:
        found = answers.of(ctx)
        if None not in found:
            found[None] = work(ctx)
        return found[None]

    return answer


class Context(NamedTuple):
    """What the rules read: the knowledge base and policy, everything the checked files say, and what
    the rules have worked out from them (``answers``, one ``Memo`` per question).

    The engine makes one a run; ``replace`` is the only copy (the same files under another policy).
    """

    kb: KnowledgeBase
    policy: Policy
    answers: Answers  # a fresh one for each context: answers depend on the policy
    requirements: tuple[Requirement, ...]
    problems: tuple[ParseProblem, ...] = ()
    unfollowed: tuple[tuple[Include, str], ...] = ()  # includes fa-lint did not read, and why
    environments: tuple[Environment, ...] = ()
    builds: tuple[BuildConfig, ...] = ()  # [tool.uv], [tool.poetry]: how projects build sdists
    settings: tuple[Setting | Image, ...] = ()  # what the files say of the machines (fa_lint.machine.target)
    not_run: tuple[NotRun, ...] = ()  # installs the shell never runs (FAL007 says why; nothing judges them)
    uses: tuple[Use, ...] = ()  # what the project's code runs (fa_lint.code)
    code_read: bool = False  # a walk searched Python files for uses: "none takes it" means something

    def replace(self, policy: Policy) -> Context:
        """The same files judged under another policy (a ROCm target's floor), every field kept, with
        answers of their own: assessments and fixes depend on the policy."""
        return self._replace(policy=policy, answers=Answers())

    def target(self, env: Environment) -> Target:
        """The machine ``env`` lands on: GPUs, platform, C library, nvcc, build variables."""
        return _machines(self).of(env)

    @property
    def transformers(self) -> TransformersFacts:
        """What transformers does with flash-attn, read when a finding first explains it."""
        from fa_lint.kb import transformers

        return transformers.load()

    def assessment(self, req: Requirement) -> Assessment:
        """What one requirement admits; computed once however many rules ask, and once for equal ones."""
        found = _ASSESSMENTS.of(self)
        key = assessed_as(req)
        if key not in found:
            found[key] = assess(req, self.kb, self.policy)
        return found[key]

    def toolchain(self, env: Environment) -> toolchain.Toolchain:
        """What torch, CUDA and CPython ``env`` runs; computed once per environment."""
        found = _TOOLCHAINS.of(self)
        if env not in found:
            found[env] = toolchain.of(env, _python_version(self, env))
        return found[env]

    def builds_in(self, path: str) -> list[BuildConfig]:
        """The build settings (``[tool.uv]``, ``[tool.poetry]``) of one file: looked up, not searched
        for among every file's once a requirement."""
        found = _BUILDS.of(self)
        if None not in found:
            by_path: dict[str, list[BuildConfig]] = defaultdict(list)
            for b in self.builds:
                by_path[b.location.path].append(b)
            found[None] = by_path
        return found[None].get(path, [])

    def lock_tools(self, env: Environment) -> frozenset[str | None]:
        """The tools that wrote the lock entries of an environment: once per environment."""
        found = _LOCK_TOOLS.of(self)
        if env not in found:
            found[env] = frozenset(r.tool for r in env.locked)
        return found[env]

    def environments_of(self, req: Requirement) -> list[Environment]:
        return _by_location(self).get(req.location, [])

    def from_source(self, req: Requirement) -> bool:
        """Whether one of the requirement's environments takes its package from a git or URL source, or a
        source build: that replaces the index, so the source's own record is what installs."""
        return any(
            r.kind is Kind.SOURCE and (r.url or r.build)
            for env in self.environments_of(req)
            for r in env.of(req.name)
        )

    def building(self, env: Environment, req: Requirement) -> Environment:
        """The environment whose machine builds ``req``: the builder stage whose command made the wheel
        that ``env`` installs (its nvcc, torch and variables are the ones setup.py sees), else ``env``."""
        built_in = req.options.built_in if req.options is not None else ""
        if not built_in or built_in == req.scope:
            return env
        name = label(req.location.path, built_in)
        by_name = _by_name(self)
        found = by_name.get(name)
        if found is None:  # a builder stage that installs nothing of its own: its base image is all it has
            images = tuple(
                i
                for i in self.settings
                if isinstance(i, Image) and i.location.path == req.location.path and i.scope == built_in
            )
            found = by_name[name] = Environment(name, (), images=images)
        return found

    def satisfied_by(self, req: Requirement) -> Requirement | None:
        """The earlier install that leaves this one nothing to do (pip without --upgrade keeps it)."""
        return _satisfied(self).get(req.location)

    def environment_name(self, req: Requirement) -> str | None:
        """The most specific install this requirement belongs to."""
        envs = self.environments_of(req)
        own = [e for e in envs if e.name.startswith(req.location.path)] or envs
        return min(own, key=_size).name if own else None

    def pinned(self, req: Requirement, name: str) -> Pin | None:
        """The one version of ``name`` the environments of ``req`` pin, and where (None: an image).

        Worked out once per set of environments: every requirement of a file shares the same set.
        """
        found = _PINS.of(self)
        key = (tuple(self.environments_of(req)), name)
        if key not in found:
            found[key] = _pinned(key[0], name)
        return found[key]


def _size(env: Environment) -> int:
    return len(env.members)


Pin = tuple[Version, Requirement | None]
_ASSESSMENTS: Memo[Hashable, Assessment] = Memo()
_TOOLCHAINS: Memo[Environment, toolchain.Toolchain] = Memo()
_BUILDS: Memo[None, dict[str, list[BuildConfig]]] = Memo()
_LOCK_TOOLS: Memo[Environment, frozenset[str | None]] = Memo()
_PINS: Memo[tuple[tuple[Environment, ...], str], Pin | None] = Memo()


@once
def _machines(ctx: Context) -> Machines:
    from fa_lint.machine.target import Machines  # only runs whose files say something build it

    return Machines(ctx.settings, ctx.environments)


@once
def _by_location(ctx: Context) -> dict[Location, list[Environment]]:
    index: dict[Location, list[Environment]] = defaultdict(list)
    for env in ctx.environments:
        for loc in dict.fromkeys((r.location for r in (*env.members, *env.locked, *env.superseded)), True):
            index[loc].append(env)
    return index


@once
def _satisfied(ctx: Context) -> dict[Location, Requirement]:
    return {later.location: earlier for env in ctx.environments for later, earlier in env.satisfied}


@once
def _by_name(ctx: Context) -> dict[str, Environment]:
    return {env.name: env for env in ctx.environments}


@once
def _python_versions(ctx: Context) -> dict[str, Requirement]:
    return {os.path.dirname(r.location.path): r for r in ctx.requirements if r.source == "python-version"}


def _python_version(ctx: Context, env: Environment) -> list[Requirement]:
    """The nearest ``.python-version`` at or above a project's folder: what uv and pyenv run.

    An image or a script picks its own Python, so theirs never counts.
    """
    if env.images or any(r.source in SCRIPTS for r in env.members):
        return []
    folder = os.path.dirname(split(env.name)[0])
    pinned = _python_versions(ctx)
    while folder not in pinned:
        parent = os.path.dirname(folder)
        if parent == folder:
            return []
        folder = parent
    return [pinned[folder]]


def _pinned(envs: tuple[Environment, ...], name: str) -> Pin | None:
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
