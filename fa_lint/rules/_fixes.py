"""Edits that make a requirement good, for ``--fix``: built from the requirement as written.

A fix is offered only where the text at the requirement's location is exactly its ``raw`` text and
that text parses back to the requirement's specifier, so an edit never rests on a guess about the
file's syntax (escapes, variables, Poetry carets and conda match specs all fall out here).
"""

from __future__ import annotations

import dataclasses
import re

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import Version

from fa_lint.kb import KnowledgeBase
from fa_lint.model import Fix, Kind, Requirement, pretty
from fa_lint.resolve import Policy, Verdict, assess_range
from fa_lint.sources._text import TextIndex

SHELL_SOURCES = frozenset({"dockerfile", "shell", "workflow", "makefile"})
# name, optional extras | the version part | an optional marker. Written by hand because packaging's
# parser keeps no offsets, and the edit must keep the name, extras and marker exactly as written.
_PARTS = re.compile(
    r"(?P<head>\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\]\s*)?)(?P<spec>[^;@]*?)(?P<tail>\s*(?:;.*)?)",
    re.S,
)


def _editable(req: Requirement) -> re.Match[str] | None:
    if (
        req.version is not None
        or req.url is not None
        or req.alternatives
        or req.unresolved
        or req.redirected
        or req.kind not in (Kind.INSTALL, Kind.CONSTRAINT, Kind.OVERRIDE)
    ):
        return None
    m = _PARTS.fullmatch(req.raw)
    if m is None:
        return None
    written = m["spec"].strip()
    if written.startswith("(") and written.endswith(")"):
        written = written[1:-1]
    try:
        if SpecifierSet(written) != req.specifier:
            return None
    except InvalidSpecifier:
        return None
    return m


def _with(req: Requirement, m: re.Match[str], spec: SpecifierSet, title: str, safe: bool) -> Fix:
    head = m["head"] if m["spec"] else m["head"].rstrip()
    new = f"{head}{pretty(spec)}{m['tail']}"
    return Fix(req.location, req.raw, new, title, safe, req.source, req.source in SHELL_SOURCES)


def _below(spec: Specifier, floor: Version) -> bool:
    """A lower bound or exclusion that ``>=floor`` makes redundant."""
    if spec.operator in (">=", ">", "!=") and "*" not in spec.version:
        return Version(spec.version) < floor
    return False


def raise_floor(req: Requirement, kb: KnowledgeBase, policy: Policy) -> Fix | None:
    """FAL002: add ``>=min`` and drop the bounds it makes redundant; only bad releases go."""
    m = _editable(req)
    if m is None:
        return None
    floor = policy.min_version
    kept = [s for s in req.specifier if not _below(s, floor)]
    spec = SpecifierSet([Specifier(f">={floor}"), *kept])
    if assess_range(spec.to_range(), kb, policy).verdict is not Verdict.OK:
        return None  # e.g. '!=2.5.*,<2.6': nothing good is left to narrow to
    return _with(req, m, spec, f"require flash-attn{pretty(spec)}", safe=True)


def bump_pin(req: Requirement, kb: KnowledgeBase, policy: Policy) -> Fix | None:
    """FAL001 on an exact ``==X`` pin: the first good release, as pip-audit --fix picks the first fix."""
    m = _editable(req)
    if m is None or [s.operator for s in req.specifier] != ["=="] or "*" in str(req.specifier):
        return None
    good = [r for r in kb.installable if policy.good(r) and not r.version.is_prerelease]
    if not good:
        return None
    spec = SpecifierSet(f"=={good[0].version}")
    return _with(req, m, spec, f"pin flash-attn=={good[0].version} (an upgrade: check it)", safe=False)


def quote_word(req: Requirement) -> Fix | None:
    """FAL007: quote the word so the shell passes '>=2.5' to pip instead of redirecting."""
    loc = req.location
    if not req.redirected or loc.line != loc.end_line:
        return None
    old = req.raw + req.redirected  # the redirect starts where the word ends
    span = dataclasses.replace(loc, end_column=loc.end_column + len(req.redirected))
    return Fix(span, old, f'"{old}"', f'quote it: "{old}"', True, req.source)


_SHELL_SPECIAL = re.compile(r"[\s<>|&;()]")


def settle(fix: Fix, text: str) -> Fix | None:
    """Make a shell word's new text safe where it stands: quoted if it sits bare, as FAL007 asks.

    None when no quoting keeps it one word (it holds both kinds of quote, or shell expansions).
    """
    if not fix.shell_word:
        return fix
    index = TextIndex(fix.location.path, text)
    loc = fix.location
    start, end = index.offset(loc.line, loc.column), index.offset(loc.end_line, loc.end_column)
    before, after = text[start - 1 : start], text[end : end + 1]
    quoted = before in ("'", '"') and before == after
    if quoted or not _SHELL_SPECIAL.search(fix.new):
        return dataclasses.replace(fix, shell_word=False)
    if not re.search(r'["$`\\]', fix.new):
        return dataclasses.replace(fix, new=f'"{fix.new}"', shell_word=False)
    if "'" not in fix.new:
        return dataclasses.replace(fix, new=f"'{fix.new}'", shell_word=False)
    return None
