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


# --- issue 39: names that mapped to nothing ------------------------------------------------------------
# Expected capabilities are NVIDIA's (CUDA GPU list and its legacy list) by chip family: TU10x Turing
# 7.5 (RTX 2080 Ti, T600, T1200), GP10x Pascal 6.1 (GTX 1080 Ti, Quadro P-series), GP100 6.0, GV100
# Volta 7.0, GA102 Ampere 8.6 (RTX 3090), AD102 Ada 8.9 (RTX 4090), GK110 Kepler 3.5 (K40m, K20),
# Tegra X1 Maxwell 5.3 (Jetson Nano, TX1), Tegra X2 Pascal 6.2 (TX2), Thor 11.0 (Jetson T5000/T4000),
# GB20x Blackwell 12.0 (RTX PRO 2000 Blackwell).


@pytest.mark.parametrize(
    ("text", "cc"),
    [
        ("2080ti", "7.5"),  # --gres=gpu:2080ti:1: a Slurm site's type names the card by its number
        ("2080Ti", "7.5"),
        ("1080ti", "6.1"),
        ("3090", "8.6"),
        ("4090", "8.9"),
        ("1660super", "7.5"),
        ("Tesla K40m", "3.5"),  # a suffix no longer breaks the match
        ("K40m", "3.5"),
        ("tesla-k20xm", "3.5"),
        ("Jetson T5000", "11.0"),
        ("jetson-t4000", "11.0"),
        ("NVIDIA RTX PRO 2000 Blackwell", "12.0"),
        ("Quadro P6000", "6.1"),
        ("quadro_p4000", "6.1"),
        ("Quadro P620", "6.1"),
        ("Quadro GP100", "6.0"),
        ("Quadro GV100", "7.0"),
        ("NVIDIA T600", "7.5"),
        ("T1200", "7.5"),
        ("Jetson Nano", "5.3"),
        ("jetson-tx2", "6.2"),
        ("Jetson TX1", "5.3"),
        ("jetson-orin-nano", "8.7"),  # the Orin Nano is an Orin, not a Jetson Nano
        ("NVIDIA-RTX-PRO-Server-6000", "12.0"),  # AWS G7e's name for its RTX PRO 6000 Blackwell
    ],
)
def test_names_of_issue_39(text: str, cc: str) -> None:
    gpu = gpus.gpu_named(text)
    assert gpu is not None and gpu.capability == cc, text


@pytest.mark.parametrize("text", ["6000", "2000", "1234", "9090", "p4000x"])
def test_numbers_that_name_no_card(text: str) -> None:
    # a number that is no GeForce model (or one several RTX cards share) maps to nothing
    assert gpus.gpu_named(text) is None


@pytest.mark.parametrize(
    ("text", "name", "cc", "arch"),
    [
        # AWS, as the EC2 API names each family's GPU (Karpenter's generated table)
        ("p4de.24xlarge", "NVIDIA A100", "8.0", None),
        ("p5e.48xlarge", "NVIDIA H200", "9.0", None),
        ("p5en.48xlarge", "NVIDIA H200", "9.0", None),
        ("p6-b200.48xlarge", "NVIDIA B200", "10.0", None),
        ("ml.p6-b200.48xlarge", "NVIDIA B200", "10.0", None),  # SageMaker's ml. prefix
        ("p6-b300.48xlarge", "NVIDIA B300", "10.3", None),
        ("p6e-gb200.36xlarge", "NVIDIA GB200", "10.0", "aarch64"),  # Grace: Arm
        ("g6f.xlarge", "NVIDIA L4", "8.9", None),
        ("gr6.4xlarge", "NVIDIA L4", "8.9", None),
        ("p2.xlarge", "Tesla K80", "3.7", None),
        ("g3.4xlarge", "Tesla M60", "5.2", None),
        ("g7.12xlarge", "NVIDIA RTX PRO 4500 Blackwell", "12.0", None),
        ("ml.g4dn.xlarge", "NVIDIA T4", "7.5", None),
        # Azure VM sizes: the series' GPU, or the one the size names
        ("Standard_NC6", "Tesla K80", "3.7", None),
        ("Standard_NC6s_v2", "Tesla P100", "6.0", None),
        ("Standard_NC6s_v3", "NVIDIA V100", "7.0", None),
        ("Standard_ND40rs_v2", "NVIDIA V100", "7.0", None),
        ("Standard_ND96asr_v4", "NVIDIA A100", "8.0", None),
        ("Standard_NV12s_v3", "Tesla M60", "5.2", None),
        ("Standard_NC24ads_A100_v4", "NVIDIA A100", "8.0", None),
        ("Standard_NC4as_T4_v3", "NVIDIA T4", "7.5", None),
        ("Standard_ND96isr_H100_v5", "NVIDIA H100", "9.0", None),
        ("Standard_NV36ads_A10_v5", "NVIDIA A10", "8.6", None),
        ("Standard_ND128isr_NDR_GB200_v6", "NVIDIA GB200", "10.0", None),  # two words before the version
    ],
)
def test_instance_families_of_issue_39(text: str, name: str, cc: str, arch: str | None) -> None:
    gpu = gpus.instance(text)
    assert gpu is not None and (gpu.name, gpu.capability) == (name, cc), text
    assert gpus.instance_arch(text) == arch


@pytest.mark.parametrize(
    ("text", "gpu_family"),
    [
        ("g4ad.xlarge", True),  # an AMD Radeon Pro V520: a GPU, not one fa-lint judges
        ("Standard_NV4as_v4", True),  # AMD MI25
        ("Standard_ND96isr_MI300X_v5", True),
        ("p7.48xlarge", True),  # a GPU family newer than the table
        ("g4-standard-48", True),  # Google's G4: not in the table
        ("m5.large", False),
        ("c7i.2xlarge", False),
        ("n1-standard-8", False),
        ("Standard_D4s_v5", False),
    ],
)
def test_gpu_instances_fa_lint_cannot_map(text: str, gpu_family: bool) -> None:
    assert gpus.instance(text) is None
    assert gpus.gpu_instance(text) is gpu_family


def test_every_aws_family_read_from_karpenter_names_where() -> None:
    read = [r for r in DOC["instances"] if r["source"] == "aws-karpenter"]
    assert {"p4de", "p5e", "p5en", "p6-b200", "p6-b300", "g6f", "gr6", "p2", "g3"} <= {
        r["family"] for r in read
    }
    for r in read:
        assert r["evidence"].startswith("aws/karpenter-provider-aws@"), r


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda d: _family(d, "p6-b200").update(gpu="NVIDIA B2000"), "no GPU row named 'NVIDIA B2000'"),
        (lambda d: _family(d, "g4ad").update(vendor=None), "no GPU and no vendor"),
        (lambda d: _family(d, "p5e").pop("evidence"), "names the file, commit and line"),
        (
            lambda d: d["model_numbers"]["rules"].__setitem__(1, ["^[2-5]0[5-9]0(?:ti|super)?$", "gtx-"]),
            "'3090'",
        ),
    ],
)
def test_a_wrong_instance_row_fails_the_script(change: Any, says: str) -> None:
    doc = copy.deepcopy(DOC)
    change(doc)
    assert any(says in p for p in build_gpus_kb.problems(doc)), build_gpus_kb.problems(doc)


def _family(doc: dict[str, Any], family: str) -> dict[str, Any]:
    (row,) = [r for r in doc["instances"] if r["family"] == family and "cloud" not in r]
    return row


# The shape of Karpenter's generated table (website/content/en/*/reference/instance-types.md at
# aws/karpenter-provider-aws), written here by hand: a family heading, then each type's label rows.
_KARPENTER = """## g4ad Family
### `g4ad.xlarge`
 |karpenter.k8s.aws/instance-gpu-manufacturer|amd|
 |karpenter.k8s.aws/instance-gpu-name|radeon-pro-v520|
 |kubernetes.io/arch|amd64|
## g5g Family
### `g5g.xlarge`
 |karpenter.k8s.aws/instance-gpu-manufacturer|nvidia|
 |karpenter.k8s.aws/instance-gpu-name|t4g|
 |kubernetes.io/arch|arm64|
## m5 Family
### `m5.large`
 |kubernetes.io/arch|amd64|
## p6-b300 Family
### `p6-b300.48xlarge`
 |karpenter.k8s.aws/instance-gpu-manufacturer|nvidia|
 |karpenter.k8s.aws/instance-gpu-name|b300|
 |kubernetes.io/arch|amd64|
"""


def test_the_karpenter_table_reader() -> None:
    families = build_gpus_kb._families(_KARPENTER, "aws/karpenter-provider-aws@" + "0" * 40 + ":t.md")
    assert set(families) == {"g4ad", "g5g", "p6-b300"}  # m5 has no GPU
    rows = {r["family"]: r for r in build_gpus_kb.aws_rows(DOC, families)}
    assert rows["g4ad"]["gpu"] is None and rows["g4ad"]["vendor"] == "amd"
    assert rows["g5g"]["gpu"] == "NVIDIA T4" and rows["g5g"]["arch"] == "aarch64"
    assert rows["p6-b300"]["gpu"] == "NVIDIA B300" and rows["p6-b300"]["evidence"].endswith(
        ":t.md:17 |karpenter.k8s.aws/instance-gpu-name|b300|"
    )


def test_sagemaker_b200_is_judged_as_g4dn_is(project: Any) -> None:
    # flash-attn 2.6.3 checks `is_sm90 || is_sm8x` (csrc/flash_attn/flash_api.cpp at v2.6.3) and builds
    # sm_80/sm_90 only: a B200 (10.0) fails as a T4 (7.5) does; a SageMaker job's GPU is a possibility
    # for every install of the repository, so both are the same finding
    found = {}
    for instance in ("ml.g4dn.xlarge", "ml.p6-b200.48xlarge"):
        files = {
            "launch.py": f"import sagemaker\nEST = dict(instance_type='{instance}')\n",
            "requirements.txt": "flash-attn==2.6.3\n",
        }
        found[instance] = _fal013(project, files)
    assert found["ml.p6-b200.48xlarge"] == found["ml.g4dn.xlarge"] == [("requirements.txt", 1, "warning")]


@pytest.mark.parametrize(
    "files",
    [
        {"job.sh": "#!/bin/bash\n#SBATCH --gres=gpu:2080ti:1\npip install flash-attn==2.6.3\n"},
        {
            "job.sh": "#!/bin/bash\n#SBATCH --gres=gpu:1080ti\npip install flash-attn==2.6.3\n"
        },  # one, no count
        {"job.sh": "#!/bin/bash\n#SBATCH -G 2080Ti:2\npip install flash-attn==2.6.3\n"},
        {"sky.yaml": "resources:\n  accelerators: 2080ti:1\nsetup: pip install flash-attn==2.6.3\n"},
        {
            "pod.yaml": "spec:\n  nodeSelector:\n    nvidia.com/gpu.product: Tesla-K40m\n",
            "requirements.txt": "flash-attn==2.6.3\n",
        },
    ],
)
def test_short_spellings_are_judged(project: Any, files: dict[str, str]) -> None:
    # Turing (7.5), Pascal (6.1) and Kepler (3.5) are all below 2.6.3's 8.0
    (found,) = _fal013(project, files)
    assert found[2] in ("error", "warning")


@pytest.mark.parametrize(
    "files",
    [
        {
            "launch.py": "import sagemaker\nX = dict(instance_type='ml.g4ad.xlarge')\n",
            "requirements.txt": "flash-attn==2.6.3\n",
        },
        {"sky.yaml": "resources:\n  instance_type: p7.48xlarge\nsetup: pip install flash-attn==2.6.3\n"},
        {
            "sky.yaml": "resources:\n  instance_type: Standard_NV4as_v4\nsetup: pip install flash-attn==2.6.3\n"
        },
    ],
)
def test_a_gpu_instance_fa_lint_cannot_map_is_not_judged(project: Any, files: dict[str, str]) -> None:
    (found,) = _fal013(project, files)
    assert found[2] == "info"


def test_a_cpu_instance_says_nothing(project: Any) -> None:
    sky = "resources:\n  instance_type: m5.large\nsetup: pip install flash-attn==2.6.3\n"
    assert _fal013(project, {"sky.yaml": sky}) == []


@pytest.mark.parametrize(
    ("launch", "severity"),
    [
        # runpod-python's create_pod(name, image_name, gpu_type_id, ...) (runpod/api/ctl_commands.py):
        # the GPU type by position or keyword; an RTX 2080 Ti is Turing (7.5), below 2.6.3's 8.0
        ('import runpod\npod = runpod.create_pod("t", "img", "NVIDIA GeForce RTX 2080 Ti")\n', "warning"),
        (
            'from runpod import create_pod\np = create_pod("t", gpu_type_id="NVIDIA GeForce RTX 2080 Ti")\n',
            "warning",
        ),
        # a GPU type fa-lint cannot map is said, not passed
        ('import runpod\npod = runpod.create_pod("t", "img", gpu_type_id="NVIDIA Quux 9")\n', "info"),
    ],
)
def test_runpod_gpu_types(project: Any, launch: str, severity: str) -> None:
    files = {"launch.py": launch, "requirements.txt": "flash-attn==2.6.3\n"}
    assert _fal013(project, files) == [("requirements.txt", 1, severity)]


def test_a_runpod_endpoint_pool_names_no_gpu(project: Any) -> None:
    # an endpoint's gpu_ids name pools of several GPUs ("AMPERE_16"): nothing to judge, nothing said
    launch = 'import runpod\nrunpod.create_endpoint(name="e", template_id="t", gpu_ids="AMPERE_16")\n'
    assert _fal013(project, {"launch.py": launch, "requirements.txt": "flash-attn==2.6.3\n"}) == []
