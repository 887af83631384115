"""Memory where the code is, through a real language server (issue 24 item 5): a code lens per cited range
with the count of memories and its command, a hover inside a cited range with each memory, the lens's command
rendering the memories, ``mnemon/citations/review`` and ``mnemon/citations/reanchor`` (bad input named, nothing
written)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tests.gitrepo import commit_files
from tests.lsp.conftest import Launcher, uri

LIB = "def parse(text):\n    return text.split()\n\n\ndef other():\n    return None\n"
SETTINGS = {"mnemon": {"storageScope": "workspace", "runtimeUserScope": "storage"}}


async def test_lenses_and_hover_on_cited_ranges(lsp: Launcher, repo, repo_dir: Path) -> None:
    commit_files(repo, {"src/lib.py": LIB}, "lib")
    client = await lsp.start("neovim", [repo_dir], SETTINGS)
    caps = client.init_result.capabilities
    assert caps.code_lens_provider is not None and caps.hover_provider
    assert "mnemon.server.showCitingMemories" in caps.execute_command_provider.commands
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "parse splits on whitespace",
                                                "cites": [{"path": "src/lib.py", "startLine": 1, "endLine": 2}]})
    await client.call("mnemon/records/create", {"title": "Parser", "content": "parse returns a list",
                                                "cites": [{"path": "src/lib.py", "startLine": 1, "endLine": 2}]})
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "other returns nothing",
                                                "cites": [{"path": "src/lib.py", "startLine": 5, "endLine": 6}]})
    target = repo_dir / "src" / "lib.py"
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri(target))))
    shown = [(lens.range.start.line, lens.range.end.line, lens.command.title, lens.command.command,
              list(lens.command.arguments)) for lens in lenses]
    assert shown == [
        (0, 1, "2 memories cite this", "mnemon.server.showCitingMemories", [{"uri": uri(target), "line": 1}]),
        (4, 5, "1 memory cites this", "mnemon.server.showCitingMemories", [{"uri": uri(target), "line": 5}])]

    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri(target)), position=types.Position(1, 4)))
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value == ("**2 memories cite this** (lines 1-2)\n\n"
                                    "- *MEMORY.md* · 0d · fresh: parse splits on whitespace\n"
                                    "- *Record* · 0d · fresh: Parser: parse returns a list")
    assert (hover.range.start.line, hover.range.end.line) == (0, 1)
    nothing = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri(target)), position=types.Position(2, 0)))
    assert nothing is None

    # The file changes: the lens moves with the moved code and counts what changed.
    target.write_text("# header\n" + LIB.replace("return None", "return 0"))
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=uri(target), type=types.FileChangeType.Changed)]))
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri(target))))
    assert [(lens.range.start.line, lens.range.end.line, lens.command.title) for lens in lenses] == [
        (1, 2, "2 memories cite this"), (4, 5, "1 memory cites this (1 changed)")]

    answer = await client.command("mnemon.server.showCitingMemories", {"uri": uri(target), "line": 5})
    assert answer["success"] is True
    rendered = Path(answer["path"]).read_text()
    assert rendered.startswith("# Memories citing src/lib.py\n\n## lines 5-6\n\n"
                               "- MEMORY.md · 0d · changed: other returns nothing (`runtime` `memory:")
    assert "parse" not in rendered

    # Review lists the changed one; "still true" re-anchors it, then nothing needs review.
    review = await client.call("mnemon/citations/review", {})
    assert [(m["source"], m["content"], [c["freshness"] for c in m["cites"]]) for m in review["memories"]] == [
        ("runtime", "other returns nothing", ["changed"])]
    key = review["memories"][0]["key"]
    side = repo_dir / ".mnemon" / "state" / "citations" / "runtime.json"
    before = side.read_bytes()
    error = await client.call_error("mnemon/citations/reanchor", {"source": "runtime", "key": "memory:nope"})
    assert error.data["code"] == "invalid-input" and error.data["field"] == "key"
    error = await client.call_error("mnemon/citations/reanchor", {"source": "notes", "key": key})
    assert error.data["code"] == "invalid-input" and error.data["field"] == "source"
    assert side.read_bytes() == before
    done = await client.call("mnemon/citations/reanchor", {"source": "runtime", "key": key})
    assert done["reanchored"] == 1 and done["left"] == []
    assert [(c["startLine"], c["endLine"], c["freshness"]) for c in done["cites"]] == [(5, 6, "fresh")]
    assert (await client.call("mnemon/citations/review", {}))["memories"] == []
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri(target))))
    assert [lens.command.title for lens in lenses] == ["2 memories cite this", "1 memory cites this"]


async def test_no_lens_outside_a_folder_or_on_an_uncited_file(lsp: Launcher, repo, repo_dir: Path,
                                                             tmp_path: Path) -> None:
    commit_files(repo, {"src/lib.py": LIB}, "lib")
    client = await lsp.start("neovim", [repo_dir], SETTINGS)
    outside = tmp_path / "elsewhere.py"
    outside.write_text(LIB)
    for target in (repo_dir / "src" / "lib.py", outside):
        lenses = await client.text_document_code_lens_async(types.CodeLensParams(
            text_document=types.TextDocumentIdentifier(uri(target))))
        assert lenses is not None and len(lenses) == 0


async def test_the_client_is_asked_for_its_lenses_again_after_a_save_and_a_write(lsp: Launcher, repo,
                                                                                  repo_dir: Path) -> None:
    """A client that supports ``workspace/codeLens/refresh`` (VS Code) is asked again after a file it saved, a write
    of this server (a re-anchor writes only the side file) and a memory change on disk; one that does not declare
    it (Neovim's recorded capabilities) is never asked."""
    commit_files(repo, {"src/lib.py": LIB}, "lib")
    client = await lsp.start("visual-studio-code", [repo_dir], SETTINGS)
    target = repo_dir / "src" / "lib.py"
    # (a loaded machine may see the start-up's own files appear and ask once already: count from here)
    seen = client.lens_refreshes
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "parse splits on whitespace",
                                                "cites": [{"path": "src/lib.py", "startLine": 1, "endLine": 2}]})
    await client.until(lambda: client.lens_refreshes > seen, "a refresh after the write")
    target.write_text(LIB.replace("split()", "split(',')"))
    seen = client.lens_refreshes
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(target))))
    await client.until(lambda: client.lens_refreshes > seen, "a refresh after the save")
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri(target))))
    assert [lens.command.title for lens in lenses] == ["1 memory cites this (1 changed)"]
    key = (await client.call("mnemon/citations/review", {}))["memories"][0]["key"]
    seen = client.lens_refreshes
    await client.call("mnemon/citations/reanchor", {"source": "runtime", "key": key})
    await client.until(lambda: client.lens_refreshes > seen, "a refresh after the re-anchor")
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri(target))))
    assert [lens.command.title for lens in lenses] == ["1 memory cites this"]

    quiet = await lsp.start("neovim", [repo_dir], SETTINGS)
    await quiet.call("mnemon/runtime/mutate", {"action": "add", "content": "another fact"})
    quiet.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(target))))
    assert (await quiet.call("mnemon/citations/review", {}))["memories"] == []  # the notification was handled
    assert quiet.lens_refreshes == 0


async def test_an_edit_outside_the_editor_asks_for_the_lenses_again(lsp: Launcher, repo, repo_dir: Path) -> None:
    """The server's cited-file watch (mnemon_ls/citations/watch.py) sees a cited file change with no save or
    watched-files event from the client (a formatter, ``git stash``, another tool), asks the client for its lenses
    again, and they, the review and the wake show the change: whether the edit lands before the watch stands (its
    catch-up finds it) or after (the watch reports it)."""
    commit_files(repo, {"src/lib.py": LIB}, "lib")
    client = await lsp.start("visual-studio-code", [repo_dir], SETTINGS)
    target = repo_dir / "src" / "lib.py"
    seen = client.lens_refreshes
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "parse splits on whitespace",
                                                "cites": [{"path": "src/lib.py", "startLine": 1, "endLine": 2}]})
    await client.until(lambda: client.lens_refreshes > seen, "a refresh after the write")
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri(target))))
    assert [lens.command.title for lens in lenses] == ["1 memory cites this"]
    seen = client.lens_refreshes
    target.write_text(LIB.replace("split()", "split(',')"))
    titles: list[str] = []
    for _ in range(5):  # a refresh asked for by something else (the start-up's files on a loaded machine) may come
        await client.until(lambda: client.lens_refreshes > seen, "a refresh after the edit outside the editor")
        seen = client.lens_refreshes
        lenses = await client.text_document_code_lens_async(types.CodeLensParams(
            text_document=types.TextDocumentIdentifier(uri(target))))
        titles = [lens.command.title for lens in lenses]
        if titles != ["1 memory cites this"]:
            break
    assert titles == ["1 memory cites this (1 changed)"]
    review = await client.call("mnemon/citations/review", {})
    assert [m["content"] for m in review["memories"]] == ["parse splits on whitespace"]


async def test_an_ancestor_renamed_away_asks_for_the_lenses_again(lsp: Launcher, repo, repo_dir: Path) -> None:
    """inotify follows a cited file's directory when a directory above it is renamed: the watch also watches the
    directories on the way, so the lenses are asked for again and show the new file's change."""
    commit_files(repo, {"lib/pkg/lib.py": LIB}, "lib")
    client = await lsp.start("visual-studio-code", [repo_dir], SETTINGS)
    target = repo_dir / "lib" / "pkg" / "lib.py"
    seen = client.lens_refreshes
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "parse splits on whitespace",
                                                "cites": [{"path": "lib/pkg/lib.py", "startLine": 1, "endLine": 2}]})
    await client.until(lambda: client.lens_refreshes > seen, "a refresh after the write")
    for _ in range(2):  # computed, then (once the watch stands) answered from the trusted views
        lenses = await client.text_document_code_lens_async(types.CodeLensParams(
            text_document=types.TextDocumentIdentifier(uri(target))))
        assert [lens.command.title for lens in lenses] == ["1 memory cites this"]
    seen = client.lens_refreshes
    (repo_dir / "lib").rename(repo_dir / "lib_old")
    target.parent.mkdir(parents=True)
    target.write_text(LIB.replace("split()", "split(',')"))
    titles: list[str] = []
    for _ in range(5):  # a refresh asked for by something else may come first
        await client.until(lambda: client.lens_refreshes > seen, "a refresh after the rename")
        seen = client.lens_refreshes
        lenses = await client.text_document_code_lens_async(types.CodeLensParams(
            text_document=types.TextDocumentIdentifier(uri(target))))
        titles = [lens.command.title for lens in lenses]
        if titles != ["1 memory cites this"]:
            break
    assert titles == ["1 memory cites this (1 changed)"]
