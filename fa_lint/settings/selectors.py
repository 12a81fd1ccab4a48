"""What a rule selector may be, wherever one is taken (``--select``, ``--ignore``, ``--fixable``,
``--per-file-ignores`` and their configuration keys): a code or a code prefix (``FAL0``), ``ALL``
(ruff's selector for every rule), or a rule's kebab-case name (``paged-kv-missing``).

Each is turned into the code prefix the selection reads once, where it is read: ``ALL`` is the empty
prefix (every code starts with it), a name its rule's code. ruff's own selectors take codes and
``ALL`` (``RuleSelector::from_str``, crates/ruff_linter/src/rule_selector.rs); fa-lint takes the
names too, as its "did you mean paged-kv-missing (FAL001)?" suggests them.
"""

from __future__ import annotations

from collections.abc import Iterable

ALL = "ALL"


def selector(given: str) -> str:
    """The code prefix a selector stands for; a name no rule has is kept as typed (and reported as
    an unknown selector by whoever reads it)."""
    s = given.strip()
    if s.upper() == ALL:
        return ""
    if "-" not in s:  # rule names are kebab-case; codes have no "-": no registry to load for them
        return s.upper()
    from fa_lint.rules import RULES  # only when a name is given

    by_name = {r.name: code for code, r in RULES.items()}
    return by_name.get(s.lower(), s)


def selectors(listed: Iterable[str]) -> tuple[str, ...]:
    return tuple(selector(s) for s in listed)


def shown(prefix: str) -> str:
    """A prefix as a selector is written: the empty one is ``ALL``."""
    return prefix or ALL


def unknown_selectors(bad: list[str]) -> str:
    """ruff's wording for a code that selects no rule, with the code nearest the first."""
    plural = "s" if len(bad) > 1 else ""
    hint = suggestion(bad[0])
    listed = "'fa-lint --list-rules' lists the codes"
    return f"unknown rule selector{plural} {', '.join(bad)} ({f'{hint} ' if hint else ''}{listed})"


def suggestion(given: str) -> str:
    """ruff's "did you mean": the rule code or name nearest a mistyped one, as a sentence ('' if none).
    Only an error asks, so the rule registry is loaded only then."""
    import difflib

    from fa_lint.rules import RULES

    upper = given.strip().upper()
    prefixed = [code for code in RULES if code.startswith(upper)]
    if prefixed:  # a prefix (which --select takes) where one code is wanted
        return f"the codes starting with it: {', '.join(prefixed)}."
    close = difflib.get_close_matches(upper, list(RULES), n=1, cutoff=0.6)
    if not close:
        names = {r.name: r.code for r in RULES.values()}
        close = [f"{n} ({names[n]})" for n in difflib.get_close_matches(given.strip().lower(), names, n=1)]
    return f"did you mean {close[0]}?" if close else ""
