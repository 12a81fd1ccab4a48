"""What several output formats say the same way."""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from fa_lint import __version__
from fa_lint.model import Finding

if TYPE_CHECKING:
    from fa_lint.engine import Report


_UNPRINTABLE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def printable(text: str) -> str:
    """Text from a checked file made safe to print: control characters, line breaks and lone surrogates
    become visible escapes, so no input can start a new output line, a terminal sequence or a workflow
    command, and every encoder (UTF-8 stdout, strict JSON parsers) accepts the result."""
    return _UNPRINTABLE.sub(lambda m: ascii(m.group())[1:-1], text)


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
    # The notes belong to the identity: FAL004's headline is alike for different constraints.
    key = "\0".join((f.code, path, f.requirement or "", f.environment or "", f.message, *f.notes))
    key = re.sub(r"(?<![\w./-])\./", "", key.replace(os.getcwd() + os.sep, ""))
    key = _POSITION.sub("", key)
    return hashlib.sha256(key.encode()).hexdigest()[:32]


# A message that names another requirement says where it is (FAL004: '... (constraints.txt:3:1)'):
# that position moves with the lines too, so it is left out like the finding's own.
_POSITION = re.compile(r"(?<=[^\s:]):\d+:\d+\b")


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
        out.append(fp if seen[fp] == 1 else hashlib.sha256(f"{fp}\0{seen[fp]}".encode()).hexdigest()[:32])
    return out


def relative(path: str) -> str | None:
    """``path`` as a POSIX path relative to the folder fa-lint ran in; None when it lies outside."""
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.relative_to(Path.cwd())
        except ValueError:
            return None
    return PurePath(os.path.normpath(p)).as_posix()


def details(f: Finding) -> str:
    """A finding's notes and help as Markdown, for the formats with a field beside the headline."""
    lines = [f"- {printable(note)}" for note in f.notes]
    if f.help:
        lines += ["", f"help: {printable(f.help)}"] if lines else [f"help: {printable(f.help)}"]
    return "\n".join(lines)
