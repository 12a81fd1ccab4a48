"""``fa-lint wheel``: the wheel that installs on a machine, judged from the release asset listings
(``fa_lint/kb/assets.json``, read here as plain JSON) and the names flash-attn's setup.py asks for."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.conftest import REPO, run

RELEASES = "https://github.com/Dao-AILab/flash-attention/releases/download/"
LISTINGS = json.loads((REPO / "fa_lint/kb/assets.json").read_text())["releases"]
# a listed name, read here on its own: flash_attn-{v}+cu{cuda}torch{t}cxx11abi{abi}-cp{py}-cp{py}-{platform}
NAME = re.compile(
    r"flash_attn-(?P<v>[^+]+)\+cu(?P<cuda>\d+)torch(?P<torch>\d+\.\d+)cxx11abi(?P<abi>TRUE|FALSE)"
    r"-cp3(?P<py>\d+)-cp3\d+-(?P<platform>linux_\w+)\.whl"
)
PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13")


def _assets() -> list[tuple[str, dict[str, Any], re.Match[str]]]:
    out = []
    for version, listing in LISTINGS.items():
        for a in listing["assets"]:
            m = NAME.fullmatch(a["file"])
            assert m is not None, a["file"]
            out.append((version, a, m))
    return out


def wheel(*argv: str) -> tuple[int, dict[str, Any]]:
    r = run("wheel", "--format", "json", *argv)
    assert r.code in (0, 1), r.err
    (machine,) = json.loads(r.out)["machines"]
    return r.code, machine


def _machine(m: re.Match[str], cuda: str) -> list[str]:
    return [
        "--torch",
        m["torch"],
        "--python",
        f"3.{m['py']}",
        "--cuda",
        cuda,
        "--abi",
        "new" if m["abi"] == "TRUE" else "old",
        "--platform",
        m["platform"],
    ]


def test_every_listed_wheel_is_found_for_its_own_machine() -> None:
    """Every release and torch in the listings: asked about the asset's own torch, CPython, ABI and
    platform (and a CUDA 12.8 torch, which every release named ``cu12`` serves), the finder answers
    yes and names that file, with the listing's sha256 and the release's download URL."""
    for version, a, m in _assets():
        cuda = "12.8" if m["cuda"] == "12" else "13.0"
        code, found = wheel(*_machine(m, cuda), "--release", version)
        files = {f["file"]: f for f in found["files"]}
        assert found["wheel"] == "yes" and code == 0, a["file"]
        assert a["file"] in files, (a["file"], list(files))
        f = files[a["file"]]
        assert f["sha256"] == a["sha256"] and f["source"] == a["at"]
        assert f["url"] == f"{RELEASES}v{version}/{a['file'].replace('+', '%2B')}"
        # 2.8.1's setup.py asks a CUDA 13 torch for the cu12 wheel: its cu13 ones install by URL only
        assert f["fetched_by_setup_py"] is (m["cuda"] == "12"), a["file"]


def _complete() -> list[tuple[str, str, str, str]]:
    """(release, torch, CPython, platform) a complete listing has no cxx11abiTRUE wheel for, for every
    torch the listing has a wheel of (so torch was out before the listing was made)."""
    out = []
    for version, listing in LISTINGS.items():
        if not listing["complete"]:
            continue
        named = [NAME.fullmatch(a["file"]) for a in listing["assets"]]
        have = {(m["torch"], f"3.{m['py']}", m["platform"]) for m in named if m and m["abi"] == "TRUE"}
        torches = {m["torch"] for m in named if m}
        for torch in sorted(torches):
            for python in PYTHONS:
                for platform in ("linux_x86_64", "linux_aarch64"):
                    if (torch, python, platform) not in have:
                        out.append((version, torch, python, platform))
    return out


def test_a_complete_listing_says_no_where_it_lists_no_wheel() -> None:
    cases = _complete()
    assert ("2.8.3", "2.9", "3.11", "linux_aarch64") in cases and len(cases) > 100
    for version, torch, python, platform in cases:
        code, found = wheel(
            "--torch",
            torch,
            "--python",
            python,
            "--cuda",
            "12.8",
            "--abi",
            "new",
            "--platform",
            platform,
            "--release",
            version,
        )
        assert (found["wheel"], code, found["files"]) == ("no", 1, []), (version, torch, python, platform)
        assert found["reason"].startswith(f"{version} has no "), found["reason"]


def test_the_measured_cases() -> None:
    # 2.8.3 has no torch 2.10 wheel; 2.8.1 has one for cp312, in its complete listing
    code, found = wheel("--torch", "2.10", "--python", "3.12", "--cuda", "12.8", "--release", "2.8.3")
    assert (code, found["wheel"]) == (1, "no")
    assert found["nearest"]["release"] == "2.8.1"
    assert [f["file"] for f in found["nearest"]["files"]] == [
        "flash_attn-2.8.1+cu12torch2.10cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"
    ]
    # 2.8.3's torch 2.9 cp312 Arm wheel, attached after the tag; none for cp311
    code, found = wheel("--torch", "2.9", "--python", "3.12", "--platform", "aarch64", "--release", "2.8.3")
    assert (code, found["wheel"]) == (0, "yes")
    assert [f["file"] for f in found["files"]] == [
        "flash_attn-2.8.3+cu12torch2.9cxx11abiTRUE-cp312-cp312-linux_aarch64.whl"
    ]
    code, found = wheel("--torch", "2.9", "--python", "3.11", "--platform", "arm64", "--release", "2.8.3")
    assert (code, found["wheel"], found["files"]) == (1, "no", [])


def test_a_wheel_the_tags_matrix_built_has_the_name_setup_py_asks_for() -> None:
    # 2.6.3's setup.py names 12.x as cu123 (v2.6.3:setup.py), its matrix builds torch 2.4 with both ABIs;
    # no listing publishes its hashes
    code, found = wheel("--torch", "2.4", "--python", "3.10", "--cuda", "12.1", "--release", "2.6.3")
    assert (code, found["wheel"]) == (0, "yes")
    names = {f["file"]: f for f in found["files"]}
    file = "flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp310-cp310-linux_x86_64.whl"
    assert file in names and names[file]["sha256"] is None
    assert names[file]["url"] == f"{RELEASES}v2.6.3/{file.replace('+', '%2B')}"
    assert names[file]["source"].startswith("v2.6.3:.github/workflows/publish.yml:")


def test_with_no_release_asked_the_newest_with_a_wheel() -> None:
    code, found = wheel("--torch", "2.10", "--python", "3.12", "--cuda", "12.8")
    assert code == 0 and found["release"] is None and found["nearest"]["release"] == "2.8.1"


def test_the_machines_the_files_describe(project: Any) -> None:
    project(
        {
            "requirements.txt": "torch==2.10.0\nflash-attn==2.8.3\n",
            "Dockerfile": "FROM python:3.12-slim\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n",
        }
    )
    r = run("wheel", "--format", "json", ".")
    assert r.code == 1, r.err
    machines = {tuple(m["environments"]): m for m in json.loads(r.out)["machines"]}
    docker = next(m for names, m in machines.items() if any(n.startswith("Dockerfile") for n in names))
    assert docker["machine"]["torch"] == "2.10" and docker["machine"]["pythons"] == ["3.12"]
    assert docker["machine"]["cxx11_abi"] is True  # torch 2.10's official build
    assert docker["said"]["pythons"] == "the base image python:3.12-slim"
    assert docker["requirement"]["text"] == "flash-attn==2.8.3" and docker["release"] == "2.8.3"
    assert docker["wheel"] == "no"
    assert [f["file"] for f in docker["nearest"]["files"]] == [
        "flash_attn-2.8.1+cu12torch2.10cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"
    ]
    text = run("wheel", ".").out
    assert "flash_attn-2.8.1+cu12torch2.10cxx11abiTRUE-cp312-cp312-linux_x86_64.whl" in text
    assert "sha256: f47361af0ebe127db80040cb72e947e3a2ef97c59d641df0c167c5b48cafdc28" in text


def test_the_range_takes_its_newest_release(project: Any) -> None:
    project({"requirements.txt": "torch==2.9.1\nflash-attn>=2.6,<2.8.2\n"})
    code, found = wheel("--python", "3.12", "requirements.txt")
    assert found["release"] == "2.8.1" and found["release_why"].startswith("the newest release")
    assert (code, found["wheel"]) == (0, "yes")


def test_flags_replace_what_the_files_say(project: Any) -> None:
    project({"requirements.txt": "torch==2.10.0\nflash-attn==2.8.1\n"})
    code, found = wheel("--python", "3.11", "requirements.txt")
    assert found["said"]["pythons"] == "--python" and (code, found["wheel"]) == (1, "no")
    code, found = wheel("--python", "3.12", "requirements.txt")
    assert (code, found["wheel"]) == (0, "yes")


@pytest.mark.parametrize(
    "argv",
    [
        ["--torch", "two"],
        ["--torch", "2.10", "--cuda", "twelve"],
        ["--torch", "2.10", "--python", "py3"],
        ["--torch", "2.10", "--release", "9.9.9"],
    ],
)
def test_usage_errors(argv: list[str]) -> None:
    r = run("wheel", *argv)
    assert r.code == 2 and r.err.startswith("fa-lint: error: --")


def test_nothing_to_answer(project: Any) -> None:
    project({"requirements.txt": "numpy\n"})
    r = run("wheel", ".")
    assert r.code == 2 and "--torch" in r.err
    assert run("wheel").err == r.err  # no path and no --torch: the current folder


def test_no_path_reads_the_current_folder(project: Any) -> None:
    project({"requirements.txt": "torch==2.10.0\nflash-attn==2.8.1\n"})
    code, found = wheel("--python", "3.12")
    assert found["environments"] == ["requirements.txt"] and (code, found["wheel"]) == (0, "yes")


def test_no_torch_known_says_so(project: Any) -> None:
    project({"requirements.txt": "flash-attn==2.8.3\n"})
    r = run("wheel", ".")
    assert r.code == 1 and "give --torch" in r.out


def test_completion_offers_the_subcommand() -> None:
    script = run("completion", "bash").out
    assert '"wheel")' in script and "--platform" in script and "linux_aarch64" in script


def test_a_wheel_by_url_is_named_as_what_installs(project: Any) -> None:
    url = (
        "https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.1/"
        "flash_attn-2.8.1%2Bcu12torch2.10cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"
    )
    project({"requirements.txt": f"torch==2.10.0\nflash-attn @ {url}\n"})
    code, found = wheel("requirements.txt")
    assert found["requirement"]["text"] == f"flash-attn @ {url}" and found["release"] is None
    assert found["release_why"].startswith("the file its URL names")
    assert code == 0 and found["nearest"]["release"] == "2.8.1"
