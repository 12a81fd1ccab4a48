"""What every rule is: a stable code, a kebab-case name, a default severity and a docs page."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from fa_lint.kb import KnowledgeBase
from fa_lint.model import Finding, Include, Location, ParseProblem, Requirement, Severity
from fa_lint.resolve import Policy

DOCS_URL = "https://github.com/fa-lint/fa-lint/blob/main/docs/rules/{code}.md"


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)

    def finding(self, location: Location, message: str, **fields: Any) -> Finding:
        severity = fields.pop("severity", self.severity)
        return Finding(self.code, self.name, severity, location, message, url=self.url, **fields)


@dataclass(frozen=True)
class Context:
    kb: KnowledgeBase
    policy: Policy
    requirements: tuple[Requirement, ...]
    problems: tuple[ParseProblem, ...] = ()
    unfollowed: tuple[Include, ...] = ()
    environments: tuple[Any, ...] = field(default=())


class Check(Protocol):
    def __call__(self, ctx: Context) -> Iterator[Finding]: ...
