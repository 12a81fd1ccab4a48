"""Where an environment's install lands: the target machine its own files describe.

(``machine``, not ``target``: ``target/`` is a build folder that many global .gitignore files leave out.)

An environment (``fa_lint.machine.environments``) says *what* installs; its target says *where*: torch as the
environment ends with it (``final_torch``, one Python at a time where markers split: ``by_python``; a
base image's own torch: ``images``), torch's CUDA, CPython and the C++ ABI (``toolchain``); GPUs,
platform, glibc, nvcc and build variables (``target``). Every fact is read from the project's files
and the knowledge bases, never from the machine fa-lint runs on, and each one says where it was read
(``Known``); what no file says stays unknown, and no rule guesses it.
"""
