"""A unified diff (``diff -u``, ``git diff``) built from the edits that make the new text, not found again.

``--diff`` knows what each fix replaced; finding the changes again by diffing the whole file
(difflib's ``unified_diff``) is quadratic in the lines when many short equal runs alternate with
changes: 41 s for a 310 KB file of 10,000 fixes. Here each edit is widened to its lines, and only a
changed stretch of a few lines is handed to difflib, to align what an edit keeps inside it.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Iterable

CONTEXT = 3  # lines of context around a change, as diff -u and git diff print


def unified(
    old: list[str], new: list[str], changes: list[tuple[int, int, int, int]], names: tuple[str, str]
) -> list[str]:
    """``diff -u``'s lines for ``old`` -> ``new``, where ``changes`` (old lines i1:i2 became new lines
    j1:j2, in order) are all that differ: hunks of the changes less than 2 x CONTEXT equal lines
    apart, each with CONTEXT lines around it. difflib's ``unified_diff`` finds the changes itself,
    quadratic in the lines when many short equal runs alternate with changes (41 s for a 310 KB
    file); fa-lint knows them (the spans its fixes replaced), so the patch costs a step a line."""
    out: list[str] = []
    k = 0
    while k < len(changes):
        last = k
        while last + 1 < len(changes) and changes[last + 1][0] - changes[last][1] <= 2 * CONTEXT:
            last += 1
        i1, _, j1, _ = changes[k]
        _, i2, _, j2 = changes[last]
        top = min(CONTEXT, i1)
        bottom = min(CONTEXT, len(old) - i2)
        if not out:
            out += [f"--- {names[0]}\n", f"+++ {names[1]}\n"]
        out.append(f"@@ -{_range(i1 - top, i2 + bottom)} +{_range(j1 - top, j2 + bottom)} @@\n")
        at = i1 - top
        for c1, c2, d1, d2 in changes[k : last + 1]:
            out += [" " + line for line in old[at:c1]]
            out += ["-" + line for line in old[c1:c2]]
            out += ["+" + line for line in new[d1:d2]]
            at = c2
        out += [" " + line for line in old[at : i2 + bottom]]
        k = last + 1
    return out


def _range(start: int, stop: int) -> str:
    """A hunk's line range as ``diff -u`` writes it: 1-based start, the count unless it is 1, and the
    line before an empty range."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def changed_lines(
    text: str, edits: Iterable[tuple[int, int, str]]
) -> tuple[list[str], list[str], list[tuple[int, int, int, int]]]:
    """The lines of ``text`` before and after ``edits`` (offsets into ``text``, in order, not
    overlapping), and the line ranges that differ: each edit widened to whole lines, edits on one
    line taken together, and the lines a block keeps at its ends (an edit that changes one line of
    three) given back to the equal text, as a diff would find them."""
    starts = [0, *(m.end() for m in re.finditer("\n", text))]
    old = _lines(text)
    edits = list(edits)
    blocks: list[list[int]] = []  # [first line, end line] of old, each edit's widened to whole lines
    for start, end, repl in edits:
        first = bisect.bisect_right(starts, start) - 1
        stop = bisect.bisect_right(starts, max(start, end - 1))
        if text[end - 1 : end] == "\n" and not repl.endswith("\n"):
            stop += 1  # the edit takes a line end away: the next line joins the changed one
        if start == len(text) and text.endswith("\n"):
            first = stop = len(old)  # an insertion after the last line
        first, stop = min(first, len(old)), min(stop, len(old))
        if blocks and first < blocks[-1][1]:  # edits on one line: one block
            blocks[-1][1] = max(blocks[-1][1], stop)
        else:
            blocks.append([first, stop])
    pieces: list[list[str]] = []
    changes: list[tuple[int, int, int, int]] = []
    at, shift, queue = 0, 0, iter(edits)
    pending = next(queue, None)
    for first, stop in blocks:
        block_start = starts[first] if first < len(starts) else len(text)
        block_end = starts[stop] if stop < len(starts) else len(text)
        replaced: list[str] = []
        cursor = block_start
        while pending is not None and (pending[0] < block_end or pending[0] == block_end == len(text)):
            s, e, repl = pending
            replaced += [text[cursor:s], repl]
            cursor = e
            pending = next(queue, None)
        replaced.append(text[cursor:block_end])
        before, after = old[first:stop], _lines("".join(replaced))
        head = 0
        while head < min(len(before), len(after)) and before[head] == after[head]:
            head += 1
        tail = 0
        while tail < min(len(before), len(after)) - head and before[-1 - tail] == after[-1 - tail]:
            tail += 1
        j = first + shift
        if len(before) - head - tail or len(after) - head - tail:
            changes.append((first + head, stop - tail, j + head, j + len(after) - tail))
        pieces.append(old[at:first])
        pieces.append(after)
        at = stop
        shift += len(after) - len(before)
    pieces.append(old[at:])
    new = [line for piece in pieces for line in piece]
    return old, new, _aligned(old, new, changes)


LOCAL = 64  # the most lines a side of a changed stretch may have for difflib to align it


def _aligned(
    old: list[str], new: list[str], changes: list[tuple[int, int, int, int]]
) -> list[tuple[int, int, int, int]]:
    """Changes on touching lines joined into one stretch, as a diff shows them (every removed line,
    then every added one), and a stretch of at most LOCAL lines a side aligned by difflib, so the
    lines an edit keeps inside it show as context, as in a diff of the whole file. The cost is
    LOCAL^2 at most a stretch: linear in the file."""
    joined: list[tuple[int, int, int, int]] = []
    for change in changes:
        if joined and change[0] == joined[-1][1] and change[2] == joined[-1][3]:
            joined[-1] = (joined[-1][0], change[1], joined[-1][2], change[3])
        else:
            joined.append(change)
    out = []
    for i1, i2, j1, j2 in joined:
        if i2 - i1 > LOCAL or j2 - j1 > LOCAL:
            out.append((i1, i2, j1, j2))
            continue
        for tag, a1, a2, b1, b2 in difflib.SequenceMatcher(None, old[i1:i2], new[j1:j2]).get_opcodes():
            if tag != "equal":
                out.append((i1 + a1, i1 + a2, j1 + b1, j1 + b2))
    return out


def _lines(text: str) -> list[str]:
    """Lines as diff and patch count them: ended by "\n" only (a U+2028 or a form feed is text)."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
