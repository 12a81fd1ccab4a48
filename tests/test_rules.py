"""FAL001-FAL003, FAL007-FAL009 through the whole pipeline, on real files."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import run


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("flash-attn==2.4.2", "FAL001"),
        ("flash-attn<2.5", "FAL001"),
        ("flash-attn~=2.4.0", "FAL001"),
        ("flash-attn==2.4.*", "FAL001"),
        ("flash-attn>=2.4.3,<2.5.1,!=2.5.0", "FAL001"),
        ('flash-attn==2.4.2 ; sys_platform == "win32"', "FAL001"),  # markers do not exempt a line
        ("flash-attn==1.0.3", "FAL001"),  # yanked, but an exact pin still installs it
        ("flash-attn==2.3.5", "FAL001"),  # block_table is 2.5.0, not 2.3.5
        ("flash-attn>=2.0", "FAL002"),
        ("flash-attn", "FAL002"),
        ("flash-attn<2.8.0", "FAL002"),
        ("flash-attn==2.3.9", "FAL003"),
        ("flash-attn>=2.6,<2.5", "FAL003"),
        ("flash-attn==2.6.0", "FAL003"),  # never published; 2.6.0.post1 was
        ("flash-attn==2.4.2+cu122", "FAL001"),  # a local build (a wheel index): judged as 2.4.2's code
        ("flash-attn==2.5.8+cu122torch2.3cxx11abifalse", None),
        ("flash-attn==2.3.9+cu122", "FAL001"),  # a build of an unknown number carries 2.3.6's code
        ("flash-attn==3.0.0", "FAL008"),
        ("flash-attn>=2.9", "FAL008"),
        ("flash-attn==${FA_VERSION}", "FAL009"),
        ("flash-attn @ git+https://github.com/Dao-AILab/flash-attention", "FAL009"),
        ("flash-attn @ git+https://github.com/Dao-AILab/flash-attention@v2.3.6", "FAL001"),
        ("flash-attn>=2.5", None),
        ("flash-attn==2.5.0", None),
        ("flash-attn>=2.5.0,<3", None),
        ("flash_attn~=2.6.3", None),
        ("flash-attn-3==3.0.0b1", "FAL022"),  # FA3, judged on its own facts (info), never as flash-attn
        ("vllm-flash-attn==2.4.0", None),
        ("flash-attention==1.0.0", None),
    ],
)
def test_requirement_verdicts(project: Any, line: str, code: str | None) -> None:
    project({"requirements.txt": f"{line}\n"})
    r = run("--format", "json", "requirements.txt")
    assert [f["code"] for f in r.json["findings"]] == ([code] if code else [])
    assert r.code == (1 if code in ("FAL001", "FAL003") else 0)


def test_messages_name_the_fix_and_the_runtime_failure(project: Any) -> None:
    project({"requirements.txt": "flash-attn==2.4.2\n"})
    (f,) = run("--format", "json").json["findings"]
    assert f["name"] == "paged-kv-missing"
    assert f["admitted"] == ["2.4.2"]
    assert "block_table" in f["message"] and "flash-attn>=2.5.0" in f["message"]
    assert "\n" not in f["message"]


def test_mixed_lists_both_sides(project: Any) -> None:
    project({"requirements.txt": "flash-attn>=2.4.2,<2.6\n"})
    (f,) = run("--format", "json").json["findings"]
    assert f["admitted"] == [
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
    ]
    assert "2.4.2 and 2.4.3.post1 without paged KV" in f["message"]


def test_nearest_release_suggested(project: Any) -> None:
    project({"requirements.txt": "flash-attn==2.6.0\n"})
    (f,) = run("--format", "json").json["findings"]
    assert "did you mean 2.6.0.post1?" in f["message"]


@pytest.mark.parametrize(
    ("min_version", "line", "code"),
    [
        ("2.6.0", "flash-attn==2.5.8", "FAL001"),
        ("2.6.0", "flash-attn>=2.5", "FAL002"),
        ("2.6.0", "flash-attn>=2.6.1", None),
        ("2.5.0", "flash-attn==2.5.8", None),
    ],
)
def test_min_version_raises_the_bar(project: Any, min_version: str, line: str, code: str | None) -> None:
    project({"requirements.txt": f"{line}\n"})
    r = run("--format", "json", "--min-version", min_version)
    assert [f["code"] for f in r.json["findings"]] == ([code] if code else [])
    assert r.json["knowledge_base"]["min_version"] == min_version


def test_min_version_from_config_and_cli_wins(project: Any) -> None:
    project(
        {
            "pyproject.toml": '[tool.fa-lint]\nmin-version = "2.6.0"\n',
            "requirements.txt": "flash-attn==2.5.8\n",
        }
    )
    assert [f["code"] for f in run("--format", "json").json["findings"]] == ["FAL001"]
    assert run("--format", "json", "--min-version", "2.5.0").json["findings"] == []


def test_lock_entries_get_the_tools_upgrade_command(project: Any) -> None:
    project({"uv.lock": 'version = 1\n\n[[package]]\nname = "flash-attn"\nversion = "2.4.2"\n'})
    (f,) = run("--format", "json").json["findings"]
    assert f["code"] == "FAL001" and (f["line"], f["column"]) == (4, 1)
    assert "uv lock --upgrade-package flash-attn" in f["message"]


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        ("pip install flash-attn>=2.5\n", "flash-attn>=2.5"),
        ("pip install flash-attn<2.6 && echo ok\n", "flash-attn<2.6"),
    ],
)
def test_unquoted_specifier_is_a_redirect(project: Any, text: str, meant: str) -> None:
    project({"install.sh": text})
    found = run("--format", "json").json["findings"]
    fal007 = [f for f in found if f["code"] == "FAL007"]
    assert len(fal007) == 1 and fal007[0]["requirement"] == meant
    assert f'"{meant}"' in fal007[0]["message"]


def test_quoted_specifier_is_fine(project: Any) -> None:
    project({"install.sh": "pip install 'flash-attn>=2.5'\n"})
    assert run("--format", "json", "--select", "FAL007").json["findings"] == []


def test_a_context_under_another_policy_keeps_every_field_and_none_of_the_answers(project: Any) -> None:
    """Context.replace is the one copy of the rules' context (issue 45: a hand-copied one dropped the
    code's uses on a ROCm target): every field but the policy and its answers is the run's own."""
    from packaging.version import Version

    from fa_lint import engine
    from fa_lint.kb.assess import Policy, Verdict

    root = project(
        {
            "requirements.txt": "flash-attn==2.6.3\n",
            "serve.py": "from transformers import AutoModel\nm.generate_batch(x)\n",
        }
    )
    ctx = engine.context([str(root)])
    assert ctx.uses and ctx.code_read and ctx.environments  # every field has something to lose
    other = ctx.replace(Policy(Version("2.7.0")))
    assert [f for f in ctx._fields if getattr(ctx, f) is not getattr(other, f)] == ["policy", "answers"]
    (req,) = (r for r in ctx.requirements if r.name == "flash-attn")
    # an answer worked out under one policy is never the other's: 2.6.3 has paged KV, and is below 2.7.0
    assert ctx.assessment(req).verdict is Verdict.OK
    assert other.assessment(req).verdict is Verdict.BAD
    assert ctx.assessment(req).verdict is Verdict.OK
