"""GPU names (fa_lint/kb/gpus.json): every name files use, and a name fa-lint cannot map said as not judged.

Expected capabilities come from NVIDIA's facts, not from fa-lint: each GPU's chip family (Turing
TU10x/TU11x: 7.5; Ampere GA10x: 8.6; Ada AD10x: 8.9; Hopper GH100: 9.0; Blackwell GB100: 10.0,
GB20x: 12.0, GB10: 12.1; Thor: 11.0 since CUDA 13) as NVIDIA's CUDA GPU list gives them, and
flash-attn 2.6.3's ``TORCH_CHECK(is_sm90 || is_sm8x, ...)`` (csrc/flash_attn/flash_api.cpp at v2.6.3).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from typing import Any

import pytest

from fa_lint.kb import gpus
from tests.conftest import REPO, lint, run

sys.path.insert(0, str(REPO / "scripts"))
import build_gpus_kb

DOC = json.loads((REPO / "fa_lint/kb/gpus.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("text", "cc"),
    [
        # the 17 names of issue 31 that gpus.json lacked, as files write them
        ("RTX2070", "7.5"),
        ("nvidia-geforce-rtx-2070", "7.5"),
        ("RTX-2070-SUPER", "7.5"),
        ("rtx_2070", "7.5"),  # a Slurm gres type: --gres=gpu:rtx_2070:1
        ("TITAN RTX", "7.5"),
        ("titan_rtx", "7.5"),
        ("GTX1660", "7.5"),
        ("gtx-1660-ti", "7.5"),
        ("Quadro RTX 6000", "7.5"),
        ("quadro_rtx_6000", "7.5"),
        ("RTX3070", "8.6"),
        ("NVIDIA-GeForce-RTX-3050", "8.6"),
        ("A2", "8.6"),
        ("nvidia-a16", "8.6"),
        ("RTX A4500", "8.6"),
        ("NVIDIA-RTX-A4500", "8.6"),
        ("RTX 5000 Ada", "8.9"),
        ("NVIDIA-RTX-5000-Ada-Generation", "8.9"),
        ("L20", "8.9"),
        ("nvidia-h20", "9.0"),
        ("B100", "10.0"),
        ("RTX5050", "12.0"),
        ("jetson-agx-thor", "11.0"),
        ("DGX Spark", "12.1"),
    ],
)
def test_names_of_the_issue(text: str, cc: str) -> None:
    gpu = gpus.named(text)
    assert gpu is not None and gpu.capability == cc, text


@pytest.mark.parametrize(
    "text",
    [
        "RTX6000",  # Quadro RTX 6000 (7.5) or RTX 6000 Ada (8.9): names neither
        "rtx-5000",
        "a2-highgpu-1g",  # a GCP instance type of A100s, not the A2
        "thor",  # a host name as often as a GPU
        "RTX9999",
    ],
)
def test_names_that_map_to_no_one_gpu(text: str) -> None:
    assert gpus.named(text) is None


def test_the_committed_table_passes_its_script() -> None:
    r = subprocess.run(
        [sys.executable, str(REPO / "scripts/build_gpus_kb.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr


def _row(doc: dict[str, Any], name: str) -> dict[str, Any]:
    (row,) = [r for r in doc["gpus"] if r["name"] == name]
    return row


@pytest.mark.parametrize(
    ("name", "field", "value", "says"),
    [
        ("GeForce RTX 2070", "cc", "8.6", "Turing GPUs have compute capability ['7.5'], not 8.6"),
        ("NVIDIA H20", "arch", "Ada Lovelace", "Ada Lovelace GPUs have compute capability ['8.9'], not 9.0"),
        ("NVIDIA L20", "source", "nowhere", "unknown source 'nowhere'"),
        ("NVIDIA A16", "match", ["a1"], "'A16' matches no row"),
        ("Quadro RTX 6000", "match", ["rtx-?6000"], "matches ['NVIDIA RTX 6000 Ada', 'Quadro RTX 6000']"),
    ],
)
def test_a_wrong_row_fails_the_script(name: str, field: str, value: object, says: str) -> None:
    doc = copy.deepcopy(DOC)
    _row(doc, name)[field] = value
    assert any(says in p for p in build_gpus_kb.problems(doc)), build_gpus_kb.problems(doc)


def test_every_row_has_a_source_and_a_family() -> None:
    for row in DOC["gpus"]:
        assert row["source"] in DOC["sources"] and row["arch"] in DOC["architectures"], row["name"]


# --- FAL013 on the names ---------------------------------------------------------------------------


def _fal013(project: Any, files: dict[str, str]) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["severity"]) for f in lint(project, files, "--select", "FAL013")]


def test_rtx2070_is_judged_as_rtx2080_is(project: Any) -> None:
    # both Turing (7.5); 2.6.3 refuses anything below 8.0
    for name in ("RTX2070", "RTX2080"):
        sky = f"resources:\n  accelerators: {name}:1\nsetup: pip install flash-attn==2.6.3\n"
        assert _fal013(project, {"sky.yaml": sky}) == [("sky.yaml", 3, "error")], name


@pytest.mark.parametrize(
    ("files", "path", "line"),
    [
        (
            {"sky.yaml": "resources:\n  accelerators: RTX9999:1\nsetup: pip install flash-attn==2.6.3\n"},
            "sky.yaml",
            3,
        ),
        # a Slurm gres type of the site's own naming
        (
            {"job.sh": "#!/bin/bash\n#SBATCH --gres=gpu:bigcard:2\npip install flash-attn==2.6.3\n"},
            "job.sh",
            3,
        ),
        # a Kubernetes node label in a manifest that installs nothing speaks for the repository
        (
            {
                "pod.yaml": "spec:\n  nodeSelector:\n    nvidia.com/gpu.product: NVIDIA-RTX-6000\n",
                "requirements.txt": "flash-attn==2.6.3\n",
            },
            "requirements.txt",
            1,
        ),
    ],
)
def test_an_unknown_gpu_name_is_not_judged(project: Any, files: dict[str, str], path: str, line: int) -> None:
    assert _fal013(project, files) == [(path, line, "info")]


def test_an_unknown_name_beside_a_failing_one_is_a_note(project: Any) -> None:
    project({"sky.yaml": "resources:\n  accelerators: [T4, RTX9999]\nsetup: pip install flash-attn==2.6.3\n"})
    (f,) = run("--format", "json", "--isolated", "--select", "FAL013", ".").json["findings"]
    assert f["severity"] == "warning" and any("not judged: `RTX9999`" in n for n in f["notes"])


def test_runner_labels_are_not_gpu_names(project: Any) -> None:
    # a runner label need not name a GPU at all: an unknown one says nothing
    wf = (
        "jobs:\n  t:\n    runs-on: [self-hosted, linux, big-box]\n    steps:\n"
        "      - run: pip install flash-attn==2.6.3\n"
    )
    assert _fal013(project, {".github/workflows/t.yml": wf}) == []


@pytest.mark.parametrize(
    ("text", "name", "arch"),
    [
        # Google Cloud: A2 is A100, A3 High/Mega/Edge H100, A3 Ultra H200, A4 B200, A4X GB200 (Grace: Arm), G2 L4
        ("a2-highgpu-1g", "NVIDIA A100", None),
        ("a2-ultragpu-8g", "NVIDIA A100", None),
        ("a3-megagpu-8g", "NVIDIA H100", None),
        ("a3-ultragpu-8g", "NVIDIA H200", None),
        ("a4-highgpu-8g", "NVIDIA B200", None),
        ("a4x-highgpu-4g", "NVIDIA GB200", "aarch64"),
        ("g2-standard-4", "NVIDIA L4", None),
        # AWS: G6e is L40S; G5g is Graviton2 (Arm) with T4G (Turing, 7.5)
        ("g6e.xlarge", "NVIDIA L40S", None),
        ("g5g.2xlarge", "NVIDIA T4", "aarch64"),
    ],
)
def test_cloud_instance_families(text: str, name: str, arch: str | None) -> None:
    gpu = gpus.instance(text)
    assert gpu is not None and gpu.name == name
    assert gpus.instance_arch(text) == arch


@pytest.mark.parametrize("text", ["n1-standard-4", "e2-medium", "m5.large", "g2-standard"])
def test_instance_types_without_a_gpu(text: str) -> None:
    assert gpus.instance(text) is None
