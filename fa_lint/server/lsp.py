"""The language server: the open documents checked as they are edited, with the rest of their project
read from disk, exactly as ``fa-lint ROOT`` run at the project's root would check them.

Each change schedules one check of every project with an open document, a moment after the last
keystroke (``DELAY``), in a worker thread so that the server keeps answering; the open documents'
unsaved texts stand in for their files (``engine.check``'s ``given``), so a requirements file being
edited changes the findings of the Dockerfile that installs it. The findings are published for the
open documents only, each with the version it was checked at.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from fa_lint import __version__
from fa_lint._compat import chdir
from fa_lint.server import documents

if TYPE_CHECKING:
    from fa_lint.engine import Report, Settings
    from fa_lint.model import Finding

DELAY = 0.3  # seconds after the last change before a check: one check for a burst of keystrokes


class Server(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "fa-lint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental
        )
        self.findings: dict[str, list[Finding]] = {}  # by a document's path, from the last check
        self.settings: dict[str, Settings] = {}  # by project root, from the last check
        self._timer: asyncio.TimerHandle | None = None
        self._lock = threading.Lock()  # one check at a time: a check changes the working folder

    # --- the open documents -----------------------------------------------------------------------

    def opened(self) -> dict[str, tuple[str, str, int | None]]:
        """Each open document's path: its URI, unsaved text and version."""
        out = {}
        for uri, doc in self.workspace.text_documents.items():
            path = to_fs_path(uri)
            if path is not None:
                out[os.path.normpath(path)] = (uri, doc.source, doc.version)
        return out

    def lines(self, path: str) -> list[str]:
        """A file's lines as the editor has them, else as the disk has them."""
        doc = self.opened().get(path)
        if doc is not None:
            return doc[1].split("\n")
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read().split("\n")
        except OSError:
            return []

    def to_client(self, lines: Sequence[str], rng: types.Range) -> types.Range:
        return self.workspace.position_codec.range_to_client_units(list(lines), rng)

    def root(self, path: str) -> str:
        """The project a document belongs to: the innermost workspace folder that holds it, else its
        repository's top (``project_root``), where ``fa-lint .`` would be run."""
        from fa_lint.files.project import project_root

        folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()]
        holding = [f for f in folders if f and os.path.commonpath([f, path]) == os.path.normpath(f)]
        return max(holding, key=len) if holding else project_root(path)

    # --- checking ------------------------------------------------------------------------------------

    def schedule(self, delay: float = DELAY) -> None:
        loop = asyncio.get_running_loop()
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_later(delay, lambda: loop.create_task(self._check_and_publish()))

    async def _check_and_publish(self) -> None:
        opened = self.opened()
        try:
            found = await asyncio.get_running_loop().run_in_executor(None, self.check, opened)
        except Exception as exc:  # a bug in fa-lint: say so, keep serving
            self.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Error, message=f"fa-lint: internal error: {exc!r}"
                )
            )
            return
        self.findings = found
        for path, (uri, text, version) in opened.items():
            lines = text.split("\n")
            diags = [documents.diagnostic(f, lines, self.to_client) for f in found.get(path, [])]
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version)
            )

    def check(self, opened: dict[str, tuple[str, str, int | None]]) -> dict[str, list[Finding]]:
        """Every project with an open document, checked whole with the unsaved texts; the findings
        by path."""
        given = {path: text.encode("utf-8") for path, (_, text, _) in opened.items()}
        found: dict[str, list[Finding]] = {}
        for root in sorted({self.root(path) for path in opened}):
            for f in self._check_project(root, given).findings:
                found.setdefault(os.path.normpath(f.location.path), []).append(f)
        return found

    def _check_project(
        self, root: str, given: dict[str, bytes], only: str | None = None, noqa: bool = True
    ) -> Report:
        from fa_lint import engine
        from fa_lint.cli.args import parser
        from fa_lint.cli.lint import prepared

        with self._lock, chdir(root):
            if only is None:
                self.settings[root] = prepared(parser().parse_args([root]), [root])[0]
            settings = self.settings.get(root) or prepared(parser().parse_args([root]), [root])[0]
            return engine.check([only or root], settings._replace(noqa=noqa), given)

    # --- code actions and hover --------------------------------------------------------------------

    def actions(self, uri: str, rng: types.Range) -> list[types.CodeAction]:
        path = os.path.normpath(to_fs_path(uri) or "")
        lines = self.lines(path)
        under = [
            f
            for f in self.findings.get(path, [])
            if documents.overlaps(self.to_client(lines, documents.span(f.location)), rng)
        ]
        out = [
            documents.fix_action(f, f.fix, self._uri, self.lines, self.to_client)
            for f in under
            if f.fix is not None
        ]
        return out + self._noqa(path, uri, under, lines)

    def _uri(self, path: str) -> str:
        return from_fs_path(path) or path

    def _noqa(self, path: str, uri: str, under: list[Finding], lines: list[str]) -> list[types.CodeAction]:
        """A ``# noqa`` comment for each line with findings under the cursor, made and checked as
        ``--add-noqa`` makes and checks it (the file must read the same but for those findings)."""
        from fa_lint.cli.addnoqa import add

        opened = self.opened()
        given = {p: text.encode("utf-8") for p, (_, text, _) in opened.items()}
        root = self.root(path)
        written: dict[str, bytes] = {}

        def recheck(p: str, data: bytes, noqa: bool) -> Report:
            return self._check_project(root, {**given, p: data}, only=p, noqa=noqa)

        def read(p: str) -> bytes:
            if p in given:
                return given[p]
            with open(p, "rb") as fh:
                return fh.read()

        add(under, recheck, written.__setitem__, read)
        new = written.get(path)
        if new is None:
            return []
        new_lines = new.decode("utf-8-sig").split("\n")
        out = []
        for n in sorted({f.location.line for f in under}):
            if n <= len(lines) and n <= len(new_lines) and new_lines[n - 1] != lines[n - 1]:
                codes = {f.code for f in under if f.location.line == n}
                old, changed = lines[n - 1].rstrip("\r"), new_lines[n - 1].rstrip("\r")
                out.append(documents.noqa_action(codes, uri, n, old, changed, lines, self.to_client))
        return out

    def hover(self, uri: str, pos: types.Position) -> types.Hover | None:
        from fa_lint.rules import page

        path = os.path.normpath(to_fs_path(uri) or "")
        lines = self.lines(path)
        point = types.Range(start=pos, end=pos)
        codes = sorted(
            {
                f.code
                for f in self.findings.get(path, [])
                if documents.overlaps(self.to_client(lines, documents.span(f.location)), point)
            }
        )
        if not codes:
            return None
        return documents.hover([page(code) for code in codes])


def build() -> Server:
    server = Server()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Server, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Server, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule()

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Server, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Server, params: types.DidCloseTextDocumentParams) -> None:
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )
        ls.schedule()  # the file on disk now stands for it in the others' checks

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls: Server, params: types.CodeActionParams) -> list[types.CodeAction]:
        return ls.actions(params.text_document.uri, params.range)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: Server, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params.text_document.uri, params.position)

    return server


def serve(**_: Any) -> None:
    build().start_io()
