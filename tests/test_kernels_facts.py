"""The kernels knowledge base, transformers' Hub-kernel version facts, and FAL020/FAL018 judged from the
releases a project installs (issue 40 items 2 and 5).

Facts (each read from the released wheels by scripts/build_kernels_kb.py and build_transformers_kb.py;
the rows below fail if the data says otherwise):
- kernels 0.15.1 is the first release whose ``get_kernel(repo)`` without version/revision raises
  ``ValueError`` (kernels-0.15.1 ``kernels/_versions.py:107``; 0.14.1 warns and loads main);
- kernels 0.17.0 makes ``revision``/``version`` keyword-only (``kernels/load.py:96``), so
  ``get_kernel(repo, "v1")`` raises TypeError there; 0.16.2 takes it by position;
- kernels 0.17.0 parses kernels.lock with its compiled ``KernelLocks`` (``kernels/locking.py:129``), which
  refuses 0.16's entries: "unknown field `repo_id`";
- transformers 5.13.0 is the first to load ``attn_implementation="org/repo"`` with a version (5.12.1 passes
  ``revision=rev`` alone: ``integrations/hub_kernels.py:369``): 0 for a flash-attn 4 name, else 1; from
  5.16.0 by flash major ({2: 3, 4: 0}); from 5.18.0 by a table per repository (flash-attn2 -> 3).
- flash-attn's ``flash_attn_varlen_func`` takes ``block_table`` from 2.5.7 (v2.5.7
  ``flash_attn/flash_attn_interface.py``; absent at v2.5.6).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from fa_lint.kb import kernels as kernels_kb
from fa_lint.kb import transformers as transformers_kb
from tests.conftest import REPO, lint

V = Version


# --- the kernels knowledge base -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fact", "since", "last_without", "evidence"),
    [
        ("unpinned_raises", "0.15.1", "0.14.1", "kernels/_versions.py:107"),
        ("keyword_only", "0.17.0", "0.16.2", "kernels/load.py:96"),
        ("lock_dependency", "0.17.0", "0.16.2", "kernels/locking.py:129"),
    ],
)
def test_kernels_facts_per_release(fact: str, since: str, last_without: str, evidence: str) -> None:
    doc = json.loads((REPO / "fa_lint/kb/kernels.json").read_text())
    row = doc["facts"][fact]
    assert (row["since"], row["last_without"], row["evidence"]) == (since, last_without, evidence)
    assert doc["generator"] == "scripts/build_kernels_kb.py"


def test_kernels_loader() -> None:
    facts = kernels_kb.load()
    assert facts.unpinned(V("0.15.1")) == facts.unpinned(V("0.17.2")) == "raises"
    assert facts.unpinned(V("0.14.1")) == "moves"
    assert facts.keyword_only == V("0.17.0")
    assert "unknown field `repo_id`" in facts.old_lock_refusal
    assert V("0.16.2") in facts.releases and facts.releases == tuple(sorted(facts.releases))


def _wheel(folder: Path, version: str, files: dict[str, str]) -> None:
    import zipfile

    with zipfile.ZipFile(folder / f"kernels-{version}-py3-none-any.whl", "w") as z:
        for name, text in files.items():
            z.writestr(name, text)


def test_the_kernels_script_finds_each_boundary(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import build_kernels_kb as script
    finally:
        sys.path.remove(str(REPO / "scripts"))
    positional = "def get_kernel(repo_id, revision=None, version=None):\n    pass\n"
    keyword = "def get_kernel(repo_id, *, revision=None, version=None):\n    pass\n"
    raises = (
        'def s():\n    raise ValueError(\n        "A kernel version or revision must be specified. "\n    )\n'
    )
    _wheel(tmp_path, "0.1.0", {"kernels/utils.py": positional, "kernels/_versions.py": "x = 1\n"})
    _wheel(tmp_path, "0.2.0", {"kernels/utils.py": positional, "kernels/_versions.py": raises})
    _wheel(
        tmp_path,
        "0.3.0",
        {
            "kernels/load.py": keyword,
            "kernels/_versions.py": raises,
            "kernels/locking.py": "KernelLocks.from_json(t)\n",
        },
    )
    out = tmp_path / "kernels.json"
    assert script.main([str(tmp_path), "--output", str(out)]) == 0
    facts = json.loads(out.read_text())["facts"]
    assert facts["unpinned_raises"] == {
        "since": "0.2.0",
        "last_without": "0.1.0",
        "until": None,
        "evidence": "kernels/_versions.py:3",
    }
    assert (facts["keyword_only"]["since"], facts["keyword_only"]["evidence"]) == (
        "0.3.0",
        "kernels/load.py:1",
    )
    assert facts["positional_revision"]["until"] == "0.3.0"
    assert facts["lock_dependency"]["since"] == "0.3.0"


# --- transformers: the version an attn_implementation Hub kernel loads ----------------------------------


@pytest.mark.parametrize(
    ("transformers", "repo", "version"),
    [
        ("5.12.1", "kernels-community/flash-attn3", None),  # revision=None: kernels decides
        ("5.13.0", "kernels-community/flash-attn3", 1),
        ("5.14.1", "kernels-community/flash-attn4", 0),  # FA4 is still in beta -> v0
        ("5.15.1", "kernels-community/flash-attn2", 1),
        ("5.16.0", "kernels-community/flash-attn2", 3),  # {2: 3, 4: 0} by the flash-attn major
        ("5.18.0", "kernels-community/flash-attn2", 3),  # the table per repository
        ("5.18.0", "kernels-community/aiter-flash-attn", 2),
        ("5.18.0", "org/other", 1),
    ],
)
def test_hub_kernel_version_per_release(transformers: str, repo: str, version: int | None) -> None:
    assert transformers_kb.load().hub_kernel_version(repo, V(transformers)) == version


def test_the_transformers_facts_name_their_evidence() -> None:
    doc = json.loads((REPO / "fa_lint/kb/transformers.json").read_text())
    fact = doc["facts"]["attn_kernel_version"]
    assert (fact["since"], fact["last_without"]) == ("5.13.0", "5.12.1")
    assert fact["evidence"].startswith("transformers/integrations/hub_kernels.py:")
    assert [s["since"] for s in doc["attn_kernel_versions"]] == ["5.13.0", "5.16.0", "5.18.0"]


# --- FAL020 judged from what the project installs ------------------------------------------------------


def _fal020(found: list[dict[str, Any]]) -> list[tuple[str, int, str]]:
    return sorted((f["path"], f["line"], f["severity"]) for f in found if f["code"] == "FAL020")


ATTN = (
    "from transformers import AutoModel\nm = AutoModel.from_pretrained('x', attn_implementation='{name}')\n"
)


@pytest.mark.parametrize(
    ("requirements", "expected"),
    [
        # axolotl's shape (067b021c: pyproject transformers==5.14.1, examples/gpt-oss/*.yaml): pinned by
        # transformers, which loads version 1
        ("transformers==5.14.1\nkernels==0.15.2\n", []),
        ("transformers>=5.13.0\n", []),
        # an older transformers passes revision=None; kernels 0.15.2 raises: certain
        ("transformers==5.12.1\nkernels==0.15.2\n", [("a.py", 2, "error")]),
        # ... kernels 0.14.1 loads main: a moving target
        ("transformers==5.12.1\nkernels==0.14.1\n", [("a.py", 2, "warning")]),
        # trl's shape (f2cd5771: transformers>=4.56.2): depends on the release installed: both said
        ("transformers>=4.56.2\n", [("a.py", 2, "warning")]),
    ],
)
def test_fal020_attn_implementation(
    project: Any, requirements: str, expected: list[tuple[str, int, str]]
) -> None:
    found = lint(
        project, {"requirements.txt": requirements, "a.py": ATTN.format(name="kernels-community/flash-attn3")}
    )
    assert _fal020(found) == expected


def test_fal020_says_both_where_the_release_is_not_known(project: Any) -> None:
    found = lint(project, {"requirements.txt": "transformers>=4.56.2\n", "a.py": ATTN.format(name="org/k")})
    (finding,) = [f for f in found if f["code"] == "FAL020"]
    notes = " ".join(finding["notes"])
    assert "transformers 5.13.0 and later load it as version 1" in notes
    assert "which pass none" in notes
    assert (
        "kernels 0.15.1 and later raise ValueError" in notes and "an older one loads the main branch" in notes
    )


GET = "from kernels import get_kernel\nk = get_kernel({args})\n"


@pytest.mark.parametrize(
    ("requirements", "args", "expected"),
    [
        ("kernels==0.15.2\n", "'org/k'", [("a.py", 2, "error")]),  # ValueError at load
        ("kernels>=0.15.1\n", "'org/k'", [("a.py", 2, "error")]),
        ("kernels==0.14.1\n", "'org/k'", [("a.py", 2, "warning")]),  # main: a moving target
        ("kernels\n", "'org/k'", [("a.py", 2, "warning")]),  # admits both
        ("torch\n", "'org/k'", [("a.py", 2, "warning")]),  # not known
        ("kernels==0.15.2\n", "'org/k', version=1", []),
        # a revision by position: TypeError from 0.17.0
        ("kernels==0.17.2\n", "'org/k', 'v1'", [("a.py", 2, "error")]),
        ("kernels>=0.16\n", "'org/k', 'v1'", [("a.py", 2, "warning")]),
        ("kernels==0.16.2\n", "'org/k', 'v1'", []),
        ("torch\n", "'org/k', 'v1'", []),  # which kernels is not known: the call is pinned either way
    ],
)
def test_fal020_get_kernel(
    project: Any, requirements: str, args: str, expected: list[tuple[str, int, str]]
) -> None:
    found = lint(project, {"requirements.txt": requirements, "a.py": GET.format(args=args)})
    assert _fal020(found) == expected


def test_fal020_error_names_the_release_and_the_evidence(project: Any) -> None:
    found = lint(project, {"requirements.txt": "kernels==0.15.2\n", "a.py": GET.format(args="'org/k'")})
    (finding,) = [f for f in found if f["code"] == "FAL020"]
    assert "fails at load (ValueError)" in finding["message"]
    assert any("kernels 0.15.1: kernels/_versions.py:107" in n for n in finding["notes"])


def test_a_test_asserting_the_failure_is_no_finding(project: Any) -> None:
    """kernels' own tests (huggingface/kernels 8ac69fc5 kernels/tests/test_basic.py:136-140)."""
    test = (
        "import pytest\nfrom kernels import get_kernel\n"
        "def test_no_version():\n"
        "    with pytest.raises(ValueError, match='A kernel version or revision must be specified'):\n"
        "        get_kernel('kernels-test/versions')\n"
    )
    assert (
        _fal020(lint(project, {"requirements.txt": "kernels==0.15.2\n", "tests/test_basic.py": test})) == []
    )


# --- FAL018 and the fix floor from the code's calls -----------------------------------------------------

VARLEN = "from flash_attn import flash_attn_varlen_func\no = flash_attn_varlen_func(q, k, v, block_table=t)\n"


def _code(found: list[dict[str, Any]], code: str) -> list[tuple[str, int, str]]:
    return sorted((f["path"], f["line"], f["severity"]) for f in found if f["code"] == code)


@pytest.mark.parametrize(
    ("pin", "expected"),
    [
        ("flash-attn>=2.5.0", [("a.py", 2, "warning")]),  # admits 2.5.0-2.5.6 without it
        ("flash-attn==2.5.6", [("a.py", 2, "error")]),  # lacks it: TypeError
        ("flash-attn>=2.5.7", []),
        ("flash-attn==2.6.3", []),
    ],
)
def test_fal018_warns_where_some_admitted_release_lacks_the_keyword(
    project: Any, pin: str, expected: list[tuple[str, int, str]]
) -> None:
    found = lint(project, {"requirements.txt": pin + "\n", "a.py": VARLEN})
    assert _code(found, "FAL018") == expected


def test_the_fix_floor_comes_from_the_code(project: Any) -> None:
    """nano-vllm's shape (bb823b3e: pyproject `flash-attn` unpinned, nanovllm/layers/attention.py:67
    flash_attn_varlen_func(..., block_table=...)): FAL002's fix asks for 2.5.7, not 2.5.0, and after it
    nothing is left."""
    root = project({"requirements.txt": "flash-attn\n", "a.py": VARLEN})
    found = lint(project, {})
    (fal002,) = [f for f in found if f["code"] == "FAL002"]
    assert fal002["message"].endswith("require flash-attn>=2.5.7")
    assert any(
        n.startswith("why 2.5.7: the code calls `flash_attn_varlen_func(block_table=...)`")
        for n in fal002["notes"]
    )
    assert fal002["fix"]["edits"][0]["content"] == "flash-attn>=2.5.7"
    from tests.conftest import run

    assert run("--isolated", "--fix", str(root)).code == 0
    assert (root / "requirements.txt").read_text() == "flash-attn>=2.5.7\n"
    assert [f for f in lint(project, {}) if f["severity"] != "info"] == []


def test_the_floor_is_only_the_code_that_the_pin_serves(project: Any) -> None:
    """A service's requirements serve its own folder: another service's call does not raise its floor."""
    found = lint(
        project,
        {"svc/requirements.txt": "flash-attn\n", "svc/a.py": "print(1)\n", "other/a.py": VARLEN},
    )
    (fal002,) = [f for f in found if f["code"] == "FAL002"]
    assert not fal002["message"].endswith(">=2.5.7")


# --- a kernels.lock in 0.16's format where kernels 0.17 installs -----------------------------------------

OLD_ENTRY = [
    {"repo_id": "kernels-community/relu", "sha": "d649efb56fb249ac8f7a57fa1866728ad0c60e52", "variants": {}}
]
NEW_ENTRY = [
    {"dependency": {"repo-id": "kernels-community/relu", "version": 1}, "lock": {"commit": "d649efb5"}}
]


def _locked_project(dependency: str, lock: list[dict[str, Any]]) -> dict[str, str]:
    deps = f'dependencies = ["{dependency}"]\n' if dependency else ""
    pyproject = f'[project]\nname = "x"\n{deps}[tool.kernels.dependencies]\n"kernels-community/relu" = 1\n'
    return {"pyproject.toml": pyproject, "kernels.lock": json.dumps(lock, indent=2)}


@pytest.mark.parametrize(
    ("dependency", "lock", "expected"),
    [
        ("kernels>=0.17", OLD_ENTRY, [("kernels.lock", 3, "error")]),  # 0.17's parser refuses repo_id
        ("kernels>=0.16", OLD_ENTRY, [("kernels.lock", 3, "warning")]),  # admits 0.16.x and 0.17.x
        ("kernels==0.16.2", OLD_ENTRY, []),  # reads it
        ("", OLD_ENTRY, []),  # which kernels is not known (huggingface/kernels' own test projects)
        ("kernels>=0.17", NEW_ENTRY, []),  # 0.17's own format
    ],
)
def test_fal020_old_lock_format(
    project: Any, dependency: str, lock: list[dict[str, Any]], expected: list[tuple[str, int, str]]
) -> None:
    found = lint(project, _locked_project(dependency, lock))
    assert _fal020(found) == expected
    if expected:
        (finding,) = [f for f in found if f["code"] == "FAL020"]
        assert any("unknown field `repo_id`" in n for n in finding["notes"])


def test_an_extra_installs_on_top_of_the_base(project: Any) -> None:
    """trl's shape (f2cd5771 pyproject.toml:36 and :53): the base's transformers bound holds in every
    extra's install, whose own `transformers!=5.1.0` adds to it rather than replacing it."""
    pyproject = (
        '[project]\nname = "x"\ndependencies = ["transformers>=5.13.0"]\n'
        '[project.optional-dependencies]\ndeepspeed = ["transformers!=5.14.0"]\n'
    )
    found = lint(project, {"pyproject.toml": pyproject, "a.py": ATTN.format(name="org/k")})
    assert _fal020(found) == []
