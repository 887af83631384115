"""mnemon-ls spaces in ByteRover projects, on the real engine (byterover-cli 3.14's ``brv``, its daemon on a private
state, its login service a loopback stand-in; no mocks, no network): configuration errors, discovery of projects
ByteRover's own writes filled (a hand-written note, an entry ``brv curate`` wrote through a scripted model),
remember/recall in English and Chinese, forget with ByteRover's delete semantics, capability gating, bad input,
and an engine that goes down isolated in federated recall."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput, ProviderNotConfigured, ProviderUnavailable, SpaceRefused
from mnemon_ls.spaces import SpacesService
from servers import wait_for

HAND_WRITTEN = "API rate limit is 100 requests per minute per token, enforced by the gateway"


def recalled(service: SpacesService, query: str, space: str) -> list[dict]:
    return service.recall(query, spaces=[space]).to_dict()["results"]


def ids(service: SpacesService, query: str, space: str) -> list[str]:
    return [r["id"] for r in recalled(service, query, space)]


def space_of(service: SpacesService, project: Path) -> str:
    return next(v.record.id for v in service.list_spaces() if v.record.external_id == str(project))


def test_not_configured_bad_fields_and_a_missing_command_change_nothing(tmp_path: Path, brv: str) -> None:
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=120)
    with pytest.raises(ProviderNotConfigured) as refused:
        service.thirdparty.test("byterover")
    assert refused.value.data["reason"] == "not-configured"
    service.thirdparty.configure("byterover", {"timeoutSeconds": "30"})
    before = (root / "state" / "memory-providers.json").read_bytes()
    for bad, field in (({"cliPath": str(tmp_path / "no-such-brv")}, "services.cliPath"),
                       ({"cliPath": "no-such-brv-command"}, "services.cliPath"),
                       ({"cliPath": "bin/brv"}, "services.cliPath"),
                       ({"cliPath": "brv --help"}, "services.cliPath"),
                       ({"timeoutSeconds": "0"}, "services.timeoutSeconds"),
                       ({"defaultDirectory": "projects"}, "services.defaultDirectory"),
                       ({"endpoint": "http://127.0.0.1:9"}, "services.endpoint")):
        with pytest.raises(InvalidInput) as error:
            service.thirdparty.enable("byterover", {"cliPath": brv, **bad})
        assert error.value.data["field"] == field, (bad, error.value.to_dict())
    with pytest.raises(InvalidInput) as missing:
        service.thirdparty.enable("byterover", {"cliPath": str(tmp_path / "no-such-brv")})
    assert "names no executable" in missing.value.rule and "byterover-cli" in missing.value.rule
    assert (root / "state" / "memory-providers.json").read_bytes() == before
    service.close()


def test_discovery_remember_recall_forget_and_gating(tmp_path: Path, byterover, project, brv: str) -> None:
    # a project ByteRover's user wrote a note in by hand (any markdown under the context tree is an entry)
    notes = project("notes")
    (notes / ".brv" / "context-tree" / "infra" / "rate_limit").mkdir(parents=True)
    (notes / ".brv" / "context-tree" / "infra" / "rate_limit" / "gateway.md").write_text(HAND_WRITTEN + "\n")
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=120)
    enabled = service.thirdparty.enable("byterover", {"cliPath": brv})
    assert enabled["health"]["ok"] is True and enabled["health"]["engine"] == "ByteRover 3.14.0 (byterover-cli)"
    views = {v.record.external_id: v.to_dict() for v in service.list_spaces()}
    assert views[str(notes)]["name"] == "notes" and views[str(notes)]["location"]["connectionFields"] == ["workingDirectory"]
    caps = views[str(notes)]["capabilities"]
    assert (caps["related"], caps["link"], caps["merge"], caps["browse"], caps["graph"], caps["delete"],
            caps["write"], caps["forget"], caps["normalizedScores"]) == \
        (False, False, False, False, False, "hard", "exact", True, False)
    # a new space needs the directory new projects are made in
    with pytest.raises(InvalidInput) as nowhere:
        service.create_space("Team", "team decisions", provider="byterover")
    assert nowhere.value.data["field"] == "services.defaultDirectory"
    projects = tmp_path / "projects"
    service.thirdparty.enable("byterover", {"defaultDirectory": str(projects)})
    space = service.create_space("Team Rover", "team decisions", active=True, provider="byterover").to_dict()
    team = projects / "team_rover"
    assert space["location"]["externalId"] == str(team) and (team / ".brv" / "context-tree").is_dir()
    listed = byterover.brv("locations", "--format", "json", cwd=tmp_path).stdout
    assert {"projectPath": str(team), "isInitialized": True}.items() <= next(
        r for r in json.loads(listed)["data"]["locations"] if r["projectPath"] == str(team)).items()
    with pytest.raises(InvalidInput) as taken:  # its directory exists now: never taken over by another create
        service.create_space("team-rover", "again", provider="byterover")
    assert taken.value.data["field"] == "name" and str(team) in taken.value.rule
    english = service.remember("We roll back when the error rate passes five percent", space_id=space["id"],
                               tags=["release"], category="decision", importance=4).to_dict()
    chinese = service.remember("部署窗口是每周二晚上八点", space_id=space["id"]).to_dict()
    assert english["status"] == chinese["status"] == "committed" and english["id"] != chinese["id"]
    assert english["message"] == (f"Remembered in {space['name']}. ByteRover's search may take up to 5 s (its index "
                                  "cache) to find it."), english["message"]  # the receipt says when it shows
    said = service.recall("roll back", spaces=[space["id"]]).to_dict()["notices"]
    assert any("index it caches for 5 s" in n for n in said), said  # right after a write: recall says so
    assert english["id"].startswith("decision~mnemon_ls~we_roll_back_when_the_error_rate_passes_")
    entry = team / ".brv" / "context-tree" / english["id"].replace("~", "/")
    front = entry.read_text().split("---\n")[1]
    assert "title: We roll back when the error rate passes five percent\n" in front and "tags: [release]\n" in front
    hit = wait_for(lambda: recalled(service, "when do we roll back a release", space["id"]), "the English write")
    assert hit[0]["id"] == english["id"] and hit[0]["content"] == "We roll back when the error rate passes five percent"
    assert (hit[0]["tags"], hit[0]["category"], hit[0]["importance"]) == (["release"], "decision", 4)
    assert hit[0]["tier"] == "unknown" and 0 < hit[0]["score"] <= 1  # BM25 squashed by ByteRover, not calibrated
    hit = wait_for(lambda: recalled(service, "部署窗口", space["id"]), "the Chinese write")
    assert hit[0]["id"] == chinese["id"] and hit[0]["content"] == "部署窗口是每周二晚上八点"
    # ByteRover's BM25 matches a Chinese query as the prefix of a run of Chinese text, not inside one
    assert recalled(service, "部署", space["id"])[0]["id"] == chinese["id"]
    assert recalled(service, "每周二晚上八点", space["id"]) == []
    with pytest.raises(SpaceRefused):
        service.related(space["id"], english["id"])
    with pytest.raises(SpaceRefused):
        service.link(space["id"], english["id"], chinese["id"])
    gone = service.forget(space["id"], chinese["id"]).to_dict()
    assert gone["status"] == "committed" and "hard delete" in gone["message"]
    assert not (team / ".brv" / "context-tree" / chinese["id"].replace("~", "/")).exists()
    # at once, though ByteRover's index cache may still list the deleted file for 5 s
    assert chinese["id"] not in ids(service, "部署窗口", space["id"])
    with pytest.raises(InvalidInput) as again:
        service.forget(space["id"], chinese["id"])
    assert again.value.data["field"] == "id"
    # the hand-written note is recalled through its discovered space, and forgotten by deleting its file
    noted = space_of(service, notes)
    service.activate(noted)
    found = recalled(service, "gateway rate limit per minute", noted)
    assert (found[0]["id"], found[0]["content"], found[0]["source"]) == (
        "infra~rate_limit~gateway.md", HAND_WRITTEN, "byterover:infra/rate_limit/gateway.md")
    assert service.forget(noted, found[0]["id"]).to_dict()["status"] == "committed"
    assert not (notes / ".brv" / "context-tree" / "infra" / "rate_limit" / "gateway.md").exists()
    assert recalled(service, "gateway rate limit per minute", noted) == []
    assert service.thirdparty.discover("byterover")  # still lists both projects
    service.close()


def test_an_entry_brv_curate_wrote_is_recalled_and_one_mnemon_ls_wrote_is_deleted_by_brv_curate(
        tmp_path: Path, byterover, project, model, brv: str) -> None:
    """ByteRover's own writes (``brv curate``, its curate tool driven by a scripted model) and mnemon-ls's are the
    same kind of entry: each side reads and deletes what the other wrote."""
    byterover.connect(model)
    payments = project("payments")
    curated = byterover.brv("curate", json.dumps({"type": "UPSERT", "path": "payments/webhooks",
                                                  "title": "Stripe retry policy",
                                                  "text": "Payments retries Stripe webhooks 5 times with "
                                                          "exponential backoff"}), "--format", "json", cwd=payments)
    written = payments / ".brv" / "context-tree" / "payments" / "webhooks" / "stripe_retry_policy.md"
    assert written.is_file(), curated.stdout[-2000:]
    service = SpacesService(tmp_path / "root", provider_timeout=120)
    service.thirdparty.enable("byterover", {"cliPath": brv})
    space = space_of(service, payments)
    service.activate(space)
    counted = {v.record.external_id: v for v in service.list_spaces()}[str(payments)]
    assert counted.record.name == "payments"
    hit = wait_for(lambda: recalled(service, "stripe webhook retries", space), "the curated entry")
    assert hit[0]["id"] == "payments~webhooks~stripe_retry_policy.md"
    assert hit[0]["content"] == "Payments retries Stripe webhooks 5 times with exponential backoff"
    assert hit[0]["source"] == "byterover:payments/webhooks/stripe_retry_policy.md" and hit[0]["category"] == "general"
    # an entry mnemon-ls wrote, deleted by ByteRover's own curate DELETE (its folder and title)
    mine = service.remember("Refunds above 500 EUR need a second approver", space_id=space, category="decision")
    folder, _, name = mine.to_dict()["id"].replace("~", "/").rpartition("/")
    byterover.brv("curate", json.dumps({"type": "DELETE", "path": folder, "title": name[:-3]}), "--format", "json",
                  cwd=payments)
    assert not (payments / ".brv" / "context-tree" / folder / name).exists()
    assert mine.to_dict()["id"] not in ids(service, "refunds second approver", space)
    assert service.forget(space, hit[0]["id"]).to_dict()["status"] == "committed"
    assert not written.exists()
    service.close()


def test_bad_input_is_named_and_writes_nothing(tmp_path: Path, byterover, project, brv: str) -> None:
    from mnemon_ls_provider_byterover.engine import ByteRoverEngine

    engine = ByteRoverEngine.open({"cliPath": brv})
    plain = tmp_path / "plain"
    plain.mkdir()
    for connection, rule in (({}, "is required"), ({"workingDirectory": "relative/dir"}, "absolute"),
                             ({"workingDirectory": str(tmp_path / "a" / ".." / "b")}, "absolute path without '..'"),
                             ({"workingDirectory": str(plain)}, "not an initialised ByteRover project")):
        with pytest.raises(InvalidInput) as refused:
            engine.space(connection, space_id="s")
        assert refused.value.data["field"] == "connection.workingDirectory" and rule in refused.value.rule, connection
    rover = project("rover")
    space = engine.space({"workingDirectory": str(rover)}, space_id="s")
    tree = rover / ".brv" / "context-tree"
    before = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if ".git" not in p.parts)
    outside = tmp_path / "outside.md"
    outside.write_text("not in the tree")
    for junk in ("decision~nothing.md", "h~" + "0" * 40, "b64~%%%", "b64~" + base64.urlsafe_b64encode(
            b"../../outside.md").decode().rstrip("="), ".brv~config.json", "b64~" + base64.urlsafe_b64encode(
            b".git/HEAD").decode().rstrip("="), "infra~..~x.md"):
        with pytest.raises(InvalidInput) as refused:
            space.forget(junk)
        assert refused.value.data["field"] == "id", junk
    assert outside.exists()
    (tree / "fact").write_text("a file where the category's folder would go")
    with pytest.raises(ProviderUnavailable) as unwritable:
        space.remember("Facts go here", category="fact", importance=3, tags=[], entities=[], source="user")
    assert unwritable.value.data["reason"] == "engine-failed" and "cannot write the entry" in unwritable.value.message
    after = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if ".git" not in p.parts)
    assert after == sorted([*before, "fact"])  # nothing else written, no temporary file left
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tree / "insight").symlink_to(elsewhere)  # a domain folder that leads out of the tree: nothing written there
    with pytest.raises(ProviderUnavailable) as escaped:
        space.remember("Insights go here", category="insight", importance=3, tags=[], entities=[], source="user")
    assert "leads out of the context tree" in escaped.value.message
    assert list(elsewhere.iterdir()) == []
    # a project whose tree went away: its space is refused naming the field, other spaces still answer
    service = SpacesService(tmp_path / "root", provider_timeout=120)
    service.thirdparty.enable("byterover", {"cliPath": brv})
    native = service.create_space("Native", "native", active=True).record.id
    service.remember("dark mode is the default theme of the docs site", space_id=native)
    gone = project("gone")
    service.thirdparty.discover("byterover")
    lost = space_of(service, gone)
    service.activate(lost)
    import shutil

    shutil.rmtree(gone / ".brv")
    result = service.recall("dark mode theme").to_dict()
    assert [r["spaceId"] for r in result["results"]] == [native]
    status = {s["spaceId"]: s for s in result["sources"]}
    assert status[lost]["status"] == "unavailable" and "not an initialised ByteRover project" in status[lost]["hint"]
    service.close()


def test_an_engine_that_goes_down_is_isolated_in_federated_recall(tmp_path: Path, own_byterover, brv: str) -> None:
    team = own_byterover.init_project(tmp_path / "team")
    root = tmp_path / "root"
    service = SpacesService(root, provider_timeout=120)
    service.thirdparty.enable("byterover", {"cliPath": brv, "timeoutSeconds": "8"})
    space = space_of(service, team)
    service.activate(space)
    mine = service.remember("dark mode is what the team ships first", space_id=space).to_dict()["id"]
    native = service.create_space("Native", "native", active=True).record.id
    service.remember("dark mode is the default theme of the docs site", space_id=native)
    both = wait_for(lambda: {r["spaceId"] for r in service.recall("dark mode theme").to_dict()["results"]} == {
        space, native}, "the write in the team space")
    assert both and mine
    service.close()
    # ByteRover's daemon stops and cannot start again: its login service is gone
    own_byterover.stub.stop()
    own_byterover.stop(remove=False)
    fresh = SpacesService(root, provider_timeout=120)
    result = fresh.recall("dark mode theme").to_dict()
    assert [r["spaceId"] for r in result["results"]] == [native]
    status = {s["spaceId"]: s for s in result["sources"]}
    assert status[space]["status"] == "unavailable" and result["failed"] == [space]
    assert "gave no answer within 8 s (timeoutSeconds)" in status[space]["hint"], status[space]
    fresh.close()


def test_item_ids_map_to_tree_paths_and_back() -> None:
    from mnemon_ls.spaces.model import validate_item_id
    from mnemon_ls_provider_byterover.engine import item_id, path_of

    for path in ("decision/mnemon_ls/we_roll_back_0123.md", "x.md", "a/b/c/d.md", "odd~name/x.md", "with space/x.md",
                 "a..b/x.md", "b64/x.md", "h/x.md", "部署/窗口.md", "x" * 190 + "/y.md"):
        item = item_id(path)
        assert validate_item_id(item) == item and path_of(item) == path, path
    assert item_id("decision/mnemon_ls/x.md") == "decision~mnemon_ls~x.md"
    assert item_id("odd~name/x.md").startswith("b64~") and item_id("x" * 300 + ".md").startswith("h~")
    assert path_of("b64~%%%") is None
    padded = "b64~" + base64.urlsafe_b64encode(b"odd~name/x.md").decode()
    assert padded.endswith("=") and path_of(padded) is None  # another spelling of an id: not one recall gives


def test_what_is_remembered_reads_back_exactly_and_in_byterovers_format(tmp_path: Path) -> None:
    """The entry format, read back without the engine (its search is what the other tests drive): text that looks
    like front matter or ByteRover's own headings, quotes, CJK, CRLF and a leading ``#`` come back as given."""
    from mnemon_ls_provider_byterover.engine import ByteRoverEngine, ByteRoverSpace, read_entry, path_of

    tree = tmp_path / "p" / ".brv" / "context-tree"
    tree.mkdir(parents=True)
    space = ByteRoverSpace(ByteRoverEngine("/nonexistent/brv", 1, None), tmp_path / "p", tree, "s")
    for text in ("---\ntitle: fake\n---\nnot front matter", "## Reason\nmine\n\n## Narrative\n### Structure\nnested",
                 "# Heading first\n\n- 'single' and \"double\" quotes: a: b", "中文：部署窗口。English too",
                 "line one\r\nline two", "tags: [x]\n---"):
        receipt = space.remember(text, category="insight", importance=2, tags=["a b", "中文"], entities=["e"],
                                 source="agent:test")
        item = read_entry(tree, path_of(receipt["id"]))
        assert (item.content, item.category, item.importance, item.tags, item.source) == (
            text, "insight", 2, ["a b", "中文"], "agent:test"), text
        raw = (tree / path_of(receipt["id"])).read_bytes().decode()
        assert raw.startswith("---\ntitle: ") and "\nrelated: []\nkeywords: []\ncreatedAt: '" in raw
        assert raw.endswith(f"## Reason\nRemembered through mnemon-ls\n\n## Narrative\n### Structure\n{text}\n")
    assert space.count() == 6 and not [p for p in tree.rglob("*") if p.name.endswith(".tmp")]


def test_a_brv_the_caller_gave_up_on_does_not_outlive_mnemon_ls(tmp_path: Path) -> None:
    """A recall whose caller stopped waiting (the provider timeout of a federated recall) and then exited must not
    leave its ``brv search`` running (seen: one alive two minutes after ``mnemon-ls recall`` had returned). A
    stand-in ``brv`` that hangs, as one whose daemon cannot start does; the process that ran it exits while it
    runs; it is gone then."""
    import subprocess
    import sys
    import time

    project = tmp_path / "proj"
    (project / ".brv" / "context-tree").mkdir(parents=True)
    pidfile = tmp_path / "brv.pid"
    stub = tmp_path / "brv"
    stub.write_text(f"#!/bin/sh\necho $$ > {pidfile}.tmp && mv {pidfile}.tmp {pidfile}\nexec sleep 600\n")
    stub.chmod(0o755)
    script = (
        "import pathlib, sys, threading, time\n"
        "from mnemon_ls_provider_byterover.engine import ByteRoverEngine\n"
        f"engine = ByteRoverEngine.open({{'cliPath': {str(stub)!r}, 'timeoutSeconds': '600'}})\n"
        f"space = engine.space({{'workingDirectory': {str(project)!r}}}, space_id='s')\n"
        "threading.Thread(target=lambda: space.search('tuesdays', limit=5), daemon=True).start()\n"
        f"started, deadline = pathlib.Path({str(pidfile)!r}), time.monotonic() + 60\n"
        "while not started.exists():  # the event: the stand-in brv has started\n"
        "    assert time.monotonic() < deadline\n"
        "    time.sleep(0.05)\n"
        "sys.exit(0)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    pid = int(pidfile.read_text())

    def alive() -> bool:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        return state != "Z"

    deadline = time.monotonic() + 30
    while alive() and time.monotonic() < deadline:
        time.sleep(0.05)  # polling for the process's end, the event itself
    assert not alive(), f"the brv search {pid} outlived the process that ran it"


def test_an_entry_whose_front_matter_nests_too_deep_is_read_as_text_not_a_failed_space(tmp_path: Path) -> None:
    """A hand-written entry whose YAML front matter nests thousands of levels (PyYAML recurses: RecursionError)
    made every recall of its space fail ("provider-failed: RecursionError"); it is read as an entry without front
    matter, and the other entries still answer."""
    from mnemon_ls_provider_byterover.engine import read_entry

    tree = tmp_path / "p" / ".brv" / "context-tree"
    (tree / "x").mkdir(parents=True)
    text = "---\na: " + "[" * 3000 + "\n---\ndeploy on tuesday\n"
    (tree / "x" / "deep.md").write_text(text)
    item = read_entry(tree, "x/deep.md")
    assert item is not None and item.content == text.strip() and item.tags == [] and item.category == "general"


def test_tags_and_source_with_unicode_line_breaks_read_back_exactly(tmp_path: Path) -> None:
    """PyYAML writes U+0085 (NEL) raw inside a quoted scalar and folds it into a space when reading: a tag
    ``a\\x85b`` (which mnemon-ls accepts) read back as ``a b``. What is written must read back as given."""
    from mnemon_ls_provider_byterover.engine import ByteRoverEngine, ByteRoverSpace, read_entry, path_of

    tree = tmp_path / "p" / ".brv" / "context-tree"
    tree.mkdir(parents=True)
    space = ByteRoverSpace(ByteRoverEngine("/nonexistent/brv", 1, None), tmp_path / "p", tree, "s")
    for tags, source in ((["a\x85b", "\x85---\x85"], "agent:x"), (["ok"], "agent:\x85y"),
                         (["a\u2028b", "中文\u2029"], "s\r"), (["\x85"], "agent:z")):
        receipt = space.remember("nel text", category="fact", importance=3, tags=tags, entities=[], source=source)
        item = read_entry(tree, path_of(receipt["id"]))
        assert (item.tags, item.source, item.category, item.importance) == (tags, source, "fact", 3), tags


def test_a_hand_written_boolean_importance_is_no_importance(tmp_path: Path) -> None:
    """``mnemonImportance: true`` (YAML's boolean, an ``int`` to Python) was returned as importance ``true``."""
    from mnemon_ls_provider_byterover.engine import read_entry

    tree = tmp_path / "p" / ".brv" / "context-tree"
    (tree / "x").mkdir(parents=True)
    (tree / "x" / "b.md").write_text("---\nmnemonCategory: fact\nmnemonImportance: true\nmnemonSource: s\n---\n"
                                     "## Narrative\n### Structure\nbody\n")
    item = read_entry(tree, "x/b.md")
    assert item.importance is None and item.to_dict()["importance"] is None and item.category == "fact"


def test_a_text_that_cannot_be_encoded_leaves_no_file_and_is_named(tmp_path: Path) -> None:
    """The engine called directly with a lone surrogate (mnemon-ls's service refuses one first) raised a bare
    UnicodeEncodeError and left its hidden temporary file and new folders in the tree."""
    from mnemon_ls_provider_byterover.engine import ByteRoverEngine, ByteRoverSpace

    tree = tmp_path / "p" / ".brv" / "context-tree"
    tree.mkdir(parents=True)
    space = ByteRoverSpace(ByteRoverEngine("/nonexistent/brv", 1, None), tmp_path / "p", tree, "s")
    with pytest.raises(InvalidInput) as refused:
        space.remember("bad \ud800 text", category="fact", importance=3, tags=[], entities=[], source="s")
    assert refused.value.data["field"] == "content"
    with pytest.raises(InvalidInput) as refused:
        space.remember("ok", category="fact", importance=3, tags=["\udcff"], entities=[], source="s")
    assert refused.value.data["field"] == "tags"
    assert list(tree.rglob("*")) == []


def test_discovery_lists_a_project_once_however_its_path_is_spelled(tmp_path: Path) -> None:
    """``brv locations`` rows naming one project as ``/p``, ``/p/``, ``/p/.`` and ``/a//p`` (a hand-edited
    registry) were four spaces of the same project; they are one, under its normal path."""
    from mnemon_ls_provider_byterover.engine import ByteRoverEngine

    project = tmp_path / "p"
    (project / ".brv" / "context-tree").mkdir(parents=True)
    rows = [{"projectPath": p, "isInitialized": True}
            for p in (f"{project}/", str(project), f"{project}/.", f"{tmp_path}//p", f"{tmp_path}/x/../p")]
    stand_in = tmp_path / "brv"
    stand_in.write_text("#!/bin/sh\necho '" + json.dumps({"success": True, "data": {"locations": rows}}) + "'\n")
    stand_in.chmod(0o755)
    found = ByteRoverEngine.open({"cliPath": str(stand_in)}).discover()
    assert [(n.external_id, n.connection) for n in found] == [(str(project), {"workingDirectory": str(project)})]


def test_forget_when_a_derived_sibling_is_a_directory_deletes_the_entry_and_says_so(tmp_path: Path) -> None:
    """A folder named like a derived sibling (``real.abstract.md/``) made forget raise a bare IsADirectoryError
    after the entry's file was already deleted; the entry is deleted, the folder is left, the receipt says so."""
    from mnemon_ls_provider_byterover.engine import ByteRoverEngine, ByteRoverSpace

    tree = tmp_path / "p" / ".brv" / "context-tree"
    (tree / "y" / "real.abstract.md").mkdir(parents=True)
    (tree / "y" / "real.abstract.md" / "keep.md").write_text("keep")
    (tree / "y" / "real.md").write_text("x")
    (tree / "y" / "real.overview.md").write_text("derived")
    space = ByteRoverSpace(ByteRoverEngine("/nonexistent/brv", 1, None), tmp_path / "p", tree, "s")
    receipt = space.forget("y~real.md")
    assert receipt["status"] == "deleted" and "real.abstract.md" in receipt["message"]
    assert not (tree / "y" / "real.md").exists() and not (tree / "y" / "real.overview.md").exists()
    assert (tree / "y" / "real.abstract.md" / "keep.md").read_text() == "keep"


def test_a_query_holding_nul_is_searched_not_a_failed_space(tmp_path: Path) -> None:
    """A query holding U+0000 (which mnemon-ls's service lets through) made the space fail ("provider-failed:
    ValueError: embedded null byte": no command argument can hold one); ByteRover splits words on it anyway, so it
    is searched as a space. A stand-in ``brv`` records the query it is given."""
    from mnemon_ls_provider_byterover.engine import ByteRoverEngine

    project = tmp_path / "p"
    (project / ".brv" / "context-tree").mkdir(parents=True)
    said = tmp_path / "said"
    stand_in = tmp_path / "brv"
    stand_in.write_text(f"#!/bin/sh\nfor a; do last=$a; done\nprintf %s \"$last\" > {said}\n"
                        "echo '{\"success\":true,\"data\":{\"results\":[]}}'\n")
    stand_in.chmod(0o755)
    space = ByteRoverEngine.open({"cliPath": str(stand_in)}).space({"workingDirectory": str(project)}, space_id="s")
    assert space.search("deploy\x00tuesday", limit=3).items == []
    assert said.read_text() == "deploy tuesday"


def test_a_hand_edited_working_directory_too_long_for_the_system_is_named(tmp_path: Path) -> None:
    """A ``workingDirectory`` longer than the system allows (a hand-edited registry) raised a bare OSError
    (ENAMETOOLONG) instead of the error naming the field."""
    from mnemon_ls_provider_byterover.engine import ByteRoverEngine

    engine = ByteRoverEngine("/nonexistent/brv", 1, None)
    for project in (f"{tmp_path}/{'a' * 5000}", f"{tmp_path}/{'b' * 300}/p"):
        with pytest.raises(InvalidInput) as refused:
            engine.space({"workingDirectory": project}, space_id="s")
        assert refused.value.data["field"] == "connection.workingDirectory"
