"""Notebooks, Windows batch and PowerShell scripts, and Makefile fragments (issue 42 item 3).

Each fixture is our own minimal file in the shape of a real one (named where it matters); each
expectation follows from the facts: IPython's input transformations (``!``, ``%pip``, ``%%bash``),
cmd.exe's and PowerShell's syntax, GNU make's ``include``, pip's platform tags, and the release facts in
fa_lint/kb (builds.json, gpus.json).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import lint, run


def notebook(*cells: list[str] | str, metadata: dict[str, Any] | None = None, kind: str = "code") -> str:
    """A notebook as Jupyter writes one (indent 1, each source line its own string)."""
    doc = {
        "cells": [
            {"cell_type": kind, "execution_count": None, "metadata": {}, "outputs": [], "source": c}
            for c in cells
        ],
        "metadata": metadata or {"kernelspec": {"name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(doc, indent=1)


def codes(found: list[dict[str, Any]]) -> list[tuple[str, int, str, str]]:
    return sorted((f["path"], f["line"], f["code"], f["severity"]) for f in found)


def at(found: list[dict[str, Any]], code: str) -> list[tuple[int, int]]:
    return [(f["line"], f["column"]) for f in found if f["code"] == code]


COLAB_T4 = {"accelerator": "GPU", "colab": {"gpuType": "T4", "provenance": []}}


# --- notebooks -----------------------------------------------------------------------------------


def test_a_notebook_is_found_and_each_shell_line_read_where_the_json_writes_it(project: Any) -> None:
    text = notebook(
        ["!pip install -q transformers\n", "!pip install flash-attn==2.4.2 --no-build-isolation\n"]
    )
    found = lint(project, {"train.ipynb": text}, "--select", "FAL001")
    line = text.splitlines().index('    "!pip install flash-attn==2.4.2 --no-build-isolation\\n"') + 1
    # the column of "flash-attn" in the JSON line: 4 blanks, the quote, "!pip install "
    assert at(found, "FAL001") == [(line, 19)]


@pytest.mark.parametrize(
    "cell",
    [
        ["%pip install flash-attn==2.4.2\n"],  # %pip runs pip through the shell
        ["%%capture\n", "!pip install flash-attn==2.4.2\n"],  # a %%capture cell is still IPython input
        "%%bash\nexport X=1\npip install flash-attn==2.4.2\n",  # a %%bash cell is one script
        ["!!pip install flash-attn==2.4.2\n"],
    ],
)
def test_what_ipython_hands_to_a_shell(project: Any, cell: list[str] | str) -> None:
    found = lint(project, {"nb.ipynb": notebook(cell)}, "--select", "FAL001")
    assert [f["code"] for f in found] == ["FAL001"]


@pytest.mark.parametrize(
    "cell",
    [
        ["# !pip install flash-attn==2.4.2\n"],  # a Python comment
        ["x = '!pip install flash-attn==2.4.2'\n"],  # a Python string
        ["%%writefile requirements.txt\n", "!pip install flash-attn==2.4.2\n"],  # a file's text
        ["%%markdown\n", "!pip install flash-attn==2.4.2\n"],
    ],
)
def test_what_ipython_never_runs_is_not_read(project: Any, cell: list[str]) -> None:
    assert lint(project, {"nb.ipynb": notebook(cell)}, "--select", "FAL001") == []


def test_a_markdown_cell_is_not_read(project: Any) -> None:
    text = notebook(["Run `!pip install flash-attn==2.4.2`\n"], kind="markdown")
    assert lint(project, {"nb.ipynb": text}, "--select", "FAL001") == []


def test_colab_t4_is_the_target_gpu(project: Any) -> None:
    # Colab's metadata (colab.gpuType "T4"), and an unpinned FA2 install: every FA2 release refuses 7.5
    text = notebook(["!pip install flash-attn --no-build-isolation\n"], metadata=COLAB_T4)
    (f,) = [f for f in lint(project, {"nb.ipynb": text}) if f["code"] == "FAL013"]
    assert f["severity"] == "error"
    assert "colab gpuType: T4" in " ".join(f["notes"])


def test_an_install_under_a_python_test_may_not_run(project: Any) -> None:
    # a line inside an `if` (indented) runs only when the test holds: FAL013 is a warning there
    text = notebook(
        [
            "import torch\n",
            "if torch.cuda.get_device_capability()[0] >= 8:\n",
            "    !pip install 'flash-attn>=2.5.0' --no-build-isolation\n",
        ],
        metadata=COLAB_T4,
    )
    assert [f["severity"] for f in lint(project, {"nb.ipynb": text}) if f["code"] == "FAL013"] == ["warning"]


def test_kaggle_accelerator_names_the_gpu(project: Any) -> None:
    text = notebook(
        ["!pip install flash-attn==2.6.3 --no-build-isolation\n"],
        metadata={"kaggle": {"accelerator": "nvidiaTeslaP100", "isGpuEnabled": True}},
    )
    found = [f for f in lint(project, {"nb.ipynb": text}) if f["code"] == "FAL013"]
    assert len(found) == 1 and "P100" in " ".join(found[0]["notes"])


def test_cd_magic_and_env_magic_carry_to_later_lines(project: Any) -> None:
    # %cd moves the kernel (a `!cd` would end with its own shell); %env sets the kernel's environment
    text = notebook(
        [
            "!git clone -b v2.3.3 https://github.com/Dao-AILab/flash-attention\n",
            "%cd flash-attention\n",
            "%env FLASH_ATTN_CUDA_ARCHS=80\n",
            "!pip install . --no-build-isolation\n",
        ]
    )
    found = lint(project, {"nb.ipynb": text}, "--select", "FAL001")
    # the build of the clone (found only in the folder %cd moved to) is judged at its tag
    clone = '    "!git clone -b v2.3.3 https://github.com/Dao-AILab/flash-attention\\n",'
    assert [f["line"] for f in found] == [text.splitlines().index(clone) + 1]


def test_a_python_value_in_a_shell_line_is_not_judged(project: Any) -> None:
    text = notebook(["FA = '2.4.2'\n", "!pip install flash-attn=={FA}\n"])
    found = lint(project, {"nb.ipynb": text}, "--select", "FAL001,FAL009")
    assert [f["code"] for f in found] == ["FAL009"]


def test_a_broken_notebook_is_a_located_problem(project: Any) -> None:
    found = lint(project, {"nb.ipynb": '{"cells": [\n'})
    assert [f["code"] for f in found] == ["FAL900"]


def test_noqa_counts_in_a_notebook_comment_only(project: Any) -> None:
    text = notebook(
        [
            "!pip install flash-attn==2.4.2  # noqa: FAL001\n",
            "!pip install flash-attn==2.3.3 --extra-index-url 'https://x/#noqa'\n",
        ]
    )
    found = lint(project, {"nb.ipynb": text}, "--select", "FAL001")
    assert [f["requirement"] for f in found] == ["flash-attn==2.3.3"]


def test_add_noqa_writes_inside_the_cells_string(project: Any) -> None:
    text = notebook(["!pip install flash-attn==2.4.2\n"])
    path = project({"nb.ipynb": text}) / "nb.ipynb"
    assert run("--isolated", "--select", "FAL001", "--add-noqa", ".").code == 0
    after = path.read_text()
    assert '"!pip install flash-attn==2.4.2  # noqa: FAL001\\n"' in after
    json.loads(after)  # still a notebook
    assert run("--isolated", "--select", "FAL001", ".").code == 0


def test_fix_quotes_with_the_shells_other_quote_in_a_notebook(project: Any) -> None:
    text = notebook(["!pip install flash-attn>=2.5.0 --no-build-isolation\n"])
    path = project({"nb.ipynb": text}) / "nb.ipynb"
    run("--isolated", "--select", "FAL007", "--fix", ".")
    after = path.read_text()
    assert "!pip install 'flash-attn>=2.5.0' --no-build-isolation" in after
    json.loads(after)


# --- Windows batch files -----------------------------------------------------------------------------


def test_batch_variables_continuations_and_comments(project: Any) -> None:
    # the shape of a ComfyUI install script (dicksondickson/ComfyUI-Clean-Install): :: and REM comments,
    # set, ^ continuations
    bat = (
        "@echo off\r\n"
        ":: pip install flash-attn==2.3.0\r\n"
        "REM pip install flash-attn==2.3.1\r\n"
        'set "FA_VERSION=2.4.2"\r\n'
        "pip install torch==2.4.0 ^\r\n"
        "  flash-attn==%fa_version% --no-build-isolation\r\n"
    )
    found = lint(project, {"install.bat": bat}, "--select", "FAL001")
    assert [(f["line"], f["column"], f["requirement"]) for f in found] == [(6, 3, "flash-attn==%fa_version%")]


def test_batch_hash_is_no_comment_and_rem_is(project: Any) -> None:
    bat = (
        "pip install flash-attn==2.4.2 & REM noqa: FAL001\n"
        "pip install flash-attn==2.3.3 # noqa: FAL001\n"
        'echo "& REM noqa: FAL001" & pip install flash-attn==2.3.4\n'
    )
    found = lint(project, {"install.cmd": bat}, "--select", "FAL001")
    assert [f["line"] for f in found] == [2, 3]


def test_a_linux_wheel_in_a_batch_file_is_refused_by_pip(project: Any) -> None:
    url = (
        "https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
        "flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl"
    )
    found = lint(project, {"install.bat": f"py -3.11 -m pip install {url}\n"}, "--select", "FAL014")
    assert [(f["severity"], f["message"].split(":")[0]) for f in found] == [
        ("error", "this wheel is for Linux (linux_x86_64), but it is installed on Windows")
    ]


def test_a_windows_wheel_on_windows_is_no_platform_finding(project: Any) -> None:
    url = (
        "https://github.com/kingbri1/flash-attention/releases/download/v2.7.4.post1/"
        "flash_attn-2.7.4.post1+cu124torch2.6.0cxx11abiFALSE-cp311-cp311-win_amd64.whl"
    )
    assert lint(project, {"install.bat": f"pip install {url}\n"}, "--select", "FAL014") == []


def test_a_build_on_windows_is_a_warning_its_toolkit_unknown(project: Any) -> None:
    bat = "pip install torch==2.4.0\npip install flash-attn==2.6.3 --no-build-isolation\n"
    found = lint(project, {"install.bat": bat}, "--select", "FAL014")
    assert [(f["line"], f["severity"]) for f in found] == [(2, "warning")]


def test_batch_or_and_blocks_may_not_run(project: Any) -> None:
    bat = (
        "pip install flash-attn==2.6.3 || pip install flash-attn==2.4.2\n"
        "if exist venv ( pip install flash-attn==2.3.3 )\n"
    )
    found = lint(project, {"install.bat": bat}, "--select", "FAL001")
    assert [f["line"] for f in found] == [1, 2]  # each judged on its own, though neither is certain


def test_batch_redirect_is_fal007(project: Any) -> None:
    found = lint(project, {"install.bat": "pip install flash-attn>=2.5.0\n"}, "--select", "FAL007")
    assert [f["code"] for f in found] == ["FAL007"]


def test_add_noqa_in_batch_writes_rem_and_refuses_a_continued_line(project: Any) -> None:
    path = project({"x.bat": "pip install flash-attn==2.4.2\r\npip install flash-attn==2.3.3 ^\r\n  -q\r\n"})
    r = run("--isolated", "--select", "FAL001", "--add-noqa", ".")
    assert (path / "x.bat").read_text().splitlines()[0] == "pip install flash-attn==2.4.2  & REM noqa: FAL001"
    assert "goes on with a '^'" in r.err


# --- PowerShell ----------------------------------------------------------------------------------------


def test_powershell_variables_strings_and_comments(project: Any) -> None:
    ps1 = (
        "# installer\n"
        "$FlashAttnVersion = '2.4.2'\n"
        "<# pip install flash-attn==2.3.0\n"
        "   pip install flash-attn==2.3.1 #>\n"
        '& $venvPy -m pip install "flash-attn==$flashattnversion" `\n'
        "    --no-build-isolation\n"
    )
    found = lint(project, {"install.ps1": ps1}, "--select", "FAL001")
    assert [(f["line"], f["requirement"]) for f in found] == [(5, "flash-attn==$flashattnversion")]


def test_powershell_env_variables_are_build_settings(project: Any) -> None:
    # $env:MAX_JOBS reaches pip's build; a plain $MAX_JOBS would not
    ps1 = "$env:FLASH_ATTN_CUDA_ARCHS = '90'\npip install flash-attn==2.7.4.post1 --no-build-isolation\n"
    project({"install.ps1": ps1, "job.sh": "#!/bin/bash\n"})
    from fa_lint.sources import powershell

    settings = [r for r in powershell.parse("install.ps1", ps1) if type(r).__name__ == "Setting"]
    assert [(s.kind, s.name, s.value) for s in settings] == [
        ("platform", "powershell script", "windows"),
        ("env", "FLASH_ATTN_CUDA_ARCHS", "90"),
    ]


def test_powershell_blocks_may_not_run_and_noqa_needs_a_comment(project: Any) -> None:
    ps1 = (
        "if ($IsWindows) { pip install flash-attn==2.3.3 }\n"
        "pip install flash-attn==2.4.2  # noqa: FAL001\n"
        "pip install 'flash-attn==2.3.4' --index-url 'https://x/#noqa'\n"
    )
    found = lint(project, {"install.ps1": ps1}, "--select", "FAL001")
    assert [f["line"] for f in found] == [1, 3]


# --- Makefile fragments ----------------------------------------------------------------------------------

FRAGMENT = "install-fa:\n\tpip install --no-build-isolation flash-attn==2.4.2\n"


def test_a_walk_finds_makefile_fragments(project: Any) -> None:
    found = lint(project, {"Makefile-flash": FRAGMENT, "rules.mk": FRAGMENT}, "--select", "FAL001")
    assert sorted(f["path"] for f in found) == ["Makefile-flash", "rules.mk"]


def test_an_included_fragment_of_any_name_is_read(project: Any) -> None:
    # build/ is a folder a walk skips; the include reaches it, and a name no pattern knows
    files = {
        "Makefile": "CONF := build\ninclude $(CONF)/flash.inc\n-include missing.mk\n",
        "build/flash.inc": FRAGMENT,
    }
    found = lint(project, files, "--select", "FAL001")
    assert [(f["path"], f["line"]) for f in found] == [("build/flash.inc", 2)]


def test_a_fragment_named_alone_is_reported(project: Any) -> None:
    project({"Makefile-gpu": FRAGMENT})
    r = run("--isolated", "--format", "json", "--select", "FAL001", "Makefile-gpu")
    assert [f["line"] for f in r.json["findings"]] == [2]


def test_make_f_in_a_dockerfile_reads_the_fragment_in_its_stage(project: Any) -> None:
    files = {
        "docker/Makefile-docker": FRAGMENT,
        "docker/Dockerfile": "FROM python:3.11-slim\nCOPY Makefile-docker /src/\nRUN make -f /src/Makefile-docker install-fa\n",
    }
    found = lint(project, files, "--select", "FAL001,FAL015")
    # judged alone (FAL001), and in the stage, where python:3.11-slim has no nvcc (FAL015)
    assert ("docker/Makefile-docker", 2, "FAL015") in {(f["path"], f["line"], f["code"]) for f in found}


def test_powershell_builds_a_wheel_url_from_variables(project: Any) -> None:
    # the shape of a Windows installer that assembles a community wheel's name (marcusau2/VOX-1-Audiobook-
    # Maker, InstallFlashAttention.ps1, which its Install-Flash-Attention.bat runs: values with trailing
    # comments, "${name}" references, & $PythonExe -m pip install ...)
    ps1 = (
        '$FlashAttnVersion = "2.6.3"\n'
        '$CudaVersion = "cu124"  # CUDA 12.4\n'
        "$Platform = 'linux_x86_64'\n"
        '$WheelFilename = "flash_attn-${FlashAttnVersion}+${CudaVersion}torch2.4-cp310-cp310-${Platform}.whl"\n'
        '$WheelUrl = "https://example.com/releases/${WheelFilename}"\n'
        "& $PythonExe -m pip install $WheelUrl --no-deps\n"
    )
    found = lint(project, {"install.ps1": ps1}, "--select", "FAL014")
    assert [(f["line"], f["severity"], f["requirement"]) for f in found] == [(6, "error", "$WheelUrl")]


def test_a_batch_variable_set_from_another_is_a_build_setting_of_its_value() -> None:
    from fa_lint.sources import batch

    bat = "set N=4\nset MAX_JOBS=%N%\npip install flash-attn==2.6.3 --no-build-isolation\n"
    settings = [(r.kind, r.name, r.value) for r in batch.parse("x.bat", bat) if type(r).__name__ == "Setting"]
    assert ("env", "MAX_JOBS", "4") in settings


def test_nested_batch_alternatives_are_bounded(project: Any) -> None:
    # `a || (b || (c ...` nests through || as deep as through blocks: a located problem, never a crash
    bat = "pip install x || (" * 400 + "pip install flash-attn==2.4.2" + ")" * 400 + "\n"
    found = lint(project, {"deep.bat": bat})
    assert [f["code"] for f in found] == ["FAL900"]
    assert "nested deeper than 200" in found[0]["message"]
