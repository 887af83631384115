"""Every path that sends Runtime text to an assistant redacts a credential another program wrote into
``memories.json``, and the files stay as they are (mnemon_ls/runtime/foreign.py): the session-start hook's
past-deadline fallback (USER.md / MEMORY.md as on disk), the MCP ``mnemon://runtime/*.md`` resources, ``review``
(whose Edit and Remove now select a Runtime entry by its ``key``, never by its text) and the receipt of a
mutation that echoes the old text.

The value is written the way another program would (``memories.json`` by hand, the projections as the repair
rebuilds them: byte for byte the same entries); every command is the real command line in a real git repository.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.cli.test_foreign_secrets import SECRET, run, store  # noqa: F401  (store: the fixture)
from tests.redact_samples import AWS_ID

OLD = "2020-01-01T10:00:00.000Z"  # neither updated nor confirmed for years: due for review


def write_by_hand(root: Path, content: str, target: str = "memory") -> None:
    """Add an entry (last updated :data:`OLD`) to ``memories.json`` as another program would: the file only."""
    path = root / "runtime" / "memories.json"
    document = json.loads(path.read_text())
    entry = dict(next(e for e in document["entries"] if e["target"] == target))
    entry.update(content=content, created_at=OLD, updated_at=OLD)
    document["entries"].append(entry)
    path.write_bytes((json.dumps(document, indent=2) + "\n").encode())


def files(root: Path) -> dict[str, bytes]:
    """The bytes of ``memories.json``, USER.md and MEMORY.md."""
    return {name: (root / "runtime" / name).read_bytes() for name in ("memories.json", "USER.md", "MEMORY.md")}


def repaired(repo: Path, root: Path) -> dict[str, bytes]:
    """The projections rebuilt from the hand-written ``memories.json`` (a ``runtime list`` repairs them first), the
    files' bytes then; the projections hold the credential, as the truth does."""
    run(repo, root, "runtime", "list")
    before = files(root)
    assert SECRET.encode() in before["MEMORY.md"]
    return before


def _hook(repo: Path, root: Path, secrets: str | None = None) -> str:
    import subprocess

    from tests.helpers.procs import child_env
    from tests.helpers.zygote import mnemon_command

    extra = {"MNEMON_SEMANTIC": "off", "MNEMON_RUNTIME_USER_SCOPE": "storage", "MNEMON_HOOK_BUDGET_MS": "0"}
    if secrets:
        extra["MNEMON_SECRETS"] = secrets
    done = subprocess.run([*mnemon_command(), "hook", "session-start", "--workspace", str(repo), "--scope", "custom",
                           "--data-dir", str(root)], capture_output=True, text=True, cwd=repo, input="{}",
                          timeout=120, env=child_env(**extra))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("MNEMON RUNTIME MEMORY (PARTIAL)\n"), done.stdout
    return done.stdout


def test_session_start_past_its_deadline_prints_the_projections_redacted_and_leaves_them(store):
    repo, root = store
    write_by_hand(root, f"deploy token is {SECRET} for the staging box")
    write_by_hand(root, f"my AWS key id {AWS_ID}", target="user")
    before = repaired(repo, root)
    out = _hook(repo, root)
    assert SECRET not in out and AWS_ID not in out
    assert ('<runtime-memory-file name="USER.md">\nprefers short answers\n§\nmy AWS key id '
            '[redacted:aws-access-key-id]\n</runtime-memory-file>\n(1 value in USER.md that looks like a credential '
            'another program stored is shown redacted; the file is unchanged: `mnemon-ls redact --apply` replaces '
            'it)\n') in out
    assert ('\n§\ndeploy token is [redacted:github-token] for the staging box\n</runtime-memory-file>\n(1 value in '
            'MEMORY.md that looks like a credential another program stored is shown redacted') in out
    assert files(root) == before
    raw = _hook(repo, root, secrets="allow")
    assert f"deploy token is {SECRET} for the staging box\n</runtime-memory-file>" in raw and "redacted" not in raw
    assert files(root) == before


def test_the_mcp_projection_resources_redact_and_leave_the_files(store):
    from mnemon_ls.host import WorkspaceHost
    from mnemon_ls.mcp.server import _projection_text
    from mnemon_ls.settings import Settings

    repo, root = store
    write_by_hand(root, f"deploy token is {SECRET} for the staging box")
    write_by_hand(root, f"my AWS key id {AWS_ID}", target="user")
    before = repaired(repo, root)
    for secrets, memory, user in (
            ("redact", "deploy token is [redacted:github-token] for the staging box",
             "my AWS key id [redacted:aws-access-key-id]"),
            ("allow", f"deploy token is {SECRET} for the staging box", f"my AWS key id {AWS_ID}")):
        settings = Settings(storageScope="custom", dataDir=str(root), runtimeUserScope="storage", secrets=secrets)
        host = WorkspaceHost(repo, settings)
        try:
            assert _projection_text(host, target="memory") == ("the suite runs with pytest -n 2\n§\nreleases are "
                                                               f"tagged from main\n§\n{memory}")
            assert _projection_text(host, target="user") == f"prefers short answers\n§\n{user}"
        finally:
            host.close()
    assert files(root) == before


def _key(content: str, target: str = "memory") -> str:
    return f"{target}:" + hashlib.sha256(content.encode()).hexdigest()


def test_review_sends_a_runtime_entry_redacted_and_its_key_edits_and_removes_it(store):
    repo, root = store
    stored = f"deploy token is {SECRET} for the staging box"
    write_by_hand(root, stored)
    write_by_hand(root, f"old staging token {SECRET}z")
    before = repaired(repo, root)
    data = json.loads(run(repo, root, "review", "--json").stdout)
    assert SECRET not in json.dumps(data)
    listed = {m["key"]: m for m in data["memories"] if m["source"] == "runtime"}
    assert len(listed) == 2, data
    first = listed[_key(stored)]
    assert (first["content"], first["preview"]) == ("deploy token is [redacted:github-token] for the staging box",) * 2
    assert files(root) == before  # a read writes nothing
    # Edit: the entry the key names is replaced; the receipt does not echo the old value
    done = run(repo, root, "runtime", "replace", "--key", first["key"], "--content", "deploy token lives in the vault",
               "--json")
    receipt = json.loads(done.stdout)
    assert SECRET not in done.stdout + done.stderr
    assert receipt["replaced"] == {"from": "deploy token is [redacted:github-token] for the staging box",
                                   "to": "deploy token lives in the vault"}
    contents = [e["content"] for e in json.loads((root / "runtime" / "memories.json").read_text())["entries"]]
    assert "deploy token lives in the vault" in contents and stored not in contents
    assert f"old staging token {SECRET}z" in contents  # the other hand-written entry is left as it was
    # Remove by key
    second = _key(f"old staging token {SECRET}z")
    done = run(repo, root, "runtime", "remove", "--key", second, "--json")
    assert SECRET not in done.stdout + done.stderr
    assert json.loads(done.stdout)["removed"] == "old staging token [redacted:github-token]"
    assert SECRET not in (root / "runtime" / "memories.json").read_text()
    # a key that names nothing (any more) is no-match naming key, and quotes no entry
    gone = run(repo, root, "runtime", "remove", "--key", second, check=False)
    assert gone.returncode == 3
    assert gone.stderr.startswith(f"mnemon-ls: error: --key: no memory entry has the key {second} (it was changed or removed "
                                  "since it was listed)"), gone.stderr


def test_a_key_is_checked_before_anything_is_written(store):
    repo, root = store
    before = files(root)
    cases = [(("runtime", "remove", "--key", "memory:abc"), "key: must be an entry key 'user:<sha256 hex>' or "
                                                           "'memory:<sha256 hex>'"),
             (("runtime", "remove", "--key", _key("prefers short answers", "user")),
              "key: names a user entry; the target is memory"),
             (("runtime", "remove", "--key", _key("x"), "--old-text", "x"),
              "--key: is not taken with --old-text: give one of the two")]
    for argv, message in cases:
        done = run(repo, root, *argv, check=False)
        assert done.returncode != 0 and message in done.stderr, done.stderr
    assert files(root) == before
    run(repo, root, "runtime", "remove", "--target", "user", "--key", _key("prefers short answers", "user"))
    assert "prefers short answers" not in (root / "runtime" / "memories.json").read_text()


def test_the_wake_and_runtime_list_send_the_repaired_projections_entries_redacted_and_leave_every_file(store):
    """The repair rebuilt USER.md / MEMORY.md from the hand-written ``memories.json`` (they hold the value, as the
    truth does); the wake (CLI, MCP, LSP: one operation) and ``runtime list --json`` (what ``mnemon/runtime/list``
    and the MCP tool answer) send it redacted, and none of the three files changes."""
    repo, root = store
    write_by_hand(root, f"deploy token is {SECRET} for the staging box")
    write_by_hand(root, f"my AWS key id {AWS_ID}", target="user")
    before = repaired(repo, root)
    memories = root / "runtime" / "memories.json"
    wake = run(repo, root, "wake").stdout
    assert SECRET not in wake and AWS_ID not in wake
    assert "\ndeploy token is [redacted:github-token] for the staging box\n" in wake
    assert "\nmy AWS key id [redacted:aws-access-key-id]\n" in wake
    assert (f"{memories}: MEMORY.md entry 3 holds what looks like a credential (github-token) that another program "
            "wrote; shown redacted, the file is unchanged: `mnemon-ls redact --apply` replaces it") in wake
    listed = json.loads(run(repo, root, "runtime", "list", "--json").stdout)
    assert [e["content"] for e in listed["entries"]] == [
        "prefers short answers", "my AWS key id [redacted:aws-access-key-id]", "the suite runs with pytest -n 2",
        "releases are tagged from main", "deploy token is [redacted:github-token] for the staging box"]
    assert files(root) == before


def test_runtime_list_gives_each_entry_the_key_replace_and_remove_take(store):
    """``runtime list --json`` had no ``key`` per entry, the ``memory:<sha256>``/``user:<sha256>`` key ``review``
    lists and ``runtime replace/remove --key`` take; a person had to hash the content. It is the key of the stored
    content, so an entry shown redacted is still named by it."""
    repo, root = store
    stored = f"deploy token is {SECRET} for the staging box"
    write_by_hand(root, stored)
    listed = json.loads(run(repo, root, "runtime", "list", "--json").stdout)["entries"]
    keys = {e["content"]: e["key"] for e in listed}
    assert keys["prefers short answers"] == "user:" + hashlib.sha256(b"prefers short answers").hexdigest()
    assert keys["the suite runs with pytest -n 2"] == (
        "memory:" + hashlib.sha256(b"the suite runs with pytest -n 2").hexdigest())
    redacted = keys["deploy token is [redacted:github-token] for the staging box"]
    assert redacted == "memory:" + hashlib.sha256(stored.encode()).hexdigest()
    run(repo, root, "runtime", "remove", "--key", redacted)
    run(repo, root, "runtime", "replace", "--target", "user", "--key", keys["prefers short answers"], "--content",
        "prefers answers with examples")
    left = json.loads(run(repo, root, "runtime", "list", "--json").stdout)["entries"]
    assert [e["content"] for e in left] == ["prefers answers with examples", "the suite runs with pytest -n 2",
                                           "releases are tagged from main"]
