"""Which reader each file's uses come from: Python through ``ast``, command lines as text."""

from __future__ import annotations

from fa_lint.code.prefilter import wanted_text
from fa_lint.code.screen import may_use
from fa_lint.code.uses import Use

# Formats whose text holds command lines (scripts, Dockerfile RUN/CMD/ENTRYPOINT, CI steps).
COMMAND_FORMATS = frozenset({"dockerfile", "shell", "workflow", "gitlab-ci", "makefile", "justfile"})
PYTHON_FORMATS = frozenset({"python-app"})
CONFIG_FORMATS = frozenset({"training-config", "cluster"})  # YAML that can set transformers' own keys


def uses_of(path: str, source: str, text: str) -> list[Use]:
    """What one file's code does that matters, in file order; nothing for other formats. The byte
    search runs first here too: a file read for its installs is parsed for uses only if it can hold one
    (the text is decoded already, as the file's format says)."""
    if source not in PYTHON_FORMATS and source not in COMMAND_FORMATS and source not in CONFIG_FORMATS:
        return []
    if "attention-backend" in text and source not in PYTHON_FORMATS:  # an SGLang server's flag
        from fa_lint.code.command_lines import backend_uses

        extra = backend_uses(path, text)
        if extra:
            return sorted([*extra, *_uses_of(path, source, text)], key=lambda u: (u.location, u.kind))
    return _uses_of(path, source, text)


def _uses_of(path: str, source: str, text: str) -> list[Use]:
    if not wanted_text(text):
        return []
    # the readers load ast and their patterns: only for a file the byte search kept
    if source in PYTHON_FORMATS:
        if not may_use(text):
            return []  # its words are there, and none as a use needs it (code.screen)
        from fa_lint.code.python import read

        return read(path, text)  # in file order already (the same key as below)
    if source in CONFIG_FORMATS:
        from fa_lint.code.command_lines import config_uses

        found = config_uses(path, text)
    else:
        from fa_lint.code.command_lines import command_uses

        found = command_uses(path, text)
    return sorted(found, key=lambda u: (u.location, u.kind))
