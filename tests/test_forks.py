"""A clone or git URL is a flash-attn build by what it builds, not by what its repository is called.

Facts (fa_lint/kb/forks.json, from scripts/build_forks_kb.py reading each repository's setup.py):
fxmarty/flash-attention-rocm's setup.py has ``name="flash_attn"``; vllm-project/flash-attention's
``name="vllm-flash-attn"``; ROCm/flash-attention's ``PACKAGE_NAME = "flash_attn"``, and its tag
v2.6.3-cktile says 2.6.3 (block_table since 2.5.0). A repository the knowledge base does not list
builds flash-attn when it is named flash-attention, when the file names what it installs
(``flash-attn @ git+URL``, ``#egg=flash_attn``, a uv source keyed ``flash-attn``), or when its build
command sets a variable only flash-attn's setup.py reads (``FLASH_ATTENTION_*``, ``FLASH_ATTN_*``:
setup.py's os.getenv calls). ``git clone`` into a folder that holds one already fails; a Makefile's
targets run apart, each cloning into the same folder.
"""

from __future__ import annotations

from typing import Any

from fa_lint.kb import forks
from tests.conftest import lint, run


def _found(project: Any, files: dict[str, str], *args: str) -> list[dict[str, Any]]:
    return [f for f in lint(project, files, *args) if f["code"] != "FAL012"]


def test_the_knowledge_base_says_what_a_repository_builds() -> None:
    assert forks.builds("https://github.com/fxmarty/flash-attention-rocm") == "flash-attn"
    assert (
        forks.builds("git+https://github.com/vllm-project/flash-attention.git@v2.5.8.post1")
        == "vllm-flash-attn"
    )
    assert forks.builds("https://github.com/Dao-AILab/flash-attention") == "flash-attn"  # by its name
    assert forks.builds("https://github.com/someone/fa-rocm") is None
    assert forks.fork("https://github.com/fxmarty/flash-attention-rocm") == "fxmarty/flash-attention-rocm"
    assert forks.fork("https://github.com/vllm-project/flash-attention") is None  # no flash-attn fork
    assert forks.fork("https://github.com/someone/fa-rocm") is None
    assert forks.fork("https://github.com/someone/fa-rocm", named=True) == "someone/fa-rocm"


def test_a_fork_named_otherwise_is_a_flash_attn_build(project: Any) -> None:
    script = (
        "git clone https://github.com/fxmarty/flash-attention-rocm fa\n"
        "cd fa && git checkout v2.0.4 && python setup.py install\n"
    )
    (f,) = _found(project, {"build.sh": script})
    assert (f["code"], f["line"]) == ("FAL001", 2)  # 2.0.4 has no flash_attn_with_kvcache
    assert any("fxmarty/flash-attention-rocm is a fork of Dao-AILab/flash-attention" in n for n in f["notes"])


def test_a_repository_named_flash_attention_that_builds_another_package_is_not(project: Any) -> None:
    script = (
        "git clone https://github.com/vllm-project/flash-attention\n"
        "cd flash-attention && python setup.py install\n"
        "pip install git+https://github.com/vllm-project/flash-attention@v2.5.8.post1\n"
    )
    assert _found(project, {"build.sh": script}) == []  # vllm-flash-attn, twice


def test_nothing_says_an_unknown_repository_builds_flash_attn(project: Any) -> None:
    # its name does not: no finding, and the folder is not read as one the repository vendors
    for folder in ("fa-rocm", "flash-attention"):
        script = f"git clone https://github.com/someone/fa-rocm {folder}\ncd {folder} && pip install .\n"
        assert _found(project, {"build.sh": script}) == [], folder


def test_a_build_command_with_flash_attn_s_variables_says_so(project: Any) -> None:
    script = (
        "git clone https://github.com/someone/fa-rocm\n"
        "cd fa-rocm && git checkout v2.4.2-rocm\n"
        "FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE python setup.py install\n"
    )
    (f,) = _found(project, {"build.sh": script})
    assert (f["code"], f["line"]) == ("FAL001", 2)  # the fork's tag starts with the release it carries
    assert any("someone/fa-rocm is a fork of Dao-AILab/flash-attention" in n for n in f["notes"])


def test_a_later_clone_into_the_folder_is_what_builds(project: Any) -> None:
    makefile = (
        "cuda:\n\tgit clone https://github.com/Dao-AILab/flash-attention fa\n\tcd fa && git checkout v2.4.2\n"
        "other:\n\tgit clone https://github.com/someone/not-flash fa\n\tcd fa && python setup.py install\n"
    )
    project({"Makefile": makefile})
    found = run("--format", "json", "--isolated", "--select", "FAL001,FAL009", "Makefile").json["findings"]
    assert found == []  # the folder holds someone/not-flash when it is built


def test_a_git_url_named_flash_attn_reads_its_fork_s_tags(project: Any) -> None:
    script = (
        'pip install "flash-attn @ git+https://github.com/someone/fa-rocm@v2.6.3-cktile"\n'
        'pip install "git+https://github.com/someone/fa-rocm@v2.4.2-cktile#egg=flash_attn"\n'
    )
    found = _found(project, {"setup.sh": script})
    assert [(f["code"], f["line"]) for f in found] == [("FAL001", 2)]  # 2.6.3 has paged KV, 2.4.2 not
    pyproject = (
        '[project]\nname = "x"\nversion = "0"\ndependencies = ["flash-attn"]\n'
        '[tool.uv]\nno-build-isolation-package = ["flash-attn"]\n[tool.uv.sources]\n'
        'flash-attn = { git = "https://github.com/ROCm/flash-attention", tag = "v2.6.3-cktile" }\n'
    )
    found = [
        f
        for f in _found(project, {"pyproject.toml": pyproject}, "--min-version", "2.7.0")
        if f["path"] == "pyproject.toml"
    ]
    # the source's 2.6.3, below the policy; the unpinned requirement installs only what the source says
    assert [(f["code"], f["line"]) for f in found] == [("FAL001", 8)]
    assert "2.6.3" in found[0]["message"]
