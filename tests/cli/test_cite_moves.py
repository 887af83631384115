"""No citation is lost when its memory moves (issue 24): a MEMORY.md entry that leaves hot memory (capacity
maintenance into a Memory Space or the local archive, ``runtime compact``), as processes on a real git repository
with the real side files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cite import LIB, PARSE_SHA, ok as cite_ok, run, sha
from tests.gitrepo import commit_files, make_repo

LIMIT = ("--memory-limit-bytes", "400")
PARSE = {"path": "src/lib.py", "startLine": 1, "endLine": 2, "sha256": PARSE_SHA}
RENDER = {"path": "src/lib.py", "startLine": 5, "endLine": 6,
          "sha256": sha("def render(items):\n    return ' '.join(items)\n")}


def ok(workspace: Path, *args: str) -> str:
    return cite_ok(workspace, *args, *LIMIT)


def fact(n: int) -> str:
    return f"Fact {n:03d}: the build cache lives in .cache/build-{n} and is safe to delete"


def side(workspace: Path, name: str) -> dict:
    path = workspace.parent / "root" / "state" / "citations" / f"{name}.json"
    return json.loads(path.read_text())["citations"] if path.exists() else {}


@pytest.fixture
def repo(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    commit_files(repo, {"src/lib.py": LIB}, "lib")
    (tmp_path / "home").mkdir()
    return repo


def _overflow(workspace: Path) -> dict:
    """Add a cited low-importance fact, then normal facts until maintenance archives; the archiving receipt."""
    ok(workspace, "runtime", "add", "--content", fact(0), "--importance", "low", "--cite", "src/lib.py:1-2")
    for n in range(1, 9):
        receipt = json.loads(ok(workspace, "runtime", "add", "--content", fact(n), "--json"))
        if receipt.get("maintenance"):
            return receipt["maintenance"]
    raise AssertionError("MEMORY.md never overflowed")


def test_an_entry_archived_locally_keeps_its_citations_readable_with_the_archived_entry(repo) -> None:
    workspace = Path(repo.workdir)
    maintenance = _overflow(workspace)
    assert maintenance["kind"] == "local-archive"
    assert fact(0) in [f["summary"] for f in maintenance["archived"]]
    key = "memory:" + sha(fact(0))
    assert key not in side(workspace, "runtime")
    assert side(workspace, "archived") == {key: [PARSE]}
    listing = json.loads(ok(workspace, "runtime", "archived", "--json"))
    record = next(r for r in listing["records"] if r["summary"] == fact(0))
    assert record["cites"] == [PARSE | {"freshness": "fresh"}]
    assert "    cites src/lib.py:1-2 (fresh)" in ok(workspace, "runtime", "archived").splitlines()
    (workspace / "src" / "lib.py").write_text("def parse(text):\n    return text.split(',')\n")
    record = next(r for r in json.loads(ok(workspace, "runtime", "archived", "--json"))["records"]
                  if r["summary"] == fact(0))
    assert record["cites"] == [PARSE | {"freshness": "changed"}]
    ok(workspace, "runtime", "add", "--content", "one more write after the archival")
    assert side(workspace, "archived") == {key: [PARSE]}  # a later write keeps them


def test_an_entry_archived_into_a_memory_space_takes_its_citations_to_the_item(repo) -> None:
    workspace = Path(repo.workdir)
    ok(workspace, "space", "create", "--name", "Project", "--description", "build cache facts", "--active")
    maintenance = _overflow(workspace)
    assert maintenance["kind"] == "mnemon-archive"
    moved = next(f for f in maintenance["archived"] if f["summary"] == fact(0))["destination"]
    item = f"{moved['spaceId']}/{moved['itemId']}"
    assert side(workspace, "spaces") == {item: [PARSE]}
    assert "memory:" + sha(fact(0)) not in side(workspace, "runtime")
    recall = json.loads(ok(workspace, "recall", "build-0", "--json"))
    hit = next(r for r in recall["results"] if r["content"] == fact(0))
    assert hit["cites"] == [PARSE | {"freshness": "fresh"}]
    listing = json.loads(ok(workspace, "runtime", "archived", "--json"))
    assert next(r for r in listing["records"] if r["summary"] == fact(0))["cites"] == [PARSE | {"freshness": "fresh"}]


def test_compact_merges_the_citations_into_the_merged_entry_and_keeps_a_dropped_ones(repo) -> None:
    workspace = Path(repo.workdir)
    ok(workspace, "runtime", "add", "--content", "parse splits text", "--cite", "src/lib.py:1-2")
    ok(workspace, "runtime", "add", "--content", "render joins items", "--cite", "src/lib.py:5-6")
    ok(workspace, "runtime", "add", "--content", "the parser is old", "--cite", "src/lib.py:1-2")
    done = json.loads(ok(workspace, "runtime", "compact", "--target", "memory", "--merge", "1,2", "--as",
                         "parse splits, render joins", "--drop", "3", "--json"))
    assert done["maintenance"]["kind"] == "local-compaction"
    assert side(workspace, "runtime") == {"memory:" + sha("parse splits, render joins"): [PARSE, RENDER]}
    assert side(workspace, "archived") == {"memory:" + sha("the parser is old"): [PARSE]}
    entries = json.loads(ok(workspace, "runtime", "list", "--json"))["entries"]
    assert [e.get("cites") for e in entries] == [[PARSE | {"freshness": "fresh"}, RENDER | {"freshness": "fresh"}]]


def test_an_unreadable_side_file_never_blocks_the_move(repo) -> None:
    workspace = Path(repo.workdir)
    ok(workspace, "runtime", "add", "--content", "parse splits text", "--cite", "src/lib.py:1-2")
    ok(workspace, "runtime", "add", "--content", "the parser is old")
    (workspace.parent / "root" / "state" / "citations" / "runtime.json").write_text("{not json")
    done = json.loads(ok(workspace, "runtime", "compact", "--target", "memory", "--drop", "2", "--json"))
    assert done["entryCount"] == 1
    assert [e["content"] for e in json.loads(ok(workspace, "runtime", "list", "--json"))["entries"]] == [
        "parse splits text"]


def test_migrate_carries_the_citations_of_what_it_copies_under_the_new_ids(tmp_path: Path) -> None:
    from tests.cli.test_cli import Cli, default_root

    cli = Cli(tmp_path)
    import pygit2

    commit_files(pygit2.Repository(str(cli.ws)), {"src/lib.py": LIB}, "lib")
    cli.ok("runtime", "add", "--content", "parse splits text", "--cite", "src/lib.py:1-2")
    cli.ok("space", "create", "--name", "Project", "--description", "facts", "--active")
    item = cli.ok_json("remember", "the renderer joins items", "--cite", "src/lib.py:5-6")
    doc = cli.ok_json("doc", "create", "--title", "Lib", "--content", "# Lib\nnotes", "--cite", "src/lib.py:1-2",
                      "--source", "src/lib.py")
    (cli.ws / "src" / "lib.py").write_text(LIB + "\n# later\n")  # the document's source changed since
    done = cli.run("migrate", "--from", "global", "--json", scoped=False)
    assert done.returncode == 0, done.stderr
    receipt = json.loads(done.stdout)
    root = default_root(cli.data, cli.ws)

    def table(name: str) -> dict:
        return json.loads((root / "state" / "citations" / f"{name}.json").read_text())["citations"]

    assert table("runtime") == {"memory:" + sha("parse splits text"): [PARSE]}
    row = next(r for r in receipt["spaces"] if r["name"] == "Project")
    assert table("spaces") == {f"{row['intoId']}/{row['ids'][item['id']]}": [RENDER]}
    (new_doc,) = table("documents")
    assert new_doc != doc["document"]["id"] and table("documents")[new_doc] == [PARSE]
    got = json.loads(cli.run("doc", "get", new_doc, "--json", scoped=False).stdout)
    assert got["cites"] == [PARSE | {"freshness": "fresh"}]
    assert got["sourcePathFreshness"] == [{"path": "src/lib.py", "freshness": "changed"}]  # hashed as written
    listed = json.loads(cli.run("runtime", "list", "--json", scoped=False).stdout)["entries"]
    assert [e.get("cites") for e in listed if e["content"] == "parse splits text"] == [[PARSE | {"freshness": "fresh"}]]


def _manifest(pack: Path) -> dict:
    import zipfile

    with zipfile.ZipFile(pack) as archive:
        return json.loads(archive.read("manifest.json"))


def test_a_pack_carries_the_citations_of_what_it_carries_remapped_to_the_ids_things_come_in_under(repo) -> None:
    workspace = Path(repo.workdir)
    pack = workspace.parent / "memory.zip"
    ok(workspace, "runtime", "add", "--content", "parse splits text", "--cite", "src/lib.py:1-2")
    ok(workspace, "space", "create", "--name", "Project", "--description", "facts", "--active")
    item = json.loads(ok(workspace, "remember", "the renderer joins items", "--cite", "src/lib.py:5-6", "--json"))
    doc = json.loads(ok(workspace, "doc", "create", "--title", "Lib", "--content", "# Lib\nnotes", "--cite",
                        "src/lib.py:1-2", "--source", "src/lib.py", "--json"))["document"]
    ok(workspace, "pack", "export", "-o", str(pack))
    carried = _manifest(pack)["citations"]
    assert carried == {"version": 1, "runtime": {"memory:" + sha("parse splits text"): [PARSE]},
                       "documents": {doc["id"]: [PARSE]}, "documentSources": {doc["id"]: {"src/lib.py": sha(LIB)}},
                       "spaces": {f"{item['spaceId']}/{item['id']}": [RENDER]}}
    # the same ids now hold something else: the pack's document and space come in under new ids
    ok(workspace, "doc", "update", doc["id"], "--content", "# Lib\nother notes")
    ok(workspace, "remember", "another fact in the space")
    (workspace / "src" / "lib.py").write_text(LIB + "# later\n")  # the document's source changed since the export
    receipt = json.loads(ok(workspace, "pack", "import", str(pack), "--json"))
    (new_doc,) = [r["to"] for r in receipt["documents"]["renamed"] if r["from"] == doc["id"]]
    (new_space,) = [r["to"] for r in receipt["spaces"]["renamed"] if r["from"] == item["spaceId"]]
    assert side(workspace, "documents")[new_doc] == [PARSE]
    assert side(workspace, "spaces")[f"{new_space}/{item['id']}"] == [RENDER]
    got = json.loads(ok(workspace, "doc", "get", new_doc, "--json"))
    assert got["cites"] == [PARSE | {"freshness": "fresh"}]
    assert got["sourcePathFreshness"] == [{"path": "src/lib.py", "freshness": "changed"}]
    ok(workspace, "space", "activate", new_space)
    recall = json.loads(ok(workspace, "recall", "renderer joins", "--space", new_space, "--json"))
    assert [r["cites"] for r in recall["results"]] == [[RENDER | {"freshness": "fresh"}]]


def test_a_pack_without_citations_still_imports(repo, tmp_path: Path) -> None:
    import zipfile

    from mnemon_ls.packs import format as fmt

    workspace = Path(repo.workdir)
    ok(workspace, "runtime", "add", "--content", "parse splits text", "--cite", "src/lib.py:1-2")
    pack = tmp_path / "memory.zip"
    ok(workspace, "pack", "export", "--pack-scope", "runtime", "-o", str(pack))
    manifest = _manifest(pack)
    assert "citations" in manifest
    del manifest["citations"]  # as an older mnemon-ls or the plugin writes it
    with zipfile.ZipFile(pack) as archive:
        payload = {n: archive.read(n) for n in archive.namelist() if n.startswith("payload/")}
    older = tmp_path / "older.zip"
    older.write_bytes(fmt.write_archive(manifest, payload))
    other = tmp_path / "other"
    other.mkdir()
    done = run(workspace, "pack", "import", str(older), "--json", scope=("--scope", "custom", "--data-dir", str(other)))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["runtime"]["added"] == 1
    assert not (other / "state" / "citations" / "runtime.json").exists()


def test_finishing_an_interrupted_archival_takes_the_citations_to_the_space_item(tmp_path: Path) -> None:
    from tests.cli.test_doctor_wording import kill_archival_at, ws_cli

    repo = make_repo(tmp_path / "ws")
    commit_files(repo, {"src/lib.py": LIB}, "lib")
    (tmp_path / "home").mkdir()
    assert ws_cli(tmp_path, "space", "create", "--name", "Project", "--description", "build facts",
                  "--active").returncode == 0
    kill_archival_at(tmp_path, "commit:1")  # the entries are in the space and still in MEMORY.md
    record = json.loads(ws_cli(tmp_path, "runtime", "archived", "--json").stdout)["records"][0]
    assert record["stillInHotMemory"]
    side_file = tmp_path / "ws" / ".mnemon" / "state" / "citations" / "runtime.json"
    side_file.parent.mkdir(parents=True, exist_ok=True)
    side_file.write_text(json.dumps({"version": 1, "citations": {"memory:" + sha(record["summary"]): [PARSE]}}))
    finished = ws_cli(tmp_path, "runtime", "archived", "--finish", "--json")
    assert finished.returncode == 0, finished.stderr
    assert record["summary"] in [r["content"] for r in json.loads(finished.stdout)["removed"]]
    space, _, item = record["destination"]["reference"][len("memory-space:"):].partition("/item:")
    spaces = json.loads((side_file.parent / "spaces.json").read_text())["citations"]
    assert spaces == {f"{space}/{item}": [PARSE]}
    assert json.loads(side_file.read_text())["citations"] == {}


def test_a_replace_that_overflows_keeps_the_replaced_entrys_citations_on_the_new_text(repo) -> None:
    workspace = Path(repo.workdir)
    ok(workspace, "runtime", "add", "--content", fact(0), "--cite", "src/lib.py:1-2")
    for n in range(1, 5):
        ok(workspace, "runtime", "add", "--content", fact(n), "--importance", "low")
    longer = fact(0) + "; it is rebuilt by make cache, which takes about two minutes on a laptop"
    replaced = json.loads(ok(workspace, "runtime", "replace", "--old-text", "Fact 000", "--content", longer, "--json"))
    assert replaced["maintenance"]["archived"]  # the low ones left
    assert replaced["cites"] == [PARSE | {"freshness": "fresh"}]
    assert side(workspace, "runtime") == {"memory:" + sha(longer): [PARSE]}
    assert side(workspace, "archived") == {}
    removed = json.loads(ok(workspace, "runtime", "remove", "--old-text", "Fact 000", "--json"))
    assert "removed" in removed and side(workspace, "runtime") == {} and side(workspace, "archived") == {}


def test_a_compaction_with_a_pending_replace_carries_the_replaced_entrys_citations(repo) -> None:
    workspace = Path(repo.workdir)
    ok(workspace, "runtime", "add", "--content", "parse splits text", "--cite", "src/lib.py:1-2")
    ok(workspace, "runtime", "add", "--content", "the parser is old", "--cite", "src/lib.py:5-6")
    pending = {"action": "replace", "oldText": "parse splits text", "content": "parse splits on whitespace"}
    done = json.loads(ok(workspace, "runtime", "compact", "--target", "memory", "--drop", "1", "--pending",
                         json.dumps(pending), "--json"))
    assert done["maintenance"]["kind"] == "local-compaction"
    assert side(workspace, "runtime") == {"memory:" + sha("parse splits on whitespace"): [PARSE]}
    assert side(workspace, "archived") == {"memory:" + sha("the parser is old"): [RENDER]}


def test_lineage_names_an_entry_that_moved_into_a_space_by_its_item(repo) -> None:
    workspace = Path(repo.workdir)
    ok(workspace, "space", "create", "--name", "Project", "--description", "build cache facts", "--active")
    ok(workspace, "runtime", "add", "--content", fact(0), "--importance", "low", "--cite", "src/lib.py:1-2")
    newer = json.loads(ok(workspace, "runtime", "add", "--content", "parse splits on whitespace now", "--cite",
                          "src/lib.py:1", "--json"))
    assert [p["key"] for p in newer["possiblySuperseded"]] == ["memory:" + sha(fact(0))]
    maintenance = None
    for n in range(1, 9):
        maintenance = json.loads(ok(workspace, "runtime", "add", "--content", fact(n), "--json")).get("maintenance")
        if maintenance and fact(0) in [f["summary"] for f in maintenance["archived"]]:
            break
    moved = next(f for f in maintenance["archived"] if f["summary"] == fact(0))["destination"]
    lineage = json.loads((workspace.parent / "root" / "state" / "citations" / "lineage.json").read_text())
    assert lineage["supersedes"] == {"runtime memory:" + sha("parse splits on whitespace now"): [
        {"source": "spaces", "key": f"{moved['spaceId']}/{moved['itemId']}"}]}
