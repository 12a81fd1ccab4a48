from __future__ import annotations

import sys

from fa_lint.cli import entry

sys.exit(entry())
