"""Modal apps, read with ``ast`` and never run: each ``modal.Image`` an install, and the GPUs the
functions that use it ask for.

An image is a chain of method calls from a constructor (``modal.Image.debian_slim()``,
``.from_registry("nvidia/cuda:12.4.1-devel-ubuntu22.04", add_python="3.11")``, ``.micromamba()``)
or from another image variable. Each step is what Modal's own builder writes for it
(``modal/_image.py``): ``pip_install(*pkgs, extra_options=..., index_url=...)`` is ``python -m pip
install``, ``uv_pip_install`` is ``uv pip install``, ``pip_install_from_requirements(path)`` is ``pip
install -r path``, ``apt_install`` is ``apt-get install``, ``micromamba_install(*pkgs, channels=...)``
is ``micromamba install``, ``run_commands`` are shell commands, and ``env({...})`` (or a step's
``env=``) sets build variables; each is read as the shell reader reads a command.

An image used by ``@app.function(image=...)``/``@app.cls(...)`` (or the ``modal.App(image=...)`` of
functions that name none), and an image no other image builds on, is an environment (scope
``image:NAME``). A function's ``gpu="A100"`` (``"H100:8"``, ``"A100-80GB"``, a list of fallbacks,
``modal.gpu.A100(size="80GB")`` of older clients) is a GPU of its image's environment: one GPU
certain, a fallback list one of several.
"""

from __future__ import annotations

import ast
import bisect
import shlex
from collections.abc import Iterator

from fa_lint._records import NamedTuple
from fa_lint.model import BUILD_VARIABLES, Image, Parsed, Setting
from fa_lint.shell.parse import Word
from fa_lint.shell.scanner import Scanner
from fa_lint.shell.variables import Scope, State
from fa_lint.sources.dockerfile import image as registry_image
from fa_lint.sources.nox import _Reader as _Words  # string arguments as located words, as nox reads them
from fa_lint.syntax import pyast
from fa_lint.syntax.pyast import Flow, PythonIndex

NAME = "python-app"
_CONSTRUCTORS = {"debian_slim", "micromamba", "from_registry", "from_aws_ecr", "from_gcp_artifact_registry"}
_OTHER_CONSTRUCTORS = {"from_dockerfile", "from_scratch", "from_name", "from_id"}  # an unknown base
_MAX_STEPS = 256  # a longer chain (a file reassigning one image in a loop of lines) is not followed
_PIP_OPTIONS = {
    "find_links": "--find-links",
    "index_url": "--index-url",
    "extra_index_url": "--extra-index-url",
}


class _Image(NamedTuple):
    base: ast.Call | None  # the constructor call; None when it is not known
    steps: tuple[ast.Call, ...]  # its method calls, in build order


class _Use(NamedTuple):
    image: _Image
    scope: str
    gpus: tuple[tuple[str, ast.expr, bool], ...]  # (value, node, one of several)


def parse(index: PythonIndex, tree: ast.Module) -> Iterator[Parsed]:
    reader = _Reader(index, tree)
    for use in reader.uses():
        yield from reader.emit(use)


class _Reader:
    def __init__(self, index: PythonIndex, tree: ast.Module) -> None:
        self.index = index
        self.tree = tree
        self.words = _Words(index, Flow(tree))
        self.names = {"modal"} | {  # what the file calls the module and its Image class
            a.asname or a.name
            for n in ast.walk(tree)
            if isinstance(n, ast.Import)
            for a in n.names
            if a.name == "modal"
        }
        self.image_class = {
            a.asname or a.name
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module == "modal"
            for a in n.names
            if a.name == "Image"
        }
        # every binding of a name to an image, in source order: ``image = image.pip_install(...)`` too
        self.bindings: dict[str, list[tuple[int, _Image]]] = {}
        self.parents: set[int] = set()  # images another image builds on (by identity)
        assigns = sorted(
            (n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None),
            key=lambda n: (n.lineno, n.col_offset),
        )
        for node in assigns:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                continue
            assert node.value is not None
            found = self.image(node.value, node.lineno)
            if found is not None:
                self.bindings.setdefault(targets[0].id, []).append((node.lineno, found))

    # --- what an expression is -----------------------------------------------------------------------

    def image(self, node: ast.expr, line: int) -> _Image | None:
        steps: list[ast.Call] = []
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            steps.append(node)
            node = node.func.value
        steps.reverse()
        if isinstance(node, ast.Name) and node.id in self.bindings:
            parent = self.binding(node.id, line)
            if parent is None or len(parent.steps) + len(steps) > _MAX_STEPS:
                return None
            self.parents.add(id(parent))
            return _Image(parent.base, parent.steps + tuple(steps))
        if not steps or not self._is_image_class(node):
            return None
        ctor = steps[0]
        assert isinstance(ctor.func, ast.Attribute)
        if ctor.func.attr in _CONSTRUCTORS:
            return _Image(ctor, tuple(steps[1:]))
        if ctor.func.attr in _OTHER_CONSTRUCTORS:
            return _Image(None, tuple(steps[1:]))
        return None

    def _is_image_class(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.image_class
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "Image"
            and isinstance(node.value, ast.Name)
            and node.value.id in self.names
        )

    def binding(self, name: str, line: int) -> _Image | None:
        """The image a name holds at ``line``: its last binding before it (the last one, for a function
        defined above an assignment that its decorator's name reads at call time)."""
        found = self.bindings.get(name, [])
        if not found:
            return None
        at = bisect.bisect_left(found, line, key=lambda b: b[0])  # bindings are in line order
        return found[at - 1][1] if at else found[-1][1]

    # --- which images are installs, on which GPUs -------------------------------------------------------

    def uses(self) -> list[_Use]:
        apps = self._app_images()
        used: dict[int, _Use] = {}  # by identity of the image
        order: list[int] = []
        for func in ast.walk(self.tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for deco in func.decorator_list:
                if not (isinstance(deco, ast.Call) and isinstance(deco.func, ast.Attribute)):
                    continue
                if deco.func.attr not in ("function", "cls"):
                    continue
                kw = {k.arg: k.value for k in deco.keywords if k.arg}
                app = deco.func.value.id if isinstance(deco.func.value, ast.Name) else ""
                img, scope = self._image_of(kw.get("image"), func.name, apps.get(app), deco.lineno)
                if img is None:
                    continue
                use = used.get(id(img))
                if use is None:
                    use = used[id(img)] = _Use(img, scope, ())
                    order.append(id(img))
                used[id(img)] = use._replace(gpus=use.gpus + tuple(self._gpus(kw.get("gpu"))))
        for name, found in self.bindings.items():  # images no other image builds on
            final = found[-1][1]
            if id(final) not in used and not self._extended(final):
                used[id(final)] = _Use(final, f"image:{name}", ())
                order.append(id(final))
        return [used[i] for i in order]

    def _extended(self, img: _Image) -> bool:
        return id(img) in self.parents

    def _image_of(
        self, node: ast.expr | None, function: str, app: tuple[str, _Image] | None, line: int
    ) -> tuple[_Image | None, str]:
        if node is None:
            return (app[1], f"image:{app[0]}") if app else (None, "")
        if isinstance(node, ast.Name):
            return self.binding(node.id, line), f"image:{node.id}"
        return self.image(node, line), f"image:{function}"

    def _app_images(self) -> dict[str, tuple[str, _Image]]:
        """``app = modal.App("x", image=image)`` (``modal.Stub`` of older clients): the image of the
        app's functions that name none."""
        out = {}
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            if not isinstance(node.targets[0], ast.Name):
                continue
            call = node.value
            if not (isinstance(call, ast.Call) and isinstance(call.func, (ast.Attribute, ast.Name))):
                continue
            ctor = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id
            if ctor not in ("App", "Stub"):
                continue
            kw = {k.arg: k.value for k in call.keywords if k.arg}
            img, scope = self._image_of(kw.get("image"), node.targets[0].id, None, node.lineno)
            if img is not None:
                out[node.targets[0].id] = (scope.removeprefix("image:"), img)
        return out

    def _gpus(self, node: ast.expr | None, depth: int = 0) -> list[tuple[str, ast.expr, bool]]:
        """``"A100"``, ``"H100:8"``, ``["H100", "A100-80GB"]``, ``modal.gpu.A100(size="80GB")``, or a name
        the file binds to one of these."""
        if node is None or depth > 8:
            return []
        text = self._text(node, 0) if isinstance(node, (ast.Name, ast.JoinedStr)) else None
        if text is not None:  # GPU_CONFIG = f"{GPU_TYPE}:{N_GPUS}"
            value = text.split(":", 1)[0].rstrip("!")
            return [] if value.lower() == "any" else [(value, node, False)]
        if isinstance(node, ast.Name):
            values = self.words.flow.values.get(node.id, [])
            return self._gpus(values[0][0], depth + 1) if len(values) == 1 else []
        if isinstance(node, (ast.List, ast.Tuple)):
            found = [g for item in node.elts[:_MAX_STEPS] for g in self._gpus(item, depth + 1)]
            return [(v, n, len(found) > 1) for v, n, _ in found]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value.split(":", 1)[0].rstrip("!")
            return [] if value.lower() == "any" else [(value, node, False)]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr != "Any":
            sizes = [k.value for k in node.keywords if k.arg in ("size", "memory")]
            size = sizes[0].value if sizes and isinstance(sizes[0], ast.Constant) else None
            return [(f"{node.func.attr}-{size}" if isinstance(size, str) else node.func.attr, node, False)]
        return []

    # --- the records of one image ---------------------------------------------------------------------

    def emit(self, use: _Use) -> Iterator[Parsed]:
        scanner = Scanner(self.index, NAME, scope=use.scope)
        values: dict[str, str] = {}
        if use.image.base is not None:
            found = self._base(use.image.base, use.scope)
            if found is not None:
                yield found
        for value, node, possible in use.gpus:
            start, end = (pyast.span if isinstance(node, ast.Constant) else pyast.node_span)(self.index, node)
            yield Setting(self.index.location(start, end), "gpu", "gpu", value, use.scope, possible=possible)
        for step in use.image.steps:
            assert isinstance(step.func, ast.Attribute)
            yield from self._step(step.func.attr, step, scanner, values)
            yield from scanner.drain()
        yield from scanner.finish()

    def _base(self, call: ast.Call, scope: str) -> Image | None:
        assert isinstance(call.func, ast.Attribute)
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        start, end = pyast.node_span(self.index, call)
        where = self.index.location(start, end)
        python = kw.get("add_python") or kw.get("python_version")
        py = python.value if isinstance(python, ast.Constant) and isinstance(python.value, str) else None
        if call.func.attr in ("debian_slim", "micromamba"):
            return Image(where, f"modal:{call.func.attr}", scope, python=py, has_torch=False)
        ref = call.args[0] if call.args else kw.get("tag")
        value = self._text(ref, 0) if ref is not None else None
        if ref is None or value is None:
            return None
        a, b = (pyast.span if isinstance(ref, ast.Constant) else pyast.node_span)(self.index, ref)
        found = registry_image(value, self.index.location(a, b), scope)
        return found._replace(python=py) if py else found

    def _text(self, node: ast.expr, depth: int) -> str | None:
        """A string the file spells out: a literal, an f-string of such names (``f"nvidia/cuda:{tag}"``
        with ``tag = f"{cuda_version}-devel-ubuntu22.04"``), or a name bound to one once."""
        if depth > 8:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and depth:  # f"{GPU}:{N_GPUS}"
            return str(node.value)
        if isinstance(node, ast.Name):
            values = self.words.flow.values.get(node.id, [])
            return self._text(values[0][0], depth + 1) if len(values) == 1 else None
        if isinstance(node, ast.JoinedStr):
            parts = [
                self._text(v.value if isinstance(v, ast.FormattedValue) else v, depth + 1)
                for v in node.values
            ]
            return None if any(p is None for p in parts) else "".join(p or "" for p in parts)
        return None

    def _step(  # noqa: C901 - complexity 17: a dispatch over Modal's Image methods (env, run_commands, the pip, uv and micromamba installs and their keyword options), each made into the command words it runs
        self, method: str, call: ast.Call, scanner: Scanner, values: dict[str, str]
    ) -> Iterator[Parsed]:
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        state = State(Scope(values=dict(values)))
        start, end = pyast.node_span(self.index, call.func)
        head = [Word(w, start, end) for w in _HEADS.get(method, ())]
        if method == "env" and call.args:
            yield from self._env(call.args[0], scanner, values, None)
            return
        if (
            kw.get("gpu") is not None and method in _HEADS
        ):  # pip_install(..., gpu="A100"): a GPU while it builds
            a, b = pyast.node_span(self.index, kw["gpu"])
            yield Setting(self.index.location(a, b), "builder", "gpu", "", scanner.scope, scanner.step)
        step_env = kw.get("env")
        if step_env is not None and method in _HEADS:
            own = dict(values)
            yield from self._env(step_env, scanner, own, scanner.step + 1)
            state = State(Scope(values=own))
        if method == "run_commands":
            for arg in call.args:
                for cmd in self._strings(arg):
                    a, b = pyast.span(self.index, cmd)
                    text = str(cmd.value)
                    scanner.run(a, b, state, text=None if self.index.text[a:b] == text else text)
            return
        if not head:
            return
        words = list(head)
        if method == "pip_install_from_requirements":
            words += [Word("-r", start, end), *self._args(call.args[:1] or [kw.get("requirements_txt")])]
        elif method == "micromamba_install":
            for ch in self._list(kw.get("channels")):
                words += [Word("-c", start, end), *self.words._words(ch)]
            words += self._args(call.args)
        else:
            words += self._args(call.args)
            for item in self._list(kw.get("requirements")):  # uv_pip_install(requirements=[...])
                words += [Word("-r", start, end), *self.words._words(item)]
        for name, flag in _PIP_OPTIONS.items():
            if name in kw:
                words += [Word(flag, start, end), *self.words._words(kw[name])]
        if _true(kw.get("pre")):
            words.append(Word("--pre", start, end))
        options = kw.get("extra_options")
        if isinstance(options, ast.Constant) and isinstance(options.value, str):
            a, b = pyast.span(self.index, options)
            try:
                split = shlex.split(options.value)
            except ValueError:  # an unclosed quote: pip would be handed the words as they are
                split = options.value.split()
            words += [Word(w, a, b) for w in split]
        yield from self.words._unjudged(words, scanner.scope)
        scanner.exec_form([w for w in words if w.text != "\0"], state)

    def _env(
        self, node: ast.expr, scanner: Scanner, values: dict[str, str], until: int | None
    ) -> Iterator[Parsed]:
        """``.env({"MAX_JOBS": "4"})``: build variables from this step on (a step's ``env=``: that step)."""
        if not isinstance(node, ast.Dict):
            return
        for key, value in zip(node.keys, node.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            if isinstance(value, ast.Constant) and isinstance(value.value, (str, int)):
                text = str(value.value)
                values[key.value] = text  # for the commands' $VAR; only build variables are settings
                if key.value in BUILD_VARIABLES:
                    a, b = pyast.node_span(self.index, value)
                    where = self.index.location(a, b)
                    yield Setting(where, "env", key.value, text, scanner.scope, scanner.step, until)

    def _args(self, args: list[ast.expr | None] | list[ast.expr]) -> list[Word]:
        return [w for a in args if a is not None for w in self.words._words(a)]

    def _list(self, node: ast.expr | None) -> list[ast.expr]:
        if node is None:
            return []
        return self.words._list(node) or [node]

    def _strings(self, node: ast.expr) -> list[ast.Constant]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node]
        if isinstance(node, (ast.List, ast.Tuple)):
            return [s for item in node.elts for s in self._strings(item)]
        return []


# What Modal's builder runs for each step (modal/_image.py's build_dockerfile of each method)
_HEADS = {
    "pip_install": ("python", "-m", "pip", "install"),
    "pip_install_from_requirements": ("python", "-m", "pip", "install"),
    "uv_pip_install": ("uv", "pip", "install"),
    "apt_install": ("apt-get", "install", "-y"),
    "micromamba_install": ("micromamba", "install", "-y"),
    "run_commands": (),
}


def _true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True
