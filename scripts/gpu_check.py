#!/usr/bin/env python3
"""fa-lint verify on a lent GPU machine, prepared here and run there in as few calls as the size limit allows.

The device machine can fetch nothing, and each call carries at most 64 MiB of files (the checkout
included). So the wheels it needs are downloaded *here*, any wheel above 48 MB is cut into parts, and the
parts are packed into as few call folders as fit (``.gpu/call1``, ``.gpu/call2``...). On the device the
first calls only stage their folder in ``/tmp/fa-lint-gpu`` (a warm machine keeps it between calls); the
last call joins the parts, checks every wheel's sha256, installs them with ``pip --no-index --no-deps
--target``, and runs the checks, writing under ``--out``:

  gpu.txt       nvidia-smi, torch's device name and compute capability
  pytest.log    ``pytest -m gpu -v`` (the paged-call tests of tests/test_verify_gpu.py)
  verify.json   ``fa-lint verify --require-gpu --format json`` against the installed flash-attn-4
  verify.txt    the same run as text
  summary.json  each step: command, exit status, seconds; the device and its capability

Usage:
  python3 scripts/gpu_check.py prepare            # here: download into .gpu/, split, pack call folders
  python3 scripts/gpu_check.py stage .gpu/call1   # on the device, every call but the last
  python3 scripts/gpu_check.py run .gpu/call2 --out "$OUT"   # on the device, the last call

Standard library only: the device's python3 (which holds torch) runs it before anything is installed.
See docs/verify.md, "On a lent GPU machine".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterable, Sequence
from email.parser import Parser
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PREPARED = REPO / ".gpu"
STAGE = Path("/tmp/fa-lint-gpu")  # outside the checkout, so a warm machine keeps it between calls
MANIFEST = "manifest.json"
# Each carried wheel's Requires-Dist as prepare read it from the wheel: the evidence that WHEELS and the
# device image together hold everything flash-attn-4 and fa-lint import (tests/test_gpu_check.py).
REQUIRES = REPO / "scripts" / "data" / "gpu_check_requires.json"

# What the device lacks, one version each (two versions of one name stop the whole install). flash-attn 2
# cannot be built there in time, so the paged call runs through flash-attn-4's wheel (module
# flash_attn.cute, paged KV through page_table on Hopper). nvidia-cutlass-dsl 4.8.1 requires
# nvidia-cutlass-dsl-libs-cu12 unconditionally, but its files are the same paths as libs-cu13's
# (dsl_packages/cutlass/_mlir/_mlir_libs) and the device's torch is built for CUDA 13, so only cu13 goes.
# fa-lint's own run-time dependencies that the image lacks close the list.
WHEELS: tuple[tuple[str, str], ...] = (
    ("flash-attn-4", "4.0.0b36"),
    ("nvidia-cutlass-dsl", "4.8.1"),
    ("nvidia-cutlass-dsl-libs-base", "4.8.1"),
    ("nvidia-cutlass-dsl-libs-core", "4.8.1"),
    ("nvidia-cutlass-dsl-libs-cu13", "4.8.1"),
    ("quack-kernels", "0.6.5"),
    ("apache-tvm-ffi", "0.1.15.post2"),
    ("torch-c-dlpack-ext", "0.1.5"),
    ("pip-requirements-parser", "32.0.1"),
    ("tree-sitter", "0.26.1"),
    ("tree-sitter-bash", "0.25.1"),
)
# Requirements of the wheels above that are deliberately not carried, and why.
NOT_CARRIED = {
    "nvidia-cutlass-dsl-libs-cu12": "the same files as libs-cu13; the device's torch is CUDA 13",
}
# The device image ('cuda' on nvidia-h200): Python 3.12.3, these packages as the workplace's device notes
# (KINDS.md, "pip list, as a session saw it", 2026-11) record them; "" where only the name is recorded.
DEVICE_PYTHON = "3.12"
DEVICE_PACKAGES = {
    "torch": "2.11.0",
    "transformers": "5.17.0",
    "triton": "3.6.0",
    "numpy": "2.5.2",
    "einops": "",
    "typing-extensions": "",
    "packaging": "",
    "pyyaml": "",
    "pyparsing": "",
    "pytest": "",
    "ninja": "",
    "cuda-bindings": "",
    "protobuf": "",
}
PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_24_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux1_x86_64",
)
PART_BYTES = 45 * 2**20  # 47.2 MB: under the 48 MB a file may be before it is cut
CALL_BYTES = 64 * 2**20  # what one call carries, the checkout included
MARGIN_BYTES = 4 * 2**20  # for files the checkout gains before the call
DEADLINE_S = 8 * 60  # the whole device run, install to last output


def canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(2**20), b""):
            digest.update(block)
    return digest.hexdigest()


def requires_dist(wheel: Path) -> list[str]:
    """The wheel's Requires-Dist lines, read from its METADATA without installing it."""
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
        message = Parser().parsestr(z.read(meta).decode("utf-8"))
    return list(message.get_all("Requires-Dist") or [])


# --- splitting and packing (here) -------------------------------------------------------------------


def split(path: Path, into: Path, part_bytes: int = PART_BYTES) -> list[Path]:
    """Cut ``path`` into ``into/NAME.partNN`` files of at most ``part_bytes``; a small file is one part."""
    into.mkdir(parents=True, exist_ok=True)
    parts = []
    with path.open("rb") as f:
        for index in range(10_000):
            block = f.read(part_bytes)
            if not block and index:
                break
            part = into / f"{path.name}.part{index:02d}"
            part.write_bytes(block)
            parts.append(part)
            if len(block) < part_bytes:
                break
    return parts


def pack(sizes: dict[str, int], budget: int) -> list[list[str]]:
    """Parts into as few calls as fit the budget (first fit, largest first); a part over it is an error."""
    calls: list[tuple[int, list[str]]] = []
    for name in sorted(sizes, key=lambda n: (-sizes[n], n)):
        if sizes[name] > budget:
            raise SystemExit(f"gpu_check: {name} ({sizes[name]} bytes) is over one call's {budget} bytes")
        for i, (used, names) in enumerate(calls):
            if used + sizes[name] <= budget:
                calls[i] = (used + sizes[name], [*names, name])
                break
        else:
            calls.append((sizes[name], [name]))
    return [sorted(names) for _, names in calls]


def checkout_bytes() -> int:
    """What travels with every call: tracked files and untracked ones git does not ignore."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    total = 0
    for name in filter(None, listed):
        path = REPO / os.fsdecode(name)
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
    return total


def download(into: Path) -> None:
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    pins = [f"{name}=={version}" for name, version in WHEELS]
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--python-version", DEVICE_PYTHON, "--implementation", "cp", *platforms, "-d", str(into)]
    subprocess.run([*command, *pins], check=True)


def prepare(args: argparse.Namespace) -> int:
    wheels = PREPARED / "wheels"
    if not args.no_download:
        download(wheels)
    found = {canonical(p.name.split("-")[0]): p for p in wheels.glob("*.whl")}
    missing = [name for name, _ in WHEELS if canonical(name) not in found]
    if missing:
        raise SystemExit(f"gpu_check: not downloaded: {', '.join(missing)}")
    for old in PREPARED.glob("call*"):
        shutil.rmtree(old)
    parts_dir = PREPARED / "parts"
    shutil.rmtree(parts_dir, ignore_errors=True)
    entries = []
    sizes: dict[str, int] = {}
    for name, version in WHEELS:
        wheel = found[canonical(name)]
        parts = split(wheel, parts_dir, args.part_bytes)
        sizes.update((p.name, p.stat().st_size) for p in parts)
        entries.append(
            {
                "name": name,
                "version": version,
                "wheel": wheel.name,
                "sha256": sha256(wheel),
                "parts": [p.name for p in parts],
                "requires": requires_dist(wheel),
            }
        )
    requires = {f"{e['name']}=={e['version']}": e["requires"] for e in entries}
    REQUIRES.write_text(json.dumps({"python": DEVICE_PYTHON, "requires": requires}, indent=2) + "\n")
    budget = CALL_BYTES - checkout_bytes() - MARGIN_BYTES
    calls = pack(sizes, budget)
    manifest = json.dumps({"wheels": entries, "calls": len(calls)}, indent=2) + "\n"
    for index, names in enumerate(calls, 1):
        folder = PREPARED / f"call{index}"
        folder.mkdir(parents=True)
        for name in names:
            shutil.move(str(parts_dir / name), folder / name)
        (folder / MANIFEST).write_text(manifest)
    shutil.rmtree(parts_dir)
    for index in range(1, len(calls) + 1):
        verb = "run" if index == len(calls) else "stage"
        tail = ' --out "$OUT"' if verb == "run" else ""
        call = f".gpu/call{index}"
        print(f"call {index}: carry {call}; python3 scripts/gpu_check.py {verb} {call}{tail}")
    return 0


# --- on the device ----------------------------------------------------------------------------------


def stage(folder: Path, staging: Path = STAGE) -> None:
    parts = staging / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    for item in folder.iterdir():
        shutil.copyfile(item, parts / item.name)


def join(manifest: dict[str, Any], parts: Path, into: Path) -> list[Path]:
    """Each wheel from its parts, checked against the manifest's sha256; a missing part is named."""
    into.mkdir(parents=True, exist_ok=True)
    wheels = []
    for entry in manifest["wheels"]:
        absent = [p for p in entry["parts"] if not (parts / p).is_file()]
        if absent:
            raise SystemExit(
                f"gpu_check: {', '.join(absent)} missing: an earlier call's folder was not staged on this "
                "machine (it was given back between calls?); run every call again, in order"
            )
        wheel = into / entry["wheel"]
        with wheel.open("wb") as out:
            for p in entry["parts"]:
                out.write((parts / p).read_bytes())
        if sha256(wheel) != entry["sha256"]:
            raise SystemExit(f"gpu_check: {wheel.name} does not match its sha256 after joining")
        wheels.append(wheel)
    return wheels


def site_environment(site: Path) -> dict[str, str]:
    """PYTHONPATH for a --target install; its .pth files (cutlass-dsl adds a path) need site.addsitedir."""
    hook = site.parent / "hook"
    hook.mkdir(parents=True, exist_ok=True)
    (hook / "sitecustomize.py").write_text(f"import site\nsite.addsitedir({str(site)!r})\n")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(hook), str(site), str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    return env


class Steps:
    """Runs each step with the time the deadline leaves it; its output to a file under --out."""

    def __init__(self, out: Path, deadline: float) -> None:
        self.out, self.deadline = out, deadline
        self.results: list[dict[str, Any]] = []

    def run(self, name: str, command: Sequence[str], log: str, env: dict[str, str], limit: float) -> int:
        left = max(1.0, min(limit, self.deadline - time.monotonic()))
        started = time.monotonic()
        with (self.out / log).open("a") as f:
            f.write(f"$ {' '.join(command)}\n")
            f.flush()
            try:
                done = subprocess.run(
                    list(command),
                    check=False,
                    stdout=f,
                    stderr=subprocess.STDOUT,
                    env=env,
                    cwd=REPO,
                    timeout=left,
                )
                rc = done.returncode
            except subprocess.TimeoutExpired:
                rc = 124
                f.write(f"\n[gpu_check: stopped after {left:.0f} s]\n")
            except OSError as exc:
                rc = 127
                f.write(f"\n[gpu_check: cannot run: {exc}]\n")
        seconds = round(time.monotonic() - started, 1)
        self.results.append({"step": name, "command": list(command), "rc": rc, "seconds": seconds})
        return rc


CAPABILITY = (
    "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda); "
    "ok = torch.cuda.is_available(); print('cuda available', ok); "
    "ok and print('device', torch.cuda.get_device_name(0), 'capability', torch.cuda.get_device_capability(0))"
)


def run(folder: Path, out: Path, staging: Path = STAGE, deadline_s: float = DEADLINE_S) -> int:
    deadline = time.monotonic() + deadline_s
    stage(folder, staging)
    manifest = json.loads((folder / MANIFEST).read_text())
    out.mkdir(parents=True, exist_ok=True)
    wheels = join(manifest, staging / "parts", staging / "wheels")
    site = staging / "site"
    shutil.rmtree(site, ignore_errors=True)
    env = site_environment(site)
    steps = Steps(out, deadline)
    py = sys.executable
    install = [py, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile"]
    install += ["--no-cache-dir", "--upgrade", "--target", str(site), *map(str, wheels)]
    if steps.run("install", install, "pytest.log", env, 180) == 0:
        steps.run("nvidia-smi", ["nvidia-smi"], "gpu.txt", env, 30)
        steps.run("capability", [py, "-c", CAPABILITY], "gpu.txt", env, 60)
        gpu_tests = [
            py,
            "-m",
            "pytest",
            "-m",
            "gpu",
            "-v",
            "-p",
            "no:cacheprovider",
            "tests/test_verify_gpu.py",
        ]
        steps.run("pytest", gpu_tests, "pytest.log", env, 240)
        verify = [py, "-m", "fa_lint", "verify", "--python", py, "--require-gpu"]
        steps.run(
            "verify", [*verify, "--format", "json", "-o", str(out / "verify.json")], "verify.txt", env, 240
        )
        steps.run("verify-text", [*verify, "--color", "never"], "verify.txt", env, 240)
    capability = (out / "gpu.txt").read_text() if (out / "gpu.txt").is_file() else ""
    summary = {"steps": steps.results, "gpu": capability.splitlines()[-3:], "python": sys.version.split()[0]}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return 0 if all(s["rc"] == 0 for s in steps.results) else 1


def main(argv: Iterable[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="gpu_check.py", description=__doc__.splitlines()[0] if __doc__ else None)
    verbs = p.add_subparsers(dest="verb", required=True)
    prep = verbs.add_parser("prepare", help="here: download the wheels, split and pack them into .gpu/callN")
    prep.add_argument("--no-download", action="store_true", help="use the wheels already in .gpu/wheels")
    prep.add_argument("--part-bytes", type=int, default=PART_BYTES, help=argparse.SUPPRESS)
    st = verbs.add_parser("stage", help="device: keep this call's parts for the last call")
    st.add_argument("folder", type=Path)
    rn = verbs.add_parser("run", help="device: join, install, run the checks, write under --out")
    rn.add_argument("folder", type=Path)
    rn.add_argument("--out", type=Path, required=True)
    args = p.parse_args(list(argv) if argv is not None else None)
    if args.verb == "prepare":
        return prepare(args)
    if args.verb == "stage":
        stage(args.folder)
        print(f"staged {len(list(args.folder.iterdir()))} files in {STAGE / 'parts'}")
        return 0
    return run(args.folder, args.out)


if __name__ == "__main__":
    sys.exit(main())
