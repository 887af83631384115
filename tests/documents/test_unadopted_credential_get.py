"""Reading a Document whose hand edit holds a credential a refresh does not adopt (its first line indented as a code
block under ``secrets: redact``, or any credential under ``secrets: reject``; real files, a real store, and the real
``mnemon-ls`` command line and MCP server as subprocesses). Search kept such a body with placeholders, but
``documents.get`` (``doc get``, the ``mnemon_document_manage`` tool's get, the ``mnemon://documents/{id}`` resource)
answered the body as on disk, credential and all, to whoever read it. It now answers the body as search keeps it
and says that the file on disk keeps a credential of that kind until it is fixed (never the value); the file itself
is left as typed. Under ``secrets: allow``, and for an adopted body, the body is answered as it is."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.documents.test_indented_hand_edit import hand_edit
from tests.documents.test_support import make_store
from tests.gitrepo import make_repo
from tests.helpers.zygote import mnemon_command
from tests.mcp.conftest import REPO, answer, mcp_session, server_env

TOKEN = "ghp_" + "Wq8mW2xR7tK4pL9vB3nH6cJ1dF5gS0aY2eU9"
INDENTED = f"    export GITHUB_TOKEN={TOKEN}\n    ./deploy.sh zebraword\n"
SHOWN = "export GITHUB_TOKEN=[redacted:github-token]\n    ./deploy.sh zebraword"


def _notice(relative_path: str) -> str:
    return (f"{relative_path}: the file holds what looks like a GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, "
            "github_pat_) in an edit made outside mnemon-ls and not adopted; shown here (as search shows it) with a "
            "placeholder in its place; the file on disk keeps it as typed until the file is fixed")


@pytest.mark.parametrize("secrets, body, shown", [
    ("redact", INDENTED, SHOWN),
    ("reject", f"Run ./deploy.sh zebraword with GITHUB_TOKEN={TOKEN}\n",
     "Run ./deploy.sh zebraword with GITHUB_TOKEN=[redacted:github-token]"),
], ids=["indented-under-redact", "under-reject"])
def test_get_answers_an_unadopted_credential_as_a_placeholder_and_says_the_file_keeps_it(
        tmp_path: Path, secrets: str, body: str, shown: str) -> None:
    store, _, _, clock = make_store(tmp_path, secrets=secrets)
    created = store.create("Deploy notes", "# Deploy\nRun the script.")
    record, path = created.document.record, Path(created.document.path)
    clock.tick()
    edited = hand_edit(path, body)

    read = store.get(record.id)
    assert read.content == shown and read.notices == (_notice(record.relative_path),)
    data = read.to_dict()
    assert TOKEN not in json.dumps(data) and data["notices"] == [_notice(record.relative_path)]
    assert (read.record.revision, read.record.content_hash) == (1, record.content_hash)  # not adopted
    assert path.read_bytes() == edited  # the file keeps it as typed until the person fixes it


def test_get_answers_the_body_as_it_is_under_allow_and_when_adopted(tmp_path: Path) -> None:
    store, _, _, clock = make_store(tmp_path, secrets="allow")
    created = store.create("Deploy notes", "# Deploy\nRun the script.")
    clock.tick()
    hand_edit(Path(created.document.path), INDENTED)
    read = store.get(created.document.record.id)
    assert TOKEN in read.content and read.notices == () and "notices" not in read.to_dict()

    plain = store.create("Plan", "Ship on Friday.")  # an adopted body: as it is
    read = store.get(plain.document.record.id)
    assert (read.content, read.notices) == ("Ship on Friday.", ()) and "notices" not in read.to_dict()


async def test_doc_get_on_the_command_line_and_in_mcp_shows_no_credential(tmp_path: Path) -> None:
    workspace, data_dir = Path(make_repo(tmp_path / "repo").workdir), tmp_path / "root"
    where = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*mnemon_command(), *args, *where], capture_output=True, text=True,
                              env=server_env(), cwd=str(REPO), timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc

    created = json.loads(cli("doc", "create", "--title", "Deploy notes", "--content", "# Deploy\nRun the script.",
                             "--json").stdout)["document"]
    doc_id, path, relative = created["id"], Path(created["path"]), created["relativePath"]
    edited = hand_edit(path, INDENTED)
    notice = _notice(relative)

    printed = cli("doc", "get", doc_id)
    assert printed.stdout == SHOWN + "\n"  # the body alone on stdout (pipes keep working), the note on stderr
    assert printed.stderr == f"mnemon-ls: note: {notice}\n"
    as_json = json.loads(cli("doc", "get", doc_id, "--json").stdout)
    assert (as_json["content"], as_json["notices"]) == (SHOWN, [notice])
    async with mcp_session(where, env=server_env()) as session:
        said = await answer(session, "mnemon_document_manage", {"action": "get", "id": doc_id})
        resource = await session.read_resource(f"mnemon://documents/{doc_id}")
    assert said.endswith(f"\n\n{SHOWN}\nnote: {notice}"), said
    assert resource.contents[0].text == SHOWN
    assert TOKEN not in printed.stdout + printed.stderr + said + resource.contents[0].text
    assert path.read_bytes() == edited
