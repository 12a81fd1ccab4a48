"""``fa-lint server`` driven by a real LSP client (pygls' ``LanguageClient``) over a real process's standard
input and output: initialize, open and edit documents, receive published diagnostics, ask for code actions
and hover, shut down. What each answer must hold is judged from the files (the same findings
``fa-lint --format json`` reports on them), never from the server's own output."""

from __future__ import annotations

import asyncio
import io
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from fa_lint.cli import main
from tests.conftest import REPO

WAIT = 120.0  # seconds for an answer: a loaded 2-core CI machine checks slowly


class Session:
    """One server process and the client talking to it; ``diagnostics`` waits for the next publication
    for a document."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.published: dict[str, asyncio.Queue[types.PublishDiagnosticsParams]] = {}
        self.version = 1

    def _queue(self, uri: str) -> asyncio.Queue[types.PublishDiagnosticsParams]:
        return self.published.setdefault(uri, asyncio.Queue())

    async def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        return (await asyncio.wait_for(self._queue(uri).get(), WAIT)).diagnostics

    def open(self, path: Path, text: str) -> str:
        uri = from_fs_path(str(path))
        assert uri is not None
        item = types.TextDocumentItem(uri=uri, language_id="plaintext", version=self.version, text=text)
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        return uri

    def change(self, uri: str, text: str) -> None:
        self.version += 1
        doc = types.VersionedTextDocumentIdentifier(uri=uri, version=self.version)
        whole = types.TextDocumentContentChangeWholeDocument(text=text)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(text_document=doc, content_changes=[whole])
        )


def _run(root: Path, body: Callable[[Session], Awaitable[None]]) -> None:
    async def go() -> None:
        client = LanguageClient("fa-lint-tests", "1")
        session = Session(client)

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            session._queue(params.uri).put_nowait(params)

        await client.start_io(sys.executable, "-m", "fa_lint", "server", cwd=str(REPO))
        try:
            root_uri = from_fs_path(str(root))
            assert root_uri is not None
            await asyncio.wait_for(
                client.initialize_async(
                    types.InitializeParams(
                        capabilities=types.ClientCapabilities(),
                        workspace_folders=[types.WorkspaceFolder(uri=root_uri, name="project")],
                    )
                ),
                WAIT,
            )
            client.initialized(types.InitializedParams())
            await body(session)
            await asyncio.wait_for(client.shutdown_async(None), WAIT)
            client.exit(None)
        finally:
            # pygls' stop() waits for the server to end: after a failed assertion no exit was sent
            server = client._server
            if server is not None and server.returncode is None:
                try:
                    await asyncio.wait_for(server.wait(), 10)
                except TimeoutError:
                    server.kill()
            await client.stop()

    asyncio.run(go())


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_diagnostics_follow_the_unsaved_text(tmp_path: Path) -> None:
    _write(tmp_path, {"requirements.txt": "torch==2.4.1\nflash-attn==2.4.2\n"})

    async def body(s: Session) -> None:
        uri = s.open(tmp_path / "requirements.txt", "torch==2.4.1\nflash-attn==2.4.2\n")
        (d,) = [d for d in await s.diagnostics(uri) if d.code == "FAL001"]
        assert d.severity == types.DiagnosticSeverity.Error and d.source == "fa-lint"
        assert (d.range.start.line, d.range.start.character) == (1, 0)
        assert (d.range.end.line, d.range.end.character) == (1, len("flash-attn==2.4.2"))
        assert d.code_description is not None and d.code_description.href.endswith("/FAL001.md")
        # edited, not saved: the file on disk still pins 2.4.2, the editor's text no longer does
        s.change(uri, "torch==2.4.1\nflash-attn>=2.6.3\n")
        assert [d.code for d in await s.diagnostics(uri)] == []

    _run(tmp_path, body)


def test_the_projects_other_files_come_from_disk(tmp_path: Path) -> None:
    # the configuration beside it, never opened, governs the open document as it governs `fa-lint .`
    _write(tmp_path, {"pyproject.toml": '[tool.fa-lint]\nignore = ["FAL001"]\n', "sub/requirements.txt": ""})

    async def body(s: Session) -> None:
        uri = s.open(tmp_path / "sub" / "requirements.txt", "flash-attn==2.4.2\nflash-attn>=2.0\n")
        assert [d.code for d in await s.diagnostics(uri)] == ["FAL002"]

    _run(tmp_path, body)


def test_positions_are_in_the_clients_units(tmp_path: Path) -> None:
    # the client offers no position encoding: UTF-16, where the emoji is two units
    script = 'echo "\U0001f600" && pip install flash-attn==2.4.2\n'
    _write(tmp_path, {"install.sh": script})

    async def body(s: Session) -> None:
        uri = s.open(tmp_path / "install.sh", script)
        (d,) = [d for d in await s.diagnostics(uri) if d.code == "FAL001"]
        at = script.index("flash-attn")
        assert d.range.start.character == len(script[:at].encode("utf-16-le")) // 2 == at + 1

    _run(tmp_path, body)


def test_code_actions_offer_the_fix_and_a_noqa_comment(tmp_path: Path) -> None:
    text = "flash-attn>=2.0\n"
    _write(tmp_path, {"requirements.txt": text})

    async def body(s: Session) -> None:
        uri = s.open(tmp_path / "requirements.txt", text)
        (d,) = await s.diagnostics(uri)
        assert d.code == "FAL002"
        actions = await asyncio.wait_for(
            s.client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=d.range,
                    context=types.CodeActionContext(diagnostics=[d]),
                )
            ),
            WAIT,
        )
        assert actions is not None
        by_title = {a.title: a for a in actions if isinstance(a, types.CodeAction)}
        fixes = [a for t, a in by_title.items() if t.startswith("FAL002")]
        noqa = [a for t, a in by_title.items() if "noqa" in t]
        assert len(fixes) == 1 and len(noqa) == 1
        (fix_edit,) = _edits(fixes[0], uri)
        assert _apply(text, fix_edit) == "flash-attn>=2.5.0\n"  # what `fa-lint --fix` writes
        assert fixes[0].is_preferred
        (noqa_edit,) = _edits(noqa[0], uri)
        assert _apply(text, noqa_edit) == "flash-attn>=2.0  # noqa: FAL002\n"

    _run(tmp_path, body)


def test_hover_shows_the_rule_page(tmp_path: Path) -> None:
    _write(tmp_path, {"requirements.txt": "flash-attn==2.4.2\n"})

    async def body(s: Session) -> None:
        uri = s.open(tmp_path / "requirements.txt", "flash-attn==2.4.2\n")
        await s.diagnostics(uri)
        on = types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 3)
        )
        hover = await asyncio.wait_for(s.client.text_document_hover_async(on), WAIT)
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        assert hover.contents.value.startswith("# FAL001 `paged-kv-missing`")
        off = types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(5, 0)
        )
        assert await asyncio.wait_for(s.client.text_document_hover_async(off), WAIT) is None

    _run(tmp_path, body)


def test_closing_a_document_clears_its_diagnostics(tmp_path: Path) -> None:
    _write(tmp_path, {"requirements.txt": "flash-attn==2.4.2\n"})

    async def body(s: Session) -> None:
        uri = s.open(tmp_path / "requirements.txt", "flash-attn==2.4.2\n")
        assert await s.diagnostics(uri)
        s.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert list(await s.diagnostics(uri)) == []

    _run(tmp_path, body)


def test_without_the_server_extra_it_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pygls.lsp.server", None)  # an import of it raises ImportError
    monkeypatch.delitem(sys.modules, "fa_lint.server.lsp", raising=False)
    out, err = io.StringIO(), io.StringIO()
    assert main(["server"], out=out, err=err) == 2
    assert "pip install 'fa-lint[server]'" in err.getvalue()


def _edits(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    assert action.edit is not None and action.edit.changes is not None
    return list(action.edit.changes[uri])


def _apply(text: str, edit: types.TextEdit) -> str:
    lines = text.split("\n")

    def offset(p: types.Position) -> int:
        return sum(len(line) + 1 for line in lines[: p.line]) + p.character

    return text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
