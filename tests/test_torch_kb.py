"""The torch knowledge base (issue 20, items 1-2): who pins torch, and what torch's builds are.

The expected values are read off the packages' own published metadata (the Requires-Dist lines of
each release's wheel, as ``scripts/build_torch_kb.py`` records the file it read) and torch's own
wheels (``nvidia-cuda-runtime-cu12`` pins; libc10.so's ``c10::Error`` symbol): a sample pinned here,
the rest checked for consistency.
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from fa_lint.kb import data
from fa_lint.kb import torch as torch_kb

REPO = Path(__file__).parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import build_torch_kb as script  # noqa: E402  (a maintainer script, not a package)

KB = torch_kb.load()


def _torch_of(name: str, spec: str, extras: tuple[str, ...] = ()) -> tuple[str, tuple[str, ...]]:
    release = KB.admitted(name, SpecifierSet(spec).to_range())[0]
    got = KB.pick(name, release, frozenset(extras))
    return str(got.torch.to_specifier_set()), got.chain


@pytest.mark.parametrize(
    ("name", "spec", "extras", "torch"),
    [
        # vllm-0.6.5-cp38-abi3-manylinux1_x86_64.whl.metadata: Requires-Dist: torch==2.5.1
        ("vllm", "==0.6.5", (), "==2.5.1"),
        ("vllm", "==0.5.4", (), "==2.4.0"),
        ("vllm", "==0.8.3", (), "==2.6.0"),
        ("vllm", "==0.10.2", (), "==2.8.0"),
        ("xformers", "==0.0.28.post3", (), "==2.5.1"),
        ("torchvision", "==0.20.1", (), "==2.5.1"),
        ("torchaudio", "==2.4.0", (), "==2.4.0"),
        # sglang's srt extra pins torch itself
        ("sglang", "==0.4.6.post5", ("srt",), "==2.6.0"),
        # unsloth's cu121-torch230 extra pulls in cu121onlytorch230, which pins xformers==0.0.26.post1
        ("unsloth", "==2024.8", ("cu121-torch230",), "==2.3.0"),
        # a lower bound only
        ("accelerate", "==0.24.1", (), ">=1.10.0"),
    ],
)
def test_the_torch_a_release_requires(name: str, spec: str, extras: tuple[str, ...], torch: str) -> None:
    assert _torch_of(name, spec, extras)[0] == torch


def test_a_chain_names_the_package_on_the_way() -> None:
    # unsloth itself names no torch for that extra: xformers does
    assert _torch_of("unsloth", "==2024.8", ("cu121-torch230",))[1] == ("xformers==0.0.26.post1",)
    # vllm pins torch itself; its xformers pin agrees and narrows nothing more
    assert _torch_of("vllm", "==0.6.5")[1] == ()


def test_every_release_records_what_it_was_read_from() -> None:
    doc = json.loads(data("torch.json"))
    for name, package in doc["packages"].items():
        assert package["why"], name
        for row in package["releases"]:
            assert row.get("read") or row.get("unknown"), (name, row)
            if "read" in row:
                # the wheel's metadata (PEP 658 or its own) or the sdist's, of that very release
                assert row["version"] in row["read"].replace("_", "-") or row["read"].startswith(name[:4])


def test_the_data_file_read_entry_by_entry_is_the_file() -> None:
    # load() parses each package's entry when it is first asked for, cut where the script lays it out
    doc = json.loads(data("torch.json"))
    split = torch_kb._split(data("torch.json").decode("utf-8"))
    assert split is not None  # the script's layout: the entries are read one by one
    head, entries = split
    assert json.loads(head) == {**doc, "packages": {}}
    assert {name: json.loads(text) for name, text in entries.items()} == doc["packages"]
    kb = torch_kb.load()
    assert dict(kb._packages) == doc["packages"] and kb.names == set(doc["packages"])
    # laid out otherwise (another writer's indentation): read whole, the same
    assert torch_kb._split(json.dumps(doc, indent=4)) is None
    assert torch_kb._split(json.dumps(doc)) is None


def test_the_package_list_is_the_scripts_and_the_data_files() -> None:
    doc = json.loads(data("torch.json"))
    assert set(doc["packages"]) == set(script.PACKAGES) == torch_kb.PACKAGES
    assert {
        "vllm",
        "xformers",
        "torchvision",
        "torchaudio",
        "sglang",
        "flashinfer-python",
    } <= torch_kb.PACKAGES


def test_accepts_is_every_torch_a_range_allows() -> None:
    # vllm 0.6.0 ... 0.6.3.post1 pin torch 2.4.0; 0.6.4 ... 0.6.6.post1 pin 2.5.1
    rng = KB.accepts("vllm", SpecifierSet(">=0.6,<0.7").to_range())
    assert rng.contains(Version("2.4.0")) and rng.contains(Version("2.5.1"))
    assert not rng.contains(Version("2.3.1")) and not rng.contains(Version("2.6.0"))
    # unpinned: releases made after the data may pin anything
    assert KB.accepts("vllm", SpecifierSet("").to_range()).is_superset(SpecifierSet("").to_range())


def test_prereleases_count_only_where_asked() -> None:
    newest = KB.admitted("xformers", SpecifierSet("").to_range())[0]
    assert not newest.version.is_prerelease


# --- torch's own builds ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "cuda"),
    [
        ("1.12.1", "10.2"),  # bundled: torch/version.py cuda = '10.2'
        ("1.13.1", "11.7"),  # nvidia-cuda-runtime-cu11==11.7.99
        ("2.1.0", "12.1"),
        ("2.4.1", "12.1"),
        ("2.5.1", "12.4"),
        ("2.6.0", "12.4"),
        ("2.7.0", "12.6"),
        ("2.8.0", "12.8"),
    ],
)
def test_the_cuda_of_torchs_pypi_wheel(version: str, cuda: str) -> None:
    release = KB.release(Version(version))
    assert release is not None and release.cuda == cuda
    assert release.evidence["cuda"]


def test_the_abi_change_at_2_7() -> None:
    """Official builds before 2.7 use the old C++ ABI, from 2.7 on the new one: torch's own libraries say
    so, and flash-attention's release workflow on main stops building FALSE-ABI wheels for 2.7+."""
    assert KB.abi_change == Version("2.7.0")
    for release in KB.torch:
        assert release.cxx11_abi is (release.version >= Version("2.7")), release.version
        assert "libc10.so" in release.evidence["cxx11_abi"]
    said = " ".join(KB.data["abi_change"]["flash_attn_says"])
    assert "PyTorch 2.7+ pip wheels use CXX11_ABI=1" in said
    assert "publish.yml" in said
    assert KB.cxx11_abi(SpecifierSet("==2.6.0").to_range()) is False
    assert KB.cxx11_abi(SpecifierSet(">=2.6,<2.8").to_range()) is None  # they differ: not one answer


def test_data_no_script_reaches_has_a_source_per_row() -> None:
    conda = KB.data["conda"]
    assert conda["pytorch"]["cxx11_abi"] is False and conda["pytorch"]["sources"]
    assert conda["conda-forge"]["cxx11_abi"] is True and conda["conda-forge"]["sources"]
    images = KB.data["images"]
    assert images["pytorch/pytorch"]["sources"]
    assert images["nvcr.io/nvidia/pytorch"]["cxx11_abi"] is True
    for tag, row in images["nvcr.io/nvidia/pytorch"]["tags"].items():
        assert row["source"], tag
    assert KB.data["pytorch_index"]["sources"]


# --- the script, offline ---------------------------------------------------------------------------


def test_requires_txt_sections_become_markers() -> None:
    text = "torch>=2.0\n\n[srt]\nvllm==0.5.5\n\n[:sys_platform == 'linux']\nxformers\n"
    assert script._egg_requires(text) == [
        "torch>=2.0",
        'vllm==0.5.5; extra == "srt"',
        "xformers; (sys_platform == 'linux')",
    ]


def test_a_url_requirement_pins_the_version_its_file_names() -> None:
    torch, via = script.torch_requirements(
        [
            "xformers @ https://download.pytorch.org/whl/cu121/xformers-0.0.27.post2-cp310-cp310-manylinux2014_x86_64.whl"
            ' ; extra == "cu121-torch240"',
            "torch<2.5,>=2.4",
            "numpy",
        ]
    )
    assert torch == [{"spec": "<2.5,>=2.4", "marker": None}]
    assert via == [{"name": "xformers", "spec": "==0.0.27.post2", "marker": 'extra == "cu121-torch240"'}]


def test_the_wheel_read_for_a_release_is_linux_x86_64() -> None:
    assert script._wheel_rank("vllm-0.6.5-cp38-abi3-manylinux1_x86_64.whl") == (0, 0)
    assert script._wheel_rank("torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl") == (1, 0)
    assert script._wheel_rank("torch-2.5.1-cp311-cp311-win_amd64.whl") is None
    assert script._version("flashinfer_python-0.2.2.tar.gz", "flashinfer-python") == Version("0.2.2")


class _Bytes:
    """A Fetcher over bytes in memory: what RemoteZip asks of a server that honours Range."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def get(self, url: str, *, accept: str = "", start: int | None = None, end: int | None = None) -> bytes:
        return self.body[start : None if end is None else end + 1]


def test_remote_zip_reads_one_member_by_ranges() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("torch/version.py", "cuda = '12.4'\n")
        z.writestr("torch/lib/libc10.so", b"\0" * 1000 + b"_ZN3c105ErrorC2ENS_14SourceLocationESs")
    body = buf.getvalue()
    zipped: Any = script.RemoteZip(_Bytes(body), "mem://wheel", len(body))  # type: ignore[arg-type]
    assert zipped.read("torch/version.py") == b"cuda = '12.4'\n"
    assert zipped.read("torch/lib/libc10.so").count(script._ERROR_OLD_ABI) == 1


def test_compact_keeps_torch_and_exact_pinning_packages_only() -> None:
    packages = {
        "a": {
            "why": "w",
            "releases": [
                {
                    "version": "1",
                    "read": "a-1.whl.metadata",
                    "torch": [
                        {"spec": "==2.5.1", "marker": None},
                        {"spec": "==2.0", "marker": 'sys_platform == "win32"'},
                    ],
                    "via": [{"name": "b", "spec": ">=1", "marker": None}],
                },
                {"version": "2", "read": "a-2.whl.metadata", "torch": [{"spec": "==2.5.1", "marker": None}]},
            ],
        },
        "b": {
            "why": "w",
            "releases": [{"version": "1", "read": "b", "torch": [{"spec": ">=2", "marker": None}]}],
        },
    }
    out = script.compact(packages)
    # b never pins torch exactly, so a's line on it goes; a Windows-only line goes
    assert out["a"]["deps"] == [["torch", "==2.5.1", None]]
    assert [r["requires"] for r in out["a"]["releases"]] == [0, 0]  # one set, shared
    assert out["a"]["brings_torch"] and out["b"]["brings_torch"]
