"""The long fuzz run, from the repository root: ``python -m tests.fuzz [--minutes M] [--engine E]``.

hypothesis (the default, in the test extra) draws fresh random inputs from the same generators as
tests/test_fuzz.py, format after format, until the time is up. atheris (``pip install atheris``;
Linux and macOS wheels) mutates bytes under coverage guidance, seeded with the fixtures in tests/data,
the first byte choosing the format. Either way every input goes through tests.fuzz.check, with a
time limit each (a hang is a failure too); failing inputs are written to --out, with a summary.
Each failure found this way becomes a regression test (tests/test_reliability.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from types import FrameType

from fa_lint.sources import SOURCES
from tests.fuzz import check
from tests.fuzz.inputs import fixtures, name_for

LIMIT_S = 10  # one input's time limit: past it the input counts as a hang


class Hang(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang(f"no result within {LIMIT_S} s")


class Run:
    """Counts, timings and the failures of one long run."""

    def __init__(self, out: Path, engine: str) -> None:
        self.out, self.engine, self.start = out, engine, time.monotonic()
        self.inputs: Counter[str] = Counter()
        self.failures: list[dict[str, str]] = []
        self.slowest = (0.0, "")

    def one(self, source: str, name: str, data: bytes) -> None:
        self.inputs[source] += 1
        signal.setitimer(signal.ITIMER_REAL, LIMIT_S)
        start = time.perf_counter()
        try:
            check(name, data)
        except Exception as exc:
            self.failed(source, name, data, exc)
            raise
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            spent = time.perf_counter() - start
            if spent > self.slowest[0]:
                self.slowest = (spent, source)

    def failed(self, source: str, name: str, data: bytes, exc: BaseException) -> None:
        digest = hashlib.sha256(data).hexdigest()[:12]
        path = self.out / f"{source}-{digest}-{Path(name).name}"
        path.write_bytes(data)
        self.failures.append(
            {"format": source, "file": str(path), "error": f"{type(exc).__name__}: {exc}"[:500]}
        )
        self.write()  # now: atheris ends the process at its first failure

    def write(self) -> dict[str, object]:
        summary = {
            "engine": self.engine,
            "minutes": round((time.monotonic() - self.start) / 60, 1),
            "inputs": sum(self.inputs.values()),
            "by_format": dict(sorted(self.inputs.items())),
            "failures": len(self.failures),
            "failing_inputs": self.failures,
            "slowest_input_s": round(self.slowest[0], 3),
            "slowest_format": self.slowest[1],
        }
        (self.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        return summary


def with_hypothesis(run: Run, sources: list[str], seconds: float) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import InvalidArgument

    from tests.fuzz.inputs import files

    deadline = time.monotonic() + seconds

    def fuzz(source: str) -> Callable[[], None]:
        @settings(max_examples=500, database=None, deadline=None, suppress_health_check=list(HealthCheck))
        @given(files(source))
        def one(case: tuple[str, bytes]) -> None:
            if time.monotonic() < deadline:
                run.one(source, *case)

        return one

    while time.monotonic() < deadline:
        for source in sources:
            if time.monotonic() >= deadline:
                break
            try:
                fuzz(source)()
            except InvalidArgument:  # the harness is wrong, not fa-lint
                raise
            except Exception:  # run.one wrote the input out; go on with the next format
                continue


def with_atheris(run: Run, sources: list[str], seconds: float) -> None:
    import atheris

    atheris.instrument_all()  # coverage guidance over fa_lint, its parsers and packaging
    corpus = Path(tempfile.mkdtemp(prefix="fa-lint-fuzz-corpus-"))
    for i, source in enumerate(sources):
        for n, text in enumerate(fixtures(source)):
            (corpus / f"{source}-{n}").write_bytes(bytes([i]) + text.encode())

    deadline: list[float] = []  # set at the first input, after instrumenting (a minute or so)

    def one_input(data: bytes) -> None:
        if not deadline:
            run.start = time.monotonic()
            deadline.append(run.start + seconds)
        if time.monotonic() >= deadline[0]:  # libFuzzer's own time limit would end the process unreported
            print(json.dumps(run.write(), indent=2))
            os._exit(1 if run.failures else 0)
        if data:
            source = sources[data[0] % len(sources)]
            run.one(source, name_for(source), data[1:])

    args = [sys.argv[0], str(corpus)]  # -timeout would clash with LIMIT_S's SIGALRM
    atheris.Setup(args, one_input)
    with suppress(SystemExit):  # libFuzzer stops at the first failure, which run.one wrote
        atheris.Fuzz()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--engine", choices=("hypothesis", "atheris"), default="hypothesis")
    ap.add_argument("--format", action="append", choices=list(SOURCES), help="only these formats")
    ap.add_argument(
        "--out",
        default=str(Path(tempfile.gettempdir()) / "fa-lint-fuzz"),
        help="where failing inputs and summary.json go (default: fa-lint-fuzz in the temp folder)",
    )
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sources = args.format or list(SOURCES)
    run = Run(out, args.engine)
    signal.signal(signal.SIGALRM, _alarm)
    engine = with_hypothesis if args.engine == "hypothesis" else with_atheris
    engine(run, sources, args.minutes * 60)
    print(json.dumps(run.write(), indent=2))
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(main())
