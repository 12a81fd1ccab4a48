"""Issue 43's ruff habits, each through ``main(argv)`` and each option in the one settings value
(``settings.resolved.Settings``): ``check`` and ``version``, ``-V``, ``--fixable``/``--unfixable``,
``--no-unsafe-fixes``, ``--ignore-noqa``, ``--extension``, ``--select ALL``, rule names as selectors,
``extend``, ``FA_LINT_OUTPUT_FORMAT``, ``--preview``, ``--watch``, ``--add-noqa=REASON`` and
``--sarif-category``. ruff's behaviour is read from its source (crates/ruff/src/args.rs and the files
each test names)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fa_lint.cli import watch
from fa_lint.rules import RULES
from fa_lint.settings.overrides import Overrides
from fa_lint.settings.scopes import Workspace
from tests.conftest import run

OLD = "flash-attn==2.4.2\n"  # FAL001 (an error); its fix is unsafe (it moves an exact pin)
LOOSE = "flash-attn>=2.0\n"  # FAL002 (a warning); its fix is safe


def _codes(*argv: str) -> list[str]:
    r = run("--format", "json", *argv)
    assert r.code in (0, 1), r.err
    return sorted(f["code"] for f in r.json["findings"])


# --- verbs ------------------------------------------------------------------------------------------


def test_check_is_the_lint_by_rufs_verb(project: Any) -> None:
    project({"requirements.txt": OLD, "sub/requirements.txt": LOOSE})
    assert run("check", "--format", "concise").out == run("--format", "concise").out
    assert run("check").code == 1
    only = run("check", "--format", "concise", "sub")
    assert "sub/requirements.txt" in only.out and "FAL001" not in only.out


def test_version_verb_and_short_flag(project: Any) -> None:
    long = run("--version")
    assert long.code == 0 and long.out.startswith("fa-lint ")
    assert run("-V").out == long.out == run("version").out
    shown = json.loads(run("version", "--output-format", "json").out)
    assert long.out.startswith(f"fa-lint {shown['version']} ")
    assert shown["knowledge_base"]["paged_kv"] == "2.5.0"  # block_table on flash_attn_with_kvcache


# --- fixable, unsafe fixes, noqa --------------------------------------------------------------------


def _fixed(root: Path, *argv: str) -> str:
    (root / "requirements.txt").write_text(LOOSE)
    run("--fix", *argv)
    return (root / "requirements.txt").read_text()


def test_fixable_and_unfixable_decide_what_fix_may_fix(project: Any) -> None:
    root = project({"requirements.txt": LOOSE})
    assert _fixed(root) == "flash-attn>=2.5.0\n"
    assert _fixed(root, "--unfixable", "FAL002") == LOOSE
    assert _fixed(root, "--fixable", "FAL001") == LOOSE
    assert _fixed(root, "--fixable", "ALL", "--unfixable", "paged-kv-not-guaranteed") == LOOSE
    assert _fixed(root, "--fixable", "FAL001", "--extend-fixable", "FAL002") == "flash-attn>=2.5.0\n"
    # as in ruff, a rule that may not be fixed has no fix at all: none is offered in the report
    (root / "requirements.txt").write_text(LOOSE)
    fix = run("--format", "json", "--unfixable", "FAL002").json["findings"][0]["fix"]
    assert fix is None and run("--format", "json").json["findings"][0]["fix"] is not None
    project({"fa-lint.toml": 'unfixable = ["FAL0"]\n'})
    assert _fixed(root) == LOOSE
    assert _fixed(root, "--config", "unfixable = []") == "flash-attn>=2.5.0\n"
    project({"fa-lint.toml": 'fixable = ["paged-kv-missing"]\n'})
    assert _fixed(root) == LOOSE


def test_no_unsafe_fixes_wins_over_the_configuration(project: Any) -> None:
    root = project({"requirements.txt": OLD, "fa-lint.toml": "unsafe-fixes = true\n"})
    run("--fix")
    assert (root / "requirements.txt").read_text() != OLD  # the configuration's unsafe-fixes
    (root / "requirements.txt").write_text(OLD)
    run("--fix", "--no-unsafe-fixes")
    assert (root / "requirements.txt").read_text() == OLD
    assert Workspace(Overrides(unsafe_fixes=False), ["."]).settings.unsafe_fixes is False


def test_ignore_noqa_reports_what_the_comments_suppress(project: Any) -> None:
    project({"requirements.txt": "flash-attn==2.4.2  # noqa: FAL001\n"})
    assert _codes() == []
    assert _codes("--ignore-noqa") == ["FAL001"]
    r = run("--add-noqa", "--ignore-noqa")  # as ruff (args.rs: conflicts_with ignore_noqa)
    assert r.code == 2 and "--ignore-noqa" in r.err


# --- selectors ---------------------------------------------------------------------------------------


def test_select_all_and_rule_names(project: Any) -> None:
    project({"requirements.txt": OLD + LOOSE})
    both = ["FAL001", "FAL002"]
    assert _codes("--select", "ALL") == both == _codes("--select", "all")
    assert _codes("--ignore", "ALL") == []
    assert _codes("--select", "ALL", "--ignore", "FAL001") == ["FAL002"]
    assert _codes("--select", "paged-kv-missing") == ["FAL001"]
    assert _codes("--select", "FAL002,paged-kv-missing") == both
    assert _codes("--ignore", "Paged-KV-Missing") == ["FAL002"]
    assert _codes("--per-file-ignores", "requirements.txt:paged-kv-not-guaranteed") == ["FAL001"]
    bad = run("--select", "paged-kv-mising")
    assert bad.code == 2 and "unknown rule selector paged-kv-mising" in bad.err
    assert "paged-kv-missing (FAL001)" in bad.err
    project({"fa-lint.toml": 'select = ["paged-kv-not-guaranteed"]\nper-file-ignores = {"x" = ["ALL"]}\n'})
    assert _codes() == ["FAL002"]
    shown = run("--show-settings", "--select", "ALL").out
    assert 'select = ["ALL"]' in shown and 'per-file-ignores = {"x" = ["ALL"]}' in shown
    project({"fa-lint.toml": 'ignore = ["paged-kv-mising"]\n'})
    r = run()
    assert r.code == 2 and "fa-lint.toml:1:" in r.err and "paged-kv-mising" in r.err


# --- extend --------------------------------------------------------------------------------------------


def test_extend_reads_the_base_relative_to_the_file_that_says_it(project: Any) -> None:
    project(
        {
            ".git/HEAD": "",
            "fa-lint.toml": 'ignore = ["FAL002"]\nexclude = ["sub/vendor"]\n',
            "sub/fa-lint.toml": 'extend = "../fa-lint.toml"\nstrict = true\n',
            "sub/requirements.txt": OLD + LOOSE,
            "sub/vendor/requirements.txt": OLD,
        }
    )
    space = Workspace(Overrides(), ["."])
    own = space.of("sub/requirements.txt")
    assert (own.ignore, own.strict) == (("FAL002",), True)
    # the base's glob keeps naming sub/vendor (ruff anchors each file's globs at its own folder)
    assert run("--show-files", "sub").out == "sub/requirements.txt\n"
    assert _codes("sub") == ["FAL001"]
    # the extending file's keys win
    project({"sub/fa-lint.toml": 'extend = "../fa-lint.toml"\nignore = []\n'})
    assert _codes("sub") == ["FAL001", "FAL002"]


@pytest.mark.parametrize(
    ("files", "said"),
    [
        (
            {"fa-lint.toml": 'extend = "fa-lint.toml"\n'},
            "circular configuration: fa-lint.toml extends fa-lint.toml",
        ),
        (
            {"fa-lint.toml": 'extend = "b/fa-lint.toml"\n', "b/fa-lint.toml": 'extend = "../fa-lint.toml"\n'},
            "circular configuration: fa-lint.toml extends b/fa-lint.toml extends fa-lint.toml",
        ),
        (
            {"fa-lint.toml": 'extend = "nowhere.toml"\n'},
            "fa-lint.toml:1:1: fa-lint.toml extend 'nowhere.toml': no such file",
        ),
        ({"fa-lint.toml": 'extend = "../outside.toml"\n'}, "outside the repository"),
        (
            {"fa-lint.toml": 'extend = "base.toml"\n', "base.toml": "select = [\n"},
            "cannot read configuration",
        ),
        ({"fa-lint.toml": 'extend = "base.toml"\n', "base.toml": "nokey = 1\n"}, "base.toml:1:1: unknown"),
    ],
)
def test_a_bad_extend_is_a_located_configuration_error(
    project: Any, files: dict[str, str], said: str, tmp_path: Path
) -> None:
    (tmp_path.parent / "outside.toml").write_text('ignore = ["FAL001"]\n')
    project({".git/HEAD": "", "requirements.txt": OLD, **files})
    r = run()
    assert r.code == 2 and "configuration error:" in r.err and said in r.err, r.err
    assert "Traceback" not in r.err


def test_extend_is_no_command_line_override(project: Any) -> None:
    project({"requirements.txt": OLD, "base.toml": ""})
    r = run("--config", 'extend = "base.toml"')
    assert r.code == 2 and "extend is a configuration file's key" in r.err


# --- output format, SARIF category ------------------------------------------------------------------


def test_output_format_from_the_environment(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    project({"requirements.txt": OLD})
    monkeypatch.setenv("FA_LINT_OUTPUT_FORMAT", "json")
    assert run().json["findings"][0]["code"] == "FAL001"
    assert run("--format", "concise").out.startswith("requirements.txt:1:1: FAL001")  # the flag wins
    monkeypatch.setenv("FA_LINT_OUTPUT_FORMAT", "full")  # ruff's name for text
    assert "Found 1 error" in run().out
    monkeypatch.setenv("FA_LINT_OUTPUT_FORMAT", "xml")
    r = run()
    assert r.code == 2 and "FA_LINT_OUTPUT_FORMAT='xml'" in r.err


def _automation(*argv: str) -> Any:
    return run("--format", "sarif", *argv).json["runs"][0].get("automationDetails")


def test_sarif_category_sets_automation_details(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TF_BUILD", raising=False)
    project({"requirements.txt": OLD})
    assert _automation() is None  # outside a pipeline, none unless asked
    assert _automation("--sarif-category", "fa-lint/") == {"id": "fa-lint/"}
    ado = "azuredevops/pipeline/build/org/p/1/j/refs/heads/main/2"
    project({"fa-lint.toml": f'sarif-category = "{ado}"\n'})
    assert _automation() == {"id": ado}
    assert _automation("--sarif-category", "deps/") == {"id": "deps/"}  # the flag wins
    assert 'sarif-category = "deps/"' in run("--show-settings", "--sarif-category", "deps/").out


# --- extension ---------------------------------------------------------------------------------------


def test_extension_maps_a_suffix_to_a_format(project: Any) -> None:
    project({"deps.req": OLD, "requirements.txt": LOOSE})
    assert run("--show-files").out == "requirements.txt\n"
    assert run("--show-files", "--extension", "req:requirements").out == "deps.req\nrequirements.txt\n"
    found = run("--format", "json", "--extension", "req:requirements").codes()
    assert ("deps.req", 1, "FAL001") in found
    project({"fa-lint.toml": 'extension = {req = "requirements"}\n'})
    assert ("deps.req", 1, "FAL001") in run("--format", "json").codes()
    for bad in ("req", "req:python", ":requirements"):
        r = run("--extension", bad)
        assert r.code == 2 and "--extension" in r.err, bad
    project({"fa-lint.toml": 'extension = {req = "cobol"}\n'})
    r = run()
    assert r.code == 2 and "fa-lint.toml:1:" in r.err and "requirements" in r.err


# --- preview -----------------------------------------------------------------------------------------


def test_preview_rules_run_only_under_preview(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not [code for code, rule in RULES.items() if rule.preview]  # none is in preview today
    project({"requirements.txt": OLD + LOOSE})
    monkeypatch.setitem(RULES, "FAL002", RULES["FAL002"]._replace(preview=True))
    assert _codes() == ["FAL001"]
    assert _codes("--preview") == ["FAL001", "FAL002"]
    assert _codes("--select", "FAL002") == []
    project({"fa-lint.toml": "preview = true\n"})
    assert _codes() == ["FAL001", "FAL002"]
    assert _codes("--no-preview") == ["FAL001"]
    assert "**Preview:** reported under `--preview` only" in run("rule", "FAL002").out
    assert "Preview" not in run("rule", "FAL001").out


# --- watch ---------------------------------------------------------------------------------------------


def test_watch_checks_again_on_a_change_and_ends_cleanly(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project({"requirements.txt": OLD})
    looks: list[int] = []

    def clock(seconds: float) -> None:
        looks.append(1)
        if len(looks) == 1:
            (root / "requirements.txt").write_text("flash-attn>=2.5.0\n")
        elif len(looks) == 3:
            raise KeyboardInterrupt  # Ctrl-C

    monkeypatch.setattr(watch, "sleep", clock)
    r = run("--watch", "--format", "concise")
    assert r.code == 0
    assert r.err.count("Starting linter in watch mode...") == 1
    assert r.err.count("File change detected...") == 1  # the second look saw nothing new
    first, second = r.out.split("Found 1 error")
    assert "FAL001" in first and "All checks passed" in second


def test_watch_finds_a_new_file(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project({"requirements.txt": OLD})
    looks: list[int] = []

    def clock(seconds: float) -> None:
        looks.append(1)
        if len(looks) == 1:
            (root / "sub").mkdir()
            (root / "sub/requirements.txt").write_text(OLD)
        elif len(looks) > watch.RELIST:
            raise KeyboardInterrupt

    monkeypatch.setattr(watch, "sleep", clock)
    r = run("--watch", "--format", "concise")
    assert r.code == 0 and r.err.count("File change detected...") == 1  # at the look that lists again
    assert "sub/requirements.txt:1:1: FAL001" in r.out.split("Found 1 error")[1]


def test_watch_refuses_what_runs_once(project: Any) -> None:
    project({"requirements.txt": OLD})
    for other in ("--diff", "--statistics", "--show-files", "--add-noqa"):
        r = run("--watch", other)
        assert r.code == 2 and "--watch" in r.err, other


# --- add-noqa reason -----------------------------------------------------------------------------------


def test_add_noqa_writes_the_reason_after_the_codes(project: Any) -> None:
    root = project({"requirements.txt": OLD, "sub/requirements.txt": OLD})
    r = run("--add-noqa=pinned for the CUDA 11 image", "sub")
    assert r.code == 0, r.err
    assert (root / "sub/requirements.txt").read_text() == (
        "flash-attn==2.4.2  # noqa: FAL001 pinned for the CUDA 11 image\n"
    )
    assert (root / "requirements.txt").read_text() == OLD  # the path after it is a path
    assert _codes("sub") == []
    run("--add-noqa", "requirements.txt")  # no reason: as before
    assert (root / "requirements.txt").read_text() == "flash-attn==2.4.2  # noqa: FAL001\n"
    for reason in ('say "no"', "100%", "a & b", "line\nbreak"):
        bad = run(f"--add-noqa={reason}", "sub")
        assert bad.code == 2 and "a reason may hold" in bad.err, reason


def test_a_committed_file_named_like_add_noqa_stays_a_path_under_pre_commit(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project({"requirements.txt": OLD, "--add-noqa=x": OLD})
    monkeypatch.setenv("PRE_COMMIT", "1")  # pre-commit appends the changed files' names
    r = run("--format", "json", "requirements.txt", "--add-noqa=x")
    assert r.code == 1 and sorted(f["path"] for f in r.json["findings"]) == [
        "--add-noqa=x",
        "requirements.txt",
    ]
    assert (root / "requirements.txt").read_text() == OLD == (root / "--add-noqa=x").read_text()


# --- completion and help -------------------------------------------------------------------------------


def test_completion_and_help_know_the_new_words(capsys: pytest.CaptureFixture[str]) -> None:
    script = run("completion", "bash").out
    for word in ("--fixable", "--unfixable", "--ignore-noqa", "--extension", "--preview", "--watch"):
        assert word in script, word
    assert "--sarif-category" in script and "--no-unsafe-fixes" in script
    assert '"check")' in script and '"version")' in script
    capsys.readouterr()
    assert run("--help").code == 0
    shown = capsys.readouterr().out  # argparse prints --help itself
    assert "\n  check " in shown and "\n  version " in shown and "--sarif-category" in shown
