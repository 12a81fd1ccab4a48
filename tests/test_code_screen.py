"""fa_lint.code.screen: a Python file with a word is parsed only where a use can be (issue 41).

The screen must never pass over a file the reader finds a use in: each kind of use is checked on its
own shapes, on generated files against ``code.python.read`` (the oracle), and on every Python file of
../shared. It must also pass over the usual files with a word and no use, or it saves nothing.
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fa_lint.code import prefilter, python, readers
from fa_lint.code.screen import may_use

SHARED = Path(__file__).resolve().parents[1].parent / "shared"

# One file per kind of use, each a use the reader finds (asserted below, so the table cannot rot).
WITH_A_USE = {
    "call": "from flash_attn import flash_attn_with_kvcache\nflash_attn_with_kvcache(q, k, v, block_table=b)\n",
    "varlen call": "import flash_attn as fa\nfa.flash_attn_varlen_func(q, k, v)\n",
    "star call": "from flash_attn import *\nflash_attn_varlen_func(q, k, v)\n",
    "custom": "def flash_attn_with_kvcache(q, k_cache, v_cache):\n    pass\n",
    "sys.modules": "import sys\nsys.modules['flash_attn'] = stub\nx = 'attn_implementation'\n",
    "sys.modules by a name": "import sys\nNAME = 'flash_attn.flash_attn_interface'\nsys.modules[NAME] = stub\n",
    "setattr": "import flash_attn\nsetattr(flash_attn, 'flash_attn_with_kvcache', mine)\n",
    "fa3 import": "import flash_attn_interface\n",
    "fa3 from-import": "from flash_attn_interface import flash_attn_func\n",
    "fa3 in an import list, continued": "import os, \\\n    flash_attn_interface as fa3\n",
    "an import with a long run of blanks": "import" + " " * 300 + "flash_attn_interface\n",
    "flash-attn in an import list": "import os, flash_attn\nflash_attn.flash_attn_varlen_func(q, k, v)\n",
    "hub kernel": "from kernels import get_kernel\nk = get_kernel('kernels-community/flash-attn')\n",
    "locked kernel": "import kernels\nk = kernels.get_locked_kernel('kernels-community/flash-attn')\n",
    "local kernel": "from kernels import get_local_kernel\nk = get_local_kernel(path)\n",
    "layer repository": "from kernels import LayerRepository\nr = LayerRepository(repo_id='org/k', layer_name='A')\n",
    "generate_batch": "import transformers\nout = model.generate_batch(inputs)\n",
    "init_continuous_batching": "from trl import X\nmanager = model.init_continuous_batching()\n",
    "manager class": "from transformers import ContinuousBatchingManager\nm = ContinuousBatchingManager(model)\n",
    "cache_implementation": "import transformers\nmodel.generate(x, cache_implementation='paged')\n",
    "use_transformers_paged": "from trl import GRPOConfig\nc = GRPOConfig(use_transformers_paged=True)\n",
    "max_blocks_per_request": (
        "from transformers import ContinuousBatchingConfig\nc = ContinuousBatchingConfig(max_blocks_per_request=0)\n"
    ),
    "cpu device": "from transformers import AutoModel\nm = AutoModel.from_pretrained(p, device_map='cpu')\nattn_implementation = 1\n",
    "mps device by a name": (
        "from transformers import AutoModel\nDEV = 'mps'\nm = AutoModel.from_pretrained(p, device=DEV, attn_implementation=a.b)\n"
    ),
    "keyword literal": "model = load(attn_implementation='flash_attention_2')\n",
    "keyword prefixed literal": "model = load(attn_implementation=r'sdpa')\n",
    "keyword in brackets": "model = load(\n    attn_implementation  # why\n    =\n    'sdpa',\n)\n",
    "keyword continued": "model = load(attn_implementation= \\\n 'sdpa')\n",
    "keyword parenthesised": "model = load(attn_implementation=('sdpa'))\n",
    "module constant": "ATTN = 'flash_attention_2'\n\ndef f():\n    return load(attn_implementation=ATTN)\n",
    "constant after a semicolon": "import os; ATTN = 'sdpa'\nload(attn_implementation=ATTN)\n",
    "constant after a form feed": "x = 1\n  \fATTN = 'sdpa'\nload(attn_implementation=ATTN)\n",
    "constant continued": "ATTN \\\n= 'sdpa'\nload(attn_implementation=ATTN)\n",
    "option default": (
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--attn', default='sdpa')\n"
        "args = p.parse_args()\nload(attn_implementation=args.attn)\n"
    ),
    "option default of a call": (
        "p.add_argument('--attn', default='sdpa')\nload(attn_implementation=parse().attn)\n"
    ),
    "attribute assignment": "config._attn_implementation = 'eager'\n",
    "chained assignment": "config.attn_implementation = other.attn_implementation = 'sdpa'\n",
    "chained through a name": "config.attn_implementation = impl = 'sdpa'\n",
    "set_attn_implementation": "model.set_attn_implementation('sdpa')\n",
    "set_attn_implementation spaced": "model.set_attn_implementation ('sdpa')\n",
    "annotated field": "class C:\n    attn_implementation: str = 'flash_attention_2'\n",
    "dataclass field": (
        "from dataclasses import field\nclass C:\n    attn_implementation: str = field(default='sdpa')\n"
    ),
    "decorator keyword": "@register(attn_implementation='sdpa')\ndef f():\n    pass\n",
    "f-string expression": "s = f\"{load(attn_implementation='sdpa')}\"\n",
    "windows line ends": "ATTN = 'sdpa'\r\nload(attn_implementation=ATTN)\r\n",
    "old mac line ends": "ATTN = 'sdpa'\rload(attn_implementation=ATTN)\r",
    "a ligature in the name": "model = load(\ufb02ag=1, attn_implementation='sdpa')\n",
    "full-width letters": "model = load(\uff41ttn_implementation='sdpa')\n",
}


@pytest.mark.parametrize("name", sorted(WITH_A_USE))
def test_every_kind_of_use_is_kept(name: str) -> None:
    text = WITH_A_USE[name]
    assert python.read("f.py", text), name  # the table holds uses (the reader is the oracle)
    assert may_use(text), name


# The usual files with a word and no use (the clones' shapes), passed over without a parse.
WITHOUT_A_USE = {
    "a value only a run knows": "model = load(attn_implementation=model_args.attn_implementation)\n",
    "a parameter passed on": "def f(x, impl):\n    return load(x, attn_implementation=impl)\n",
    "a local name": "def f():\n    attention = 'flash_attention_2'\n    return load(attn_implementation=attention)\n",
    "a name bound in a block": "if x:\n    ATTN = 'sdpa'\nload(attn_implementation=ATTN)\n",
    "read": "if config._attn_implementation == 'flash_attention_2':\n    pass\nimpl = config.attn_implementation\n",
    "a longer name": "attn_implementation_autoset = True\n",
    "a condition": "load(attn_implementation=a if b else c)\n",
    "a call": "load(attn_implementation=pick(x))\n",
    "none": "load(attn_implementation=None)\n",
    "flash-attn's names, nothing read": (
        "from flash_attn import flash_attn_func\nif cfg.attn_implementation == 'fa':\n    flash_attn_func(q, k, v)\n"
    ),
    "transformers' own varlen": (
        "from transformers.modeling_flash_attention_utils import flash_attn_varlen_func\n"
        "flash_attn_varlen_func(q, k, v)\n"
    ),
    "fa2's interface module": "from flash_attn.flash_attn_interface import flash_attn_func\n",
    "generate_batch of no transformers": "out = engine.generate_batch(inputs)\n",
    "a model on the GPU": (
        "import transformers\nm = transformers.AutoModel.from_pretrained(p, device_map=args.device)\n"
        "x = 'cpu'\nimpl = m.config._attn_implementation\n"
    ),
    "another package's get_kernel": "from mylib import get_kernel\nget_kernel('org/repo')\n",
    "fa3's module named in a string": "NAME = 'flash_attn_interface'\nimpl = cfg.attn_implementation\n",
    "fa2's module in a string": "import x\ns = 'flash_attn.cute'\nfrom m import flash_attn_varlen_func\n",
    "a test named like a paged method": (
        "import transformers\ndef test_generate_batched(x):\n    return cfg.attn_implementation\n"
    ),
    "kernels named, not imported": "from mylib import get_kernel\nhelp = 'pip install kernels'\nget_kernel('a/b')\n",
}


@pytest.mark.parametrize("name", sorted(WITHOUT_A_USE))
def test_the_usual_files_without_a_use_are_passed_over(name: str) -> None:
    text = WITHOUT_A_USE[name]
    assert prefilter.wanted_text(text), name  # each names a word: the byte search keeps it
    assert not python.read("f.py", text), name
    assert not may_use(text), name


def test_the_reader_is_not_loaded_for_a_file_passed_over() -> None:
    text = WITHOUT_A_USE["a value only a run knows"]
    assert readers.uses_of("f.py", "python-app", text) == []


# ---- generated files, the reader as the oracle ---------------------------------------------------

IMPORTS = [
    "",
    "import transformers\n",
    "from trl import GRPOConfig\n",
    "import flash_attn as fa\n",
    "from flash_attn import *\n",
    "from flash_attn import flash_attn_varlen_func as fv\n",
    "import flash_attn_interface\n",
    "import torch, \\\n  flash_attn_interface\n",
    "import os, flash_attn as fa\n",
    "X = 'flash_attn_interface'\n",
    "from kernels import get_kernel, get_local_kernel\n",
    "help = 'import kernels'\n",
    "import sys\n",
    "from dataclasses import field\n",
    "import argparse\np = argparse.ArgumentParser()\n",
]
CONSTANTS = [
    "",
    "ATTN = 'flash_attention_2'\n",
    'ATTN = "sdpa"\n',
    "DEV = 'cpu'\n",
    "KEY = 'flash_attn'\n",
    "x = 0; ATTN = 'eager'\n",
    "\fDEV = 'mps:0'\n",
    "if x:\n    ATTN = 'sdpa'\n",
    "ATTN \\\n  = 'sdpa'\n",
    "OTHER = ATTN2 = 'sdpa'\n",
]
VALUES = [
    "'flash_attention_2'",
    '"sdpa"',
    "r'cpu'",
    "b'cpu'",
    "f'{x}'",
    "('paged')",
    "ATTN",
    "DEV",
    "KEY",
    "OTHER",
    "ATTN2",
    "impl",
    "args.attn",
    "a.b.c",
    "cfg().attn",
    "x if y else 'sdpa'",
    "'a' 'b'",
    "None",
    "True",
    "0",
    "[1]",
    "-1",
    "pick(x)",
    "d['k']",
    "'flash_attn_with_kvcache'",
    "'paged'",
]
KEYWORDS = [
    "attn_implementation",
    "device_map",
    "device",
    "cache_implementation",
    "use_transformers_paged",
    "max_blocks_per_request",
    "repo_id",
    "default",
    "my_attn_implementation",
]
CALLEES = [
    "AutoModel.from_pretrained",
    "model.load",
    "load",
    "fa.flash_attn_with_kvcache",
    "fv",
    "flash_attn_varlen_func",
    "get_kernel",
    "get_local_kernel",
    "model.generate_batch",
    "model.init_continuous_batching",
    "transformers.ContinuousBatchingConfig",
    "model.set_attn_implementation",
    "p.add_argument",
    "setattr",
    "field",
    "GRPOConfig",
]
TARGETS = [
    "config.attn_implementation",
    "self._attn_implementation",
    "attn_implementation",
    "fa.flash_attn_with_kvcache",
]
GAPS = ["", " ", "\n    ", "  # note\n    ", "\\\n "]  # between tokens inside brackets


def statement(rng: random.Random) -> str:
    kind, value = rng.randrange(6), rng.choice(VALUES)
    if kind == 0:  # a call with a keyword (after a positional argument, maybe)
        gap, gap2 = rng.choice(GAPS), rng.choice(GAPS)
        first = rng.choice(["", "'--attn', ", "fa, ", "x, "])
        return f"{rng.choice(CALLEES)}({first}{gap}{rng.choice(KEYWORDS)}{gap2}={gap}{value})\n"
    if kind == 1:
        return f"{rng.choice(CALLEES)}({value})\n"
    if kind == 2:  # an assignment, continued or not
        blank = rng.choice([" ", "", " \\\n "])
        return f"{rng.choice(TARGETS)}{blank}={blank}{value}\n"
    if kind == 3:
        return f"attn_implementation: str = {value}\n"
    if kind == 4:
        return f"sys.modules[{value}] = stub\n"
    return f"if {rng.choice(CALLEES)}.attn_implementation == {value}:\n    pass\n"


def program(rng: random.Random) -> str:
    head = "".join(rng.choice(IMPORTS) for _ in range(rng.randrange(4))) + rng.choice(CONSTANTS)
    body = "".join(statement(rng) for _ in range(rng.randrange(1, 5)))
    wrap = rng.choice(["", "def main():\n", "def test_it():\n", "class C:\n"])
    if wrap:
        body = wrap + "".join(f"    {line}\n" for line in body.splitlines())
    return head + body


@settings(max_examples=800, deadline=None)
@given(st.randoms(use_true_random=False))
def test_a_file_passed_over_holds_no_use(rng: random.Random) -> None:
    text = program(rng)
    if not may_use(text):
        assert python.read("f.py", text) == [], text


def test_the_generated_files_are_of_both_kinds() -> None:
    """The property is worth something only where the generator makes files the reader parses, with
    uses and without, and files the screen passes over."""
    texts = [program(random.Random(seed)) for seed in range(400)]
    parsed = [t for t in texts if _parses(t)]
    assert len(parsed) > 300
    with_use = sum(1 for t in parsed if python.read("f.py", t))
    passed_over = sum(1 for t in parsed if not may_use(t))
    assert with_use > 100 and passed_over > 30 and len(parsed) - with_use > 100


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def _texts() -> list[tuple[str, str]]:
    """Every Python file of ../shared, and every string of the code layer's own tests (the shapes
    written for each reader), by where each is."""
    found = []
    for folder in ("corpus", "realworld"):
        root = SHARED / folder
        for path in sorted(root.rglob("*.py")) if root.is_dir() else []:
            found.append((str(path), path.read_text(encoding="utf-8", errors="surrogateescape")))
    here = Path(__file__).resolve().parent
    for module in ("test_code.py", "test_code_reading.py", "test_code_paths.py", "test_identifiers.py"):
        path = here / module
        if not path.is_file():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" in node.value:
                found.append((f"{module}:{node.lineno}", node.value))
    return found


def test_no_file_or_test_string_with_a_use_is_passed_over() -> None:
    kept = 0
    for where, text in _texts():
        if python.read("f.py", text):
            kept += 1
            assert may_use(text), where
    assert kept > 20  # the code layer's tests hold many uses: the check saw them
