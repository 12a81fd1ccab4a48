"""Issue 20 (the torch an environment ends with) on fixtures of real projects' shapes; where each comes
from and why each verdict holds: tests/data/realworld/torch/README.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import assert_cases_listed, realworld_findings, run

CASES = Path(__file__).parent / "data" / "realworld" / "torch"

EXPECTED: dict[str, list[tuple[str, int, str]]] = {
    "verl-ngc-vllm08": [],
    "verl-sglang": [],
    "verl-sglang-wheel": [("FAL005", 6, "warning")],  # a torch 2.5 wheel on torch 2.6: older, may load
    "verl-ngc-vllm": [],
    "openrlhf-fa-before-vllm": [("FAL005", 3, "warning"), ("FAL012", 3, "warning")],
    "openrlhf-vllm-then-wheel": [],
    "sakana-rlt": [("FAL002", 5, "warning")],
    "koble-dl-images": [("FAL002", 3, "warning")],
    "koble-dl-images-kept": [("FAL002", 3, "warning")],
}


def test_every_case_is_listed() -> None:
    assert_cases_listed(CASES, EXPECTED)


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_realworld(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert realworld_findings(CASES / case, monkeypatch) == sorted(EXPECTED[case])


def test_an_image_that_ships_torchvision_keeps_its_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES / "koble-dl-images-kept")
    (f,) = run("--isolated", "--format", "json", ".").json["findings"]
    # the floor is the policy's: pip takes the newest release of the range, whatever the floor
    assert f["message"].endswith("require flash-attn>=2.5.0")
    (machine,) = run("wheel", "--format", "json", ".").json["machines"]
    assert machine["machine"]["torch"] == "2.6"
    assert machine["said"]["torch"] == "the base image pytorch/pytorch:2.6.0-cuda12.4-cudnn9-devel"


def test_the_moved_torch_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES / "openrlhf-fa-before-vllm")
    (f,) = [f for f in run("--isolated", "--format", "json", ".").json["findings"] if f["code"] == "FAL005"]
    assert "vllm==0.10.2 (line 4) then installs torch 2.8.0" in f["message"]
    assert [r["line"] for r in f["related_locations"]] == [4]
