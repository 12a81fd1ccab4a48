"""scripts/gpu_check.py: everything of the lent-GPU run that can run without a GPU."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.conftest import REPO


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_check", REPO / "scripts" / "gpu_check.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_check"] = module
    spec.loader.exec_module(module)
    return module


gpu_check = _load()
DEVICE_MARKERS = {
    "python_version": "3.12",
    "python_full_version": "3.12.3",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "os_name": "posix",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "extra": "",
}


def test_the_recorded_requirements_are_of_the_pinned_wheels() -> None:
    recorded = json.loads(gpu_check.REQUIRES.read_text())
    assert recorded["python"] == gpu_check.DEVICE_PYTHON
    assert set(recorded["requires"]) == {f"{n}=={v}" for n, v in gpu_check.WHEELS}


def test_every_requirement_is_carried_or_on_the_device() -> None:
    """What the wheels need on Linux x86_64 CPython 3.12 is another carried wheel, in the device image, or
    left out on purpose: a missing one makes the import fail on the device, where nothing can be fetched."""
    carried = {canonicalize_name(n): Version(v) for n, v in gpu_check.WHEELS}
    device = {canonicalize_name(n): v for n, v in gpu_check.DEVICE_PACKAGES.items()}
    left_out = {canonicalize_name(n) for n in gpu_check.NOT_CARRIED}
    unmet = []
    for pin, lines in json.loads(gpu_check.REQUIRES.read_text())["requires"].items():
        for line in lines:
            req = Requirement(line)
            if req.marker and not req.marker.evaluate(DEVICE_MARKERS):
                continue
            name = canonicalize_name(req.name)
            if name in carried:
                ok = req.specifier.contains(carried[name], prereleases=True)
            elif name in device:
                ok = not device[name] or req.specifier.contains(device[name], prereleases=True)
            else:
                ok = name in left_out
            if not ok:
                unmet.append(f"{pin} needs {line}")
    assert not unmet


def test_one_version_of_each_name() -> None:
    names = [canonicalize_name(n) for n, _ in gpu_check.WHEELS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(("size", "parts"), [(0, 1), (299, 1), (300, 1), (301, 2), (900, 3), (1000, 4)])
def test_split_cuts_into_parts_no_larger_than_asked(tmp_path: Path, size: int, parts: int) -> None:
    data = bytes(range(256)) * 4
    source = tmp_path / "w.whl"
    source.write_bytes(data[:size])
    cut = gpu_check.split(source, tmp_path / "parts", 300)
    assert len(cut) == parts
    assert all(p.stat().st_size <= 300 for p in cut)
    assert b"".join(p.read_bytes() for p in cut) == data[:size]


def test_pack_fills_calls_and_refuses_a_part_over_the_budget() -> None:
    calls = gpu_check.pack({"a": 60, "b": 50, "c": 40, "d": 10}, 100)
    assert sorted(map(sorted, calls)) == [["a", "c"], ["b", "d"]]
    with pytest.raises(SystemExit, match="over one call"):
        gpu_check.pack({"big": 101}, 100)


def test_the_real_wheels_fit_two_calls() -> None:
    """flash-attn-4's cu13 DSL libraries (~92 MB) are cut in two; with the rest, two calls carry all."""
    budget = gpu_check.CALL_BYTES - 5 * 2**20 - gpu_check.MARGIN_BYTES
    sizes = {"libs-cu13.part00": gpu_check.PART_BYTES, "libs-cu13.part01": 92_000_000 - gpu_check.PART_BYTES}
    sizes |= {f"small{i}": 1_100_000 for i in range(10)}
    assert len(gpu_check.pack(sizes, budget)) == 2
    assert gpu_check.PART_BYTES < 48_000_000


def _wheel(folder: Path, name: str, version: str) -> Path:
    """A minimal pure-Python wheel that pip installs: a module and its dist-info."""
    dist = f"{name}-{version}.dist-info"
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{name}.py", f"VALUE = {version!r}\n")
        z.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        z.writestr(
            f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        z.writestr(f"{dist}/RECORD", "")
    return path


def _calls(tmp_path: Path, part_bytes: int) -> tuple[Path, Path]:
    """Two call folders as prepare packs them: the first wheel's parts split across both."""
    wheels = [_wheel(tmp_path, "fa_gpu_probe_a", "1.0"), _wheel(tmp_path, "fa_gpu_probe_b", "2.0")]
    first, second = tmp_path / "call1", tmp_path / "call2"
    first.mkdir()
    second.mkdir()
    entries = []
    for i, wheel in enumerate(wheels):
        parts = gpu_check.split(wheel, tmp_path / "parts", part_bytes)
        for j, part in enumerate(parts):
            part.rename((first if (i, j) == (0, 0) else second) / part.name)
        entries.append(
            {
                "name": wheel.name.split("-")[0],
                "wheel": wheel.name,
                "sha256": gpu_check.sha256(wheel),
                "parts": [p.name for p in parts],
                "requires": [],
            }
        )
    manifest = json.dumps({"wheels": entries, "calls": 2})
    for folder in (first, second):
        (folder / gpu_check.MANIFEST).write_text(manifest)
    return first, second


def test_a_missing_part_is_named(tmp_path: Path) -> None:
    _, second = _calls(tmp_path, 200)
    with pytest.raises(SystemExit, match=r"fa_gpu_probe_a-1\.0-py3-none-any\.whl\.part00 missing"):
        gpu_check.run(second, tmp_path / "out", staging=tmp_path / "stage")


def _documented_outputs() -> set[str]:
    text = (REPO / "docs" / "verify.md").read_text()
    section = text.split("## On a lent GPU machine", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([\w.]+)` \|", section, re.MULTILINE))


def test_on_a_cpu_every_step_up_to_the_gpu_runs_and_writes_what_the_docs_list(tmp_path: Path) -> None:
    first, second = _calls(tmp_path, 200)
    staging, out = tmp_path / "stage", tmp_path / "out"
    gpu_check.stage(first, staging)
    code = gpu_check.run(second, out, staging=staging, deadline_s=300)
    summary = json.loads((out / "summary.json").read_text())
    steps = {s["step"]: s["rc"] for s in summary["steps"]}
    assert list(steps) == ["install", "nvidia-smi", "capability", "pytest", "verify", "verify-text"]
    assert steps["install"] == 0
    assert (staging / "site" / "fa_gpu_probe_b.py").read_text() == "VALUE = '2.0'\n"
    assert "cuda available False" in (out / "gpu.txt").read_text()
    assert steps["pytest"] == 0  # the gpu tests collected and skipped without CUDA
    assert "SKIPPED" in (out / "pytest.log").read_text()
    verify = json.loads((out / "verify.json").read_text())
    assert verify["result"] == "fail"  # --require-gpu without CUDA (and no flash-attn here)
    assert steps["verify"] == 1
    assert code == 1
    assert {p.name for p in out.iterdir()} == _documented_outputs()
