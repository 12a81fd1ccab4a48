#!/usr/bin/env python3
"""How fast fa-lint is, as ratios against a baseline measured in the same run.

    python benchmarks/bench.py [--repeat N]

For each input, the baseline is the cheapest thing any checker must do with that file anyway: parse
it with the standard library (tomllib for TOML, json for JSON, shlex for each Dockerfile RUN), read it
with pip-requirements-parser for requirements files, or just read the bytes of the corpus. The
ratio says what fa-lint's located, rule-checked run costs on top. Inputs are generated here (large
lockfiles, long requirements files, Dockerfiles, a file named in a 1,000-file project, whose
baseline is listing the tree), plus ../shared/corpus when it is present.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from fa_lint import engine

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "files"


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def inputs(folder: Path) -> list[tuple[str, Path, Callable[[Path], object]]]:
    lock = (
        "version = 1\n"
        + "".join(
            f'\n[[package]]\nname = "pkg-{i}"\nversion = "1.{i}.0"\n'
            f'source = {{ registry = "https://pypi.org/simple" }}\n'
            f'dependencies = [{{ name = "pkg-{i + 1}" }}]\n'
            f'wheels = [{{ url = "https://files/pkg_{i}-1.{i}.0-py3-none-any.whl", '
            f'hash = "sha256:{i:064x}" }}]\n'
            for i in range(3000)
        )
        + '\n[[package]]\nname = "flash-attn"\nversion = "2.4.2"\n'
    )
    (folder / "uv.lock").write_text(lock)
    reqs = "".join(
        f"package-{i}=={i % 7}.{i % 13}.{i % 5} \\\n    --hash=sha256:{i:064x}\n" for i in range(2000)
    )
    (folder / "requirements.txt").write_text(reqs + "flash-attn==2.4.2\n")
    docker = "FROM python:3.11\nARG V=2.4.2\n" + "".join(
        f"RUN pip install --no-cache-dir pkg-{i}==1.0 && \\\n    echo step {i}\n" for i in range(500)
    )
    (folder / "Dockerfile").write_text(docker + "RUN pip install flash-attn==${V}\n")
    lock_json = {
        "default": {f"pkg-{i}": {"version": f"==1.{i}", "hashes": [f"sha256:{i:064x}"]} for i in range(3000)}
    }
    (folder / "Pipfile.lock").write_text(json.dumps(lock_json, indent=4))
    pixi = "version: 6\nenvironments:\n  default:\n    packages:\n      linux-64:\n" + "".join(
        f"      - pypi: https://files/pkg_{i}-1.{i}.0.tar.gz\n" for i in range(3000)
    )
    pixi += "packages:\n" + "".join(
        f"- pypi: https://files/pkg_{i}-1.{i}.0.tar.gz\n  name: pkg-{i}\n  version: 1.{i}.0\n"
        f"  sha256: {i:064x}\n  requires_dist:\n  - pkg-{i + 1}\n  requires_python: '>=3.9'\n"
        for i in range(3000)
    )
    (folder / "pixi.lock").write_text(pixi)
    # A monorepo of 1,000 dependency files; only constraints.txt is named, as pre-commit names a
    # changed file: fa-lint walks the project once to find the files that include it.
    mono = folder / "mono"
    for i in range(1000):
        sub = mono / f"svc{i // 20}" / f"part{i % 20}"
        sub.mkdir(parents=True, exist_ok=True)
        include = "-c ../../constraints.txt\n" if i % 100 == 0 else ""
        (sub / "requirements.txt").write_text(f"{include}numpy=={i % 3}.0\nrequests\n")
    (mono / "constraints.txt").write_text("flash-attn!=2.5.*\n")

    def read_toml(p: Path) -> object:
        return tomllib.loads(p.read_text())

    def read_reqs(p: Path) -> object:
        import pip_requirements_parser

        return pip_requirements_parser.RequirementsFile.from_file(str(p))

    def shlex_runs(p: Path) -> object:
        import shlex

        text = p.read_text().replace("\\\n", " ")
        return [shlex.split(line[4:]) for line in text.splitlines() if line.startswith("RUN ")]

    def read_yaml(p: Path) -> object:
        import yaml

        return yaml.load(p.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))

    def list_tree(p: Path) -> object:
        return [f for _, _, files in os.walk(p.parent) for f in files]

    out: list[tuple[str, Path, Callable[[Path], object]]] = [
        ("uv.lock, 3000 packages", folder / "uv.lock", read_toml),
        ("requirements.txt, 2000 hashed lines", folder / "requirements.txt", read_reqs),
        ("Dockerfile, 500 RUN lines", folder / "Dockerfile", shlex_runs),
        ("Pipfile.lock, 3000 packages", folder / "Pipfile.lock", lambda p: json.loads(p.read_text())),
        ("pixi.lock, 3000 packages", folder / "pixi.lock", read_yaml),
        ("one file named in 1000 files", mono / "constraints.txt", list_tree),
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, path, baseline in inputs(Path(tmp)):
            base = best(lambda p=path, b=baseline: b(p), args.repeat)  # type: ignore[misc]
            ours = best(lambda p=path: engine.check([str(p)]), args.repeat)  # type: ignore[misc]
            rows.append((label, base, ours))
        if CORPUS.is_dir():
            files = [str(p) for p in sorted(CORPUS.glob("*/*"))]
            base = best(lambda: [Path(f).read_bytes() for f in files], args.repeat)
            ours = best(lambda: engine.check(files), args.repeat)
            rows.append((f"shared corpus, {len(files)} real files", base, ours))
    print(f"{'input':<40} {'baseline':>10} {'fa-lint':>10} {'ratio':>8}")
    for label, base, ours in rows:
        print(f"{label:<40} {base * 1e3:>8.1f}ms {ours * 1e3:>8.1f}ms {ours / base:>7.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
