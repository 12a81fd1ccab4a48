"""Generators for what round 5 found (issue 38, 40 item 1): bash's whole grammar, nested, redefined,
unset and recursive functions, ANSI-C quotes, multi-line YAML scalars and malformed ``kernels.lock``
files. Kept apart from ``inputs`` (whose vocabulary the other generators share) and self-contained:
``inputs.documents`` draws from ``EXTRA`` for the formats named there.

``bash_scripts`` makes every kind of node tree-sitter-bash has (``tests/test_shell_grammar.py``
checks it against the grammar's own list): each template below is one construct, with its holes
filled by requirement words, hostile quotes and other constructs (so they nest).
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

_PINS = ["flash-attn==2.4.2", "flash-attn>=2.5", "flash-attn", "torch==2.3.0", '"flash-attn==2.4.2"', "$FA"]
# what makes a "#" text or a comment: quotes of every kind, escapes, expansions
_QUOTED = [
    "$'it\\'s # noqa'",
    "$'\\' # noqa'",
    "$'a\\n#b'",
    '$"gpu # noqa"',
    "'# noqa'",
    '"a # noqa"',
    '"$(echo " # noqa ")"',
    "${FA:-# noqa}",
    "${FA# x}",
    "$((16#ff))",
    "`echo a # b`",
    "\\# noqa",
    "# noqa",
    "#fa-lint: noqa",
]
_WORD = st.sampled_from(_PINS + _QUOTED + ["x", "$1", "$@", "2.4.2"])

# One construct each; "{}" holes take words or other constructs. Together they make every named node
# kind of the grammar.
_TEMPLATES = [
    "pip install {} {}",  # command, command_name, word
    "A=1 B={} pip install {}",  # variable_assignment in a prefix
    "A={} B=2",  # variable_assignments
    "FA=(a {} c)",  # array
    'echo "{} $FA ${{FA}}"',  # string, string_content, simple_expansion, expansion
    "echo '{}' $'{}' $\"tr {}\"",  # raw_string, ansi_c_string, translated_string
    "echo ${{A[0]}} $? $@ {{1..3}}",  # subscript, special_variable_name, brace_expression
    "echo $(( (1 + 2) * -3 ? 4 : 5 ))",  # arithmetic_expansion, number, parenthesized/unary/ternary
    "(( i++ ))",  # compound_statement of arithmetic, postfix_expression
    "[[ $x =~ ^fl.*$ && $y == a* ]] && pip install {}",  # test_command, regex, extglob_pattern, list
    '[ -n "{}" ] || pip install {}',  # test_operator
    "pip install {} 2>/dev/null >&2",  # redirected_statement, file_redirect, file_descriptor
    "cat <<EOF && pip install {}\n$FA {}\nEOF",  # heredoc_redirect/_start/_body/_content/_end
    "cat <<'EOF'\n{} # noqa\nEOF",
    "cat <<< {}",  # herestring_redirect
    "for v in {} b; do pip install $v; done",  # for_statement, do_group
    "for ((i = 0; i < 3; i++)); do pip install {}; done",  # c_style_for_statement
    "while false; do {}; done",  # while_statement
    "until true; do pip install {}; done",
    "if [ -f x ]; then pip install {}; elif true; then {}; else pip install {}; fi",  # if, elif, else
    "case $x in\n  a) pip install {};;\n  *) {};;\nesac",  # case_statement, case_item
    "f() {{ pip install {}; }}\nf {}",  # function_definition, compound_statement
    "outer() {{\n  inner() {{ pip install {}; }}\n}}",  # reliability/61: a function defining one
    "outer() {{ inner() {{ {}; }}; }}\nouter\ninner {}",
    "g() {{ pip install {}; }}\ng() {{ pip install {}; }}\ng",  # redefined before a call
    "h() {{ pip install $1; h {}; }}\nh {}",  # recursion
    "a() {{ b $1; }}\nb() {{ a {}; }}\na x",  # mutual recursion
    "p() {{ {}; }}\nunset -f p\np {}",  # unset_command
    "p() {{ :; }}\nunset p\npip install {}",
    "function k {{ pip install {}; }}\nk",
    "s() ( pip install {} )\ns",  # a subshell body
    "( cd x && pip install {} )",  # subshell
    "pip download {} | pip install {}",  # pipeline
    "! pip install {}",  # negated_command
    "export FA={}; local L={}; declare -a D",  # declaration_command
    "V=$(pip install {})",  # command_substitution
    "echo `pip install {}`",
    "cat <(pip install {}) >(cat)",  # process_substitution
    "# a comment {}",  # comment
    "echo a)b {}",  # ERROR
    'bash -c "pip install {}"',
]


@st.composite
def _construct(draw: st.DrawFn, depth: int = 0) -> str:
    template = draw(st.sampled_from(_TEMPLATES))
    holes = template.count("{}")
    fill = []
    for _ in range(holes):
        if depth < 2 and draw(st.integers(0, 5)) == 0:
            fill.append(draw(_construct(depth + 1)).replace("\n", "; "))
        else:
            fill.append(draw(_WORD))
    return template.format(*fill)


def bash_scripts() -> st.SearchStrategy[str]:
    """Scripts of one to eight constructs, one a line (or two, joined by ``;`` or ``&&``)."""
    line = st.one_of(
        _construct(),
        st.tuples(_construct(), st.sampled_from(["; ", " && ", " || "]), _construct()).map(
            lambda t: t[0].split("\n")[-1] + t[1] + t[2] if "\n" not in t[0] else t[0] + "\n" + t[2]
        ),
    )
    return st.lists(line, min_size=1, max_size=8).map(lambda lines: "\n".join(lines) + "\n")


# --- YAML: quoted scalars over several lines, block scalars, a "# fa-lint: noqa" line inside ------------

_NOQA = ["# fa-lint: noqa", "# noqa", "#noqa: FAL001", "it's # noqa", "'' # noqa", '\\" # noqa']


@st.composite
def _scalar(draw: st.DrawFn) -> str:
    """A value that may span lines: double- or single-quoted, literal or folded, or plain."""
    first, rest = draw(st.sampled_from(["Install", "gpu", "a 'b'"])), draw(st.sampled_from(_NOQA))
    kind = draw(st.sampled_from(['"', "'", "|", ">-", "plain"]))
    indent = " " * draw(st.integers(2, 10))
    if kind in ('"', "'"):
        return f"{kind}{first}\n{indent}{rest}\n{indent}end{kind}"
    if kind == "plain":
        return f"{first}\n{indent}{rest}"
    return f"{kind}\n{indent}pip install flash-attn==2.4.2 {rest}\n{indent}echo {first}"


@st.composite
def workflows(draw: st.DrawFn) -> str:
    name, run = (
        draw(_scalar()),
        draw(
            st.sampled_from(["pip install flash-attn==2.4.2", "|\n          pip install flash-attn==2.4.2"])
        ),
    )
    return f"on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - name: {name}\n        run: {run}\n"


@st.composite
def environments(draw: st.DrawFn) -> str:
    name = draw(_scalar())
    return f"name: {name}\ndependencies:\n  - pip\n  - pip:\n    - flash-attn==2.4.2\n"


@st.composite
def gitlab(draw: st.DrawFn) -> str:
    value = draw(_scalar())
    return f"variables:\n  NOTE: {value}\njob:\n  script:\n    - pip install flash-attn==2.4.2\n"


# --- kernels.lock beside a pyproject.toml that asks for kernels ---------------------------------------------

_ODD = [None, 1, 1.5, True, "", "org/a", ["org/a"], {"a": 1}, {"repo-id": []}, {"repo-id": "org/a"}]


@st.composite
def kernel_locks(draw: st.DrawFn) -> tuple[str, str]:
    """(pyproject.toml, kernels.lock): entries of every shape JSON has, where the lock writers put a
    string (``repo_id``) or a table (``dependency``), and locks that are no list at all."""
    entries = draw(
        st.lists(
            st.one_of(
                st.fixed_dictionaries(
                    {}, optional={"repo_id": st.sampled_from(_ODD), "sha": st.sampled_from(_ODD)}
                ),
                st.fixed_dictionaries({"dependency": st.sampled_from(_ODD)}),
                st.sampled_from(_ODD),
            ),
            max_size=5,
        )
    )
    lock = draw(st.sampled_from([entries, {"kernels": entries}, "x", None]))
    tool = draw(
        st.sampled_from(
            [
                '[tool.kernels.dependencies]\n"org/a" = ">=0.1"\n',
                "[tool.kernels]\ndependencies = 1\n",
                'tool = "x"\n',
                "[tool.kernels.dependencies]\n",
            ]
        )
    )
    return f'[project]\nname = "x"\nversion = "1"\ndependencies = ["kernels==0.4.0"]\n\n{tool}', json.dumps(
        lock
    )


# The formats ``inputs.documents`` also draws from here.
EXTRA: dict[str, st.SearchStrategy[str]] = {
    "shell": bash_scripts(),
    "workflow": workflows(),
    "conda": environments(),
    "gitlab-ci": gitlab(),
}
