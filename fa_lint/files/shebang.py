"""A file with no extension is a script when its first line says so (``#!/bin/bash``): job scripts and
install scripts are often named ``train``, ``setup_env`` or ``submit`` with nothing after the name.

Only the first line is read, and only for a file whose name a cheap test admits (no dot in it, not one
of the names that are never scripts): a walk never opens every extensionless file of a repository in
full. The interpreter decides: a shell's script is read as shell; another interpreter's (python, perl)
is no dependency file of ours.
"""

from __future__ import annotations

import os
import re
import stat

FIRST_LINE = 256  # bytes: a shebang line is short (the kernel reads at most 256 on Linux)
_SHEBANG = re.compile(rb"#![ \t]*(\S+)(?:[ \t]+(-\S+[ \t]+)*(\S+))?")
SHELLS = frozenset({"sh", "bash", "dash", "ksh", "zsh", "ash"})
# extensionless names that are documents or configuration, never scripts: not opened
_NEVER = frozenset(
    {
        "license",
        "licence",
        "copying",
        "notice",
        "authors",
        "contributors",
        "codeowners",
        "owners",
        "readme",
        "changelog",
        "changes",
        "version",
        "manifest",
        "procfile",
        "gemfile",
        "rakefile",
        "vagrantfile",
        "brewfile",
        "jenkinsfile",
        "pipfile",
        "dockerfile",
        "containerfile",
        "makefile",
        "gnumakefile",
        "justfile",
    }
)


def admitted(path: str) -> bool:
    """The cheap test: a name with no extension (no dot after its first character) that is not one of
    the names that are never scripts."""
    base = os.path.basename(path)
    return "." not in base[1:] and base.lower() not in _NEVER and not base.startswith(".")


def interpreter(first: bytes) -> str | None:
    """The program a shebang line runs (``bash`` for ``#!/bin/bash`` and ``#!/usr/bin/env bash``)."""
    m = _SHEBANG.match(first)
    if m is None:
        return None
    program = os.path.basename(m.group(1).decode("utf-8", "replace"))
    if program == "env" and m.group(3):
        program = os.path.basename(m.group(3).decode("utf-8", "replace"))
    return program


_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def first_line(path: str) -> bytes:
    """The first line of a regular file, at most FIRST_LINE bytes; empty when it cannot be read or is
    not a regular file. O_NONBLOCK: a FIFO named like a script must not stop the run; and a pipe
    (``fa-lint <(...)``) is not read here, since what is read from a pipe is gone for the reader after."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.read(fd, FIRST_LINE).split(b"\n", 1)[0]
    except OSError:  # a folder, a FIFO with no writer
        return b""
    finally:
        os.close(fd)


def script_format(path: str) -> str | None:
    """``shell`` for a shell script, ``""`` for another interpreter's script, None for no shebang."""
    program = interpreter(first_line(path))
    if program is None:
        return None
    return "shell" if re.sub(r"[\d.]+$", "", program) in SHELLS else ""
