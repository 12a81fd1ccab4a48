"""Import direction between layers, and a static mode that never loads heavy packages."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "fa_lint"
# A module may import its own layer and the layers below, never one above.
LAYERS = {
    "fa_lint": 0,
    "fa_lint.model": 0,
    "fa_lint._gc": 0,
    "fa_lint._compat": 0,
    "fa_lint.kb": 1,
    "fa_lint.sources": 2,
    "fa_lint.resolve": 2,
    "fa_lint.discover": 3,
    "fa_lint.environments": 3,
    "fa_lint.toolchain": 3,
    "fa_lint.rules": 4,
    "fa_lint.decide": 5,
    "fa_lint.engine": 6,
    "fa_lint.report": 7,
    "fa_lint.config": 7,
    "fa_lint.bots": 7,
    "fa_lint.releases": 7,
    "fa_lint.fix": 7,
    "fa_lint.newfromrev": 7,
    "fa_lint.cli": 8,
    "fa_lint.__main__": 9,
    "fa_lint.verify": 10,
}
HEAVY = ("torch", "transformers", "flash_attn", "flash_attn_interface")


def _layer(module: str) -> int:
    parts = module.split(".")
    while parts:
        name = ".".join(parts)
        if name in LAYERS and (name != "fa_lint" or module == "fa_lint"):
            return LAYERS[name]
        parts.pop()
    raise KeyError(module)


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(REPO).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        out.append((name, path))
    return out


def _runtime_imports(tree: ast.Module, package: str) -> list[tuple[str, int, bool]]:
    """(module, line, at module level) for imports outside ``if TYPE_CHECKING:`` blocks."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    top = {id(n) for n in tree.body}
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno, id(node) in top) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base])
            found.append((base, node.lineno, id(node) in top))
    return found


@pytest.mark.parametrize(("module", "path"), _modules(), ids=[m for m, _ in _modules()])
def test_no_upward_imports(module: str, path: Path) -> None:
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    mine = _layer(module)
    for imported, line, top_level in _runtime_imports(tree, package):
        if imported.split(".")[0] in HEAVY:
            assert module.startswith("fa_lint.verify") and not top_level, f"{path}:{line} imports {imported}"
        if not imported.startswith("fa_lint"):
            continue
        if module == "fa_lint.cli" and imported.startswith("fa_lint.verify") and not top_level:
            continue  # the CLI loads verify lazily, only for `fa-lint verify`
        assert _layer(imported) <= mine, f"{path}:{line}: {module} (layer {mine}) imports {imported}"


def test_static_mode_imports_nothing_heavy(tmp_path: Path) -> None:
    code = (
        "import sys, fa_lint.cli\n"
        "early = [m for m in ('pip_requirements_parser', 'fa_lint.sources', 'fa_lint.fix') if m in sys.modules]\n"
        "assert not early, f'imported at start-up: {early}'\n"
        f"fa_lint.cli.main([{str(REPO / 'examples/demo')!r}, '--format', 'json'])\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_static_mode_never_touches_the_network(tmp_path: Path) -> None:
    code = (
        "import socket\n"
        "def deny(*a, **k): raise AssertionError('network used')\n"
        "socket.socket.connect = deny; socket.create_connection = deny; socket.getaddrinfo = deny\n"
        "import fa_lint.cli\n"
        "(tmp := __import__('pathlib').Path('requirements.txt')).write_text(\n"
        "    '-r https://example.com/r.txt\\n-c http://example.com/c.txt\\nflash-attn==2.4.2\\n')\n"
        "raise SystemExit(fa_lint.cli.main(['requirements.txt']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "FAL010" in proc.stdout and "FAL001" in proc.stdout
