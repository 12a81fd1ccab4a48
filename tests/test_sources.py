"""Every parser on fixture files written for it: what it finds, and exactly where."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import pytest

from fa_lint.model import Kind, NotRun, Parsed, ParseProblem
from fa_lint.syntax.text import TextIndex
from tests.conftest import DATA, SHARED, includes, parse, problems, reqs, span


def table(source: str, path: Path, name: str | None = "flash-attn") -> list[tuple[object, ...]]:
    return [(*span(r), r.constraint_text, r.kind.value, r.scope) for r in reqs(parse(source, path), name)]


def test_requirements_file() -> None:
    records = parse("requirements", DATA / "requirements/requirements.txt")
    assert table("requirements", DATA / "requirements/requirements.txt") == [
        (5, 1, 5, 18, "==2.4.2", "install", ""),  # Flash_Attn, hash on the continuation line
        (7, 1, 7, 42, ">=2.0", "install", ""),  # flash.attn, with a marker
        (8, 4, 8, 78, "==2.3.6", "install", ""),  # -e git+...@v2.3.6#egg=flash-attn
        (9, 1, 9, 145, "==2.5.8+cu122torch2.3cxx11abifalse", "install", ""),  # bare wheel URL, %2B
        (10, 1, 10, 26, "any", "install", ""),  # ${FA_VERSION}: unresolved, not an error
        (13, 3, 13, 24, "==2.5.0", "install", ""),
        (14, 1, 14, 56, "==2.6.3", "install", ""),  # VCS URL without egg, from the repo name
    ]
    rs = reqs(records)
    assert rs[4].unresolved == "${FA_VERSION}"
    assert rs[1].marker == 'python_version < "3.12"'
    assert rs[3].url is not None and rs[3].url.endswith("linux_x86_64.whl")
    other = {r.name for r in reqs(records, None)} - {"flash-attn"}
    assert other == {"flash-attn-3", "vllm-flash-attn"}  # other distributions, never flash-attn
    assert [(i.target, i.constraint, span(i)[0]) for i in includes(records)] == [
        ("base-requirements.txt", False, 3),
        ("constraints.txt", True, 4),
    ]
    (bad,) = problems(records)
    assert span(bad)[0] == 15 and "this is (( bad" in bad.message


def test_pyproject_tables() -> None:
    got = table("pyproject", DATA / "pyproject/pyproject.toml")
    assert got == [
        (8, 4, 8, 47, ">=2.0", "install", "project"),
        (9, 6, 9, 20, "<2.5", "install", "project"),  # triple-quoted string
        (13, 11, 13, 94, "==2.5.8+cu12", "install", "extra:gpu"),
        (16, 35, 16, 52, "~=2.4.0", "install", "group:dev"),  # after an include-group table
        (2, 28, 2, 45, "==2.4.2", "install", "build-system"),
        (22, 22, 22, 39, "==2.5.6", "install", "group:dev"),  # [tool.uv] dev-dependencies
        (20, 29, 20, 43, "<2.6", "constraint", "uv:constraints"),
        (21, 27, 21, 44, "==2.3.6", "override", "uv:overrides"),
        (25, 1, 25, 86, "==2.4.2", "source", "uv:sources"),  # git tag v2.4.2
        (28, 10, 28, 27, "==2.2.0", "install", "group:lint"),  # PDM
        (32, 1, 32, 20, ">=2.4,<3", "install", "project"),  # Poetry ^2.4
        (33, 1, 33, 88, ">=2.4,<2.5", "install", "project"),  # Poetry ~2.4 in a table
        (37, 5, 37, 44, "==2.3.3", "install", "group:gpu"),  # multiple constraints, first
        (38, 5, 38, 101, "==2.6.3", "source", "group:gpu"),  # ... second, a wheel URL
        (40, 1, 40, 92, "==2.1.1", "source", "group:gpu"),  # "flash.attn" git tag
    ]


def test_dockerfile() -> None:
    records = parse("dockerfile", DATA / "dockerfile/Dockerfile")
    rs = reqs(records)
    assert [(*span(r), r.constraint_text, r.scope, r.raw) for r in rs] == [
        (9, 17, 9, 38, "==2.3.6", "stage:build", "flash-attn==${FA_VER}"),  # ARG default
        (11, 19, 11, 39, "==2.4.2", "stage:build", "flash-attn==$FA_VER2"),  # legacy ENV, past a comment line
        (11, 42, 11, 58, ">=2.5.8", "stage:build", "flash-attn>=${B}"),  # ENV with several pairs
        (12, 85, 12, 102, "==2.2.0", "stage:build", "flash_attn==2.2.0"),  # RUN --mount, python3 -m pip
        (13, 53, 13, 70, "==2.5.0", "stage:build", "flash-attn==2.5.0"),  # uv pip after ;
        (14, 25, 14, 42, "==2.1.1", "stage:build", "flash-attn==2.1.1"),  # exec form
        (17, 13, 17, 30, "==2.0.4", "stage:build", "flash-attn==2.0.4"),  # RUN <<EOF heredoc body
        (22, 37, 22, 53, "==2.4.2.*", "stage:1", "flash-attn=2.4.2"),  # conda install
        (23, 28, 23, 42, "==2.5.6", "stage:1", "flash-attn==$V"),  # shell variable in the RUN
        (24, 17, 24, 39, "any", "stage:1", "flash-attn==$UNSET_VAR"),
    ]
    # unquoted <2.5 reads a file named 2.5: the install never runs, and is kept only to say so
    (unrun,) = [r for r in records if isinstance(r, NotRun)]
    assert (span(unrun.requirement), unrun.requirement.redirected) == ((21, 17, 21, 27), "<2.5")
    assert rs[9].unresolved == "$UNSET_VAR"
    assert [r.name for r in reqs(records, "torch")] == ["torch"]  # conda's pytorch is torch
    # -r inside the image maps back through COPY reqs/ ./reqs/ and WORKDIR /src
    assert [(i.target, i.constraint, i.optional) for i in includes(records)] == [
        ("reqs/gpu.txt", False, True),
        ("reqs/c.txt", True, True),
    ]
    assert not problems(records)  # the cat <<EOT body is data, not commands


def test_dockerfile_unterminated_heredoc(tmp_path: Path) -> None:
    text = "FROM python:3.11\nRUN <<EOF\npip install flash-attn==2.4.2\n"
    records = parse("dockerfile", tmp_path / "Dockerfile", text)
    (p,) = problems(records)
    assert span(p)[:2] == (2, 5)
    assert "never closed" in p.message


def test_shell_script() -> None:
    records = parse("shell", DATA / "shell/install.sh")
    rs = reqs(records)
    assert [(*span(r), r.constraint_text) for r in rs] == [
        (6, 14, 6, 39, "==2.4.2"),  # quoted, ${FA_VERSION} from an assignment above
        (7, 28, 7, 38, "any"),  # flash_attn>=2.5 unquoted: redirect
        (8, 62, 8, 79, "==2.3.0"),  # inside if ...; then sudo -H pip install
        (13, 30, 13, 172, "==2.6.3+cu123torch2.4cxx11abifalse"),  # python3.11 -m pip, wheel URL
        (16, 13, 16, 43, "any"),  # $(cat version.txt)
    ]
    assert rs[1].redirected == ">=2.5"
    assert rs[4].unresolved == "$(cat version.txt)"
    assert [r.constraint_text for r in reqs(records, "torch")] == ["==2.3.0"]  # export TORCH=2.3.0


def test_workflow_run_steps() -> None:
    rs = reqs(parse("workflow", DATA / "workflow/.github/workflows/ci.yml"))
    assert [(*span(r), r.constraint_text, r.unresolved) for r in rs] == [
        (11, 26, 11, 41, "==2.4.2", None),  # $FA from the workflow's env
        (15, 24, 15, 39, ">=2.0", None),  # block scalar, continued line
        (17, 26, 17, 54, "any", "${{ matrix.fa }}"),
        (19, 23, 19, 40, "==2.1.0", None),  # folded scalar
    ]


def test_conda_environment() -> None:
    records = parse("conda", DATA / "conda/environment.yml")
    assert [(*span(r), r.constraint_text, r.scope) for r in reqs(records)] == [
        (5, 5, 5, 38, ">=2.4,<2.5", "conda"),  # channel::name
        (6, 6, 6, 30, "==2.5.6", "conda"),  # "name version build", quoted
        (9, 8, 9, 25, "==2.3.3", "pip"),
        (13, 7, 13, 75, "==2.5.0", "pip"),  # git tag
    ]
    assert [r.constraint_text for r in reqs(records, "torch")] == ["==2.3.1"]
    assert [(i.target, span(i)[0]) for i in includes(records)] == [("requirements-gpu.txt", 10)]


def test_setup_cfg() -> None:
    records = parse("setup.cfg", DATA / "setup_cfg/setup.cfg")
    assert [(*span(r), r.constraint_text, r.scope) for r in reqs(records)] == [
        (8, 5, 8, 22, "==2.4.2", "project"),  # inline comment stripped; the commented line skipped
        (10, 18, 10, 33, ">=2.5", "build-system"),
        (15, 5, 15, 45, ">=2.0", "extra:gpu"),
    ]
    assert [i.target for i in includes(records)] == ["requirements-test.txt"]
    assert not problems(records)  # "100%" is no interpolation error


def test_setup_py_never_runs_and_follows_names() -> None:
    rs = reqs(parse("setup.py", DATA / "setup_py/setup.py"))
    assert sorted((*span(r), r.constraint_text, r.scope) for r in rs) == [
        (5, 9, 5, 26, "==2.4.2", "extra:gpu"),  # GPU = [...] through extras = {"gpu": GPU}
        (7, 20, 7, 35, ">=2.6", "extra:fast"),  # extras["fast"] = [...]
        (9, 14, 9, 28, "<2.5", "project"),  # BASE.append(...)
        (12, 19, 12, 44, ">=2.0.6,<=2.5.8", "project"),  # pinned string in a helper's list
        (20, 10, 20, 27, "==2.3.3", "build-system"),
        (21, 13, 21, 30, "~=2.5.0", "build-system"),  # r"""...""" literal
    ]  # packages=["flash_attn"] and print("flash-attn ...") are not requirements


def test_setup_py_syntax_error_is_located(tmp_path: Path) -> None:
    (p,) = parse("setup.py", tmp_path / "setup.py", "from setuptools import setup\nsetup(name='x'\n")
    assert "syntax error" in p.message  # type: ignore[union-attr]


def test_pipfile_and_lock() -> None:
    assert table("pipfile", DATA / "pipfile/Pipfile") == [
        (5, 1, 5, 23, "==2.4.2", "install", "packages"),
        (6, 1, 6, 19, "any", "install", "packages"),
        (10, 1, 10, 88, "==2.3.6", "source", "dev-packages"),  # git ref v2.3.6
    ]
    lock = reqs(parse("pipfile.lock", DATA / "pipfile/Pipfile.lock"))
    assert [(*span(r), r.constraint_text, r.kind, r.tool) for r in lock] == [
        (4, 9, 4, 21, "==2.4.2", Kind.LOCK, "pipenv"),
        (12, 9, 12, 21, "==2.5.0", Kind.LOCK, "pipenv"),
    ]


@pytest.mark.parametrize(
    ("source", "name", "expected"),
    [
        (
            "uv.lock",
            "uv.lock",
            [
                (6, 1, "==2.4.2", "lock; python_version < '3.12'"),
                (12, 1, "==2.6.3", "lock; python_version >= '3.12'"),
                (18, 1, "==2.3.6", "lock"),
            ],
        ),
        (
            "pylock",
            "pylock.toml",
            [(5, 1, "==2.4.2", "lock"), (10, 1, "==2.5.0", "lock"), (14, 1, "==2.3.6+cu12", "lock")],
        ),
        ("pdm.lock", "pdm.lock", [(5, 1, "==2.2.0", "lock")]),
    ],
)
def test_lockfiles(source: str, name: str, expected: list[tuple[object, ...]]) -> None:
    rs = reqs(parse(source, DATA / "locks" / name))
    assert [(*span(r)[:2], r.constraint_text, r.scope) for r in rs] == expected
    assert all(r.kind is Kind.LOCK for r in rs)


def test_poetry_lock(tmp_path: Path) -> None:
    text = (
        '[[package]]\nname = "torch"\nversion = "2.3.0"\n\n'
        '[[package]]\nname = "flash-attn"\nversion = "2.4.2"\noptional = true\n\n'
        '[metadata.files]\nflash-attn = [\n    {file = "flash_attn-2.4.2.tar.gz", hash = "sha256:0"},\n]\n'
    )
    (r,) = reqs(parse("poetry.lock", tmp_path / "poetry.lock", text))
    assert (span(r)[:2], r.constraint_text, r.tool) == ((6, 1), "==2.4.2", "poetry")


def test_pylock_validation_error(tmp_path: Path) -> None:
    text = 'lock-version = "1.0"\n[[packages]]\nname = "flash-attn"\n'  # no created-by
    (p,) = problems(parse("pylock", tmp_path / "pylock.toml", text))
    assert "created-by" in p.message


@pytest.mark.parametrize(
    ("source", "name", "text", "where"),
    [
        ("pyproject", "pyproject.toml", "[project]\ndependencies = [\n  'flash-attn',\n", (4, 1)),
        ("uv.lock", "uv.lock", "[[package]]\nname = 'flash-attn'\nversion = \n", (3, 11)),
        ("pipfile.lock", "Pipfile.lock", '{\n  "default": {\n    "flash-attn": \n', (4, 1)),
        ("conda", "environment.yml", "dependencies:\n  - flash-attn\n - pip\n", (3, 2)),
    ],
)
def test_malformed_files_are_located_problems(
    source: str, name: str, text: str, where: tuple[int, int], tmp_path: Path
) -> None:
    records = parse(source, tmp_path / name, text)
    (p,) = problems(records)
    assert span(p)[:2] == where
    assert p.message.startswith(("invalid TOML", "invalid JSON", "invalid YAML"))


def test_requirements_options_never_leak_between_lines() -> None:
    # The option parser is built once; append options (--hash) must still start empty on every line.
    from fa_lint.sources.requirements import _items

    text = "a==1 --hash=sha256:aa --hash=sha256:bb\nb==2 --hash=sha256:cc\nc==3\n"
    hashes = [item.hash_options for item in _items(text)]
    assert hashes == [["sha256:aa", "sha256:bb"], ["sha256:cc"], []]


@pytest.mark.parametrize(
    ("source", "name", "text"),
    [
        ("shell", "install.sh", 'pip install "flash-attn==2.4.2'),
        ("shell", "install.sh", "pip install 'flash-attn==2.4.2"),
        ("shell", "install.sh", "pip install flash-attn==2.4.2\\"),
        ("dockerfile", "Dockerfile", 'FROM python:3.11\nRUN pip install "flash-attn==2.4.2'),
        (
            "workflow",
            ".github/workflows/ci.yml",
            "on: push\njobs:\n  t:\n    steps:\n      - run: pip install 'flash-attn==2.4.2\n",
        ),
    ],
)
def test_unclosed_quote_or_backslash_at_the_end(source: str, name: str, text: str, tmp_path: Path) -> None:
    # The shell would refuse the script; fa-lint still reads the requirement and never crashes.
    (path := tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (r,) = reqs(parse(source, path, text))
    assert r.constraint_text == "==2.4.2"
    line = text.splitlines()[r.location.line - 1]
    assert line[r.location.column - 1 :].lstrip("'\"").startswith("flash-attn==2.4.2")


def test_setup_py_keeps_pythons_own_warnings_quiet(tmp_path: Path) -> None:
    # '\d' in a plain string: SyntaxWarning on 3.12+, DeprecationWarning before; neither is the user's output.
    text = 'import re\nV = re.compile("\\d+")\nfrom setuptools import setup\nsetup(install_requires=["flash-attn"])\n'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (r,) = reqs(parse("setup.py", tmp_path / "setup.py", text))
    assert r.location.line == 4
    assert [str(w.message) for w in caught] == []


def test_unusable_url_is_a_located_problem(tmp_path: Path) -> None:
    # urlsplit raises on an unclosed IPv6 host; pip cannot use the URL, and fa-lint says so instead of crashing.
    text = '[project]\ndependencies = ["flash-attn @ https://[::1/flash_attn-2.4.2-py3-none-any.whl"]\n'
    (p,) = problems(parse("pyproject", tmp_path / "pyproject.toml", text))
    assert span(p)[:2] == (2, 18)
    assert p.message.startswith("invalid URL") and "Invalid IPv6 URL" in p.message
    # A shell word pip cannot use is one of the many words fa-lint does not judge, as before.
    assert (
        parse("shell", tmp_path / "x.sh", "pip install https://[x/flash_attn-2.4.2-py3-none-any.whl\n") == []
    )


def test_lock_with_an_unusable_git_url_still_reports_the_pin(tmp_path: Path) -> None:
    text = (
        'version = 1\n[[package]]\nname = "flash-attn"\nversion = "2.4.2"\n'
        'source = { git = "https://[x/Dao-AILab/flash-attention?tag=v2.4.2#abc" }\n'
    )
    (r,) = reqs(parse("uv.lock", tmp_path / "uv.lock", text))
    assert (r.constraint_text, r.location.line) == ("==2.4.2", 3)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("uv add 'flash-attn==2.4.2' --optional gpu", "==2.4.2"),
        ("uv add --optional flash-attn flash-attn==2.4.2", "==2.4.2"),  # the extra is not a requirement
        ("conda run -n py311 pip install flash-attn==2.4.2", "==2.4.2"),
        ("micromamba run --cwd /src -p /opt/env python -m pip install flash-attn==2.4.2", "==2.4.2"),
        ("conda run --no-capture-output -n env uv pip install flash-attn==2.4.2", "==2.4.2"),
        ("conda run -n env python train.py flash-attn==2.4.2", None),  # runs a script, installs nothing
        ("uv run --with rich -p 3.11 pip install flash-attn==2.4.2", "==2.4.2"),
        ("uv run python -m pip install flash-attn==2.4.2", "==2.4.2"),
        ("poetry add -G gpu 'flash-attn@^2.0'", ">=2.0,<3"),  # Poetry's own constraint syntax
        ("poetry add flash-attn@latest", "any"),
        ("poetry add --source pypi flash-attn==2.4.2", "==2.4.2"),
        ("poetry add flash-attn@git+https://github.com/Dao-AILab/flash-attention@v2.4.2", "==2.4.2"),
        ("pdm add -G gpu 'flash-attn<2.5'", "<2.5"),
    ],
)
def test_install_command_spellings(line: str, expected: str | None, tmp_path: Path) -> None:
    found = [r.constraint_text for r in reqs(parse("shell", tmp_path / "x.sh", line + "\n"))]
    assert found == ([expected] if expected else [])


def _both_readings(text: str) -> tuple[list[Parsed] | None, list[Parsed]]:
    """A requirements file read line by line without pip-requirements-parser (None when some line
    needs it), and read by the library."""
    from fa_lint.sources import requirements

    index = TextIndex("requirements.txt", text)
    urls = requirements._plain_urls(text)
    plain = None if urls is None else list(requirements._read_plain(index, text, urls))
    return plain, list(requirements._pip(index, text))


PLAIN_LINES = [
    "flash-attn==2.6.3",
    "Flash_Attn >= 2.5 , < 3  # the first with block_table",
    "torch[cuda, dev] ~= 2.4.0 ; sys_platform == 'linux' and python_version >= \"3.10\"",
    "numpy (>=1.26,<2)",
    "zope.interface",
    "flash-attn===2.5.8",
    "flash-attn==2.5.*;python_version<'3.13'",
    "   # a comment only",
    "",
    "-r base.txt",
    "-c constraints.txt",
    "--requirement=dev.txt",
    "--constraint ../constraints.txt",
    "-r=other.txt",
    "--extra-index-url https://download.pytorch.org/whl/cu121",
    "-i https://pypi.org/simple",
    "--find-links=./wheels",
    "--trusted-host example.com",
    "--pre",
    "--no-index",
]
PIP_LINES = [
    "flash-attn==2.4.2 --hash=sha256:" + "0" * 64,
    "--require-hashes",
    "-e git+https://github.com/Dao-AILab/flash-attention@v2.5.0#egg=flash-attn",
    "flash-attn @ https://example.com/flash_attn-2.5.0-cp311-cp311-linux_x86_64.whl",
    "flash_attn-2.5.8-cp311-cp311-linux_x86_64.whl",
    "flash-attn === 2.5.whl",
    "./local/project",
    "flash-attn==${FA_VERSION}",
    "flash-attn>=2.5 \\\n    ; sys_platform == 'linux'",
    "--extra-index https://example.com/simple",  # optparse takes the abbreviation; the library knows
    "-rbase.txt",
    "--only-binary :all:",
    "flash-attn=2.4.2",  # not an operator: the library's message says so
    "flash-attn#2.4.2",
]


@pytest.mark.parametrize("line", PLAIN_LINES)
def test_plain_lines_are_read_as_the_library_reads_them(line: str) -> None:
    plain, pip = _both_readings(f"numpy==1.26.4\n{line}\nflash-attn>=2.5.0  # last\n")
    assert plain is not None
    assert plain == pip


@pytest.mark.parametrize("line", PIP_LINES)
def test_lines_in_pip_syntax_are_read_by_the_library(line: str) -> None:
    text = f"numpy==1.26.4\n{line}\n"
    plain, pip = _both_readings(text)
    # a line packaging refuses ("flash-attn=2.4.2") may look plain: the library reads that line alone
    assert plain is None or plain == pip
    assert list(parse("requirements", "requirements.txt", text)) == pip
    assert pip  # the library reads them, to records or located problems


def test_both_readings_agree_on_every_requirements_file() -> None:
    from fa_lint.files.discover import detect

    roots = [DATA, SHARED / "corpus" / "files"]
    files = [p for root in roots if root.is_dir() for p in sorted(root.rglob("*")) if p.is_file()]
    taken = 0
    for path in files:
        if detect(str(path)) != "requirements":
            continue
        plain, pip = _both_readings(path.read_text(encoding="utf-8", errors="replace"))
        if plain is not None:
            assert plain == pip, path
            taken += 1
    assert taken >= 5  # the plain reading does take real files


def test_both_readings_agree_on_random_lines() -> None:
    pieces = [
        *PLAIN_LINES,
        *PIP_LINES,
        "flash-attn [gpu]>=2.5",
        "flash-attn>=2.5[gpu]",
        "foo.tar.gz",
        "foo[x].zip",
        "foo ; ",
        "foo; extra == 'a;b'",
        "foo;python_version>'3' -x",
        "foo\t--hash=sha256:00",
        "-r",
        "-c  spaced.txt",
        "--index-url=",
        "torch==2.4.0+cu121",
        "transformers>=4.44,!=4.45.0",
        "a==1 # x # y",
        "#!comment",
        "  flash-attn==2.6.3  ",
    ]
    rng = random.Random(14)
    for _ in range(300):
        text = "\n".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) + rng.choice(["", "\n"])
        plain, pip = _both_readings(text)
        if plain is not None:
            assert plain == pip, text


def test_normalize_is_pep_503_as_packaging_computes_it() -> None:
    from packaging.utils import canonicalize_name

    from fa_lint.model import normalize

    rng = random.Random(503)
    names = ["Flash_Attn", "flash.attn", "FLASH--attn", "a_-._b", "", "-x-", "Ünïcode.Name"]
    names += ["".join(rng.choice("aZ9-_.") for _ in range(rng.randint(0, 10))) for _ in range(2000)]
    for name in names:
        assert normalize(name) == canonicalize_name(name), name


def _packaging_reading(text: str) -> tuple[object, ...] | None:
    """packaging's own reading of a PEP 508 string, down to each specifier's state; None if refused."""
    from packaging.requirements import InvalidRequirement, Requirement

    from fa_lint.model import normalize

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    return _state(
        normalize(req.name), req.specifier, req.url, str(req.marker) if req.marker else None, req.extras
    )


def _state(name: str, spec: object, url: object, marker: object, extras: object) -> tuple[object, ...]:
    from packaging.specifiers import SpecifierSet

    assert isinstance(spec, SpecifierSet)
    # as a set: packaging reorders a SpecifierSet's clauses in place on its first str/hash/==
    specs = frozenset((s.operator, s.version, s.prereleases) for s in spec)
    return name, specs, str(spec), spec.prereleases, url, marker, frozenset(extras)  # type: ignore[arg-type]


def _file_lines(roots: list[Path]) -> list[str]:
    """Every line of the requirements files under ``roots`` (those that exist), comments cut."""
    from fa_lint.files.discover import detect

    files = [p for root in roots if root.is_dir() for p in sorted(root.rglob("*")) if p.is_file()]
    texts = []
    for path in files:
        if detect(str(path)) == "requirements":
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            texts += [line.split(" #", 1)[0].strip() for line in lines]
    return texts


def _simple_texts() -> list[str]:
    """Requirement texts: every line of the tests' and the corpus's requirements files, the lines
    above, and random ones built from names, extras, operators and versions, valid or not."""

    texts = [*PLAIN_LINES, *PIP_LINES, *_file_lines([DATA, SHARED / "corpus" / "files"])]
    rng = random.Random(508)
    names = ["torch", "Flash_Attn", "a", "a.b-c", "x1", "pkg-5", "foo_", "-x", "a..b", "Ü"]
    extras = ["", "", "[gpu]", "[a,b]", "[ a ]", "[]", "[a_b,c.d]", "[a,]"]
    ops = ["==", "!=", "<=", ">=", "~=", "<", ">", "===", "=>", "=", ""]
    parts = [["1", "2.4", "10.0.2024", "0.0.28", "9" * 30], ["", "a1", "rc3", "alpha1"]]
    parts += [["", ".post1", "post2", "-1"], ["", ".dev0", "dev1"], ["", "+cu121", "+CU1", "+a.b", ".*"]]
    for _ in range(3000):
        clauses = [
            rng.choice(["", " "]) + rng.choice(ops) + rng.choice(["", " "]) + "".join(map(rng.choice, parts))
            for _ in range(rng.randint(0, 3))
        ]
        texts.append(rng.choice(names) + rng.choice(extras) + rng.choice(["", " "]) + ",".join(clauses))
    return texts


def test_simple_requirements_are_read_as_packaging_reads_them() -> None:
    from fa_lint.syntax import pep508

    taken: set[str] = set()
    for text in _simple_texts():
        mine = pep508._plain(text)
        if mine is not None:  # read without packaging's parser: exactly as that parser reads it
            assert _state(*mine) == _packaging_reading(text), text
            taken.add(text)
    # most requirements real files write are simple (counted from the tests' own files, which every
    # checkout has; the corpus in ../shared adds a thousand more lines where it is present)
    real = [t for t in _file_lines([DATA]) if t and not t.startswith(("#", "-"))]
    assert len(real) >= 50
    assert sum(t in taken for t in real) >= 0.75 * len(real)


BAD_ENTRIES = {
    "numpy": {"version": "==1.26.4"},
    "pkg-a": {"version": "==not a version"},
    "pkg-b": {"version": 3},
    "pkg-c": {"git": "https://github.com/x/y.git", "ref": 5},
    "pkg-d": {"file": "https://example.com/pkg_d-1.0-py3-none-any.whl"},
    "pkg-e": {"path": ["."]},
    "pkg-f": {"version": ">=1"},
    "pkg-g": [],
    "pkg-h": {"git": "https://github.com/x/h.git"},
    "flash-attn": {"version": "==2.4.2"},
    "pkg-i": {"version": "==1.0", "git": 1},
}


def test_entries_left_unbuilt_are_those_the_reader_drops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A format that leaves out the records fa_lint.files.read would drop reads to exactly the records it
    read before: every problem of an entry left out is still there, located."""
    import json

    from fa_lint.files.read import parse_file
    from fa_lint.rules import PACKAGES
    from fa_lint.sources import SOURCES

    found = [*DATA.rglob("Pipfile.lock"), *(SHARED / "corpus" / "files").rglob("Pipfile.lock")]
    texts = [p.read_text(encoding="utf-8") for p in found]
    rng = random.Random(7)
    for _ in range(40):
        entries = rng.sample(sorted(BAD_ENTRIES), rng.randint(1, len(BAD_ENTRIES)))
        doc = {
            "default": {k: BAD_ENTRIES[k] for k in entries},
            "develop": {k: BAD_ENTRIES[k] for k in entries[::-1]},
        }
        texts.append(json.dumps(doc, indent=4))
    long = "9" * 5000  # a version int() refuses: the whole file is one problem, however it is read
    for entry in ({"version": f"==1.{long}"}, {"file": f"https://example.com/pkg_k-1.{long}.tar.gz"}):
        texts.append(json.dumps({"default": {"numpy": BAD_ENTRIES["numpy"], "pkg-k": entry}}))
    path = str(tmp_path / "Pipfile.lock")
    problems = 0
    for text in texts:
        with monkeypatch.context() as m:
            # every record built, then dropped
            m.setitem(SOURCES, "pipfile.lock", SOURCES["pipfile.lock"]._replace(drops=False))
            whole = parse_file(path, "pipfile.lock", text.encode(), keep=PACKAGES).records
        assert parse_file(path, "pipfile.lock", text.encode(), keep=PACKAGES).records == whole, text
        problems += sum(isinstance(r, ParseProblem) for r in whole)
    assert problems > 40  # the entries left unbuilt had their problems found


def test_a_shared_specifier_set_iterates_the_same_whoever_printed_it_first() -> None:
    """Simple requirements share one SpecifierSet per clause text; printing one (which makes
    packaging sort its clauses in place) must not change what another requirement iterates."""
    from fa_lint.syntax import pep508

    first = pep508._plain("zz-one>=0.34.2,<1.1.0")
    assert first is not None
    before = [str(s) for s in first[1]]
    str(first[1])
    second = pep508._plain("zz-two>=0.34.2,<1.1.0")
    assert second is not None and second[1] is first[1]
    assert [str(s) for s in second[1]] == before == sorted(before)
