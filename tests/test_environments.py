"""Issue 4: environments, combined constraints, lock vs manifest, wheel ABI, transformers consequences."""

from __future__ import annotations

from typing import Any

import pytest
from packaging.version import Version

from fa_lint.kb import transformers as tf
from tests.conftest import run

UV_LOCK = 'version = 1\n\n[[package]]\nname = "flash-attn"\nversion = "{v}"\nsource = {{ registry = "https://pypi.org/simple" }}\n'


def findings(*args: str) -> list[dict[str, Any]]:
    # FAL011/FAL012 (how flash-attn installs) have their own tests in test_install.py, FAL013-FAL015
    # (the machine it lands on) theirs in test_machine_rules.py
    return run("--format", "json", "--ignore", "FAL011,FAL012,FAL013,FAL014,FAL015", *args).json["findings"]


def by_code(found: list[dict[str, Any]], code: str) -> list[dict[str, Any]]:
    return [f for f in found if f["code"] == code]


# --- FAL004 -----------------------------------------------------------------------------------------


def test_requirements_and_included_constraints(project: Any) -> None:
    project(
        {"requirements.txt": "flash-attn<2.6\n-c constraints.txt\n", "constraints.txt": "flash-attn!=2.5.*\n"}
    )
    found = findings("requirements.txt")
    (f,) = by_code(found, "FAL004")
    assert (f["path"], f["line"], f["environment"]) == ("requirements.txt", 1, "requirements.txt")
    assert [(r["path"], r["line"]) for r in f["related_locations"]] == [("constraints.txt", 1)]
    assert f["admitted"][-1] == "2.4.3.post1" and "none with paged KV" in f["message"]
    # a file reached only through -c holds constraints, which are not judged one by one
    assert [x["path"] for x in found if x["code"] == "FAL002"] == ["requirements.txt"]


def test_combination_that_admits_nothing(project: Any) -> None:
    project({"requirements.txt": "flash-attn>=2.5\n-c c.txt\n", "c.txt": "flash-attn<2.5\n"})
    (f,) = by_code(findings("requirements.txt"), "FAL004")
    assert "no flash-attn release at all" in f["message"] and f["admitted"] == []


def test_no_fal004_when_one_line_is_already_wrong(project: Any) -> None:
    project({"requirements.txt": "flash-attn==2.4.2\n-c c.txt\n", "c.txt": "flash-attn<2.6\n"})
    assert [f["code"] for f in findings("requirements.txt")] == ["FAL001"]


def test_uv_constraint_dependencies(project: Any) -> None:
    project(
        {
            "pyproject.toml": (
                '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn>=2.0"]\n\n'
                '[tool.uv]\nconstraint-dependencies = ["flash-attn<2.5"]\n'
            )
        }
    )
    (f,) = by_code(findings(), "FAL004")
    assert f["environment"] == "pyproject.toml [project]" and f["line"] == 4
    assert [r["line"] for r in f["related_locations"]] == [7]


def test_uv_override_replaces_the_projects_requirement(project: Any) -> None:
    project(
        {
            "pyproject.toml": (
                '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn>=2.6"]\n\n'
                '[tool.uv]\noverride-dependencies = ["flash-attn>=2.0,<2.5"]\n'
            )
        }
    )
    assert [(f["code"], f["line"]) for f in findings()] == [("FAL001", 7)]
    project(
        {
            "pyproject.toml": (
                '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn<2.5"]\n\n'
                '[tool.uv]\noverride-dependencies = ["flash-attn>=2.6"]\n'
            )
        }
    )
    # the project's own <2.5 is replaced, so no combination fails (the line itself still does)
    assert [(f["code"], f["line"]) for f in findings()] == [("FAL001", 4)]


def test_markers_split_environments(project: Any) -> None:
    project(
        {
            "requirements.txt": (
                "flash-attn==2.4.2 ; python_version == '3.9'\n"
                "flash-attn==2.6.3 ; python_version >= '3.10'\n"
                "flash-attn<2.7\n"
            )
        }
    )
    assert [(f["code"], f["line"]) for f in findings()] == [("FAL001", 1), ("FAL002", 3)]


def test_extras_combine_with_the_main_dependencies(project: Any) -> None:
    project(
        {
            "pyproject.toml": (
                '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn<2.6"]\n'
                '[project.optional-dependencies]\ngpu = ["flash-attn!=2.5.*"]\n'
            )
        }
    )
    (f,) = by_code(findings(), "FAL004")
    assert f["environment"] == "pyproject.toml [extra:gpu]"


# --- locks ----------------------------------------------------------------------------------------


def _uv_project(spec: str, locked: str) -> dict[str, str]:
    return {
        "pyproject.toml": f'[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn{spec}"]\n',
        "uv.lock": UV_LOCK.format(v=locked),
    }


def test_good_lock_reduces_a_range_warning_to_info(project: Any) -> None:
    project(_uv_project(">=2.0", "2.6.3"))
    (f,) = findings()
    assert (f["code"], f["severity"], f["path"]) == ("FAL002", "info", "pyproject.toml")
    assert any("the lock pins 2.6.3 (uv.lock:4:1), which has paged KV" in n for n in f["notes"])
    quiet = ("--ignore", "FAL012")  # a uv project without build settings for flash-attn: test_install.py
    assert run(*quiet).code == 0 and run(*quiet, "--strict").code == 0


def test_a_gitignored_lock_is_local_state_not_context(project: Any) -> None:
    # Libraries often keep their lock out of git: what it pins is this machine's, not the project's.
    project({**_uv_project(">=2.0", "2.6.3"), ".git/HEAD": "", ".gitignore": "uv.lock\n"})
    (f,) = findings()
    assert (f["code"], f["severity"], f["path"]) == ("FAL002", "warning", "pyproject.toml")
    (f,) = findings("--no-respect-gitignore")
    assert f["severity"] == "info"


def test_old_lock_is_the_error_and_the_manifest_allows_better(project: Any) -> None:
    project(_uv_project(">=2.0", "2.4.2"))
    found = findings()
    assert [(f["code"], f["severity"], f["path"]) for f in found] == [
        ("FAL002", "warning", "pyproject.toml"),
        ("FAL001", "error", "uv.lock"),
    ]
    assert found[1]["message"].endswith("; run `uv lock --upgrade-package flash-attn`")
    assert found[1]["help"] == "run `uv lock --upgrade-package flash-attn`"
    assert any("already allows 2.5.0 or later, so relocking is enough" in n for n in found[1]["notes"])


@pytest.mark.parametrize(
    ("files", "lock", "command"),
    [
        (_uv_project(">=2.5", "2.4.2"), "uv.lock", "uv lock"),
        (
            {
                "pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.10"\nflash-attn = "^2.5"\n',
                "poetry.lock": '[[package]]\nname = "flash-attn"\nversion = "2.4.2"\n',
            },
            "poetry.lock",
            "poetry lock",
        ),
        (
            {
                "Pipfile": '[packages]\nflash-attn = ">=2.6"\n',
                "Pipfile.lock": '{"default": {"flash-attn": {"version": "==2.5.8"}}, "develop": {}}',
            },
            "Pipfile.lock",
            "pipenv lock",
        ),
    ],
)
def test_stale_lock(project: Any, files: dict[str, str], lock: str, command: str) -> None:
    project(files)
    (f,) = by_code(findings(), "FAL006")
    assert f["path"] == lock and f["severity"] == "warning"
    assert f"`{command}`" in f["message"] and "no longer admits" in f["message"]
    assert f["related_locations"]


def test_lock_beside_a_checked_manifest_is_context_not_a_target(project: Any) -> None:
    project(_uv_project(">=2.0", "2.6.3"))
    r = run("--format", "json", "--ignore", "FAL012", "pyproject.toml")
    assert r.json["files"] == ["pyproject.toml"]
    assert [f["severity"] for f in r.json["findings"]] == ["info"]  # the lock was read all the same


def test_uv_lock_with_several_entries_for_one_name(project: Any) -> None:
    lock = (
        'version = 1\n[[package]]\nname = "flash-attn"\nversion = "2.6.3"\n'
        "resolution-markers = [\"python_version >= '3.12'\"]\n"
        '[[package]]\nname = "flash-attn"\nversion = "2.5.8"\n'
        "resolution-markers = [\"python_version < '3.12'\"]\n"
    )
    project(
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn>=2.0"]\n',
            "uv.lock": lock,
        }
    )
    (f,) = findings()
    assert f["severity"] == "info"
    assert any(
        "the lock pins 2.6.3 (uv.lock:3:1), 2.5.8 (uv.lock:7:1), all with paged KV" in n for n in f["notes"]
    )


# --- Dockerfiles: a later install replaces an earlier one --------------------------------------------


def test_docker_later_install_replaces_earlier(project: Any) -> None:
    project(
        {
            "Dockerfile": (
                "FROM python:3.11 AS build\nRUN pip install flash-attn==2.6.3\nRUN pip install flash-attn==2.4.2\n"
                "FROM python:3.11\nRUN pip install 'flash-attn<2.6' -c /c.txt\n"
            ),
            "c.txt": "flash-attn!=2.5.*\n",
        }
    )
    found = findings()
    assert [(f["code"], f["line"], f["environment"]) for f in found if f["code"] in ("FAL001", "FAL004")] == [
        ("FAL001", 3, "Dockerfile [stage:build]")
    ]
    project(
        {
            "Dockerfile": "FROM python:3.11\nCOPY c.txt /c.txt\nRUN pip install 'flash-attn<2.6' -c /c.txt\n",
            "c.txt": "flash-attn!=2.5.*\n",
        }
    )
    (f,) = by_code(findings(), "FAL004")
    assert f["environment"] == "Dockerfile [stage:0]"
    assert [(r["path"], r["line"]) for r in f["related_locations"]] == [("c.txt", 1)]


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        # pip without --upgrade keeps an installed version the later requirement admits: a no-op
        ("RUN pip install flash-attn==2.6.3\nRUN pip install flash-attn --no-build-isolation\n", []),
        ("RUN pip install 'flash-attn>=2.5'\nRUN pip install 'flash-attn>=2.0'\n", []),
        ("RUN pip install flash-attn==2.6.3\nRUN conda run -n base pip install flash-attn\n", []),
        # -U (and the like) reinstalls: the later requirement is judged as written
        ("RUN pip install flash-attn==2.6.3\nRUN pip install -U flash-attn\n", [("FAL002", 3)]),
        (
            "RUN pip install flash-attn==2.6.3\nRUN pip install flash-attn --force-reinstall\n",
            [("FAL002", 3)],
        ),
        # the earlier version is not one the later requirement admits: pip replaces it
        ("RUN pip install flash-attn==2.6.3\nRUN pip install 'flash-attn<2.5'\n", [("FAL001", 3)]),
        # a no-op over a version without paged KV: the later line's fix (a floor) would upgrade it
        ("RUN pip install flash-attn==2.4.2\nRUN pip install flash-attn\n", [("FAL001", 2), ("FAL002", 3)]),
        # an unknown earlier version satisfies nothing for sure
        ("RUN pip install flash-attn==$V\nRUN pip install flash-attn\n", [("FAL009", 2), ("FAL002", 3)]),
    ],
)
def test_a_later_install_that_is_already_satisfied_changes_nothing(
    project: Any, run: str, expected: list[tuple[str, int]]
) -> None:
    project({"Dockerfile": "FROM python:3.11\n" + run})
    assert [(f["code"], f["line"]) for f in findings()] == expected


def test_a_requirements_file_installed_after_a_pin_is_satisfied_by_it(project: Any) -> None:
    project(
        {
            "Dockerfile": "FROM python:3.11\nRUN pip install flash-attn==2.6.3\nRUN pip install -r requirements.txt\n",
            "requirements.txt": "flash-attn\n",  # on its own (outside the image) it still warns
        }
    )
    found = [(f["path"], f["code"], f["environment"]) for f in findings()]
    assert found == [("requirements.txt", "FAL002", "requirements.txt")]


# --- FAL005 ---------------------------------------------------------------------------------------

WHEEL = (
    "https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
    "flash_attn-2.6.3+cu123torch{t}cxx11abi{abi}-{py}-{py}-linux_x86_64.whl"
)


@pytest.mark.parametrize(
    ("files", "headline", "note", "severity"),
    [
        (
            {"requirements.txt": "torch==2.3.1\n" + WHEEL.format(t="2.1", abi="FALSE", py="cp311") + "\n"},
            "built for torch 2.1, but its environment installs torch 2.3",
            "requirements.txt installs torch 2.3 (requirements.txt:1:1)",
            "warning",
        ),
        (
            {"requirements.txt": "torch~=2.4.0\n" + WHEEL.format(t="2.3", abi="FALSE", py="cp311") + "\n"},
            "installs torch 2.4",
            "requirements.txt installs torch 2.4 (requirements.txt:1:1)",
            "warning",
        ),
        (
            {
                "Dockerfile": "FROM nvcr.io/nvidia/pytorch:24.05-py3\nRUN pip install "
                + WHEEL.format(t="2.4", abi="FALSE", py="cp310")
                + "\n"
            },
            "built with cxx11abiFALSE, but the base image's torch uses the new C++ ABI",
            "the torch in nvcr.io/nvidia/pytorch:24.05-py3 (Dockerfile:1:6) uses the new C++ ABI",
            "error",
        ),
        (
            {
                "Dockerfile": "FROM pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime\nRUN pip install "
                + WHEEL.format(t="2.4", abi="FALSE", py="cp310")
                + "\n"
            },
            "built for torch 2.4, but its environment installs torch 2.3",
            "installs torch 2.3 (the base image pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime)",
            "error",
        ),
        (
            {
                "Dockerfile": "FROM python:3.10-slim\nRUN pip install "
                + WHEEL.format(t="2.4", abi="FALSE", py="cp311")
                + "\n"
            },
            "is for CPython 3.11, but its environment runs Python 3.10",
            "Dockerfile [stage:0] runs Python 3.10 (the base image python:3.10-slim)",
            "error",
        ),
        (
            {
                "pyproject.toml": '[project]\nname = "x"\nversion = "0"\nrequires-python = ">=3.10"\ndependencies = ["flash-attn @ '
                + WHEEL.format(t="2.4", abi="FALSE", py="cp39")
                + '"]\n'
            },
            "is for CPython 3.9",
            "runs Python >=3.10",
            "error",
        ),
        # a range that excludes every torch 2.1 release: the wheel never matches; a build for an
        # older torch minor can load (Dao-AILab/flash-attention#1644), so a warning, never an error
        (
            {"requirements.txt": "torch>=2.3\n" + WHEEL.format(t="2.1", abi="FALSE", py="cp311") + "\n"},
            "but its environment allows only torch 2.3 or newer",
            "installs torch 2.3 or newer ('torch>=2.3' (requirements.txt:1:1))",
            "warning",
        ),
        (
            {
                "requirements.txt": WHEEL.format(t="2.4", abi="FALSE", py="cp39")
                + " ; python_version == '3.10'\n"
            },
            "its marker selects another Python",
            "its marker 'python_version == '3.10'' selects another Python",
            "error",
        ),
    ],
)
def test_wheel_built_for_something_else(
    project: Any, files: dict[str, str], headline: str, note: str, severity: str
) -> None:
    project(files)
    (f,) = by_code(findings(), "FAL005")
    assert headline in f["message"]
    assert any(note in n for n in f["notes"]), f["notes"]
    assert f["severity"] == severity


@pytest.mark.parametrize(
    "files",
    [
        {"requirements.txt": "torch==2.4.1\n" + WHEEL.format(t="2.4", abi="FALSE", py="cp311") + "\n"},
        {"requirements.txt": WHEEL.format(t="2.4", abi="FALSE", py="cp39") + " ; python_version == '3.9'\n"},
        {
            "Dockerfile": "FROM nvcr.io/nvidia/pytorch:24.05-py3\nRUN pip install "
            + WHEEL.format(t="2.4", abi="TRUE", py="cp310")
            + "\n"
        },
        # a range that admits the wheel's torch: nothing certain to report
        {"requirements.txt": "torch>=2.1\n" + WHEEL.format(t="2.1", abi="FALSE", py="cp311") + "\n"},
    ],
)
def test_matching_wheels_pass(project: Any, files: dict[str, str]) -> None:
    project(files)
    assert by_code(findings(), "FAL005") == []


# --- transformers consequences -----------------------------------------------------------------------


def test_transformers_facts_from_released_source() -> None:
    facts = tf.load()
    assert facts.continuous_batching == Version("4.53.0")
    assert facts.key_check == Version("5.4.0")
    assert facts.fa2_block_table_on_cuda == Version("5.13.0")
    assert facts.silent_drop == Version("5.19.0")
    assert facts.key_check_until == Version("5.19.0")
    assert facts.fa4_block_table_on_cuda is None  # no release read sends flash-attn-4 a block table
    assert facts.newest_read == Version("5.24.0")
    assert facts.minimum_flash_attn(Version("5.3.0")) == Version("2.1.0")
    assert facts.minimum_flash_attn(Version("5.4.0")) == Version("2.3.3")
    assert {k for k in facts.evidence if " " not in k} == {
        "continuous_batching",
        "block_table_key_check",
        "fa2_block_table_on_cuda",
        "block_table_silently_dropped",
        "fa4_supported",
        "fa4_no_kvcache",
        "cb_counts_kernels",
        "sliding_window_no_block_table",
        "block_table_switch",
        "block_table_on_by_default",
        "xpu_block_table",
        # FA3 (tests/test_fa3.py has their boundaries)
        "fa3_supported",
        "fa3_by_distribution",
        "fa3_page_table",
        "cb_fa3_first",
        # what the code layer reads (issue 30): tests/test_code.py checks their values
        "generate_batch",
        "cache_implementation_paged",
        "paged_prefix_deprecated",
        # FAL020: an attn_implementation Hub kernel loads a version (tests/test_kernels_facts.py)
        "attn_kernel_version",
    }
    # every release 4.52.4-5.24.0 was read, so each boundary is exact
    assert (
        facts.evidence["fa2_minimum_on_cuda 5.4.0"]
        == "transformers 5.4.0: transformers/utils/import_utils.py:931"
    )
    assert facts.sliding_window_off == Version("5.9.0")
    assert facts.xpu_block_table == Version("5.10.1")
    assert facts.cb_counts_kernels == Version("5.15.0")
    assert facts.fa4_supported == facts.fa4_no_kvcache == Version("5.4.0")
    k = facts.kernel(Version("5.24.0"))
    assert k is not None and (k.repo, k.rocm_repo) == (
        "kernels-community/flash-attn2",
        "kernels-community/aiter-flash-attn",
    )
    assert str(k.kernels) in ("<0.19.0,>=0.18.2", ">=0.18.2,<0.19.0")
    old = facts.kernel(Version("4.57.6"))
    assert old is not None and old.repo == "kernels-community/flash-attn" and not str(old.kernels)
    assert facts.kernel(Version("4.55.4")) is None  # the fallback arrives in 4.56.0


@pytest.mark.parametrize(
    ("transformers", "flash_attn", "phrase", "today"),
    [
        ("4.52.4", "2.4.2", "has no continuous batching yet", True),
        (
            "4.56.2",
            "2.4.2",
            "decodes continuous batching through `flash_attn_varlen_func` without a block table",
            True,
        ),
        ("5.8.0", "2.4.2", "only with FA3 on CUDA", True),
        ("5.14.0", "2.4.2", "`ValueError: flash_attn_with_kvcache_fn does not have a block_table", False),
        ("5.20.0", "2.4.2", "silently drops the block table", False),
        ("5.14.0", "2.3.0", "refuses flash-attn older than 2.3.3", False),
        (
            "5.3.0",
            "2.3.0",
            "decodes continuous batching through `flash_attn_varlen_func`",
            True,
        ),  # 5.3 accepts 2.1.0+
    ],
)
def test_notes_say_what_the_pinned_transformers_does(
    project: Any, transformers: str, flash_attn: str, phrase: str, today: bool
) -> None:
    # The KB facts (kb/transformers.json): continuous batching from 4.53.0, flash-attn 2 on the block-table
    # path from 5.13.0, the ValueError check until 5.19.0, flash-attn >= 2.3.3 required from 5.4.0.
    project({"requirements.txt": f"transformers=={transformers}\nflash-attn=={flash_attn}\n"})
    (f,) = findings()
    assert f["severity"] == "error"  # the next transformers upgrade breaks it either way
    # the headline states what the pin lacks; it never claims a failure the pinned stack may not hit
    assert f["message"] == (
        f"`flash-attn=={flash_attn}` has no paged KV (block_table ships in 2.5.0); require flash-attn>=2.5.0"
    )
    (note, *later) = f["notes"]
    assert f"transformers {transformers} (requirements.txt:1:1)" in note
    assert phrase in note
    assert ("this stack runs today" in note) is today
    assert later == (
        [
            "transformers 5.13.0 and later decode with `flash_attn_with_kvcache(block_table=...)` (on CUDA, "
            "for a model without sliding-window layers, unless `max_blocks_per_request=0` turns that path "
            "off) and fail at the first decode step: a transformers upgrade breaks this stack"
        ]
        if today
        else []
    ) + ["why 2.5.0: the first release with paged KV"]  # the fix's reason (issue 35)


@pytest.mark.parametrize(
    ("extra", "phrase"),
    [
        # transformers 5.24.0 refuses flash-attn < 2.3.3 (import_utils.py:931); with a `kernels` it accepts
        # (KERNELS_MIN_VERSION 0.18.2, KERNELS_MAX_VERSION 0.19.0) it loads kernels-community/flash-attn2
        ("kernels==0.18.2\n", "so it loads the Hub kernel `kernels-community/flash-attn2`"),
        ("kernels>=0.18\n", "so it loads the Hub kernel `kernels-community/flash-attn2`"),
        # is_kernels_available() is False outside the window: no fallback, the load fails
        ("kernels==0.12.0\n", "is not one it accepts (`kernels` >=0.18.2,<0.19.0)"),
        # not listed, and no lock says what installs in full: both outcomes
        ("", "with `kernels` >=0.18.2,<0.19.0 installed it loads the Hub kernel"),
    ],
)
def test_a_refused_flash_attn_and_the_kernels_fallback(project: Any, extra: str, phrase: str) -> None:
    project({"requirements.txt": f"transformers==5.24.0\nflash-attn==2.3.2\n{extra}"})
    (f,) = by_code(findings(), "FAL001")
    note, why = f["notes"]
    assert why == "why 2.5.0: the first release with paged KV"  # the fix's reason (issue 35)
    assert note.startswith("transformers 5.24.0 (requirements.txt:1:1) refuses flash-attn older than 2.3.3")
    assert phrase in note
    fails = "fails as the model loads" in note
    assert fails is (not extra.startswith("kernels>") and extra != "kernels==0.18.2\n")


def test_kernels_does_not_save_a_flash_attn_transformers_accepts(project: Any) -> None:
    # 2.4.2 passes 5.24.0's check (>= 2.3.3): pip's flash-attn runs, the Hub kernel is never loaded
    project({"requirements.txt": "transformers==5.24.0\nflash-attn==2.4.2\nkernels==0.18.2\n"})
    (f,) = by_code(findings(), "FAL001")
    first, second, why = f["notes"]
    assert why == "why 2.5.0: the first release with paged KV"
    assert "loads its Hub kernel only for a flash-attn it refuses" in first
    assert "silently drops the block table when it takes the block-table path" in second
    assert "without sliding-window layers" in second and "max_blocks_per_request=0" in second


def test_a_lock_without_kernels_means_no_fallback(project: Any) -> None:
    lock = UV_LOCK.format(v="2.3.2") + '\n[[package]]\nname = "transformers"\nversion = "5.24.0"\n'
    project(
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn", "transformers"]\n',
            "uv.lock": lock,
        }
    )
    notes = [n for f in by_code(findings(), "FAL001") for n in f["notes"]]
    assert any(
        "this environment installs no `kernels` package" in n and "fails as the model loads" in n
        for n in notes
    )


def test_transformers_pinned_by_the_lock(project: Any) -> None:
    lock = UV_LOCK.format(v="2.4.2") + '\n[[package]]\nname = "transformers"\nversion = "5.14.0"\n'
    project(
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn", "transformers"]\n',
            "uv.lock": lock,
        }
    )
    (f,) = by_code(findings(), "FAL001")
    assert f["notes"][0].startswith("with transformers 5.14.0 (uv.lock:")
    assert "continuous batching fails at the first decode step when it takes the block-table" in f["notes"][0]
    assert "`ValueError: flash_attn_with_kvcache_fn" in f["notes"][0]


def test_dependency_groups_follow_include_group(project: Any) -> None:
    project(
        {
            "pyproject.toml": (
                '[project]\nname = "x"\nversion = "0"\ndependencies = ["torch"]\n\n[dependency-groups]\n'
                'pins = ["flash-attn!=2.5.*", "flash-attn<2.6"]\n'
                'dev = [{include-group = "pins"}, "flash-attn>=2.0"]\n'
                'a = [{include-group = "b"}]\nb = [{include-group = "a"}]\n'
            )
        }
    )
    found = findings()
    fal004 = by_code(found, "FAL004")
    # pins fails on its own; dev fails too, its own line combined with what it includes
    assert [(f["environment"], f["line"]) for f in fal004] == [
        ("pyproject.toml [group:pins]", 7),
        ("pyproject.toml [group:dev]", 8),
    ]
    cycles = by_code(found, "FAL900")
    assert [f["line"] for f in cycles] == [9, 10] and "Cyclic" in cycles[0]["message"]


def test_python_mismatch_names_the_wheel_to_use(project: Any) -> None:
    project(
        {
            "Dockerfile": "FROM python:3.10-slim\nRUN pip install "
            + WHEEL.format(t="2.4", abi="FALSE", py="cp311")
            + "\n"
        }
    )
    (f,) = by_code(findings(), "FAL005")
    assert f["help"] == "use flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp310-cp310-linux_x86_64.whl"


def test_conda_pip_section_replaces_the_conda_package(project: Any) -> None:
    project(
        {"environment.yml": "dependencies:\n  - flash-attn=2.5.8\n  - pip:\n    - flash-attn==2.7.4.post1\n"}
    )
    assert findings() == []
    project(
        {
            "environment.yml": "dependencies:\n  - flash-attn>=2.5\n  - pip:\n    - -r reqs.txt\n",
            "reqs.txt": "flash-attn==2.4.2\n",
        }
    )
    assert [(f["path"], f["code"]) for f in findings()] == [("reqs.txt", "FAL001")]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("flash-attn==2.7.4", []),  # conda-forge's number for PyPI's 2.7.4.post1: paged KV
        ("flash-attn==2.4.3", ["FAL001"]),  # the 2.4.3 tag (PyPI: 2.4.3.post1): no paged KV
        ("flash-attn>2.7.4,<2.7.4.post1", ["FAL003"]),  # no release number at all: still no release
        ("flash-attn==9.9.9", ["FAL008"]),  # past the knowledge base, as on PyPI
    ],
)
def test_conda_versions_are_judged_by_the_release_they_carry(
    project: Any, spec: str, expected: list[str]
) -> None:
    # fa-lint has no list of conda-forge's builds, which drop PyPI's .postN: a conda spec that no PyPI
    # release matches is judged by the upstream release its number names, not called uninstallable.
    project({"environment.yml": f"dependencies:\n  - {spec}\n"})
    assert [f["code"] for f in findings()] == expected
    # the same spec for pip still answers to PyPI's releases
    project({"environment.yml": f"dependencies:\n  - pip:\n    - {spec}\n"})
    pip = ["FAL003"] if spec.endswith(("2.7.4", "2.4.3")) else expected
    assert [f["code"] for f in findings()] == pip
    # conda install in a Dockerfile is conda too
    project({"Dockerfile": f"FROM continuumio/miniconda3\nRUN conda install -y '{spec}'\n"})
    assert [f["code"] for f in findings("Dockerfile")] == expected


def test_named_pylock_beside_the_manifest_is_its_lock(project: Any) -> None:
    project(
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn>=2.0"]\n',
            "pylock.gpu.toml": (
                'lock-version = "1.0"\ncreated-by = "uv"\n\n[[packages]]\nname = "flash-attn"\n'
                'version = "2.6.3"\nwheels = [{ url = "https://x/flash_attn-2.6.3-cp311-cp311-linux_x86_64.whl", '
                'hashes = { sha256 = "00" } }]\n'
            ),
        }
    )
    r = run("--format", "json", "pyproject.toml")
    assert [(f["code"], f["severity"]) for f in r.json["findings"]] == [("FAL002", "info")]
    assert any("the lock pins 2.6.3 (pylock.gpu.toml:5:1)" in n for n in r.json["findings"][0]["notes"])
