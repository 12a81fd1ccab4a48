"""Uses outside Python: command lines in scripts, Dockerfiles and workflows, and the ``kernels`` lock.

Command lines are read as text, not through the shell model: the words that matter
(``transformers serve --continuous-batching``, TRL's ``--use_transformers_paged``,
``--attn_implementation NAME``) are flags of one logical line (backslash continuations joined), and a
match needs the program's name and the flag on that line, so a comment or an ``echo`` that merely
names a flag is the only kind of false match left (``#`` comments are skipped).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fa_lint._lazy import Lazy
from fa_lint.code.uses import ATTN, OLD_LOCK, PAGED, STALE_LOCK, Use
from fa_lint.syntax.text import TextIndex

# A word ends at a blank, or at the quote and comma of a Dockerfile's exec form (CMD ["a", "b"]).
_SERVE = re.compile(r"\btransformers[\"']?(?:\s*,\s*[\"']|\s+)serve\b")
_CB_FLAG = Lazy(r"[\s\"']--continuous[-_]batching\b(?![-=]\s*(?:false|0)\b)", re.I)
_TRL_PAGED = Lazy(
    r"[\s\"']--use[-_]transformers[-_]paged\b(?:[= ]+(?:true|1)\b|(?![= ]*(?:false|0)\b))", re.I
)
_TRL = re.compile(r"\btrl\b|\btrain\w*\.py\b|\baccelerate\s+launch\b")
_ATTN_FLAG = re.compile(r"[\s\"']--attn[-_]implementation(?:[= ]+|[\"']\s*,\s*)[\"']?(?P<name>[\w|/@:.-]+)")
# the programs that read an --attn_implementation flag: transformers' and TRL's scripts, accelerate
_RUNS_PYTHON = re.compile(r"\b(?:python3?|accelerate|torchrun|deepspeed|trl|transformers)\b")


def command_uses(path: str, text: str) -> list[Use]:
    """The uses command lines in a script, Dockerfile or workflow make."""
    index: TextIndex | None = None
    found: list[Use] = []
    for start, line in _logical_lines(text):
        if "--" not in line or line.lstrip().startswith("#"):
            continue
        spans: list[tuple[str, str, str, int, int]] = []  # (kind, name, detail, start, end)
        if _SERVE.search(line) and (cb := _CB_FLAG().search(line)):
            spans.append((PAGED, "", "transformers serve --continuous-batching", cb.start() + 1, cb.end()))
        if _TRL.search(line) and (trl := _TRL_PAGED().search(line)):
            spans.append((PAGED, "", "--use_transformers_paged", trl.start() + 1, trl.end()))
        if _RUNS_PYTHON.search(line):
            for a in _ATTN_FLAG.finditer(line):
                spans.append((ATTN, a["name"], "--attn_implementation", a.start() + 1, a.end()))
        for kind, name, detail, s, e in spans:
            index = index or TextIndex(path, text)
            found.append(Use(kind, index.location(start + s, start + e), name=name, detail=detail))
    return found


# TRL's and transformers' HfArgumentParser configs: a key at the start of its line, its plain value
_CONFIG_ATTN = re.compile(
    r"^[ \t]*attn_implementation[ \t]*:[ \t]*[\"']?(?P<name>[\w|/@:.-]+)[\"']?[ \t]*(?:#|$)", re.M
)
_CONFIG_PAGED = re.compile(
    r"^[ \t]*use_transformers_paged[ \t]*:[ \t]*(?:true|True|TRUE|yes|on)[ \t]*(?:#|$)", re.M
)


def config_uses(path: str, text: str) -> list[Use]:
    """The uses a YAML config sets: ``attn_implementation: NAME`` and ``use_transformers_paged: true``.

    Read line by line, not as YAML: the keys are plain scalars of one line wherever TRL's and
    transformers' own examples set them, and a line is where a finding points. A value that is not a
    plain word (``null``, a template, a list) is no implementation, and is passed over.
    """
    index: TextIndex | None = None
    found = []
    for m in _CONFIG_ATTN.finditer(text):
        if m["name"] in ("null", "None", "~"):
            continue
        index = index or TextIndex(path, text)
        found.append(
            Use(
                ATTN,
                index.location(m.start("name"), m.end("name")),
                name=m["name"],
                detail="attn_implementation:",
            )
        )
    for m in _CONFIG_PAGED.finditer(text):
        index = index or TextIndex(path, text)
        start = m.group().index("use_transformers_paged") + m.start()
        found.append(Use(PAGED, index.location(start, m.end()), detail="use_transformers_paged: true"))
    return found


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of each logical line: a backslash before the newline continues it. By hand, not
    by a pattern: a repeat over characters keeps a backtracking frame for each (docs/reliability.md)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        while end > 0 and text[end - 1] == "\\":
            end = text.find("\n", end + 1)
        end = len(text) if end < 0 else end
        yield start, text[start:end]
        start = end + 1


def stale_lock(pyproject: str, pyproject_text: str, lock: str, lock_text: str) -> list[Use]:
    """A ``kernels.lock`` that disagrees with ``[tool.kernels.dependencies]``: a kernel the project
    asks for and the lock does not pin (``get_locked_kernel`` fails on it), or one the lock pins that
    the project no longer asks for. Nothing when either file cannot be read as its format; an entry
    of another shape than a lock writer makes (a ``repo_id`` that is no string, a ``dependency`` that
    is no table) pins nothing."""
    import json  # for projects that lock kernels only
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib

    try:
        wanted = _table(tomllib.loads(pyproject_text), "tool", "kernels", "dependencies")
        pinned = json.loads(lock_text)
    except (ValueError, RecursionError):
        return []
    if not wanted or not isinstance(pinned, list):
        return []
    locked = {repo for repo in map(_locked_repo, pinned) if repo is not None}
    unpinned = sorted(set(wanted) - locked)
    unasked = sorted(locked - set(wanted))
    # each file indexed once, and only when it has a repository to locate
    found = _at(TextIndex(pyproject, pyproject_text), unpinned, f"{lock} does not pin it") if unpinned else []
    if unasked:
        found += _at(TextIndex(lock, lock_text), unasked, f"{pyproject} no longer asks for it")
    return found


def lock_uses(pyproject: str, pyproject_text: str, lock: str, lock_text: str) -> list[Use]:
    """What a ``kernels.lock`` beside a ``[tool.kernels.dependencies]`` says: where it is stale
    (``stale_lock``), and its first entry where it is in the format kernels 0.16 and older write."""
    import json  # for projects that lock kernels only

    found = stale_lock(pyproject, pyproject_text, lock, lock_text)
    try:
        old = _old_format(json.loads(lock_text))
    except (ValueError, RecursionError):
        return found
    if old is not None:
        at = max(lock_text.find('"repo_id"'), 0)
        found.append(Use(OLD_LOCK, TextIndex(lock, lock_text).location(at, at + len('"repo_id"')), name=old))
    return found


def _old_format(pinned: object) -> str | None:
    """The first entry's repository, where the lock is in the format kernels 0.16 and older write and
    read (``{"repo_id", "sha", "variants"}``; 0.17 reads ``{"dependency", "lock"}``: fa_lint.kb.kernels)."""
    if not isinstance(pinned, list):
        return None
    first = next((e for e in pinned if isinstance(e, dict)), None)
    repo = first.get("repo_id") if first is not None else None
    return repo if isinstance(repo, str) else None


def _table(doc: object, *keys: str) -> dict[str, object]:
    """The table at ``keys``; empty where one on the way is missing or not a table."""
    for key in keys:
        doc = doc.get(key) if isinstance(doc, dict) else None
    return doc if isinstance(doc, dict) else {}


def _locked_repo(entry: object) -> str | None:
    """The repository a lock entry pins: kernels' own lock names each entry's ``repo_id``;
    kernel-builder's (for a kernel's build.toml) nests it as ``dependency.repo-id``."""
    if not isinstance(entry, dict):
        return None
    repo = entry.get("repo_id")
    if not repo:
        dependency = entry.get("dependency")
        repo = dependency.get("repo-id") if isinstance(dependency, dict) else None
    return repo if isinstance(repo, str) and repo else None


# A quoted string of one line: where each repository is first written, found in one pass over the file.
_QUOTED = Lazy(r'"([^"\n]*)"')


def _at(index: TextIndex, repos: list[str], detail: str) -> list[Use]:
    """Each repository at the first place the file writes it quoted (its start when it is not),
    all of them found in one pass over the text, not one search from the top for each."""
    first: dict[str, int] = {}
    wanted = set(repos)
    for m in _QUOTED().finditer(index.text):
        if m[1] in wanted and m[1] not in first:
            first[m[1]] = m.start() + 1
            if len(first) == len(wanted):
                break
    found = []
    for repo in repos:
        start = first.get(repo)
        location = index.location(start, start + len(repo)) if start is not None else index.location(0, 0)
        found.append(Use(STALE_LOCK, location, name=repo, detail=detail))
    return found


# SGLang's server: ``python -m sglang.launch_server`` (or ``sglang serve``) with a FlashAttention backend
_SGLANG = Lazy(r"\bsglang\.launch_server\b|\bsglang[\"']?(?:\s*,\s*[\"']|\s+)serve\b")
_BACKEND_FLAG = Lazy(
    r"[\s\"'](?P<flag>--(?:prefill-|decode-)?attention-backend)(?:[= ]+|[\"']\s*,\s*)[\"']?(?P<name>fa[34])\b"
)


def backend_uses(path: str, text: str) -> list[Use]:
    """SGLang server command lines that select its fa3 or fa4 attention backend (FAL013 judges the GPU)."""
    from fa_lint.code.uses import BACKEND  # for files that start an SGLang server only

    index: TextIndex | None = None
    found: list[Use] = []
    for start, line in _logical_lines(text):
        if line.lstrip().startswith("#") or not _SGLANG().search(line):
            continue
        for m in _BACKEND_FLAG().finditer(line):
            index = index or TextIndex(path, text)
            at = index.location(start + m.start() + 1, start + m.end())
            found.append(Use(BACKEND, at, name=f"sglang:{m['name']}", detail=f"{m['flag']} {m['name']}"))
    return found
