"""FAL011's fix: the wheel by URL with its markers (requirements files), a marked [tool.uv.sources] entry
(uv projects), a range stopped where the wheel is, a pin moved elsewhere. Each is judged from the asset
listings (read here as plain JSON) and checked by fixing a file and linting it again."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from fa_lint.syntax import markers
from tests.conftest import REPO, run

LISTINGS = json.loads((REPO / "fa_lint/kb/assets.json").read_text())["releases"]
DOCKER_312 = "FROM python:3.12-slim\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n"


def listed(version: str, torch: str, abi: str, platform: str) -> dict[str, str]:
    """CPython -> URL of each wheel of ``version``'s listing for that torch, ABI and platform."""
    out = {}
    for a in LISTINGS[version]["assets"]:
        m = re.fullmatch(
            rf"flash_attn-[^+]+\+cu12torch{re.escape(torch)}cxx11abi{abi}-cp3(\d+)-cp3\d+-{platform}\.whl",
            a["file"],
        )
        if m:
            out[f"3.{m.group(1)}"] = (
                "https://github.com/Dao-AILab/flash-attention/releases/download/"
                f"v{version}/{a['file'].replace('+', '%2B')}"
            )
    return out


def url_line(url: str, machine: str, python: str) -> str:
    return (
        f'flash-attn @ {url} ; sys_platform == "linux" and platform_machine == "{machine}" and '
        f'python_version == "{python}"'
    )


def findings(*args: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = run("--isolated", "--format", "json", *args, ".").json["findings"]
    return found


def fix(unsafe: bool = True) -> None:
    r = run("--isolated", "--fix", *(["--unsafe-fixes"] if unsafe else []), ".")
    assert "not fixed" not in r.err, r.err


def test_a_pin_in_a_requirements_file_gets_the_wheel_by_url(project: Any) -> None:
    root: Path = project(
        {"requirements.txt": "torch==2.10.0\nflash-attn==2.8.3  # pinned\n", "Dockerfile": DOCKER_312}
    )
    (f,) = [f for f in findings() if f["code"] == "FAL011"]
    assert f["fix"]["applicability"] == "unsafe"
    fix(unsafe=False)  # a safe run leaves it
    assert (root / "requirements.txt").read_text() == "torch==2.10.0\nflash-attn==2.8.3  # pinned\n"
    fix()
    url = listed("2.8.1", "2.10", "TRUE", "linux_x86_64")["3.12"]
    assert (
        root / "requirements.txt"
    ).read_text() == f"torch==2.10.0\n{url_line(url, 'x86_64', '3.12')}  # pinned\n"
    assert findings() == []  # and no FAL012/FAL015: a wheel builds nothing


def test_a_line_for_each_cpython_the_release_has_where_none_is_said(project: Any) -> None:
    # torch 2.8 (the new ABI, its official build) with 2.8.2: no torch 2.8 wheel; 2.8.3 has cp39-cp313
    root: Path = project({"requirements.txt": "torch==2.8.0\r\nflash-attn==2.8.2\r\n"})
    fix()
    urls = listed("2.8.3", "2.8", "TRUE", "linux_x86_64")
    assert sorted(urls) == ["3.10", "3.11", "3.12", "3.13", "3.9"]
    lines = [url_line(urls[p], "x86_64", p) for p in ("3.9", "3.10", "3.11", "3.12", "3.13")]
    assert (root / "requirements.txt").read_bytes() == (
        "\r\n".join(["torch==2.8.0", *lines]) + "\r\n"
    ).encode()
    assert [f["code"] for f in findings()] == []


def test_an_arm_machine_gets_the_arm_wheel(project: Any) -> None:
    workflow = (
        "on: push\njobs:\n  b:\n    runs-on: ubuntu-24.04-arm\n    steps:\n"
        "      - uses: actions/setup-python@v5\n        with:\n          python-version: '3.12'\n"
        "      - run: pip install -r requirements.txt\n"
    )
    root: Path = project(
        {"requirements.txt": "torch==2.10.0\nflash-attn==2.8.3\n", ".github/workflows/ci.yml": workflow}
    )
    fix()
    arm = listed("2.8.1", "2.10", "TRUE", "linux_aarch64")["3.12"]
    x86 = listed("2.8.1", "2.10", "TRUE", "linux_x86_64")["3.12"]
    # the workflow's job is Arm; the file checked on its own is read as x86_64 with any CPython
    text = (root / "requirements.txt").read_text()
    assert text == f"torch==2.10.0\n{url_line(arm, 'aarch64', '3.12')}\n{url_line(x86, 'x86_64', '3.12')}\n"
    assert [f["code"] for f in findings()] == []


UV = """[project]
name = "x"
version = "0"
requires-python = "==3.12.*"
dependencies = ["torch==2.10.0", "flash-attn==2.8.3"]
{tail}
[tool.uv]
no-build-isolation-package = ["flash-attn"]
"""


def test_a_uv_project_gets_a_marked_source(project: Any) -> None:
    root: Path = project({"pyproject.toml": UV.format(tail="")})
    fix()
    url = listed("2.8.1", "2.10", "TRUE", "linux_x86_64")["3.12"]
    entry = (
        f"flash-attn = {{ url = \"{url}\", marker = \"sys_platform == 'linux' and platform_machine == 'x86_64' "
        "and python_version == '3.12'\" }\n"
    )
    assert (root / "pyproject.toml").read_text() == UV.format(tail="") + "\n[tool.uv.sources]\n" + entry
    assert findings() == []  # FAL011 gone, and the pin and the source are no FAL004 conflict


def test_a_uv_sources_table_takes_the_entry_under_its_header(project: Any) -> None:
    tail = '\n[tool.uv.sources]  # the indexes\ntorch = { index = "cu128" }\n'
    root: Path = project({"pyproject.toml": UV.format(tail=tail)})
    fix()
    url = listed("2.8.1", "2.10", "TRUE", "linux_x86_64")["3.12"]
    marker = "sys_platform == 'linux' and platform_machine == 'x86_64' and python_version == '3.12'"
    entry = f'flash-attn = {{ url = "{url}", marker = "{marker}" }}\n'
    want = tail.replace("# the indexes\n", "# the indexes\n" + entry)
    assert (root / "pyproject.toml").read_text() == UV.format(tail=want)
    assert findings() == []


def test_sources_written_another_way_are_left_to_the_author(project: Any) -> None:
    # [tool.uv] sources = {...}: a [tool.uv.sources] header would define the table twice
    text = UV.format(tail="").replace(
        'no-build-isolation-package = ["flash-attn"]',
        'no-build-isolation-package = ["flash-attn"]\nsources = { torch = { index = "cu128" } }',
    )
    root: Path = project({"pyproject.toml": text})
    (f,) = [f for f in findings() if f["code"] == "FAL011"]
    assert f["fix"] is None
    fix()
    assert (root / "pyproject.toml").read_text() == text


def test_a_range_stops_where_the_wheel_is(project: Any) -> None:
    root: Path = project({"requirements.txt": "torch==2.10.0\nflash-attn>=2.5.0,<=2.8.3\n"})
    (f,) = [f for f in findings() if f["code"] == "FAL011"]
    assert f["fix"]["applicability"] == "safe"
    fix(unsafe=False)
    assert (root / "requirements.txt").read_text() == "torch==2.10.0\nflash-attn>=2.5.0,<=2.8.1\n"
    assert findings() == []


def test_a_shell_pin_moves_to_the_release(project: Any) -> None:
    root: Path = project(
        {
            "Dockerfile": "FROM python:3.12\nRUN pip install torch==2.10.0 && pip install --no-build-isolation flash-attn==2.8.3\n"
        }
    )
    (f,) = [f for f in findings() if f["code"] == "FAL011"]
    assert f["fix"]["applicability"] == "unsafe"
    assert f["fix"]["title"] == f["help"] == "require flash-attn==2.8.1"
    fix()
    assert "flash-attn==2.8.1\n" in (root / "Dockerfile").read_text()
    assert [f["code"] for f in findings() if f["code"] == "FAL011"] == []


def test_no_fix_where_the_install_rules_the_release_out(project: Any) -> None:
    project(
        {"requirements.txt": "-c c.txt\ntorch==2.10.0\nflash-attn==2.8.3\n", "c.txt": "flash-attn!=2.8.1\n"}
    )
    (f,) = [f for f in findings() if f["code"] == "FAL011"]
    assert f["fix"] is None


def test_a_mixed_range_keeps_fal002s_fix(project: Any) -> None:
    project({"requirements.txt": "torch==2.10.0\nflash-attn>=2.0,<=2.8.3\n"})
    found = {f["code"]: f for f in findings()}
    assert found["FAL002"]["fix"]["edits"][0]["content"] == "flash-attn>=2.5.0,<=2.8.1"
    assert "FAL011" not in found or found["FAL011"]["fix"] is None


def test_markers_cover_the_machines() -> None:
    linux312 = "sys_platform == 'linux' and platform_machine == 'x86_64' and python_version == '3.12'"
    assert markers.covers((linux312,), ("x86_64",), ("3.12",))
    assert not markers.covers((linux312,), ("x86_64",), ())  # every CPython: 3.11 is left to the index
    assert not markers.covers((linux312,), ("x86_64", "aarch64"), ("3.12",))
    assert markers.covers((linux312, linux312.replace("3.12", "3.11")), ("x86_64",), ("3.11", "3.12"))
    assert not markers.covers(("not a marker",), ("x86_64",), ("3.12",))


def test_the_installer_facts_are_read_from_pip_and_uv() -> None:
    """docs/wheels.md and FAL011's fix cite pip 26.2.1 and uv 0.12.5 lines that the script finds."""
    import subprocess
    import sys

    pip, uv = Path("/work/.mirror/pypa+pip/repo"), Path("/work/.mirror/astral-sh+uv/repo")
    if not (pip.is_dir() and uv.is_dir()):
        pytest.skip("the pypa/pip and astral-sh/uv mirrors are not on this machine")
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts/installer_order.py"), str(pip), str(uv)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "MISSING" not in proc.stdout
    docs = (REPO / "docs/wheels.md").read_text()
    for cited in ("package_finder.py:516", "factory.py:337", "install.py:478", "candidate_selector.rs:604"):
        name, line = cited.split(":")
        assert re.search(rf"{re.escape(name)}:{line}\b", proc.stdout), cited
        assert f"{name}:{line}" in docs, cited


def test_no_fix_where_the_release_has_no_wheel_for_the_arm_machine(project: Any) -> None:
    # 2.8.3 has torch 2.8 wheels for x86_64 only (its complete listing); the job is Arm
    workflow = (
        "on: push\njobs:\n  b:\n    runs-on: ubuntu-24.04-arm\n    steps:\n"
        "      - uses: actions/setup-python@v5\n        with:\n          python-version: '3.12'\n"
        "      - run: pip install torch==2.8.0 && pip install --no-build-isolation flash-attn==2.8.2\n"
    )
    assert "3.12" not in listed("2.8.3", "2.8", "TRUE", "linux_aarch64")
    project({".github/workflows/ci.yml": workflow})
    fal011 = [f for f in findings() if f["code"] == "FAL011"]
    assert fal011 and all(f["fix"] is None for f in fal011)
