"""What an include names, and the cycles of includes pip would crash on."""

from __future__ import annotations

import os

from fa_lint.model import FileResult, Include, Location, ParseProblem


def include_path(including: str, target: str) -> str:
    """The file an include names, from the folder of the file that includes it."""
    return os.path.normpath(os.path.join(os.path.dirname(including), target))


_CHAIN = 8  # files of a cycle named in its message, around an ellipsis


def cycles(files: dict[str, FileResult]) -> list[ParseProblem]:
    """pip recurses into -r/-c includes without a guard; a cycle makes it crash.

    A depth-first walk with its own stack, not Python's: an include chain may be thousands deep.
    """
    edges = {
        path: [
            (rec, include_path(path, rec.target))
            for rec in f.records
            if isinstance(rec, Include) and "://" not in rec.target
        ]
        for path, f in files.items()
    }
    found: dict[Location, ParseProblem] = {}
    done: set[str] = set()
    for start, first in edges.items():
        if start in done:
            continue
        stack = [start]  # the chain of includes being walked
        on_stack = {start: 0}  # each file of the chain, at its depth
        todo = [iter(first)]
        while todo:
            step = next(todo[-1], None)
            if step is None:
                finished = stack.pop()
                done.add(finished)
                del on_stack[finished]
                todo.pop()
                continue
            rec, target = step
            if target in on_stack:
                chain = [*stack[on_stack[target] :], target]
                if len(chain) > _CHAIN:
                    chain = [
                        *chain[: _CHAIN // 2],
                        f"... ({len(chain) - _CHAIN} more)",
                        *chain[-_CHAIN // 2 :],
                    ]
                found.setdefault(
                    rec.location, ParseProblem(rec.location, f"include cycle: {' -> '.join(chain)}")
                )
            elif target in edges and target not in done:
                on_stack[target] = len(stack)
                stack.append(target)
                todo.append(iter(edges[target]))
    return list(found.values())
