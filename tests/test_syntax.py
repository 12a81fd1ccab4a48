"""The located readers of fa_lint.syntax: requirement languages (Poetry constraints, conda MatchSpecs)
against their references, and the TOML-lock and JSON position scanners against full readings."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from fa_lint.model import Parsed
from tests.conftest import DATA, SHARED, parse, problems, reqs, span


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        ("^2", ">=2,<3"),
        ("^2.5", ">=2.5,<3"),
        ("^0.2.3", ">=0.2.3,<0.3"),
        ("^0.0.3", ">=0.0.3,<0.0.4"),
        ("^0", ">=0,<1"),
        ("~2.4", ">=2.4,<2.5"),
        ("~1", ">=1,<2"),
        ("~1.2.3", ">=1.2.3,<1.3"),
        ("2.3.3", "==2.3.3"),
        ("=2.3.3", "==2.3.3"),
        ("*", "any"),
        ("2.4.*", "==2.4.*"),
        (">= 2.4, < 2.6", ">=2.4,<2.6"),
        (">=2.4 <2.6", ">=2.4,<2.6"),
        ("^2.5.9.post1", ">=2.5.9.post1,<3"),
        ("<2.4 || ^2.6", "<2.4 || >=2.6,<3"),
    ],
)
def test_poetry_constraints(constraint: str, expected: str, tmp_path: Path) -> None:
    text = f'[tool.poetry.dependencies]\nflash-attn = "{constraint}"\n'
    (r,) = reqs(parse("pyproject", tmp_path / "pyproject.toml", text))
    assert r.constraint_text == expected


def test_poetry_bad_constraint_is_located(tmp_path: Path) -> None:
    text = '[tool.poetry.dependencies]\npython = "^3.10"\nflash-attn = "^x.y"\n'
    (p,) = problems(parse("pyproject", tmp_path / "pyproject.toml", text))
    assert span(p)[:2] == (3, 1)
    assert "x.y" in p.message


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("flash-attn=2.4.2", "==2.4.2.*"),
        ("flash-attn==2.4.2", "==2.4.2"),
        ("flash-attn=2.4.2=py311_0", "==2.4.2.*"),
        ("flash-attn>=2.5,<2.7", ">=2.5,<2.7"),
        ("flash-attn 2.5.*", "==2.5.*"),
        ("flash-attn", "any"),
        ("conda-forge::flash-attn[version='>=2.6']", ">=2.6"),
        ("flash-attn <2.4|>=2.6", "<2.4 || >=2.6"),
    ],
)
def test_conda_matchspecs(spec: str, expected: str, tmp_path: Path) -> None:
    text = f'dependencies:\n  - "{spec}"\n'
    (r,) = reqs(parse("conda", tmp_path / "environment.yml", text))
    assert r.constraint_text == expected


def test_poetry_constraints_agree_with_poetry_core() -> None:
    # The hand-written converter against Poetry's own parser, term by term, on every release in the
    # knowledge base. Terms joined with "," or "||" are left out: poetry-core's range algebra then treats
    # post-releases (2.6.0.post1 under "^2.5, !=2.6.0") differently from PEP 440, and never so that a
    # release with paged KV and one without trade places.
    poetry = pytest.importorskip("poetry.core.constraints.version")
    from fa_lint import kb
    from fa_lint.syntax.poetry import specifiers

    versions = [r.version for r in kb.load().releases]
    rng = random.Random(7)

    def number() -> str:
        v = rng.choice(versions)
        pick = rng.random()
        if pick < 0.4:
            return ".".join(map(str, v.release[: rng.randint(1, 3)]))
        return str(v) if pick < 0.6 else f"{v.release[0]}.{rng.randint(0, 9)}.{rng.randint(0, 9)}"

    for _ in range(2000):
        op = rng.choice(("^", "~", "", "==", ">=", "<", "<=", ">", "!=", "~=", "*"))
        if op == "*":
            term = rng.choice(("*", f"{rng.randint(0, 2)}.*", f"2.{rng.randint(0, 8)}.*"))
        else:
            n = number()
            term = f"{op}{n}.0" if op == "~=" and "." not in n else f"{op}{n}"
        ours = specifiers(term)
        theirs = poetry.parse_constraint(term)
        for v in versions:
            assert any(s.contains(v, prereleases=True) for s in ours) == theirs.allows(
                poetry.Version.parse(str(v))
            ), (term, str(v))


LOCK_BLOCKS = [
    'version = 1\nrequires-python = ">=3.10"\n',
    '\n[[package]]\nname = "flash-attn"\nversion = "2.4.2"\nsource = { registry = "https://pypi.org/simple" }\n',
    '\n[[package]]\nversion = "2.3.0"\nname="torch" # the name after the version\n'
    'dependencies = [\n    { name = "numpy" },\n]\n',
    "\n[[package]]\nname = 'transformers'\nversion = '4.44.2'\n\n[package.metadata]\nrequires-python = '>=3.9'\n"
    '\n[[package.metadata.requires-dist]]\nname = "tokenizers"\n',
    '\n[[package]]\n  name = "indented"\nversion = "1.0"\n',
    '\n[[package]]\n"name" = "quoted"\nversion = "1.0"\n',
    '\n[[package]]\ndescription = """\nname = "in a string"\n[[package]]\n"""\nname = "after-a-string"\n'
    'version = "1.0"\n',
    '\n[[package]]\nsummary = """\nname = "in a string"\n"""\nname = "after-a-string"\nversion = "1.0"\n',
    '\n[[package]]\nname = "bad-version"\nversion = "not a version"\n',
    '\n[[package]]\nversion = "1.0"\n',
    "\n[[package]]\nname = 3\n",
    '\n[[package]]\nname = "nested"\nversion = "1.0"\nwheels = [\n[1, 2],\n]\n',
    '\n[[package]]\nname = "flash-attn"\nversion = \n',
    '\n[metadata]\nlock-version = "2.0"\n\n[metadata.files]\nflash-attn = []\n',
    '\n[options]\nexclude-newer = "2024-01-01T00:00:00Z"\n',
    '\n[package]\nname = "a table, not an array"\n',
    'package = [{ name = "inline", version = "1.0" }]\n',
    '\n[[ package ]]\nname = "spaced-header"\nversion = "1.0"\n',
]


def _lock_readings(
    source: str, text: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Parsed], list[Parsed], bool]:
    """A lock read one table at a time, read whole, and whether it could be read by table."""
    from fa_lint.sources import SOURCES
    from fa_lint.syntax import tomllock

    path = {"uv.lock": "uv.lock", "poetry.lock": "poetry.lock", "pdm.lock": "pdm.lock"}[source]
    by_table = tomllock._by_table
    taken = by_table(path, text, "package", lambda pkg, where: None) is not None
    parts = list(SOURCES[source].parse(path, text))
    with monkeypatch.context() as m:
        m.setattr(tomllock, "_by_table", lambda *args: None)
        whole = list(SOURCES[source].parse(path, text))
    return parts, whole, taken


def test_locks_read_by_table_as_they_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    roots = [DATA, SHARED / "corpus" / "files"]
    names = {"uv.lock": "uv.lock", "poetry.lock": "poetry.lock", "pdm.lock": "pdm.lock"}
    files = [p for root in roots if root.is_dir() for p in sorted(root.rglob("*")) if p.name in names]
    assert files
    for path in files:
        parts, whole, taken = _lock_readings(names[path.name], path.read_text(encoding="utf-8"), monkeypatch)
        assert taken, path
        assert parts == whole, path


@pytest.mark.parametrize("block", LOCK_BLOCKS)
@pytest.mark.parametrize("source", ["uv.lock", "poetry.lock", "pdm.lock"])
def test_lock_blocks_read_by_table_as_whole(source: str, block: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = LOCK_BLOCKS[0] + block + LOCK_BLOCKS[1]
    parts, whole, _ = _lock_readings(source, text, monkeypatch)
    assert parts == whole
    crlf, crlf_whole, _ = _lock_readings(source, text.replace("\n", "\r\n"), monkeypatch)
    assert crlf == crlf_whole


def test_ordinary_locks_are_read_by_table(monkeypatch: pytest.MonkeyPatch) -> None:
    ordinary = [LOCK_BLOCKS[i] for i in (0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 13, 14, 17)]
    _, _, taken = _lock_readings("uv.lock", "".join(ordinary), monkeypatch)
    assert taken
    # a table header in a string or an array, a part tomllib refuses, a table defined twice, entries
    # written inline
    odd = [[*ordinary, LOCK_BLOCKS[n]] for n in (6, 11, 12, 15)] + [[LOCK_BLOCKS[16], *ordinary]]
    for blocks in odd:
        _, _, taken = _lock_readings("uv.lock", "".join(blocks), monkeypatch)
        assert not taken, blocks


def test_locks_read_by_table_as_whole_for_random_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(14)
    for _ in range(150):
        text = "".join(rng.choice(LOCK_BLOCKS) for _ in range(rng.randint(1, 6)))
        parts, whole, _ = _lock_readings("uv.lock", text, monkeypatch)
        assert parts == whole, text


JSON_DOCUMENTS = [
    '{"default": {"flash-attn": {"version": "==2.4.2", "hashes": ["sha256:00"]}}, "develop": {}}',
    '{\n    "_meta": {"requires": {"python_version": "3.11"}, "sources": [{"name": "pypi"}]},\n'
    '    "default": {\n        "torch": {\n            "version": "==2.4.0"\n        }\n    }\n}',
    '{"default": {"a": {"version": "==1"}, "a": {"version": "==2"}}}',  # a key twice: json keeps one
    '{"default": {"quo\\"ted": {"version": "==1"}, "b": {"markers": "x\\": y"}}}',
    '{"default": {"caf\\u00e9": {"version": "==1"}, "sp ace" : {"version": "==2"}}}',
    '{"default": {"a": {"nested": [{"k": {"deep": 1}}, [], {}], "v": "\\":"}}}',
    '[{"default": 1}, {"x": {"y": {"z": 2}}}]',
    '"a string"',
    "{}",
]


@pytest.mark.parametrize("text", JSON_DOCUMENTS)
def test_json_keys_found_in_one_pass_are_where_the_scanner_puts_them(text: str) -> None:
    import json

    from fa_lint.syntax import _jsonkeys

    scanner = _jsonkeys._Scanner(text)
    scanner.value(())
    matched = _jsonkeys.matched(text, json.loads(text), 2)
    if matched is not None:
        assert matched == {p: o for p, o in scanner.keys.items() if len(p) <= 2}


def test_json_keys_in_one_pass_for_every_pipfile_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    from fa_lint.syntax import _jsonkeys

    roots = [DATA, SHARED / "corpus" / "files"]
    files = [p for root in roots if root.is_dir() for p in sorted(root.rglob("Pipfile.lock"))]
    assert files
    for path in [*files, *JSON_DOCUMENTS]:
        text = path.read_text(encoding="utf-8") if isinstance(path, Path) else path
        found = parse("pipfile.lock", "Pipfile.lock", text)
        with monkeypatch.context() as m:
            m.setattr(_jsonkeys, "matched", lambda *args: None)
            assert parse("pipfile.lock", "Pipfile.lock", text) == found, path
        if isinstance(path, Path):
            import json

            assert _jsonkeys.matched(text, json.loads(text), 2) is not None, path


def _random_json(rng: random.Random, depth: int = 0) -> object:
    """Objects, lists and strings whose text holds what a key's end looks like: an escaped quote
    before a colon (printed JSON in a notebook's output), backslashes before a quote, keys repeated."""
    pieces = [
        '": ',
        "\\",
        '"',
        ":",
        "a",
        " ",
        '\\": ',
        "x\n",
    ]  # (json.dumps escapes each quote and backslash)
    if depth > 3 or rng.random() < 0.3:
        return "".join(rng.choice(pieces) for _ in range(rng.randrange(6)))
    if rng.random() < 0.5:
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {
        "".join(rng.choice(pieces) for _ in range(rng.randrange(3))): _random_json(rng, depth + 1)
        for _ in range(rng.randrange(4))
    }


def test_json_keys_in_one_pass_skip_escaped_quotes_before_a_colon() -> None:
    import json

    from fa_lint.syntax import _jsonkeys

    matched_any = 0
    for seed in range(500):
        rng = random.Random(seed)
        text = json.dumps(_random_json(rng), indent=rng.choice([None, 1]))
        data = json.loads(text)
        scanner = _jsonkeys._Scanner(text)
        scanner.value(())
        matched = _jsonkeys.matched(text, data, 3)
        if matched is not None:
            matched_any += 1
            assert matched == {p: o for p, o in scanner.keys.items() if len(p) <= 3}, text
    assert matched_any > 250  # escaped quotes in values no longer send a document to the scanner


def test_a_notebook_that_prints_json_is_placed_in_one_pass() -> None:
    import json

    from fa_lint.syntax import _jsonkeys

    output = {"output_type": "stream", "text": ['{"loss": 0.1, "step": 2}\n']}
    cell = {"cell_type": "code", "source": ["!pip install flash-attn\n"], "outputs": [output]}
    text = json.dumps({"cells": [cell], "metadata": {}}, indent=1)
    assert '\\":' in text
    assert _jsonkeys.matched(text, json.loads(text), 3) is not None
