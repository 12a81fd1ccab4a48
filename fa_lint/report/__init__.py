"""Output formats: each a pure function of the Report."""

from __future__ import annotations

from collections.abc import Callable

from fa_lint.report import github, gitlab, json_format, sarif, text

Renderer = Callable[..., str]

FORMATS: dict[str, Renderer] = {
    "text": text.render,
    "concise": text.concise,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
    "gitlab": gitlab.render,
}
