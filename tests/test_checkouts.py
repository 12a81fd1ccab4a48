"""Issue 22, items 6-7: source builds of a flash-attention the file does not clone, and fork tags.

Facts: flash-attention's setup.py takes its version from the first ``__version__ = ...`` line of
``flash_attn/__init__.py`` (``get_package_version``, every tag from v1.0.9; v1.0.0 wrote
``version="1.0.0"`` in setup.py); ``block_table`` ships in 2.5.0. git keeps a submodule's commit in
the superproject's tree, not in ``.gitmodules`` (which holds its path, URL and optional branch).
ROCm/flash-attention's ``v2.6.3-cktile`` tag says ``__version__ = "2.6.3"`` and its
``flash_attn_with_kvcache`` has ``block_table`` (fa_lint/kb/forks.json, scripts/build_forks_kb.py).
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from fa_lint.kb import forks
from tests.conftest import REPO, run

SCRIPT = "cd third_party/flash-attention\npip install . --no-build-isolation\n"
GITMODULES = '[submodule "fa"]\n\tpath = third_party/flash-attention\n\turl = {url}\n'


def _found(project: Any, files: dict[str, str], *paths: str) -> list[dict[str, Any]]:
    root = project(files)
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # the repository's top is here
    found: list[dict[str, Any]] = run(
        "--format", "json", "--isolated", "--ignore", "FAL012", *(paths or (".",))
    ).json["findings"]
    return found


def _codes(found: list[dict[str, Any]]) -> list[tuple[str, str, int, str]]:
    return [(f["code"], f["path"], f["line"], f["severity"]) for f in found]


@pytest.mark.parametrize(("version", "expected"), [("2.4.2", "FAL001"), ("2.6.3", None), ("9.0.0", "FAL008")])
def test_a_vendored_copy_says_its_version(version: str, expected: str | None, project: Any) -> None:
    files = {
        "build.sh": SCRIPT,
        "third_party/flash-attention/flash_attn/__init__.py": f'__version__ = "{version}"\n\nfrom x import y\n',
    }
    found = _found(project, files)
    assert [f["code"] for f in found] == ([expected] if expected else [])
    if expected == "FAL001":
        assert any(
            "third_party/flash-attention, whose flash_attn/__init__.py says 2.4.2" in n
            for n in found[0]["notes"]
        )


def test_an_old_vendored_copy_says_it_in_setup_py(project: Any) -> None:
    files = {
        "build.sh": SCRIPT,
        "third_party/flash-attention/setup.py": 'setup(\n    name="flash_attn",\n    version="1.0.0",\n)\n',
    }
    assert [f["code"] for f in _found(project, files)] == ["FAL001"]


@pytest.mark.parametrize(
    ("url", "fork"),
    [
        ("https://github.com/Dao-AILab/flash-attention.git", None),
        ("https://github.com/HazyResearch/flash-attention", None),
        ("https://github.com/ROCm/flash-attention.git", "ROCm/flash-attention"),
        ("git@github.com:skrider/flash-attention.git", "skrider/flash-attention"),
    ],
)
def test_a_submodule_not_checked_out_is_a_version_the_files_do_not_say(
    url: str, fork: str | None, project: Any
) -> None:
    (f,) = _found(project, {"build.sh": SCRIPT, ".gitmodules": GITMODULES.format(url=url)})
    assert (f["code"], f["severity"]) == ("FAL009", "info")
    said = f["notes"][0]
    assert f"a git submodule of {url}" in said and "not checked out here" in said
    assert (f"{fork} is a fork of Dao-AILab/flash-attention" in said) == (fork is not None)


def test_a_submodule_checked_out_is_read_like_a_vendored_copy(project: Any) -> None:
    files = {
        "build.sh": SCRIPT,
        ".gitmodules": GITMODULES.format(url="https://github.com/ROCm/flash-attention.git")
        + "\tbranch = main_perf\n",
        "third_party/flash-attention/flash_attn/__init__.py": '__version__ = "2.4.2"\n',
    }
    (f,) = _found(project, files)
    assert f["code"] == "FAL001"
    assert any(
        "a git submodule of https://github.com/ROCm/flash-attention.git (branch main_perf), whose "
        "flash_attn/__init__.py says 2.4.2; ROCm/flash-attention is a fork" in n
        for n in f["notes"]
    )


def test_a_folder_the_repository_does_not_hold(project: Any) -> None:
    (f,) = _found(project, {"build.sh": SCRIPT})
    assert f["code"] == "FAL009"
    assert "which the repository does not hold (no vendored copy, no git submodule)" in f["notes"][0]


@pytest.mark.parametrize(
    "script",
    [
        "pip install ./third_party/flash-attention --no-build-isolation\n",
        "pip install -e third_party/flash-attention --no-build-isolation\n",
        "cd third_party/flash-attention && python setup.py install\n",
        "pushd third_party/flash-attention\nMAX_JOBS=4 python setup.py bdist_wheel\npip install dist/*.whl\n",
    ],
)
def test_every_way_of_building_the_folder(script: str, project: Any) -> None:
    files = {
        "build.sh": script,
        "third_party/flash-attention/flash_attn/__init__.py": '__version__ = "2.3.6"\n',
    }
    assert [f["code"] for f in _found(project, files)] == ["FAL001"]


def test_a_script_may_run_from_the_top_of_the_repository(project: Any) -> None:
    # scripts/build.sh says `cd third_party/...`: from scripts/ there is none, from the top there is
    files = {
        "scripts/build.sh": SCRIPT,
        "third_party/flash-attention/flash_attn/__init__.py": '__version__ = "2.4.2"\n',
    }
    assert _codes(_found(project, files)) == [("FAL001", "scripts/build.sh", 2, "error")]


def test_hopper_in_a_vendored_copy_is_flash_attn_3(project: Any) -> None:
    files = {
        "build.sh": "cd third_party/flash-attention/hopper\npip install . --no-build-isolation\n",
        "third_party/flash-attention/flash_attn/__init__.py": '__version__ = "2.4.2"\n',
    }
    # flash-attn-3, judged on its own facts (FAL022, info), never as the copy's flash-attn 2.4.2
    assert _codes(_found(project, files)) == [("FAL022", "build.sh", 2, "info")]


def test_a_dockerfile_builds_the_folder_it_copied(project: Any) -> None:
    dockerfile = (
        "FROM pytorch/pytorch:2.4.0-cuda12.1-cudnn9-devel\nWORKDIR /wdr\nCOPY . .\n"
        "RUN cd flash-attention && pip install . --no-build-isolation\n"
    )
    files = {
        "Dockerfile": dockerfile,
        ".gitmodules": '[submodule "flash-attention"]\n\tpath = flash-attention\n\turl = https://github.com/Dao-AILab/flash-attention.git\n',
    }
    assert _codes(_found(project, files)) == [("FAL009", "Dockerfile", 4, "info")]
    files["flash-attention/flash_attn/__init__.py"] = '__version__ = "2.4.2"\n'
    assert _codes(_found(project, files)) == [("FAL001", "Dockerfile", 4, "error")]


def test_a_checkout_outside_the_project_is_never_read(
    project: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # a link in the repository to a copy elsewhere on the machine: fa-lint reads nothing outside
    outside = tmp_path_factory.mktemp("outside") / "flash-attention"
    (outside / "flash_attn").mkdir(parents=True)
    (outside / "flash_attn" / "__init__.py").write_text('__version__ = "2.4.2"\n')
    root = project({"build.sh": SCRIPT})
    (root / "third_party").mkdir()
    (root / "third_party" / "flash-attention").symlink_to(outside, target_is_directory=True)
    (f,) = _found(project, {})
    assert f["code"] == "FAL009"
    assert (root / "third_party" / "flash-attention" / "flash_attn" / "__init__.py").exists()  # it is there


def test_a_git_folder_is_never_read(project: Any) -> None:
    files = {
        "build.sh": "cd .git/flash-attention\npip install .\n",
        ".git/flash-attention/flash_attn/__init__.py": '__version__ = "2.4.2"\n',
    }
    assert [f["code"] for f in _found(project, files)] == ["FAL009"]


# --- item 7: fork tags ------------------------------------------------------------------------------

ROCM_CLONE = (
    "git clone --recursive https://github.com/ROCm/flash-attention.git /tmp/extensions/flash-attention\n"
    "cd /tmp/extensions/flash-attention\ngit checkout tags/{tag}\nGPU_ARCHS=gfx942 python setup.py install\n"
)


@pytest.mark.parametrize(
    ("tag", "code", "note"),
    [
        ("v2.6.3-cktile", None, None),  # 2.6.3 from ROCm's fork: paged KV
        ("v2.7.3-cktile", None, None),
        ("v2.8.4.1-cktile", "FAL008", "fa-lint has no record of the tag; read as the 2.8.4.1 it starts with"),
        ("main_perf", "FAL009", "ROCm/flash-attention is a fork of Dao-AILab/flash-attention"),
    ],
)
def test_a_fork_tag_is_the_version_it_names(
    tag: str, code: str | None, note: str | None, project: Any
) -> None:
    found = _found(project, {"setup.sh": ROCM_CLONE.format(tag=tag)})
    assert [f["code"] for f in found] == ([code] if code else [])
    if code == "FAL009":
        assert note in found[0]["notes"][0]


def test_an_old_fork_tag_is_judged_and_the_fork_named(project: Any) -> None:
    (f,) = _found(project, {"setup.sh": ROCM_CLONE.format(tag="v2.3.6-rocm")})
    assert f["code"] == "FAL001" and "flash-attn 2.3.6 built from source" in f["message"]
    assert any("ROCm/flash-attention is a fork of Dao-AILab/flash-attention" in n for n in f["notes"])


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("git+https://github.com/ROCm/flash-attention@v2.6.3-cktile", None),
        ("git+https://github.com/ROCm/flash-attention.git@v2.3.6-cktile", "FAL001"),
        (
            "git+https://github.com/Dao-AILab/flash-attention@v2.6.3-cktile",
            "FAL009",
        ),  # upstream has no such tag
    ],
)
def test_a_fork_tag_in_a_url(url: str, code: str | None, project: Any) -> None:
    found = _found(project, {"requirements.txt": f"flash-attn @ {url}\n"})
    assert [f["code"] for f in found] == ([code] if code else [])


def test_the_fork_table_matches_the_forks_tags() -> None:
    # every entry is what the fork's tag says; where the fork's mirror is here, checked at its tag
    doc = json.loads((REPO / "fa_lint" / "kb" / "forks.json").read_text())
    rocm = {e["tag"]: e for e in doc["forks"]["ROCm/flash-attention"]["tags"]}
    assert (rocm["v2.6.3-cktile"]["version"], rocm["v2.6.3-cktile"]["block_table"]) == ("2.6.3", True)
    assert rocm["v2.7.0-cktile"]["version"] == "2.7.0.post1"
    assert forks.tag_version("ROCm/flash-attention", "tags/v2.7.0-cktile") is not None
    mirror = REPO.parent / ".mirror" / "ROCm+flash-attention" / "repo"
    if mirror.is_dir():
        for tag, entry in rocm.items():
            text = subprocess.run(
                ["git", "-C", str(mirror), "show", f"{tag}:flash_attn/__init__.py"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            assert entry["evidence"]["text"] in text.splitlines()
