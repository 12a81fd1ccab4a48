"""What several output formats say the same way."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from fa_lint import __version__
from fa_lint._lazy import Lazy
from fa_lint.model import Finding, Location

if TYPE_CHECKING:
    from fa_lint.engine import Report


# (Patterns, compiled on first use: most text is printable, and most runs never need them.)
# Control characters (tab aside), every Unicode line break, bidi embeddings/overrides/isolates (which
# reorder what a reader sees) and lone surrogates (which no UTF-8 encoder or strict JSON parser accepts).
_UNPRINTABLE = r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
_SURROGATE = r"[\ud800-\udfff]"
# GitHub Actions reads a line as a workflow command when it starts with "::" (after blanks), and, in
# the legacy form, when "##[" appears anywhere in it (actions/runner ActionCommand.TryParseV2/TryParse);
# the Azure Pipelines agent reads one wherever "##vso[" stands in a line (azure-pipelines-agent
# Command.TryParse: message.IndexOf("##vso[")), case-sensitively.
_COMMAND = r"^(\s*):(?=:)|(?<=##)\[|(?<=##vso)\["


def printable(text: str) -> str:
    """Text from a checked file made safe to print: control characters, line breaks, bidi controls and
    lone surrogates become visible escapes, and the openings of GitHub workflow commands and Azure
    Pipelines logging commands lose a character to one, so no input can start a new output line, a
    terminal sequence or a CI command, and every encoder (UTF-8 stdout, strict JSON parsers) accepts
    the result."""
    if text.isprintable() and "::" not in text and "##" not in text:  # the common case: nothing to do
        return text
    text = re.sub(_UNPRINTABLE, lambda m: ascii(m.group())[1:-1], text)
    return re.sub(_COMMAND, lambda m: "\\x5b" if m.group(1) is None else m.group(1) + "\\x3a", text)


def escaped(f: Finding) -> Finding:
    """``f`` with every string that can come from a checked file, or a file's name, made printable.

    A fix's replacement text stays exact, for the tools that apply it (the JSON writers encode it, see
    ``unforgeable``), but for lone surrogates: no UTF-8 file can take those, and strict parsers refuse them.
    """

    def where(loc: Location) -> Location:
        return loc._replace(path=printable(loc.path))

    fix = f.fix and f.fix._replace(
        location=where(f.fix.location),
        title=printable(f.fix.title),
        new=_unsurrogated(f.fix.new),
    )
    return f._replace(
        location=where(f.location),
        message=printable(f.message),
        package=f.package and printable(f.package),
        requirement=f.requirement and printable(f.requirement),
        admitted=f.admitted and tuple(map(printable, f.admitted)),
        environment=f.environment and printable(f.environment),
        related=tuple(map(where, f.related)),
        fix=fix,
        notes=tuple(map(printable, f.notes)),
        help=printable(f.help),
    )


def _unsurrogated(text: str) -> str:
    """Lone surrogates escaped, and nothing else: a surrogate is never printable, so printable text
    needs no look."""
    return text if text.isprintable() else re.sub(_SURROGATE, lambda m: ascii(m.group())[1:-1], text)


# An `admitted` array as the indented encoder writes it: strings only, one a line. JSON strings hold no
# raw newline and no unescaped quote, so this matches only the value of an "admitted" key.
_ADMITTED = Lazy(r'("admitted": \[)\n\s+((?:"(?:[^"\\\n]|\\.)*",\n\s+)*"(?:[^"\\\n]|\\.)*")\n\s+\]')
_BREAK = Lazy(r",\n\s+")


def compact(json_text: str) -> str:
    """Indented JSON with each finding's ``admitted`` on one line: whitespace only, so every JSON
    reader reads the same document (``--format json``, SARIF's ``properties``). An unpinned
    requirement admits every release (76 of them), and one version a line made that list most of a
    finding's bytes."""
    return _ADMITTED().sub(lambda m: f"{m[1]}{_BREAK().sub(', ', m[2])}]", json_text)


def unforgeable(json_text: str) -> str:
    """JSON text with "##[" written "##\\u005b" and "##vso[" "##vso\\u005b": the same strings to any
    JSON reader, but no line of it reads as a legacy GitHub workflow command or an Azure Pipelines
    logging command when a CI log shows the report. Outside strings JSON has no "#", and a string's
    "##[" is written as is, so this finds every one. Nothing else in indented, ASCII-only JSON can:
    control characters are escaped, and no line starts with a string's "::"."""
    return json_text.replace("##[", "##\\u005b").replace("##vso[", "##vso\\u005b")


def encoded(text: str) -> bytes:
    """The bytes a string stands for, never raising: a file name's undecodable bytes (which Python
    carries as lone surrogates) as they were on disk; any other lone surrogate as UTF-8 would write it."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def counts(report: Report) -> dict[str, int]:
    c = Counter(f.severity.value for f in report.findings)
    return {"error": c["error"], "warning": c["warning"], "info": c["info"]}


def knowledge_base(report: Report) -> dict[str, Any]:
    kb = report.kb
    return {
        "date": kb.date,
        "releases": len(kb.installable),
        "newest": str(kb.newest),
        "paged_kv_since": str(kb.first_with("paged-kv")),
        "min_version": str(report.policy.min_version),
    }


def tool() -> dict[str, str]:
    return {"name": "fa-lint", "version": __version__}


def fingerprint(f: Finding) -> str:
    """A finding's identity across runs: line numbers are left out, so it survives lines moving above it.

    Paths count as relative to the run's folder, however the files were named on the command line
    (``install.sh``, ``./install.sh`` or ``$PWD/install.sh``): the environment and message name them too.
    """
    path = relative(f.location.path) or f.location.path
    # The notes belong to the identity: FAL004's headline is alike for different constraints. A fix's
    # reason ("why 2.6.3: ...", rules/_fixes.why) does not: it follows the rest of the install, and a
    # line added elsewhere must not make an old finding new (--new-from-rev, code scanning alerts).
    notes = [n for n in f.notes if not n.startswith("why ")]
    key = "\0".join((f.code, path, f.requirement or "", f.environment or "", f.message, *notes))
    key = re.sub(r"(?<![\w./-])\./", "", key.replace(os.getcwd() + os.sep, ""))
    key = re.sub(_POSITION, "", key)
    return _digest(encoded(key))


def _digest(data: bytes) -> str:
    import hashlib  # SARIF and GitLab only: not every run pays for OpenSSL

    return hashlib.sha256(data).hexdigest()[:32]


# A message that names another requirement says where it is (FAL004: '... (constraints.txt:3:1)'):
# that position moves with the lines too, so it is left out like the finding's own. (Compiled on first
# use: only SARIF and GitLab reports have fingerprints.)
_POSITION = r"(?<=[^\s:]):\d+:\d+\b"


def fingerprints(findings: Iterable[Finding]) -> list[str]:
    """Each finding's fingerprint, unique within one report.

    Findings alike in all but their line (the same pin twice in a script) share ``fingerprint``, and
    GitLab keeps one issue per fingerprint, code scanning one alert. The n-th of them in file order gets
    n mixed in, the first keeps the plain one: still no line number, so all survive lines moving.
    """
    seen: Counter[str] = Counter()
    out = []
    for f in findings:
        fp = fingerprint(f)
        seen[fp] += 1
        out.append(fp if seen[fp] == 1 else _digest(f"{fp}\0{seen[fp]}".encode()))
    return out


def relative(path: str) -> str | None:
    """``path`` as a POSIX path relative to the folder fa-lint ran in; None when it lies outside."""
    from pathlib import Path, PurePath  # not every run pays for pathlib (urllib.parse, ipaddress)

    p = Path(path)
    if p.is_absolute():
        try:
            p = p.relative_to(Path.cwd())
        except ValueError:
            return None
    return PurePath(os.path.normpath(p)).as_posix()


def in_repository() -> Callable[[str], str | None]:
    """A path as a POSIX path relative to the top of the git repository that holds it, which is what
    code scanning, GitLab and GitHub's annotations resolve a path against, wherever in the checkout
    fa-lint ran; outside any repository relative to the run's folder (``relative``); None when neither
    holds it. One for each report: it remembers each folder's repository."""
    tops: dict[str, str | None] = {}

    def top(folder: str) -> str | None:
        seen, here = [], folder
        while here not in tops:
            seen.append(here)
            parent = os.path.dirname(here)
            if os.path.exists(os.path.join(here, ".git")) or parent == here:
                tops[here] = here if os.path.exists(os.path.join(here, ".git")) else None
                break
            here = parent
        for f in seen:
            tops[f] = tops[here]
        return tops[here]

    def shown(path: str) -> str | None:
        absolute = os.path.abspath(path)
        found = top(os.path.dirname(absolute))
        return relative(path) if found is None else os.path.relpath(absolute, found).replace(os.sep, "/")

    return shown


def details(f: Finding) -> str:
    """A finding's notes and help as Markdown, for the formats with a field beside the headline."""
    lines = [f"- {printable(note)}" for note in f.notes]
    if f.help:
        lines += ["", f"help: {printable(f.help)}"] if lines else [f"help: {printable(f.help)}"]
    return "\n".join(lines)
