from __future__ import annotations

import sys

from fa_lint.cli import main

sys.exit(main())
