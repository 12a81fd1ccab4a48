"""FAL020 on a Hub kernel loaded without a version or revision, judged from the releases the project
installs (fa_lint.kb.transformers, fa_lint.kb.kernels: each read from the released wheels).

- ``attn_implementation="org/repo"`` without ``@rev``: transformers 5.13.0 and later load it with a
  ``version`` (a major version's branch; from 5.18.0 by a table per repository), so with such a
  transformers it is pinned, and nothing is said. An older transformers passes neither, and ``kernels``
  decides, as for a call:
- ``get_kernel("org/repo")`` without either: kernels 0.15.1 and later raise ``ValueError`` at the load
  (a certain failure: an error); an older one loads the main branch as the Hub holds it at run time (a
  moving target: a warning). Where the release installed is not known, the finding says both.
- ``get_kernel("org/repo", "v1")``: kernels 0.17.0 made ``revision``/``version`` keyword-only, so a
  revision passed by position raises ``TypeError`` there.
"""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from fa_lint.code.uses import ATTN, Use
from fa_lint.kb import kernels as kernels_kb
from fa_lint.model import Finding, Kind, Requirement, Severity
from fa_lint.rules._base import Context, Rule
from fa_lint.rules._code import nearest
from fa_lint.rules._text import KERNELS, TRANSFORMERS, fit

_RAISES = "ValueError: A kernel version or revision must be specified"


def admitted(ctx: Context, use: Use, name: str, releases: tuple[Version, ...]) -> list[Version] | None:
    """The releases of ``name`` read by its knowledge base that an install serving the use admits (in
    one environment every requirement of it holds at once: a base ``>=4.56.2`` and an extra's
    ``!=5.1.0`` together); None where none of them installs it, or where what they admit is none of
    those read (a release newer than the knowledge base)."""
    found: set[Version] = set()
    for env in nearest(ctx, use):
        reqs = [
            r
            for r in (list(env.of(name, locked=True)) or list(env.of(name)))
            if r.kind is not Kind.CONSTRAINT
        ]
        if reqs:
            found.update(v for v in releases if all(_admits(r, v) for r in reqs))
    return sorted(found) or None


def _admits(req: Requirement, version: Version) -> bool:
    return req.version == version if req.version is not None else req.specifier.contains(version, True)


def unpinned(ctx: Context, rule: Rule, use: Use) -> Iterator[Finding]:
    repo = use.name.split(":", 1)[0]
    notes: list[str] = []
    versions = None
    if use.kind == ATTN:
        facts = ctx.transformers
        first = facts.attn_kernel_version
        versions = admitted(ctx, use, TRANSFORMERS, facts.releases)
        if first is not None and versions is not None and versions[0] >= first:
            return  # every transformers it installs loads a version: pinned
        notes.append(_transformers_note(ctx, repo, versions))
    outcome, kernels_note = _kernels_outcome(ctx, use)
    if use.kind == ATTN and outcome == "raises" and versions is None:
        outcome = "both"  # a transformers that pins it may be the one installed
    how = f'attn_implementation="{use.name}"' if use.kind == ATTN else f'{use.detail[:-2]}("{use.name}")'
    notes.insert(0, kernels_note.format(how=how))
    if outcome != "raises":
        notes.append(
            "whether the kernel as the Hub holds it today has what the code needs cannot be judged offline"
        )
    headline = (
        "Hub kernel `{repo}` is loaded without a version or revision: it fails at load (ValueError); pin one"
        if outcome == "raises"
        else "Hub kernel `{repo}` is loaded without a version or revision; pin one"
    )
    yield rule.finding(
        use.location,
        fit(headline, repo=repo),
        severity=Severity.ERROR if outcome == "raises" else Severity.WARNING,
        notes=tuple(notes),
        help=(
            f'use "{repo}@<revision>", or require '
            f"transformers>={ctx.transformers.attn_kernel_version}, which loads a version"
            if use.kind == ATTN
            else f"pass version= or revision= to load `{repo}`, or lock it (get_locked_kernel)"
        ),
    )


def _kernels_outcome(ctx: Context, use: Use) -> tuple[str, str]:
    """What kernels does with the load: "raises", "moves" or "both", and a note (``{how}`` to fill)."""
    facts = kernels_kb.load()
    versions = admitted(ctx, use, KERNELS, facts.releases)
    raises = (
        f"kernels {facts.unpinned_raises} and later raise {_RAISES} ({facts.evidence['unpinned_raises']})"
    )
    moves = "loads the main branch as the Hub holds it at run time, which can change between two runs"
    if versions is not None and versions[0] >= facts.unpinned_raises:
        return (
            "raises",
            f"{{how}} passes neither version nor revision: kernels {_span(versions)} installs, and {raises}",
        )
    if versions is not None and versions[-1] < facts.unpinned_raises:
        return "moves", f"{{how}} {moves} (kernels {_span(versions)}, before {facts.unpinned_raises})"
    which = (
        "the kernels installed is not known" if versions is None else f"kernels {_span(versions)} admits both"
    )
    return "both", f"{{how}} passes neither version nor revision ({which}): {raises}; an older one {moves}"


def _transformers_note(ctx: Context, repo: str, versions: list[Version] | None) -> str:
    facts = ctx.transformers
    first = facts.attn_kernel_version
    if first is None:
        return "no transformers read loads it with a version"
    version = facts.hub_kernel_version(repo, facts.newest_read)
    pinned = f"transformers {first} and later load it as version {version}"
    ev = facts.evidence.get("attn_kernel_version", "")
    if versions is None:
        return f"{pinned} ({ev}); the transformers installed is not known, and one before {first} passes none"
    older = [v for v in versions if v < first]
    return f"{pinned} ({ev}); the install admits transformers {_span(older)}, which pass none"


def _span(versions: list[Version]) -> str:
    return str(versions[0]) if len(versions) == 1 else f"{versions[0]} to {versions[-1]}"


def positional(ctx: Context, rule: Rule, use: Use) -> Iterator[Finding]:
    """``get_kernel(repo, "rev")``: a TypeError under kernels 0.17.0 and later."""
    facts = kernels_kb.load()
    versions = admitted(ctx, use, KERNELS, facts.releases)
    if versions is None or versions[-1] < facts.keyword_only:
        return  # every kernels it installs takes the revision by position (or which is not known)
    certain = versions[0] >= facts.keyword_only
    yield rule.finding(
        use.location,
        fit(
            '`get_kernel("{repo}", ...)` passes the revision by position: TypeError; pass revision=',
            repo=use.name,
        ),
        severity=Severity.ERROR if certain else Severity.WARNING,
        notes=(
            f"kernels {facts.keyword_only} and later take `revision` and `version` by keyword only "
            f"({facts.evidence['keyword_only']}): get_kernel() takes 1 positional argument",
            f"the install admits kernels {_span(versions)}",
        ),
        help=f'get_kernel("{use.name}", revision=...)',
    )


def old_lock(ctx: Context, rule: Rule, use: Use) -> Iterator[Finding]:
    """A kernels.lock in 0.16's format where the install admits kernels 0.17.0 or later, whose parser
    refuses it (what the release's own parser says: ``old_lock_refusal``)."""
    facts = kernels_kb.load()
    versions = admitted(ctx, use, KERNELS, facts.releases)
    if versions is None or versions[-1] < facts.lock_dependency:
        return  # every kernels it installs reads this format (or which is not known)
    certain = versions[0] >= facts.lock_dependency
    yield rule.finding(
        use.location,
        "kernels.lock is in the format kernels 0.16 and older write, which kernels "
        f"{facts.lock_dependency} and later cannot read; run `kernels lock .` again",
        severity=Severity.ERROR if certain else Severity.WARNING,
        notes=(
            f"the install admits kernels {_span(versions)}; from {facts.lock_dependency} the lock's entries "
            f'are {{"dependency", "lock"}} ({facts.evidence["lock_dependency"]}), and an entry with '
            f'"repo_id" is refused: {facts.old_lock_refusal}',
            "get_locked_kernel and `kernels download` read this lock: they fail before loading any kernel",
        ),
        help="run `kernels lock .` with the kernels the project installs, and commit the lock",
    )
