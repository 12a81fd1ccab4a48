"""``fa-lint releases``: the release table, its filters, JSON, and the generated docs page."""

from __future__ import annotations

import json

from tests.conftest import REPO, run


def versions(*args: str) -> list[str]:
    return [r["version"] for r in json.loads(run("releases", "--format", "json", *args).out)["releases"]]


def test_table_lists_every_release_with_its_facts() -> None:
    r = run("releases")
    assert r.code == 0
    lines = r.out.splitlines()
    assert lines[0].split() == [
        "release",
        "date",
        "paged",
        "KV",
        "page",
        "block",
        "torch",
        "wheels",
        "CPython",
        "CUDA",
    ]
    rows = {line.split()[0]: line.split() for line in lines[2:]}
    assert len(rows) == 76
    # v2.5.0 publish.yml: torch 1.12.1 ... 2.2.0.dev20231130, python 3.7-3.11, cuda 11.8.0/12.2.2
    assert rows["2.5.0"] == [
        "2.5.0",
        "2024-01-23",
        "yes",
        "256",
        "1.12",
        "1.13",
        "2.0",
        "2.1",
        "2.2*",
        "3.7-3.11",
        "cu118",
        "cu122",
    ]
    assert rows["2.4.2"][2] == "no"
    assert rows["2.8.3.post2"][-3:] == ["?", "?", "?"]  # no tag: unknown
    assert rows["2.0.4"][-1] == "none"  # setup.py fetches no wheel before 2.0.6


def test_filters() -> None:
    # torch 2.4 wheels: the 2.4.0.dev builds of 2.5.9.post1-2.6.2, released 2.4.0 from 2.6.3 to 2.8.3.post1
    assert versions("--torch", "2.4")[0] == "2.5.9.post1"
    assert versions("--torch", "2.4")[-1] == "2.8.3.post1"
    # no release pairs torch 2.4 with CPython 3.13 (v2.7.x and v2.8.x exclude it)
    assert versions("--torch", "2.4", "--python", "3.13") == []
    # CUDA 11: up to 2.7.3 (2.7.4 builds cuda-version ['12.4.1'] only)
    assert versions("--cuda", "11")[-1] == "2.7.3"
    assert versions("--torch", "2.8") == ["2.8.3", "2.8.3.post1"]
    assert "2.8.3" not in versions("--torch", "2.8", "--cuda", "11.8")


def test_json_record() -> None:
    doc = json.loads(run("releases", "--format", "json", "--torch", "2.3").out)
    first = doc["releases"][0]
    assert first["version"] == "2.5.1.post1"
    torch = {t["version"]: t["nightly"] for t in first["wheels"]["torch"]}
    assert torch["2.3"] == "2.3.0.dev20240126"


def test_bad_option_is_a_usage_error() -> None:
    assert run("releases", "--format", "xml").code == 2


def test_docs_table_is_the_generated_one() -> None:
    page = (REPO / "docs/releases.md").read_text()
    generated = run("releases", "--format", "markdown").out
    assert page.endswith(generated)
