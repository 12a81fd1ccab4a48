"""Output formats: each a pure function of the Report."""

from __future__ import annotations

import importlib
from collections.abc import Callable

Renderer = Callable[..., str]

# format: (module, function); a run imports the one writer it prints with
FORMATS: dict[str, tuple[str, str]] = {
    "text": ("text", "render"),
    "concise": ("text", "concise"),
    "json": ("json_format", "render"),
    "sarif": ("sarif", "render"),
    "github": ("github", "render"),
    "gitlab": ("gitlab", "render"),
    "json-lines": ("json_lines", "render"),
    "junit": ("junit", "render"),
    "rdjson": ("rdjson", "render"),
    "pylint": ("pylint", "render"),
    "azure": ("azure", "render"),
    "grouped": ("text", "grouped"),
}


def renderer(fmt: str) -> Renderer:
    module, function = FORMATS[fmt]
    found: Renderer = getattr(importlib.import_module(f"{__name__}.{module}"), function)
    return found
