"""The shell program model: a script read as the program it is, and what its commands install.

Used for shell scripts, Dockerfile ``RUN``, workflow ``run:`` steps, Makefile recipes, tox
``commands`` and nox sessions. Seven parts, each of which knows only those below it:

- ``parse``: tree-sitter-bash, positions back into the file, the words a command receives;
- ``variables``: each variable's possible values, expansion, the working directory (``State``);
- ``walk``: the script in the order it runs -- sequencing, ``||``, branches, loops, functions,
  ``bash -c`` -- each command certain or possible;
- the install commands: ``commands`` (which tool a command runs), ``options`` (indexes, build
  isolation), ``builds`` (clones of flash-attention built in place), ``wheels`` (two-step installs'
  wheels), ``settings`` (a CUDA toolkit a command installs);
- ``context``: what the families see of the scanner (``Sink``) and of the command (``Context``);
- each tool family's arguments: ``pip`` (pip, uv, Poetry, PDM: install and uninstall), ``twostep``
  (``pip wheel``/``pip download``), ``pybuild`` (``setup.py``, ``python -m build``, a folder's build)
  and ``conda``;
- ``scanner``: the ``Scanner``, which holds a file's state (records, step, clones, wheels, the shell
  stop) and hands each command to its family's reader.

None of them imports one above it, not even for types.

A format reader makes a ``Scanner`` for its file and hands it the stretches that are shell.
"""
