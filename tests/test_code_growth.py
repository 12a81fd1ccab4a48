"""The code layer's rules cost work linear in what a pull request commits (reliability 48, 49, 60):
each counts the folder computations, never the wall clock (speed is measured in benchmarks/scaling.py).

Before, each FAL001 note filtered every use of the run again (48: pins x uses), each folder with a use
tested every environment of the run (49: folders x environments), and each custom kernel searched every
use (60: kernels x uses).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fa_lint.rules import _code, code
from tests.conftest import run


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Calls of ``folder`` and ``ancestors`` (the per-path work of the joins), across both modules."""
    calls = [0]

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any) -> Any:
            calls[0] += 1
            return f(*args)

        return counted

    for module in (_code, code):
        for name in ("folder", "ancestors"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, wrap(getattr(module, name)))
    return calls


def _findings(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    monkeypatch.chdir(root)
    r = run("--isolated", "--format", "json", ".")
    assert r.code in (0, 1), r.err
    found: list[dict[str, Any]] = r.json["findings"]
    return found


def _grows_linearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Callable[[int], dict[str, str]]
) -> list[list[dict[str, Any]]]:
    counts, found = [], []
    for n in (100, 400):
        root = tmp_path / str(n)
        _write(root, make(n))
        calls = _counted(monkeypatch)
        found.append(_findings(root, monkeypatch))
        counts.append(calls[0])
        monkeypatch.undo()
    assert counts[1] <= 4.5 * counts[0], counts  # 4x the input: about 4x the work, not 16x
    return found


def test_pins_times_paged_uses_is_linear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """reliability/48: N pins (each a FAL001) beside N generate_batch() calls."""

    def make(n: int) -> dict[str, str]:
        pins = "".join(f"flash-attn==2.4.{1 + i % 2}  # {i}\n" for i in range(n)) + "transformers==4.56.0\n"
        code_ = "from transformers import AutoModelForCausalLM\n" + "m.generate_batch(x)\n" * n
        return {"requirements.txt": pins, "serve.py": code_}

    found = _grows_linearly(tmp_path, monkeypatch, make)
    fal001 = [f for f in found[1] if f["code"] == "FAL001"]
    assert len(fal001) == 400
    # each names the first paged-path use and counts the rest
    assert all(
        any(
            "the code takes the paged path: generate_batch() at " in n and "(and 399 more)" in n
            for n in f["notes"]
        )
        for f in fal001
    )


def test_service_folders_times_environments_is_linear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """reliability/49: N services, each with its own requirements and code asking for FA3 (FAL021 in each,
    joined with its own folder's install and no other)."""

    def make(n: int) -> dict[str, str]:
        files = {}
        for i in range(n):
            files[f"s{i}/requirements.txt"] = "flash-attn==2.6.3\ntransformers==4.56.0\n"
            files[f"s{i}/a.py"] = (
                "from transformers import AutoModel\nAutoModel.from_pretrained('x', attn_implementation='flash_attention_3')\n"
            )
        return files

    found = _grows_linearly(tmp_path, monkeypatch, make)
    fal021 = [f for f in found[1] if f["code"] == "FAL021"]
    assert sorted(f["path"] for f in fal021) == sorted(f"s{i}{os.sep}a.py" for i in range(400))
    assert all(f["environment"] == f["path"].replace("a.py", "requirements.txt") for f in fal021)


def test_custom_kernels_times_uses_is_linear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """reliability/60: N substitutions and N custom kernels without block_table (each a FAL019), each
    naming the first substitution of its folder."""

    def make(n: int) -> dict[str, str]:
        body = (
            "setattr(flash_attn, 'flash_attn_with_kvcache', f)\ndef flash_attn_with_kvcache(q):\n    pass\n"
            * n
        )
        return {
            "requirements.txt": "flash-attn==2.6.3\ntransformers==4.56.0\n",
            "k.py": "import flash_attn\n" + body,
        }

    found = _grows_linearly(tmp_path, monkeypatch, make)
    fal019 = [f for f in found[1] if f["code"] == "FAL019"]
    assert len(fal019) == 400
    assert all(f["notes"][0].startswith("k.py:2:1 puts it in flash-attn's place") for f in fal019)


def test_ancestors_are_the_folders_that_hold_a_path() -> None:
    assert list(_code.ancestors(os.path.join("a", "b", "c"))) == [
        os.path.join("a", "b", "c"),
        os.path.join("a", "b"),
        "a",
        "",
    ]
    assert list(_code.ancestors("")) == [""]
    assert list(_code.ancestors(".")) == [""]
    assert list(_code.ancestors(os.sep + "x")) == [os.sep + "x", os.sep, ""]
