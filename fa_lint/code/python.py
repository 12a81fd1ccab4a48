"""A Python file's uses, read with ``ast`` and never imported or run.

Names are followed through plain imports (``import flash_attn as fa``, ``from flash_attn import
flash_attn_with_kvcache as f``) and through star imports of the modules whose exports are known
(``from flash_attn import *``: ``fa_lint.kb.exports``, read from each release); a name passed through
a variable, a function or ``getattr`` is not followed, and what is not followed is not reported (a
finding on a file that is fine is the worst bug). A file Python cannot parse yields nothing: it does
not run either, and a template or a Python 2 script in a repository is no concern of fa-lint's.

Code that is not a use is left out (docs/code.md, "What a test contributes"): what runs under an
expected failure (``with pytest.raises(...)``, ``with self.assertRaises(...)``: the test asserts it
fails), and, inside a test function, an implementation name handed to anything but transformers'
own loaders (a config a validator checks is data under test, not a load).

The tree is walked once (issue 41): one pass collects the imports, the script's options and the
nodes a use can be, which are judged after it, when every import is known. Leaves and operators
are not descended into, nor a node whose lines hold nothing a use is written with (``code.lines``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from fa_lint._records import NamedTuple
from fa_lint.code.fa3_imports import catches, fa3_imports
from fa_lint.code.lines import NEEDLES
from fa_lint.code.lines import named as needed
from fa_lint.code.uses import (
    ATTN,
    BATCHING_CONFIG,
    CALL,
    CUSTOM,
    KERNEL,
    KVCACHE,
    LOCAL_KERNEL,
    NOT_PAGED,
    PAGED,
    PAGED_CLASSES,
    PAGED_METHODS,
    SUBSTITUTE,
    VARLEN,
    Use,
)
from fa_lint.kb import exports
from fa_lint.model import ParseProblem
from fa_lint.syntax import pyast
from fa_lint.syntax.pyast import PythonIndex
from fa_lint.syntax.pyast import children as _children
from fa_lint.syntax.pylines import holds, word_lines

# Devices on which transformers never takes the block-table path (it needs CUDA; XPU is a fact of
# the release, judged by the rule): a model loaded onto one of these decodes without a block table.
_OFF_DEVICES = frozenset({"cpu", "mps"})
# Where the `kernels` package loads a Hub kernel, and what pins one.
_HUB_LOADERS = frozenset({"get_kernel", "LayerRepository", "get_locked_kernel", "LockedLayerRepository"})
_LOCKED = frozenset({"get_locked_kernel", "LockedLayerRepository"})
_LOCAL_LOADERS = frozenset({"get_local_kernel", "LocalLayerRepository"})
# transformers' own loaders, which take attn_implementation= and load with it: in a test function
# only these are loads (PreTrainedModel.from_pretrained/_from_config, the Auto classes' from_config).
_LOADERS = frozenset({"from_pretrained", "from_config", "_from_config"})
# unittest's context managers that assert the block raises (TestCase.assertRaises, assertRaisesRegex)
_RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})


def read(path: str, text: str) -> list[Use]:
    index = PythonIndex(path, text)
    wanted = word_lines(index, NEEDLES, names=False)  # only the lines a use can be on are walked (code.lines)
    try:
        tree = pyast.parse(index, "Python file")
    except ValueError:  # a NUL byte, on the Pythons whose parser says so with ValueError
        return []
    if isinstance(tree, ParseProblem):
        return []
    reader = _Reader(index, tree, wanted)
    if reader.renamed:
        more = set(word_lines(index, reader.renamed, names=False)).difference(wanted)
        if more:  # uses written with a renamed import's own name: walked again, with their lines
            reader = _Reader(index, tree, sorted(more.union(wanted)))
    found = list(reader.uses())
    if "flash_attn_interface" in text:  # FA3's own module (issue 42): read where the file names it
        found += fa3_imports(index, reader.unguarded)
    return sorted(found, key=lambda u: (u.location, u.kind))


class _Scope(NamedTuple):
    """Where a node is: inside a test function; under the context managers of the ``with`` blocks
    around it (an expected failure among them is judged once every import is known); inside an ``if``
    or the body of a ``try`` that catches ImportError (``fa3_imports``: an import there may not run)."""

    test: bool = False
    guards: tuple[ast.expr, ...] = ()
    guarded: bool = False


_TOP = _Scope()


class _Reader:
    def __init__(self, index: PythonIndex, tree: ast.Module, wanted: list[int] | None = None) -> None:
        self.index = index
        self.aliases: dict[str, str] = {}
        self.renamed: set[str] = set()  # names imports give with ``as`` to a name a use needs
        self.stars: list[str] = []
        self.options: list[ast.Call] = []  # argparse add_argument calls
        self.candidates: list[tuple[ast.AST, _Scope]] = []
        self.unguarded: list[ast.Import | ast.ImportFrom] = []  # imports outside every guard (_Scope)
        self.visited = 0  # nodes descended into
        self._walk(tree, wanted)
        for module in self.stars:  # an explicit import of the same name wins, as it would in most files
            for name, qualified in exports.star(module).items():
                self.aliases.setdefault(name, qualified)
        self.strings = _strings(tree)
        self.defaults = _option_defaults(self.options, self.strings)
        roots = {q.split(".")[0] for q in self.aliases.values()} | {m.split(".")[0] for m in self.stars}
        self.transformers = bool(roots & {"transformers", "trl"})

    def _walk(self, tree: ast.Module, wanted: list[int] | None) -> None:
        """Depth first, in the file's order; with ``wanted`` (code.lines), only into the nodes whose
        lines hold one of those lines (every node above a use does), and into all of an f-string
        that does: before 3.12 Python placed what an f-string holds by parsing its text again."""
        held = wanted or []
        stack: list[tuple[ast.AST, _Scope, bool]] = [(tree, _TOP, wanted is None)]
        while stack:
            node, scope, whole = stack.pop()
            self.visited += 1
            self._note(node, scope)
            inner = _inner(node, scope)
            if whole or isinstance(node, ast.JoinedStr):
                stack += [(child, s, True) for child, s in inner]
            else:
                stack += [(child, s, False) for child, s in inner if holds(held, child)]

    def _note(self, node: ast.AST, scope: _Scope) -> None:
        """What one node adds: an import's names, a script option, or a node a use can be."""
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not scope.guarded:
            self.unguarded.append(node)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._imported(node)
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                self.options.append(node)
            self.candidates.append((node, scope))
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef)):
            self.candidates.append((node, scope))

    def _imported(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                head = a.name.split(".")[0]
                self.aliases[a.asname or head] = a.name if a.asname else head
                if a.asname and needed(a.name.rsplit(".", 1)[-1]):
                    self.renamed.add(a.asname)
        elif node.module and not node.level:
            for a in node.names:
                if a.name == "*":
                    self.stars.append(node.module)
                else:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
                    if a.asname and needed(a.name):
                        self.renamed.add(a.asname)

    def at(self, node: ast.expr | ast.stmt | ast.arg) -> Use:
        start = pyast.offset(self.index, node.lineno, node.col_offset)
        end_line = node.end_lineno or node.lineno
        end = pyast.offset(self.index, end_line, node.end_col_offset or node.col_offset)
        if end_line != node.lineno:  # a call over many lines: its first line only
            end = self.index.text.find("\n", start)
            end = len(self.index.text) if end < 0 else end
        return Use("", self.index.location(start, end))

    def uses(self) -> Iterator[Use]:
        for node, scope in self.candidates:
            if any(self.expects_failure(g) for g in scope.guards):
                continue  # the test asserts this code raises: it is no use of what it names
            if isinstance(node, ast.Call):
                yield from self.call(node, scope)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.name == KVCACHE:
                    a = node.args
                    params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
                    yield self.at(node)._replace(kind=CUSTOM, name=node.name, keywords=tuple(params))
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                yield from self.assign(node)

    def expects_failure(self, guard: ast.expr) -> bool:
        """``pytest.raises(...)`` (however imported) or unittest's ``self.assertRaises(...)``."""
        if not isinstance(guard, ast.Call):
            return False
        func = guard.func
        if isinstance(func, ast.Attribute) and func.attr in _RAISES_METHODS:
            return True
        return _qualified(func, self.aliases) == "pytest.raises"

    def value(self, node: ast.expr) -> str | None:
        """A string the expression is: a literal, or a module-level name bound once to one."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.strings.get(node.id)
        return None

    def call(self, node: ast.Call, scope: _Scope) -> Iterator[Use]:
        qualified = _qualified(node.func, self.aliases)
        keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
        root = qualified.split(".")[0] if qualified else ""
        if root == "flash_attn" and not qualified.startswith("flash_attn.cute"):  # type: ignore[union-attr]
            function = qualified.rsplit(".", 1)[-1]  # type: ignore[union-attr]
            if function in (KVCACHE, VARLEN):
                yield self.at(node)._replace(kind=CALL, name=function, keywords=tuple(keywords))
        if root == "kernels":
            yield from self.kernel(node, qualified.rsplit(".", 1)[-1], keywords)  # type: ignore[union-attr]
        yield from self.substitute(node)
        yield from self.attention(node, keywords, scope)
        if self.transformers:
            yield from self.paged(node, qualified, keywords)

    def substitute(self, node: ast.Call) -> Iterator[Use]:
        """``setattr(flash_attn, "flash_attn_with_kvcache", f)``."""
        func = node.func
        if isinstance(func, ast.Name) and func.id == "setattr" and len(node.args) >= 2:
            target = _qualified(node.args[0], self.aliases)
            if target and target.split(".")[0] == "flash_attn" and self.value(node.args[1]) == KVCACHE:
                yield self.at(node)._replace(kind=SUBSTITUTE, name=f"{target}.{KVCACHE}")

    def attention(self, node: ast.Call, keywords: dict[str, ast.expr], scope: _Scope) -> Iterator[Use]:
        """``attn_implementation=NAME`` in a call (in a test function: only a loader's), and
        ``model.set_attn_implementation(NAME)``."""
        func = node.func
        last = _last(func)
        if "attn_implementation" in keywords and (not scope.test or last in _LOADERS):
            given = keywords["attn_implementation"]
            name, detail = self.value(given), "attn_implementation="
            if name is None and isinstance(given, ast.Attribute) and given.attr in self.defaults:
                # attn_implementation=args.attn: the default of the script's own --attn option
                name, flag = self.defaults[given.attr]
                detail = f"attn_implementation= (the default of {flag})"
            if name is not None:
                yield self.at(node)._replace(kind=ATTN, name=name, detail=detail)
        if last == "set_attn_implementation" and isinstance(func, ast.Attribute) and node.args:
            name = self.value(node.args[0])
            if name is not None:
                yield self.at(node)._replace(kind=ATTN, name=name, detail="set_attn_implementation()")

    def paged(self, node: ast.Call, qualified: str | None, keywords: dict[str, ast.expr]) -> Iterator[Use]:
        """The paged path, and what keeps it off the block table (a file that imports transformers)."""
        func = node.func
        last = _last(func)
        if isinstance(func, ast.Attribute) and func.attr in PAGED_METHODS:
            yield self.at(node)._replace(kind=PAGED, detail=f"{func.attr}()")
        elif last in PAGED_CLASSES and qualified and qualified.split(".")[0] == "transformers":
            yield self.at(node)._replace(kind=PAGED, detail=f"{last}()")
        if self.value(keywords.get("cache_implementation", ast.Constant(None))) == "paged":
            yield self.at(node)._replace(kind=PAGED, detail='cache_implementation="paged"')
        paged_flag = keywords.get("use_transformers_paged")
        if isinstance(paged_flag, ast.Constant) and paged_flag.value is True:
            yield self.at(node)._replace(kind=PAGED, detail="use_transformers_paged=True")
        blocks = keywords.get("max_blocks_per_request")
        if last == BATCHING_CONFIG and isinstance(blocks, ast.Constant) and blocks.value == 0:
            yield self.at(node)._replace(kind=NOT_PAGED, detail="max_blocks_per_request=0")
        if last == "from_pretrained":
            yield from self.off_device(node, keywords)

    def off_device(self, node: ast.Call, keywords: dict[str, ast.expr]) -> Iterator[Use]:
        for key in ("device_map", "device"):
            device = self.value(keywords[key]) if key in keywords else None
            if device is not None and device.split(":")[0] in _OFF_DEVICES:
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
        given = tuple(k for k in ("revision", "version") if k in keywords and not _is_none(keywords[k]))
        yield self.at(node)._replace(
            kind=KERNEL, name=repo, pinned=pinned, detail=f"{last}()", keywords=given, args=len(node.args)
        )

    def assign(self, node: ast.Assign | ast.AnnAssign) -> Iterator[Use]:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        for target in targets:
            if isinstance(target, ast.Subscript) and _qualified(target.value, self.aliases) == "sys.modules":
                key = self.value(target.slice)
                if key is not None and key.split(".")[0] == "flash_attn":
                    yield self.at(node)._replace(kind=SUBSTITUTE, name=key, detail="sys.modules")
            elif isinstance(target, ast.Attribute):
                yield from self._set_attribute(node, target, value)
            elif isinstance(target, ast.Name) and target.id == "attn_implementation" and value is not None:
                # a dataclass or config field's default: attn_implementation: str = "flash_attention_2"
                if isinstance(value, ast.Call) and _is_field(value.func, self.aliases):
                    value = next((k.value for k in value.keywords if k.arg == "default"), ast.Constant(None))
                name = self.value(value)
                if name is not None and isinstance(node, ast.AnnAssign):
                    yield self.at(node)._replace(kind=ATTN, name=name, detail="a field's default")

    def _set_attribute(
        self, node: ast.Assign | ast.AnnAssign, target: ast.Attribute, value: ast.expr | None
    ) -> Iterator[Use]:
        """``flash_attn.X.flash_attn_with_kvcache = f`` (a substitute), ``x.attn_implementation = "..."``."""
        owner = _qualified(target.value, self.aliases)
        if owner and owner.split(".")[0] == "flash_attn" and target.attr == KVCACHE:
            yield self.at(node)._replace(kind=SUBSTITUTE, name=f"{owner}.{KVCACHE}")
        elif target.attr in ("attn_implementation", "_attn_implementation") and value is not None:
            name = self.value(value)
            if name is not None:
                yield self.at(node)._replace(kind=ATTN, name=name, detail=f".{target.attr} =")


def _inner(node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
    """``node``'s children (``pyast.children``) with the scope each is in."""
    if isinstance(node, (ast.With, ast.AsyncWith)):
        inner = scope._replace(guards=(*scope.guards, *(i.context_expr for i in node.items)))
        return [(item, scope) for item in node.items] + [(child, inner) for child in node.body]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
        scope = scope._replace(test=True)  # pytest's and unittest's default test-function prefix
    elif not scope.guarded:
        body = _guarded(node)
        if body:
            guarded = scope._replace(guarded=True)
            return [(child, guarded if id(child) in body else scope) for child in _children(node)]
    return [(child, scope) for child in _children(node)]


def _guarded(node: ast.AST) -> set[int]:
    """The statements an ``if`` guards (its branches), or a ``try`` whose handlers catch ImportError
    (its body), by id; none for any other node."""
    if isinstance(node, ast.If):
        return {id(s) for s in (*node.body, *node.orelse)}
    if isinstance(node, ast.Try) and any(map(catches, node.handlers)):
        return {id(s) for s in node.body}
    return set()


def _option_defaults(calls: list[ast.Call], strings: dict[str, str]) -> dict[str, tuple[str, str]]:
    """argparse options with a string default: their ``args`` attribute -> (default, flag)."""
    found: dict[str, tuple[str, str]] = {}
    for node in calls:
        if not node.args:
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        value = _default(keywords.get("default"), strings)
        long = [f for f in flags if f.startswith("--")] or flags
        if value is None or not long:
            continue
        dest = keywords.get("dest")
        attr = dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else None
        found[attr or long[0].lstrip("-").replace("-", "_")] = (value, long[0])
    return found


def _default(default: ast.expr | None, strings: dict[str, str]) -> str | None:
    if isinstance(default, ast.Constant) and isinstance(default.value, str):
        return default.value
    return strings.get(default.id) if isinstance(default, ast.Name) else None


def _is_field(func: ast.expr, aliases: dict[str, str]) -> bool:
    """``field`` or ``dataclasses.field`` (pydantic's ``Field`` too)."""
    named = _qualified(func, aliases) or (func.id if isinstance(func, ast.Name) else "")
    return named.rsplit(".", 1)[-1] in ("field", "Field")


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


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


def _last(func: ast.expr) -> str | None:
    """The function or method's own name, whatever it is called on (a model, a local class)."""
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
