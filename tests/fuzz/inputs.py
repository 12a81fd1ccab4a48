"""Inputs for the fuzz suite: a file name and a generator for every format fa-lint reads.

Three kinds, each a hypothesis strategy of (file name, bytes): *documents* built from the format's own
vocabulary (requirement strings, options, commands, tables), serialized the way the format's tools
write them, so parsing gets past the first line; *mutations* of the real fixtures in tests/data, where
hostile pieces are spliced in at chosen places; and the same with Unicode noise and other encodings.
New formats in the catalogue are fuzzed with the generic line generator and their fixtures.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from fa_lint.files.discover import _fallback, detect
from fa_lint.sources import SOURCES
from tests.fuzz import code_inputs
from tests.fuzz.constructs import EXTRA

DATA = Path(__file__).resolve().parents[1] / "data"

# Pieces that open something a parser must see closed, change what a token means, break lines the
# way only some readers do, or try to escape the output.
HOSTILE = [
    '"',
    "'",
    "`",
    "\\",
    "\\\n",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    "$(",
    "${",
    "$((",
    "<<EOF\n",
    "<<-'X'\n",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "#",
    "# noqa",
    "# fa-lint: ignore[",
    ";",
    "&&",
    "||",
    "|",
    ">",
    ">>",
    "<",
    "=",
    "==",
    "@",
    ":",
    "::",
    ",",
    "-",
    "--",
    "-r ",
    "-c ",
    "-e ",
    "--hash=sha256:",
    "\u2028",
    "\u2029",
    "\x0c",
    "\x0b",
    "\x85",
    "\x1c",
    "\x1b[31m",
    "\x07",
    "\x00",
    "\ufeff",
    "\u202e",
    "\ud800",
    "\udcff",
    "##[error]x",
    "::error file=evil.py,line=1::x",
    "git+https://[x/",
    "https://[::1/a.whl",
    "\u00e9",
    "\u0663",
    "&a ",
    "*a",
    "<<: *a",
    "!!python/object:os.system",
    "%YAML 1.1\n",
    "---\n",
    "...\n",
    "[" * 50,
    "-r /etc/passwd\n",
    "-r ../../../etc/shadow\n",
    "-r .git/config\n",
    "x" * 300,
]
REQUIREMENTS = [
    "flash-attn",
    "flash_attn",
    "Flash.Attn",
    "flash-attn==2.4.2",
    "flash-attn>=2.5",
    "flash-attn<2.5",
    "flash-attn!=2.5.0",
    "flash-attn~=2.4",
    "flash-attn==2.5.*",
    "flash-attn===2.3.6",
    "flash-attn>=2.0,<2.5",
    "flash-attn==2.5.8+cu122torch2.3cxx11abiFALSE",
    "flash-attn[x]>=2.6; python_version < '3.13'",
    "flash-attn @ git+https://github.com/Dao-AILab/flash-attention@v2.5.0",
    "flash-attn @ git+https://github.com/Dao-AILab/flash-attention@v\u0663.3.6",
    "git+https://github.com/Dao-AILab/flash-attention.git@v2.3.6#egg=flash-attn",
    "https://github.com/Dao-AILab/flash-attention/releases/download/v2.3.2/"
    "flash_attn-2.3.2+cu122torch2.1cxx11abiFALSE-cp311-cp311-linux_x86_64.whl",
    "https://x/archive/refs/tags/v2.5.0.tar.gz",
    "flash-attn==${FA}",
    "flash-attn==$FA",
    "flash-attn>=2.5,<3",
    "torch==2.3.0",
    "torch>=2.1",
    "transformers==4.40.0",
    "transformers>=4.45",
    "einops",
    "ninja",
]
VERSIONS = ["2.4.2", "2.5.0", "2.6.3", ">=2.5", "^2.5", "~2.4", "*", "<2.5", "2.5.*", "", "x", "=2.4.2"]


def _fragments(text: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(st.one_of(text, st.sampled_from(HOSTILE), st.text(max_size=6)), max_size=24).map("".join)


_REQ = st.sampled_from(REQUIREMENTS)
_WORD = st.one_of(_REQ, st.sampled_from(VERSIONS), st.from_regex(r"[a-z][a-z0-9_.-]{0,8}", fullmatch=True))


# --- line formats ---------------------------------------------------------------------------------


def _lines(*starts: str) -> st.SearchStrategy[str]:
    """Lines that open with one of ``starts`` and go on with requirement words and hostile pieces."""
    line = st.tuples(
        st.sampled_from(starts), st.lists(st.one_of(_WORD, st.sampled_from(HOSTILE)), max_size=6)
    )
    return st.lists(line.map(lambda t: t[0] + " ".join(t[1])), max_size=12).map("\n".join)


LINE_FORMATS: dict[str, st.SearchStrategy[str]] = {
    "requirements": _lines("", "", "-r ", "-c ", "-e ", "--hash=sha256:ab ", "--index-url ", "# ", "  "),
    "setup.cfg": st.tuples(
        st.sampled_from(["[options]\n", "[options.extras_require]\n", "[metadata]\n"]),
        _lines("install_requires =\n    ", "    ", "gpu = ", "setup_requires = ", "tests_require = "),
    ).map("".join),
    "setup.py": st.tuples(
        _lines("# ", "import ", "X = ", "deps = ["),
        st.lists(_REQ.map(repr), max_size=5).map(", ".join),
        st.sampled_from(["])\n", "]\n", ")", "], extras_require={'gpu': deps})\n"]),
    ).map(lambda t: f"{t[0]}\nfrom setuptools import setup\nsetup(install_requires=[{t[1]}{t[2]}"),
    "dockerfile": _lines(
        "FROM python:3.11",
        "FROM pytorch/pytorch:2.3.0-cuda12.1-cudnn8-devel",
        "ARG FA=",
        "ENV FA=",
        "RUN pip install ",
        "RUN uv pip install ",
        "RUN <<EOF\n",
        "COPY . .",
        "RUN pip install -r ",
        "    ",
        # issue 33: exec-form shells, a SHELL, continuations with blanks after them, the escape
        # directive, constraint and override files named by variables
        'RUN ["bash", "-c", "pip install ',
        'RUN ["/bin/sh", "-o", "pipefail", "-lc", "',
        'SHELL ["/bin/bash", "-o", "pipefail", "-c"]',
        "RUN pip install \\  \t\n  ",
        "# escape=`\n",
        "RUN uv pip install --override /o.txt ",
        "ENV PIP_CONSTRAINT=/c.txt UV_OVERRIDE=",
    ),
    "shell": _lines(
        "pip install ",
        "python -m pip install -U ",
        "uv pip install ",
        "conda install ",
        "FA=",
        "export FA=",
        "if ",
        "then ",
        "fi",
        "for v in ",
        "cat <<EOF\n",
        "pip install -r ",
        "bash -o pipefail -c ",
        "UV_OVERRIDE=o.txt uv pip install ",
        "export PIP_CONSTRAINT=",
        "uv pip install --overrides=",
    ),
    "makefile": _lines(
        "FA := ",
        "install:\n\t",
        "\tpip install ",
        "\t@pip install -r ",
        "x = $(FA)",
        ".PHONY: ",
        # variables naming variables (issue 33): chains, cycles, doublings, each flavour
        "SPEC = flash-attn==$(FA)",
        "FA = $(V)$(V)",
        "V = $(FA)",
        "FA ?= ",
        "FA += ",
        "\tpip install $(SPEC) ",
    ),
    "justfile": _lines(
        "fa := ",
        'spec := "flash-attn==" + ',
        "v := fa + fa + ",
        "install:\n    pip install {{spec}} ",
        "    pip install ",
        "export fa := ",
    ),
    "gitlab-ci": _lines(
        "variables:\n  FA: ",
        "  SPEC: flash-attn==${FA}",
        "  A: $A$A",
        "job:\n  script:\n    - pip install $SPEC ",
        "    - pip install ",
        "  variables:\n    FA: ",
    ),
    "tox": st.tuples(
        st.sampled_from(["[tox]\nenvlist = py{310,311}-{cpu,gpu}\n", ""]),
        _lines(
            "[testenv]\ndeps =\n    ",
            "[testenv:gpu]\ndeps = ",
            "    gpu: ",
            "    !cpu: ",
            "    -r ",
            "    -c ",
            "    {[testenv]deps}",
            "commands = pip install ",
            "install_command = pip install -c ",
            "    ",
        ),
    ).map("".join),
    "nox": st.tuples(
        _lines("import nox\n", "FA = ", "@nox.session\n", "# "),
        st.lists(_REQ.map(repr), max_size=4).map(", ".join),
        st.sampled_from(["session.install(", "session.run('pip', 'install', ", "session.conda_install("]),
    ).map(lambda t: f"{t[0]}\n@nox.session\ndef s(session):\n    {t[2]}{t[1]})\n"),
    "python-version": _lines("3.11", "3.12.4", "cpython@3.10", "pypy3.10", "# ", "system"),
    # Modal apps (and a SageMaker or Ray call): an image chain, its steps and a function's GPU
    "python-app": st.tuples(
        st.sampled_from(
            ["import modal\n", "import modal as m\nfrom modal import Image\n", "import sagemaker, ray\n"]
        ),
        _lines("X = ", "image = image.pip_install(", "# ", "tag = f'{X}-devel'\n"),
        st.sampled_from(
            [
                "modal.Image.debian_slim()",
                "modal.Image.from_registry(f'nvidia/cuda:{tag}', add_python='3.11')",
                "Image.micromamba()",
                "image",
            ]
        ),
        st.lists(_REQ.map(repr), max_size=4).map(", ".join),
        st.sampled_from(
            [
                "pip_install",
                "uv_pip_install",
                "run_commands",
                "apt_install",
                "env",
                "pip_install_from_requirements",
            ]
        ),
        st.sampled_from(["'T4'", "['H100', 'T4']", "modal.gpu.A100(size='80GB')", "X", "f'{X}:2'", "None"]),
        st.sampled_from(
            ["", ", extra_options='--no-build-isolation'", ', extra_options="\'x"', ", env={'MAX_JOBS': 4}"]
        ),
    ).map(
        lambda t: (
            f"{t[0]}{t[1]}\nimage = {t[2]}.{t[4]}({t[3]}{t[6]})\napp = modal.App('a', image=image)\n"
            f"@app.function(image=image, gpu={t[5]}, instance_type={t[3] or 'None'}, accelerator_type={t[5]})\n"
            "def f(): ...\n"
        )
    ),
}
# What the code layer reads (fa_lint/code, issue 30): the paged path, attention implementations, Hub
# and local kernels, direct calls with their keywords, custom kernels and what substitutes them
_CODE_IMPORTS = [
    "from transformers import AutoModelForCausalLM, ContinuousBatchingConfig\n",
    "import flash_attn as fa\nfrom flash_attn import flash_attn_with_kvcache as kv\n",
    "from kernels import get_kernel, get_local_kernel, LayerRepository\nimport sys, argparse\n",
]
_CODE_LINES = [
    "m = AutoModelForCausalLM.from_pretrained('x', attn_implementation=",
    "m.generate_batch(",
    "m.generate(x, cache_implementation=",
    "ContinuousBatchingConfig(max_blocks_per_request=",
    "kv(q, k, v, block_table=",
    "fa.flash_attn_varlen_func(q, k, v, window_size=",
    "get_kernel(",
    "get_kernel('org/repo', revision=",
    "get_local_kernel(",
    "LayerRepository(repo_id=",
    "sys.modules['flash_attn'] = (",
    "setattr(fa, 'flash_attn_with_kvcache', ",
    "p.add_argument('--attn', default=",
    "m = AutoModelForCausalLM.from_pretrained('x', attn_implementation=args.attn, device_map=",
    "def flash_attn_with_kvcache(q, k_cache, v_cache, block_table=None, *a, ",
]
_CODE_VALUES = [
    "'flash_attention_2'",
    "'paged|flash_attention_3'",
    "'kernels-community/flash-attn3@v1:fn'",
    "'org/repo'",
    "'paged'",
    "0",
    "None",
    "True",
    "'cpu'",
    "X",
    "f'{X}'",
    "**kw",
    "'a' * 99",
]
_CODE = st.tuples(
    st.sampled_from(_CODE_IMPORTS),
    st.lists(st.tuples(st.sampled_from(_CODE_LINES), st.sampled_from(_CODE_VALUES + HOSTILE)), max_size=8),
).map(lambda t: t[0] + "X = 'flash_attention_3'\n" + "".join(f"{line}{value})\n" for line, value in t[1]))
LINE_FORMATS["python-app"] = st.one_of(LINE_FORMATS["python-app"], _CODE, code_inputs.python_app())
LINE_FORMATS["training-config"] = st.lists(
    st.tuples(
        st.sampled_from(
            ["attn_implementation:", "use_transformers_paged:", "  attn_implementation :", "model: "]
        ),
        st.sampled_from(
            ["flash_attention_3", "'org/repo@v1'", "true", "null", "{{ x }}", "[a, b]", *HOSTILE]
        ),
    ).map(lambda t: f"{t[0]} {t[1]}\n"),
    max_size=6,
).map(lambda lines: "attn_implementation: sdpa\n" + "".join(lines))
NAMES = {
    "makefile": "Makefile",
    "cluster": "sky.yaml",
    "python-app": "modal_app.py",
    "training-config": "grpo.yaml",
}


# --- structured formats: build the data, then write it as the format's tools do --------------------------

_SCALAR = st.one_of(
    _REQ,
    st.sampled_from(VERSIONS),
    st.sampled_from(HOSTILE),
    st.text(max_size=10),
    st.integers(-3, 10**12),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
)
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_WORD, inner, max_size=4)),
    max_leaves=10,
)


def _maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the right shape, sometimes any value at all (a TOML type the reader does not expect)."""
    return st.one_of(value, value, value, _VALUE)


_DEPENDENCY = st.one_of(
    st.sampled_from(VERSIONS),
    st.fixed_dictionaries(
        {},
        optional={
            "version": _maybe(st.sampled_from(VERSIONS)),
            "markers": _maybe(st.just("python_version < '3.12'")),
            "python": _maybe(st.just(">=3.9")),
            "git": _maybe(st.just("https://github.com/Dao-AILab/flash-attention")),
            "tag": _maybe(st.sampled_from(["v2.5.0", "v2.4.2", "v\u0663.3"])),
            "ref": _maybe(st.just("v2.6.3")),
            "url": _maybe(st.sampled_from(REQUIREMENTS[-14:-6])),
            "path": _maybe(st.just("./wheels/flash_attn-2.4.2-cp311-cp311-linux_x86_64.whl")),
            "extras": _maybe(st.just(["x"])),
        },
    ),
)
_DEPENDENCIES = st.dictionaries(
    st.sampled_from(["flash-attn", "flash_attn", "torch", "python", "x"]), _DEPENDENCY
)
_STRINGS = _maybe(st.lists(st.one_of(_REQ, _REQ, _SCALAR), max_size=5))
# what [tool.setuptools.dynamic] may name: a file, several, none there, out of the tree, a folder
_DYNAMIC_FILES = ["requirements.txt", ["a.txt", "b.txt"], [], "../x.txt", "/etc/passwd", ".", ["", "x" * 300]]

_PACKAGE = st.fixed_dictionaries(
    {"name": _maybe(st.sampled_from(["flash-attn", "flash_attn", "torch", "", "x"]))},
    optional={
        "version": _maybe(st.sampled_from(["2.4.2", "2.6.3", "2.5.8+cu122", "x", ""])),
        "source": _maybe(
            st.fixed_dictionaries(
                {},
                optional={
                    "git": _maybe(
                        st.sampled_from(
                            ["https://github.com/Dao-AILab/flash-attention?tag=v2.4.2#a", "https://[::1/x"]
                        )
                    ),
                    "url": _maybe(st.sampled_from(REQUIREMENTS[-14:-6])),
                    "type": _maybe(st.sampled_from(["git", "url", "file", "legacy"])),
                    "reference": _maybe(st.just("v2.4.2")),
                    "registry": _maybe(st.just("https://pypi.org/simple")),
                    "editable": _maybe(st.just(".")),
                },
            )
        ),
        "resolution-markers": _maybe(st.lists(st.just("python_version < '3.12'"), max_size=2)),
        "git": _maybe(st.just("https://github.com/Dao-AILab/flash-attention")),
        "ref": _maybe(st.just("v2.4.2")),
        "url": _maybe(st.sampled_from(REQUIREMENTS[-14:-6])),
        "vcs": _maybe(
            st.fixed_dictionaries({"url": st.just("https://x/y"), "requested-revision": st.just("v2.4.2")})
        ),
        "wheels": _maybe(
            st.lists(st.fixed_dictionaries({"name": st.sampled_from(REQUIREMENTS[-14:-6])}), max_size=2)
        ),
    },
)
_LOCK = st.fixed_dictionaries(
    {"package": _maybe(st.lists(_PACKAGE, max_size=4))}, optional={"version": _VALUE}
)

_PIXI_TABLES = st.fixed_dictionaries(
    {},
    optional={
        "dependencies": _maybe(_DEPENDENCIES),
        "pypi-dependencies": _maybe(_DEPENDENCIES),
        "target": _maybe(
            st.dictionaries(st.sampled_from(["linux-64", "osx-arm64"]), _DEPENDENCIES, max_size=1)
        ),
    },
)
_PIXI = st.builds(
    lambda tables, features, envs: {**tables, **({"feature": features} if features else {}), **envs},
    _PIXI_TABLES,
    _maybe(st.dictionaries(st.sampled_from(["gpu", "cpu"]), _PIXI_TABLES, max_size=2)),
    st.fixed_dictionaries(
        {},
        optional={
            "environments": _maybe(
                st.dictionaries(
                    st.sampled_from(["default", "gpu", "cuda"]),
                    _maybe(
                        st.one_of(
                            st.lists(st.sampled_from(["gpu", "cpu"]), max_size=2),
                            st.fixed_dictionaries(
                                {},
                                optional={
                                    "features": _maybe(st.lists(st.sampled_from(["gpu", "cpu"]))),
                                    "no-default-feature": _maybe(st.booleans()),
                                },
                            ),
                        )
                    ),
                    max_size=2,
                )
            )
        },
    ),
)
_YAML_LOCK = st.fixed_dictionaries(
    {
        "package": _maybe(
            st.lists(
                st.fixed_dictionaries(
                    {"name": _maybe(st.sampled_from(["flash-attn", "pytorch", "python", "x"]))},
                    optional={
                        "version": _maybe(st.sampled_from(["2.4.2", "2.6.3", "x", ""])),
                        "manager": _maybe(st.sampled_from(["conda", "pip"])),
                        "platform": _maybe(st.sampled_from(["linux-64", "osx-arm64"])),
                        "url": _maybe(st.sampled_from(REQUIREMENTS[-14:-6])),
                        "conda": _maybe(
                            st.just("https://conda.anaconda.org/x/flash-attn-2.6.3-py312h_0.conda")
                        ),
                        "pypi": _maybe(st.sampled_from(REQUIREMENTS[-14:-6])),
                    },
                ),
                max_size=4,
            )
        )
    },
)

STRUCTURED: dict[str, tuple[str, st.SearchStrategy[Any]]] = {
    "pixi": ("toml", _PIXI),
    "conda-lock": ("yaml", _YAML_LOCK),
    "pixi.lock": ("yaml", _YAML_LOCK.map(lambda d: {"version": 6, "packages": d.get("package")})),
    "pyproject": (
        "toml",
        st.fixed_dictionaries(
            {},
            optional={
                "project": _maybe(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "dependencies": _STRINGS,
                            "optional-dependencies": _maybe(st.dictionaries(_WORD, _STRINGS, max_size=2)),
                            "requires-python": _maybe(st.sampled_from([">=3.10", "^3.10", "x"])),
                            "dynamic": _maybe(
                                st.lists(st.sampled_from(["dependencies", "optional-dependencies", "x"]))
                            ),
                        },
                    )
                ),
                "dependency-groups": _maybe(
                    st.dictionaries(_WORD, _maybe(st.lists(st.one_of(_REQ, st.just({"include-group": "a"})))))
                ),
                "build-system": _maybe(st.fixed_dictionaries({"requires": _STRINGS})),
                "tool": _maybe(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            # issue 33: requirement files setuptools reads, PDM's overrides
                            "setuptools": _maybe(
                                st.fixed_dictionaries(
                                    {
                                        "dynamic": _maybe(
                                            st.fixed_dictionaries(
                                                {},
                                                optional={
                                                    "dependencies": _maybe(
                                                        st.fixed_dictionaries(
                                                            {"file": _maybe(st.sampled_from(_DYNAMIC_FILES))}
                                                        )
                                                    ),
                                                    "optional-dependencies": _maybe(
                                                        st.dictionaries(
                                                            _WORD,
                                                            st.fixed_dictionaries(
                                                                {
                                                                    "file": _maybe(
                                                                        st.sampled_from(_DYNAMIC_FILES)
                                                                    )
                                                                }
                                                            ),
                                                            max_size=2,
                                                        )
                                                    ),
                                                },
                                            )
                                        )
                                    }
                                )
                            ),
                            "pdm": _maybe(
                                st.fixed_dictionaries(
                                    {
                                        "resolution": _maybe(
                                            st.fixed_dictionaries(
                                                {"overrides": _maybe(st.dictionaries(_WORD, _maybe(_WORD)))}
                                            )
                                        )
                                    }
                                )
                            ),
                            "poetry": _maybe(
                                st.fixed_dictionaries(
                                    {},
                                    optional={
                                        "dependencies": _maybe(_DEPENDENCIES),
                                        "group": _maybe(
                                            st.dictionaries(
                                                _WORD, st.fixed_dictionaries({"dependencies": _DEPENDENCIES})
                                            )
                                        ),
                                    },
                                )
                            ),
                            "uv": _maybe(
                                st.fixed_dictionaries(
                                    {},
                                    optional={
                                        "sources": _maybe(_DEPENDENCIES),
                                        "constraint-dependencies": _STRINGS,
                                        "override-dependencies": _STRINGS,
                                        "no-build-isolation": _maybe(st.booleans()),
                                        "no-build-isolation-package": _STRINGS,
                                        "extra-build-dependencies": _maybe(
                                            st.dictionaries(
                                                st.sampled_from(["flash-attn", "x"]),
                                                _maybe(
                                                    st.lists(
                                                        st.one_of(
                                                            _REQ,
                                                            st.fixed_dictionaries(
                                                                {"requirement": _maybe(_REQ)},
                                                                optional={"match-runtime": _VALUE},
                                                            ),
                                                        ),
                                                        max_size=2,
                                                    )
                                                ),
                                                max_size=2,
                                            )
                                        ),
                                    },
                                )
                            ),
                            "pixi": _maybe(_PIXI),
                            "fa-lint": _maybe(
                                st.fixed_dictionaries(
                                    {},
                                    optional={
                                        "select": _maybe(st.just(["FAL"])),
                                        "min-version": _maybe(st.sampled_from(["2.6.0", "x"])),
                                        "per-file-ignores": _maybe(
                                            st.dictionaries(_WORD, st.just(["FAL001"]))
                                        ),
                                    },
                                )
                            ),
                        },
                    )
                ),
            },
        ),
    ),
    "pipfile": (
        "toml",
        st.fixed_dictionaries(
            {}, optional={"packages": _maybe(_DEPENDENCIES), "dev-packages": _maybe(_DEPENDENCIES)}
        ),
    ),
    "uv.lock": ("toml", _LOCK),
    "poetry.lock": ("toml", _LOCK),
    "pdm.lock": ("toml", _LOCK),
    "pylock": (
        "toml",
        st.fixed_dictionaries({"lock-version": st.just("1.0"), "packages": _maybe(st.lists(_PACKAGE))}),
    ),
    "pipfile.lock": (
        "json",
        st.fixed_dictionaries(
            {},
            optional={
                "default": _maybe(
                    st.dictionaries(st.one_of(_WORD, st.sampled_from(HOSTILE)), _maybe(_PACKAGE))
                ),
                "develop": _maybe(st.dictionaries(_WORD, _maybe(_PACKAGE))),
            },
        ),
    ),
    "conda": (
        "yaml",
        st.fixed_dictionaries(
            {},
            optional={
                "dependencies": _maybe(
                    st.lists(
                        st.one_of(
                            _REQ,
                            st.sampled_from(["pytorch=2.3", "flash-attn=2.4.2=py311", "python>=3.10"]),
                            st.fixed_dictionaries({"pip": _STRINGS}),
                        ),
                        max_size=5,
                    )
                ),
                "name": _SCALAR,
            },
        ),
    ),
    "cluster": (
        "yaml",
        st.fixed_dictionaries(
            {
                "resources": _maybe(
                    st.fixed_dictionaries(
                        {
                            "accelerators": _maybe(
                                st.one_of(
                                    _SCALAR,
                                    st.lists(_SCALAR, max_size=3),
                                    st.dictionaries(_WORD, _SCALAR, max_size=3),
                                )
                            )
                        },
                        optional={"instance_type": _SCALAR, "image_id": _SCALAR},
                    )
                )
            },
            optional={
                "setup": _maybe(LINE_FORMATS["shell"]),
                "run": _maybe(LINE_FORMATS["shell"]),
                "spec": _maybe(
                    st.fixed_dictionaries(
                        {
                            "nodeSelector": _maybe(
                                st.dictionaries(st.sampled_from(["nvidia.com/gpu.product", "x"]), _SCALAR)
                            )
                        }
                    )
                ),
            },
        ),
    ),
    "workflow": (
        "yaml",
        st.fixed_dictionaries(
            {},
            optional={
                "env": _maybe(
                    st.dictionaries(
                        st.sampled_from(["FA", "SPEC"]),
                        st.one_of(st.sampled_from(VERSIONS), st.just("flash-attn==${{ env.FA }}")),
                    )
                ),
                "jobs": _maybe(
                    st.dictionaries(
                        _WORD,
                        st.fixed_dictionaries(
                            {},
                            optional={
                                "steps": _maybe(
                                    st.lists(
                                        st.fixed_dictionaries(
                                            {"run": _maybe(LINE_FORMATS["shell"])},
                                            optional={"env": _maybe(st.dictionaries(st.just("FA"), _SCALAR))},
                                        ),
                                        max_size=3,
                                    )
                                )
                            },
                        ),
                        max_size=2,
                    )
                ),
            },
        ),
    ),
}

_BARE = re.compile(r"[A-Za-z0-9_-]+")


def _toml_string(s: str) -> str:
    escaped = "".join(
        c if c.isprintable() and c not in '"\\' else {"\\": "\\\\", '"': '\\"'}.get(c, f"\\u{ord(c):04x}")
        for c in s
    )
    return f'"{escaped}"'


def _toml_key(k: str) -> str:
    return k if _BARE.fullmatch(k) else _toml_string(k)


def _toml_inline(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, list):
        return "[" + ", ".join(map(_toml_inline, v)) + "]"
    return "{" + ", ".join(f"{_toml_key(k)} = {_toml_inline(x)}" for k, x in v.items()) + "}"


def toml(doc: dict[str, Any], path: tuple[str, ...] = ()) -> str:
    """A small TOML writer: tables as [headers], arrays of tables as [[headers]], the rest inline."""
    plain = [f"{_toml_key(k)} = {_toml_inline(v)}\n" for k, v in doc.items() if not _nested(v)]
    out = ["".join(plain)]
    for k, v in doc.items():
        here = ".".join(map(_toml_key, (*path, k)))
        if isinstance(v, dict) and _nested(v):
            out.append(f"\n[{here}]\n{toml(v, (*path, k))}")
        elif isinstance(v, list) and _nested(v):
            out += [f"\n[[{here}]]\n{toml(item, (*path, k))}" for item in v]
    return "".join(out)


def _nested(v: Any) -> bool:
    return (isinstance(v, dict) and bool(v)) or (
        isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)
    )


def _write(kind: str, doc: Any, ascii_only: bool) -> str:
    if kind == "toml":
        return toml(doc)
    if kind == "json":
        return json.dumps(doc, indent=4, ensure_ascii=ascii_only)
    return yaml.safe_dump(doc, allow_unicode=not ascii_only, sort_keys=False)


# --- every format -------------------------------------------------------------------------------------


def name_for(source: str) -> str:
    """A file name that fa-lint reads as ``source``."""
    if source in NAMES:
        return NAMES[source]
    pattern = SOURCES[source].patterns[0].replace("[-_.]", "-").replace("*", "x")
    assert (detect(pattern) or _fallback(pattern)) == source, (source, pattern)
    return pattern


def fixtures(source: str) -> list[str]:
    return sorted(
        p.read_text(encoding="utf-8-sig") for p in DATA.rglob("*") if p.is_file() and detect(str(p)) == source
    )


_ENCODING = st.sampled_from(["utf-8"] * 6 + ["utf-8-sig", "utf-16"])


def _bytes(text: str, encoding: str) -> bytes:
    return text.encode(encoding, "surrogatepass")  # a lone surrogate becomes bytes no decoder accepts


@st.composite
def _mutated(draw: st.DrawFn, text: str) -> str:
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 3))
        text = text[:at] + draw(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=4))) + text[at + cut :]
    return text


def documents(source: str) -> st.SearchStrategy[str]:
    """Text that reads as ``source``: mostly built from its vocabulary, or a mutated fixture of it;
    a quarter of them with hostile pieces spliced in afterwards."""
    if source in STRUCTURED:
        kind, data = STRUCTURED[source]
        built = st.builds(_write, st.just(kind), data, st.booleans())
    else:
        built = LINE_FORMATS.get(source, _fragments(_REQ))
    options = [built, built, built]
    if source in EXTRA:  # round 5's constructs (tests/fuzz/constructs.py)
        options.append(EXTRA[source])
    seeds = fixtures(source)
    if seeds:
        options.append(st.sampled_from(seeds).flatmap(_mutated))
    return st.one_of(options).flatmap(
        lambda text: st.one_of(st.just(text), st.just(text), st.just(text), _mutated(text))
    )


# PEP 263 / pip coding declarations: codecs that move line breaks (utf-7's "+AAo-", unicode_escape's
# "\\n"), ones of another family, of bytes to bytes, or none at all; on the first line or the second.
CODECS = ["utf-7", "unicode_escape", "latin-1", "cp1252", "utf-16", "hex", "rot13", "nonesuch", "utf-8"]
_DECLARATION = st.sampled_from(
    ["# -*- coding: {} -*-\n", "#!/bin/sh\n# vim: set fileencoding={} :\n", "#coding={}\n"]
)


def _declared(text: str, codec: str, declaration: str) -> bytes:
    """The text under a declaration of ``codec``, encoded with it where it can be (else UTF-8)."""
    head = declaration.format(codec).encode("ascii")
    try:
        return head + text.encode(codec)
    except (LookupError, UnicodeError, TypeError):
        return head + text.encode("utf-8", "surrogatepass")


def files(source: str) -> st.SearchStrategy[tuple[str, bytes]]:
    """(file name, bytes) for ``source``; one in eight declares its encoding on a first line."""
    plain = st.builds(_bytes, documents(source), _ENCODING)
    declared = st.builds(_declared, documents(source), st.sampled_from(CODECS), _DECLARATION)
    return st.tuples(st.just(name_for(source)), st.one_of(*[plain] * 7, declared))
