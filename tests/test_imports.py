"""The import budget: what a run loads, so that a heavy module cannot creep back into the default path.

Each run is a fresh interpreter started without ``site`` (whose import hooks, an editable install's
among them, would load modules first) and told where fa-lint and its dependencies are; what it
imports from ``main()`` on is compared with what that run has no use for. Speed itself is measured
in ``benchmarks/bench.py``, never here.
"""

from __future__ import annotations

import json
import site
import subprocess
import sys
from pathlib import Path

import pytest

from fa_lint.sources import SOURCES
from tests.conftest import REPO

# Static mode never imports these (the runtime check does, on a GPU host).
NEVER = {"torch", "transformers", "flash_attn", "flash_attn_interface"}
# Libraries a format needs, loaded for a file of that format only.
PARSERS = {"yaml", "tree_sitter", "tree_sitter_bash", "pip_requirements_parser", "packaging.pylock"}
# What no ordinary run needs: the network and archive stacks pip-requirements-parser and
# importlib.resources pull in, hashing (SARIF and GitLab fingerprints), pathlib (SARIF and GitLab
# paths), the Unicode database (code frames of non-ASCII lines), argparse's shutil.
STACKS = {
    "urllib.request",
    "urllib.parse",
    "http.client",
    "email",
    "ssl",
    "socket",
    "importlib.resources",
    "pkgutil",
    "zipfile",
    "tempfile",
    "shutil",
    "pathlib",
    "hashlib",
    "unicodedata",
    "optparse",
}
FORMATS = {s.module_name for s in SOURCES.values()}
LAYERS = {"fa_lint.engine", "fa_lint.sources", "fa_lint.rules", "fa_lint.report", "fa_lint.model"}

RUN = """
import io, json, sys
sys.path[:0] = json.loads(sys.argv[1])
before = set(sys.modules)
from fa_lint.cli import main
code = main(sys.argv[2:], out=io.StringIO(), err=io.StringIO())
print(json.dumps({"code": code, "modules": sorted(set(sys.modules) - before)}))
"""


def _loaded(tmp_path: Path, files: dict[str, str], *argv: str) -> set[str]:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    paths = json.dumps([str(REPO), *site.getsitepackages()])
    proc = subprocess.run(
        [sys.executable, "-S", "-c", RUN, paths, *argv], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["code"] in (0, 1)
    assert "fa_lint.cli" in found["modules"]  # fa-lint was imported in this run, not before it
    return set(found["modules"])


def _within(modules: set[str], names: set[str]) -> set[str]:
    """The loaded modules that are, or are inside, one of ``names``."""
    return {m for m in modules if m in names or any(m.startswith(n + ".") for n in names)}


def test_version_loads_no_checker(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path, {}, "--version")
    assert not _within(loaded, NEVER | PARSERS | STACKS | LAYERS)


def test_a_plain_requirements_file_loads_its_reader_only(tmp_path: Path) -> None:
    text = "-c constraints.txt\nflash-attn==2.4.2  # pinned\ntorch>=2.3 ; sys_platform == 'linux'\n"
    loaded = _loaded(tmp_path, {"requirements.txt": text, "constraints.txt": "numpy<2\n"}, "requirements.txt")
    assert not _within(loaded, NEVER | PARSERS | STACKS)
    assert _within(loaded, FORMATS) == {"fa_lint.sources.requirements"}


def test_pip_syntax_brings_its_parser(tmp_path: Path) -> None:
    # the budget test sees what it is meant to see: this file needs pip-requirements-parser
    text = f"flash-attn==2.4.2 --hash=sha256:{'0' * 64}\n"
    loaded = _loaded(tmp_path, {"requirements.txt": text}, "requirements.txt")
    assert "pip_requirements_parser" in loaded
    assert not _within(loaded, NEVER | {"yaml", "tree_sitter"})


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("uv.lock", 'version = 1\n\n[[package]]\nname = "flash-attn"\nversion = "2.4.2"\n'),
        ("Pipfile.lock", '{"default": {"flash-attn": {"version": "==2.4.2"}}, "develop": {}}'),
    ],
)
def test_a_lock_needs_no_requirement_parser(tmp_path: Path, name: str, text: str) -> None:
    loaded = _loaded(tmp_path, {name: text}, name)
    # nor packaging.utils, whose packaging.tags imports subprocess, platform and logging
    pep508 = {"packaging.requirements", "packaging.markers", "packaging.utils", "packaging.tags"}
    assert not _within(loaded, NEVER | PARSERS | STACKS | pep508)


# packaging's PEP 508 parser and what packaging.markers brings (packaging.tags: subprocess, platform,
# logging): for requirements with a marker, a URL or a spelling beyond the plain one only.
PEP508 = {
    "packaging.requirements",
    "packaging.markers",
    "packaging._parser",
    "packaging.utils",
    "packaging.tags",
}


def test_plain_requirements_need_no_requirement_parser(tmp_path: Path) -> None:
    text = "flash-attn==2.5.8\ntorch>=2.3,<2.6\ntransformers[torch]~=4.44.0\nnumpy\n"
    docker = "FROM python:3.11\nRUN pip install 'flash-attn==2.5.8' 'torch>=2.3,<2.6' && pip install numpy\n"
    files = {"requirements.txt": text, "Dockerfile": docker}
    for name in files:
        loaded = _loaded(tmp_path, files, name)
        assert not _within(loaded, NEVER | STACKS | PEP508 | {"pip_requirements_parser"}), name
    marker = "flash-attn==2.5.8 ; sys_platform == 'linux'\n"
    assert "packaging.requirements" in _loaded(tmp_path, {"requirements.txt": marker}, "requirements.txt")


def test_a_check_defines_no_dataclass(tmp_path: Path) -> None:
    # importing dataclasses (and the inspect module it needs) and generating each class's code cost
    # about 10 ms of every start: a check's own records are NamedTuples and plain classes
    text = "flash-attn==2.5.8\ntorch>=2.3,<2.6\n"
    docker = "FROM pytorch/pytorch:2.3.1-cuda12.1-cudnn8-devel\nRUN pip install flash-attn==2.4.2 vllm\n"
    files = {"requirements.txt": text, "Dockerfile": docker}
    for name in files:
        loaded = _loaded(tmp_path, files, name)
        assert "fa_lint.machine.environments" in loaded, name  # the run went as far as its environments
        assert not _within(loaded, {"dataclasses", "inspect"}), name


def test_a_dockerfile_loads_the_grammar_without_its_package(tmp_path: Path) -> None:
    text = "FROM python:3.11\nRUN pip install --no-cache-dir 'flash-attn==2.4.2' && echo done\n"
    loaded = _loaded(tmp_path, {"Dockerfile": text}, "Dockerfile")
    assert "tree_sitter" in loaded
    assert not _within(loaded, NEVER | STACKS | {"yaml", "tree_sitter_bash", "pip_requirements_parser"})


def test_poetry_constraints_are_read_for_poetry_tables_only(tmp_path: Path) -> None:
    pep621 = '[project]\nname = "app"\nrequires-python = ">=3.10"\ndependencies = ["flash-attn>=2.5"]\n'
    loaded = _loaded(tmp_path, {"pyproject.toml": pep621}, "pyproject.toml")
    assert "fa_lint.sources.pyproject" in loaded
    assert "fa_lint.syntax.poetry" not in loaded
    poetry = '[tool.poetry.dependencies]\npython = "^3.10"\nflash-attn = "^2.5"\n'
    assert "fa_lint.syntax.poetry" in _loaded(tmp_path, {"pyproject.toml": poetry}, "pyproject.toml")


# The machine's checks and knowledge (FAL013-FAL015, FAL011's machine notes): for files that say
# something about GPUs, platforms, images or toolkits only.
MACHINE = {
    "fa_lint.machine.target",
    "fa_lint.kb.builds",
    "fa_lint.kb.images",
    "fa_lint.kb.gpus",
    "fa_lint.rules._installs",
    "fa_lint.rules._gpu",
    "fa_lint.rules._platform",
    "fa_lint.rules._nvcc",
}


def test_files_that_say_nothing_of_the_machine_load_none_of_its_checks(tmp_path: Path) -> None:
    text = "flash-attn==2.5.8\ntorch==2.3.1\n"
    assert not _within(_loaded(tmp_path, {"requirements.txt": text}, "requirements.txt"), MACHINE)
    docker = "FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\nRUN pip install flash-attn==2.5.8\n"
    assert _within(_loaded(tmp_path, {"Dockerfile": docker}, "Dockerfile"), MACHINE) >= {
        "fa_lint.rules._nvcc",
        "fa_lint.kb.images",
    }


def test_a_clean_run_loads_no_comment_scanner(tmp_path: Path) -> None:
    # suppression comments are read only for a file with a finding, so a clean file (most pre-commit
    # runs) loads neither the comment scanners nor Python's tokenizer
    clean = {"requirements.txt": "torch==2.4.1  # cpu\nflash-attn==2.6.3\n"}
    loaded = _loaded(tmp_path, clean, "requirements.txt")
    assert not _within(loaded, {"fa_lint.syntax.comments", "tokenize"})
    # nor a file with a finding whose comments cannot suppress anything (no noqa, no fa-lint: ignore)
    dirty = {"requirements.txt": "flash-attn==2.4.2  # old\n"}
    assert not _within(_loaded(tmp_path, dirty, "requirements.txt"), {"fa_lint.syntax.comments"})
    waived = {"requirements.txt": "flash-attn==2.4.2  # noqa: FAL009\n"}
    assert _within(_loaded(tmp_path, waived, "requirements.txt"), {"fa_lint.syntax.comments"})


def test_python_with_a_word_and_no_install_loads_no_shell_model(tmp_path: Path) -> None:
    # a *.py picked for the code layer's words is handed to python-app, which reads only a file that
    # runs an install of flash-attn (or imports an app framework): the shell model stays unloaded
    code = (
        "from transformers import AutoModel\nm = AutoModel.from_pretrained('x', attn_implementation='sdpa')\n"
    )
    loaded = _loaded(tmp_path, {"train.py": code}, ".")
    assert "fa_lint.code.python" in loaded  # the file was read by the code layer
    assert not _within(loaded, {"fa_lint.shell", "fa_lint.sources.python_commands", "tree_sitter"})
    runs = "import subprocess\nsubprocess.run(['pip', 'install', 'flash-attn==2.4.2'])\n"
    assert "fa_lint.sources.python_commands" in _loaded(tmp_path, {"train.py": code + runs}, ".")


@pytest.mark.parametrize(
    ("name", "text", "grammar", "reader"),
    [
        (
            "setup.ps1",
            "pip install flash-attn==2.4.2\n",
            "tree_sitter_powershell",
            "fa_lint.sources.powershell",
        ),
        ("setup.bat", "pip install flash-attn==2.4.2\r\n", "tree_sitter_batch", "fa_lint.sources.batch"),
    ],
)
def test_a_windows_script_loads_its_grammar_without_its_package(
    tmp_path: Path, name: str, text: str, grammar: str, reader: str
) -> None:
    # each grammar package's __init__ imports importlib.resources (zipfile, tempfile, shutil, pathlib)
    # for a query fa-lint never reads: only its extension module is loaded
    loaded = _loaded(tmp_path, {name: text}, name)
    assert {"tree_sitter", reader} <= loaded  # the script was read with its grammar
    assert not _within(loaded, NEVER | STACKS | {grammar})


def test_a_workflow_loads_no_toml_reader(tmp_path: Path) -> None:
    # the workflow reader names the installer-release setting of the build-settings module, which reads
    # TOML tables: only its types come from the TOML reader, so neither it nor tomllib is loaded
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    flow = "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pip install flash-attn==2.4.2\n"
    loaded = _loaded(tmp_path, {".github/workflows/ci.yml": flow}, ".")
    assert "fa_lint.sources.workflow" in loaded
    assert not _within(loaded, {"tomllib", "fa_lint.syntax.tomldoc"})
