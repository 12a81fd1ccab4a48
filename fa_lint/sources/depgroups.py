"""PEP 735 dependency groups as a graph: which groups each group includes, each group's problems
(cycles, missing groups, packaging's own reasons) and the groups whose strings it installs, resolved a
strongly connected component at a time, so a chain of thousands of groups costs one pass
(../shared/reliability/34). Pure functions of names; the TOML stays with sources.pyproject."""

from __future__ import annotations

from collections.abc import Iterator

from fa_lint.model import normalize

MAX_CAUSES = (
    8  # the reasons one group reports, its includes' with its own: a chain of bad groups stays linear
)


def causes(exc: BaseException) -> str:
    """packaging reports several problems at once, as an ExceptionGroup."""
    return "; ".join(str(e) for e in getattr(exc, "exceptions", [exc]))


def includes(entries: object) -> list[str]:
    """The groups a group's ``{include-group = "x"}`` tables name, normalised, in order."""
    if not isinstance(entries, list):
        return []
    return [
        normalize(entry["include-group"])
        for entry in entries
        if isinstance(entry, dict)
        and list(entry) == ["include-group"]
        and isinstance(entry["include-group"], str)
    ]


def has_strings(entries: object) -> bool:
    return isinstance(entries, list) and any(isinstance(entry, str) for entry in entries)


def resolve(
    edges: dict[str, list[str]], own: dict[str, list[tuple[str, str]]], has_strings: dict[str, bool]
) -> tuple[dict[str, tuple[tuple[str, str], ...]], dict[str, tuple[str, ...]]]:
    """Each group's problems (``("cycle", reason)`` or ``("", message)``), and, for a group without
    any, the groups whose strings it installs (itself first, then what it includes, in order).

    Groups are taken a strongly connected component at a time, each after every component it
    reaches, so what a group includes is always resolved before it: one pass, linear in the groups,
    the includes and what is yielded."""
    causes: dict[str, tuple[tuple[str, str], ...]] = {}
    members: dict[str, tuple[str, ...]] = {}
    for component in _components(edges):
        inside = set(component)
        cyclic = len(component) > 1 or component[0] in edges[component[0]]
        for name in component:
            found = list(own[name])
            if cyclic:
                found.append(("cycle", _cycle(name, edges, inside)))
            for included in edges[name]:
                if included not in edges:
                    found.append(("", f"Dependency group '{included}' not found"))
                elif included not in inside:
                    found += causes[included]
            causes[name] = tuple(dict.fromkeys(found))[:MAX_CAUSES]
            if not causes[name]:  # not cyclic, so every group it includes is resolved and sound
                mine = [name] if has_strings[name] else []
                members[name] = tuple(dict.fromkeys(mine + [m for inc in edges[name] for m in members[inc]]))
    return causes, members


def _cycle(name: str, edges: dict[str, list[str]], inside: set[str]) -> str:
    """packaging's words for the cycle ``name`` is in (where it names two groups, they include each
    other)."""
    if name in edges[name]:
        return f"{name} includes itself"
    nxt = next(inc for inc in edges[name] if inc in inside)
    if name in edges[nxt]:
        return f"{name} -> {nxt}, {nxt} -> {name}"
    return f"{name} -> {nxt}, which includes {name} again through other groups"


def _components(edges: dict[str, list[str]]) -> Iterator[list[str]]:  # noqa: C901 - complexity 12: Tarjan's algorithm with a stack of its own (no recursion: a chain of 10,000 groups); its index, low-links and stack are one state
    """The strongly connected components of the include graph, each after every component it
    reaches (Tarjan's algorithm, with a stack of its own: a chain of 10,000 groups is no deeper in
    Python than one). Names no group has (missing includes) are left out."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root, included in edges.items():
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(included))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in edges:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    yield component
