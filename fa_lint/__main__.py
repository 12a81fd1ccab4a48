"""``python -m fa_lint``: the same as the ``fa-lint`` script."""

from __future__ import annotations

import os
import sys

# `python -m` puts the working folder first on sys.path, and fa-lint runs inside checkouts it has no
# reason to trust: a `packaging/` or `yaml/` folder there must not be imported in place of the real
# one. fa_lint itself is loaded by now, and imports its own modules through its package.
if not getattr(sys.flags, "safe_path", False) and sys.path and sys.path[0] == os.getcwd():
    del sys.path[0]

from fa_lint.cli import entry

sys.exit(entry())
