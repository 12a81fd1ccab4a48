"""Whether PEP 508 environment markers can hold together, and where a marker holds.

Two requirements whose markers never hold on the same machine (``sys_platform == 'win32'`` and
``sys_platform != 'win32'``; ``python_version < '3.12'`` and ``python_version >= '3.12'``) are never
installed together, so neither limits the other. packaging evaluates a marker in one environment and
has no satisfiability test, so the markers are evaluated over the machines a flash-attn project can
meet: Linux (x86_64, aarch64), Windows and macOS, each with every CPython from 3.8 to 3.14. A marker
that packaging cannot read holds everywhere (pip reports it; nothing is judged on it here).
"""

from __future__ import annotations

import functools
import re
from typing import Any

PYTHONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
# sys_platform, platform_system, os_name, platform_machine
_SYSTEMS = {
    "linux": (("linux", "Linux", "posix", "x86_64"), ("linux", "Linux", "posix", "aarch64")),
    "windows": (("win32", "Windows", "nt", "AMD64"),),
    "macos": (("darwin", "Darwin", "posix", "arm64"), ("darwin", "Darwin", "posix", "x86_64")),
}
_EXTRA = re.compile(r"""\bextra\s*==\s*["']([^"']+)["']""")


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> Any:
    from packaging.markers import InvalidMarker, Marker  # markers are read for such lines only

    try:
        return Marker(text)
    except InvalidMarker:
        return None


def _machines(systems: tuple[str, ...], extras: tuple[str, ...]) -> list[dict[str, str]]:
    return [
        {
            "sys_platform": sys_platform,
            "platform_system": system,
            "os_name": os_name,
            "platform_machine": machine,
            "python_version": python,
            "python_full_version": f"{python}.0",
            "implementation_version": f"{python}.0",
            "platform_python_implementation": "CPython",
            "implementation_name": "cpython",
            "platform_release": "",
            "platform_version": "",
            "extra": extra,
        }
        for name in systems
        for sys_platform, system, os_name, machine in _SYSTEMS[name]
        for python in PYTHONS
        for extra in extras
    ]


@functools.lru_cache(maxsize=4096)
def _where(markers: tuple[str, ...], systems: tuple[str, ...]) -> bool:
    parsed = [m for m in map(_parsed, markers) if m is not None]
    # an extra is asked for or not at will: each one named is a machine of its own
    extras = ("", *sorted({e for m in markers for e in _EXTRA.findall(m)}))
    return any(all(m.evaluate(env) for m in parsed) for env in _machines(systems, extras))


def together(*markers: str | None) -> bool:
    """Whether all these markers hold on one machine (None, no marker, holds on every one)."""
    written = tuple(sorted({m for m in markers if m}))
    return len(written) < 2 or _where(written, tuple(_SYSTEMS))


def holds_on(marker: str | None, system: str) -> bool:
    """Whether ``marker`` holds on some machine of ``system`` ('linux', 'windows' or 'macos')."""
    return not marker or _where((marker,), (system,))


def covers(written: tuple[str, ...], machines: tuple[str, ...], pythons: tuple[str, ...] = ()) -> bool:
    """Whether on every Linux machine of these ``platform_machine`` values, with each of these CPythons
    (none given: every one from 3.8 to 3.14), one of the markers holds: the installs they take over
    cover that machine. A marker packaging cannot read holds nowhere here (nothing is taken over)."""
    parsed = [m for m in map(_parsed, written) if m is not None]
    wanted = [
        env
        for env in _machines(("linux",), ("",))
        if env["platform_machine"] in machines and (not pythons or env["python_version"] in pythons)
    ]
    return bool(parsed) and bool(wanted) and all(any(m.evaluate(env) for m in parsed) for env in wanted)
