"""``fa-lint releases``: the release table, its filters, JSON, and the generated docs page."""

from __future__ import annotations

import json

from tests.conftest import REPO, run


def versions(*args: str) -> list[str]:
    return [r["version"] for r in json.loads(run("releases", "--format", "json", *args).out)["releases"]]


def wheel_answers(*args: str) -> dict[str, str]:
    doc = json.loads(run("releases", "--format", "json", *args).out)
    return {r["version"]: r["wheel"] for r in doc["releases"]}


def table(out: str) -> dict[str, dict[str, str]]:
    """The text table by column, cut where the dashes under each title are."""
    lines = out.splitlines()
    spans, at = [], 0
    for dashes in lines[1].split("  "):
        spans.append((at, at + len(dashes)))
        at += len(dashes) + 2
    cut = [[line[a:b].strip() for a, b in spans] for line in lines]
    titles = cut[0]
    return {row[0]: dict(zip(titles, row, strict=True)) for row in cut[2:]}


def test_table_lists_every_release_with_its_facts() -> None:
    r = run("releases")
    assert r.code == 0
    rows = table(r.out)
    assert list(rows["2.5.0"]) == [
        "release",
        "date",
        "paged KV",
        "page block",
        "torch wheels",
        "CPython",
        "CUDA",
        "torch unknown",
        "accepts",
        "wheel archs",
        "built on",
    ]
    assert len(rows) == 76
    # v2.5.0 publish.yml: torch 1.12.1 ... 2.2.0.dev20231130, python 3.7-3.11, cuda 11.8.0/12.2.2; its
    # setup.py asks for cu122, wheels attached later are cu12: no torch is unknown
    assert list(rows["2.5.0"].values())[:8] == [
        "2.5.0",
        "2024-01-23",
        "yes",
        "256",
        "1.12 1.13 2.0 2.1 2.2*",
        "3.7-3.11",
        "cu118 cu122",
        "",
    ]
    assert rows["2.4.2"]["paged KV"] == "no"
    no_tag = rows["2.8.3.post2"]
    assert [no_tag[c] for c in ("torch wheels", "CPython", "CUDA", "torch unknown")] == ["?", "?", "?", "?"]
    assert rows["2.0.4"]["torch wheels"] == "none"  # setup.py fetches no wheel before 2.0.6
    assert rows["0.2.0"]["torch wheels"] == "none"  # no tag, but the sdist's setup.py has no BASE_WHEEL_URL
    # v2.8.3 (tagged 2025-08-14): torch 2.4-2.8 built, 2.9 attached later; its complete asset listing
    # (fa_lint/kb/assets.json, 2026-03-12) decides 2.9 and 2.10, and torch 2.11 to 2.15 (the newest torch
    # on PyPI, 2026-10-28) came out after it
    assert rows["2.8.3"]["torch wheels"] == "2.4 2.5 2.6 2.7 2.8 2.9+"
    assert rows["2.8.3"]["torch unknown"] == "2.11-2.15"
    # v2.8.1's listing has torch 2.8, 2.9 and 2.10 wheels attached after its tag
    assert rows["2.8.1"]["torch wheels"] == "2.4 2.5 2.6 2.7 2.8+ 2.9+ 2.10+"
    # v2.8.3.post1 was tagged 2026-06-10: torch 2.9-2.12 came out before it and are not in its matrix
    assert rows["2.8.3.post1"]["torch unknown"] == "2.13-2.15"


def test_the_machine_columns() -> None:
    rows = table(run("releases").out)
    # flash_api.cpp: TORCH_CHECK(is_sm90 || is_sm8x) up to 2.7.2.post1, is_sm8x_min from 2.7.3;
    # fmha_api.cpp (1.x): is_sm90 || is_sm8x || is_sm75
    assert rows["2.6.3"]["accepts"] == "8.x 9.0"
    assert rows["2.7.3"]["accepts"] == "8.0+"
    assert rows["1.0.9"]["accepts"] == "7.5 8.x 9.0"
    # publish.yml: cuda-version ['12.4.1'] at 2.7.4.post1 (nvcc below 12.8: no sm_100/sm_120), ['12.9.1']
    # at 2.8.3; runners ubuntu-20.04 and ubuntu-22.04
    assert (rows["2.7.4.post1"]["wheel archs"], rows["2.7.4.post1"]["built on"]) == (
        "80 90",
        "ubuntu-20.04 (glibc 2.31)",
    )
    assert (rows["2.8.3"]["wheel archs"], rows["2.8.3"]["built on"]) == (
        "80 90 100 120",
        "ubuntu-22.04 (glibc 2.35)",
    )
    # v2.1.2.post3: cuda-version ['11.6.2', '11.7.1', '11.8.0', '12.1.0', '12.2.0']: sm_90 from nvcc 11.8
    assert rows["2.1.2.post3"]["wheel archs"] == "11.6: 80; 11.7: 80; 11.8: 80 90; 12.1: 80 90; 12.2: 80 90"
    assert rows["2.8.3.post2"]["wheel archs"] == "?"  # no tag: no workflow
    doc = {r["version"]: r for r in json.loads(run("releases", "--format", "json").out)["releases"]}
    assert doc["2.8.3"]["build"]["wheels"]["runners"] == ["ubuntu-22.04"]
    assert doc["2.8.3"]["build"]["nvcc_floor"] == "11.7"
    assert {a["sm"]: a["nvcc"] for a in doc["2.8.3"]["build"]["archs"]} == {
        "80": None,
        "90": "11.8",
        "100": "12.8",
        "120": "12.8",
    }


def test_filters() -> None:
    # torch 2.4 wheels: the 2.4.0.dev builds of 2.5.9.post1-2.6.2, released 2.4.0 from 2.6.3 to 2.8.3.post1
    assert versions("--torch", "2.4")[0] == "2.5.9.post1"
    assert versions("--torch", "2.4")[-1] == "2.8.3.post1"
    # no release pairs torch 2.4 with CPython 3.13 (v2.7.x and v2.8.x exclude it), and torch 2.4 came
    # out before all of them: no, not unknown
    assert versions("--torch", "2.4", "--python", "3.13") == []
    # CUDA 11: built up to 2.7.3 (2.7.4 builds cuda-version ['12.4.1'] only)
    assert [v for v, w in wheel_answers("--cuda", "11").items() if w == "yes"][-1] == "2.7.3"
    # torch 2.8 (2025-08-06): built by 2.8.3 and 2.8.3.post1; 2.7.0.post2-2.8.2 were tagged before it.
    # The asset listings (2026-03-12) show torch 2.8 wheels attached to 2.7.3 and 2.8.1, and none on
    # 2.8.0.post2 and 2.8.2 (complete listings); 2.7.3's and 2.7.4.post1's listings are partial
    assert wheel_answers("--torch", "2.8") == {
        **dict.fromkeys(("2.7.0.post2", "2.7.1.post4", "2.7.2.post1", "2.7.4.post1"), "unknown"),
        "2.7.3": "yes",
        "2.8.1": "yes",
        "2.8.3": "yes",
        "2.8.3.post1": "yes",
    }
    assert "2.8.3" not in versions("--torch", "2.8", "--cuda", "11.8")


def test_a_torch_newer_than_the_tags_is_unknown_not_absent() -> None:
    # torch 2.9 came out 2025-10-15: after every tag from 2.7.0.post2 to 2.8.3, whose setup.py asks for
    # the cu12 name later wheels get; v2.8.3 has one (seen), v2.8.3.post1 (2026-06-10) came after it
    answers = wheel_answers("--torch", "2.9")
    assert answers["2.8.3"] == answers["2.8.1"] == "yes"
    assert answers["2.7.0.post2"] == "unknown"  # no listing of its assets
    assert "2.8.2" not in answers  # its complete listing (2026-03-12) has no torch 2.9 wheel
    assert "2.8.3.post1" not in answers and "2.6.3" not in answers
    assert "unknown" in run("releases", "--torch", "2.9").out


def test_torch_2_1_with_cuda_12_1_fetches_the_cu122_wheel() -> None:
    # v2.2.3.post2-v2.3.5 setup.py: "if torch_version_raw.major == 2 and torch_version_raw.minor == 1
    # [and torch_cuda_version.major == 12]: torch_cuda_version = parse("12.2")"; their matrices build
    # torch 2.1 with cuda 12.2.0 only
    found = versions("--torch", "2.1", "--cuda", "12.1")
    for version in ("2.2.3.post2", "2.2.5", "2.3.0", "2.3.1.post1", "2.3.5"):
        assert version in found
    assert "2.3.6" in found  # parse("11.8") if major == 11 else parse("12.2")


def test_json_record() -> None:
    doc = json.loads(run("releases", "--format", "json", "--torch", "2.3").out)
    first = doc["releases"][0]
    assert first["version"] == "2.5.1.post1"
    torch = {t["version"]: t["nightly"] for t in first["wheels"]["torch"]}
    assert torch["2.3"] == "2.3.0.dev20240126"
    assert first["wheel"] == "yes" and first["tagged"].startswith("2024-01-30")
    every = {r["version"]: r for r in json.loads(run("releases", "--format", "json").out)["releases"]}
    assert (every["2.5.6"]["paged_varlen"], every["2.5.7"]["paged_varlen"]) == (False, True)
    assert (every["2.6.3"]["rocm_page_block_multiple"], every["2.7.0.post2"]["rocm_page_block_multiple"]) == (
        None,
        128,
    )
    assert every["2.8.3"]["wheels"]["seen"] == ["torch2.9-cp3.12-cu12-cxx11abiTrue"]
    assert "wheel" not in every["2.8.3"]


def test_bad_option_is_a_usage_error() -> None:
    assert run("releases", "--format", "xml").code == 2


def test_docs_table_is_the_generated_one() -> None:
    page = (REPO / "docs/releases.md").read_text()
    generated = run("releases", "--format", "markdown").out
    assert page.endswith(generated)
