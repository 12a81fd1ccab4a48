"""The code layer (fa_lint/code) and the rules that read it (FAL018-FAL021, the FAL001/FAL002 note).

Each expectation is judged from the facts, not from fa-lint's output: block_table ships on
flash_attn_with_kvcache in flash-attn 2.5.0 and on flash_attn_varlen_func in 2.5.7; transformers
detects FA3 only by the flash-attn-3 distribution; transformers 5.4-5.18 raise ValueError for a
kernel without block_table/page_table and 5.19+ drop the block table (fa_lint/kb/transformers.json).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from fa_lint.code import command_lines as commands
from fa_lint.code import prefilter, python
from fa_lint.code.uses import (
    ATTN,
    CALL,
    CUSTOM,
    KERNEL,
    LOCAL_KERNEL,
    NOT_PAGED,
    PAGED,
    STALE_LOCK,
    SUBSTITUTE,
)
from fa_lint.files.discover import discover
from tests.conftest import REPO, run

REALWORLD = REPO / "tests/data/realworld/code"


def kinds(text: str) -> list[tuple[str, int, str]]:
    return [(u.kind, u.location.line, u.name) for u in python.read("app.py", text)]


# --- the byte prefilter --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "wanted"),
    [
        (b"model.generate_batch(inputs)", True),
        (b"x = get_kernel('a/b')", True),
        (b"from flash_attn import flash_attn_with_kvcache", True),
        (b"--continuous-batching", True),
        (b"import torch\nprint('hello')\n", False),
        (b"flash_attn_func(q, k, v)", False),  # no paged keyword, no kvcache: nothing to read
        ("attn_implementation".encode("utf-16"), False),  # not UTF-8: Python would not run it as is
    ],
)
def test_prefilter(data: bytes, wanted: bool) -> None:
    assert prefilter.wanted(data) is wanted


def test_only_python_files_with_a_trigger_word_are_picked(tmp_path: Path) -> None:
    (tmp_path / "serve.py").write_text("model.generate_batch(x)\n")
    (tmp_path / "util.py").write_text("import os\n" * 2000)  # past the 8 KiB head, still nothing
    (tmp_path / "late.py").write_text("# padding\n" * 2000 + "m.generate_batch(x)\n")  # past the head
    found = sorted(Path(t.path).name for t in discover([str(tmp_path)]))
    assert found == ["late.py", "serve.py"]


# --- the Python reader ---------------------------------------------------------------------------


def test_the_paged_path_and_what_keeps_it_off() -> None:
    text = (
        "from transformers import AutoModelForCausalLM, ContinuousBatchingConfig, ContinuousBatchingManager\n"
        "m = AutoModelForCausalLM.from_pretrained('x', device_map='cpu')\n"
        "m.generate_batch(inputs)\n"
        "m.generate(x, cache_implementation='paged')\n"
        "m.init_continuous_batching()\n"
        "ContinuousBatchingManager(m)\n"
        "cfg = ContinuousBatchingConfig(max_blocks_per_request=0)\n"
        "GRPOConfig(use_transformers_paged=True)\n"
    )
    assert kinds(text) == [
        (NOT_PAGED, 2, ""),
        (PAGED, 3, ""),
        (PAGED, 4, ""),
        (PAGED, 5, ""),
        (PAGED, 6, ""),
        (NOT_PAGED, 7, ""),
        (PAGED, 8, ""),
    ]


def test_generate_batch_without_transformers_is_someone_elses_method() -> None:
    # khaosz-style models have their own batch_generate/generate_batch: nothing is said of them
    assert kinds("from khaosz import Khaosz\nKhaosz('p').generate_batch(['hi'])\n") == []


def test_direct_calls_through_import_aliases() -> None:
    text = (
        "import flash_attn as fa\n"
        "from flash_attn import flash_attn_with_kvcache as kv\n"
        "from flash_attn.flash_attn_interface import flash_attn_varlen_func\n"
        "from flash_attn_interface import flash_attn_with_kvcache as fa3\n"
        "kv(q, k, v, block_table=b)\n"
        "fa.flash_attn_varlen_func(q, k, v, block_table=b)\n"
        "flash_attn_varlen_func(q, k, v, window_size=(1, 1))\n"
        "fa3(q, k, v, page_table=b)\n"  # FA3 is another package
        "flash_attn_with_kvcache(q, k, v)\n"  # not imported: a name of the file's own
    )
    uses = python.read("app.py", text)
    calls = [(u.location.line, u.name, u.keywords) for u in uses if u.kind == CALL]
    assert calls == [
        (5, "flash_attn_with_kvcache", ("block_table",)),
        (6, "flash_attn_varlen_func", ("block_table",)),
        (7, "flash_attn_varlen_func", ("window_size",)),
    ]


def test_attention_implementations() -> None:
    text = (
        "import argparse\n"
        "from transformers import AutoModelForCausalLM\n"
        "IMPL = 'flash_attention_2'\n"
        "p = argparse.ArgumentParser()\n"
        "p.add_argument('--attn', default='kernels-community/flash-attn')\n"
        "args = p.parse_args()\n"
        "AutoModelForCausalLM.from_pretrained('m', attn_implementation=IMPL)\n"
        "AutoModelForCausalLM.from_pretrained('m', attn_implementation=args.attn)\n"
        "model.set_attn_implementation('flash_attention_3')\n"
        "model.config._attn_implementation = 'sdpa'\n"
        "class Args:\n"
        "    attn_implementation: str = field(default='flash_attention_4')\n"
        "AutoModelForCausalLM.from_pretrained('m', attn_implementation=pick())\n"  # a call: not followed
    )
    assert [(k, line, name) for k, line, name in kinds(text) if k == ATTN] == [
        (ATTN, 7, "flash_attention_2"),
        (ATTN, 8, "kernels-community/flash-attn"),
        (ATTN, 9, "flash_attention_3"),
        (ATTN, 10, "sdpa"),
        (ATTN, 12, "flash_attention_4"),
    ]


def test_kernels_and_whether_they_are_pinned() -> None:
    text = (
        "import kernels\n"
        "from kernels import get_kernel, get_locked_kernel, get_local_kernel, LayerRepository\n"
        "a = get_kernel('org/a')\n"
        "b = get_kernel('org/b', version=1)\n"
        "c = kernels.get_kernel('org/c', revision='abc')\n"
        "d = get_kernel('org/d', 'v2')\n"  # the second positional argument is the revision
        "e = get_locked_kernel('org/e')\n"
        "f = LayerRepository(repo_id='org/f', layer_name='X')\n"
        "g = get_kernel('org/g', revision=None)\n"
        "h = get_kernel(name)\n"  # a variable: which repository is not read
        "i = get_local_kernel('kernels/mine')\n"
    )
    uses = python.read("app.py", text)
    assert [(u.name, u.pinned) for u in uses if u.kind == KERNEL] == [
        ("org/a", False),
        ("org/b", True),
        ("org/c", True),
        ("org/d", True),
        ("org/e", True),
        ("org/f", False),
        ("org/g", False),
    ]
    assert [(u.kind, u.name) for u in uses if u.kind == LOCAL_KERNEL] == [(LOCAL_KERNEL, "kernels/mine")]


def test_custom_kernels_and_substitutions() -> None:
    text = (
        "import sys, flash_attn\n"
        "def flash_attn_with_kvcache(q, k_cache, v_cache, *, cache_seqlens=None, **kwargs): ...\n"
        "sys.modules['flash_attn.flash_attn_interface'] = mine\n"
        "flash_attn.flash_attn_with_kvcache = flash_attn_with_kvcache\n"
        "setattr(flash_attn, 'flash_attn_with_kvcache', f)\n"
        "sys.modules['numpy'] = other\n"
    )
    uses = python.read("app.py", text)
    assert [(u.kind, u.location.line, u.keywords) for u in uses if u.kind == CUSTOM] == [
        (CUSTOM, 2, ("q", "k_cache", "v_cache", "cache_seqlens")),  # **kwargs names no block_table
    ]
    assert [u.location.line for u in uses if u.kind == SUBSTITUTE] == [3, 4, 5]


@pytest.mark.parametrize(
    "text",
    [
        "def broken(:\n    generate_batch(\n",  # a syntax error
        "x = " + "(" * 5000 + "generate_batch" + ")" * 5000 + "\n",  # nesting past the parser's stack
        "print 'python 2'  # generate_batch\n",
        "\x00generate_batch\x00",
    ],
)
def test_bad_code_is_nothing_never_a_crash(text: str) -> None:
    assert python.read("bad.py", text) == []


def test_locations_are_the_call_on_its_first_line() -> None:
    (use,) = [
        u
        for u in python.read(
            "a.py", "import flash_attn\nx = flash_attn.flash_attn_with_kvcache(\n  q, block_table=b)\n"
        )
    ]
    assert (use.location.line, use.location.column, use.location.end_line) == (2, 5, 2)


# --- command lines and the kernels lock ----------------------------------------------------------


def test_command_lines() -> None:
    text = (
        "# transformers serve --continuous-batching  (a comment)\n"
        "echo transformers serve --port 1\n"
        "transformers serve --port 8000 \\\n"
        "   --continuous-batching\n"
        "accelerate launch train.py --use_transformers_paged true\n"
        "python train.py --use_transformers_paged false\n"
        "python run.py --attn_implementation=flash_attention_3 --x 1\n"
        "ls --attn_implementation x\n"
    )
    found = [(u.kind, u.location.line, u.name) for u in commands.command_uses("run.sh", text)]
    assert found == [(PAGED, 4, ""), (PAGED, 5, ""), (ATTN, 7, "flash_attention_3")]


def test_a_dockerfile_exec_form() -> None:
    text = (
        "FROM python:3.11\n"
        'CMD ["transformers", "serve", "--continuous-batching", "--attn-implementation", "flash_attention_3"]\n'
        'ENTRYPOINT ["transformers", "serve", "--port", "8000"]\n'
    )
    found = [
        (u.kind, u.location.line, u.location.column, u.name)
        for u in commands.command_uses("Dockerfile", text)
    ]
    assert found == [(PAGED, 2, 32, ""), (ATTN, 2, 57, "flash_attention_3")]


def test_training_configs() -> None:
    text = (
        "model_name_or_path: Qwen/Qwen2.5-1.5B\n"
        "attn_implementation: flash_attention_2  # FA2\n"
        "use_transformers_paged: true\n"
        "parallelism_config_sp_attn_implementation: flash_attention_2\n"  # another key, accelerate's
        "  attn_implementation: null\n"
        "use_transformers_paged: false\n"
    )
    found = [
        (u.kind, u.location.line, u.location.column, u.name) for u in commands.config_uses("grpo.yaml", text)
    ]
    assert found == [(ATTN, 2, 22, "flash_attention_2"), (PAGED, 3, 1, "")]


def test_a_training_config_is_found_by_its_head_and_joined_with_the_install(project: Any) -> None:
    root = project(
        {
            "requirements.txt": "flash-attn==2.6.3\n",
            "recipes/grpo.yaml": "attn_implementation: flash_attention_3\nuse_transformers_paged: true\n",
            "recipes/other.yaml": "learning_rate: 1.0e-6\n",
        },
    )
    found = sorted(Path(t.path).name for t in discover([str(root)]))
    assert found == ["grpo.yaml", "requirements.txt"]
    assert findings(root) == [("grpo.yaml", 1, "FAL021", "warning")]


def test_a_stale_kernels_lock() -> None:
    pyproject = '[tool.kernels.dependencies]\n"org/a" = 1\n"org/b" = 1\n'
    lock = json.dumps([{"repo_id": "org/a", "sha": "0" * 40}, {"repo_id": "org/old", "sha": "1" * 40}])
    found = commands.stale_lock("pyproject.toml", pyproject, "kernels.lock", lock)
    assert [(u.kind, u.location.path, u.name) for u in found] == [
        (STALE_LOCK, "pyproject.toml", "org/b"),
        (STALE_LOCK, "kernels.lock", "org/old"),
    ]
    assert commands.stale_lock("pyproject.toml", pyproject, "kernels.lock", "not json") == []
    good = json.dumps([{"repo_id": "org/a"}, {"repo_id": "org/b"}])
    assert commands.stale_lock("pyproject.toml", pyproject, "kernels.lock", good) == []


# --- the rules, through the CLI ------------------------------------------------------------------


def findings(path: Path, *codes: str) -> list[tuple[str, int, str, str]]:
    r = run("--format", "json", "--isolated", str(path))
    return [
        (Path(f["path"]).name, f["line"], f["code"], f["severity"])
        for f in r.json["findings"]
        if not codes or f["code"] in codes
    ]


KVCALL = "from flash_attn import flash_attn_with_kvcache\nflash_attn_with_kvcache(q, k, v, block_table=b)\n"


@pytest.mark.parametrize(
    ("pin", "expected"),
    [
        ("flash-attn==2.4.2", [("serve.py", 2, "FAL018", "error")]),
        ("flash-attn==2.5.0", []),  # block_table ships in 2.5.0
        ("flash-attn>=2.3,<2.5", [("serve.py", 2, "FAL018", "error")]),  # every release it admits lacks it
        ("flash-attn>=2.4", []),  # admits releases with it: FAL002's, not a certain TypeError
    ],
)
def test_fal018_a_call_the_installed_release_cannot_take(project: Any, pin: str, expected: list) -> None:
    root = project({"requirements.txt": f"{pin}\n", "app/serve.py": KVCALL})
    assert findings(root, "FAL018") == expected


def test_fal018_needs_an_install_above_the_code(project: Any) -> None:
    root = project({"other/requirements.txt": "flash-attn==2.4.2\n", "app/serve.py": KVCALL})
    assert findings(root, "FAL018") == []


SUBSTITUTED = (
    "import sys\n"
    "def flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=None):\n    return q\n"
    "sys.modules['flash_attn'] = sys.modules[__name__]\n"
)


def test_fal019_error_where_the_paged_path_is_certain(project: Any) -> None:
    root = project(
        {
            "requirements.txt": "transformers==5.14.0\nflash-attn==2.6.3\n",
            "stub.py": SUBSTITUTED,
            "serve.py": "from transformers import AutoModelForCausalLM\nm.generate_batch(x)\n",
        },
    )
    r = run("--format", "json", "--isolated", str(root))
    (f,) = [f for f in r.json["findings"] if f["code"] == "FAL019"]
    assert (f["line"], f["severity"]) == (2, "error")
    assert any("5.14.0 raises ValueError" in n for n in f["notes"])


def test_fal019_warning_without_the_paged_path_and_the_silent_drop_of_519(project: Any) -> None:
    root = project({"requirements.txt": "transformers==5.19.0\n", "stub.py": SUBSTITUTED})
    r = run("--format", "json", "--isolated", str(root))
    (f,) = [f for f in r.json["findings"] if f["code"] == "FAL019"]
    assert f["severity"] == "warning"
    assert any("5.19.0 drops the block table" in n for n in f["notes"])


@pytest.mark.parametrize(
    "params", ["q, k_cache, v_cache, block_table=None", "q, k_cache, v_cache, *, page_table=None"]
)
def test_fal019_not_for_a_kernel_that_takes_a_block_or_page_table(project: Any, params: str) -> None:
    root = project({"stub.py": SUBSTITUTED.replace("q, k_cache, v_cache, cache_seqlens=None", params)})
    assert findings(root, "FAL019") == []


def test_fal019_not_for_a_function_nothing_puts_in_place(project: Any) -> None:
    root = project({"ref.py": "def flash_attn_with_kvcache(q, k, v):\n    return q\n"})
    assert findings(root, "FAL019") == []


def test_fal020_unpinned_kernels_and_a_stale_lock(project: Any) -> None:
    root = project(
        {
            "app.py": (
                "from kernels import get_kernel\n"
                "get_kernel('org/a')\n"
                "get_kernel('org/b', version=1)\n"
                "m = from_pretrained('x', attn_implementation='org/c')\n"
                "m = from_pretrained('x', attn_implementation='org/d@abc123:fn')\n"
            ),
            "pyproject.toml": '[project]\nname = "x"\n[tool.kernels.dependencies]\n"org/a" = 1\n',
            "kernels.lock": json.dumps([{"repo_id": "org/z", "sha": "0" * 40}]),
        },
    )
    assert findings(root, "FAL020") == [
        ("app.py", 2, "FAL020", "warning"),
        ("app.py", 4, "FAL020", "warning"),
        ("kernels.lock", 1, "FAL020", "warning"),
        ("pyproject.toml", 4, "FAL020", "warning"),
    ]


@pytest.mark.parametrize(
    ("reqs", "expected"),
    [
        ("flash-attn==2.6.3\n", [("app.py", 2, "FAL021", "warning")]),  # FA2 installed, FA3 asked for
        ("flash-attn==2.6.3\nflash-attn-3==3.0.0b1\n", []),
        ("flash-attn==2.6.3\nkernels==0.9.0\n", []),  # the Hub kernel transformers falls back to
        ("torch==2.4.0\n", []),  # an install that says nothing of attention packages
    ],
)
def test_fal021_an_implementation_nothing_installs(project: Any, reqs: str, expected: list) -> None:
    app = "from transformers import AutoModel\nAutoModel.from_pretrained('m', attn_implementation='flash_attention_3')\n"
    root = project({"requirements.txt": reqs, "app.py": app})
    assert findings(root, "FAL021") == expected


def _notes(path: Path, code: str) -> list[str]:
    r = run("--format", "json", "--isolated", str(path))
    return [n for f in r.json["findings"] if f["code"] == code for n in f["notes"]]


def test_fal001_says_where_the_code_takes_the_paged_path(project: Any) -> None:
    root = project(
        {
            "requirements.txt": "transformers==5.14.0\nflash-attn==2.4.2\n",
            "serve.sh": "transformers serve \\\n  --continuous-batching\n",
        },
    )
    notes = _notes(root, "FAL001")
    assert any(
        n.startswith("the code takes the paged path: transformers serve") and "serve.sh:2" in n for n in notes
    )


def test_a_manifest_serves_its_own_folder_a_workflow_the_whole_repository(project: Any) -> None:
    root = project(
        {
            "svc/a/requirements.txt": "flash-attn==2.4.2\n",
            "svc/b/serve.py": "from transformers import AutoModel\nm.generate_batch(x)\n",
            ".github/workflows/ci.yml": "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n"
            "      - run: pip install flash-attn==2.4.2\n",
        },
    )
    r = run("--format", "json", "--isolated", str(root))
    notes = {Path(f["path"]).name: f["notes"] for f in r.json["findings"] if f["code"] == "FAL001"}
    assert any(
        n.startswith(f"none of the code under {root / 'svc/a'}/ takes") for n in notes["requirements.txt"]
    )
    assert any(n.startswith("the code takes the paged path: generate_batch() at ") for n in notes["ci.yml"])


def test_fal001_says_when_no_code_takes_it_but_only_after_reading_the_code(project: Any) -> None:
    root = project({"requirements.txt": "flash-attn==2.4.2\n", "main.py": "print('hi')\n"})
    assert any(
        n.startswith(f"none of the code under {root}/ takes the paged path") for n in _notes(root, "FAL001")
    )
    named = run("--format", "json", "--isolated", str(root / "requirements.txt"))
    notes = [n for f in named.json["findings"] for n in f["notes"]]
    assert not any("paged path" in n and "code" in n for n in notes)  # one file named: no code was read


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("transformers-cb-simple", [("batch_decode.py", 14, "FAL020", "warning")]),
        # unpinned flash-attn admits 2.5.0-2.5.6, whose flash_attn_varlen_func has no block_table (2.5.7);
        # pip install . builds the unpinned flash-attn of [project] dependencies (FAL012, issue 42)
        (
            "nano-vllm-attention",
            [
                ("paged_attention.py", 14, "FAL018", "warning"),
                ("pyproject.toml", 7, "FAL002", "warning"),
                ("pyproject.toml", 7, "FAL012", "warning"),
            ],
        ),
        ("nano-vllm-attention-old-pin", [("paged_attention.py", 14, "FAL018", "error")]),
        ("diffusers-kernels-revision", []),
        ("kernels-basic", []),
    ],
)
def test_realworld(case: str, expected: list) -> None:
    assert findings(REALWORLD / case) == expected


# --- the transformers facts the code layer reads (derived from the wheels by the script) -------------


def test_transformers_facts_for_the_code_layer() -> None:
    from packaging.version import Version

    from fa_lint.kb.transformers import load

    facts = load()
    # read from each wheel: generation/continuous_batching.py `def generate_batch(` since 4.53.0;
    # utils/import_utils.py `"flash-attn-3" in [` since 5.4.0; continuous_api.py's FA3-then-FA2 switch
    assert (facts.generate_batch, facts.fa3_by_distribution, facts.cb_fa3_first) == (
        Version("4.53.0"),
        Version("5.4.0"),
        Version("5.15.0"),
    )
    assert facts.evidence["fa3_by_distribution"].startswith(
        "transformers 5.4.0: transformers/utils/import_utils.py:"
    )
    # utils/generic.py at 5.24.0: re.match(r".*flash.*" + str(v), name) for v in [2, 3]
    assert facts.block_table_name("flash_attention_2") is True
    assert facts.block_table_name("kernels-community/flash-attn3") is True
    assert facts.block_table_name("kernels-community/flash-attn") is False  # no digit
    assert facts.block_table_name("flash_attention_4") is False
    assert facts.block_table_name("paged|flash_attention_3") is True
    assert facts.block_table_name("flash_attention_2", Version("5.12.1")) is None  # before FA2's block table


def test_the_script_reads_the_name_rule_per_release(tmp_path: Path) -> None:
    import subprocess
    import sys
    import zipfile

    generic = "transformers/utils/generic.py"
    releases = {
        "5.0.0": "def is_flash_attention_requested(config=None):\n    return 'flash' in name\n",
        "5.13.0": (
            "def is_flash_attention_requested(config=None, version=None):\n"
            '    return any(re.match(r".*flash.*" + str(v), name) is not None for v in version)\n'
        ),
    }
    for version, text in releases.items():
        with zipfile.ZipFile(tmp_path / f"transformers-{version}-py3-none-any.whl", "w") as z:
            z.writestr(generic, text)
    out = tmp_path / "out.json"
    script = str(REPO / "scripts/build_transformers_kb.py")
    proc = subprocess.run([sys.executable, script, str(tmp_path), "--output", str(out)], capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["flash_request_rule"] == [
        {"since": "5.0.0", "value": "flash substring", "evidence": f"{generic}:1"},
        {"since": "5.13.0", "value": ".*flash.*{version}", "evidence": f"{generic}:2"},
    ]


def test_the_note_says_when_the_asked_implementation_never_gets_a_block_table(project: Any) -> None:
    root = project(
        {
            "requirements.txt": "transformers==5.24.0\nflash-attn==2.4.2\n",
            "serve.py": (
                "from transformers import AutoModelForCausalLM\n"
                "m = AutoModelForCausalLM.from_pretrained('m', attn_implementation='kernels-community/flash-attn')\n"
                "m.generate_batch(x)\n"
            ),
        },
    )
    (note,) = [n for n in _notes(root, "FAL001") if n.startswith("the code takes the paged path")]
    assert "no flash-attn 2 or 3 by transformers 5.24.0's rule" in note


# --- the in-process startup check (fa_lint.verify.startup) ----------------------------------------


def test_startup_check_imports_nothing_heavy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, fa_lint.verify.startup\n"
        "heavy = [m for m in ('torch', 'transformers', 'flash_attn') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr


def test_startup_check_on_a_function_and_a_module() -> None:
    import types

    from fa_lint.verify.startup import PagedKernelError, check_paged_kernel, paged_kernel_ok

    def flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=None, block_table=None):
        return q

    def old(q, k_cache, v_cache, cache_seqlens=None, **kwargs):
        return q

    assert check_paged_kernel(flash_attn_with_kvcache) == "flash_attn_with_kvcache takes block_table"
    kernel = types.ModuleType("org_kernel")
    kernel.flash_attn_with_kvcache = old  # type: ignore[attr-defined]
    with pytest.raises(
        PagedKernelError, match=r"takes neither block_table nor page_table.*flash-attn>=2\.5\.0"
    ):
        check_paged_kernel(kernel)
    assert paged_kernel_ok(kernel) is False
    assert paged_kernel_ok(types.ModuleType("empty")) is False  # no flash_attn_with_kvcache at all


def test_startup_check_reads_the_installed_source_without_importing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from fa_lint.verify import startup

    interface = tmp_path / "flash_attn/flash_attn_interface.py"
    interface.parent.mkdir()
    interface.write_text("def flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=None):\n    pass\n")

    class Dist:
        files = ("flash_attn/flash_attn_interface.py",)
        metadata = MappingProxyType({"Version": "2.4.2"})

        def locate_file(self, rel: str) -> Path:
            return tmp_path / rel

    monkeypatch.delitem(sys.modules, "flash_attn", raising=False)
    monkeypatch.setattr(startup, "_distribution", lambda name: Dist() if name == "flash-attn" else None)
    with pytest.raises(startup.PagedKernelError, match=r"flash-attn 2\.4\.2 .* takes neither"):
        startup.check_paged_kernel()
    interface.write_text("def flash_attn_with_kvcache(q, k_cache, v_cache, block_table=None):\n    pass\n")
    assert (
        startup.check_paged_kernel()
        == "flash-attn 2.4.2 (flash_attn.flash_attn_with_kvcache) takes block_table"
    )
    monkeypatch.setattr(startup, "_distribution", lambda name: None)
    with pytest.raises(startup.PagedKernelError, match="no flash-attn distribution is installed"):
        startup.check_paged_kernel()


# --- hostile input (docs/reliability.md) -----------------------------------------------------------


def test_a_python_file_past_the_limit_is_not_searched(tmp_path: Path) -> None:
    from fa_lint.files import discover as discovering

    big = tmp_path / "generated.py"
    big.write_bytes(b"x = 1\n" * (discovering.CODE_BYTES // 6 + 1) + b"m.generate_batch(x)\n")
    assert [t.path for t in discover([str(tmp_path)])] == []
    r = run("--format", "json", "--isolated", str(tmp_path))
    assert r.code == 0 and r.json["findings"] == []  # nothing read, nothing reported: no FAL900 either


def test_a_long_continued_command_line_is_read_in_linear_time() -> None:
    import time

    def cost(n: int) -> float:
        text = "transformers serve" + " \\\n  --x" * n + " \\\n  --continuous-batching\n"
        start = time.perf_counter()
        (use,) = commands.command_uses("run.sh", text)
        assert use.kind == PAGED
        return time.perf_counter() - start

    cost(1000)  # warm
    small, large = min(cost(20_000) for _ in range(3)), min(cost(200_000) for _ in range(3))
    assert large < small * 30  # ten times the input: about ten times the time, not a hundred


def test_many_lines_without_a_newline_at_the_end_and_lone_backslashes() -> None:
    assert commands.command_uses("run.sh", "\\" * 10_000) == []
    assert commands.command_uses("run.sh", "python x.py --attn_implementation") == []
