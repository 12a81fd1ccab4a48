"""Poetry's version constraint language, as PEP 440 specifier sets.

Written by hand because the only implementation is inside poetry-core, Poetry's build backend,
which a linter should not need at run time; a test checks it against poetry-core term by term.
Semantics follow Poetry's documentation: ``^`` and ``~`` ranges, ``*`` wildcards, a bare version
meaning ``==``, "," or whitespace for AND, and ``||`` for OR (each alternative is one
``SpecifierSet``). Combined terms follow PEP 440, where poetry-core's own range algebra treats some
post-releases differently (``^2.5, !=2.6.0`` leaves out 2.6.0.post1 there).
"""

from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

_AND = re.compile(r"(?<!\s)(?:\s*,\s*|\s+(?=[<>=!~^*\d]))")  # from a blank run's start only: linear
_OPERATOR = re.compile(r"^(===|==|!=|>=|<=|~=|>|<)\s*")
_GLUE = re.compile(r"(===|==|!=|>=|<=|~=|>|<|\^|~)\s+")


class PoetryConstraintError(ValueError):
    pass


def _release(text: str) -> tuple[Version, tuple[int, ...]]:
    try:
        v = Version(text)
    except InvalidVersion as exc:
        raise PoetryConstraintError(f"invalid version {text!r}") from exc
    given = len(
        text.split("+", maxsplit=1)[0].split(".post", maxsplit=1)[0].split(".dev", maxsplit=1)[0].split(".")
    )
    return v, v.release[: max(1, min(given, len(v.release)))]


def _bound(parts: tuple[int, ...], bump: int) -> str:
    upper = [*parts[:bump], parts[bump] + 1]
    return ".".join(map(str, upper))


def _one(term: str) -> list[str]:
    term = term.strip()
    if term in ("", "*"):
        return []
    if term.startswith("^"):
        v, parts = _release(term[1:].strip())
        nonzero = [i for i, p in enumerate(parts) if p]
        bump = nonzero[0] if nonzero else len(parts) - 1
        return [f">={v}", f"<{_bound(parts, bump)}"]
    if term.startswith("~") and not term.startswith("~="):
        v, parts = _release(term[1:].strip())
        return [f">={v}", f"<{_bound(parts, 1 if len(parts) > 1 else 0)}"]
    m = _OPERATOR.match(term)
    if m:
        return [m.group(1) + term[m.end() :]]
    if term.startswith("="):
        return ["==" + term[1:].strip()]
    if "*" in term:
        return ["==" + term]
    return ["==" + term]


def specifiers(constraint: str) -> tuple[SpecifierSet, ...]:
    """``"^2.5"`` -> ``(SpecifierSet(">=2.5,<3"),)``; raises ``PoetryConstraintError``."""
    out = []
    for alternative in constraint.split("||"):
        terms = [t for t in _AND.split(_GLUE.sub(r"\1", alternative.strip())) if t]
        specs = [s for t in terms for s in _one(t)]
        try:
            out.append(SpecifierSet(",".join(specs)))
        except InvalidSpecifier as exc:
            raise PoetryConstraintError(f"invalid constraint {constraint!r}") from exc
    return tuple(out)
