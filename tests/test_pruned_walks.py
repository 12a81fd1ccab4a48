"""Issue 41: the Python app readers walk only the parts of a tree that can hold what they read
(``fa_lint.syntax.pylines``). Each pruned walk is compared here with the full walk it replaced, on
constructed files with the shapes where a node's lines and its parts' could part: decorators above
their ``def``, f-strings, calls over several lines, names imported under another name, a full-width
name Python reads as ASCII, lone carriage returns, nodes with no position of their own."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest

from fa_lint.sources import python_app, python_commands
from fa_lint.syntax import pyast, pylines
from fa_lint.syntax.pyast import Flow, PythonIndex

COMMANDS = '''\
import os
import subprocess as sp
from subprocess import run as go, Popen
from sky import Task

@decorate(sp.run(["pip", "install", "in-a-decorator"]))
@staticmethod
def f(x=sp.check_call(["pip", "install", "a-default"]), *, y: int = os.system("pip install k")):
    return [go(["pip", "install", z]) for z in range(3) if sp.call(["pip", "check"])]

@decorate(
    sp.run(["pip", "install", "above-a-def-with-no-call"]))
async def h():
    pass

class C(
    Base, metaclass=Meta(os.popen("ls")),
):
    @other(
        sp.getoutput("pip list"))
    def g(self):
        cmd = "pip install flash-attn"
        os.system(cmd)
        self.jobs.append(Task(setup=cmd))

reqs = []
reqs.append("a")
(reqs
  .extend(["b"]))
extras = {*()}
extras.add("c")
x = f"{sp.run('pip install z', shell=True)}"
y = f"""
{sp.Popen(
   ["pip", "install", "q"])}
"""
w = lambda: os.popen("pip install w")
match command:
    case ["go"] if sp.call(["pip", "install", "m"]):
        pass
with open(sp.getoutput("pip download x")) as fh, go(["true"]):
    pass
try:
    import subprocess as sp
except ImportError:
    os.system("pip install b")
finally:
    from os import system
if __name__ == "__main__":
    sp.run(["pip", "install", "c"])
sp.\\
    run(["pip", "install", "d"])
Popen (
    ["pip"]
)
os.path.join("a", "b")
\uff47\uff4f(["pip", "install", "full-width"])
print(len(reqs), [system("pip install s") for _ in ()])
'''


def _full_calls(tree: ast.Module) -> Iterator[tuple[ast.Call, bool, ast.AST]]:
    """python_commands._calls before issue 41's pruning: every call of the tree."""
    pending: list[tuple[ast.AST, bool, ast.AST]] = [(tree, False, tree)]
    while pending:
        node, possible, frame = pending.pop()
        if isinstance(node, ast.Call):
            yield node, possible, frame
        inner = possible or (
            isinstance(node, python_commands._BRANCHES) and not python_commands._main_guard(node)
        )
        here = node if isinstance(node, python_commands._FUNCTIONS) else frame
        inner = inner or isinstance(node, python_commands._FUNCTIONS)
        pending.extend((c, inner, here) for c in reversed(pyast.children(node)))


def _read(
    calls: Iterator[tuple[ast.Call, bool, ast.AST]], imports: dict[str, tuple[str, str]]
) -> list[tuple[int, bool, int]]:
    """The calls python_commands reads (every other one is passed over), by identity."""
    return [
        (id(call), possible, id(frame))
        for call, possible, frame in calls
        if python_commands._callee(call.func, imports) in python_commands._READ
    ]


def _flow(flow: Flow) -> tuple[list[tuple[str, list[tuple[int, str | None]]]], list[str]]:
    return [(k, [(id(e), key) for e, key in v]) for k, v in flow.values.items()], sorted(flow.functions)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_the_calls_read_are_those_of_the_full_walk(newline: str) -> None:
    text = COMMANDS.replace("\n", newline)
    index = PythonIndex("c.py", text)
    tree = ast.parse(text)
    nodes = list(pylines.walk(tree, pylines.word_lines(index, pyast.ADDS)))
    imports = python_commands._imports(nodes)
    assert list(imports.items()) == list(python_commands._imports(list(pyast.walk(tree))).items())
    assert list(imports.items()) == list(python_commands._Reader(index, tree, "python-app").imports.items())
    assert _flow(Flow(tree, nodes)) == _flow(Flow(tree))
    assert len(Flow(tree).values["reqs"]) == 3 and len(Flow(tree).values["extras"]) == 2

    class Reader:  # what callees() reads of the reader
        pass

    reader = Reader()
    reader.imports = imports  # type: ignore[attr-defined]
    callees = python_commands._Reader.callees(reader)  # type: ignore[arg-type]
    assert {"go", "Popen", "run", "Task"} <= callees
    pruned = list(python_commands._calls(tree, pylines.word_lines(index, callees)))
    full = list(_full_calls(tree))
    read = _read(iter(full), imports)
    assert _read(iter(pruned), imports) == read
    assert len(read) == 22  # each call above but print, len, range, open, decorate, other, Meta, Base
    assert len(pruned) < len(full)  # os.path.join (a callee with no such name) and the others: not walked


def test_the_install_records_are_those_of_the_full_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    index = PythonIndex("c.py", COMMANDS)
    tree = ast.parse(COMMANDS)
    pruned = list(python_commands.parse(index, tree, "python-app"))
    monkeypatch.setattr(pylines, "holds", lambda lines, node: True)
    full = list(python_commands.parse(PythonIndex("c.py", COMMANDS), ast.parse(COMMANDS), "python-app"))
    assert repr(pruned) == repr(full)
    assert len(full) > 10


GPUS = """\
import sagemaker, ray, runpod
from runpod import create_pod as make
INSTANCE = "ml.p3.2xlarge"

@ray.remote(num_gpus=1,
            accelerator_type=NVIDIA_TESLA_T4)
def f(): ...

@ray.remote(resources={'accelerator_type:V100': 0.01})
class G: ...

def launch():
    est = Estimator(image_uri="x",
        instance_type=INSTANCE)
    est.deploy(instance_type=f"{INSTANCE}")
    pod = runpod.create_pod("t", "img", "NVIDIA GeForce RTX 2080 Ti")
    p = create_pod(
       "t", "img", \\
       "NVIDIA A100 80GB PCIe")
    return [x(\uff49\uff4e\uff53\uff54\uff41\uff4e\uff43\uff45_type="ml.g5.xlarge") for x in (est,)]

INSTANCE = "ml.p4d.24xlarge"  # the later binding is the one read
"""


def test_the_gpu_keywords_are_those_of_the_full_walk() -> None:
    index = PythonIndex("launch.py", GPUS)
    tree = ast.parse(GPUS)
    nodes = list(pylines.walk(tree, pylines.word_lines(index, python_app._KEYWORDS)))
    every = {"sagemaker", "ray", "runpod"}
    found = list(python_app._gpu_keywords(index, nodes, every))
    assert repr(found) == repr(list(python_app._gpu_keywords(index, list(ast.walk(tree)), every)))
    assert [s.value for s in found] == [  # breadth first: the decorators' first
        "NVIDIA_TESLA_T4",
        "V100",
        "ml.p4d.24xlarge",
        "NVIDIA GeForce RTX 2080 Ti",
        "NVIDIA A100 80GB PCIe",
        "ml.g5.xlarge",
    ]


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("a.run()\nxrun()\nrun_x()\n_run\nrun1\n", [1]),
        ("x\r\ry.run\n", [3]),
        ("x\x0c\nrun\n", [2]),  # a form feed ends no line for Python
        ("# \u00e9\nx = \uff52\uff55\uff4e\n", [2]),  # NFKC: what Python reads
        ("run", [1]),
    ],
)
def test_word_lines(text: str, lines: list[int]) -> None:
    assert pylines.word_lines(PythonIndex("t.py", text), ["run"]) == lines


def test_a_node_with_no_position_is_walked_into() -> None:
    tree = ast.parse("def f(\n    a,\n    b=g(),\n): pass\n")
    func = tree.body[0]
    assert isinstance(func, ast.FunctionDef)
    assert pylines.holds([3], func.args) and pylines.holds([], func.args)
    assert pylines.holds([3], func) and not pylines.holds([5], func)
    walked = list(pylines.walk(tree, [3]))
    assert any(isinstance(n, ast.Call) for n in walked)
    assert not any(isinstance(n, ast.arg) and n.arg == "a" for n in walked)


def test_a_decorated_definition_holds_its_decorators_lines() -> None:
    tree = ast.parse("@a(\n  b())\n\n@c\nclass K:\n    pass\n")
    assert pylines.holds([2], tree.body[0]) and not pylines.holds([7], tree.body[0])


STATEMENTS = """\
import a
def f(x=[i for i in range(3)]):
    import b
    class K:
        with open(p) as fh, ctx():
            from c import d as e
    return lambda: [g for g in x]
try:
    import h
except* (E, F):
    import i
else:
    pass
finally:
    for j in k:
        while m:
            import n
        else:
            import o
match p:
    case [q] if r(q):
        import s
    case _:
        t = u.append(v)
"""


def test_every_statement_is_walked_in_order() -> None:
    tree = ast.parse(STATEMENTS)
    full = list(pyast.walk(tree))
    for lines in ([], [24], list(range(1, 25))):
        walked = list(pylines.walk(tree, lines))
        at = [next(i for i, n in enumerate(full) if n is w) for w in walked]
        assert at == sorted(at)  # in the full walk's order
        assert [n for n in walked if isinstance(n, pylines.STATEMENTS)] == [
            n for n in full if isinstance(n, pylines.STATEMENTS)
        ]
        assert any(isinstance(n, ast.Call) for n in walked) == bool(lines)
    assert len(list(pylines.walk(tree, list(range(1, 25))))) == len(full)
    imports = python_commands._imports(list(pylines.walk(tree, [])))
    assert list(imports.items()) == list(python_commands._imports(full).items())
    lines = pylines.word_lines(PythonIndex("s.py", STATEMENTS), ["import"])
    assert lines == [1, 3, 6, 9, 11, 17, 19, 22]
    walked = list(pylines.walk(tree, lines, statements=False))
    assert list(python_commands._imports(walked).items()) == list(imports.items())
    assert not any(isinstance(n, (ast.Assign, ast.Pass, ast.Return)) for n in walked)  # on no such line
    assert sorted(imports) == ["a", "b", "e", "h", "i", "n", "o", "s"]
