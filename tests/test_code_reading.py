"""What the code layer reads as Python reads it (issue 38: 50, 51, 59), what is no use (issue 40 item 3),
and one pass over each tree (issue 41).

Expectations come from the facts: Python normalises identifiers to NFKC while parsing (PEP 3131) and
decodes a file in the encoding it declares (PEP 263); ``from M import *`` binds ``__all__``, or every
public name of a module without one (the Python reference, "The import statement"; flash-attn's
``flash_attn/__init__.py`` has none: Dao-AILab/flash-attention v2.5.8 ``flash_attn/__init__.py:3-11``);
flash-attn 2.5.8's ``flash_attn_with_kvcache`` has no ``softcap`` (it arrives in 2.6.0,
``flash_attn/flash_attn_interface.py``), so a call with it raises TypeError (FAL018).
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fa_lint.code import lines, prefilter, python
from fa_lint.code.uses import ATTN, CALL, IMPORT, KERNEL, PAGED
from fa_lint.kb import exports
from fa_lint.syntax import pyast
from fa_lint.syntax.pylines import word_lines
from tests.conftest import REPO, lint
from tests.fuzz import code_inputs

CALL_SOFTCAP = "out = {name}(q, k_cache, v_cache, softcap=30.0)\n"
OLD = {"requirements.txt": "flash-attn==2.5.8\n"}


def read(text: str) -> list[tuple[str, int, str]]:
    return [(u.kind, u.location.line, u.name) for u in python.read("app.py", text)]


def codes(found: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    return sorted((f["code"], f["path"], f["line"]) for f in found)


# --- 50: identifiers Python normalises (NFKC) --------------------------------------------------------


# Compatibility spellings of "fl" and of whole words, each NFKC-equal to the ASCII word.
FL = ("\ufb02", "f\U0001d5c5", "\uff46\uff4c")  # the ligature, mathematical sans-serif l, fullwidth


@pytest.mark.parametrize("fl", FL)
def test_a_compatibility_spelling_of_a_name_is_read_as_python_reads_it(project: Any, fl: str) -> None:
    """reliability/50: ``\ufb02ash_attn`` imports flash_attn; its call with softcap= is FAL018."""
    source = f"from {fl}ash_attn import {fl}ash_attn_with_kvcache\n" + CALL_SOFTCAP.format(
        name=f"{fl}ash_attn_with_kvcache"
    )
    assert ast.dump(ast.parse(source)) == ast.dump(
        ast.parse(source.replace(fl, "fl"))
    )  # the premise: Python reads both alike
    assert codes(lint(project, {**OLD, "app.py": source})) == [("FAL018", "app.py", 2)]


@pytest.mark.parametrize(
    "word",
    ["generate_batch", "attn_implementation", "get_kernel", "flash_attn_varlen_func", "LayerRepository"],
)
def test_the_prefilter_finds_each_word_in_fullwidth_letters(word: str) -> None:
    """Any word can be hidden so: fullwidth forms (U+FF01-U+FF5E) are NFKC-equal to ASCII."""
    hidden = "".join(chr(ord(c) + 0xFEE0) if c.isalpha() else c for c in word)
    assert not prefilter._holds(hidden.encode())  # the bytes hold no word as written
    assert prefilter.wanted(f"x.{hidden}(1)\n".encode())
    assert prefilter.wanted_text(f"x.{hidden}(1)\n")


def test_non_ascii_text_without_a_word_is_still_passed_over() -> None:
    assert not prefilter.wanted("# 注释: 模型\nprint('héllo')\n".encode())
    assert not prefilter.wanted_text("# 注释\n")


# --- 51: a coding declaration ------------------------------------------------------------------------


def _utf7(text: str) -> bytes:
    return ("# -*- coding: utf-7 -*-\n" + text).replace("_", "+AF8-").encode("ascii")


def test_a_declared_encoding_is_decoded_before_the_search(project: Any) -> None:
    """reliability/51: a utf-7 declaration with each ``_`` as ``+AF8-``: CPython decodes it, and the
    call with softcap= runs."""
    data = _utf7(
        "from flash_attn import flash_attn_with_kvcache\n"
        + CALL_SOFTCAP.format(name="flash_attn_with_kvcache")
    )
    assert b"flash_attn" not in data and prefilter.wanted(data)
    assert "softcap" in ast.dump(ast.parse(data))  # the premise: Python reads the declared codec
    assert codes(lint(project, {**OLD, "app.py": data})) == [("FAL018", "app.py", 3)]


@pytest.mark.parametrize(
    "data",
    [
        b"# -*- coding: utf-8 -*-\nprint(1)\n",
        b"# coding: no-such-codec\nprint(1)\n",  # Python refuses the file: it never runs
        b"#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\nprint('\xe9')\n",
    ],
)
def test_declarations_without_a_word_or_that_python_refuses_are_passed_over(data: bytes) -> None:
    assert not prefilter.wanted(data)


def test_a_declaration_on_the_third_line_is_none() -> None:
    """PEP 263: only the first two lines may declare; the third is a comment, and the bytes are read."""
    data = b"#\n#\n# -*- coding: utf-7 -*-\nget+AF8-kernel('a/b')\n"
    assert not prefilter.wanted(data)
    assert prefilter.wanted(b"# -*- coding: utf-7 -*-\nget+AF8-kernel('a/b')\n")


# --- 59: star imports ----------------------------------------------------------------------------------


@pytest.mark.parametrize("module", ["flash_attn", "flash_attn.flash_attn_interface"])
def test_a_star_import_binds_what_the_release_exports(project: Any, module: str) -> None:
    """reliability/59: ``from flash_attn import *`` binds flash_attn_with_kvcache."""
    app = f"from {module} import *\n" + CALL_SOFTCAP.format(name="flash_attn_with_kvcache")
    assert codes(lint(project, {**OLD, "app.py": app})) == [("FAL018", "app.py", 2)]


def test_star_imports_of_kernels_and_transformers_are_followed() -> None:
    assert read("from kernels import *\nk = get_kernel('org/repo')\n") == [(KERNEL, 2, "org/repo")]
    assert read("from transformers import *\nContinuousBatchingManager(m)\n") == [(PAGED, 2, "")]
    # a module nothing is known of binds nothing: the bare name stays unread
    assert read("from mystery import *\nflash_attn_with_kvcache(q, k, v, block_table=b)\n") == []
    # an explicit import of the name wins over a star import
    text = "from flash_attn import *\nfrom mine import flash_attn_with_kvcache\nflash_attn_with_kvcache(q)\n"
    assert read(text) == []


def test_the_exports_data_is_what_the_script_derives_with_its_source() -> None:
    """Every followed name records the release that first binds it and the line, from the script."""
    doc = json.loads((REPO / "fa_lint/kb/exports.json").read_text())
    assert doc["generator"] == "scripts/build_exports_kb.py"
    fa = doc["modules"]["flash_attn"]["names"]
    # flash_attn/__init__.py imports flash_attn_with_kvcache from 2.2.0 (absent at 2.1.x)
    assert fa["flash_attn_with_kvcache"]["since"] == "2.2.0"
    assert fa["flash_attn_with_kvcache"]["evidence"].startswith("v2.2.0:flash_attn/__init__.py:")
    assert exports.star("kernels")["get_kernel"] == "kernels.get_kernel"
    assert exports.star("nothing-known") == {}


def test_the_exports_script_reads_all_and_public_names(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import build_exports_kb as script
    finally:
        sys.path.remove(str(REPO / "scripts"))
    # no __all__: every public name bound at the top, imports included; underscores left out
    assert set(script.star_names("from a import b as c, d\ndef e(): pass\n_f = 1\ng = 2\n")) == {
        "c",
        "d",
        "e",
        "g",
    }
    # __all__ wins, with the line of each name
    assert script.star_names("from a import b, c\n__all__ = [\n 'b',\n]\n") == {"b": 3}
    # a lazy module: the names in its _import_structure
    lazy = "_import_structure = {'generation': ['ContinuousBatchingManager']}\n_import_structure['x'].extend(['Y'])\n"
    assert set(script.star_names(lazy)) == {"ContinuousBatchingManager", "Y"}


# --- issue 40 item 3: code that is not a use ----------------------------------------------------------


@pytest.mark.parametrize(
    "guard",
    [
        "pytest.raises(ValueError)",
        "pytest.raises(ValueError, match='must be specified')",
        "self.assertRaises(ValueError)",
        "self.assertRaisesRegex(ValueError, 'x')",
    ],
)
def test_what_runs_under_an_expected_failure_is_no_use(guard: str) -> None:
    """kernels' own tests assert ``get_kernel(repo)`` without a version raises (huggingface/kernels
    8ac69fc5 kernels/tests/test_basic.py:136-140): the call is the failure under test."""
    text = (
        "import pytest\nfrom kernels import get_kernel, LayerRepository\n"
        f"def test_x(self):\n    with {guard}:\n        get_kernel('org/repo')\n"
        "    with pytest.raises(ValueError):\n        LayerRepository(repo_id='org/a', layer_name='L')\n"
        "    get_kernel('org/b', version=1)\n"
    )
    assert read(text) == [(KERNEL, 8, "org/b")]


def test_an_expected_failure_imported_by_name_and_among_several_managers() -> None:
    text = (
        "from pytest import raises as r\nfrom kernels import get_kernel\n"
        "with r(ValueError), open('f'):\n    get_kernel('org/repo')\n"
        "with open('f'):\n    get_kernel('org/kept')\n"
    )
    assert read(text) == [(KERNEL, 6, "org/kept")]


def test_a_with_that_is_not_an_expected_failure_keeps_its_uses() -> None:
    text = "import torch\nfrom kernels import get_kernel\nwith torch.no_grad():\n    get_kernel('org/repo')\n"
    assert read(text) == [(KERNEL, 4, "org/repo")]


def test_in_a_test_function_only_a_loader_takes_an_implementation_name() -> None:
    """axolotl tests/test_attn_implementation.py:319-326 (067b021c): a config dict of
    attn_implementation="kernels-community/flash-attn3" is handed to a validator; nothing loads."""
    text = (
        "from transformers import AutoModel\n"
        "class TestConfig:\n"
        "    def test_hub(self, base):\n"
        "        cfg = base | DictDefault(attn_implementation='kernels-community/flash-attn3')\n"
        "        assert validate_config(cfg).attn_implementation\n"
        "    def test_load(self):\n"
        "        AutoModel.from_pretrained('m', attn_implementation='kernels-community/flash-attn2')\n"
        "        AutoModel.from_config(c, attn_implementation='flash_attention_2')\n"
        "        model.set_attn_implementation('flash_attention_3')\n"
        "def helper():\n"
        "    return dict(attn_implementation='flash_attention_2')\n"
    )
    assert read(text) == [
        (ATTN, 7, "kernels-community/flash-attn2"),
        (ATTN, 8, "flash_attention_2"),
        (ATTN, 9, "flash_attention_3"),
        (ATTN, 11, "flash_attention_2"),  # outside a test function, a config built for a loader
    ]


def test_a_test_functions_direct_calls_are_still_uses() -> None:
    """A test that calls flash-attn runs the call on the test machine: a TypeError there is real."""
    text = "from flash_attn import flash_attn_with_kvcache as f\ndef test_decode():\n    f(q, k, v, softcap=1.0)\n"
    assert read(text) == [(CALL, 3, "flash_attn_with_kvcache")]


# --- issue 41: the tree is walked once ---------------------------------------------------------------


def test_each_tree_is_walked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: ast.walk three times (uses, aliases, option defaults), every node each time, and in a
    file naming FA3's module once more, with each guard's body walked again. Now one pass, which does
    not descend into names, constants or operators."""
    lines = ["import argparse", "from transformers import AutoModel"]
    for i in range(200):
        lines.append(f"p.add_argument('--a{i}', default='sdpa')")
        lines.append(f"m{i} = AutoModel.from_pretrained('x', attn_implementation=f'{{i}}' + 'y' * {i})")
        lines.append(f"if a{i}:\n    if b:\n        import flash_attn_interface")
    text = "\n".join(lines) + "\nmodel.generate_batch(x)\nimport flash_attn_interface\n"
    tree = ast.parse(text)
    nodes = sum(1 for _ in ast.walk(tree))
    leaves = sum(1 for n in ast.walk(tree) if isinstance(n, pyast.LEAVES))
    expanded = 0
    children = python._children

    def counted(node: ast.AST) -> Any:
        nonlocal expanded
        expanded += 1
        return children(node)

    def no_walk(node: ast.AST) -> Any:
        raise AssertionError("ast.walk: a walk of its own")

    monkeypatch.setattr(python, "_children", counted)
    monkeypatch.setattr(ast, "walk", no_walk)
    found = python.read("app.py", text)
    assert [u.kind for u in found] == [PAGED, IMPORT]  # the guarded imports are none
    assert expanded == nodes - leaves  # each other node once
    assert expanded < nodes  # three walks expanded 3 * nodes


def test_children_are_what_ast_gives_less_the_leaves() -> None:
    """The field table skips only fields that hold no node (names, numbers, flags, contexts, operators):
    on every construct of the grammar, the same children in the same order as ``ast.iter_child_nodes``."""
    text = Path(ast.__file__).read_text() + _EVERY_CONSTRUCT
    if sys.version_info >= (3, 11):
        text += "try:\n    pass\nexcept* E as e:\n    pass\n"
    for node in ast.walk(ast.parse(text)):
        expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, pyast.LEAVES)]
        assert python._children(node) == expected, ast.dump(node)[:200]


_EVERY_CONSTRUCT = """
async def f(a, /, b: int = 1, *c, d, e=2, **g) -> None:
    global x
    nonlocal y
    async with a as (b, c), d:
        async for i in j:
            await k
    x: int = 1
    y += 2
    del z
    assert a, b
    raise A from B
    try:
        pass
    except E as e:
        pass
    match p:
        case {"k": v, **rest}:
            pass
        case C(a, b=c) | [1, *others] | None as q:
            pass
    lambda: (yield)
    [i for i in j if k]
    {i: j async for i in k}
    f"{a!r:>{b}}"
    a[1:2:3], -a, a if b else c, a < b <= c, (a := 1), {*a}, ...
"""


# --- property: the prefilter and the reader see what Python sees (tests/fuzz/code_inputs.py) ----------


@settings(max_examples=150, derandomize=True, database=None, deadline=None)
@given(code_inputs.code(), st.sampled_from(["utf-8", "utf-7", "latin-1"]))
def test_respelled_code_reads_as_its_ascii_form(pair: tuple[str, str], codec: str) -> None:
    """However the names are spelled (NFKC-equal characters) and whatever encoding is declared,
    Python parses the same program, and fa-lint keeps the file and reads the same uses from it."""
    plain, written = pair
    declaration = f"# -*- coding: {codec} -*-\n"
    try:
        data = (declaration + written).encode(codec)
    except UnicodeEncodeError:
        data = (declaration + written).encode("utf-8").replace(codec.encode(), b"utf-8", 1)
    assert ast.dump(ast.parse(data)) == ast.dump(ast.parse(declaration + plain))  # the premise
    assert prefilter.wanted(data) >= prefilter.wanted((declaration + plain).encode())
    text = data.decode(codec if codec.encode() in data[:40] else "utf-8")
    mine = [(u.kind, u.location.line, u.name, u.keywords) for u in python.read("app.py", text)]
    ascii_ = [
        (u.kind, u.location.line, u.name, u.keywords) for u in python.read("app.py", declaration + plain)
    ]
    assert mine == ascii_


# --- issue 41: only the lines a use can be on are walked (fa_lint.code.lines) ---------------------------

_BULK = "".join(
    f"\ndef helper{i}(x):\n    total = 0\n    for j in range(x):\n        total += j * {i}\n    return total\n"
    for i in range(60)
)


def _whole(text: str) -> list[Any]:
    """The uses with every node walked (the reader before issue 41 pruned nothing)."""
    index = pyast.PythonIndex("app.py", text)
    tree = ast.parse(text)
    reader = python._Reader(index, tree, None)
    found = [*reader.uses(), *python.fa3_imports(index, reader.unguarded)]
    return sorted(found, key=lambda u: (u.location, u.kind))


@pytest.mark.parametrize(
    "text",
    [
        # a use in a decorator, above the ``def`` line ast gives the function
        "from transformers import pipeline\n@register(\n    attn_implementation='flash_attention_2',\n)\n"
        "def build():\n    return 1\n",
        # a renamed import: the call's own line names no word
        "from flash_attn import flash_attn_with_kvcache as kv\n" + _BULK + "\ndef step(q, k, v, bt):\n"
        "    out = kv(q, k, v, block_table=bt)\n    return out\n",
        "from kernels import get_kernel as fetch\n"
        + _BULK
        + "\nlayer = fetch('kernels-community/flash-attn')\n",
        "import flash_attn.flash_attn_interface as fai\n" + _BULK + "\nfai.flash_attn_varlen_func(q, k, v)\n",
        # a module-level string, bound far from the use
        "ATTN = 'flash_attention_2'\n" + _BULK + "\nfrom transformers import AutoModel\n"
        "m = AutoModel.from_pretrained('x', attn_implementation=ATTN)\n",
        # a script's option default
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--attn', default='flash_attention_2')\n"
        + _BULK
        + "\nargs = p.parse_args()\nfrom transformers import AutoModel\n"
        "m = AutoModel.from_pretrained('x', attn_implementation=args.attn)\n",
        # what keeps the paged path off, on lines without a word
        "from transformers import AutoModelForCausalLM\n"
        + _BULK
        + "\nm = AutoModelForCausalLM.from_pretrained(\n"
        "    'x',\n    device_map='cpu',\n)\nm.generate_batch(inputs)\n",
        # a substitute put in place through sys.modules and setattr
        "import sys\nimport flash_attn\n"
        + _BULK
        + "\ndef patch(fake):\n    sys.modules['flash_attn'] = fake\n"
        "    setattr(flash_attn, 'flash_attn_with_kvcache', fake)\n",
        # an expected failure around a use, and a test function's scope
        "import pytest\nfrom transformers import AutoModel\n" + _BULK + "\ndef test_it():\n"
        "    with pytest.raises(ValueError):\n        AutoModel.from_pretrained('x', attn_implementation='flash_attention_2')\n"
        "    AutoModel.from_pretrained('x', attn_implementation='sdpa')\n",
        # a load inside an f-string (before 3.12 Python placed its parts by a second parse)
        "from transformers import AutoModel\n" + _BULK + '\nreport = f"""\nloaded:\n'
        "{AutoModel.from_pretrained('x', attn_implementation='sdpa')}\n\"\"\"\n",
        # FA3's module imported deep in a function, once unguarded and once guarded
        _BULK
        + "\ndef load():\n    import flash_attn_interface\n    try:\n        import flash_attn_interface as f\n"
        "    except ImportError:\n        return None\n",
    ],
)
def test_the_lines_walked_give_what_the_whole_tree_gives(text: str) -> None:
    whole = _whole(text)
    assert python.read("app.py", text) == whole
    assert whole  # each case has a use, so the equality says the walk kept it


def test_code_without_a_word_is_not_walked() -> None:
    text = (
        "from transformers import AutoModel\n"
        + _BULK
        + "\nm = AutoModel.from_pretrained('x', attn_implementation='sdpa')\n"
    )
    index = pyast.PythonIndex("app.py", text)
    tree = ast.parse(text)
    wanted = word_lines(index, lines.NEEDLES, names=False)
    pruned, whole = python._Reader(index, tree, wanted), python._Reader(index, tree, None)
    assert [u.name for u in pruned.uses()] == ["sdpa"] == [u.name for u in whole.uses()]
    assert pruned.visited * 10 < whole.visited  # the sixty helpers' bodies are passed over


def test_a_name_python_normalises_is_found_on_its_line() -> None:
    text = (
        _BULK
        + "\nfrom transformers import AutoModel\nm = AutoModel.from_pretrained('x', \ufb02=1, attn_implementation='sdpa')\n"
    )
    assert [u.name for u in python.read("app.py", text)] == ["sdpa"]
