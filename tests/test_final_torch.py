"""The torch an environment ends with, and the rules that read it (issue 20, items 3-4; issue 22 item 5).

Every expectation is worked out from the facts: which torch each package release's published
metadata requires (``fa_lint/kb/torch.json``: ``vllm==0.6.5`` -> ``torch==2.5.1``, ``vllm==0.5.4`` ->
``torch==2.4.0``, ``xformers==0.0.28.post3`` -> ``torch==2.5.1``), what pip does with an installed
package a later command admits (keeps it) or does not (replaces it), and torch's own builds (before 2.7
the official builds use the old C++ ABI, from 2.7 the new one; torch 2.5.1 on PyPI is built with CUDA
12.4).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run
from tests.test_machine import toolchains

WHEEL = (
    "https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
    "flash_attn-2.6.3+cu123torch{t}cxx11abi{abi}-cp310-cp310-linux_x86_64.whl"
)
W24 = WHEEL.format(t="2.4", abi="FALSE")


def findings(*args: str) -> list[dict[str, Any]]:
    return run("--format", "json", *args).json["findings"]


def codes(found: list[dict[str, Any]], *wanted: str) -> list[tuple[str, int, str]]:
    return [(f["code"], f["line"], f["severity"]) for f in found if f["code"] in wanted]


def final_of(files: dict[str, str], env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(tmp_path)
    return toolchains(files, tmp_path)[env]


# --- the final torch ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "env", "minors"),
    [
        # a package pins torch even where torch is not written
        ({"requirements.txt": "vllm==0.6.5\n"}, "requirements.txt", ("2.5",)),
        # one resolve: every torch some admitted release accepts (0.6.0-0.6.3.post1: 2.4.0; later: 2.5.1)
        ({"requirements.txt": "vllm>=0.6,<0.7\n"}, "requirements.txt", ("2.4", "2.5")),
        # ... narrowed by the torch pin beside it
        ({"requirements.txt": "torch==2.4.0\nvllm>=0.6,<0.7\n"}, "requirements.txt", ("2.4",)),
        # sglang's srt extra
        ({"requirements.txt": "sglang[srt]==0.4.6.post5\n"}, "requirements.txt", ("2.6",)),
        # a script: a later command replaces what an earlier one put there
        ({"setup.sh": "pip install torch==2.4.0\npip install vllm==0.6.5\n"}, "setup.sh", ("2.5",)),
        # ... unless it admits it: pip keeps an installed torch (vllm 0.5.4 pins torch 2.4.0)
        ({"setup.sh": "pip install torch==2.4.0\npip install vllm==0.5.4\n"}, "setup.sh", ("2.4",)),
        # --no-deps installs vllm and none of its requirements
        ({"setup.sh": "pip install torch==2.4.0\npip install --no-deps vllm==0.6.5\n"}, "setup.sh", ("2.4",)),
        # uninstall, then another torch
        (
            {"setup.sh": "pip install torch==2.4.0\npip uninstall -y torch\npip install torch==2.5.1\n"},
            "setup.sh",
            ("2.5",),
        ),
        # a base image's torch, replaced by a package's
        (
            {
                "Dockerfile": "FROM pytorch/pytorch:2.4.0-cuda12.1-cudnn9-devel\nRUN pip install xformers==0.0.28.post3\n"
            },
            "Dockerfile [stage:0]",
            ("2.5",),
        ),
        # pytorch/pytorch images ship torchvision and torchaudio: an unpinned install finds them there
        (
            {
                "Dockerfile": "FROM pytorch/pytorch:2.4.0-cuda12.1-cudnn9-devel\nRUN pip install torchvision torchaudio\n"
            },
            "Dockerfile [stage:0]",
            ("2.4",),
        ),
        # a uv override on torch replaces every other requirement on it, vllm's own included
        (
            {
                "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["vllm==0.6.5"]\n'
                '[tool.uv]\noverride-dependencies = ["torch==2.4.0"]\n'
            },
            "pyproject.toml [project]",
            ("2.4",),
        ),
    ],
)
def test_which_torch_it_ends_with(
    files: dict[str, str], env: str, minors: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = final_of(files, env, tmp_path, monkeypatch)
    assert (tools.final.minors if tools.final is not None else ()) == minors


def test_a_lower_bound_says_no_one_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = final_of({"requirements.txt": "accelerate==0.24.1\n"}, "requirements.txt", tmp_path, monkeypatch)
    assert tools.torch is None
    assert tools.final is not None and tools.final.minors[0] == "1.10" and "2.4" in tools.final.minors


def test_a_command_that_may_not_run_leaves_the_torch_uncertain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = final_of(
        {"setup.sh": 'pip install torch==2.4.0\nif [ -n "$X" ]; then pip install vllm==0.6.5; fi\n'},
        "setup.sh",
        tmp_path,
        monkeypatch,
    )
    assert tools.final is not None and not tools.final.certain
    assert set(tools.final.minors) == {"2.4", "2.5"}
    assert tools.torch is None  # no one minor to judge a wheel by


def test_an_unpinned_package_on_an_unknown_machine_may_already_be_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a script runs wherever it is run: 'pip install torchvision' keeps one already installed
    tools = final_of(
        {"setup.sh": "pip install torch==2.4.0\npip install torchvision\n"}, "setup.sh", tmp_path, monkeypatch
    )
    assert tools.final is not None and not tools.final.certain


def test_the_final_torch_gives_its_cuda_and_abi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = final_of(
        {"Dockerfile": "FROM nvidia/cuda:11.8.0-devel-ubuntu22.04\nRUN pip install vllm==0.6.5\n"},
        "Dockerfile [stage:0]",
        tmp_path,
        monkeypatch,
    )
    assert tools.torch is not None and tools.torch.value == "2.5"
    assert "vllm==0.6.5" in tools.torch.where
    assert tools.cuda is not None and tools.cuda.value == "12.4"  # torch 2.5.1's PyPI wheel
    assert tools.cxx11_abi is False


def test_an_index_the_files_do_not_show_gives_no_cuda(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a Pipfile names its indexes in [[source]] tables fa-lint does not read: no PyPI CUDA is assumed
    tools = final_of(
        {"Pipfile": '[packages]\ntorch = "==2.5.1"\n'}, "Pipfile [packages]", tmp_path, monkeypatch
    )
    assert tools.torch is not None and tools.cuda is None and tools.cxx11_abi is None


# --- FAL005 ------------------------------------------------------------------------------------------


def test_fal005_names_what_moved_torch_after_the_wheel(project: Any) -> None:
    project(
        {
            "Dockerfile": "FROM python:3.10\nRUN pip install torch==2.4.0\nRUN pip install "
            + W24
            + "\nRUN pip install vllm==0.6.5\n"
        }
    )
    (f,) = [f for f in findings() if f["code"] == "FAL005"]
    assert f["line"] == 3
    assert f["message"].startswith("vllm==0.6.5 (line 4) installs torch 2.5.1 after this torch 2.4 wheel")
    assert any("which pins torch 2.5.1" in n for n in f["notes"])


@pytest.mark.parametrize(
    ("later", "message"),
    [
        ("pip install -U torch", "-U torch (line 4) installs torch 2.15 or newer"),
        (
            "pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu121",
            "torch==2.5.1 (line 4) installs torch 2.5.1",
        ),
        ("pip uninstall -y torch && pip install torch==2.5.1", "torch==2.5.1 (line 4) installs torch 2.5.1"),
        ("pip install xformers==0.0.28.post3", "xformers==0.0.28.post3 (line 4) installs torch 2.5.1"),
    ],
)
def test_fal005_each_way_a_later_command_moves_torch(project: Any, later: str, message: str) -> None:
    project(
        {
            "Dockerfile": f"FROM python:3.10\nRUN pip install torch==2.4.0\nRUN pip install {W24}\nRUN {later}\n"
        }
    )
    (f,) = [f for f in findings() if f["code"] == "FAL005"]
    assert f["message"].startswith(message), f["message"]


@pytest.mark.parametrize(
    "later",
    [
        "pip install vllm==0.5.4",  # pins the torch already there: kept
        "pip install --no-deps vllm==0.6.5",  # no requirements installed
        "pip install torch",  # installed and admitted: kept
    ],
)
def test_fal005_quiet_when_nothing_moves_torch(project: Any, later: str) -> None:
    project(
        {
            "Dockerfile": f"FROM python:3.10\nRUN pip install torch==2.4.0\nRUN pip install {W24}\nRUN {later}\n"
        }
    )
    assert codes(findings(), "FAL005") == []


def test_fal005_a_package_pin_in_one_resolve(project: Any) -> None:
    project({"requirements.txt": f"vllm==0.6.5\n{W24}\n"})
    (f,) = [f for f in findings() if f["code"] == "FAL005"]
    assert "but its environment installs torch 2.5" in f["message"]


def test_fal005_a_range_that_excludes_the_wheels_torch(project: Any) -> None:
    project({"requirements.txt": f"vllm>=0.6.4,<0.7\n{W24}\n"})  # every one of these pins torch 2.5.1
    # a torch 2.4 build on torch 2.5.1: a build for an older torch, which may load (a warning)
    assert codes(findings(), "FAL005") == [("FAL005", 2, "warning")]
    project({"requirements.txt": f"torch==2.3.1\n{W24}\n"})  # a build for a newer torch: it cannot load
    assert codes(findings(), "FAL005") == [("FAL005", 2, "error")]
    project({"requirements.txt": f"vllm>=0.6,<0.7\n{W24}\n"})  # 0.6.0-0.6.3.post1 pin 2.4.0: it may fit
    assert codes(findings(), "FAL005") == []


def test_fal005_a_build_that_torch_moves_away_from(project: Any) -> None:
    project(
        {
            "Dockerfile": "FROM python:3.10\nRUN pip install torch==2.4.0\n"
            "RUN pip install flash-attn==2.6.3 --no-build-isolation\nRUN pip install vllm==0.6.5\n"
        }
    )
    (f,) = [f for f in findings() if f["code"] == "FAL005"]
    assert (f["line"], f["severity"]) == (3, "warning")  # built for 2.4, then 2.5.1: older, may load
    assert f["message"].startswith(
        "flash-attn is built for torch 2.4; vllm==0.6.5 (line 4) then installs torch 2.5.1"
    )
    # built for torch 2.5, then vllm 0.6.3 (torch 2.4.0): a build for a newer torch cannot load
    project(
        {
            "Dockerfile": "FROM python:3.10\nRUN pip install torch==2.5.0\n"
            "RUN pip install flash-attn==2.6.3 --no-build-isolation\nRUN pip install vllm==0.6.3\n"
        }
    )
    assert [(f["line"], f["severity"]) for f in findings() if f["code"] == "FAL005"] == [(3, "error")]
    # the same torch minor afterwards: the binary still fits
    project(
        {
            "Dockerfile": "FROM python:3.10\nRUN pip install torch==2.5.0\n"
            "RUN pip install flash-attn==2.6.3 --no-build-isolation\nRUN pip install vllm==0.6.5\n"
        }
    )
    assert codes(findings(), "FAL005") == []


def test_fal005_a_build_on_an_image_whose_torch_is_not_known(project: Any) -> None:
    project(
        {
            "Dockerfile": "FROM nvcr.io/nvidia/pytorch:25.02-py3\nRUN pip install flash-attn==2.8.3\n"
            "RUN pip install vllm==0.10.2\n"
        }
    )
    assert codes(findings(), "FAL005") == [("FAL005", 2, "warning")]


@pytest.mark.parametrize(
    ("files", "line", "abi"),
    [
        # issue 22, item 5: pytorch/pytorch images ship the release's official build: old ABI before 2.7
        (
            {
                "Dockerfile": "FROM pytorch/pytorch:2.2.0-cuda12.1-cudnn8-devel\nRUN pip install "
                + WHEEL.format(t="2.2", abi="TRUE")
                + "\n"
            },
            2,
            "old",
        ),
        # ... installed from download.pytorch.org/whl/cu126 there: torch 2.6's CUDA 12.6 builds use the new ABI
        (
            {
                "Dockerfile": "FROM pytorch/pytorch:2.6.0-cuda12.6-cudnn9-devel\nRUN pip install "
                + WHEEL.format(t="2.6", abi="FALSE")
                + "\n"
            },
            2,
            "new",
        ),
        # torch 2.1.0 from PyPI: the old ABI
        ({"requirements.txt": "torch==2.1.0\n" + WHEEL.format(t="2.1", abi="TRUE") + "\n"}, 2, "old"),
        # torch 2.7 and later: the new ABI (a TRUE build of a release carries it whatever the torch; a
        # FALSE release build for torch 2.7 is new-ABI too: test_fal005_a_false_release_wheel_for_torch_27)
        ({"requirements.txt": "torch==2.6.0\n" + WHEEL.format(t="2.6", abi="TRUE") + "\n"}, 2, "old"),
        # torch 2.6's CUDA 12.6 builds on download.pytorch.org use the new ABI
        (
            {
                "setup.sh": "pip install torch==2.6.0 --index-url https://download.pytorch.org/whl/cu126\n"
                "pip install " + WHEEL.format(t="2.6", abi="FALSE") + "\n"
            },
            2,
            "new",
        ),
        # vllm brings torch 2.5.1 from PyPI: the old ABI
        ({"requirements.txt": "vllm==0.6.5\n" + WHEEL.format(t="2.5", abi="TRUE") + "\n"}, 2, "old"),
    ],
)
def test_fal005_the_abi_of_the_torch_it_ends_with(
    project: Any, files: dict[str, str], line: int, abi: str
) -> None:
    project(files)
    (f,) = [f for f in findings() if f["code"] == "FAL005"]
    assert f["line"] == line and f"uses the {abi} C++ ABI" in f["message"], f["message"]


def test_fal005_a_false_release_wheel_for_torch_27(project: Any) -> None:
    # issue 35, class 10: the release workflow names the wheel by its matrix value and setup.py only forces
    # the ABI on, so a FALSE build against torch 2.7 (new ABI) is a new-ABI build: it fits torch 2.7.1
    project({"requirements.txt": "torch==2.7.1\n" + WHEEL.format(t="2.7", abi="FALSE") + "\n"})
    assert [f for f in findings() if f["code"] == "FAL005"] == []


def test_fal005_ngc_torch_replaced_by_pip_is_no_longer_the_images(project: Any) -> None:
    # the NGC torch (new ABI) is uninstalled and torch 2.6.0 comes from PyPI (old ABI): a FALSE wheel fits
    project(
        {
            "Dockerfile": "FROM nvcr.io/nvidia/pytorch:24.08-py3\nRUN pip uninstall -y torch\n"
            'RUN pip install "vllm==0.8.3" "torch==2.6.0"\nRUN pip install '
            + WHEEL.format(t="2.6", abi="FALSE")
            + "\n"
        }
    )
    assert codes(findings(), "FAL005") == []


# --- FAL016 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "at"),
    [
        ({"requirements.txt": "torch==2.4.0\nvllm==0.6.5\nflash-attn==2.6.3\n"}, ("requirements.txt", 2)),
        (
            {
                "requirements.txt": "torch==2.4.0\n-r more.txt\nflash-attn==2.6.3\n",
                "more.txt": "torch==2.5.1\n",
            },
            ("more.txt", 1),
        ),
        ({"setup.sh": "pip install torch==2.4.0 vllm==0.6.5 flash-attn==2.6.3\n"}, ("setup.sh", 1)),
        # two packages that pin different torch releases
        ({"requirements.txt": "vllm==0.6.5\nxformers==0.0.27\nflash-attn==2.6.3\n"}, ("requirements.txt", 2)),
    ],
)
def test_fal016_a_torch_no_release_satisfies(
    project: Any, files: dict[str, str], at: tuple[str, int]
) -> None:
    project(files)
    found = [f for f in findings() if f["code"] == "FAL016"]
    assert [(f["path"], f["line"], f["severity"]) for f in found] == [(*at, "error")]
    assert found[0]["related_locations"]


@pytest.mark.parametrize(
    "files",
    [
        {"requirements.txt": "torch==2.4.0\nvllm>=0.6,<0.7\nflash-attn==2.6.3\n"},  # 0.6.0-0.6.3.post1 fit
        {"requirements.txt": "torch==2.4.0\nvllm==0.6.5\n"},  # no flash-attn: not this install's concern
        # a later command replaces rather than combines
        {"setup.sh": "pip install torch==2.4.0\npip install vllm==0.6.5\npip install flash-attn==2.6.3\n"},
    ],
)
def test_fal016_quiet(project: Any, files: dict[str, str]) -> None:
    project(files)
    assert codes(findings(), "FAL016") == []


# --- FAL011, FAL012 ---------------------------------------------------------------------------------


def test_fal011_reads_the_torch_a_package_brings(project: Any) -> None:
    # vllm 0.6.5 brings torch 2.5.1; flash-attn 2.5.8's release workflow built no torch 2.5 wheel
    project(
        {
            "Dockerfile": "FROM python:3.10\nRUN pip install vllm==0.6.5\nRUN pip install flash-attn==2.5.8 --no-build-isolation\n"
        }
    )
    (f,) = [f for f in findings() if f["code"] == "FAL011"]
    assert "no prebuilt wheel for torch 2.5" in f["message"]
    assert any("vllm==0.6.5" in n for n in f["notes"])


def test_fal012_counts_torch_a_package_brought(project: Any) -> None:
    base = "FROM python:3.10\n"
    build = "RUN pip install flash-attn==2.6.3 --no-build-isolation\n"
    project({"Dockerfile": base + "RUN pip install vllm==0.6.5\n" + build})
    assert codes(findings(), "FAL012") == []
    project({"Dockerfile": base + "RUN pip install numpy\n" + build})
    assert codes(findings(), "FAL012") == [("FAL012", 3, "error")]


def test_fixes_pick_a_release_with_a_wheel_for_the_torch_a_package_brings(project: Any) -> None:
    # vllm 0.6.5 brings torch 2.5.1 (CUDA 12.4 on PyPI). A raised floor leaves pip the newest release
    # (2.8.3.post2, no tag: its wheels unknown), so the floor is the policy's; an exact pin moves to the
    # first flash-attn with paged KV whose release workflow built a torch 2.5 wheel, 2.7.0.post2 (2.6.3's
    # matrix ends at torch 2.4)
    project(
        {
            "Dockerfile": "FROM python:3.10\nRUN pip install vllm==0.6.5\n"
            'RUN pip install "flash-attn>=2.0" --no-build-isolation\n'
        }
    )
    (f,) = [f for f in findings() if f["code"] == "FAL002"]
    assert f["message"].endswith("require flash-attn>=2.5.0")
    project(
        {
            "Dockerfile": "FROM python:3.10\nRUN pip install vllm==0.6.5\n"
            'RUN pip install "flash-attn==2.4.2" --no-build-isolation\n'
        }
    )
    (f,) = [f for f in findings() if f["code"] == "FAL001"]
    assert f["message"].endswith("require flash-attn>=2.7.0.post2")


def test_an_ngc_image_whose_release_notes_the_data_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # NVIDIA's release notes for 25.12: torch 2.10.0a0+b4e4ee81d3, CUDA 13.1.0, the C++11 ABI
    tools = final_of(
        {"Dockerfile": "FROM nvcr.io/nvidia/pytorch:25.12-py3\nRUN pip install einops\n"},
        "Dockerfile [stage:0]",
        tmp_path,
        monkeypatch,
    )
    assert tools.torch is not None and tools.torch.value == "2.10"
    assert tools.cuda is not None and tools.cuda.value == "13.1"
    assert tools.cxx11_abi is True


def test_fal005_an_unpinned_vllm_brings_its_newest_torch(project: Any) -> None:
    # vllm's newest release in the knowledge base pins torch 2.14.0, and a later one none older: on an
    # NGC image, whose packages fa-lint does not know, vllm is still a fresh install
    project(
        {
            "Dockerfile": "FROM nvcr.io/nvidia/pytorch:24.05-py3\nRUN pip install torch==2.4.0\nRUN pip install "
            + W24
            + "\nRUN pip install vllm\n"
        }
    )
    (f,) = [f for f in findings() if f["code"] == "FAL005"]
    assert f["message"].startswith("vllm (line 4) installs torch 2.14 or newer after this torch 2.4 wheel")
    assert any("its newest release, as of the knowledge base" in n for n in f["notes"])
