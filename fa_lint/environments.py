"""Grouping requirements into the installs they describe (environments)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass

from fa_lint.model import FileResult, Include, Kind, Requirement


@dataclass(frozen=True, slots=True)
class Environment:
    name: str
    members: tuple[Requirement, ...]


def _closure(
    path: str, files: Mapping[str, FileResult], seen: set[str], constraint: bool
) -> list[Requirement]:
    """A requirements file with everything its -r/-c lines pull in; -c turns installs into limits."""
    if path in seen or path not in files:
        return []
    seen.add(path)
    out: list[Requirement] = []
    for rec in files[path].records:
        if isinstance(rec, Requirement):
            out.append(dataclasses.replace(rec, kind=Kind.CONSTRAINT) if constraint else rec)
        elif isinstance(rec, Include) and "://" not in rec.target:
            target = os.path.normpath(os.path.join(os.path.dirname(path), rec.target))
            out += _closure(target, files, seen, constraint or rec.constraint)
    return out


def build(files: Mapping[str, FileResult]) -> tuple[Environment, ...]:
    return tuple(Environment(path, tuple(_closure(path, files, set(), False))) for path in files)
