"""``mnemon-ls migrate --from ...`` and the doctor note about another storage root's memory, run for real in a subprocess.

The source is the old default root (``--scope global``: ``$MNEMON_DATA_DIR``), filled through the CLI;
the destination is this repository's default root (``<data>/workspaces/<sha256 of the repository>``).
The source is compared byte for byte (plus inode and mtime, :func:`tests.helpers.procs.tree_snapshot`)
before and after; a refused migration must leave the whole ``tmp_path`` as it was.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.helpers import procs
from tests.cli.test_cli import Cli, default_root


@pytest.fixture
def cli(tmp_path) -> Cli:
    return Cli(tmp_path)


def seed_global(cli: Cli) -> None:
    """Old-default memory, written in-process through the Sources (the code the CLI runs): two MEMORY.md
    entries (one critical and scoped to main), a USER.md entry, an active and an archived document, a
    space with two items (one tagged for main)."""
    from mnemon_ls.host import WorkspaceHost
    from mnemon_ls.runtime import ops
    from mnemon_ls.settings import load_settings

    host = WorkspaceHost(cli.ws, load_settings({"storageScope": "global", "runtimeUserScope": "storage"}),
                         env={"MNEMON_DATA_DIR": str(cli.data), "MNEMON_SEMANTIC": "off"})
    try:
        for target, content, importance, branches in (
                ("memory", "Run tests with pytest -n 2", None, None),
                ("memory", "Deploys go through staging", "critical", ["main"]),
                ("user", "Prefers short answers", None, None)):
            host.runtime.mutate(ops.validate_request("add", target, content, importance=importance, branches=branches))
        host.documents.create("ADR 7", "We use SQLite FTS5.\n", source_paths=["README"])
        old = host.documents.create("Old plan", "Superseded.\n")
        host.documents.moves.archive(old.document.record.id, 1, summary="replaced by ADR 7")
        host.spaces.create_space("Project", "Decisions about this repository", active=True)
        host.spaces.remember("We chose SQLite FTS5 for the side index", tags=["storage"], importance=4)
        host.spaces.remember("Release branch is frozen", branch="main")
    finally:
        host.close()


def source_tree(cli: Cli) -> dict:
    return {k: v for k, v in procs.tree_snapshot(cli.data).items() if not k.startswith("workspaces")}


def migrate(cli: Cli, *extra: str) -> dict:
    result = cli.run("migrate", "--from", "global", "--json", *extra, scoped=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def items_of(root: Path, space: str = "default") -> list[tuple[str, list[str], int, str]]:
    with sqlite3.connect(f"file:{root / 'data' / space / 'mnemon.db'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT content, tags, importance, created_at FROM insights WHERE deleted_at IS NULL "
                          "ORDER BY content").fetchall()
    return [(content, sorted(json.loads(tags or "[]")), importance, created) for content, tags, importance, created in rows]


def test_fresh_migrate_copies_every_tier_verified_and_leaves_the_source_untouched(cli):
    seed_global(cli)
    before = source_tree(cli)
    destination = default_root(cli.data, cli.ws)
    planned = migrate(cli, "--dry-run")
    assert planned["status"] == "planned" and not destination.exists()  # a dry run writes nothing
    receipt = migrate(cli)
    assert source_tree(cli) == before
    assert (receipt["from"], receipt["to"], receipt["status"], receipt["verified"]) == (
        str(cli.data), str(destination), "committed", True)
    assert receipt["runtime"] == {
        "user": {"added": 0, "skipped": 0, "shared": 1,
                 "note": f"USER.md is already read from {cli.data} (runtimeUserScope=global); nothing to copy"},
        "memory": {"added": 2, "skipped": 0},
    }
    assert receipt["documents"] == {"added": 2, "skipped": 0, "archived": 1, "sourcePathsNotCopied": []}
    [space] = receipt["spaces"]
    assert {k: space[k] for k in ("fromId", "name", "intoId", "created", "items", "added", "skipped", "errors")} == {
        "fromId": "default", "name": "Project", "intoId": "default", "created": True, "items": 2, "added": 2,
        "skipped": 0, "errors": 0}
    assert len(space["ids"]) == 2 and set(space["ids"]) != set(space["ids"].values())  # new ids, mapped
    # What the workspace now reads (default settings, no flags).
    listed = json.loads(cli.run("runtime", "list", "--json", scoped=False).stdout)["entries"]
    assert [(e["content"], e["target"], e["importance"], e.get("branches")) for e in listed] == [
        ("Prefers short answers", "user", "normal", None),
        ("Run tests with pytest -n 2", "memory", "normal", None),
        ("Deploys go through staging", "memory", "critical", ["main"]),
    ]
    docs = json.loads(cli.run("doc", "list", "--json", scoped=False).stdout)["documents"]
    assert sorted((d["title"], d["status"], d["sourcePaths"]) for d in docs) == [
        ("ADR 7", "active", ["README"]), ("Old plan", "archived", [])]
    adr = next(d for d in docs if d["title"] == "ADR 7")
    assert json.loads(cli.run("doc", "get", adr["id"], "--json", scoped=False).stdout)["content"] == "We use SQLite FTS5."
    assert items_of(destination) == items_of(cli.data)  # content, tags (branch:main included), importance, time
    assert ("Release branch is frozen", ["branch:main"]) in [(c, t) for c, t, _, _ in items_of(destination)]
    recalled = json.loads(cli.run("recall", "side index", "--json", scoped=False).stdout)["results"]
    assert [r["content"] for r in recalled] == ["We chose SQLite FTS5 for the side index"]


def test_migrate_into_a_root_with_entries_merges_by_content(cli):
    seed_global(cli)
    # The workspace already has one of the entries, the same ADR, and a space of the same name with one item.
    for args in (["runtime", "add", "--content", "Run tests with pytest -n 2"],
                 ["runtime", "add", "--content", "Only in the workspace"],
                 ["doc", "create", "--title", "ADR 7", "--content", "We use SQLite FTS5.\n"],
                 ["space", "create", "--name", "Project", "--description", "Workspace decisions", "--active"],
                 ["remember", "We chose SQLite FTS5 for the side index"]):
        result = cli.run(*args, scoped=False)
        assert result.returncode == 0, result.stderr
    before = source_tree(cli)
    receipt = migrate(cli)
    assert source_tree(cli) == before
    assert receipt["runtime"]["memory"] == {"added": 1, "skipped": 1}
    assert receipt["documents"] == {"added": 1, "skipped": 1, "archived": 1, "sourcePathsNotCopied": []}
    [space] = receipt["spaces"]
    assert (space["intoId"], space["created"], space["items"], space["added"], space["skipped"]) == (
        "default", False, 2, 1, 1)
    listed = json.loads(cli.run("runtime", "list", "--json", "--target", "memory", scoped=False).stdout)["entries"]
    assert [e["content"] for e in listed] == [
        "Run tests with pytest -n 2", "Only in the workspace", "Deploys go through staging"]
    assert len(json.loads(cli.run("doc", "list", "--json", scoped=False).stdout)["documents"]) == 2
    assert [c for c, _, _, _ in items_of(default_root(cli.data, cli.ws))] == [
        "Release branch is frozen", "We chose SQLite FTS5 for the side index"]
    again = migrate(cli)  # idempotent: everything is a duplicate now
    assert again["runtime"]["memory"] == {"added": 0, "skipped": 2}
    assert (again["documents"]["added"], again["documents"]["skipped"]) == (0, 2)
    assert (again["spaces"][0]["added"], again["spaces"][0]["skipped"]) == (0, 2)
    text = cli.run("migrate", "--from", "global", scoped=False).stdout
    assert "  MEMORY.md: copied 0, skipped 2 already here\n" in text
    assert text.endswith("Verified: every copied value reads back as in the source. The source was not changed.\n")


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:40])


DAMAGE = {
    "runtime": ("runtime/memories.json", _truncate, "the source's Runtime memory is damaged: {data}/runtime/memories.json"),
    "documents-index": ("documents/index.json", lambda p: p.write_bytes(b"{not json"),
                        "the source's Documents index is damaged: "),
    "document-file": (None, None, "the source's document 'ADR 7' ({data}/documents/active/"),
    "space-registry": ("data/.dsh-memory-bodies.json", lambda p: p.write_bytes(b"[garbage"),
                       "the source's Memory Spaces registry {data}/data/.dsh-memory-bodies.json is damaged: "),
    "space-registry-newer": ("data/.dsh-memory-bodies.json", lambda p: p.write_bytes(
        p.read_bytes().replace(b'"version": 1', b'"version": 2', 1)),
        "the source's Memory Spaces registry {data}/data/.dsh-memory-bodies.json was written by a newer version of "
        "mnemon-ls (format version 2; this version reads 1); nothing was copied. Upgrade mnemon-ls to migrate it"),
    "space-store": ("data/default/mnemon.db", lambda p: p.write_bytes(b"not a database at all" * 10),
                    "the source's {data}/data/default/mnemon.db is not a SQLite database; nothing was copied"),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_migrate_from_a_damaged_source_names_it_and_changes_nothing(cli, case):
    seed_global(cli)
    cli.run("runtime", "add", "--content", "already in the workspace", scoped=False)
    relative, damage, message = DAMAGE[case]
    if relative is None:  # remove the managed file of an indexed document
        adr = next((cli.data / "documents" / "active").glob("adr-7-*.md"))
        adr.unlink()
    else:
        damage(cli.data / relative)
    before = procs.tree_snapshot(cli.tmp)
    result = cli.run("migrate", "--from", "global", scoped=False)
    assert procs.tree_snapshot(cli.tmp) == before
    assert result.returncode == 1 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("mnemon-ls: error: " + message.format(data=cli.data)), line
    assert "nothing was copied" in line


def test_migrate_into_a_root_whose_catalog_is_a_newer_versions_changes_nothing(cli):
    # the destination's catalog is read-only here: found when the copy is planned, so before any tier is written
    seed_global(cli)
    made = cli.run("space", "create", "--name", "Here", "--description", "the workspace's own", "--active",
                   scoped=False)
    assert made.returncode == 0, made.stderr
    catalog = default_root(cli.data, cli.ws) / "data" / ".dsh-memory-bodies.json"
    catalog.write_bytes(catalog.read_bytes().replace(b'"version": 1', b'"version": 2', 1))
    before = procs.tree_snapshot(cli.tmp)
    for extra in ((), ("--dry-run",)):
        result = cli.run("migrate", "--from", "global", *extra, scoped=False)
        assert (result.returncode, result.stdout) == (1, ""), extra
        assert result.stderr == (
            f"mnemon-ls: error: the destination's Memory Spaces registry cannot take the source's spaces: {catalog} "
            "was written by a newer version of mnemon-ls (format version 2; this version reads 1); it is left "
            "unchanged and read-only here: the native Memory Spaces are not shown and cannot be created, changed or "
            "written to until mnemon-ls is upgraded; nothing was copied\n"), extra
        assert procs.tree_snapshot(cli.tmp) == before, extra


def test_migrate_refuses_what_does_not_fit_and_bad_sources(cli):
    seed_global(cli)
    before = procs.tree_snapshot(cli.tmp)
    full = cli.run("migrate", "--from", "global", "--memory-limit-bytes", "30", scoped=False)
    assert (full.returncode, full.stdout) == (3, "")
    assert full.stderr == (
        f"mnemon-ls: error: memory cannot take the 2 entries of {cli.data}: 56 of 30 UTF-8 bytes after the copy "
        "(now 0); nothing was copied. Remove or shorten entries on either side, or raise "
        "runtimeMemory.memoryLimitBytes\n")
    for args, code, error in (
        (["--from", "relative/dir"], 2, "--from: must be global, workspace or an absolute path (got 'relative/dir')"),
        (["--from", str(cli.tmp / "missing")], 2, f"--from: {cli.tmp / 'missing'} does not exist or is not a "
                                                  "directory; nothing to migrate"),
        (["--from", "global", "--scope", "global"], 2, f"--from: {cli.data} is this workspace's own storage root; "
                                                        "nothing to copy"),
    ):
        result = cli.run("migrate", *args, scoped=False)
        assert (result.returncode, result.stderr) == (code, f"mnemon-ls: error: {error}\n")
    assert procs.tree_snapshot(cli.tmp) == before


def test_doctor_says_where_older_memory_is_until_it_is_migrated(cli):
    seed_global(cli)
    destination = default_root(cli.data, cli.ws)
    before = procs.tree_snapshot(cli.tmp)
    doctor = cli.run("doctor", scoped=False)
    assert procs.tree_snapshot(cli.tmp) == before  # doctor never writes
    assert doctor.returncode == 0, doctor.stderr
    assert (f"[warning] {cli.data}: the global storage root holds memory this workspace does not read: 2 Runtime entries, "
            "2 documents, 1 Memory Space store (default)\n"
            f"          -> `mnemon-ls migrate --from global` copies it into {destination} (verified; the source stays "
            "as it is; `--dry-run` shows what would be copied)\n") in doctor.stdout
    migrate(cli)
    doctor = cli.run("doctor", scoped=False)
    # the global root still holds USER.md: the user profile is read from there by design (runtimeUserScope global)
    assert (f"[ok     ] {cli.data}: the global storage root: this workspace reads its USER.md from there (the user "
            "profile is global); everything else in it is in this workspace's storage root too\n") in doctor.stdout
    assert "holds memory this workspace does not read" not in doctor.stdout


def test_migrate_gives_a_space_whose_name_looks_like_one_here_a_numbered_name(cli):
    """The source's space "Project" is in the workspace as "Рroject" (Cyrillic Р): not the same name, so not
    merged into it, and a look-alike, so the new space is "Project (2)"; migrate used to copy MEMORY.md and
    then stop on space create's refusal (its dry run said it would work)."""
    seed_global(cli)
    made = cli.run("space", "create", "--name", "\u0420roject", "--description", "look-alike", "--active",
                   scoped=False)
    assert made.returncode == 0, made.stderr
    dry = migrate(cli, "--dry-run")
    receipt = migrate(cli)
    [space] = receipt["spaces"]
    assert (space["created"], space["added"]) == (True, 2) and dry["spaces"][0]["intoId"] is None
    names = sorted(s["name"] for s in json.loads(cli.run("space", "list", "--json", scoped=False).stdout))
    assert names == ["Project (2)", "\u0420roject"]
