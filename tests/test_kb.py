"""The knowledge base: release list, API facts from source, and the script that builds it."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from fa_lint import kb
from fa_lint.kb.assess import Policy

REPO = Path(__file__).parent.parent

# Every flash-attn release on PyPI as of the knowledge-base date (pip index versions flash-attn).
PYPI_RELEASES = [
    "0.2.0",
    "0.2.1",
    "0.2.2",
    "0.2.3",
    "0.2.4",
    "0.2.5",
    "0.2.6.post1",
    "0.2.7",
    "0.2.8",
    "1.0.0",
    "1.0.1",
    "1.0.2",
    "1.0.3.post0",
    "1.0.4",
    "1.0.5",
    "1.0.6",
    "1.0.7",
    "1.0.8",
    "1.0.9",
    "2.0.0.post1",
    "2.0.1",
    "2.0.2",
    "2.0.3",
    "2.0.4",
    "2.0.5",
    "2.0.6",
    "2.0.6.post2",
    "2.0.7",
    "2.0.8",
    "2.0.9",
    "2.1.0",
    "2.1.1",
    "2.1.2.post3",
    "2.2.0",
    "2.2.1",
    "2.2.2",
    "2.2.3.post2",
    "2.2.4",
    "2.2.4.post1",
    "2.2.5",
    "2.3.0",
    "2.3.1.post1",
    "2.3.2",
    "2.3.3",
    "2.3.4",
    "2.3.5",
    "2.3.6",
    "2.4.0.post1",
    "2.4.1",
    "2.4.2",
    "2.4.3.post1",
    "2.5.0",
    "2.5.1.post1",
    "2.5.2",
    "2.5.3",
    "2.5.4",
    "2.5.5",
    "2.5.6",
    "2.5.7",
    "2.5.8",
    "2.5.9.post1",
    "2.6.0.post1",
    "2.6.1",
    "2.6.2",
    "2.6.3",
    "2.7.0.post2",
    "2.7.1.post4",
    "2.7.2.post1",
    "2.7.3",
    "2.7.4.post1",
    "2.8.0.post2",
    "2.8.1",
    "2.8.2",
    "2.8.3",
    "2.8.3.post1",
    "2.8.3.post2",
]


@pytest.fixture(scope="module")
def base() -> kb.KnowledgeBase:
    return kb.load()


def test_release_list_is_complete(base: kb.KnowledgeBase) -> None:
    assert len(PYPI_RELEASES) == 76
    assert [str(r) for r in base.installable] == PYPI_RELEASES


def test_yanked_release_is_known_but_not_installable(base: kb.KnowledgeBase) -> None:
    yanked = [str(r) for r in base.releases if r.yanked]
    assert yanked == ["1.0.3"]
    assert [str(r) for r in base.admitted(SpecifierSet(">1.0.2,<1.0.4"))] == ["1.0.3.post0"]
    # PEP 592: an exact pin still gets a yanked release
    assert [str(r) for r in base.admitted(SpecifierSet("==1.0.3"))] == ["1.0.3"]


@pytest.mark.parametrize(
    ("version", "kvcache", "paged"),
    [
        ("2.1.2.post3", False, False),
        ("2.2.0", True, False),
        ("2.3.5", True, False),  # not the first with block_table, whatever some write-ups say
        ("2.4.3.post1", True, False),
        ("2.5.0", True, True),
        ("2.8.3.post2", True, True),
    ],
)
def test_pinned_api_facts(base: kb.KnowledgeBase, version: str, kvcache: bool, paged: bool) -> None:
    release = base.get(version)
    assert release is not None
    assert release.has(kb.KVCACHE) is kvcache
    assert release.has(kb.PAGED_KV) is paged
    assert (release.kvcache_params is not None and "block_table" in release.kvcache_params) is paged


def test_facts_derive_from_parameter_lists(base: kb.KnowledgeBase) -> None:
    assert str(base.first_with(kb.KVCACHE)) == "2.2.0"
    assert str(base.first_with(kb.PAGED_KV)) == "2.5.0"
    assert str(base.first_with("softcap")) == "2.6.0.post1"
    assert str(base.first_with("cache-leftpad")) == "2.6.1"
    assert str(base.first_with("alibi")) == "2.4.0.post1"
    for release in base.installable:
        if release.has(kb.PAGED_KV):
            assert release.page_block_multiple == 256, release
        else:
            assert release.page_block_multiple is None
    # paged KV, once added, never went away
    flags = [r.has(kb.PAGED_KV) for r in base.installable]
    assert flags == sorted(flags)


def test_every_release_names_its_source(base: kb.KnowledgeBase) -> None:
    for release in base.releases:
        assert release.source in (f"tag v{release.version}", f"sdist flash_attn-{release.version}.tar.gz")


def test_fa3_facts(base: kb.KnowledgeBase) -> None:
    fa3 = base.fa3
    assert fa3["distribution"] == "flash_attn_3"
    assert fa3["module"] == "flash_attn_interface"
    since = fa3["paged_params_since"]
    assert since["flash_attn_varlen_func"]["block_table"]["date"].startswith("2024-11")
    assert since["flash_attn_with_kvcache"]["page_table"]["date"].startswith("2025-01")
    assert fa3["kvcache_paged_param_now"] == "page_table"
    # the varlen entry point's block_table was removed on 2025-01-07, by the commit that added page_table
    # to flash_attn_with_kvcache
    assert (
        since["flash_attn_varlen_func"]["block_table"]["until"]
        == since["flash_attn_with_kvcache"]["page_table"]
    )
    assert since["flash_attn_varlen_func"]["block_table"]["until"]["date"] == "2025-01-07"
    assert "until" not in since["flash_attn_with_kvcache"]["page_table"]


def test_paged_varlen_starts_at_2_5_7(base: kb.KnowledgeBase) -> None:
    # flash_attn_varlen_func has no block_table at v2.5.6 and has one from v2.5.7
    assert str(base.first_with(kb.PAGED_VARLEN)) == "2.5.7"
    assert not base.get("2.5.6").has(kb.PAGED_VARLEN)  # type: ignore[union-attr]
    flags = [r.has(kb.PAGED_VARLEN) for r in base.installable]
    assert flags == sorted(flags)


def test_rocm_page_multiple(base: kb.KnowledgeBase) -> None:
    # csrc/flash_attn_ck/mha_fwd_kvcache.cpp: "page_block_size % 128 == 0" from v2.7.0.post2 (no CK
    # backend with paged KV before)
    assert base.get("2.6.3").rocm_page_block_multiple is None  # type: ignore[union-attr]
    for release in base.installable:
        if release.version >= Version("2.7.0.post2"):
            assert release.rocm_page_block_multiple == 128, release


def test_policy_minimum_is_computed(base: kb.KnowledgeBase) -> None:
    assert Policy.default(base).min_version == base.first_with(kb.PAGED_KV).version


def test_at_maps_forks_and_local_builds(base: kb.KnowledgeBase) -> None:
    assert str(base.at(Version("2.6.1+cu123torch2.3"))) == "2.6.1"
    assert str(base.at(Version("2.5.9"))) == "2.5.8"  # a fork's 2.5.9 carries 2.5.8's API
    assert base.at(Version("0.1.0")) is None


def test_admits_newer(base: kb.KnowledgeBase) -> None:
    assert base.admits_newer(SpecifierSet(">=2.0").to_range())
    assert base.admits_newer(SpecifierSet("<2.9").to_range())  # 2.8.4 would qualify
    assert not base.admits_newer(SpecifierSet("<2.5").to_range())
    assert not base.admits_newer(SpecifierSet("==2.4.2").to_range())


# --- the maintainer script ------------------------------------------------------------------------

INTERFACE_OLD = """
def flash_attn_func(q, k, v):
    pass

def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, cache_seqlens=None, softmax_scale=None):
    pass
"""
INTERFACE_NEW = """
def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, cache_seqlens=None,
                            block_table=None, *, softcap=0.0):
    pass
"""
API = 'TORCH_CHECK(!paged_KV || page_block_size % 256 == 0, "...");'
CK = 'TORCH_CHECK(!paged_KV || page_block_size % 128 == 0, "...");'
VARLEN = "\ndef flash_attn_varlen_func(q, k, v, cu_seqlens_q, block_table=None):\n    pass\n"


def _build_kb(
    tmp_path: Path, repo: Path, pypi: dict[str, object], out: Path
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "pypi.json").write_text(json.dumps(pypi))
    script = str(REPO / "scripts/build_kb.py")
    args = ["--repo", str(repo), "--pypi-json", str(tmp_path / "pypi.json"), "--output", str(out)]
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_build_kb_script_reads_tags_with_ast(tmp_path: Path) -> None:
    repo = tmp_path / "fa"
    (repo / "flash_attn").mkdir(parents=True)
    (repo / "csrc/flash_attn").mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / "csrc/flash_attn_ck").mkdir(parents=True)
    for tag, text in (
        ("v1.0.0", "def flash_attn_func(q):\n    pass\n"),
        ("v2.2.0", INTERFACE_OLD),
        ("v2.5.0", INTERFACE_NEW),
        ("v2.6.0", INTERFACE_NEW + VARLEN),
    ):
        (repo / "flash_attn/flash_attn_interface.py").write_text(text + "import torch\n")
        (repo / "csrc/flash_attn/flash_api.cpp").write_text(API if tag >= "v2.5.0" else "")
        (repo / "csrc/flash_attn_ck/mha_fwd_kvcache.cpp").write_text("\n" + CK if tag == "v2.6.0" else "")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", tag)
        _git(repo, "tag", tag)
    files = [{"upload_time": "2024-01-01T00:00:00", "packagetype": "sdist", "filename": "x", "url": "x"}]
    pypi = {"releases": {"1.0.0": files, "2.2.0": files, "2.5.0": files, "2.6.0": files, "2.7.0": []}}
    out = tmp_path / "kb.json"
    proc = _build_kb(tmp_path, repo, pypi, out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    built = kb.from_dict(doc)
    assert [str(r) for r in built.releases] == ["1.0.0", "2.2.0", "2.5.0", "2.6.0"]  # 2.7.0 has no files
    assert base_facts(built) == {
        "1.0.0": ((), None),
        "2.2.0": (("kvcache",), None),
        "2.5.0": (("kvcache", "paged-kv", "softcap"), 256),
        "2.6.0": (("kvcache", "paged-kv", "paged-varlen", "softcap"), 256),
    }
    assert built.get("2.6.0").rocm_page_block_multiple == 128  # type: ignore[union-attr]
    assert doc["releases"][3]["rocm_page_block"]["at"] == "v2.6.0:csrc/flash_attn_ck/mha_fwd_kvcache.cpp:2"
    assert built.get("2.5.0").kvcache_params[-2:] == ("block_table", "softcap")  # type: ignore[union-attr]


def base_facts(built: kb.KnowledgeBase) -> dict[str, tuple[tuple[str, ...], int | None]]:
    return {str(r): (tuple(sorted(r.features)), r.page_block_multiple) for r in built.releases}


def test_build_kb_script_refuses_to_guess(tmp_path: Path) -> None:
    repo = tmp_path / "fa"
    repo.mkdir()
    _git(repo, "init", "-q")
    files = [
        {"upload_time": "2024-01-01T00:00:00", "packagetype": "sdist", "filename": "x.tar.gz", "url": "x"}
    ]
    proc = _build_kb(tmp_path, repo, {"releases": {"9.9.9": files}}, tmp_path / "o.json")
    assert proc.returncode == 1
    assert "9.9.9 has no tag v9.9.9" in proc.stderr
    assert not (tmp_path / "o.json").exists()


def _transformers_wheel(folder: Path, version: str, files: dict[str, str]) -> None:
    with zipfile.ZipFile(folder / f"transformers-{version}-py3-none-any.whl", "w") as z:
        for name, text in files.items():
            z.writestr(name, text)


def test_build_transformers_kb_script_finds_each_boundary(tmp_path: Path) -> None:
    cb = "transformers/generation/continuous_batching/"
    utils = "transformers/modeling_flash_attention_utils.py"
    base = {
        cb + "cache.py": "class ContinuousBatchingManager:\n    pass\n",
        cb + "initialization.py": "fa_cuda = is_flash_attention_requested(config, version=3)\n",
        utils: "from flash_attn.cute import flash_attn_func, flash_attn_varlen_func\n",
    }
    later = {
        **base,
        cb + "initialization.py": "fa_cuda = is_flash_attention_requested(config, version=[2, 3, 4])\n",
        utils: "x = 1\nfrom flash_attn.cute import flash_attn_varlen_func, flash_attn_with_kvcache\n",
    }
    _transformers_wheel(tmp_path, "9.0.0", {k: v for k, v in base.items() if "cache.py" not in k})
    _transformers_wheel(tmp_path, "9.1.0", base)
    _transformers_wheel(tmp_path, "9.2.0", later)
    out = tmp_path / "t.json"
    script = str(REPO / "scripts/build_transformers_kb.py")
    proc = subprocess.run([sys.executable, script, str(tmp_path), "--output", str(out)], capture_output=True)
    assert proc.returncode == 0, proc.stderr
    facts = json.loads(out.read_text())["facts"]
    assert facts["continuous_batching"] == {
        "since": "9.1.0",
        "last_without": "9.0.0",
        "until": None,
        "evidence": cb + "cache.py:1",
    }
    assert (facts["fa2_block_table_on_cuda"]["since"], facts["fa4_block_table_on_cuda"]["since"]) == (
        "9.2.0",
        "9.2.0",
    )
    assert facts["fa4_block_table_on_cuda"]["evidence"] == cb + "initialization.py:1"
    assert facts["block_table_key_check"] == {"since": None, "checked": ["9.0.0", "9.1.0", "9.2.0"]}


def test_admitted_releases_agree_with_pips_own_matching() -> None:
    # The reasoning layer (packaging's range algebra over the release list) against the specifier
    # matching pip itself does, over thousands of seeded random specifier sets built from real releases.
    base = kb.load()
    versions = [r.version for r in base.installable]
    yanked = [r.version for r in base.releases if r.yanked]
    rng = random.Random(20261130)

    def number() -> str:
        v = rng.choice(versions)
        pick = rng.random()
        if pick < 0.5:
            return str(v)
        if pick < 0.7:
            return v.base_version
        if pick < 0.85:
            return ".".join(map(str, v.release[: rng.randint(1, 3)]))
        return f"{v.release[0]}.{max(0, v.release[1] + rng.choice((-1, 0, 1)))}.{rng.randint(0, 12)}"

    def clause() -> str:
        op, v = rng.choice(("==", "!=", "<", "<=", ">", ">=", "~=", "==*", "!=*")), number()
        if op.endswith("*"):
            return f"{op[:-1]}{'.'.join(v.split('.')[:2])}.*"
        return f"~={v if '.' in v else v + '.0'}" if op == "~=" else f"{op}{v}"

    checked = 0
    for _ in range(3000):
        spec = SpecifierSet(",".join(clause() for _ in range(rng.randint(1, 3))))
        want = list(spec.filter(versions))
        if not want:
            # PEP 592: a yanked release is still picked for a pin that matches only it. pip calls only
            # a lone == a pin; reasoning over ranges, fa-lint takes any range that admits just that one.
            only = list(spec.filter(yanked))
            want = only if len(only) == 1 else []
        assert [r.version for r in base.admitted(spec)] == want, spec
        checked += bool(want)
    assert checked > 1000  # most cases admit something: the comparison is not vacuous


IMPORT_UTILS = """\
KERNELS_MIN_VERSION = "0.18.2"
KERNELS_MAX_VERSION = "0.19.0"


def is_kernels_available(MIN_VERSION: str = KERNELS_MIN_VERSION) -> bool:
    return True


@lru_cache
def is_flash_attn_2_available() -> bool:
    # Only allow versions >= 2.3.3 to avoid very old legacy workarounds
    try:
        return version.parse(flash_attn_version) >= version.parse("2.3.3")
    except InvalidVersion:
        return False


def is_flash_attn_3_available():
    pass
"""
MODELING_UTILS = """\
FLASH_ATTN_KERNEL_FALLBACK = {
    "flash_attention_2": (
        "kernels-community/aiter-flash-attn" if is_rocm_platform() else "kernels-community/flash-attn2"
    ),
}


def _check(self):
    if requested_original_flash_attn and is_kernels_available():
        applicable_attn_implementation = FLASH_ATTN_KERNEL_FALLBACK[attn_implementation]
"""


def test_build_transformers_kb_script_reads_steps(tmp_path: Path) -> None:
    # the version a comparison checks is read at the comparison, not at a comment that names it first
    old = {
        "transformers/utils/import_utils.py": "def is_kernels_available():\n    return True\n",
        "transformers/modeling_utils.py": 'if x:\n    applicable_attn_implementation = "kernels-community/flash-attn"\n',
    }
    new = {
        "transformers/utils/import_utils.py": IMPORT_UTILS,
        "transformers/modeling_utils.py": MODELING_UTILS,
    }
    _transformers_wheel(tmp_path, "9.0.0", old)
    _transformers_wheel(tmp_path, "9.1.0", new)
    out = tmp_path / "t.json"
    script = str(REPO / "scripts/build_transformers_kb.py")
    proc = subprocess.run([sys.executable, script, str(tmp_path), "--output", str(out)], capture_output=True)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["fa2_minimum_on_cuda"] == [
        {"since": "9.1.0", "value": "2.3.3", "evidence": "transformers/utils/import_utils.py:13"}
    ]
    assert [(s["since"], s["value"]) for s in doc["fa2_kernel_fallback"]] == [
        ("9.0.0", "kernels-community/flash-attn"),
        ("9.1.0", "kernels-community/aiter-flash-attn|kernels-community/flash-attn2"),
    ]
    assert doc["fa2_kernel_fallback"][1]["evidence"] == "transformers/modeling_utils.py:10"
    assert [(s["since"], s["value"]) for s in doc["kernels_range"]] == [
        ("9.0.0", ","),
        ("9.1.0", "0.18.2,0.19.0"),
    ]
