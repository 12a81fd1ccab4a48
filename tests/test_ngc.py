"""NGC PyTorch containers (fa_lint/kb/ngc.json) and FAL023.

Expectations come from the sources each row quotes, not from fa-lint: NGC 23.11 keeps flash-attn 2.0.4
(pip's own "Requirement already satisfied: flash-attn ... (2.0.4)", flash-attention#709); 23.12 is torch
2.2.0a0+81ea7a4 (flash-attention#784); 24.10 is torch 2.5.0a0+e000cf0 (the container's banner); 25.12 is
2.10.0a0+b4e4ee81d3 on CUDA 13.1.0 (NVIDIA's release notes). flash-attn's setup.py (v2.5.6, as every
2.x) asks for the wheel ``+cu12torch2.2cxx11abiTRUE`` on NGC 23.12's torch, and 2.5.6's release
workflow built torch 2.2 wheels; 2.5.0 has none for torch 2.5 (its workflow stops at 2.2).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from typing import Any

import pytest

from fa_lint.kb import ngc
from tests.conftest import REPO, lint, run

sys.path.insert(0, str(REPO / "scripts"))
import build_ngc_kb

DATA = json.loads((REPO / "scripts/data/ngc.json").read_text(encoding="utf-8"))


def test_rows() -> None:
    facts = ngc.load()
    assert facts.release("23.11").flash_attn == "2.0.4"
    assert facts.release("23.12").torch == "2.2.0a0+81ea7a4"
    assert facts.release("24.10").torch == "2.5.0a0+e000cf0"
    assert (facts.release("25.12").torch, facts.release("25.12").cuda) == ("2.10.0a0+b4e4ee81d3", "13.1.0")
    assert facts.release("25.02").torch == "2.7.0a0+6c54963f75"
    assert facts.release("25.10").cuda == "13.0.2"
    assert facts.release("25.07").torch is None  # no source read: unknown, never guessed
    # issue 39: each field from its own source
    assert facts.release("25.01").flash_attn == "2.4.2"
    assert (facts.release("25.01").python, facts.release("25.01").cuda) == ("3.12", "12.8")
    row = facts.release("24.10")
    assert (row.cuda, row.python, row.ubuntu) == ("12.6.2", "3.10", "22.04")
    assert facts.release("25.10").flash_attn == "2.7.4.post1"
    assert facts.release("24.02").flash_attn == "2.4.2"
    assert facts.release("25.03").torch == "2.7.0a0+7c8ec84dab"
    assert "gpt-neox/pull/1170" in facts.release("24.02").source_of("flash_attn")
    assert ngc.tag("nvcr.io/nvidia/pytorch:24.10-py3") == "24.10"
    assert ngc.tag("nvcr.io/nvidia/pytorch:24.10-py3-igpu") == "24.10"
    assert ngc.tag("nvcr.io/nvidia/tritonserver:24.10-py3") is None


def test_the_kb_file_is_the_scripts() -> None:
    r = subprocess.run(
        [sys.executable, str(REPO / "scripts/build_ngc_kb.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(
    ("tag", "field", "value", "says"),
    [
        ("23.12", "torch", ["2.2.0a0+81ea7a5", "fa-784"], "torch '2.2.0a0+81ea7a5' is not in its source"),
        ("24.10", "torch", ["2.5.0", "evo2-201"], "is not an NGC build"),
        ("25.12", "cuda", ["12.9", "rel-25-12"], "cuda '12.9' is not in its source"),
        ("23.11", "flash_attn", ["2.0.4", "rel-25-12"], "its source does not name the release"),
        ("25.01", "flash_attn", ["2.5.8", "starvla-2501"], "flash_attn '2.5.8' is not in its source"),
        ("24.10", "cuda", ["12.6.2", "nowhere"], "unknown source 'nowhere'"),
        ("24.10", "driver", ["560", "yolov9-qat-2410"], "is not one of"),
    ],
)
def test_a_wrong_row_fails_the_script(tag: str, field: str, value: list[str], says: str) -> None:
    doc = copy.deepcopy(DATA)
    doc["releases"][tag][field] = value
    assert any(says in p for p in build_ngc_kb.problems(doc)), build_ngc_kb.problems(doc)


def test_every_month_has_an_entry() -> None:
    doc = copy.deepcopy(DATA)
    del doc["releases"]["24.07"]
    assert "24.07: no entry" in " ".join(build_ngc_kb.problems(doc))


def _found(project: Any, dockerfile: str) -> list[dict[str, Any]]:
    return lint(project, {"Dockerfile": dockerfile}, "--select", "FAL023")


def test_a_wheel_for_pypis_torch_on_ngcs_torch(project: Any) -> None:
    (f,) = _found(
        project,
        "FROM nvcr.io/nvidia/pytorch:23.12-py3\nRUN pip install flash-attn==2.5.6 --no-build-isolation\n",
    )
    assert f["severity"] == "warning" and "torch 2.2, not for the container's 2.2.0a0+81ea7a4" in f["message"]
    assert any("undefined symbol" in n for n in f["notes"])


def test_through_a_stage(project: Any) -> None:
    (f,) = _found(
        project,
        "FROM nvcr.io/nvidia/pytorch:23.12-py3 AS base\nFROM base\nRUN pip install flash-attn==2.5.6 --no-build-isolation\n",
    )
    assert f["severity"] == "warning"


def test_no_wheel_for_the_torch_compiles(project: Any) -> None:
    # 2.5.0's workflow built wheels for torch up to 2.2: on 24.10's torch 2.5 setup.py compiles
    (f,) = _found(
        project,
        "FROM nvcr.io/nvidia/pytorch:24.10-py3\nRUN pip install flash-attn==2.5.0 --no-build-isolation\n",
    )
    assert f["severity"] == "info" and any(
        "compiles it against the container's torch" in n for n in f["notes"]
    )


def test_the_container_flash_attn_is_kept(project: Any) -> None:
    (f,) = _found(
        project, "FROM nvcr.io/nvidia/pytorch:23.11-py3\nRUN pip install flash-attn --no-build-isolation\n"
    )
    assert f["severity"] == "warning" and "no-op" in f["message"] and "without paged KV" in f["message"]
    # -U replaces it: not a no-op any more
    (g,) = _found(
        project, "FROM nvcr.io/nvidia/pytorch:23.11-py3\nRUN pip install -U flash-attn --no-build-isolation\n"
    )
    assert "no-op" not in g["message"]


def test_an_unpinned_install_keeps_whatever_flash_attn_the_container_ships(project: Any) -> None:
    # NGC ships a flash-attn from 23.08; pip's default strategy keeps an installed distribution that
    # satisfies the requirement, so `pip install flash-attn` (no version, no -U) builds nothing, even on
    # a release whose flash-attn version has no row (25.11): FAL023 says so, and there is no FAL012
    project({"Dockerfile": "FROM nvcr.io/nvidia/pytorch:25.11-py3\nRUN pip install flash-attn\n"})
    found = run("--format", "json", "--isolated", ".").json["findings"]
    (f,) = [f for f in found if f["code"] == "FAL023"]
    assert f["severity"] == "info" and "no-op" in f["message"]
    assert not [f for f in found if f["code"] == "FAL012"]
    # -U, or a version, asks pip for a flash-attn of its own: it builds, and FAL012 judges that
    project({"Dockerfile": "FROM nvcr.io/nvidia/pytorch:25.11-py3\nRUN pip install -U flash-attn\n"})
    found = run("--format", "json", "--isolated", ".").json["findings"]
    assert "no-op" not in next(f for f in found if f["code"] == "FAL023")["message"]
    assert [f for f in found if f["code"] == "FAL012"]


def test_an_unknown_release_is_said_not_judged(project: Any) -> None:
    (f,) = _found(
        project,
        "FROM nvcr.io/nvidia/pytorch:25.07-py3\nRUN pip install flash-attn==2.6.3 --no-build-isolation\n",
    )
    assert f["severity"] == "info" and "its torch is not known" in f["message"]
    assert any("no row for NGC 25.07" in n for n in f["notes"])


@pytest.mark.parametrize(
    "dockerfile",
    [
        # the stage installs its own torch (or vLLM pins one): the other rules judge against that torch
        "FROM nvcr.io/nvidia/pytorch:23.12-py3\nRUN pip install torch==2.4.0\nRUN pip install flash-attn==2.6.3\n",
        "FROM nvcr.io/nvidia/pytorch:25.11-py3\nRUN pip install vllm==0.15.1\nRUN pip install flash-attn==2.8.3\n",
        # a wheel file: setup.py's wheel guess does not run
        "FROM nvcr.io/nvidia/pytorch:23.12-py3\nRUN pip install https://example.com/flash_attn-2.5.6-cp310-cp310-linux_x86_64.whl\n",
        # not an NGC PyTorch container
        "FROM nvcr.io/nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN pip install torch==2.4.1 && pip install flash-attn==2.6.3\n",
    ],
)
def test_not_judged_here(project: Any, dockerfile: str) -> None:
    assert _found(project, dockerfile) == []


def test_an_uninstalled_container_flash_attn_is_not_kept(project: Any) -> None:
    (f,) = _found(
        project,
        "FROM nvcr.io/nvidia/pytorch:23.11-py3\nRUN pip uninstall -y flash_attn\n"
        "RUN pip install flash-attn --no-build-isolation\n",
    )
    assert "no-op" not in f["message"]


# --- issue 39: the container's own flash-attn on the paged path -------------------------------------
# NGC 25.01 ships flash-attn 2.4.2 (scripts/data/ngc.json, its source quoted there), which has no
# block_table (it ships in 2.5.0: csrc/flash_attn/flash_api.cpp at v2.5.0); transformers takes the
# block-table decode path for flash-attn 2 on CUDA from 5.13.0 (fa_lint/kb/transformers.json, read from
# its source); generate_batch() is continuous batching. NGC 25.10 ships 2.7.4.post1, which has it.

_SERVE = (
    "from transformers import AutoModelForCausalLM\n"
    "m = AutoModelForCausalLM.from_pretrained('x', attn_implementation='flash_attention_2')\n"
    "out = m.generate_batch(inputs=[[1, 2]])\n"
)


def _stage(base: str, *runs: str, transformers: str = "transformers==5.13.0") -> dict[str, str]:
    lines = [f"FROM {base}", "COPY requirements.txt .", "RUN pip install -r requirements.txt", *runs]
    return {
        "Dockerfile": "\n".join(lines) + "\n",
        "requirements.txt": transformers + "\n",
        "serve.py": _SERVE,
    }


def _from_line(project: Any, files: dict[str, str]) -> list[tuple[str, int, str, str]]:
    found = lint(project, files, "--select", "FAL001,FAL023")
    return [(f["code"], f["line"], f["severity"], f["message"]) for f in found if f["path"] == "Dockerfile"]


def test_the_container_flash_attn_without_paged_kv_is_fal001_on_the_from_line(project: Any) -> None:
    project(_stage("nvcr.io/nvidia/pytorch:25.01-py3"))
    (f,) = run("--isolated", "--format", "json", "--select", "FAL001", ".").json["findings"]
    assert (f["code"], f["path"], f["line"], f["severity"]) == ("FAL001", "Dockerfile", 1, "error")
    assert "ships flash-attn 2.4.2" in f["message"] and "no paged KV" in f["message"]
    assert any("NGC 25.01 ships flash-attn 2.4.2" in n for n in f["notes"])
    assert any("generate_batch() at serve.py:3" in n for n in f["notes"])


@pytest.mark.parametrize(
    "files",
    [
        # the stage installs its own flash-attn over the container's (FAL023 judges that install)
        _stage(
            "nvcr.io/nvidia/pytorch:25.01-py3", "RUN pip install -U flash-attn==2.8.3 --no-build-isolation"
        ),
        # or removes it
        _stage("nvcr.io/nvidia/pytorch:25.01-py3", "RUN pip uninstall -y flash-attn"),
        # or brings its own torch
        _stage("nvcr.io/nvidia/pytorch:25.01-py3", "RUN pip install torch==2.6.0"),
        # a transformers that never sends flash-attn 2 a block table
        _stage("nvcr.io/nvidia/pytorch:25.01-py3", transformers="transformers==4.56.2"),
        # a release whose flash-attn has paged KV
        _stage("nvcr.io/nvidia/pytorch:25.10-py3"),
        # before 23.08 the container ships no flash-attn
        _stage("nvcr.io/nvidia/pytorch:23.05-py3"),
        # no transformers in the stage: the code cannot run there
        {**_stage("nvcr.io/nvidia/pytorch:25.01-py3"), "requirements.txt": "numpy\n"},
        # code that does not take the paged path
        {**_stage("nvcr.io/nvidia/pytorch:25.01-py3"), "serve.py": "import transformers\nprint(1)\n"},
        # an implementation the block-table path does not take
        {
            **_stage("nvcr.io/nvidia/pytorch:25.01-py3"),
            "serve.py": _SERVE.replace("flash_attention_2", "sdpa"),
        },
    ],
)
def test_the_from_line_says_nothing_where_the_paged_path_is_not_the_containers(
    project: Any, files: dict[str, str]
) -> None:
    assert [f for f in _from_line(project, files) if f[1] == 1 and f[0] == "FAL001"] == []
    assert [f for f in _from_line(project, files) if f[1] == 1 and f[2] == "info"] == []


def test_a_stage_built_on_another_is_the_one_judged(project: Any) -> None:
    files = _stage("nvcr.io/nvidia/pytorch:25.01-py3 AS base")
    files["Dockerfile"] += "FROM base\nRUN pip install -U flash-attn==2.8.3 --no-build-isolation\n"
    assert [f for f in _from_line(project, files) if f[0] == "FAL001"] == []
    files["Dockerfile"] = files["Dockerfile"].replace(
        "RUN pip install -U flash-attn==2.8.3 --no-build-isolation\n", ""
    )
    assert [f[:3] for f in _from_line(project, files) if f[0] == "FAL001"] == [("FAL001", 1, "error")]


def test_a_release_whose_flash_attn_is_not_known_is_said_not_judged(project: Any) -> None:
    # 24.10: its torch, CUDA, Python and Ubuntu have sources; its flash-attn none
    ((code, line, severity, message),) = _from_line(project, _stage("nvcr.io/nvidia/pytorch:24.10-py3"))
    assert (code, line, severity) == ("FAL023", 1, "info") and "not judged" in message
