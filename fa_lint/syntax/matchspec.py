"""conda MatchSpecs (``flash-attn=2.4.2``, ``conda-forge::flash-attn>=2.5``) as PEP 440 sets.

Hand-written: the MatchSpec parsers are conda's own (inside conda, which cannot be a dependency) and
py-rattler's (``rattler.MatchSpec``, in Rust). py-rattler is not used: it is a compiled wheel per
platform (0.28.0: 24.9 MB to download, 83 MB installed, for a linter whose own dependencies are pure
Python but tree-sitter), and what fa-lint needs of a spec is its version as a PEP 440 set, which
rattler's conda ``VersionSpec`` would still have to be translated into, as here. Only the version part
matters; build strings and channels are dropped.
"""

from __future__ import annotations

import re
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from fa_lint.model import Location, ParseProblem, Requirement, mentions_flash_attn, normalize
from fa_lint.syntax.text import excerpt

_SPEC = re.compile(
    r"^\s*(?:[^\s:]+::)?(?P<name>[A-Za-z0-9_.-]+)\s*(?:\[(?P<bracket>[^\]]*)\])?\s*(?P<version>.*?)\s*$"
)
_OP = re.compile(r"^(==|!=|>=|<=|~=|>|<)")
# conda's PyTorch package is called pytorch; the wheel it stands for is torch.
_ALIASES = {"pytorch": "torch"}


def pypi_name(name: str) -> str:
    """The PyPI distribution a conda package stands for (``pytorch`` is ``torch``)."""
    name = normalize(name)
    return _ALIASES.get(name, name)


def _term(term: str) -> str:
    term = term.strip()
    if term in ("", "*"):
        return ""
    if _OP.match(term):
        return term
    if term.startswith("="):  # "=2.4.2" is conda's fuzzy match: 2.4.2, 2.4.2.post1, ...
        term = term[1:]
        return f"=={term.rstrip('*').rstrip('.')}.*"
    if term.endswith("*"):
        return f"=={term.rstrip('*').rstrip('.')}.*"
    return f"=={term}"


def specifiers(version: str) -> tuple[SpecifierSet, ...]:
    out = []
    for alternative in version.split("|"):
        terms = [_term(t) for t in alternative.split(",")]
        out.append(SpecifierSet(",".join(t for t in terms if t)))
    return tuple(out)


def matchspec(text: str, location: Location, source: str, **fields: Any) -> Requirement | ParseProblem | None:
    """A MatchSpec's requirement; a problem when it is not MatchSpec syntax; None for a valid spec of
    another package whose version PEP 440 cannot say (``openssl=1.1.1w=h7f8727e_0``,
    ``tzdata=2023c``, ``pplacer=1.1.alpha19=h9ee0642_2``: conda's versions are not PEP 440's, and
    fa-lint judges flash-attn only). A flash-attn spec fa-lint cannot read stays a problem: every
    mention of it is judged or said not to be."""
    m = _SPEC.match(text)
    if not m:
        return ParseProblem(location, f"invalid conda package spec {excerpt(text)}", text.strip())
    version = m["version"]
    bracket = re.search(r"version\s*=\s*['\"]?([^'\",]+(?:,[^'\"]+)*)['\"]?", m["bracket"] or "")
    if bracket:
        version = bracket.group(1)
    # "name=2.4.2=build", "name==2.4.2=build", "name 2.4.2 build": the build string goes.
    if version.startswith("==") and "=" in version[2:]:
        version = "==" + version[2:].split("=", 1)[0]
    elif version.startswith("=") and not version.startswith("=="):
        version = "=" + version[1:].split("=", 1)[0]
    elif " " in version.strip():
        version = version.split()[0]
    try:
        alternatives = specifiers(version)
    except InvalidSpecifier:
        if not mentions_flash_attn(m["name"]):
            return None
        return ParseProblem(location, f"invalid version in conda spec {excerpt(text)}", text.strip())
    return Requirement(
        name=pypi_name(m["name"]),
        raw=text.strip(),
        location=location,
        source=source,
        specifier=alternatives[0],
        alternatives=alternatives if len(alternatives) > 1 else (),
        tool="conda",
        **fields,
    )
