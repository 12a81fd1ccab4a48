"""``fa-lint server``: a Language Server Protocol server, so an editor shows fa-lint's findings as a
file is edited (the unsaved text, with the rest of its project from disk), offers each fix and a
``# noqa`` comment as code actions, and shows a rule's page on hover.

It speaks LSP over standard input and output, as ruff's server does, on pygls (the ``server`` extra:
``pip install 'fa-lint[server]'``), imported only here so that the linter never loads it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TextIO

EXIT_USAGE = 2


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fa-lint server",
        description="Run fa-lint as a language server (LSP) for an editor; it talks over stdio.",
        allow_abbrev=False,
    )
    p.add_argument("--stdio", action="store_true", help="talk over standard input and output (the default)")
    return p


def main(argv: Sequence[str], err: TextIO) -> int:
    parser().parse_args(list(argv))
    try:
        from fa_lint.server.lsp import serve
    except ImportError as exc:  # pygls or lsprotocol missing: the server extra is not installed
        err.write(
            f"fa-lint server needs the server extra ({exc.name or exc} is missing): "
            "pip install 'fa-lint[server]'\n"
        )
        return EXIT_USAGE
    serve()
    return 0
