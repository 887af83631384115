"""Issue 23 (5): credentials with no key name around them.

A bare AWS secret access key in prose is redacted by every text write (``runtime add``, pack import); a
random-looking tag or entity of 20+ characters (a password, a hex token) is a credential too (refused
under ``secrets: reject``, replaced under ``redact``, kept under ``allow``), on the command line, in
``mnemon.db``, the side index, packs and workspace records; identifiers and prose stay exactly as given.
Real roots, the real CLI as a subprocess, real SQLite files."""

from __future__ import annotations

import json
import random
import sqlite3
import string
from pathlib import Path

import pytest

from mnemon_ls import packs
from mnemon_ls.errors import InvalidInput, PackRefused
from mnemon_ls.records import RecordsSource
from mnemon_ls import redact
from mnemon_ls.redact import find_secrets, redact_text
from mnemon_ls.runtime import ops
from tests.helpers import procs
from tests.helpers.packs import host_on
from tests.redact_samples import GITHUB, PROSE
from tests.cli.test_cli import Cli

AWS_EXAMPLE = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS's documented example secret access key
AWS_PROSE = f"prod AWS secret {AWS_EXAMPLE}"
PASSWORD = "Tr0ub4dor&3x-Pr0d-9fKq!Zm"  # 25 characters, no key name
_RNG = random.Random(23)
HEX_TOKEN = "".join(_RNG.choice("0123456789abcdef") for _ in range(44))  # a 44-character hex token
VALUES = (AWS_EXAMPLE, PASSWORD, HEX_TOKEN)


def raw_bytes(root: Path) -> bytes:
    """Every byte of every file under ``root`` (databases, WALs, the side index, projections)."""
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_runtime_add_redacts_a_bare_aws_secret_or_refuses_it(cli: Cli) -> None:
    before = procs.tree_snapshot(cli.data)
    refused = cli.run("runtime", "add", "--content", AWS_PROSE, "--secrets", "reject")
    assert refused.returncode == 2 and AWS_EXAMPLE not in refused.stderr + refused.stdout
    assert "content: holds what looks like an AWS secret access key at character position 16" in refused.stderr
    assert procs.tree_snapshot(cli.data) == before  # a refusal writes nothing

    out = cli.ok("runtime", "add", "--content", AWS_PROSE)
    assert "Redacted 1 value that looked like credentials (aws-secret-access-key)." in out
    assert cli.contents("memory") == ["prod AWS secret [redacted:aws-secret-access-key]"]
    assert AWS_EXAMPLE.encode() not in raw_bytes(cli.data)


def test_remember_tags_and_entities_are_judged_as_credentials(cli: Cli) -> None:
    cli.ok("space", "create", "--name", "Project", "--description", "decisions", "--active")
    db = cli.data / "data" / "default" / "mnemon.db"
    args = ("remember", "deploy credentials were rotated", "--tag", "deploy_notes", "--tag", PASSWORD,
            "--entity", HEX_TOKEN, "--entity", "src/deploy/rotateKeys2.py")

    before = procs.tree_snapshot(cli.data)
    refused = cli.run(*args, "--secrets", "reject")
    assert refused.returncode == 2 and not any(v in refused.stderr + refused.stdout for v in VALUES)
    assert refused.stderr.startswith("mnemon-ls: error: --tag (the 2nd one): holds what looks like a random value "
                                     "of 20 or more characters")
    assert procs.tree_snapshot(cli.data) == before

    receipt = json.loads(cli.ok(*args, "--json"))  # the default policy: redact
    assert receipt["tags"] == ["deploy_notes", "[redacted:high-entropy-value]"]
    assert receipt["entities"][:2] == ["[redacted:high-entropy-value]", "src/deploy/rotateKeys2.py"]
    assert receipt["redacted"] == {"count": 2, "kinds": {"high-entropy-value": 2}, "fields": ["tags[1]", "entities[0]"]}
    cli.ok("recall", "rotated")  # builds the side index from what was stored
    assert (db.parent / ".mnemon-ls-index.db").is_file()
    everything = raw_bytes(cli.data)
    assert not any(v.encode() in everything for v in VALUES)

    kept = json.loads(cli.ok("remember", "the allow policy keeps labels", "--tag", PASSWORD, "--secrets", "allow",
                             "--json"))
    assert kept["tags"] == [PASSWORD]
    # doctor's scan and `mnemon-ls redact --apply` judge stored labels the same way
    scan = cli.run("redact", "--json")
    assert scan.returncode == 1 and PASSWORD not in scan.stdout  # 1: values are left
    found = json.loads(scan.stdout)["findings"]
    assert [f["kind"] for f in found if ".tags" in f["location"]] == ["high-entropy-value"]
    cli.ok("redact", "--apply")
    assert PASSWORD.encode() not in raw_bytes(cli.data)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        tags = [json.loads(t) for (t,) in con.execute("SELECT tags FROM insights WHERE deleted_at IS NULL")]
    assert sorted(map(tuple, tags)) == [("[redacted:high-entropy-value]",),
                                        ("deploy_notes", "[redacted:high-entropy-value]")]


def test_pack_import_redacts_or_refuses_bare_secrets_and_random_labels(tmp_path: Path) -> None:
    host = host_on(tmp_path / "a", secrets="allow")
    try:
        host.runtime.mutate(ops.validate_request("add", "memory", AWS_PROSE))
        host.spaces.create_space("Project", "decisions", active=True)
        host.spaces.remember("deploy credentials were rotated", tags=["deploy_notes", PASSWORD], entities=[HEX_TOKEN])
        full = packs.export_pack(host).data
        spaces_only = packs.export_pack(host, "memory-spaces").data
    finally:
        host.close()

    target = host_on(tmp_path / "b")
    try:
        target.import_pack(full)
        assert [e.content for e in target.runtime.read().memory] == ["prod AWS secret [redacted:aws-secret-access-key]"]
        [item] = target.recall("rotated").results
    finally:
        target.close()
    everything = raw_bytes(tmp_path / "b")
    assert not any(v.encode() in everything for v in VALUES)
    assert b"deploy_notes" in everything  # the identifier tag is kept

    strict = host_on(tmp_path / "c", secrets="reject")
    try:
        with pytest.raises(InvalidInput) as runtime_refused:
            strict.import_pack(full)
        assert runtime_refused.value.field == "payload/runtime/memories.json:entries[0].content"
        assert runtime_refused.value.data["kind"] == "aws-secret-access-key"
        with pytest.raises(PackRefused) as spaces_refused:
            strict.import_pack(spaces_only)
        assert spaces_refused.value.data["kind"] == "high-entropy-value"
        assert ".tags" in spaces_refused.value.data["location"] or ".entities" in spaces_refused.value.data["location"]
    finally:
        strict.close()
    assert procs.tree_snapshot(tmp_path / "c") in ({}, {".": ("dir", 0o700)})


def test_record_tags_are_labels_too(tmp_path: Path) -> None:
    env = {"DSH_HOME": str(tmp_path / "dsh")}
    (tmp_path / "ws").mkdir()
    source = RecordsSource(tmp_path / "ws", env=env)
    made = source.create("project", "fact", "rotation", "keys were rotated", tags=["ops", HEX_TOKEN])
    assert made.record.tags == ["ops", "[redacted:high-entropy-value]"]
    bundle = source.export(scopes=["project"])
    bundle["records"][0]["tags"] = ["ops", PASSWORD]
    (tmp_path / "other").mkdir()
    assert RecordsSource(tmp_path / "other", env=env).import_bundle(bundle, scope="project")["imported"] == 1
    assert not any(v.encode() in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() for v in VALUES)
    strict = RecordsSource(tmp_path / "ws", env=env, secrets="reject")
    with pytest.raises(InvalidInput) as refused:
        strict.edit(made.record.id, scope="project", tags=["ops", PASSWORD])
    assert refused.value.field == "tags[1]" and PASSWORD not in refused.value.message


# ---------------------------------------------------------------- what is, and is not, a credential

IDENTIFIERS = [
    "max_content_chars_limit_v2", "getSecretValueV2FromEnv", "WorkspaceHost.export_pack", "ENVIRONMENT_SETTINGS_V2",
    "src/components/UserProfileCard2.tsx", "mnemon_ls/runtime/snapshot.py", "/usr/local/lib/python3.11/site-packages",
    "docs/architecture-2026-plan.md", "550e8400-e29b-41d4-a716-446655440000", "https://github.com/org/repo/pull/1234",
    "mnemon-pack-20260101T000000Z.zip", "workspace/didChangeWorkspaceFolders", "pytest-asyncio==1.5.0",
    "TypeScriptLanguageServer", "java/net/MulticastSocket/PromiscuousIPv6", "sk-learn-compatible-estimator",
    "2026-09-15T08:00:00.000Z", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    "vscode.workspace.workspaceFolders", "refactor/split-cli-into-package", "[redacted:high-entropy-value]",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "v1.2.3-rc.1+build.20260101",
    "arn:aws:iam::123456789012:role/DeployRole", "kubernetes-ingress-nginx-controller-7d9f8",
]


@pytest.mark.parametrize("label", IDENTIFIERS)
def test_identifiers_are_labels_not_credentials(label: str) -> None:
    assert redact.find_label_secrets(label) == [] and find_secrets(label) == []


def test_prose_and_hashes_in_content_stay_as_written() -> None:
    texts = [*PROSE, "Reverted in 9fceb02d0ae598e95dc970b74767f19372d61af8; see java/net/MulticastSocket/PromiscuousIPv6",
             "The build cache key is sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= for the empty file"]
    for text in texts:
        assert redact_text(text) == (text, []), text
    for text in PROSE:  # prose through the label rule too: no word of it looks generated
        assert redact.find_label_secrets(text) == [], text


def test_generated_values_are_labels_that_count() -> None:
    rng = random.Random(5)

    def token(n: int, alphabet: str) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    hexes = [token(n, "0123456789abcdef") for n in (32, 40, 44, 64) for _ in range(50)]
    assert all(redact.find_label_secrets(h)[0].kind == "high-entropy-value" for h in hexes)
    base62 = [token(40, string.ascii_letters + string.digits) for _ in range(200)]
    assert sum(bool(redact.find_label_secrets(v)) for v in base62) >= 190  # measured ~97% at 40 characters
    aws = [token(40, string.ascii_letters + string.digits + "/+") for _ in range(200)]
    found = [find_secrets(f"the key {k} is live") for k in aws]
    assert sum(bool(f) and f[0].kind == "aws-secret-access-key" for f in found) >= 195
    assert [m.kind for m in redact.find_label_secrets(f"{PASSWORD} and {HEX_TOKEN}")] == ["high-entropy-value"] * 2
    assert [(m.start, m.end) for m in redact.find_label_secrets(f"prod-{HEX_TOKEN}")] == [(0, 49)]  # inside a word


def test_a_branch_scope_tag_is_judged_like_a_branch_name(tmp_path: Path) -> None:
    """Capacity maintenance archives branch-scoped entries with ``branch:<name>`` tags; a generated-looking
    branch name must keep its scope (a known credential format is still refused, as for branch names)."""
    branch = "wip/3f9a2c7e1b4d8f6a0c2e9d7b"
    assert redact.find_label_secrets(f"branch:{branch}")  # as a plain label it would count
    host = host_on(tmp_path / "root")
    try:
        host.spaces.create_space("Project", "decisions", active=True)
        kept = host.spaces.remember_many("default", [{"content": "archived fact", "tags": [f"branch:{branch}"]}])
        assert kept[0].to_dict()["tags"] == [f"branch:{branch}"]
        assert host.spaces.remember("scoped fact", branch=branch).to_dict()["tags"] == [f"branch:{branch}"]
        assert host.stored_secrets()["findings"] == []
        with pytest.raises(InvalidInput) as refused:  # a known format is refused, as in a branch name
            host.spaces.remember("x", tags=[f"branch:feature/{GITHUB['ghp']}", "ok"])
        assert refused.value.field == "tags[0]" and refused.value.data["kind"] == "github-token"
    finally:
        host.close()
