"""--fix, --unsafe-fixes and --diff: the right edit per format, only at its span, atomically, or none."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from fa_lint import engine
from fa_lint.fixes import apply as fix
from tests.conftest import run

# (file name, text before, text after --fix): one FAL002 or FAL007 per format, written as users write them.
CASES = [
    (
        "pyproject.toml",
        '[tool.poetry.dependencies]\nflash-attn = "^2.0"\n',
        '[tool.poetry.dependencies]\nflash-attn = ">=2.5.0,<3"\n',
    ),
    (
        "pyproject.toml",
        "[tool.poetry.group.gpu.dependencies]\nflash_attn = { version = '>=2.1', optional = true }\n",
        "[tool.poetry.group.gpu.dependencies]\nflash_attn = { version = '>=2.5.0', optional = true }\n",
    ),
    ("Pipfile", '[packages]\nflash-attn = "*"\n', '[packages]\nflash-attn = ">=2.5.0"\n'),
    (
        "Pipfile",
        '[dev-packages]\n"flash_attn" = {version = ">=2.0", index = "pypi"}\n',
        '[dev-packages]\n"flash_attn" = {version = ">=2.5.0", index = "pypi"}\n',
    ),
    (
        "requirements.txt",
        "torch==2.4.0\nflash-attn>=2.0  # gpu\n",
        # torch 2.4: pip takes the newest release '>=2.5.0' admits (2.8.3.post2), not the floor, so the
        # floor is the policy's: a higher one would not change which wheel is fetched
        "torch==2.4.0\nflash-attn>=2.5.0  # gpu\n",
    ),
    ("requirements.txt", "flash-attn\n", "flash-attn>=2.5.0\n"),
    (
        "requirements.txt",
        "flash_attn[all] <2.6 ; sys_platform == 'linux'\n",
        "flash_attn[all] >=2.5.0,<2.6 ; sys_platform == 'linux'\n",
    ),
    ("requirements.txt", "flash-attn~=2.4\n", "flash-attn>=2.5.0,~=2.4\n"),
    ("requirements.txt", "flash-attn>=2.0.6,<=2.5.8,!=2.0.9,!=2.1.0\n", "flash-attn>=2.5.0,<=2.5.8\n"),
    ("requirements.txt", "flash-attn>2.0,!=2.5.1\n", "flash-attn>=2.5.0,!=2.5.1\n"),
    (
        "pyproject.toml",
        '[project]\nname = "x"\nversion = "1"\ndependencies = [\n  "flash-attn>=2.0",\n]\n',
        '[project]\nname = "x"\nversion = "1"\ndependencies = [\n  "flash-attn>=2.5.0",\n]\n',
    ),
    (
        "pyproject.toml",
        "[dependency-groups]\ngpu = ['flash-attn<3']\n",
        "[dependency-groups]\ngpu = ['flash-attn>=2.5.0,<3']\n",
    ),
    (
        "setup.cfg",
        "[options]\ninstall_requires =\n    flash-attn>=2.1\n",
        "[options]\ninstall_requires =\n    flash-attn>=2.5.0\n",
    ),
    (
        "setup.py",
        "from setuptools import setup\nsetup(install_requires=['flash-attn>=2.1'])\n",
        "from setuptools import setup\nsetup(install_requires=['flash-attn>=2.5.0'])\n",
    ),
    (
        "environment.yml",
        "dependencies:\n  - pip\n  - pip:\n    - flash-attn>=2.0\n",
        "dependencies:\n  - pip\n  - pip:\n    - flash-attn>=2.5.0\n",
    ),
    (
        "Dockerfile",
        "FROM python:3.11\nRUN pip install flash-attn\n",
        'FROM python:3.11\nRUN pip install "flash-attn>=2.5.0"\n',
    ),
    (
        "Dockerfile",
        "FROM python:3.11\nRUN pip install 'flash-attn<2.6'\n",
        "FROM python:3.11\nRUN pip install 'flash-attn>=2.5.0,<2.6'\n",
    ),
    (
        "Dockerfile",
        'FROM python:3.11\nRUN ["pip", "install", "flash-attn"]\n',
        'FROM python:3.11\nRUN ["pip", "install", "flash-attn>=2.5.0"]\n',
    ),
    # FAL007 first (quote), then FAL002 on the quoted word in the next pass.
    ("install.sh", "pip install flash-attn>=2.0 torch\n", 'pip install "flash-attn>=2.5.0" torch\n'),
    ("install.sh", "pip install flash-attn>=2.5.8\n", 'pip install "flash-attn>=2.5.8"\n'),
    (
        ".github/workflows/ci.yml",
        "jobs:\n  t:\n    steps:\n      - run: |\n          pip install flash-attn\n",
        'jobs:\n  t:\n    steps:\n      - run: |\n          pip install "flash-attn>=2.5.0"\n',
    ),
]


def _write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


@pytest.mark.parametrize(
    ("name", "before", "after"), CASES, ids=[f"{c[0]}:{c[1].splitlines()[-1]}" for c in CASES]
)
def test_fix_per_format(tmp_path: Path, name: str, before: str, after: str) -> None:
    path = _write(tmp_path, name, before)
    quiet = (
        "--isolated",
        "--ignore",
        "FAL012,FAL015",
    )  # how it builds: test_install.py, test_machine_rules.py
    r = run(*quiet, "--fix", str(path))
    assert path.read_bytes().decode() == after
    assert r.code == 0, r.out
    assert "fixed" in r.err
    assert run(*quiet, "--format", "json", str(path)).json["findings"] == []


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "requirements.txt",
            "flash-attn @ https://example.com/flash_attn-2.4.2-cp311-cp311-linux_x86_64.whl\n",
        ),
        ("pyproject.toml", '[tool.poetry.dependencies]\nflash-attn = "^2.0 || ^3.0"\n'),
        ("pyproject.toml", '[tool.poetry.dependencies]\nflash-attn = "\\u003e=2.0"\n'),
        ("Pipfile", '[packages]\nflash-attn = {index = "pypi"}\n'),
        (
            "pyproject.toml",
            '[project]\nname = "x"\nversion = "1"\ndependencies = ["flash\\u002dattn>=2.0"]\n',
        ),
        ("environment.yml", "dependencies:\n  - flash-attn 2.4.*\n"),
        ("Dockerfile", "FROM python:3.11\nARG V=2.0\nRUN pip install flash-attn>=$V\n"),
        (
            "uv.lock",
            'version = 1\n\n[[package]]\nname = "flash-attn"\nversion = "2.4.2"\nsource = { registry = "https://pypi.org/simple" }\n',
        ),
        # pip's hash-checking mode: the hashes are the old version's, and every pin must be ==
        ("requirements.txt", "flash-attn==2.4.2 \\\n    --hash=sha256:aaaa\n"),
        ("requirements.txt", "torch==2.3.0 --hash=sha256:bbbb\nflash-attn>=2.0\n"),
        ("requirements.txt", "--require-hashes\nflash-attn>=2.0\n"),
        ("requirements.txt", "flash-attn==2.4.2+cu122\n"),  # a local build: its index may lack 2.5.0+cu122
    ],
)
def test_no_fix_where_the_text_is_not_a_plain_requirement(tmp_path: Path, name: str, text: str) -> None:
    path = _write(tmp_path, name, text)
    findings = run("--isolated", "--format", "json", str(path)).json["findings"]
    assert findings and all(f["fix"] is None or f["code"] == "FAL007" for f in findings), findings
    run("--isolated", "--fix", "--unsafe-fixes", str(path))
    if not any(f["code"] == "FAL007" for f in findings):
        assert path.read_text() == text


def test_exact_pins_move_only_with_unsafe_fixes(tmp_path: Path) -> None:
    path = _write(tmp_path, "requirements.txt", "flash-attn==2.4.2\n")
    r = run("--isolated", str(path))
    assert " FAL001 " in r.out and "[*]" not in r.out.splitlines()[0]
    assert "1 fixable with --fix --unsafe-fixes." in r.out
    assert run("--isolated", "--fix", str(path)).code == 1
    assert path.read_text() == "flash-attn==2.4.2\n"
    r = run("--isolated", "--fix", "--unsafe-fixes", str(path))
    assert (r.code, path.read_text()) == (0, "flash-attn==2.5.0\n")


def test_bytes_outside_the_span_are_kept(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbf# caf\xc3\xa9 \xe2\x80\x94 GPU pins\r\nflash-attn>=2.0\r\ntorch==2.4.0"  # BOM, CRLF, no final LF
    path = tmp_path / "requirements.txt"
    path.write_bytes(raw)
    path.chmod(0o640)
    link = tmp_path / "requirements-link.txt"
    link.symlink_to(path.name)
    assert run("--isolated", "--fix", str(link)).code == 0
    assert link.is_symlink()
    assert path.read_bytes() == raw.replace(b"flash-attn>=2.0", b"flash-attn>=2.5.0")  # the policy's floor
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["requirements-link.txt", "requirements.txt"]


def test_files_that_are_not_utf8_are_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "requirements.txt"
    raw = "flash-attn>=2.0\n".encode("utf-16")
    path.write_bytes(raw)
    r = run("--isolated", "--fix", str(path))
    assert path.read_bytes() == raw
    assert "not fixed" in r.err and "not UTF-8" in r.err


def test_a_failed_write_leaves_the_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, "requirements.txt", "flash-attn>=2.0\n")

    def refuse(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    r = run("--isolated", "--fix", str(path))
    assert path.read_text() == "flash-attn>=2.0\n"
    assert "cannot write the file: Permission denied" in r.err
    assert [p.name for p in tmp_path.iterdir()] == ["requirements.txt"]


def test_diff_changes_nothing(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "requirements.txt", "flash-attn>=2.0\nflash-attn==2.4.2 ; python_version < '3.9'\n"
    )
    r = run("--isolated", "--diff", str(path))
    assert r.code == 1
    assert r.out.splitlines()[2:] == [
        "@@ -1,2 +1,2 @@",
        "-flash-attn>=2.0",
        "+flash-attn>=2.5.0",
        " flash-attn==2.4.2 ; python_version < '3.9'",
    ]
    assert "1 fix in 1 file would be applied" in r.err
    r = run("--isolated", "--diff", "--unsafe-fixes", str(path))
    assert "+flash-attn==2.5.0 ; python_version < '3.9'" in r.out.splitlines()
    assert path.read_text() == "flash-attn>=2.0\nflash-attn==2.4.2 ; python_version < '3.9'\n"
    good = _write(tmp_path, "ok/requirements.txt", "flash-attn>=2.5\n")
    assert run("--isolated", "--diff", str(good)).code == 0


def test_suppressed_findings_are_not_fixed(tmp_path: Path) -> None:
    text = "flash-attn>=2.0  # noqa: FAL002\n"
    path = _write(tmp_path, "requirements.txt", text)
    run("--isolated", "--fix", str(path))
    assert path.read_text() == text


def test_a_file_changed_since_the_check_is_left_alone(tmp_path: Path) -> None:
    path = _write(tmp_path, "requirements.txt", "flash-attn>=2.0\n")
    report = engine.check([str(path)])
    path.write_text("flash-attn>=2.1\n")
    (outcome,) = fix.run(report.findings)
    assert outcome.applied == () and "no longer reads 'flash-attn>=2.0'" in outcome.skipped[0][1]
    assert path.read_text() == "flash-attn>=2.1\n"


def test_an_edit_that_would_break_the_file_is_refused(tmp_path: Path) -> None:
    # A bare word inside a double-quoted YAML scalar: quoting it for the shell would end the YAML string.
    text = 'jobs:\n  t:\n    steps:\n      - run: "pip install flash-attn"\n'
    path = _write(tmp_path, ".github/workflows/ci.yml", text)
    r = run("--isolated", "--fix", str(path))
    assert path.read_text() == text
    assert "not fixed" in r.err and "would not parse the same way" in r.err
    assert r.code == 0  # FAL002 is a warning; the file is as it was


def test_fix_reports_what_remains(tmp_path: Path) -> None:
    _write(tmp_path, "requirements.txt", "flash-attn>=2.0\n")
    _write(tmp_path, "constraints.txt", "flash-attn==2.4.2\n")
    r = run("--isolated", "--fix", str(tmp_path))
    assert "fixed 1 finding in 1 file" in r.err
    assert r.code == 1 and "FAL001" in r.out and "FAL002" not in r.out


def test_fixing_a_locked_manifest_says_how_to_relock(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "x"\nversion = "1"\ndependencies = ["flash-attn>=2.0"]\n',
    )
    _write(
        tmp_path,
        "uv.lock",
        'version = 1\n\n[[package]]\nname = "flash-attn"\nversion = "2.6.3"\n'
        'source = { registry = "https://pypi.org/simple" }\n',
    )
    _write(tmp_path, "requirements.txt", "flash-attn>=2.0\n")
    r = run("--isolated", "--ignore", "FAL012", "--fix", str(tmp_path))
    assert r.code == 0
    relock = [line for line in r.err.splitlines() if "relock" in line]
    assert relock == [
        f"fa-lint: relock: {tmp_path / 'pyproject.toml'} changed and {tmp_path / 'uv.lock'} records its old "
        "requirements: uv lock"
    ]
