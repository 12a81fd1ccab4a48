"""Issue 35, part B: every requirement judged in the environment it really lands in (markers, locks of
URL requirements, uv's sources, release facts) and findings a person can read. Fixtures are written
here; the real cases (fixtures of real shapes, with their sources named) are in
tests/data/realworld/precision/README.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fa_lint.syntax import markers
from tests.conftest import assert_cases_listed, lint, realworld_findings, run

CASES = Path(__file__).parent / "data" / "realworld" / "precision"

EXPECTED: dict[str, list[tuple[str, int, str]]] = {
    "ace-step-markers": [("FAL002", 6, "warning")],
    "open-instruct-uv-groups": [("FAL011", 24, "info")],
    "vision-agent-tools-poetry-url": [],
}


def test_every_case_is_listed() -> None:
    assert_cases_listed(CASES, EXPECTED)


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_realworld(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert realworld_findings(CASES / case, monkeypatch) == sorted(EXPECTED[case])


# --- 5. markers split an environment ---------------------------------------------------------------

WIN_WHEEL = (
    "flash-attn @ https://github.com/sdbds/flash-attention-for-windows/releases/download/2.8.2/"
    "flash_attn-2.8.2+cu128torch2.7.1cxx11abiFALSEfullbackward-cp311-cp311-win_amd64.whl"
    " ; sys_platform == 'win32' and python_version == '3.11'\n"
)


@pytest.mark.parametrize(
    ("a", "b", "together"),
    [
        ("sys_platform == 'win32'", "sys_platform != 'win32'", False),
        ("sys_platform == 'win32'", "sys_platform == 'win32' and python_version == '3.11'", True),
        ("python_version < '3.12'", "python_version >= '3.12'", False),
        ("python_version < '3.12'", "python_version >= '3.11'", True),
        ("sys_platform == 'linux' and platform_machine == 'x86_64'", "platform_machine == 'aarch64'", False),
        ("extra == 'gpu'", "extra != 'gpu'", False),
        ("extra == 'gpu'", "sys_platform == 'linux'", True),
        (None, "sys_platform == 'darwin'", True),
        ("not a marker ==", "sys_platform == 'darwin'", True),  # unreadable: holds everywhere
    ],
)
def test_markers_hold_together(a: str | None, b: str, together: bool) -> None:
    assert markers.together(a, b) is together
    assert markers.together(b, a) is together


def test_a_marker_holds_on_its_systems() -> None:
    assert markers.holds_on("sys_platform == 'win32'", "windows")
    assert not markers.holds_on("sys_platform == 'win32'", "linux")
    assert markers.holds_on(None, "macos")


def test_a_windows_wheel_is_judged_against_the_windows_torch(project: Any) -> None:
    """torch 2.7.1 on Windows, 2.9 or newer elsewhere: the win32-marked torch 2.7 wheel fits."""
    found = lint(
        project,
        {
            "requirements.txt": "torch==2.7.1; sys_platform == 'win32'\n"
            "torch>=2.9.1; sys_platform != 'win32'\n" + WIN_WHEEL
        },
    )
    assert not [f for f in found if f["code"] == "FAL005"]


def test_a_windows_wheel_for_another_windows_torch_is_still_found(project: Any) -> None:
    found = lint(
        project,
        {
            "requirements.txt": "torch==2.6.0; sys_platform == 'win32'\n"
            "torch>=2.9.1; sys_platform != 'win32'\n" + WIN_WHEEL
        },
    )
    (f,) = [f for f in found if f["code"] == "FAL005"]
    assert (f["line"], f["severity"]) == (3, "error")
    assert "built for torch 2.7" in f["message"] and "only torch 2.6" in f["message"]
    assert "torch==2.6.0; sys_platform == 'win32'" in " ".join(f["notes"])


def test_torch_pins_under_complementary_python_markers_do_not_conflict(project: Any) -> None:
    """pip installs only the line whose marker holds on the Python it runs: never both."""
    found = lint(
        project,
        {
            "requirements.txt": "torch==2.3.1; python_version < '3.12'\n"
            "torch==2.5.1; python_version >= '3.12'\n"
            "flash-attn @ https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
            "flash_attn-2.6.3+cu123torch2.3cxx11abiFALSE-cp311-cp311-linux_x86_64.whl"
            " ; python_version == '3.11'\n"
        },
    )
    assert not [f for f in found if f["code"] in ("FAL005", "FAL016")]


def test_torch_pins_whose_markers_overlap_still_conflict(project: Any) -> None:
    """On Python 3.12 and later both lines install: no torch is 2.3.1 and 2.5.1."""
    found = lint(
        project,
        {"requirements.txt": "torch==2.3.1\ntorch==2.5.1; python_version >= '3.12'\nflash-attn>=2.6.3\n"},
    )
    assert [(f["code"], f["line"]) for f in found if f["code"] == "FAL016"] == [("FAL016", 2)]


# --- 6. locks of URL requirements ------------------------------------------------------------------

URL = (
    "https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.1/"
    "flash_attn-2.6.1+cu118torch2.3cxx11abiFALSE-cp310-cp310-linux_x86_64.whl"
)
OLD_URL = URL.replace("2.6.1", "2.5.8")
POETRY = f"""[tool.poetry]
name = "demo"
[tool.poetry.dependencies]
python = ">=3.10,<3.11"
flash-attn = {{ url = "{URL}" }}
"""


def _poetry_lock(version: str, url: str) -> str:
    return (
        f'[[package]]\nname = "flash-attn"\nversion = "{version}"\ndescription = ""\noptional = false\n'
        f'python-versions = ">=3.8"\nfiles = []\n\n[package.source]\ntype = "url"\nurl = "{url}"\n\n'
        '[metadata]\nlock-version = "2.0"\npython-versions = ">=3.10,<3.11"\ncontent-hash = "0"\n'
    )


def test_a_poetry_lock_of_the_url_the_manifest_asks_for_is_not_stale(project: Any) -> None:
    """Poetry writes the wheel's public version (2.6.1) and keeps its URL in [package.source]."""
    found = lint(project, {"pyproject.toml": POETRY, "poetry.lock": _poetry_lock("2.6.1", URL)})
    assert not [f for f in found if f["code"] == "FAL006"]


def test_a_percent_encoded_url_is_the_same_file(project: Any) -> None:
    lock = _poetry_lock("2.6.1", URL.replace("+", "%2B") + "#sha256=00")
    found = lint(project, {"pyproject.toml": POETRY, "poetry.lock": lock})
    assert not [f for f in found if f["code"] == "FAL006"]


def test_a_lock_of_another_url_is_stale(project: Any) -> None:
    found = lint(project, {"pyproject.toml": POETRY, "poetry.lock": _poetry_lock("2.5.8", OLD_URL)})
    assert [(f["code"], f["line"]) for f in found if f["code"] == "FAL006"] == [
        ("FAL006", 2)
    ]  # the entry's name line


def test_a_lock_of_the_old_url_with_the_same_version_is_stale(project: Any) -> None:
    """The same version from another file (another torch build) is not what the manifest asks for."""
    other = URL.replace("torch2.3", "torch2.2")
    found = lint(project, {"pyproject.toml": POETRY, "poetry.lock": _poetry_lock("2.6.1", other)})
    assert [f["code"] for f in found if f["code"] == "FAL006"] == ["FAL006"]


def test_a_uv_lock_of_the_url_is_not_stale(project: Any) -> None:
    """uv keeps the wheel's local label in the version: it compares by PEP 440 on both sides."""
    pyproject = f'[project]\nname = "demo"\nversion = "0"\ndependencies = ["flash-attn @ {URL}"]\n'
    lock = (
        'version = 1\nrequires-python = ">=3.10"\n\n[[package]]\nname = "flash-attn"\n'
        f'version = "2.6.1+cu118torch2.3cxx11abifalse"\nsource = {{ url = "{URL}" }}\n'
    )
    found = lint(project, {"pyproject.toml": pyproject, "uv.lock": lock})
    assert not [f for f in found if f["code"] == "FAL006"]


# --- 12. FAL016 names the two that conflict -------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "line", "this", "other"),
    [
        # vllm 0.6.5's metadata requires torch==2.5.1, torchvision 0.18.0's torch==2.3.0
        (["vllm==0.6.5", "torchvision==0.18.0"], 2, "torchvision==0.18.0", "vllm==0.6.5 (line 1)"),
        (["torchvision==0.18.0", "vllm==0.6.5"], 2, "vllm==0.6.5", "torchvision==0.18.0 (line 1)"),
    ],
)
def test_a_conflict_between_two_packages_names_both(
    project: Any, lines: list[str], line: int, this: str, other: str
) -> None:
    found = lint(project, {"requirements.txt": "\n".join([*lines, "flash-attn==2.7.2.post1", ""])})
    (f,) = [f for f in found if f["code"] == "FAL016"]
    assert f["line"] == line
    assert f["message"].startswith(f"{this} needs torch ")
    assert f", but {other} needs " in f["message"]
    assert [r["line"] for r in f["related_locations"]] == [1]


# --- 17. notes a person can read -------------------------------------------------------------------


def test_a_moved_torch_is_a_span_not_a_list_of_minors(project: Any) -> None:
    found = lint(
        project,
        {
            "Dockerfile": "FROM example/unknown:1\n"
            "RUN pip install --no-build-isolation flash-attn==2.7.4.post1\n"
            # -U: pip moves the torch in place (without it, a torch already >= 2.1 stays: class 2)
            'RUN pip install -U "torch>=2.1"\n'
        },
    )
    (f,) = [f for f in found if f["code"] == "FAL005"]
    assert "unless the torch in place before was already a torch 2.1 or newer build" in f["notes"]
    assert not any("2.1 or 2.2" in note for note in f["notes"])


def test_a_build_for_another_arch_names_what_it_compiles(project: Any) -> None:
    """FLASH_ATTN_CUDA_ARCHS=90: setup.py adds sm_90 when nvcc is 11.8 or newer (no nvcc is known in a
    script), never "sm_(none)"."""
    script = (
        "#SBATCH --gres=gpu:a100:8\n"
        "export FLASH_ATTN_CUDA_ARCHS=90\n"
        "FLASH_ATTENTION_FORCE_BUILD=TRUE pip install flash-attn==2.8.3 --no-build-isolation\n"
    )
    (f,) = [f for f in lint(project, {"build.sh": script}) if f["code"] == "FAL013"]
    assert f["message"].endswith("(it compiles sm_90 with nvcc 11.8 or newer)")


@pytest.mark.parametrize(
    ("disable", "gpu", "expected"),
    [
        ("", "a100", None),  # hopper/setup.py compiles sm_80 kernels too
        ("export FLASH_ATTENTION_DISABLE_SM80=TRUE\n", "a100", "it builds sm_90a (Hopper) kernels ("),
        ("export FLASH_ATTENTION_DISABLE_SM80=TRUE\n", "h100", None),
        ("", "b200", "it builds sm_90a (Hopper) and sm_80 kernels"),
    ],
)
def test_fa3_without_its_sm80_kernels(project: Any, disable: str, gpu: str, expected: str | None) -> None:
    script = (
        f"#SBATCH --gres=gpu:{gpu}:8\n{disable}"
        "git clone https://github.com/Dao-AILab/flash-attention.git\n"
        "cd flash-attention/hopper\npython setup.py install\n"
    )
    found = [f["message"] for f in lint(project, {"build.sh": script}) if f["code"] == "FAL013"]
    assert [expected in m for m in found] == ([True] if expected else [])


def test_a_skipped_entry_keeps_its_reason_whole(project: Any) -> None:
    """pip's own words ("no such option"), not the parser library's name, and never cut mid-word."""
    found = lint(project, {"requirements.txt": "--frobnicate-everything-now yes\nflash-attn>=2.6.3\n"})
    (f,) = [f for f in found if f["code"] == "FAL901"]
    assert f["message"].endswith("no such option: --frobnicate-everything-now")
    assert "pip_requirements_parser" not in f["message"]


# --- 10. the ABI label of release wheels for torch 2.7 and later ------------------------------------

RELEASE = "https://github.com/Dao-AILab/flash-attention/releases/download/"


def _wheel(version: str, torch: str, abi: str, where: str = RELEASE) -> str:
    return f"flash-attn @ {where}v{version}/flash_attn-{version}+cu12torch{torch}cxx11abi{abi}-cp311-cp311-linux_x86_64.whl"


@pytest.mark.parametrize(
    ("torch", "wheel", "mismatch"),
    [
        # setup.py forces the ABI only on; a FALSE build against torch 2.8 (new ABI from 2.7) is new-ABI
        ("2.8.0", _wheel("2.8.3", "2.8", "FALSE"), False),
        ("2.7.1", _wheel("2.8.1", "2.7", "FALSE"), False),
        ("2.8.0", _wheel("2.8.3", "2.8", "TRUE"), False),
        # before 2.7 PyPI's torch uses the old ABI: the label means what it says
        ("2.6.0", _wheel("2.7.4.post1", "2.6", "FALSE"), False),
        ("2.6.0", _wheel("2.7.4.post1", "2.6", "TRUE"), True),
        # someone else's FALSE build for torch 2.8: its ABI is not known, so nothing is said
        ("2.8.0", _wheel("2.8.3", "2.8", "FALSE", "https://example.org/wheels/"), False),
    ],
)
def test_the_abi_a_release_wheel_is_built_with(project: Any, torch: str, wheel: str, mismatch: bool) -> None:
    found = lint(project, {"requirements.txt": f"torch=={torch}\n{wheel}\n"})
    assert bool([f for f in found if f["code"] == "FAL005" and "C++ ABI" in f["message"]]) is mismatch


def test_a_false_wheel_for_an_old_abi_torch_on_a_new_abi_image_is_still_found(project: Any) -> None:
    """NGC's torch uses the new ABI; a cxx11abiFALSE wheel built for torch 2.6 (old ABI) does not fit."""
    dockerfile = (
        "FROM nvcr.io/nvidia/pytorch:25.03-py3\n"
        f"RUN pip install {_wheel('2.7.4.post1', '2.6', 'FALSE').split(' @ ')[1]}\n"
    )
    (f,) = [f for f in lint(project, {"Dockerfile": dockerfile}) if f["code"] == "FAL005"]
    assert "cxx11abiFALSE" in f["message"] and "new C++ ABI" in f["message"]


def test_the_abi_facts_are_read_from_every_tag() -> None:
    """Every flash-attn 2.x tag's setup.py forces the ABI on or leaves it alone, never off."""
    import json
    from importlib import resources

    doc = json.loads(resources.files("fa_lint.kb").joinpath("abi_label.json").read_text())
    releases = doc["releases"]
    assert {"2.4.2", "2.7.4.post1", "2.8.1", "2.8.3"} <= set(releases)
    assert not [v for v, r in releases.items() if r["forces_off"]]
    assert releases["2.8.1"]["forces_on"][0] == "v2.8.1:setup.py:197: torch._C._GLIBCXX_USE_CXX11_ABI = True"


# --- 18. one floor, and why -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "why"),
    [
        # nothing known about torch: the policy's floor
        ({"requirements.txt": "flash-attn>=2.0\n"}, "why 2.5.0: the first release with paged KV"),
        # torch 2.3.1: 2.5.0 has no torch 2.3 wheel; 2.5.1.post1-2.5.7 were built against a 2.3 nightly
        (
            {"requirements.txt": "torch==2.3.1\nflash-attn==2.4.2\n"},
            "why 2.5.8: the first release with paged KV and a prebuilt wheel for the torch 2.3",
        ),
        # the rest of the install caps it: 2.5.6 is the first good release below 2.5.7
        (
            {"requirements.txt": "-c c.txt\nflash-attn\n", "c.txt": "flash-attn>2.5.5,<2.5.7\n"},
            "why 2.5.6: the first release with paged KV that the install's other flash-attn requirements",
        ),
    ],
)
def test_a_fix_says_why_it_suggests_its_release(project: Any, files: dict[str, str], why: str) -> None:
    found = [f for f in lint(project, files) if f["code"] in ("FAL001", "FAL002")]
    assert found
    assert all(any(n.startswith(why) for n in f["notes"]) for f in found), [f["notes"] for f in found]


def test_a_lock_entry_from_the_index_does_not_hold_a_url_requirement(project: Any) -> None:
    """uv.lock's `source = { registry = ... }` entry of the same version is not the URL's file."""
    pyproject = f'[project]\nname = "demo"\nversion = "0"\ndependencies = ["flash-attn @ {URL}"]\n'
    lock = (
        'version = 1\nrequires-python = ">=3.10"\n\n[[package]]\nname = "flash-attn"\n'
        'version = "2.6.1"\nsource = { registry = "https://pypi.org/simple" }\n'
    )
    found = lint(project, {"pyproject.toml": pyproject, "uv.lock": lock})
    assert [f["code"] for f in found if f["code"] == "FAL006"] == ["FAL006"]


# --- 11. ROCm ---------------------------------------------------------------------------------------

ROCM_INDEX = "--index-url https://download.pytorch.org/whl/rocm6.1\ntorch==2.4.1\n"
ROCM_IMAGE = "FROM rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0\n"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # 2.6.3's ROCm build (Composable Kernel) binds no fwd_kvcache: paged KV reaches ROCm in 2.7.0
        ({"requirements.txt": ROCM_INDEX + "flash-attn==2.6.3\n"}, [("FAL001", 3)]),
        ({"requirements.txt": ROCM_INDEX + "flash-attn==2.7.4.post1\n"}, []),
        ({"requirements.txt": ROCM_INDEX + "flash-attn>=2.5\n"}, [("FAL002", 3)]),
        (
            {"Dockerfile": ROCM_IMAGE + 'RUN pip install --no-build-isolation "flash-attn>=2.5"\n'},
            [("FAL002", 2)],
        ),
        ({"Dockerfile": ROCM_IMAGE + 'RUN pip install --no-build-isolation "flash-attn>=2.7"\n'}, []),
        # the same pin on CUDA has paged KV
        ({"requirements.txt": "torch==2.4.1\nflash-attn==2.6.3\n"}, []),
        # ROCm's own fork at its 2.6.3 tag is its own code, not upstream's 2.6.3
        (
            {
                "Dockerfile": ROCM_IMAGE
                + 'RUN pip install --no-build-isolation "git+https://github.com/ROCm/flash-attention@v2.6.3-cktile"\n'
            },
            [],
        ),
        (
            {
                "Dockerfile": ROCM_IMAGE
                + 'RUN pip install --no-build-isolation "git+https://github.com/Dao-AILab/flash-attention@v2.6.3"\n'
            },
            [("FAL001", 2)],
        ),
    ],
)
def test_the_paged_kv_floor_on_rocm(
    project: Any, files: dict[str, str], expected: list[tuple[str, int]]
) -> None:
    found = lint(project, files, "--select", "FAL001,FAL002")
    assert [(f["code"], f["line"]) for f in found] == expected
    for f in found:
        assert f["message"].endswith(("require flash-attn>=2.7.0", "install flash-attn 2.7.0 or later"))
        assert "on ROCm" in f["message"]
        notes = " ".join(f["notes"])
        assert "v2.7.0:csrc/flash_attn_ck/flash_api.cpp:121" in notes
        assert "on CUDA" not in notes and "unexpected keyword argument" not in notes


def test_the_rocm_facts_are_read_from_the_tags() -> None:
    from fa_lint.kb import rocm

    facts = rocm.load()
    assert str(facts.paged_kv_since) == "2.7.0"
    assert [str(v) for v in facts.without] == ["2.6.2", "2.6.3"]
    assert str(facts.first_build) == "2.6.2"


# --- 16. one problem, one block ---------------------------------------------------------------------

SCRIPT = "#!/bin/bash\npip install torch==2.4.1\npip install flash-attn --no-build-isolation\n"


def test_the_same_finding_in_near_identical_scripts_is_one_block(project: Any) -> None:
    project({f"scripts/archived/run{i}.sh": SCRIPT for i in range(3)} | {"scripts/train.sh": SCRIPT})
    out = run("--isolated", ".").out
    headers = [line for line in out.splitlines() if ": FAL002 [warning]" in line]
    assert len(headers) == 4  # every finding keeps its header line (editors and CI logs match it)
    assert out.count("^^^^^^^^^^ FAL002") == 1  # one frame
    assert out.count("= note: it admits 0.2.0") == 1  # one set of notes
    assert out.count("= note: the same as scripts/archived/run0.sh:3:13 above") == 3
    # all counted, and the summary says how many of them repeat one shown above
    assert "Found 0 errors, 4 warnings, 0 info in 4 files (3 the same as one above)." in out
    assert len(run("--isolated", "--format", "json", ".").json["findings"]) == 4
    # one line a finding, as ruff's concise output: nothing is shown "above", so nothing is said
    assert "the same as" not in run("--isolated", "--format", "concise", ".").out


def test_a_finding_whose_notes_differ_is_its_own_block(project: Any) -> None:
    # a transformers that has no continuous batching yet: other notes on what an old release breaks
    other = SCRIPT.replace("torch==2.4.1", "torch==2.4.1 transformers==4.40.0")
    project({"a.sh": SCRIPT, "b.sh": other})
    out = run("--isolated", ".").out
    assert out.count("^^^^^^^^^^ FAL002") == 2
    assert "the same as" not in out


def test_findings_on_one_span_share_its_frame(project: Any) -> None:
    project({"install.sh": "#!/bin/sh\npip install -U pip\npip install flash-attn>=2.5.8\n"})
    out = run("--isolated", ".").out
    codes = [line.split()[1] for line in out.splitlines() if line.startswith("install.sh:3:13:")]
    assert len(codes) >= 2, out  # FAL002, FAL007 (and FAL012) on the one word
    assert out.count("3 | pip install flash-attn>=2.5.8") == 1


# --- 15. universal locks and Linux-only wheels ------------------------------------------------------

LINUX_WHEEL = (
    "https://github.com/Dao-AILab/flash-attention/releases/download/v2.7.4.post1/"
    "flash_attn-2.7.4.post1+cu12torch2.6cxx11abiFALSE-cp311-cp311-linux_x86_64.whl"
)


def _uv_project(flash_attn: str, extra: str = "") -> str:
    return (
        '[project]\nname = "demo"\nversion = "0"\nrequires-python = "==3.11.*"\n'
        f'dependencies = ["torch==2.6.0", "{flash_attn}"]\n'
        "[tool.uv.sources]\ntorch = [\n"
        '  { index = "pytorch-cpu", marker = "sys_platform == \'darwin\'" },\n'
        '  { index = "pytorch-cu124", marker = "sys_platform == \'linux\'" },\n]\n' + extra
    )


@pytest.mark.parametrize(
    ("pyproject", "expected"),
    [
        # uv locks for every platform; the project names macOS; the wheel installs on Linux x86_64 only
        (_uv_project(f"flash-attn @ {LINUX_WHEEL}"), ["macOS"]),
        (_uv_project(f"flash-attn @ {LINUX_WHEEL} ; sys_platform == 'linux'"), []),
        (
            _uv_project(
                f"flash-attn @ {LINUX_WHEEL}", "[tool.uv]\nenvironments = [\"sys_platform == 'linux'\"]\n"
            ),
            [],
        ),
        # nothing names another OS: nothing says the project is meant for one
        (_uv_project(f"flash-attn @ {LINUX_WHEEL}").replace("darwin", "linux"), []),
        # an index requirement builds from the sdist: not this finding's case
        (_uv_project("flash-attn==2.7.4.post1"), []),
    ],
)
def test_a_linux_wheel_in_a_universal_uv_lock(project: Any, pyproject: str, expected: list[str]) -> None:
    found = [f for f in lint(project, {"pyproject.toml": pyproject}) if f["code"] == "FAL014"]
    assert [f["message"].split("uv locks for ", 1)[1].split(" too")[0] for f in found] == expected
    for f in found:
        assert f["severity"] == "warning"
        assert "the wheel is tagged linux_x86_64" in " ".join(f["notes"])
