"""Python programs that place work on GPUs, read with ``ast`` and never run: Modal apps (their images
are installs, see ``modal_app``), SageMaker jobs, Ray tasks and RunPod pods (the GPU they ask for).

Any ``*.py`` may be one; a file is read when its head imports ``modal``, ``sagemaker``, ``ray`` or
``runpod`` (the rest of a project's Python is not opened past its first 8 KiB), or, outside a test,
when it runs an install of flash-attn (``fa_lint.sources.python_commands``: ``os.system``,
``subprocess``, a launcher's command). What each says:

- SageMaker: ``instance_type="ml.g5.2xlarge"`` in any call (an estimator, ``deploy``, a processor):
  the instance family's GPU (``ml.p3`` V100, ``ml.g4dn`` T4, ``ml.g5`` A10G, ``ml.p4d`` A100, ...).
- Ray: ``accelerator_type="A100"`` or one of ``ray.util.accelerators``' names
  (``NVIDIA_TESLA_V100`` is ``"V100"``), in ``@ray.remote``, ``.options()`` or ``ScalingConfig``;
  ``resources={"accelerator_type:A100": ...}``. ``num_gpus`` says how many, not which.
- RunPod: ``create_pod(name, image_name, gpu_type_id)`` (runpod-python's ``runpod/api/ctl_commands.py``:
  the third parameter, or the keyword), whose value is one of RunPod's GPU type ids, NVIDIA's product
  names (``"NVIDIA GeForce RTX 4090"``, ``"NVIDIA A100 80GB PCIe"``). An endpoint's ``gpu_ids`` name
  pools of several GPUs (``"AMPERE_16"``), so they say none.

These files install nothing themselves (the job's requirements come from elsewhere), so their GPUs
are possibilities for every install of the repository, as a Kubernetes manifest's are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ast

    from fa_lint.model import Parsed, Setting
    from fa_lint.syntax.pyast import PythonIndex

NAME = "python-app"
_IMPORTS = re.compile(r"^[ \t]*(?:import|from)[ \t]+(modal|sagemaker|ray|runpod)\b", re.M)
# The same, on bytes: discovery reads each *.py whole once for the code layer's words, and looks at
# the head of those bytes for these imports without decoding them.
IMPORTS_BYTES = re.compile(_IMPORTS.pattern.encode(), re.M)
# What IMPORTS_BYTES needs one of, as plain bytes: the module names, "ray" after the blank that
# separates it from import/from (a bare b"ray" is in every "np.asarray").
FRAMEWORKS = (b"modal", b"sagemaker", b" ray", b"\tray", b"runpod")
HEAD = 8192  # the bytes whose imports make a file one of these (the rest is not looked at for them)
# What a file says something with (Modal's module, the keywords read below) is written with one of
# these; an identifier Python normalizes (NFKC) may be written otherwise (fa_lint.syntax.identifiers).
_SAYS = ("modal", "instance_type", "accelerator_type", "gpu_type_id", "create_pod")  # RunPod: keyword, callee
# The names a call is read for below: its keywords', and RunPod's create_pod (its callee)
_KEYWORDS = ("instance_type", "accelerator_type", "gpu_type_id", "resources", "create_pod")


# What a Python file must hold to be read for the install commands it runs: an install word,
# flash-attn, and a call fa_lint.sources.python_commands reads (bytes, searched before the file is
# decoded: fa_lint.files.discover). Here, so that the check costs no import of the shell model.
_RUNNER_BYTES = (b"subprocess", b"system(", b"popen(", b"getoutput", b"RunConfig", b"Task(")
# flash-attn's names, in any case, searched in the bytes made lower case: bytes.lower() folds ASCII
# letters only, as re.I does for a bytes pattern, and a pattern without re.I starts with a fast search
# for its "flash" (with re.I it is tried at each offset: a third of a repository's discovery, on files
# of megabytes).
_FLASH_LOWER = re.compile(rb"flash[-_]?attn|flash-attention")


def installs(data: bytes) -> bool:
    """Whether a Python file's bytes may hold an install of flash-attn through one of these calls."""
    if b"install" in data:
        for word in _RUNNER_BYTES:  # (a loop, not any(): this runs for each Python file of a repository)
            if word in data:
                return _FLASH_LOWER.search(data.lower()) is not None
    return False


def installs_text(text: str) -> bool:
    """``installs``, for the decoded text: the same search in its UTF-8. (A name is folded as ASCII:
    a requirement's name is compared so, and no other letter's case makes one flash-attn's.)"""
    return installs(text.encode("utf-8", "surrogatepass"))


def sniff(head: str, *, complete: bool) -> bool:
    return _IMPORTS.search(head) is not None


def parse(path: str, text: str) -> Iterator[Parsed]:
    app = _IMPORTS.search(text[:HEAD]) is not None
    commands = not test_file(path) and installs_text(text)
    if not app and not commands:
        return  # picked for the code layer's words (fa_lint.code) only: nothing here, nothing imported
    import ast

    from fa_lint.model import ParseProblem
    from fa_lint.sources import python_commands  # (the shell model: a run with no script never loads it)
    from fa_lint.syntax import pyast, pylines
    from fa_lint.syntax.pyast import PythonIndex

    index = PythonIndex(path, text)
    tree = pyast.parse(index, "Python file")
    if isinstance(tree, ParseProblem):
        if app:  # a script read only for its install commands is no file of ours to call broken
            yield tree
        return
    if commands:
        yield from python_commands.parse(index, tree, NAME)
    if not app:
        return
    said = index.reads[0]  # as Python reads its names (NFKC where that can add a word)
    if not any(word in said for word in _SAYS):
        return  # nothing below can be found: its walks over the tree are spared (a Ray project's files)
    # an import's lines hold its "import": only what holds those lines is walked (pylines)
    imported = {
        (a.name if isinstance(n, ast.Import) else n.module or "").split(".")[0]
        for n in pylines.walk(tree, pylines.word_lines(index, ("import",)), statements=False)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    }
    if "modal" in imported:
        from fa_lint.sources import modal_app

        yield from modal_app.parse(index, tree)
    if imported & {"sagemaker", "ray", "runpod"}:
        # assignments are statements, and a keyword read is on a line that names it: only those
        nodes = list(pylines.walk(tree, pylines.word_lines(index, _KEYWORDS)))
        yield from _gpu_keywords(index, nodes, imported)


# Where a project keeps its tests (pytest's default discovery: test_*.py and *_test.py files,
# conftest.py, and the tests/ folder projects put them in): a test's subprocess call installs into a
# throwaway environment, or is a fixture a mock answers, and a list it compares with is no command.
_TEST_FILE = re.compile(r"(?:^|/)(?:tests?/|test_[^/]*\.py$|[^/]*_test\.py$|conftest\.py$)")


def test_file(path: str) -> bool:
    """Whether a Python file is a test's: its commands are not the project's installs."""
    return _TEST_FILE.search(path.replace("\\", "/")) is not None


def _gpu_keywords(index: PythonIndex, nodes: list[ast.AST], imported: set[str]) -> Iterator[Setting]:
    """``nodes``: the tree's, in ``ast.walk``'s order; or its statements and the calls on lines that
    name one of ``_KEYWORDS`` (the calls that can say something), in that order."""
    import ast

    from fa_lint.model import Setting
    from fa_lint.syntax import pyast

    strings: dict[str, str] = {  # names the file binds to one string: INSTANCE_TYPE = "ml.p4d.24xlarge"
        t.id: n.value.value
        for n in nodes
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    found: list[tuple[str, str, str, ast.expr]] = []  # (kind, name, value, node)
    for call in nodes:
        if isinstance(call, ast.Call):
            found += _runpod_argument(call, strings) if "runpod" in imported else []
            for k in call.keywords:
                found += _keyword(k, strings, imported)
    for kind, name, value, node in found:
        literal = isinstance(node, ast.Constant)
        start, end = (pyast.span if literal else pyast.node_span)(index, node)
        yield Setting(index.location(start, end), kind, name, value, possible=len(found) > 1)


def _keyword(
    k: ast.keyword, strings: dict[str, str], imported: set[str]
) -> list[tuple[str, str, str, ast.expr]]:
    """The GPU a call's keyword asks for: SageMaker's instance type, Ray's accelerator, RunPod's GPU type."""
    import ast

    value = _text(k.value, strings)
    if k.arg == "instance_type" and "sagemaker" in imported and value:
        return [("instance", "instance_type", value, k.value)]
    if k.arg == "accelerator_type" and "ray" in imported:
        name = value or _accelerator_name(k.value)
        return [("gpu", "accelerator_type", name, k.value)] if name else []
    if k.arg == "gpu_type_id" and "runpod" in imported and value:
        return [("gpu", "gpu_type_id", value, k.value)]
    if k.arg == "resources" and "ray" in imported and isinstance(k.value, ast.Dict):
        found = []
        for key in k.value.keys:
            text = _text(key, strings) if key is not None else None
            if key is not None and text and text.startswith("accelerator_type:"):
                found.append(("gpu", "accelerator_type", text.split(":", 1)[1], key))
        return found
    return []


def _runpod_argument(call: ast.Call, strings: dict[str, str]) -> list[tuple[str, str, str, ast.expr]]:
    """``runpod.create_pod("name", "image", "NVIDIA GeForce RTX 3070")``: the GPU type passed by position."""
    import ast

    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    value = _text(call.args[2], strings) if name == "create_pod" and len(call.args) >= 3 else None
    return [("gpu", "gpu_type_id", value, call.args[2])] if value else []


def _text(node: ast.expr, strings: dict[str, str]) -> str | None:
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return strings.get(node.id)
    return None


def _accelerator_name(node: ast.expr) -> str | None:
    """``NVIDIA_TESLA_V100`` or ``accelerators.NVIDIA_A100``: ray.util.accelerators names each constant
    for the GPU it is (``NVIDIA_TESLA_V100 = "V100"``), so the name says it."""
    import ast

    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name if name and name.startswith("NVIDIA_") else None
