"""FAL011 (no prebuilt wheel), FAL012 (build isolation) and the torch-aware, environment-consistent fixes.

Every expectation is worked out from the release facts: each tag's publish.yml matrix and setup.py
wheel name (quoted where it decides), and pip's, uv's and Poetry's documented build behaviour.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fa_lint.rules._text import HEADLINE
from tests.conftest import SHARED, run


def found(code: str, *args: str) -> list[dict[str, Any]]:
    return [f for f in run("--format", "json", *args).json["findings"] if f["code"] == code]


# --- FAL011 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "message", "nearest"),
    [
        # v2.5.0 builds torch 1.12.1-2.2.0.dev; the first released-torch 2.3 build is v2.5.8 ('2.3.0')
        (
            {"requirements.txt": "torch==2.3.1\nflash-attn==2.5.0\n"},
            "no prebuilt wheel for torch 2.3",
            "2.5.8",
        ),
        # v2.7.4.post1 builds cuda-version ['12.4.1'] only and names CUDA 11.x "cu11"; torch 2.6 with
        # CUDA 11.8 is built by 2.7.1.post4-2.7.3 ('2.6.0.dev20241001', cuda 11.8.0): the nearest is 2.7.3
        (
            {
                "requirements.txt": "--extra-index-url https://download.pytorch.org/whl/cu118\n"
                "torch==2.6.0\nflash-attn==2.7.4.post1\n"
            },
            "no prebuilt wheel for torch 2.6 with CUDA 11.8",
            "2.7.3",
        ),
        # v2.8.3 excludes torch 2.4.0 with python 3.13, and so do the 2.7 releases: no release has it
        (
            {
                "Dockerfile": "FROM python:3.13\nRUN pip install torch==2.4.0\nRUN pip install flash-attn==2.8.3\n"
            },
            "no prebuilt wheel for torch 2.4 on CPython 3.13",
            None,
        ),
        # a range whose releases all build torch >= 2.4; the nearest with released-torch 2.3 wheels
        # (v2.7.4.post1: '2.3.1') sits just below it
        (
            {"requirements.txt": "torch==2.3.1\nflash-attn>=2.8,<2.8.3.post2\n"},
            "no prebuilt wheel for torch 2.3",
            "2.7.4.post1",
        ),
        # the CPU build of torch: setup.py names no CUDA wheel
        (
            {
                "requirements.txt": "--index-url https://download.pytorch.org/whl/cpu\ntorch==2.4.0\nflash-attn==2.6.3\n"
            },
            "no prebuilt wheel for a cpu torch",
            None,
        ),
    ],
)
def test_no_prebuilt_wheel(project: Any, files: dict[str, str], message: str, nearest: str | None) -> None:
    project(files)
    (f,) = found("FAL011")
    assert f["severity"] == "warning"
    assert message in f["message"]
    assert len(f["message"]) <= HEADLINE
    if nearest:
        assert f"use flash-attn=={nearest}" in f["message"]
    else:
        assert "no release with paged KV has one" in f["message"]


@pytest.mark.parametrize(
    "files",
    [
        {"requirements.txt": "torch==2.3.1\nflash-attn==2.5.8\n"},  # v2.5.8 builds '2.3.0'
        # v2.5.3 builds '2.3.0.dev20240126', named torch2.3: setup.py fetches it, nothing compiles
        {"requirements.txt": "torch==2.3.1\nflash-attn==2.5.3\n"},
        {"requirements.txt": "flash-attn==2.5.0\n"},  # no torch: nothing to say
        # admits 2.8.3.post2, which has no tag: its wheels are unknown, never guessed
        {"requirements.txt": "torch==2.3.1\nflash-attn>=2.5.0\n"},
        # admits 2.5.1.post1-2.5.7 too, which have a torch 2.3 build
        {"requirements.txt": "torch==2.3.1\nflash-attn>=2.5.0,<2.5.8\n"},
        # a wheel URL builds nothing (FAL005 judges what it was built for)
        {
            "requirements.txt": "torch==2.3.1\nhttps://github.com/Dao-AILab/flash-attention/releases/download/"
            "v2.5.0/flash_attn-2.5.0+cu122torch2.2cxx11abiFALSE-cp311-cp311-linux_x86_64.whl\n"
        },
        # conda-forge ships builds
        {"environment.yml": "dependencies:\n  - pytorch=2.3.1\n  - flash-attn=2.5.0\n"},
        # no paged KV is FAL001's
        {"requirements.txt": "torch==2.3.1\nflash-attn==2.4.2\n"},
    ],
)
def test_no_fal011(project: Any, files: dict[str, str]) -> None:
    project(files)
    assert found("FAL011") == []


@pytest.mark.parametrize(
    ("files", "torch"),
    [
        # torch 2.12 came out 2026-05-13 (PyPI's upload of torch-2.12.0), after v2.8.3 was tagged on
        # 2025-08-14; build.yml (workflow_dispatch, since 2025-08-29) can attach a cu12 wheel, which is
        # the name v2.8.3's setup.py asks for: unknown, so an info
        ({"requirements.txt": "torch==2.12.0\nflash-attn==2.8.3\n"}, "2.12"),
        # torch 2.11 came out 2026-03-23, after the tag and after v2.8.3's asset listing (2026-03-12)
        (
            {
                "Dockerfile": "FROM python:3.11\nRUN pip install torch==2.11.0\nRUN pip install flash-attn==2.8.3\n"
            },
            "2.11",
        ),
        # v2.7.4.post1 was tagged 2025-01-29; torch 2.8 came out 2025-08-06
        ({"requirements.txt": "torch==2.8.0\nflash-attn==2.7.4.post1\n"}, "2.8"),
    ],
)
def test_unknown_wheel_is_an_info(project: Any, files: dict[str, str], torch: str) -> None:
    project(files)
    (f,) = found("FAL011")
    assert f["severity"] == "info"
    assert "unknown" in f["message"] and f"torch {torch}" in f["message"]
    assert "pip compiles it" not in f["message"]
    assert len(f["message"]) <= HEADLINE
    assert any("after v" in n and "attached to the release later" in n for n in f["notes"])


@pytest.mark.parametrize(
    "files",
    [
        # v2.8.3's cu12torch2.9cxx11abiTRUE-cp312 wheel was attached after the tag (seen in an install log
        # whose sha256 matches the release's digest): today's mainstream stack gets a wheel
        {"requirements.txt": "torch==2.9.1\nflash-attn==2.8.3\n"},
        {"Dockerfile": "FROM python:3.12\nRUN pip install torch==2.9.1\nRUN pip install flash-attn==2.8.3\n"},
    ],
)
def test_a_wheel_attached_after_the_tag_counts(project: Any, files: dict[str, str]) -> None:
    project(files)
    assert found("FAL011") == []


def test_an_old_release_stays_a_warning_for_a_later_torch(project: Any) -> None:
    # torch 2.6 came out 2025-01-29, after v2.5.8's tag (2024-04-26), but a wheel attached later is named
    # cu12torch2.6 and v2.5.8's setup.py asks for cu122torch2.6: it can never fetch one
    project({"requirements.txt": "torch==2.6.0\nflash-attn==2.5.8\n"})
    (f,) = found("FAL011")
    assert f["severity"] == "warning"
    assert "no prebuilt wheel for torch 2.6" in f["message"]


def test_a_warning_names_a_release_that_may_have_a_wheel(project: Any) -> None:
    # v2.8.3.post1 was tagged 2026-06-10, after torch 2.10 (2026-01-21), and built torch 2.4-2.8 only: no.
    # v2.8.3's complete asset listing (2026-03-12) has no torch 2.10 wheel either; v2.8.1's has one
    # (cp312): the nearest release with one
    project({"requirements.txt": "torch==2.10.0\nflash-attn==2.8.3.post1\n"})
    (f,) = found("FAL011")
    assert f["severity"] == "warning"
    assert f["message"].endswith("pip compiles it; use flash-attn==2.8.1")
    # torch 2.11 (2026-03-23) came after every listing and tag but 2.8.3.post1's: unknown for 2.8.3
    project({"requirements.txt": "torch==2.11.0\nflash-attn==2.8.3.post1\n"})
    (f,) = found("FAL011")
    assert f["message"].endswith("pip compiles it; 2.8.3 may have one (unknown)")
    assert any("after v2.8.3 was tagged (2025-08-14)" in n for n in f["notes"])


def test_fal011_on_a_lock_entry(project: Any) -> None:
    project(
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["torch==2.3.1", "flash-attn>=2.5"]\n'
            '[tool.uv]\nno-build-isolation-package = ["flash-attn"]\n',
            "uv.lock": 'version = 1\n\n[[package]]\nname = "flash-attn"\nversion = "2.5.0"\n'
            'source = { registry = "https://pypi.org/simple" }\n',
        }
    )
    (f,) = found("FAL011")
    assert f["path"] == "uv.lock"


# --- FAL012 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "severity", "line"),
    [
        # python:3.11 images carry setuptools and wheel: an older pip falls back to setup.py bdist_wheel
        (
            {
                "Dockerfile": "FROM python:3.11\nRUN pip install torch==2.4.0\nRUN pip install flash-attn==2.6.3\n"
            },
            "warning",
            3,
        ),
        # python:3.12+ images have no setuptools: pip 22.1+ builds with PEP 517, isolated
        (
            {
                "Dockerfile": "FROM python:3.12\nRUN pip install torch==2.4.0\nRUN pip install flash-attn==2.6.3\n"
            },
            "error",
            3,
        ),
        # the newest pip (>= 25.3) always isolates
        (
            {
                "Dockerfile": "FROM python:3.11\nRUN pip install -U pip\nRUN pip install torch flash-attn==2.6.3\n"
            },
            "error",
            3,
        ),
        ({"setup.sh": "pip install 'pip>=25.3'\npip install flash-attn==2.6.3\n"}, "error", 2),
        ({"setup.sh": "pip install 'pip<25'\npip install flash-attn==2.6.3\n"}, "warning", 2),
        ({"setup.sh": "pip install --use-pep517 flash-attn==2.6.3\n"}, "error", 1),
        # PIP_NO_BUILD_ISOLATION=1 is build_isolation=True: isolation stays on
        (
            {"Dockerfile": "FROM python:3.12\nENV PIP_NO_BUILD_ISOLATION=1\nRUN pip install flash-attn\n"},
            "error",
            3,
        ),
        # uv and Poetry always isolate
        ({"setup.sh": "uv pip install torch\nuv pip install flash-attn==2.6.3\n"}, "error", 2),
        ({"setup.sh": "poetry add flash-attn@^2.6\n"}, "error", 1),
        # through -r: reported at the command; torch in the same file is not there when pip reads
        # flash-attn's setup.py, isolated or not, and python:3.11 has none: certain
        (
            {
                "Dockerfile": "FROM python:3.11\nCOPY requirements.txt ./\nRUN pip install -r requirements.txt\n",
                "requirements.txt": "torch==2.4.0\nflash-attn==2.6.3\n",
            },
            "error",
            3,
        ),
        # ...with torch installed before, only the isolated build misses it: the pip version decides
        (
            {
                "Dockerfile": "FROM python:3.11\nRUN pip install torch==2.4.0\nCOPY requirements.txt ./\n"
                "RUN pip install -r requirements.txt\n",
                "requirements.txt": "flash-attn==2.6.3\n",
            },
            "warning",
            4,
        ),
        # ...a script's machine may have torch
        ({"setup.sh": "pip install torch flash-attn==2.6.3\n"}, "warning", 1),
        # --no-build-isolation with no torch before it: certain on a torch-less image...
        (
            {"Dockerfile": "FROM python:3.11\nRUN pip install --no-build-isolation flash-attn==2.6.3\n"},
            "error",
            2,
        ),
        # ...torch in the same command does not count (pip reads setup.py before installing anything)
        (
            {
                "Dockerfile": "FROM nvidia/cuda:12.1.1-devel-ubuntu22.04\nRUN pip install --no-build-isolation torch flash-attn\n"
            },
            "error",
            2,
        ),
        # a uv project without build settings for flash-attn; a uv.lock makes it one too
        (
            {
                "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["torch", "flash-attn>=2.6"]\n[tool.uv]\n'
            },
            "error",
            4,
        ),
        (
            {
                "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn>=2.6"]\n',
                "uv.lock": 'version = 1\n\n[[package]]\nname = "flash-attn"\nversion = "2.6.3"\n'
                'source = { registry = "https://pypi.org/simple" }\n',
            },
            "error",
            4,
        ),
        # Poetry has no switch
        (
            {"pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.10"\nflash-attn = "^2.6"\n'},
            "error",
            3,
        ),
    ],
)
def test_build_isolation(project: Any, files: dict[str, str], severity: str, line: int) -> None:
    project(files)
    (f,) = found("FAL012")
    assert (f["severity"], f["line"]) == (severity, line)
    assert len(f["message"]) <= HEADLINE


@pytest.mark.parametrize(
    "files",
    [
        {
            "Dockerfile": "FROM python:3.12\nRUN pip install torch==2.4.0\nRUN pip install --no-build-isolation flash-attn==2.6.3\n"
        },
        {
            "Dockerfile": "FROM pytorch/pytorch:2.4.0-cuda12.1-cudnn9-devel\nRUN pip install --no-build-isolation flash-attn\n"
        },
        {
            "Dockerfile": "FROM nvcr.io/nvidia/pytorch:24.05-py3\nRUN pip install --no-build-isolation flash-attn\n"
        },
        # pip reads PIP_NO_BUILD_ISOLATION as build_isolation's value: 0 turns isolation off
        {"setup.sh": "pip install torch\nPIP_NO_BUILD_ISOLATION=0 pip install flash-attn==2.6.3\n"},
        {
            "Dockerfile": "FROM python:3.12\nENV PIP_NO_BUILD_ISOLATION=false\nRUN pip install torch\nRUN pip install flash-attn\n"
        },
        {
            "setup.sh": "uv pip install torch\nuv pip install --no-build-isolation-package flash-attn flash-attn\n"
        },
        {"setup.sh": "pip install torch\npip install --no-use-pep517 flash-attn==2.6.3\n"},
        # the project installed before it most likely brings torch (LLaVA's README does exactly this)
        {"setup.sh": "pip install -e .\npip install flash-attn==2.5.9.post1 --no-build-isolation\n"},
        {
            "Dockerfile": "FROM python:3.11\nRUN pip install -r $REQS\nRUN pip install --no-build-isolation flash-attn\n"
        },
        # a wheel builds nothing
        {
            "setup.sh": "pip install https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
            "flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl\n"
        },
        {"setup.sh": "conda install -c conda-forge flash-attn=2.6.3\n"},
        # an install already satisfied builds nothing
        {
            "setup.sh": "pip install torch\npip install --no-build-isolation flash-attn==2.6.3\npip install flash-attn\n"
        },
        # uv settings that let the build see torch
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["torch", "flash-attn>=2.6"]\n[tool.uv]\nno-build-isolation-package = ["flash-attn"]\n'
        },
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["torch", "flash-attn>=2.6"]\n'
            '[tool.uv.extra-build-dependencies]\nflash-attn = [{ requirement = "torch", match-runtime = true }]\n'
        },
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn"]\n[tool.uv.sources]\n'
            'flash-attn = { url = "https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/'
            'flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl" }\n'
        },
        {
            "pyproject.toml": '[tool.poetry.dependencies]\nflash-attn = { url = "https://github.com/Dao-AILab/'
            'flash-attention/releases/download/v2.6.3/flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl" }\n'
        },
        # a requirements file alone: which command installs it is not said (a plain pyproject is
        # installed by `pip install .`: issue 42, tests/test_installers.py)
        {"requirements.txt": "flash-attn>=2.6\n"},
    ],
)
def test_no_fal012(project: Any, files: dict[str, str]) -> None:
    project(files)
    assert found("FAL012") == []


REPO = "https://github.com/Dao-AILab/flash-attention.git"


@pytest.mark.parametrize(
    ("files", "found_at"),
    [
        # `env VAR=0 pip ...`: the prefix command's assignment is the install's environment
        (
            {
                "Dockerfile": "FROM python:3.11\nRUN env PIP_NO_BUILD_ISOLATION=0 pip install flash-attn==2.6.3\n"
            },
            [(2, "error")],
        ),
        # an exported variable holds for every later command; one a branch may leave unset turns nothing off
        # (pip reads PIP_NO_BUILD_ISOLATION=no as isolation off: the script's machine may well have torch)
        ({"setup.sh": "export PIP_NO_BUILD_ISOLATION=no\npip install flash-attn==2.6.3\n"}, []),
        (
            {
                "setup.sh": "export PIP_NO_BUILD_ISOLATION=no\npip install torch\npip install flash-attn==2.6.3\n"
            },
            [],
        ),
        (
            {
                "setup.sh": 'pip install torch\n[ -n "$X" ] && export PIP_NO_BUILD_ISOLATION=0\npip install flash-attn\n'
            },
            [(3, "warning")],  # may be isolated: pip-version dependent
        ),
        # an uninstall is a command fa-lint read: not an install that may have brought torch
        (
            {
                "Dockerfile": "FROM python:3.11\nRUN pip uninstall -y flash-attn\n"
                "RUN pip install --no-build-isolation flash-attn==2.6.3\n"
            },
            [(3, "error")],
        ),
        # ...and torch uninstalled is torch gone, even from an image that had it
        (
            {
                "Dockerfile": "FROM pytorch/pytorch:2.4.0-cuda12.1-cudnn9-devel\nRUN pip uninstall -y torch\n"
                "RUN pip install --no-build-isolation flash-attn==2.6.3\n"
            },
            [(3, "warning")],
        ),
        # a source build: pip builds the clone as it builds an sdist (reported at the tag it builds)
        (
            {"build.sh": f"git clone -b v2.6.3 {REPO}\ncd flash-attention && pip install .\n"},
            [(1, "warning")],
        ),
        (
            {
                "build.sh": f"pip install torch\ngit clone -b v2.6.3 {REPO}\ncd flash-attention\npip install --no-build-isolation .\n"
            },
            [],
        ),
        # setup.py runs in the interpreter that runs it: it needs torch installed before
        (
            {
                "Dockerfile": f"FROM python:3.11\nRUN git clone -b v2.6.3 {REPO} /fa\nWORKDIR /fa\nRUN python setup.py install\n"
            },
            [(2, "error")],
        ),
        (
            {
                "Dockerfile": f"FROM python:3.11\nRUN pip install torch==2.4.0\nRUN git clone -b v2.6.3 {REPO} /fa\nWORKDIR /fa\nRUN python setup.py install\n"
            },
            [],
        ),
        # python -m build isolates unless -n; the wheel it leaves in dist/ is installed later
        (
            {
                "build.sh": f"pip install torch\ngit clone -b v2.6.3 {REPO}\ncd flash-attention\npython -m build\npip install dist/*.whl\n"
            },
            [(2, "error")],
        ),
        (
            {
                "build.sh": f"pip install torch\ngit clone -b v2.6.3 {REPO}\ncd flash-attention\npython -m build -n\npip install dist/*.whl\n"
            },
            [],
        ),
        # a two-step install is built by its `pip wheel` step, as that step says
        (
            {
                "setup.sh": "pip wheel --no-build-isolation flash-attn==2.6.3 -w /w\npip install torch\npip install /w/*.whl\n"
            },
            [(1, "warning")],  # torch comes after the build
        ),
        (
            {
                "setup.sh": "pip install torch\npip wheel --no-build-isolation flash-attn==2.6.3 -w /w\npip install /w/*.whl\n"
            },
            [],
        ),
    ],
)
def test_build_isolation_of_scripts_as_programs(
    project: Any, files: dict[str, str], found_at: list[tuple[int, str]]
) -> None:
    project(files)
    assert [(f["line"], f["severity"]) for f in found("FAL012")] == found_at


# --- fixes that fit the environment ----------------------------------------------------------------


def fixed(files: dict[str, str], project: Any, name: str = "requirements.txt") -> str:
    root: Path = project(files)
    run("--fix", "--unsafe-fixes", "--ignore", "FAL012", name)
    return (root / name).read_text()


def test_unsafe_fix_picks_a_release_the_constraints_admit(project: Any) -> None:
    # reproducer 18: constraints.txt says !=2.5.0, so the first paged-KV release it admits is 2.5.1.post1
    reproducer = SHARED / "reliability/18-unsafe-fix-unresolvable"
    files = {
        "requirements.txt": "-c constraints.txt\nflash-attn==2.4.2\n",
        "constraints.txt": "flash-attn!=2.5.0\n",
    }
    if reproducer.exists():
        files = {n: (reproducer / n).read_text() for n in files}
    assert fixed(files, project) == "-c constraints.txt\nflash-attn==2.5.1.post1\n"
    assert found("FAL004") == []


def test_no_unsafe_fix_when_the_environment_admits_no_good_release(project: Any) -> None:
    files = {
        "requirements.txt": "-c constraints.txt\nflash-attn==2.4.2\n",
        "constraints.txt": "flash-attn<2.5\n",
    }
    assert fixed(files, project) == files["requirements.txt"]


def test_fix_and_message_pick_a_release_with_a_wheel_for_torch(project: Any) -> None:
    # torch 2.3: 2.5.0 has no torch2.3 wheel, 2.5.1.post1-2.5.7 one built on a nightly, 2.5.8 the first
    # built against the released torch 2.3.0
    files = {"requirements.txt": "torch==2.3.1\nflash-attn==2.4.2\n"}
    project(files)
    (f,) = found("FAL001")
    assert "require flash-attn>=2.5.8" in f["message"]
    assert "2.5.8" in f["fix"]["title"]
    assert fixed(files, project) == "torch==2.3.1\nflash-attn==2.5.8\n"


def test_safe_floor_follows_torch_and_falls_back_to_the_policy(project: Any) -> None:
    # torch 2.2: a raised floor leaves pip the newest release, 2.8.3.post2 (no tag: whether it has a wheel
    # is unknown), so the floor is the policy's: a floor of 2.5.2 (the first with a torch 2.2 wheel) would
    # not change what installs
    assert fixed({"requirements.txt": "torch==2.2.1\nflash-attn>=2.0\n"}, project) == (
        "torch==2.2.1\nflash-attn>=2.5.0\n"
    )
    # torch 2.10: the newest release '<=2.8.3' admits is 2.8.3, whose complete listing has no torch 2.10
    # wheel: the range stops at 2.8.1, the newest with one
    assert fixed({"requirements.txt": "torch==2.10.0\nflash-attn>=2.0,<=2.8.3\n"}, project) == (
        "torch==2.10.0\nflash-attn>=2.5.0,<=2.8.1\n"
    )
    assert fixed({"requirements.txt": "torch==2.2.1\nflash-attn>=2.0,<2.5.2\n"}, project) == (
        "torch==2.2.1\nflash-attn>=2.5.0,<2.5.2\n"
    )


def test_a_raised_floor_stays_inside_the_requirements_own_bounds(project: Any) -> None:
    # torch 2.4: pip takes the newest release '<2.6' admits, 2.5.9.post1, which has a torch2.4 wheel
    # (built on a 2.4.0 nightly) whatever the floor: the policy's floor. Headline and fix name the same.
    files = {"requirements.txt": "torch==2.4.0\nflash-attn<2.6\n"}
    project(files)
    (f,) = found("FAL002")
    assert f["message"].endswith("require flash-attn>=2.5.0")
    assert fixed(files, project) == "torch==2.4.0\nflash-attn>=2.5.0,<2.6\n"
    # with constraints that leave no good release at all, the policy's floor stands (FAL004 says why)
    files = {"requirements.txt": "torch==2.4.0\nflash-attn<2.6\n-c c.txt\n", "c.txt": "flash-attn!=2.5.*\n"}
    project(files)
    (f,) = [f for f in found("FAL002") if f["path"] == "requirements.txt"]
    assert f["message"].endswith("require flash-attn>=2.5.0")


# --- excerpts from public projects (tests/data/install/README.md says where each comes from) ------------

DATA = Path(__file__).parent / "data" / "install"


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("koble-dockerfile", [("Dockerfile", 3, "FAL002", "warning")]),
        (
            "skinspector",
            [("dependencies.sh", 1, "FAL002", "warning"), ("dependencies.sh", 1, "FAL012", "warning")],
        ),
    ],
)
def test_real_world_cases(
    case: str, expected: list[tuple[str, int, str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(DATA / case)
    doc = run("--format", "json", "--isolated", ".").json
    assert sorted((f["path"], f["line"], f["code"], f["severity"]) for f in doc["findings"]) == expected
