"""Files that run pip but were never found by walking: Makefiles, Justfiles, GitLab CI, Dockerfile-gpu.

Each is found by ``fa-lint .`` and by the pre-commit hook's ``files`` pattern (one catalogue), and read
as the program its tool runs: a GitLab job's script lines in one shell, each Makefile and Justfile recipe
line in its own, a Justfile's ``{{name}}`` as its assignment's value.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from fa_lint.files.discover import detect, pattern_regex
from tests.conftest import parse, reqs, run

OLD = "flash-attn==2.4.2"


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("Makefile", "makefile"),
        ("makefile", "makefile"),
        ("GNUmakefile", "makefile"),
        ("mk/rules.mk", "makefile"),
        ("Justfile", "justfile"),
        ("justfile", "justfile"),
        (".justfile", "justfile"),
        ("tasks/gpu.just", "justfile"),
        (".gitlab-ci.yml", "gitlab-ci"),
        ("ci/jobs.gitlab-ci.yml", "gitlab-ci"),
        (".gitlab/ci/gpu.yml", "gitlab-ci"),
        ("Dockerfile-gpu", "dockerfile"),
        ("docker/Dockerfile_cuda12", "dockerfile"),
        ("Containerfile-rocm", "dockerfile"),
    ],
)
def test_walking_and_the_hook_find_them(project: Any, name: str, fmt: str) -> None:
    assert detect(name) == fmt
    assert re.search(pattern_regex(), name), name  # pre-commit's files pattern
    body = {
        "makefile": f"install:\n\tpip install {OLD}\n",
        "justfile": f"install:\n    pip install {OLD}\n",
        "gitlab-ci": f"test:\n  script:\n    - pip install {OLD}\n",
        "dockerfile": f"FROM python:3.11\nRUN pip install {OLD}\n",
    }[fmt]
    project({name: body})
    r = run("--format", "json", "--isolated", "--select", "FAL001")
    assert r.codes() == [(name, 2 if fmt != "gitlab-ci" else 3, "FAL001")], r.out + r.err


def test_not_every_name_that_looks_alike() -> None:
    for name in (
        "Makefile.am",
        "justfile.md",
        "gitlab-ci.yml",
        "docs/.gitlab-ci.yml.md",
        "Dockerfiles/README",
    ):
        assert detect(name) is None, name


# --- GitLab CI ---------------------------------------------------------------------------------------

GITLAB = """\
variables:
  FA: "2.4.2"
  TORCH: {value: "2.4.0", description: the torch to test with}
default:
  before_script:
    - pip install torch==$TORCH
stages: [test]
include:
  - local: ci/more.yml
gpu:
  stage: test
  variables:
    FA: "2.6.3"
  script:
    - pip install --no-build-isolation flash-attn==$FA
    - - pip install "flash-attn>=2.0" --no-build-isolation
cpu:
  before_script: []
  script: |
    pip install flash-attn==$FA
  after_script:
    - pip install flash-attn==2.3.6
.template:
  script:
    - !reference [gpu, script]
    - pip install flash-attn==2.4.1
"""


def test_gitlab_jobs_scripts_and_variables(tmp_path: Any) -> None:
    records = parse("gitlab-ci", tmp_path / ".gitlab-ci.yml", GITLAB)
    found = [(r.location.line, r.constraint_text, r.scope) for r in reqs(records)]
    assert found == [
        (15, "==2.6.3", "job:gpu"),  # the job's variables over the file's
        (16, ">=2.0", "job:gpu"),  # a nested list is flattened, as GitLab does
        (20, "==2.4.2", "job:cpu"),
        (22, "==2.3.6", "job:cpu"),
        (26, "==2.4.1", "job:.template"),
    ]
    torches = [r for r in reqs(records, "torch")]
    assert [(r.location.line, r.scope) for r in torches] == [(6, "job:gpu"), (6, "job:.template")]


def test_gitlab_build_isolation_sees_the_default_before_script(project: Any) -> None:
    project({".gitlab-ci.yml": GITLAB})
    found = {(line, code) for _, line, code in run("--format", "json", "--isolated").codes()}
    assert (15, "FAL012") not in found  # torch from default: before_script, then --no-build-isolation
    assert (20, "FAL012") in found  # cpu's own (empty) before_script: no torch there


def test_an_invalid_gitlab_file_is_a_located_finding(project: Any) -> None:
    project({".gitlab-ci.yml": "test:\n  script: [pip install flash-attn\n"})
    r = run("--format", "json", "--isolated")
    assert r.codes() == [(".gitlab-ci.yml", 3, "FAL900")], r.out


# --- Justfiles ---------------------------------------------------------------------------------------

JUST = """\
FA := "2.4.2"
export TORCH := '2.4.0'
version := `cat VERSION`

# set up the GPU box
[linux]
install:
    pip install torch=={{ TORCH }}
    @pip install --no-build-isolation flash-attn=={{FA}}

gpu arch="sm90":
    #!/usr/bin/env bash
    set -euo pipefail
    export MAX_JOBS=4
    pip install "flash-attn==2.3.6" \\
      --no-build-isolation

from-param fa:
  -pip install flash-attn=={{ fa }}
"""


def test_justfile_recipes_and_interpolation(tmp_path: Any) -> None:
    records = parse("justfile", tmp_path / "justfile", JUST)
    found = [
        (r.location.line, r.location.column, r.raw, r.constraint_text, r.unresolved) for r in reqs(records)
    ]
    assert found == [
        (9, 39, "flash-attn=={{FA}}", "==2.4.2", None),
        (15, 18, "flash-attn==2.3.6", "==2.3.6", None),  # a #! recipe is one script: its lines continue
        (19, 16, "flash-attn=={{ fa }}", "any", "{{ fa }}"),  # a recipe's parameter: not known here
    ]
    (torch,) = reqs(records, "torch")
    assert (torch.location.line, torch.constraint_text) == (8, "==2.4.0")


def test_justfile_findings_and_no_fix_that_would_drop_the_variable(project: Any) -> None:
    project({"justfile": JUST})
    r = run("--format", "json", "--isolated", "--unsafe-fixes")
    by_line = {(f["line"], f["code"]): f for f in r.json["findings"]}
    assert "==2.4.2" in by_line[(9, "FAL001")]["message"]
    assert by_line[(9, "FAL001")]["fix"] is None  # a variable's value is never rewritten in place
    assert (19, "FAL009") in by_line and "{{ fa }}" in by_line[(19, "FAL009")]["message"]
    assert (9, "FAL012") not in by_line  # torch installed on the line before, same machine
