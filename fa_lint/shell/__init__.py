"""The shell program model: a script read as the program it is, and what its commands install.

Used for shell scripts, Dockerfile ``RUN``, workflow ``run:`` steps, Makefile recipes, tox
``commands`` and nox sessions. Four parts, each of which knows only those below it:

- ``parse``: tree-sitter-bash, positions back into the file, the words a command receives;
- ``variables``: each variable's possible values, expansion, the working directory (``State``);
- ``walk``: the script in the order it runs -- sequencing, ``||``, branches, loops, functions,
  ``bash -c`` -- each command certain or possible;
- the install commands: ``commands`` (which tool a command runs), ``options`` (indexes, build
  isolation), ``builds`` (clones of flash-attention built in place), ``wheels`` (two-step installs) and
  ``scanner``, which turns each command into located records.

A format reader makes a ``Scanner`` for its file and hands it the stretches that are shell.
"""
