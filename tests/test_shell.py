"""Issue 10: scripts as programs. What runs for sure, what may run, what a script builds and removes.

Expectations come from the release facts: block_table first ships in flash-attn 2.5.0, so a pin of
2.3.3 or 2.4.2 lacks paged KV (FAL001), 2.5.8 and 2.6.3 have it; hopper/ builds flash-attn-3 and
flash_attn/cute/ flash-attn-4 (upstream's hopper/setup.py and flash_attn/cute/pyproject.toml), which
are other distributions and never judged as flash-attn.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fa_lint.model import Uninstall
from tests.conftest import parse, reqs, run

REPO = "https://github.com/Dao-AILab/flash-attention.git"
# How flash-attn builds (FAL011 prebuilt wheels, FAL012 build isolation) is test_install.py's:
# here only what a script installs, and in which order.
QUIET = ("--ignore", "FAL011,FAL012")


def findings(*args: str) -> list[tuple[str, int, str]]:
    return [
        (f["code"], f["line"], f["severity"]) for f in run("--format", "json", *QUIET, *args).json["findings"]
    ]


def located(text: str, line: int, needle: str) -> tuple[int, int]:
    """The 1-based line and column where ``needle`` is written on ``line``: a character count."""
    return line, text.splitlines()[line - 1].index(needle) + 1


# --- reading: positions, certainty, variables --------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "name", "text"),
    [
        ("shell", "x.sh", 'echo "größe ✓ 日本" && pip install flash-attn==2.4.2\n'),
        (
            "dockerfile",
            "Dockerfile",
            "FROM python:3.11\nLABEL x=ü\nRUN echo 'ü✓' && pip install flash-attn==2.4.2\n",
        ),
        (
            "workflow",
            ".github/workflows/ci.yml",
            "on: push\njobs:\n  t:\n    steps:\n      - run: echo 'ünï' ; pip install flash-attn==2.4.2\n",
        ),
        ("makefile", "Makefile", "gpu:\n\t@echo 'señal' && pip install flash-attn==2.4.2\n"),
    ],
)
def test_positions_count_characters_not_utf8_bytes(source: str, name: str, text: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    (r,) = reqs(parse(source, path, text))
    line = len(text[: text.index("flash-attn==")].splitlines())
    assert (r.location.line, r.location.column) == located(text, line, "flash-attn==")
    assert r.location.end_column - r.location.column == len("flash-attn==2.4.2")


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        # sequential: &&, ;, newlines, subshells, { }, pipelines, set -e
        ("set -e\npip install flash-attn==2.6.3 && echo ok; (pip install torch)\n", [False]),
        ("{ pip install flash-attn==2.6.3; } | tee log\n", [False]),
        # after ||, after a test's &&, in branches and loops: possible
        ("pip install flash-attn==2.6.3 || pip install flash-attn==2.5.8\n", [False, True]),
        ("[[ -v FA ]] && pip install flash-attn==2.6.3 && pip install flash-attn==2.5.8\n", [True, True]),
        ("command -v nvcc && pip install flash-attn==2.6.3\n", [True]),
        (
            "if nvidia-smi; then pip install flash-attn==2.6.3; elif true; then pip install flash-attn==2.5.8; fi\n",
            [True, True],
        ),
        (
            "case $CUDA in 12*) pip install flash-attn==2.6.3;; *) pip install flash-attn==2.5.8;; esac\n",
            [True, True],
        ),
        (
            "for i in 1 2; do pip install flash-attn==2.6.3; done\nwhile false; do pip install flash-attn==2.5.8; done\n",
            [True, True],
        ),
        # a function: followed where it is called, possible where the call is, possible when never called
        ("f() { pip install flash-attn==2.6.3; }\nf\n", [False]),
        ('f() { pip install flash-attn==2.6.3; }\n[ -n "$GPU" ] && f\n', [True]),
        ("f() { pip install flash-attn==2.6.3; }\necho no call\n", [True]),
        # a shell inside the shell
        (
            "bash -c 'pip install flash-attn==2.6.3' || true\nsudo sh -c \"pip install flash-attn==2.5.8\"\n",
            [False, False],
        ),
    ],
)
def test_certain_and_possible(script: str, expected: list[bool], tmp_path: Path) -> None:
    assert [r.possible for r in reqs(parse("shell", tmp_path / "x.sh", script))] == expected


def test_variables_follow_branches(tmp_path: Path) -> None:
    script = (
        'if [[ "$CUDA" == 12* ]]; then\n  FA=2.6.3\nelse\n  FA=2.3.3\nfi\n'
        "pip install flash-attn==$FA\n"  # either value: both are admitted
        '[ -n "$X" ] && ONE=2.5.8\n'
        "pip install flash-attn==$ONE\n"  # may still be unset: unknown
        "pip install flash-attn==${ONE:-2.6.3}\n"
        'install() { pip install "flash-attn==$1"; }\ninstall 2.4.2\n'  # a function's $1
        "for v in 2.5.6; do pip install flash-attn==$v; done\n"
    )
    rs = reqs(parse("shell", tmp_path / "x.sh", script))
    assert [(r.location.line, r.constraint_text, r.unresolved) for r in rs] == [
        (6, "==2.6.3 || ==2.3.3", None),
        (8, "any", "$ONE"),
        (9, "==2.5.8 || ==2.6.3", None),
        (10, "==2.4.2", None),
        (12, "==2.5.6", None),
    ]


def test_command_names_through_variables_and_prefixes(tmp_path: Path) -> None:
    script = (
        'PIP="python3 -m pip"\nSUDO=""\n$SUDO $PIP install flash-attn==2.4.2\n'
        "env CUDA_HOME=/usr/local/cuda MAX_JOBS=4 pip install flash-attn==2.5.8\n"
        "FLASH_ATTENTION_FORCE_BUILD=TRUE pip install flash-attn==2.6.3\n"
    )
    assert [r.constraint_text for r in reqs(parse("shell", tmp_path / "x.sh", script))] == [
        "==2.4.2",
        "==2.5.8",
        "==2.6.3",
    ]


def test_redirect_words_and_heredocs(tmp_path: Path) -> None:
    script = (
        "pip install flash-attn>=2.5 torch==2.3.0\n"  # > takes '=2.5'; torch is still an argument
        "cat > notes.md <<'EOF'\npip install flash-attn==1.0.0\nEOF\n"  # data
        "bash <<EOF\npip install flash-attn==2.4.2\nEOF\n"  # a script
    )
    records = parse("shell", tmp_path / "x.sh", script)
    (fa, fa2) = reqs(records)
    assert (fa.location.line, fa.raw, fa.redirected) == (1, "flash-attn", ">=2.5")
    assert [r.constraint_text for r in reqs(records, "torch")] == ["==2.3.0"]
    assert (fa2.location.line, fa2.constraint_text) == (6, "==2.4.2")


@pytest.mark.parametrize(
    "line",
    [
        "pip uninstall -y flash-attn",
        "pip3 uninstall flash_attn -y",
        "python -m pip uninstall --yes flash-attn",
        "uv pip uninstall flash-attn",
        "conda remove -y -n env flash-attn",
    ],
)
def test_uninstall_spellings(line: str, tmp_path: Path) -> None:
    (u,) = [r for r in parse("shell", tmp_path / "x.sh", line + "\n") if isinstance(r, Uninstall)]
    assert (u.name, u.location.column) == ("flash-attn", line.index("flash") + 1)


def test_makefile_recipes(tmp_path: Path) -> None:
    text = (
        "FA := 2.4.2\n.PHONY: gpu\ngpu: deps\n\t@pip install flash-attn==$(FA)\n"
        "\t-pip install flash-attn==$${FA_SHELL:-2.5.8}\n"
    )
    assert [r.constraint_text for r in reqs(parse("makefile", tmp_path / "Makefile", text))] == [
        "==2.4.2",
        "==2.5.8",
    ]


def test_dockerfile_backtick_escape(tmp_path: Path) -> None:
    text = (
        "# escape=`\nFROM python:3.11\nRUN pip install `\n    # dropped\n    flash-attn==2.4.2 `\n    torch\n"
    )
    rs = reqs(parse("dockerfile", tmp_path / "Dockerfile", text), None)
    assert [(r.name, r.location.line) for r in rs] == [("flash-attn", 5), ("torch", 6)]


# --- the fold: uninstall, fallbacks, branches --------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        # a certain uninstall removes the good pin: the later unpinned install is judged on its own
        (
            "pip install flash-attn==2.6.3\npip uninstall -y flash-attn\npip install flash-attn\n",
            [("FAL002", 3, "warning")],
        ),
        # ... without it, the later install is a no-op (pip keeps 2.6.3)
        ("pip install flash-attn==2.6.3\npip install flash-attn\n", []),
        # a possible uninstall leaves it uncertain: judged on its own too
        (
            'pip install flash-attn==2.6.3\n[ -n "$R" ] && pip uninstall -y flash-attn\npip install flash-attn\n',
            [("FAL002", 3, "warning")],
        ),
        # a pinned wheel with an unpinned fallback: the fallback runs exactly when the wheel failed
        (
            "pip install https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
            "flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl "
            "|| pip install flash-attn --no-build-isolation\n",
            [("FAL002", 1, "warning")],
        ),
        # an install in a branch never satisfies a later one for sure
        (
            'if [ -n "$OLD" ]; then pip install flash-attn==2.4.2; fi\npip install flash-attn\n',
            [("FAL001", 1, "error"), ("FAL002", 2, "warning")],
        ),
        # alternatives are judged one by one, never intersected (2.6.3 or 2.5.8: both good)
        ("pip install flash-attn==2.6.3 || pip install flash-attn==2.5.8\n", []),
        ("pip install 'flash-attn>=2.6' || pip install 'flash-attn<2.5'\n", [("FAL001", 1, "error")]),
    ],
)
def test_what_the_script_leaves(project: Any, script: str, expected: list[tuple[str, int, str]]) -> None:
    project({"install.sh": script})
    assert findings() == expected


def test_uninstall_in_a_dockerfile_stage(project: Any) -> None:
    project(
        {
            "Dockerfile": (
                "FROM nvcr.io/nvidia/pytorch:24.05-py3\n"
                "RUN pip install flash-attn==2.6.3\n"
                "RUN pip uninstall -y flash-attn && pip install flash-attn\n"
            )
        }
    )
    # FAL023: NGC 24.05 has no row in the knowledge base, said as not known
    assert findings() == [("FAL002", 3, "warning"), ("FAL023", 3, "info")]


# --- source builds --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "code", "needle"),
    [
        (f"git clone --branch v2.3.3 {REPO}\ncd flash-attention\npip install .\n", "FAL001", "v2.3.3"),
        (
            f"git clone -b v2.6.3 {REPO} /opt/fa && cd /opt/fa && pip install -e . --no-build-isolation\n",
            None,
            "",
        ),
        (
            f"git clone {REPO} src\ncd src\ngit checkout v2.3.3\nMAX_JOBS=4 python setup.py install\n",
            "FAL001",
            "v2.3.3",
        ),
        (
            f"git clone {REPO}\ngit -C flash-attention checkout tags/v2.4.2\npip install ./flash-attention\n",
            "FAL001",
            "tags/v2.4.2",
        ),
        (
            f"git clone {REPO} fa && cd fa && git fetch --depth 1 origin v2.3.3 && git checkout FETCH_HEAD\n"
            "python setup.py develop\n",
            "FAL001",
            "FETCH_HEAD",
        ),
        (
            f"git clone {REPO}\ncd flash-attention\npython setup.py install\n",
            "FAL009",
            "python setup.py install",
        ),
        (f"git clone -b main {REPO}\ncd flash-attention && pip install .\n", "FAL009", "main"),
        (
            f"git clone {REPO}\ncd flash-attention && git checkout 1a2b3c4d\npip install .\n",
            "FAL009",
            "1a2b3c4d",
        ),
    ],
)
def test_source_builds(project: Any, script: str, code: str | None, needle: str) -> None:
    project({"build.sh": script})
    found = run("--format", "json", *QUIET).json["findings"]
    if code is None:
        assert found == []
        return
    (f,) = found
    line = next(i for i, text in enumerate(script.splitlines(), 1) if needle in text)
    assert (f["code"], f["line"], f["column"]) == (code, *located(script, line, needle))
    if code == "FAL009":
        assert any("flash-attention" in note for note in f["notes"])


def test_a_build_without_a_release_says_why(project: Any) -> None:
    project(
        {
            "a.sh": f"git clone {REPO}\ncd flash-attention && pip install .\n",
            "b.sh": f"git clone -b main {REPO}\npip install ./flash-attention\n",
        }
    )
    a, b = run("--format", "json", *QUIET).json["findings"]
    assert (
        a["message"]
        == b["message"]
        == ("cannot tell which flash-attn this source build installs; check out a release tag")
    )
    assert f"it builds {REPO} on its default branch" in a["notes"]
    assert f"it builds {REPO} at 'main', a branch or a tag that names no release" in b["notes"]


@pytest.mark.parametrize(
    ("folder", "name"),
    [("hopper", "flash-attn-3"), ("flash_attn/cute", "flash-attn-4"), ("csrc/layer_norm", None)],
)
def test_other_folders_of_the_checkout_build_other_packages(
    folder: str, name: str | None, tmp_path: Path
) -> None:
    script = f"git clone -b v2.3.3 {REPO}\ncd flash-attention/{folder} && python setup.py install\n"
    records = reqs(parse("shell", tmp_path / "x.sh", script), None)
    assert [r.name for r in records] == ([name] if name else [])
    assert not reqs(records)  # never the flash-attn 2.3.3 release


def test_source_build_through_workdir(project: Any) -> None:
    project(
        {
            "Dockerfile": (
                "FROM nvcr.io/nvidia/pytorch:24.05-py3\n"
                f"RUN git clone {REPO} /workspace/fa\n"
                "WORKDIR /workspace/fa\n"
                "RUN git checkout v2.4.2\n"
                "RUN cd hopper && python setup.py install\n"  # FA3: another package
                "RUN pip install --no-build-isolation .\n"  # cd died with its RUN: this is the root
            )
        }
    )
    found = run("--format", "json", *QUIET).json["findings"]
    # the hopper/ build is flash-attn-3's: FAL022 (info) judges it on its own facts
    assert [(f["code"], f["line"], f["column"]) for f in found] == [("FAL001", 4, 18), ("FAL022", 4, 18)]


# --- two-step installs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("pip wheel flash-attn==2.4.2 --no-deps -w /wheels\npip install /wheels/*.whl\n", [("FAL001", 1)]),
        ("pip wheel --wheel-dir=dist flash-attn==2.6.3\npip install dist/flash_attn-*.whl\n", []),
        (
            "pip download flash-attn==2.3.3 --no-deps -d /tmp/fa\n"
            "pip install --no-index --find-links /tmp/fa flash-attn\n",  # only 2.3.3 can install
            [("FAL001", 1)],
        ),
        (
            "pip download --dest /w flash-attn==2.6.3\npip install --no-index -f /w flash-attn\n",
            [],  # the unpinned 'flash-attn' gets the 2.6.3 wheel and nothing else
        ),
        (
            f"git clone -b v2.3.3 {REPO}\ncd flash-attention\npython setup.py bdist_wheel\n"
            "pip install dist/*.whl\n",
            [("FAL001", 1)],
        ),
    ],
)
def test_two_step_installs(project: Any, script: str, expected: list[tuple[str, int]]) -> None:
    project({"install.sh": script})
    assert [(c, line) for c, line, _ in findings()] == expected


def test_a_wheel_taken_is_judged_at_the_install_step(tmp_path: Path) -> None:
    script = "pip wheel flash-attn==2.4.2 -w /w\npip install flash-attn==2.6.3\npip install /w/*.whl\n"
    rs = reqs(parse("shell", tmp_path / "x.sh", script))
    assert [(r.location.line, r.step) for r in rs] == [(2, 2), (1, 3)]  # located at the pin, in install order


def test_wheels_copied_from_a_build_stage(project: Any) -> None:
    project(
        {
            "Dockerfile": (
                "FROM nvcr.io/nvidia/pytorch:24.05-py3 AS build\n"
                "RUN pip wheel --no-deps flash-attn==2.4.2 -w /wheels\n"
                "FROM nvcr.io/nvidia/pytorch:24.05-py3\n"
                "COPY --from=build /wheels /tmp/wheels\n"
                "RUN pip install /tmp/wheels/*.whl && rm -rf /tmp/wheels\n"
            )
        }
    )
    found = run("--format", "json", *QUIET).json["findings"]
    assert [(f["code"], f["line"], f["environment"]) for f in found] == [
        ("FAL001", 2, "Dockerfile [stage:1]"),
        ("FAL023", 2, "Dockerfile [stage:1]"),  # NGC 24.05 has no row: info, not known
    ]


# --- real-world cases (tests/data/realworld/shell/README.md says where each comes from) ---------------

REALWORLD = Path(__file__).parent / "data" / "realworld" / "shell"


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("djl-serving-v1", [("FAL001", 1, "error")]),
        ("djl-serving-v2", [("FAL001", 1, "error")]),
        ("tgi-flash-att", [("FAL009", 7, "info")]),
        ("tgi-flash-att-v2", []),
        ("stripedhyena", [("FAL009", 6, "info")]),
        ("llm-jp-fa3", []),
        ("llm-jp-ft", [("FAL009", 3, "info")]),
        ("emnafold", [("FAL001", 3, "error")]),
        ("miles-wheels", [("FAL022", 8, "info")]),  # the hopper/ build at a commit: FA3, info
        ("espnet", [("FAL002", 2, "warning"), ("FAL002", 5, "warning")]),
        ("test-attn", [("FAL009", 4, "info"), ("FAL022", 4, "info")]),
        ("lmflow", [("FAL001", 3, "error")]),
        ("yuan-image-clone", [("FAL009", 2, "info")]),
        ("yuan-image-csrc", [("FAL002", 2, "warning"), ("FAL023", 2, "info")]),  # NGC 22.12: no row
        ("vllm-docker", []),
        ("aa-va-phi", []),
    ],
)
def test_realworld(case: str, expected: list[tuple[str, int, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    folder = REALWORLD / case
    monkeypatch.chdir(folder)
    (name,) = [p.name for p in folder.iterdir()]
    assert findings(name) == expected


def test_the_grammar_loads_only_when_a_script_is_checked(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("flash-attn==2.6.3\n")
    (tmp_path / "x.sh").write_text("pip install flash-attn==2.6.3\n")
    code = (
        "import sys; from fa_lint import engine; engine.check(['requirements.txt']); "
        "print('tree_sitter' in sys.modules); engine.check(['x.sh']); print('tree_sitter' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "True"]


def test_a_word_the_grammar_splits_is_one_word(project: Any) -> None:
    # tree-sitter-bash ends the concatenation of x-$PY-$PY-y at the second `$`: still one shell word.
    url = (
        "https://github.com/Dao-AILab/flash-attention/releases/download/v2.3.3/"
        "flash_attn-2.3.3+cu122torch2.1cxx11abiFALSE-$PY-$PY-linux_x86_64.whl"
    )
    project({"install.sh": f'PY="cp311"\n\npip install {url}  --no-build-isolation\n'})
    (f,) = run("--format", "json", *QUIET).json["findings"]
    assert (f["code"], f["line"], f["column"], f["end_column"]) == ("FAL001", 3, 13, 13 + len(url))


def test_an_escaped_comparison_in_a_test_keeps_the_lines_after_it(project: Any) -> None:
    # `[ "$v" \< "3.0.0" ]` is a string comparison the grammar does not know; the lines after it
    # must still be read as the if's body, and what follows the if as certain.
    script = (
        "for v in 2.4.2 4.0.0b11\ndo\n"
        '  if [ "${v}" \\< "3.0.0" ]\n  then\n    pip3 install flash-attn==${v}\n  fi\ndone\n'
        "pip install flash-attn==2.6.3\n"
    )
    records = reqs(parse("shell", "x.sh", script))
    assert [(r.location.line, r.possible) for r in records] == [(5, True), (8, False)]
    assert [str(a) for a in records[0].alternatives] == ["==2.4.2", "==4.0.0b11"]


@pytest.mark.parametrize(
    "broken", ["if then fi", "[[ a =~ ( ]]", "foo() { ", 'echo "${x/"/}"'], ids=["if", "regex", "fn", "subst"]
)
def test_lines_after_what_the_grammar_cannot_read_are_read_as_possible(broken: str) -> None:
    records = reqs(parse("shell", "x.sh", f"{broken}\npip install flash-attn==2.4.2\nls\n"))
    assert [(r.location.line, str(r.specifier)) for r in records] == [(2, "==2.4.2")]


def test_holds_any_asks_for_the_names_not_every_variable_of_a_scope() -> None:
    # a stage with thousands of ARG/ENV values asks this at every install command: walking the
    # scope's variables each time made long Dockerfiles quadratic (benchmarks/scaling_shell.py)
    from fa_lint.shell.variables import Scope

    class Counted(dict[str, tuple[str | None, ...]]):
        walked = 0

        def __iter__(self):  # type: ignore[no-untyped-def]
            Counted.walked += 1
            return super().__iter__()

    outer = Scope()
    outer.local = Counted({f"V{i}": ("x",) for i in range(10_000)})
    inner = outer.child()
    inner.set("PIP_PRE", ("1",))
    assert inner.holds_any(frozenset({"PIP_PRE"})) and not outer.holds_any(frozenset({"PIP_PRE", "UV_INDEX"}))
    assert outer.holds_any(frozenset({"V9999"})) and Counted.walked == 0
