"""A Python file's uses, read with ``ast`` and never imported or run.

Names are followed through plain imports only (``import flash_attn as fa``, ``from flash_attn import
flash_attn_with_kvcache as f``): a name passed through a variable, a function or ``getattr`` is not
followed, and what is not followed is not reported (a finding on a file that is fine is the worst
bug). A file Python cannot parse yields nothing: it does not run either, and a template or a Python 2
script in a repository is no concern of fa-lint's.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from fa_lint.code.uses import (
    ATTN,
    CALL,
    CUSTOM,
    KERNEL,
    LOCAL_KERNEL,
    NOT_PAGED,
    PAGED,
    SUBSTITUTE,
    Use,
)
from fa_lint.model import ParseProblem
from fa_lint.syntax import pyast
from fa_lint.syntax.pyast import PythonIndex

KVCACHE = "flash_attn_with_kvcache"
VARLEN = "flash_attn_varlen_func"
# Methods only transformers' models and generation classes have under these names (in a file that
# imports transformers or TRL): each decodes through continuous batching.
_PAGED_METHODS = frozenset(
    {"generate_batch", "init_continuous_batching", "continuous_batching_context_manager"}
)
_PAGED_CLASSES = frozenset({"ContinuousBatchingManager"})
# Devices on which transformers never takes the block-table path (it needs CUDA; XPU is a fact of
# the release, judged by the rule): a model loaded onto one of these decodes without a block table.
_OFF_DEVICES = frozenset({"cpu", "mps"})
# Where the `kernels` package loads a Hub kernel, and what pins one.
_HUB_LOADERS = frozenset({"get_kernel", "LayerRepository", "get_locked_kernel", "LockedLayerRepository"})
_LOCKED = frozenset({"get_locked_kernel", "LockedLayerRepository"})
_LOCAL_LOADERS = frozenset({"get_local_kernel", "LocalLayerRepository"})


def read(path: str, text: str) -> list[Use]:
    index = PythonIndex(path, text)
    try:
        tree = pyast.parse(index, "Python file")
    except ValueError:  # a NUL byte, on the Pythons whose parser says so with ValueError
        return []
    if isinstance(tree, ParseProblem):
        return []
    found = list(_Reader(index, tree).uses())
    if "flash_attn_interface" in text:  # FA3's own module (issue 42): read where the file names it
        from fa_lint.code.fa3_imports import fa3_imports

        found += fa3_imports(index, tree)
    return sorted(found, key=lambda u: (u.location, u.kind))


class _Reader:
    def __init__(self, index: PythonIndex, tree: ast.Module) -> None:
        self.index = index
        self.tree = tree
        self.aliases = _aliases(tree)
        self.strings = _strings(tree)
        self.defaults = _option_defaults(tree, self.strings)
        roots = {q.split(".")[0] for q in self.aliases.values()}
        self.transformers = bool(roots & {"transformers", "trl"})

    def at(self, node: ast.expr | ast.stmt | ast.arg) -> Use:
        start = pyast.offset(self.index, node.lineno, node.col_offset)
        end_line = node.end_lineno or node.lineno
        end = pyast.offset(self.index, end_line, node.end_col_offset or node.col_offset)
        if end_line != node.lineno:  # a call over many lines: its first line only
            end = self.index.text.find("\n", start)
            end = len(self.index.text) if end < 0 else end
        return Use("", self.index.location(start, end))

    def uses(self) -> Iterator[Use]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                yield from self.call(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == KVCACHE:
                a = node.args
                params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
                yield self.at(node)._replace(kind=CUSTOM, name=node.name, keywords=tuple(params))
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                yield from self.assign(node)

    def value(self, node: ast.expr) -> str | None:
        """A string the expression is: a literal, or a module-level name bound once to one."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.strings.get(node.id)
        return None

    def call(self, node: ast.Call) -> Iterator[Use]:  # noqa: C901 - complexity 19, to split or justify (issue 45)
        func = node.func
        qualified = _qualified(func, self.aliases)
        # the function or method's own name, whatever it is called on (a model, a local class)
        last = (
            func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        )
        keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
        if (
            qualified
            and qualified.split(".")[0] == "flash_attn"
            and not qualified.startswith("flash_attn.cute")
        ):
            function = qualified.rsplit(".", 1)[-1]
            if function in (KVCACHE, VARLEN):
                yield self.at(node)._replace(kind=CALL, name=function, keywords=tuple(keywords))
        if qualified and qualified.split(".")[0] == "kernels":
            yield from self.kernel(node, qualified.rsplit(".", 1)[-1], keywords)
        if isinstance(func, ast.Name) and func.id == "setattr" and len(node.args) >= 2:
            target = _qualified(node.args[0], self.aliases)
            if target and target.split(".")[0] == "flash_attn" and self.value(node.args[1]) == KVCACHE:
                yield self.at(node)._replace(kind=SUBSTITUTE, name=f"{target}.{KVCACHE}")
        if "attn_implementation" in keywords:
            given = keywords["attn_implementation"]
            name, detail = self.value(given), "attn_implementation="
            if name is None and isinstance(given, ast.Attribute) and given.attr in self.defaults:
                # attn_implementation=args.attn: the default of the script's own --attn option
                name, flag = self.defaults[given.attr]
                detail = f"attn_implementation= (the default of {flag})"
            if name is not None:
                yield self.at(node)._replace(kind=ATTN, name=name, detail=detail)
        if isinstance(func, ast.Attribute) and func.attr == "set_attn_implementation" and node.args:
            name = self.value(node.args[0])
            if name is not None:
                yield self.at(node)._replace(kind=ATTN, name=name, detail="set_attn_implementation()")
        if not self.transformers:
            return
        if isinstance(func, ast.Attribute) and func.attr in _PAGED_METHODS:
            yield self.at(node)._replace(kind=PAGED, detail=f"{func.attr}()")
        elif last in _PAGED_CLASSES and qualified and qualified.split(".")[0] == "transformers":
            yield self.at(node)._replace(kind=PAGED, detail=f"{last}()")
        if self.value(keywords.get("cache_implementation", ast.Constant(None))) == "paged":
            yield self.at(node)._replace(kind=PAGED, detail='cache_implementation="paged"')
        paged_flag = keywords.get("use_transformers_paged")
        if isinstance(paged_flag, ast.Constant) and paged_flag.value is True:
            yield self.at(node)._replace(kind=PAGED, detail="use_transformers_paged=True")
        blocks = keywords.get("max_blocks_per_request")
        if last == "ContinuousBatchingConfig" and isinstance(blocks, ast.Constant) and blocks.value == 0:
            yield self.at(node)._replace(kind=NOT_PAGED, detail="max_blocks_per_request=0")
        for key in ("device_map", "device"):
            device = self.value(keywords[key]) if key in keywords else None
            if last == "from_pretrained" and device is not None and device.split(":")[0] in _OFF_DEVICES:
                yield self.at(node)._replace(kind=NOT_PAGED, detail=f"{key}={device!r}")

    def kernel(self, node: ast.Call, last: str, keywords: dict[str, ast.expr]) -> Iterator[Use]:
        repo = self.value(node.args[0]) if node.args else None
        if repo is None and "repo_id" in keywords:
            repo = self.value(keywords["repo_id"])
        if last in _LOCAL_LOADERS:
            yield self.at(node)._replace(kind=LOCAL_KERNEL, name=repo or "", detail=f"{last}()")
            return
        if last not in _HUB_LOADERS or repo is None:
            return  # a repository named by a variable: which one, and whether pinned, is not read
        pinned = (
            last in _LOCKED
            or len(node.args) > 1
            or any(k in keywords and not _is_none(keywords[k]) for k in ("revision", "version"))
        )
        yield self.at(node)._replace(kind=KERNEL, name=repo, pinned=pinned, detail=f"{last}()")

    def assign(self, node: ast.Assign | ast.AnnAssign) -> Iterator[Use]:  # noqa: C901 - complexity 11, to split or justify (issue 45)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        for target in targets:
            if isinstance(target, ast.Subscript) and _qualified(target.value, self.aliases) == "sys.modules":
                key = self.value(target.slice)
                if key is not None and key.split(".")[0] == "flash_attn":
                    yield self.at(node)._replace(kind=SUBSTITUTE, name=key, detail="sys.modules")
            elif isinstance(target, ast.Attribute):
                owner = _qualified(target.value, self.aliases)
                if owner and owner.split(".")[0] == "flash_attn" and target.attr == KVCACHE:
                    yield self.at(node)._replace(kind=SUBSTITUTE, name=f"{owner}.{KVCACHE}")
                elif target.attr in ("attn_implementation", "_attn_implementation") and value is not None:
                    name = self.value(value)
                    if name is not None:
                        yield self.at(node)._replace(kind=ATTN, name=name, detail=f".{target.attr} =")
            elif isinstance(target, ast.Name) and target.id == "attn_implementation" and value is not None:
                # a dataclass or config field's default: attn_implementation: str = "flash_attention_2"
                if isinstance(value, ast.Call) and _is_field(value.func, self.aliases):
                    value = next((k.value for k in value.keywords if k.arg == "default"), ast.Constant(None))
                name = self.value(value)
                if name is not None and isinstance(node, ast.AnnAssign):
                    yield self.at(node)._replace(kind=ATTN, name=name, detail="a field's default")


def _option_defaults(tree: ast.Module, strings: dict[str, str]) -> dict[str, tuple[str, str]]:
    """argparse options with a string default: their ``args`` attribute -> (default, flag)."""
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "add_argument" or not node.args:
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        default = keywords.get("default")
        value = (
            default.value
            if isinstance(default, ast.Constant) and isinstance(default.value, str)
            else strings.get(default.id)
            if isinstance(default, ast.Name)
            else None
        )
        long = [f for f in flags if f.startswith("--")] or flags
        if value is None or not long:
            continue
        dest = keywords.get("dest")
        attr = dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else None
        found[attr or long[0].lstrip("-").replace("-", "_")] = (value, long[0])
    return found


def _is_field(func: ast.expr, aliases: dict[str, str]) -> bool:
    """``field`` or ``dataclasses.field`` (pydantic's ``Field`` too)."""
    named = _qualified(func, aliases) or (func.id if isinstance(func, ast.Name) else "")
    return named.rsplit(".", 1)[-1] in ("field", "Field")


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Each name an absolute import binds, to the dotted name it stands for."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    found[a.asname] = a.name
                else:
                    head = a.name.split(".")[0]
                    found[head] = head
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                if a.name != "*":
                    found[a.asname or a.name] = f"{node.module}.{a.name}"
    return found


def _strings(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound once, to one string (ATTN = "flash_attention_2")."""
    seen: dict[str, str | None] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            value = node.value.value if isinstance(node.value, ast.Constant) else None
            seen[name] = value if isinstance(value, str) and name not in seen else None
    return {k: v for k, v in seen.items() if v is not None}


def _qualified(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """The dotted name an expression stands for, through the file's imports (None: not one)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    base = aliases.get(node.id)
    if base is None:
        return None
    return ".".join([base, *reversed(parts)])
