"""Base images and runners (fa_lint/kb/images.json) and GPUs (fa_lint/kb/gpus.json).

Expectations come from the records the data is derived from -- docker-library/official-images'
``library/<name>`` files and pep600_compliance's measured ``glibc_version`` -- and, for GPUs, NVIDIA's
table (https://developer.nvidia.com/cuda-gpus); where the mirrors are on this machine, the data is read
again from them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fa_lint.kb import gpus, images
from tests.conftest import REPO

MIRRORS = REPO.parent / ".mirror"
OFFICIAL = MIRRORS / "docker-library+official-images/repo"
PEP600 = MIRRORS / "mayeut+pep600_compliance/repo"
MINICONDA = MIRRORS / "ContinuumIO+docker-images/repo"
MINIFORGE = MIRRORS / "conda-forge+miniforge-images/repo"
MODAL_WHEELS = sorted(
    (MIRRORS / "pypi").glob("modal-*.whl")
)  # pip download --no-deps modal -d ../.mirror/pypi
DATA = json.loads((REPO / "fa_lint/kb/images.json").read_text())


@pytest.mark.parametrize(
    ("reference", "distro", "libc", "glibc", "nvcc", "cuda"),
    [
        ("ubuntu:20.04", "ubuntu-20.04", "glibc", "2.31", False, None),
        ("ubuntu:jammy", "ubuntu-22.04", "glibc", "2.35", False, None),
        ("docker.io/library/debian:bullseye-slim", "debian-11", "glibc", "2.31", False, None),
        ("debian:12", "debian-12", "glibc", "2.36", False, None),
        # library/python: the last 3.8 entries (2024-10) were "Directory: 3.8/bookworm"
        ("python:3.8", "debian-12", "glibc", "2.36", False, None),
        ("python:3.10-bullseye", "debian-11", "glibc", "2.31", False, None),
        ("python:3.12-slim-bookworm", "debian-12", "glibc", "2.36", False, None),
        ("python:3.12-alpine3.20", "alpine", "musl", None, False, None),
        ("rockylinux:8", "rockylinux-8", "glibc", "2.28", False, None),
        ("centos:7", "centos-7", "glibc", "2.17", False, None),
        ("amazonlinux:2", "amazonlinux-2", "glibc", "2.26", False, None),
        ("amazonlinux:2023", "amazonlinux-2023", "glibc", "2.34", False, None),
        # NVIDIA's flavors: devel adds the compiler; the tag names the distribution
        ("nvidia/cuda:12.1.1-devel-ubuntu22.04", "ubuntu-22.04", "glibc", "2.35", True, "12.1"),
        ("nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu20.04", "ubuntu-20.04", "glibc", "2.31", False, "11.8"),
        ("nvidia/cuda:12.4.1-base-ubuntu22.04", "ubuntu-22.04", "glibc", "2.35", False, "12.4"),
        ("nvcr.io/nvidia/cuda:12.4.1-devel-ubi8", "rhubi-8", "glibc", "2.28", True, "12.4"),
        ("nvidia/cuda:12.8.0-cudnn-devel-ubuntu24.04", "ubuntu-24.04", "glibc", "2.39", True, "12.8"),
        # pytorch/pytorch: built on nvidia/cuda:...-devel-ubuntu22.04 from 2.2 (pytorch#113032, before the
        # 2.2 branch cut) to 2.9; 2.0.0 on ubuntu 18.04 (pytorch#101301 moved main off it after v2.0.0)
        ("pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime", "ubuntu-22.04", "glibc", "2.35", False, "12.1"),
        ("pytorch/pytorch:2.4.0-cuda12.1-cudnn9-devel", "ubuntu-22.04", "glibc", "2.35", True, "12.1"),
        ("pytorch/pytorch:2.0.0-cuda11.7-cudnn8-devel", "ubuntu-18.04", "glibc", "2.27", True, "11.7"),
        ("pytorch/pytorch:2.1.0-cuda12.1-cudnn8-devel", None, None, None, True, "12.1"),  # no record
        ("pytorch/pytorch:2.10.0-cuda12.8-cudnn9-devel", None, None, None, True, "12.8"),  # 24.04 proposed
        # NGC: the release notes' "Ubuntu 22.04 including Python 3.10", "NVIDIA CUDA 12.4.1"
        ("nvcr.io/nvidia/pytorch:24.05-py3", "ubuntu-22.04", "glibc", "2.35", True, "12.4"),
        ("nvcr.io/nvidia/pytorch:21.10-py3", "ubuntu-20.04", "glibc", "2.31", True, "11.4"),
        # between 21.02 and 21.10, both Ubuntu 20.04; 22.12 lies between 21.10 (20.04) and 23.09 (22.04)
        ("nvcr.io/nvidia/pytorch:21.06-py3", "ubuntu-20.04", "glibc", "2.31", True, None),
        ("nvcr.io/nvidia/pytorch:22.12-py3", None, None, None, True, None),
        ("nvcr.io/nvidia/pytorch:25.12-py3", None, None, None, True, "13.1"),
        # built by their own projects' workflows: miniconda3-v24.3.0-0 FROM debian:bullseye-slim,
        # miniforge 24.3.0-0 FROM ubuntu:focal-..., miniforge3:latest FROM ubuntu:noble-...
        ("continuumio/miniconda3:24.3.0-0", "debian-11", "glibc", "2.31", False, None),
        ("continuumio/miniconda3:24.5.0-0", "debian-12", "glibc", "2.36", False, None),
        ("continuumio/miniconda3", None, None, None, False, None),  # latest: no workflow names it
        ("condaforge/miniforge3:24.3.0-0", "ubuntu-20.04", "glibc", "2.31", False, None),
        ("quay.io/condaforge/miniforge3:latest", "ubuntu-24.04", "glibc", "2.39", False, None),
        ("condaforge/mambaforge:latest", "ubuntu-20.04", "glibc", "2.31", False, None),
    ],
)
def test_images(
    reference: str, distro: str | None, libc: str | None, glibc: str | None, nvcc: bool, cuda: str | None
) -> None:
    host = images.image(reference)
    assert host is not None
    assert (host.distro, host.libc, host.glibc, host.nvcc, host.cuda) == (distro, libc, glibc, nvcc, cuda)


@pytest.mark.parametrize(
    "reference", ["continuumio/anaconda3:2024.06-1", "nvcr.io/nvidia/tensorflow:24.05-tf2-py3", "me/app:1"]
)
def test_images_the_knowledge_base_does_not_know(reference: str) -> None:
    assert images.image(reference) is None


def test_runners() -> None:
    host = images.runner("ubuntu-22.04")
    assert host is not None and (host.distro, host.glibc) == ("ubuntu-22.04", "2.35")
    latest = images.runner("ubuntu-latest")  # moves from release to release: its distribution is not known
    assert latest is not None and latest.distro is None and latest.glibc is None
    assert latest.nvcc is False  # no hosted Ubuntu image has a CUDA toolkit (kb/runners.json)
    arm = images.runner("ubuntu-24.04-arm")  # issue 42: the Arm images have none either
    assert arm is not None and (arm.distro, arm.nvcc) == ("ubuntu-24.04", False)
    assert "Arm64-Readme.md" in arm.source
    assert images.runner("windows-2022") is None


def test_every_row_of_curated_data_has_a_source() -> None:
    for name, flavor in DATA["flavors"].items():
        assert flavor["source"], name
    for name, row in DATA["libc"].items():
        assert row["source"], name
    assert all(r["sources"] for r in DATA["glibc_reports"])
    doc = json.loads((REPO / "fa_lint/kb/gpus.json").read_text())
    assert all(row["source"] in doc["sources"] for row in doc["gpus"] + doc["instances"])


@pytest.mark.skipif(not PEP600.exists(), reason="the pep600_compliance mirror is not on this machine")
def test_glibc_is_what_pep600_compliance_measured() -> None:
    for distro, row in DATA["glibc"].items():
        m = re.fullmatch(r"mayeut/pep600_compliance@(\w+):(.+)", row["at"])
        assert m, row
        text = subprocess.run(
            ["git", "-C", str(PEP600), "show", f"{m.group(1)}:{m.group(2)}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert json.loads(text)["glibc_version"] == row["glibc"], distro


@pytest.mark.skipif(
    not (
        OFFICIAL.exists() and PEP600.exists() and MINICONDA.exists() and MINIFORGE.exists() and MODAL_WHEELS
    ),
    reason="the official-images, pep600, miniconda, miniforge mirrors or the modal wheel are not here",
)
def test_the_script_rebuilds_the_data(tmp_path: Path) -> None:
    out = tmp_path / "images.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts/build_images_kb.py"),
            "--official-images",
            str(OFFICIAL),
            "--pep600",
            str(PEP600),
            "--miniconda",
            str(MINICONDA),
            "--miniforge",
            str(MINIFORGE),
            "--modal-wheel",
            str(MODAL_WHEELS[-1] if MODAL_WHEELS else ""),
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    rebuilt = json.loads(out.read_text())
    assert {k: v for k, v in rebuilt.items() if k != "generated"} == {
        k: v for k, v in DATA.items() if k != "generated"
    }


def test_modal_base_images_carry_no_nvcc() -> None:
    # modal/_image.py: debian_slim writes "FROM python:{version}-slim-{codename}" and installs gcc,
    # gfortran and build-essential; the Debian release is the workspace's image-builder version's
    host = images.modal("debian_slim")
    assert host is not None and (host.nvcc, host.distro) == (False, None)
    assert set(DATA["modal"]["debian_slim"]["distros"].values()) >= {"debian-11", "debian-12"}
    assert images.modal("from_registry") is None


def test_every_derived_row_says_where_it_was_read() -> None:
    for row in DATA["derived"]:
        assert row["source"] and row["nvcc"] is False
        assert all(r["at"] and r["distro"] for r in row["tags"].values()), row["image"]
    # two workflows pushed miniconda3's 4.10.3-alpine tag, from a Debian and an Alpine Dockerfile
    (mc,) = [r for r in DATA["derived"] if r["image"] == "continuumio/miniconda3"]
    assert "4.10.3-alpine" in mc["unknown"] and "4.10.3-alpine" not in mc["tags"]


# --- GPUs ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name", "cc"),
    [
        # NVIDIA's table: V100 7.0, T4 7.5, A100 8.0, A10 8.6, L4 8.9, H100 9.0, B200 10.0, RTX 5090 12.0
        ("v100", "NVIDIA V100", "7.0"),
        ("Tesla-V100-SXM2-16GB", "NVIDIA V100", "7.0"),
        ("nvidia-tesla-t4", "NVIDIA T4", "7.5"),
        ("T4:1", "NVIDIA T4", "7.5"),
        ("NVIDIA-A100-SXM4-80GB", "NVIDIA A100", "8.0"),
        ("A100-80GB:8", "NVIDIA A100", "8.0"),
        ("a10g", "NVIDIA A10G", "8.6"),
        ("NVIDIA-L4", "NVIDIA L4", "8.9"),
        ("l40s", "NVIDIA L40S", "8.9"),
        ("gpu-h100", "NVIDIA H100", "9.0"),
        ("NVIDIA-H100-80GB-HBM3", "NVIDIA H100", "9.0"),
        ("gh200", "NVIDIA GH200", "9.0"),
        ("B200", "NVIDIA B200", "10.0"),
        ("NVIDIA-GeForce-RTX-5090", "GeForce RTX 5090", "12.0"),
        ("rtx4090", "GeForce RTX 4090", "8.9"),
    ],
)
def test_gpu_names(text: str, name: str, cc: str) -> None:
    gpu = gpus.named(text)
    assert gpu is not None and (gpu.name, gpu.capability) == (name, cc)


@pytest.mark.parametrize("text", ["self-hosted", "linux", "gpu", "rtx6000", "x64", "a2-highgpu-1g", "l4t"])
def test_labels_that_name_no_one_gpu(text: str) -> None:
    assert gpus.named(text) is None


@pytest.mark.parametrize(
    ("text", "cc"),
    [
        ("g5.2xlarge", "8.6"),
        ("ml.p3.2xlarge", "7.0"),
        ("g4dn.xlarge", "7.5"),
        ("p4d.24xlarge", "8.0"),
        ("p5.48xlarge", "9.0"),
    ],
)
def test_instance_types(text: str, cc: str) -> None:
    gpu = gpus.instance(text)
    assert gpu is not None and gpu.capability == cc
    assert gpus.instance("m5.large") is None
