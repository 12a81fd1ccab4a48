"""Round 5 of the hostile-repository runs (issue 38: ../shared/reliability/52-58, 61; issue 40 item 1),
each reproducer rebuilt here from its input, and each as a class:

- fa-lint's own exception is its bug (FAL902), never the file's: the rest of the file and every other
  file are still read, it shows in every output format, nothing hides it, the run exits 2 (ruff's
  panic) -- in every per-file read path (a parser, the shell walk, the code layer, kernels.lock, the
  checkouts a file builds, the sniff of a file's head);
- a suppression counts only in a real comment of the file's own syntax (shell: bash is the oracle;
  YAML: PyYAML is);
- a command-line value is read as typed (--config);
- every file name a listing prints is escaped;
- ``python -m fa_lint`` imports nothing from the checked folder that fa-lint could keep out;
- ``--add-noqa`` writes only where the format has a comment, and never changes what a file does.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fa_lint import engine
from fa_lint.code import command_lines
from fa_lint.report import FORMATS, renderer
from fa_lint.settings.decide import comment_starts
from fa_lint.syntax.comments import starts
from tests.conftest import REPO, SHARED, run
from tests.fuzz import assert_safe
from tests.fuzz.constructs import kernel_locks

OLD = "flash-attn==2.4.2\n"


def _codes(r: Any) -> list[tuple[str, int, str]]:
    return sorted(r.codes())


# --- issue 40 item 1: an exception inside fa-lint is fa-lint's bug ---------------------------------------


def _crash_in_function_definitions(monkeypatch: pytest.MonkeyPatch) -> None:
    from fa_lint.shell import walk

    def boom(*_: Any) -> None:
        raise RuntimeError("dictionary changed size during iteration")

    monkeypatch.setitem(walk._HANDLERS, "function_definition", boom)


def test_a_crash_in_the_shell_walk_costs_one_statement(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The statement it was reading is a FAL902 (its bug, with what to report), the statements after it
    and the other files are read, and the run exits 2, not 1 as for a file to fix."""
    _crash_in_function_definitions(monkeypatch)
    project(
        {
            "setup.sh": "f() { echo; }\npip install flash-attn==2.4.2\n",
            "requirements.txt": "flash-attn==2.3.6\n",
        }
    )
    r = run("--format", "json", "--select", "FAL001,FAL9")
    assert _codes(r) == [
        ("requirements.txt", 1, "FAL001"),
        ("setup.sh", 1, "FAL902"),
        ("setup.sh", 2, "FAL001"),
    ]
    (crash,) = [f for f in r.json["findings"] if f["code"] == "FAL902"]
    assert crash["severity"] == "error" and crash["end_line"] == 1 and crash["end_column"] == 14
    assert crash["message"].startswith("internal error in fa-lint while reading this statement (RuntimeError")
    assert "a bug in fa-lint, not a problem of the file" in crash["notes"][-1]
    assert "issues/new" in crash["help"] and "fa-lint --version" in crash["help"]
    assert "fix the file" not in json.dumps(crash) and "--exclude" not in crash["help"]
    assert r.code == 2
    assert "internal error in fa-lint" in r.err and "not in the files" in r.err and "issues/new" in r.err


def test_an_internal_error_shows_in_every_output_format(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _crash_in_function_definitions(monkeypatch)
    project({"setup.sh": "f() { echo; }\npip install flash-attn==2.4.2\n"})
    report = engine.check(["setup.sh"])
    assert [f.code for f in report.findings if f.code == "FAL902"] == ["FAL902"]
    for fmt in FORMATS:
        out = renderer(fmt)(report, color=False, fixable=True)
        assert_safe(out, fmt, len(report.findings))
        assert "FAL902" in out, fmt
    jsonschema = pytest.importorskip("jsonschema")
    schema = SHARED / "schemas" / "sarif-schema-2.1.0.json"
    if schema.exists():  # ../shared beside the checkout
        doc = json.loads(renderer("sarif")(report, color=False, fixable=True))
        assert list(jsonschema.Draft4Validator(json.loads(schema.read_text())).iter_errors(doc)) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["--ignore", "FAL902"],
        ["--select", "FAL001"],
        ["--per-file-ignores", "*.sh:FAL9"],
        ["--config", 'ignore = ["FAL9"]'],
    ],
)
def test_nothing_hides_an_internal_error(
    project: Any, monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    _crash_in_function_definitions(monkeypatch)
    project({"setup.sh": "f() { echo; }  # noqa\n# fa-lint: noqa\n", "fa-lint.toml": 'ignore = ["FAL902"]\n'})
    r = run("--format", "json", *argv)
    assert [c for _, _, c in r.codes()] == ["FAL902"] and r.code == 2


def test_exit_zero_keeps_an_internal_error_at_0_and_shown(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _crash_in_function_definitions(monkeypatch)
    project({"setup.sh": "f() { echo; }\n"})
    r = run("--format", "concise", "--exit-zero")
    assert r.code == 0 and "FAL902" in r.out  # (ruff's rule) --exit-zero wins, the diagnostic still shows


def test_a_parser_crash_keeps_what_it_read_before(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from fa_lint.sources import SOURCES, requirements

    real = requirements.parse

    def halfway(*args: Any, **kwargs: Any) -> Any:
        for i, record in enumerate(real(*args, **kwargs)):
            if i == 1:
                raise KeyError("x" * 100)  # an exception text quoting much of a file: an excerpt only
            yield record

    monkeypatch.setattr(SOURCES["requirements"].module, "parse", halfway)
    project({"requirements.txt": "flash-attn==2.4.2\ntorch==2.3.0\nflash-attn==2.3.6\n"})
    r = run("--format", "json", "--select", "FAL001,FAL9")
    assert _codes(r) == [("requirements.txt", 1, "FAL001"), ("requirements.txt", 1, "FAL902")]
    (crash,) = [f for f in r.json["findings"] if f["code"] == "FAL902"]
    assert "x" * 33 not in crash["message"]


@pytest.mark.parametrize(
    ("where", "attribute", "at"),
    [
        ("fa_lint.engine", "uses_of", ("app.py", 1)),  # the code layer, reading one Python file
        ("fa_lint.code.command_lines", "stale_lock", ("kernels.lock", 1)),  # a kernels.lock
        ("fa_lint.files.checkouts", "_resolved", ("build.sh", 1)),  # the checkouts a script builds
    ],
)
def test_a_crash_in_any_per_file_read_costs_that_file(
    project: Any, monkeypatch: pytest.MonkeyPatch, where: str, attribute: str, at: tuple[str, int]
) -> None:
    import importlib

    module = importlib.import_module(where)
    real = getattr(module, attribute)

    def boom(*args: Any, **kwargs: Any) -> Any:  # in the one file named, the real reader elsewhere
        if at[0] in map(str, args):
            raise TypeError("unhashable type: 'list'")
        return real(*args, **kwargs)

    monkeypatch.setattr(module, attribute, boom)
    project(
        {
            "requirements.txt": OLD,
            "app.py": "from flash_attn import flash_attn_with_kvcache\nflash_attn_with_kvcache(q, k, v, block_table=b)\n",
            "pyproject.toml": '[project]\nname = "x"\nversion = "1"\n\n[tool.kernels.dependencies]\n"org/a" = "1"\n',
            "kernels.lock": '[{"repo_id": "org/a"}]\n',
            "build.sh": "pip install ./third_party/flash-attention\n",
        }
    )
    r = run("--format", "json")
    codes = r.codes()
    assert (*at, "FAL902") in codes and ("requirements.txt", 1, "FAL001") in codes, codes
    assert r.code == 2


def test_a_crash_sniffing_a_file_reads_the_file(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from fa_lint.files import discover

    def boom(*_: Any, **__: Any) -> bool:
        raise ValueError("sniff")

    monkeypatch.setattr(discover, "_sniffed", boom)
    project({"environment-gpu.yml": "dependencies:\n  - pip:\n    - flash-attn==2.4.2\n"})  # a name sniffed
    assert ("environment-gpu.yml", 3, "FAL001") in run("--format", "json", ".").codes()


# --- 56: kernels.lock entries of every shape -----------------------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        {"repo_id": ["kernels-community/activation"], "sha": "0"},  # the reproducer
        {"repo_id": {"a": 1}},
        {"dependency": "x"},
        {"dependency": {"repo-id": []}},
        {"repo_id": 1},
        "kernels-community/activation",
    ],
)
def test_a_kernels_lock_entry_of_another_shape_pins_nothing(project: Any, entry: Any) -> None:
    project(
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "1"\ndependencies = ["kernels==0.4.0"]\n\n'
            '[tool.kernels.dependencies]\n"kernels-community/activation" = ">=0.0.1"\n',
            "kernels.lock": json.dumps([entry]),
            "requirements.txt": OLD,
        }
    )
    r = run("--format", "json", ".")
    assert "internal error" not in r.out + r.err and r.code == 1
    assert sorted((p, c) for p, _, c in r.codes()) == [
        ("pyproject.toml", "FAL020"),
        ("requirements.txt", "FAL001"),
    ]
    (stale,) = [f for f in r.json["findings"] if f["code"] == "FAL020"]
    assert "kernels.lock does not pin it" in stale["message"]


@settings(
    max_examples=150, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(kernel_locks())
def test_no_kernels_lock_raises(files: tuple[str, str]) -> None:
    pyproject, lock = files
    found = command_lines.stale_lock("pyproject.toml", pyproject, "kernels.lock", lock)
    assert all(isinstance(u.name, str) and u.name for u in found)


class _Counted(str):
    """A text that counts the characters its searches go over (``find`` from a start)."""

    scanned = 0

    def find(self, sub: Any, start: Any = None, end: Any = None) -> int:
        begin = 0 if start is None else start
        found = super().find(sub, begin, end)
        _Counted.scanned += (len(self) if found < 0 else found) - begin
        return found


def test_a_stale_lock_finds_its_repositories_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 38's note: each repository was searched for from the top of the file (n^2/2 characters)."""
    passes: list[int] = []
    real = command_lines._QUOTED()

    class Pattern:
        def finditer(self, text: str) -> Any:
            passes.append(len(text))
            return real.finditer(text)

    monkeypatch.setattr(command_lines, "_QUOTED", Pattern)
    n = 3_000
    lock = _Counted(json.dumps([{"repo_id": f"org/k{i}"} for i in range(n)], indent=2))
    asked = '[tool.kernels.dependencies]\n"org/a" = 1\n'
    _Counted.scanned = 0
    found = command_lines.stale_lock("pyproject.toml", asked, "kernels.lock", lock)
    assert len(found) == n + 1
    assert [(u.location.path, u.location.line) for u in found[1:3]] == [
        ("kernels.lock", 3),
        ("kernels.lock", 6),
    ]
    assert passes == [len(asked), len(lock)]  # one pass over each file
    assert _Counted.scanned <= 2 * len(lock)


# --- 52, 53: a suppression counts only in a real comment --------------------------------------------------


def test_the_ansi_c_quote_reproducer_suppresses_nothing(project: Any) -> None:
    project(
        {
            "install.sh": "echo $'installing\\'s\n# fa-lint: noqa\n'\npip install flash-attn==2.4.2\n",
            "line.sh": "pip install flash-attn==2.4.2 $'\\' # noqa'\n",
        }
    )
    for name in ("install.sh", "line.sh"):
        r = run("--format", "json", "--select", "FAL001", name)
        assert r.codes() and r.json["summary"]["suppressed"] == 0, (name, r.out)


def test_the_multiline_scalar_reproducer_suppresses_nothing(project: Any) -> None:
    project(
        {
            ".github/workflows/ci.yml": "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n"
            '      - name: "Install the\n          # fa-lint: noqa\n          dependencies"\n'
            "        run: pip install flash-attn==2.4.2\n",
            "environment.yml": "name: 'gpu\n  # fa-lint: noqa\n  env'\ndependencies:\n  - pip\n"
            "  - pip:\n    - flash-attn==2.4.2\n",
        }
    )
    for name in (".github/workflows/ci.yml", "environment.yml"):
        r = run("--format", "json", "--select", "FAL001", name)
        assert r.codes() and r.json["summary"]["suppressed"] == 0, (name, r.out)


def _in_comment(text: str, style: str) -> bool:
    """Whether the last "#MARK" of the text lies in a comment, as a suppression reads one: from the
    first comment start of its line to the line's end."""
    hash_at = text.rindex("#MARK")
    line = text.count("\n", 0, hash_at) + 1
    column = hash_at - (text.rfind("\n", 0, hash_at) + 1)
    start = starts(text, style).get(line)
    return start is not None and start <= column


_BASH = shutil.which("bash")
_PIECES = [
    "'",
    '"',
    "$'",
    '$"',
    "\\",
    "\\'",
    "${",
    "}",
    "$(",
    ")",
    " ",
    "a",
    "#",
    "`",
    "((",
    "))",
    "$((",
    "\n",
]


@pytest.mark.skipif(_BASH is None, reason="bash is the oracle")
@settings(
    max_examples=250, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(st.lists(st.sampled_from(_PIECES), max_size=8).map("".join))
def test_a_shell_comment_is_where_bash_has_one(prefix: str) -> None:
    """``printf '%s\\n' PREFIX #MARK``: the "#" is a comment exactly where bash leaves MARK out."""
    text = f"printf '%s\\n' {prefix} #MARK\n"
    proc = subprocess.run(
        [_BASH or "bash", "-c", text],
        capture_output=True,
        text=True,
        timeout=10,
        env={"PATH": "/usr/bin:/bin"},
    )
    if proc.returncode != 0:
        return  # a syntax error (an unclosed quote): bash reads no line of it
    assert _in_comment(text, "shell") == ("MARK" not in proc.stdout), (text, proc.stdout)


_YAML_PIECES = ["'", '"', "''", '\\"', " ", "a", "#", ":", "- ", "\n  ", "|", ">", "[", "]", ","]


@settings(
    max_examples=400, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(st.lists(st.sampled_from(_YAML_PIECES), max_size=8).map("".join))
def test_a_yaml_comment_is_where_pyyaml_has_one(value: str) -> None:
    """``k: VALUE\\n  #MARK x``: the "#" is a comment exactly where PyYAML leaves MARK out of the data."""
    text = f"k: {value}\n  #MARK x\nz: 1\n"
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return
    if not _in_comment(text, "yaml"):  # text: the value holds it (a quoted or block scalar)
        assert "MARK" in json.dumps(data), (text, data)
    else:  # a comment, but for a literal block scalar's shell comment (a run: | script's)
        assert "MARK" not in json.dumps(data) or re.search(r"k: *\|", text), (text, data)


@pytest.mark.parametrize(
    ("line", "comment"),
    [
        ("RUN pip install flash-attn==2.4.2  # noqa", True),  # the shell form: sh's comment
        ('RUN ["bash", "-c", "pip install flash-attn==2.4.2"]  # noqa', True),  # no JSON: sh runs the line
        ('RUN ["bash", "-c", "pip install flash-attn==2.4.2 # noqa"]', False),  # inside the JSON string
        ("ENV FA=2.4.2  # noqa", False),  # ENV sets more variables
        ("ARG FA=2.4.2  # noqa", False),
        ("FROM python:3.11  # noqa", False),
        ("COPY a b  # noqa", False),
        ("  # noqa", True),  # a comment line
        ("RUN cat <<EOF > f\n# noqa\nEOF", False),  # a here-document's body is text
    ],
)
def test_a_dockerfile_comment_is_where_buildkit_and_sh_have_one(line: str, comment: bool) -> None:
    text = f"FROM x\n{line}\n"
    hash_at = text.index("# noqa")
    number = text.count("\n", 0, hash_at) + 1
    column = hash_at - (text.rfind("\n", 0, hash_at) + 1)
    assert (comment_starts(text, "dockerfile").get(number) == column) is comment


# --- 57: --config is read as typed ---------------------------------------------------------------------------


@pytest.mark.parametrize("override", ['ignore=["FAL002"]', 'ignore = ["FAL002"]'])
def test_a_committed_file_named_like_an_override_is_not_read(project: Any, override: str) -> None:
    project({override: 'ignore = ["FAL"]\n', "requirements.txt": OLD})
    r = run("--config", override, "--format", "json", ".")
    assert r.codes() == [("requirements.txt", 1, "FAL001")] and r.code == 1
    assert "read as the override it is typed as; the file of that name is not read" in r.err
    assert [c for _, _, c in run("--config", f"./{override}", "--format", "json", ".").codes()] == []


def test_a_config_value_that_is_no_override_is_a_file(project: Any) -> None:
    project({"ci.toml": 'ignore = ["FAL001"]\n', "requirements.txt": OLD, "nosuch=1": 'ignore = ["FAL"]\n'})
    assert run("--config", "ci.toml", "--format", "json", ".").codes() == []
    r = run("--config", "nosuch=1", "--format", "json", ".")  # TOML: an override (of no key), not the file
    assert r.code == 2 and "unknown --config key(s): nosuch" in r.err
    r = run("--config", "select = [", "--format", "json", ".")  # no TOML and no file: said as both
    assert r.code == 2 and "neither a file nor a TOML 'key = value'" in r.err


# --- 54: listings escape file names ---------------------------------------------------------------------


def test_show_files_and_show_settings_escape_names(project: Any) -> None:
    folder = "x\n::error file=README.md,line=1::FORGED\x1b]8;;https://evil.example\x07"
    project(
        {
            f"{folder}/requirements.txt": OLD,
            "fa-lint.toml": 'exclude = ["##[error]x"]\nper-file-ignores = {"::w\\n##[x]" = ["FAL002"]}\n',
        }
    )
    for option in ("--show-files", "--show-settings"):
        r = run(option, ".")
        assert r.code == 0 and "requirements.txt" in r.out
        assert_safe(r.out, "text", 0)
        assert "\x1b" not in r.out and "\n::" not in r.out


# --- 55: python -m fa_lint imports nothing the folder could shadow ---------------------------------------------


def _importtime_names(cwd: Path) -> list[str]:
    """The modules ``python -m fa_lint --version`` imports after ``site`` and until fa_lint's own
    command line starts (``-X importtime``, in the order they complete): runpy's and fa_lint's."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "fa_lint", "--version"],
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    names = [
        line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")
    ]
    names = names[1:]  # the header
    after_site = len(names) - names[::-1].index("site") if "site" in names else 0
    upto = next(i for i, n in enumerate(names) if n.startswith("fa_lint."))
    return names[after_site:upto]


def _site_less_imports(code: str) -> set[str]:
    """The modules a statement imports in an interpreter that has run no ``site``: what runpy needs
    where nothing has loaded it yet (an install that is not editable)."""
    probe = f"import sys; sys.path.insert(0, {str(REPO)!r}); b = set(sys.modules); {code}; print(*sorted(set(sys.modules) - b))"
    return set(
        subprocess.run(
            [sys.executable, "-S", "-c", probe], capture_output=True, text=True, check=True
        ).stdout.split()
    )


def _resolved_before_main(cwd: Path) -> set[str]:
    names = (
        set(_importtime_names(cwd))
        | _site_less_imports("import runpy")
        | _site_less_imports("import fa_lint")
    )
    top = {n.split(".")[0] for n in names}
    return {n for n in top if n.isidentifier() and n not in sys.builtin_module_names}


def test_fa_lint_imports_nothing_before_the_path_is_clean() -> None:
    """``fa_lint/__init__`` imports no module; ``__main__`` only built-in ones before it takes the
    working folder off sys.path (the checkout's ``__future__.py`` ran: reliability/55)."""
    assert _site_less_imports("import fa_lint") == {"fa_lint"}
    tree = ast.parse((REPO / "fa_lint" / "__main__.py").read_text())
    before: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.If) and "del sys.path[0]" in ast.unparse(node):
            break
        for sub in ast.walk(node):
            if isinstance(sub, ast.Import):
                before += [a.name for a in sub.names]
            elif isinstance(sub, ast.ImportFrom):
                before.append(sub.module or "")
    # each built into the interpreter (posix, or nt on Windows: the branch not taken is the other OS's)
    assert before and all(n in sys.builtin_module_names or n in ("nt", "posix") for n in before), before


def _poisoned(tmp_path: Path, names: set[str]) -> Path:
    root = tmp_path / "checkout"
    root.mkdir()
    for name in names:
        (root / f"{name}.py").write_text(
            f"open('RAN-{name}', 'w').close()\nraise SystemExit('the checkout ran {name}')\n"
        )
    (root / "requirements.txt").write_text(OLD)
    return root


@pytest.mark.skipif(sys.version_info < (3, 11), reason="python -P is Python 3.11's")
def test_python_dash_capital_p_and_the_script_run_nothing_from_the_checkout(tmp_path: Path) -> None:
    """Every module Python resolves before ``__main__`` runs (derived from this interpreter), each a
    file of the checked folder: ``python -P -m fa_lint`` and the ``fa-lint`` script import none."""
    names = _resolved_before_main(tmp_path)
    assert "runpy" in names or "importlib" in names  # (the derivation sees Python's own imports)
    root = _poisoned(tmp_path, names)
    script = Path(sysconfig.get_path("scripts")) / "fa-lint"
    for argv in ([sys.executable, "-P", "-m", "fa_lint"], [str(script)] if script.exists() else []):
        if not argv:
            continue
        proc = subprocess.run([*argv, "--format", "json", "."], capture_output=True, text=True, cwd=root)
        ran = sorted(p.name for p in root.glob("RAN-*"))
        assert ran == [] and proc.returncode == 1, (argv, ran, proc.stderr)
        assert [f["code"] for f in json.loads(proc.stdout)["findings"]] == ["FAL001"]


def test_python_dash_m_runs_no_checkout_module_fa_lint_could_keep_out(tmp_path: Path) -> None:
    """Plain ``python -m fa_lint``: of the modules resolved before ``__main__``, only those runpy itself
    imports can come from the folder (docs/reliability.md says to use -P or the script); the
    reproducer's ``__future__.py`` does not run."""
    own = _resolved_before_main(tmp_path) - _site_less_imports("import runpy") - {"runpy", "fa_lint", "site"}
    root = _poisoned(tmp_path, own | {"__future__"})
    proc = subprocess.run(
        [sys.executable, "-m", "fa_lint", "--format", "json", "."], capture_output=True, text=True, cwd=root
    )
    assert sorted(p.name for p in root.glob("RAN-*")) == [] and proc.returncode == 1, proc.stderr


def test_the_docs_say_how_to_keep_every_checkout_module_out() -> None:
    text = (REPO / "docs" / "reliability.md").read_text()
    assert "python -P -m fa_lint" in text and "`fa-lint` script" in text


# --- 58: --add-noqa never writes where the format has no comment, nor changes what a file does ----------------


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "Dockerfile",
            'FROM python:3.11\nRUN ["bash", "-c", "pip install --no-build-isolation flash-attn==2.4.2"]\n',
        ),
        ("environment.yml", 'dependencies:\n  - pip:\n    - "flash-attn==2.4.2\n      "\n'),
        (
            "pyproject.toml",
            '[project]\nname = "x"\nversion = "1"\ndependencies = ["""flash-attn==2.4.2\n"""]\n',
        ),
        ("Pipfile.lock", '{"default": {"flash-attn": {"version": "==2.4.2"}}, "develop": {}, "_meta": {}}\n'),
    ],
)
def test_add_noqa_leaves_a_line_whose_format_has_no_comment(project: Any, name: str, text: str) -> None:
    root = project({name: text})
    before = run("--format", "json", name).json["findings"]
    assert before
    r = run("--add-noqa", name)
    assert r.code == 0 and "no noqa added" in r.err, r.err
    assert (root / name).read_text() == text
    assert run("--format", "json", name).json["findings"] == before


@pytest.mark.parametrize(
    "line", ["ENV FA=2.4.2", "ARG FA=2.4.2", "FROM python:3.11", "COPY a b", 'CMD ["a"]']
)
def test_add_noqa_places_no_comment_on_a_dockerfile_line_that_has_none(line: str) -> None:
    from fa_lint.cli.addnoqa import _placed

    text = f"FROM x\n{line}\nRUN pip install flash-attn==2.4.2\n"
    refused: list[tuple[str, int, str]] = []
    split, added = _placed(text, {2: {"FAL001"}, 3: {"FAL001"}}, "dockerfile", "Dockerfile", refused)
    assert list(added) == [3] and [n for _, n, _ in refused] == [2]
    assert split[1] == line and split[2].endswith("  # noqa: FAL001")


def test_add_noqa_refuses_a_comment_that_changes_the_instruction(project: Any) -> None:
    """reliability/58: after the comment BuildKit runs the exec form as a shell command (exit 127)."""
    text = 'FROM python:3.11\nRUN ["bash", "-c", "pip install --no-build-isolation flash-attn==2.4.2"]\n'
    root = project({"Dockerfile": text})
    r = run("--add-noqa", "Dockerfile")
    assert "no noqa added: Dockerfile:2: a comment after an exec-form array makes it no JSON" in r.err
    assert (root / "Dockerfile").read_text() == text


def test_an_exec_form_that_is_no_json_is_the_shell_form(project: Any) -> None:
    """BuildKit's parseMaybeJSON: JSON of the whole rest, else ``/bin/sh -c`` of it."""
    project(
        {
            "Dockerfile": 'FROM x\nRUN ["false"]; pip install flash-attn==2.4.2\nRUN ["bash", "-c", "pip install flash-attn==2.4.1"]  # x\n'
        }
    )
    assert [
        (line, c) for _, line, c in run("--format", "json", "--select", "FAL001", "Dockerfile").codes()
    ] == [(2, "FAL001")]


def test_add_noqa_still_comments_where_the_format_has_comments(project: Any) -> None:
    files = {
        "Dockerfile": "FROM python:3.11\nRUN pip install --no-build-isolation flash-attn==2.4.2\n",
        ".github/workflows/ci.yml": "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: |\n"
        "          pip install flash-attn==2.4.2\n",
        "environment.yml": "dependencies:\n  - pip:\n    - flash-attn==2.4.2\n",
    }
    project(files)
    r = run("--add-noqa", *files)
    assert r.code == 0 and "no noqa added" not in r.err, r.err
    after = run("--format", "json", *files).json
    assert after["findings"] == [] and after["summary"]["suppressed"] > 0


def test_a_crash_reading_a_configuration_costs_that_configuration(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search ends there as at a pyproject.toml that cannot be read: its files get the defaults."""
    from fa_lint.settings import config

    def boom(*_: Any, **__: Any) -> Any:
        raise AttributeError("'list' object has no attribute 'get'")

    monkeypatch.setattr(config, "_from", boom)
    project({"sub/fa-lint.toml": 'ignore = ["FAL001"]\n', "sub/requirements.txt": OLD})
    r = run("--format", "json", ".")
    assert _codes(r) == [("sub/fa-lint.toml", 1, "FAL902"), ("sub/requirements.txt", 1, "FAL001")]
    assert r.code == 2


def test_a_crash_in_a_rule_costs_that_family_of_rules(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule judges every file: its exception leaves the other families' findings, and one FAL902
    names the family that went unfinished."""
    from fa_lint import rules
    from fa_lint.rules import install

    def boom(ctx: Any) -> Any:
        raise ZeroDivisionError("division by zero")
        yield  # (a generator, as the checks are)

    monkeypatch.setattr(rules, "CHECKS", tuple(boom if c is install.check else c for c in rules.CHECKS))
    monkeypatch.setattr(engine, "CHECKS", rules.CHECKS)
    project({"requirements.txt": OLD})
    r = run("--format", "json", ".")
    codes = r.codes()
    assert ("requirements.txt", 1, "FAL001") in codes and ("requirements.txt", 1, "FAL902") in codes, codes
    (crash,) = [f for f in r.json["findings"] if f["code"] == "FAL902"]
    assert crash["message"].startswith("internal error in fa-lint while judging the files (rules ")
    assert r.code == 2


@pytest.mark.skipif(shutil.which("make") is None, reason="make is the reference")
def test_add_noqa_leaves_a_makefile_variable_whose_value_a_comment_would_change(tmp_path: Path) -> None:
    """make keeps the blanks before a comment in the value: the comment would change it."""
    from fa_lint.cli.addnoqa import _placed

    probe = tmp_path / "probe.mk"
    probe.write_text('FA := 2.4.2  # noqa: FAL001\nall:\n\t@echo "[$(FA)]"\n')
    shown = subprocess.run(["make", "-s", "-f", str(probe)], capture_output=True, text=True).stdout
    assert shown == "[2.4.2  ]\n"  # (the fact the rule rests on)
    text = "FA := 2.4.2\ninstall:\n\tpip install flash-attn==$(FA)\n"
    refused: list[tuple[str, int, str]] = []
    split, added = _placed(text, {1: {"FAL001"}, 3: {"FAL001"}}, "makefile", "Makefile", refused)
    assert list(added) == [3] and [n for _, n, _ in refused] == [1] and split[0] == "FA := 2.4.2"
