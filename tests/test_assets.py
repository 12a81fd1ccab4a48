"""Release asset listings (fa_lint/kb/assets.json): what they decide, FAL011 on the release the installer
takes, and one fix for a requirement whichever file the run starts from."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from fa_lint import kb
from fa_lint.kb import Availability, assets
from tests.conftest import REPO, run

sys.path.insert(0, str(REPO / "scripts"))
import build_assets_kb

ARM = "linux_aarch64"


def wheels(version: str) -> kb.Wheels:
    release = kb.load().get(version)
    assert release is not None and release.wheels is not None
    return release.wheels


def test_every_listed_asset_is_a_release_wheel_of_its_release() -> None:
    listed = assets.load()
    # the listings of sirati/nix-torch-bin-pascal@4c35b95 (2026-03-13): complete for 2.8.0.post2-2.8.3,
    # partial for 2.7.3 and 2.7.4.post1 (their tags are in its missing-digests.txt)
    assert {v: x.complete for v, x in listed.items()} == {
        "2.7.3": False,
        "2.7.4.post1": False,
        "2.8.0.post2": True,
        "2.8.1": True,
        "2.8.2": True,
        "2.8.3": True,
    }
    for version, listing in listed.items():
        assert kb.load().get(version) is not None
        for a in listing.assets:
            assert a.file.startswith(f"flash_attn-{version}+") and len(a.sha256 or "") == 64
            assert a.url.startswith(
                f"https://github.com/Dao-AILab/flash-attention/releases/download/v{version}/"
            )


@pytest.mark.parametrize("version", ["2.8.0.post2", "2.8.1", "2.8.2", "2.8.3"])
def test_a_complete_listing_holds_every_wheel_the_tags_matrix_built(version: str) -> None:
    w = wheels(version)
    listing = w.listed
    assert listing is not None
    names = {(a.torch, a.python, a.cuda, a.cxx11_abi) for a in listing.assets if a.platform == "linux_x86_64"}
    assert {tuple(b) for b in w.builds} <= names


@pytest.mark.parametrize(
    ("version", "torch", "python", "platform", "answer"),
    [
        # the measured cases: no torch 2.10 wheel in 2.8.3's listing; its torch 2.9 cp312 Arm wheel
        ("2.8.3", "2.10", "3.12", "linux_x86_64", "no"),
        ("2.8.3", "2.9", "3.12", ARM, "yes"),
        ("2.8.3", "2.9", "3.11", ARM, "no"),
        ("2.8.3", "2.8", "3.12", ARM, "no"),
        # 2.8.1 has Arm wheels for torch 2.8, 2.9 and 2.10 (cp312)
        ("2.8.1", "2.8", "3.12", ARM, "yes"),
        ("2.8.1", "2.10", "3.12", ARM, "yes"),
        ("2.8.1", "2.10", "3.12", "linux_x86_64", "yes"),
        ("2.8.1", "2.10", "3.11", "linux_x86_64", "no"),
        # torch 2.11 (2026-03-23) came after the listings: a wheel may have been attached since
        ("2.8.3", "2.11", "3.12", "linux_x86_64", "unknown"),
        # a partial listing says only yes: 2.7.4.post1's torch 2.7 wheels
        ("2.7.4.post1", "2.7", "3.12", "linux_x86_64", "yes"),
        ("2.7.4.post1", "2.8", "3.12", "linux_x86_64", "unknown"),
    ],
)
def test_what_a_listing_decides(version: str, torch: str, python: str, platform: str, answer: str) -> None:
    assert wheels(version).has(torch, [python], "12.8", True, platform).value == answer


def test_every_listed_wheel_is_found_for_its_own_machine() -> None:
    """Every release and torch in the listings: the answer for each asset's own torch, CPython, ABI
    and platform is yes, and the wheel itself is among those found -- where the release's setup.py
    asks for that name: 2.8.1's asks a CUDA 13 torch for cu12 (``parse("12.3")`` for any major but 11),
    so its cu13 wheels install only by URL."""
    for version, listing in assets.load().items():
        w = wheels(version)
        for a in listing.assets:
            cuda = f"{a.cuda[:2]}.{a.cuda[2:] or 0}"  # torch's CUDA that setup.py names so (cu12 <- 12.x)
            if w.cuda_name(cuda, a.torch) != a.cuda:
                assert (version, a.cuda) == ("2.8.1", "13"), a.file
                continue
            assert w.has(a.torch, [a.python], cuda, a.cxx11_abi, a.platform) is Availability.YES, a.file
            assert a in w.assets_for(a.torch, [a.python], cuda, a.cxx11_abi, a.platform)


def test_a_false_abi_wheel_is_absent_only_where_its_true_twin_is_listed() -> None:
    w = wheels("2.8.3")
    # torch 2.9 cp312: TRUE listed, no FALSE: the generator would have kept a FALSE twin
    assert w.has("2.9", ["3.12"], "12.8", False) is Availability.NO
    # torch 2.9 cp311: neither listed; a FALSE-only wheel would have been left out: the matrix decides
    assert not w.absent("2.9", ["3.11"], "12.8", False)


def test_the_script_reads_a_listing_of_our_own() -> None:
    text = (
        '  name = "flash_attn-2.8.3+cu12torch2.9cxx11abiTRUE-cp312-cp312-linux_aarch64.whl";\n'
        '  url = "https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/'
        'flash_attn-2.8.3%2Bcu12torch2.9cxx11abiTRUE-cp312-cp312-linux_aarch64.whl";\n'
        '  hash = "sha256-24EIO8xXl1MUDGR/7PsIKRmwzOdG+cNVr0436WXpwiQ=";\n'
    )
    (entry,) = build_assets_kb.listing(text, "x.nix")
    assert entry["at"] == "x.nix:1"
    assert entry["sha256"] == "db81083bcc57975314" + entry["sha256"][18:] and len(entry["sha256"]) == 64
    assert assets.parse(entry["file"]) is not None
    with pytest.raises(build_assets_kb.AssetsError):
        build_assets_kb.listing(text.replace("v2.8.3/", "v2.8.2/"), "x.nix")


def _findings(argv: list[str], stdin: str | None = None) -> list[dict[str, Any]]:
    if stdin is not None:
        old = sys.stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        try:
            out = run("--isolated", "--format", "json", *argv)
        finally:
            sys.stdin = old
    else:
        out = run("--isolated", "--format", "json", *argv)
    found: list[dict[str, Any]] = json.loads(out.out)["findings"]
    return found


def _demo_pin(findings: list[dict[str, Any]]) -> tuple[str, tuple[str, ...]]:
    (f,) = [
        f
        for f in findings
        if f["code"] == "FAL001" and f["path"].endswith("requirements.txt") and f["line"] == 5
    ]
    return f["help"], tuple(n for n in f["notes"] if n.startswith("why "))


def test_one_finding_one_fix_from_every_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's `flash-attn==2.4.2` under `-c constraints.txt` ('<2.6'), torch 2.4: the same fix and the
    same reason from the file, the folder, standard input and the Dockerfile that copies the file and
    runs `pip install -r` on it."""
    monkeypatch.chdir(REPO / "examples/demo")
    text = (REPO / "examples/demo/requirements.txt").read_text()
    runs = {
        "path": _findings(["requirements.txt"]),
        "folder": _findings(["."]),
        "stdin": _findings(["--stdin-filename", "requirements.txt", "-"], text),
        "dockerfile": _findings(["Dockerfile", "requirements.txt"]),
    }
    answers = {name: _demo_pin(found) for name, found in runs.items()}
    assert len(set(answers.values())) == 1, answers
    help_, (why,) = answers["path"]
    assert help_ == "regenerate the file with flash-attn>=2.5.9.post1 and its hashes"
    assert "2.4.0.dev20240407" in why and "2.6.3" in why and "rule out" in why


def test_fal011_judges_the_release_the_installer_takes(project: Any) -> None:
    # 2.8.3 is the newest release '<=2.8.3' admits; it has no torch 2.10 wheel, 2.8.1 has one: pip and
    # uv still build 2.8.3's sdist
    project({"requirements.txt": "torch==2.10.0\nflash-attn>=2.5.0,<=2.8.3\n"})
    (f,) = [f for f in _findings(["."]) if f["code"] == "FAL011"]
    assert f["severity"] == "warning"
    assert f["message"].startswith("flash-attn 2.8.3 has no prebuilt wheel for torch 2.10")
    assert any("newest release the range admits, 2.8.3" in n for n in f["notes"])
    # the fix stops the range at 2.8.1, so that the newest release it admits is the one with the wheel
    assert f["help"] == "require flash-attn>=2.5.0,<=2.8.1" and f["fix"]["applicability"] == "safe"


def test_no_false_arm_warning_where_the_release_has_the_arm_wheel(project: Any) -> None:
    workflow = (
        "on: push\njobs:\n  b:\n    runs-on: ubuntu-24.04-arm\n    steps:\n"
        "      - uses: actions/setup-python@v5\n        with:\n          python-version: '{py}'\n"
        "      - run: pip install torch==2.9.0 && pip install --no-build-isolation flash-attn==2.8.3\n"
    )
    project({".github/workflows/ci.yml": workflow.format(py="3.12")})
    assert [f for f in _findings(["."]) if f["code"] == "FAL011"] == []
    project({".github/workflows/ci.yml": workflow.format(py="3.11")})
    # no cp311 aarch64 wheel: pip compiles, on a hosted runner that has no CUDA toolkit (FAL015)
    assert [f["code"] for f in _findings(["."])] == ["FAL011", "FAL015"]


def test_the_listing_is_rebuilt_by_its_script(tmp_path: Path) -> None:
    mirror = Path("/work/.mirror/sirati+nix-torch-bin-pascal/repo")
    if not mirror.is_dir():
        pytest.skip("the sirati/nix-torch-bin-pascal mirror is not on this machine")
    out = tmp_path / "assets.json"
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts/build_assets_kb.py"), "--nix-repo", str(mirror), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == (REPO / "fa_lint/kb/assets.json").read_text()


def test_releases_json_names_the_listing() -> None:
    doc = json.loads(run("releases", "--format", "json").out)
    (r,) = [r for r in doc["releases"] if r["version"] == "2.8.3"]
    listing = r["wheels"]["assets"]
    assert listing["complete"] and listing["as_of"] == "2026-03-12T23:30:55Z"
    assert "flash_attn-2.8.3+cu12torch2.9cxx11abiTRUE-cp312-cp312-linux_aarch64.whl" in listing["files"]
    assert Version(r["version"]) == Version("2.8.3")
