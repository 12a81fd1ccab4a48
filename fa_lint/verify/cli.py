"""``fa-lint verify``: prove on the GPU host that the installed flash-attn can do paged attention.

Exit codes: 0 every check passed (skips allowed), 1 a check failed, 2 usage or internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from fa_lint import __version__
from fa_lint._records import NamedTuple
from fa_lint.report._common import printable  # what a path or an interpreter says may hold anything
from fa_lint.verify.checks import Check, Probe, Verification

_MARK = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}
_COLOR = {"pass": "\033[32m", "fail": "\033[31m", "skip": "\033[33m"}


class _Usage(Exception):
    pass


class _Asked(NamedTuple):
    """What the command line asks of the probe: the namespace stays in ``main``."""

    page_size: int
    require_gpu: bool
    timeout: float
    pip_options: tuple[str, ...]


class _Parser(argparse.ArgumentParser):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_abbrev=False, **kwargs)  # as fa-lint's own options: no abbreviations

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        raise _Usage(message)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="fa-lint verify", description=__doc__.splitlines()[0] if __doc__ else None)
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--python",
        metavar="PATH",
        help="interpreter to probe, e.g. .venv/bin/python (default: the active virtual or conda "
        "environment's, else the one running fa-lint)",
    )
    where.add_argument(
        "--requirements",
        metavar="FILE",
        help="build a throw-away venv from FILE and probe the resolved install",
    )
    p.add_argument("--page-size", type=int, default=256, help="paged KV block size to test (default: 256)")
    p.add_argument("--require-gpu", action="store_true", help="fail, instead of skipping, without CUDA")
    p.add_argument(
        "--timeout", type=float, default=120.0, help="seconds each probe step may take (default: 120)"
    )
    p.add_argument(
        "--pip-option",
        action="append",
        default=[],
        metavar="OPT",
        help="extra pip option for --requirements (repeatable), e.g. --pip-option=--no-index",
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("-o", "--output-file", metavar="FILE")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    return p


def render_text(python: str, checks: list[Check], color: bool) -> str:
    lines = [f"fa-lint verify: {printable(python)}"]
    width = max(len(c.title) for c in checks) if checks else 0
    for c in checks:
        mark = _MARK[c.status]
        if color:
            mark = f"{_COLOR[c.status]}{mark}\033[0m"
        lines.append(f"  {mark}  {printable(c.title):<{width}}  {printable(c.reason)}")
    lines.append(f"Result: {summary_line(checks)}")
    return "\n".join(lines) + "\n"


def summary_line(checks: list[Check]) -> str:
    n = {s: sum(c.status == s for c in checks) for s in ("pass", "fail", "skip")}
    verdict = "FAIL" if n["fail"] else "PASS"
    return f"{verdict} ({n['fail']} failed, {n['pass']} passed, {n['skip']} skipped)"


def render_json(python: str, checks: list[Check]) -> str:
    doc = {
        "version": 1,
        "tool": {"name": "fa-lint", "version": __version__},
        "python": python,
        "checks": [
            {"id": c.id, "title": c.title, "status": c.status, "reason": c.reason, "details": c.details}
            for c in checks
        ],
        "summary": {s: sum(c.status == s for c in checks) for s in ("pass", "fail", "skip")},
        "result": "fail" if any(c.status == "fail" for c in checks) else "pass",
    }
    return json.dumps(doc, indent=2, default=str) + "\n"


def _env_python(prefix: str, conda: bool) -> str:
    if os.name == "nt":
        return os.path.join(prefix, "python.exe" if conda else os.path.join("Scripts", "python.exe"))
    return os.path.join(prefix, "bin", "python")


def isolated(prefix: str) -> str | None:
    """The installer whose private environment ``prefix`` is, where it is one: never the project's."""
    parts = Path(prefix).parts
    if "pre-commit" in parts or any(p.startswith("py_env-") for p in parts):
        return "pre-commit"
    if "pipx" in parts or ".pipx" in parts:
        return "pipx"
    if "uv" in parts:
        return "uv"
    return None


def interpreter(err: TextIO) -> str:
    """The interpreter to probe without --python: the project's where one is active, else fa-lint's own.

    A pipx, uv tool or pre-commit install runs fa-lint in an environment of its own, which holds no
    flash-attn; an activated virtual or conda environment is the project's.
    """
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        active = os.environ.get(var)
        if active and os.path.realpath(active) != os.path.realpath(sys.prefix):
            python = _env_python(active, conda=var == "CONDA_PREFIX")
            if os.path.exists(python):
                err.write(f"fa-lint verify: probing {printable(python)}, the active environment's ({var}); ")
                err.write("--python picks another\n")
                return python
    kind = isolated(sys.prefix)
    if kind:
        err.write(
            f"fa-lint verify: warning: probing fa-lint's own interpreter {sys.executable}, in the isolated "
            f"environment {kind} installed it in, not your project's: pass the project's interpreter with "
            "--python PATH (e.g. --python .venv/bin/python)\n"
        )
    return sys.executable


def _verify(asked: _Asked, python: str, err: TextIO, extra: list[Check]) -> list[Check]:
    def progress(i: int, n: int, title: str) -> None:
        err.write(f"[{i}/{n}] {title}...\n")
        err.flush()

    run = Verification(Probe(python, asked.timeout), page_size=asked.page_size, require_gpu=asked.require_gpu)
    return [*extra, *run.run(progress)]


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    try:
        args = parser().parse_args(list(sys.argv[2:] if argv is None else argv))
        if args.page_size <= 0:
            raise _Usage("--page-size must be positive")
        asked = _Asked(args.page_size, args.require_gpu, args.timeout, tuple(args.pip_option))
        if args.requirements:
            if not os.path.isfile(args.requirements):
                raise _Usage(f"no such file: {args.requirements}")
            checks = _from_requirements(args.requirements, asked, err)
            python = f"throw-away venv from {args.requirements}"
        else:
            python = args.python or interpreter(err)
            if shutil.which(python) is None and not os.path.isfile(python):
                raise _Usage(f"no such interpreter: {python}")
            checks = _verify(asked, python, err, [])
    except _Usage as exc:
        err.write(f"fa-lint verify: error: {printable(str(exc))}\n")
        return 2
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except Exception as exc:  # the contract is exit 2 and a message, never a traceback
        err.write(f"fa-lint verify: internal error: {type(exc).__name__}: {printable(str(exc))}\n")
        return 2
    color = args.color == "always" or (
        args.color == "auto"
        and not os.environ.get("NO_COLOR")
        and hasattr(out, "isatty")
        and out.isatty()
        and not args.output_file
    )
    text = render_json(python, checks) if args.format == "json" else render_text(python, checks, color)
    if args.output_file:
        try:
            with open(args.output_file, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            why = printable(f"cannot write {args.output_file}: {exc.strerror or exc}")
            err.write(f"fa-lint verify: error: {why}\n")
            return 2
    else:
        out.write(text)
    return 1 if any(c.status == "fail" for c in checks) else 0


def _from_requirements(requirements: str, asked: _Asked, err: TextIO) -> list[Check]:
    from fa_lint.verify.venv import InstallError, venv_from

    err.write(f"[0/7] installing {printable(requirements)} into a throw-away venv...\n")
    try:
        with venv_from(requirements, list(asked.pip_options)) as installed:
            done = Check("install", "install", "pass", f"pip installed {requirements} into a fresh venv")
            return _verify(asked, installed.python, err, [done])
    except InstallError as exc:
        return [Check("install", "install", "fail", str(exc), {"log": exc.log[-4000:]})]
