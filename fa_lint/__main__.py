"""``python -m fa_lint``: the same as the ``fa-lint`` script.

`python -m` puts the working folder first on sys.path, and fa-lint runs inside checkouts it has no
reason to trust: a `packaging/` or `yaml/` folder, or a `__future__.py`, there must not be imported in
place of the real one. So the folder is taken off the path before anything is imported, and what is
imported until then is built into the interpreter (``sys``, and ``posix``/``nt`` for the working
folder), which no file can stand in for. What Python itself imports before this module runs
(``runpy`` and what it needs: ``importlib``, ...) fa-lint cannot keep out: ``python -P -m fa_lint``
(Python 3.11+) or the ``fa-lint`` script does (docs/reliability.md).
"""

import sys

if sys.platform == "win32":
    from nt import getcwd
else:
    from posix import getcwd

if not getattr(sys.flags, "safe_path", False) and sys.path and sys.path[0] == getcwd():
    del sys.path[0]

from fa_lint.cli import entry

sys.exit(entry())
