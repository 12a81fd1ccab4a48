"""Issue 42, item 7 (first part): a serving engine's flag that selects a FlashAttention backend on a GPU
without its kernels. SGLang's ``--attention-backend fa3`` (also ``--prefill-``/``--decode-attention-
backend``, from 0.5.2) starts only where the release's assert lets it (0.4.6: SM >= 9; from 0.4.9: SM
8.x for a model without MLA, or 9.x; never 7.x or 10.x/12.x): scripts/build_serving_kb.py reads each
wheel's assert and evaluates it per major (fa_lint/kb/serving.json). The GPUs are those the same file
names. vLLM is not judged: its get_flash_attn_version falls back to FA2 where FA3 is unsupported
("3. fallback for unsupported combinations", vllm fa_utils.py) rather than failing.

Real shapes: SGLang's own error text ("FlashAttention v3 Backend requires SM>=80 and SM<=90. Please use
`--attention-backend flashinfer`"), SkyPilot tasks and Slurm scripts that start
``python -m sglang.launch_server`` (our own minimal files)."""

from __future__ import annotations

from typing import Any

import pytest
from packaging.version import Version

from fa_lint.kb import serving
from tests.conftest import lint


def test_each_release_reads_its_own_assert() -> None:
    old, mid, new = (
        serving.release(Version("0.4.6")),
        serving.release(Version("0.4.9")),
        serving.release(None),
    )
    assert (old.fa3[8], old.fa3[9], old.fa3[10]) == ((False, False), (True, True), (True, True))
    assert (mid.fa3[8], mid.fa3[9], mid.fa3[10]) == ((True, False), (True, True), (False, False))
    assert new.fa3[7] == (False, False) and new.fa3[12] == (False, False)
    assert "--prefill-attention-backend" in new.flags and "fa4" in new.choices
    assert "attention_registry.py" in new.fa3_at and "assert" in new.fa3_at


def _fal013(project: Any, files: dict[str, str]) -> list[tuple[str, str]]:
    return [(f["path"], f["severity"]) for f in lint(project, files) if f["code"] == "FAL013"]


SKY = "resources:\n  accelerators: {gpu}:1\nrun: |\n  python -m sglang.launch_server --model-path m --attention-backend {b}\n"


@pytest.mark.parametrize(
    ("gpu", "backend", "expected"),
    [
        ("T4", "fa3", [("serve.yaml", "error")]),
        ("V100", "fa4", [("serve.yaml", "error")]),
        ("B200", "fa3", [("serve.yaml", "error")]),
        ("H100", "fa3", []),
        ("A100", "fa3", []),  # 8.x starts for a model without MLA: which model it serves is not judged
    ],
)
def test_skypilot_task(project: Any, gpu: str, backend: str, expected: list[tuple[str, str]]) -> None:
    assert _fal013(project, {"serve.yaml": SKY.format(gpu=gpu, b=backend)}) == expected


def test_slurm_script_and_flag_spellings(project: Any) -> None:
    script = (
        "#!/bin/bash\n#SBATCH --gres=gpu:b200:8\n"
        "python -m sglang.launch_server --model-path m --decode-attention-backend=fa3 --tp 8\n"
    )
    assert _fal013(project, {"serve.sh": script}) == [("serve.sh", "error")]


def test_a_file_that_names_no_gpu_is_not_judged(project: Any) -> None:
    script = "#!/bin/bash\npython -m sglang.launch_server --model-path m --attention-backend fa3\n"
    assert _fal013(project, {"serve.sh": script}) == []


def test_only_sglang_and_only_fa3_fa4(project: Any) -> None:
    script = (
        "#!/bin/bash\n#SBATCH --gres=gpu:t4:1\n"
        "python -m sglang.launch_server --model-path m --attention-backend flashinfer\n"
        "echo --attention-backend fa3\n"
        "vllm serve m --attention-backend FLASH_ATTN\n"
    )
    assert _fal013(project, {"serve.sh": script}) == []
