"""Python programs that place work on GPUs, read with ``ast`` and never run: Modal apps (their images
are installs, see ``modal_app``), SageMaker jobs and Ray tasks (the GPU they ask for).

Any ``*.py`` may be one; a file is read when its head imports ``modal``, ``sagemaker`` or ``ray``
(the rest of a project's Python is not opened past its first 8 KiB). What each says:

- SageMaker: ``instance_type="ml.g5.2xlarge"`` in any call (an estimator, ``deploy``, a processor):
  the instance family's GPU (``ml.p3`` V100, ``ml.g4dn`` T4, ``ml.g5`` A10G, ``ml.p4d`` A100, ...).
- Ray: ``accelerator_type="A100"`` or one of ``ray.util.accelerators``' names
  (``NVIDIA_TESLA_V100`` is ``"V100"``), in ``@ray.remote``, ``.options()`` or ``ScalingConfig``;
  ``resources={"accelerator_type:A100": ...}``. ``num_gpus`` says how many, not which.

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
_IMPORTS = re.compile(r"^[ \t]*(?:import|from)[ \t]+(modal|sagemaker|ray)\b", re.M)
# The same, on bytes: discovery reads each *.py whole once for the code layer's words, and looks at
# the head of those bytes for these imports without decoding them.
IMPORTS_BYTES = re.compile(_IMPORTS.pattern.encode(), re.M)
# What IMPORTS_BYTES needs one of, as plain bytes: the module names, "ray" after the blank that
# separates it from import/from (a bare b"ray" is in every "np.asarray").
FRAMEWORKS = (b"modal", b"sagemaker", b" ray", b"\tray")
HEAD = 8192  # the bytes whose imports make a file one of these (the rest is not looked at for them)
# What a file says something with (Modal's module, the keywords read below) is written with one of
# these; an identifier Python normalizes (NFKC) may be written otherwise, so a text that is not ASCII is
# always walked.
_SAYS = ("modal", "instance_type", "accelerator_type")


def sniff(head: str, *, complete: bool) -> bool:
    return _IMPORTS.search(head) is not None


def parse(path: str, text: str) -> Iterator[Parsed]:
    import ast

    from fa_lint.model import ParseProblem
    from fa_lint.syntax import pyast
    from fa_lint.syntax.pyast import PythonIndex

    if not _IMPORTS.search(text[:HEAD]):
        return  # picked for the code layer's words (fa_lint.code), not as an app: nothing here
    index = PythonIndex(path, text)
    tree = pyast.parse(index, "Python file")
    if isinstance(tree, ParseProblem):
        yield tree
        return
    if text.isascii() and not any(word in text for word in _SAYS):
        return  # nothing below can be found: its walks over the tree are spared (a Ray project's files)
    imported = {
        (a.name if isinstance(n, ast.Import) else n.module or "").split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    }
    if "modal" in imported:
        from fa_lint.sources import modal_app

        yield from modal_app.parse(index, tree)
    if imported & {"sagemaker", "ray"}:
        yield from _gpu_keywords(index, tree, imported)


def _gpu_keywords(index: PythonIndex, tree: ast.Module, imported: set[str]) -> Iterator[Setting]:  # noqa: C901 - complexity 11, to split or justify (issue 45)
    import ast

    from fa_lint.model import Setting
    from fa_lint.syntax import pyast

    strings: dict[str, str] = {  # names the file binds to one string: INSTANCE_TYPE = "ml.p4d.24xlarge"
        t.id: n.value.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    found: list[tuple[str, str, str, ast.expr]] = []  # (kind, name, value, node)
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        for k in call.keywords:
            value, node = _text(k.value, strings), k.value
            if k.arg == "instance_type" and "sagemaker" in imported and value:
                found.append(("instance", "instance_type", value, node))
            elif k.arg == "accelerator_type" and "ray" in imported:
                name = value or _accelerator_name(k.value)
                if name:
                    found.append(("gpu", "accelerator_type", name, node))
            elif k.arg == "resources" and "ray" in imported and isinstance(k.value, ast.Dict):
                for key in k.value.keys:
                    text = _text(key, strings) if key is not None else None
                    if text and text.startswith("accelerator_type:"):
                        found.append(("gpu", "accelerator_type", text.split(":", 1)[1], key))  # type: ignore[arg-type]
    for kind, name, value, node in found:
        literal = isinstance(node, ast.Constant)
        start, end = (pyast.span if literal else pyast.node_span)(index, node)
        yield Setting(index.location(start, end), kind, name, value, possible=len(found) > 1)


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
