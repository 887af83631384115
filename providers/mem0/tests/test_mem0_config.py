"""Configuring the Mem0 provider through real CLI subprocesses (nothing is opened: the provider is not
enabled): values are checked against Mem0's own field rules at configure time, naming the field and the
rule, and nothing is written; a credential is taken only from standard input (``--secret``), never from
``--set`` (the command line stays in the shell history), and ``--secret`` takes only credential fields."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.spaces import SpacesService
from provider_cli import cli


def test_credentials_come_only_from_standard_input_and_only_for_secret_fields(tmp_path: Path) -> None:
    key = "sk-" + "q7Zr2Lm9Xc4Vb8Nn1Kp5Tt3Yw6Ee0Ua"
    on_argv = cli(tmp_path, "provider", "configure", "mem0", "--set", f"apiKey={key}")
    assert on_argv.returncode == 2
    assert on_argv.stderr == ("mnemon-ls: error: services.apiKey: is a credential: give it with --secret apiKey "
                              "(read from standard input, so it stays out of the shell history); --clear-secret "
                              "apiKey removes it\n")
    assert key not in on_argv.stderr + on_argv.stdout
    plain = cli(tmp_path, "provider", "configure", "mem0", "--secret", "collection", stdin="team\n")
    assert plain.returncode == 2
    assert plain.stderr == ("mnemon-ls: error: services.collection: is not a credential field of Mem0 (--secret "
                            "takes only: apiKey, llmApiKey, pgPassword, vectorApiKey); give a plain field with --set "
                            "collection=VALUE\n")
    assert not (tmp_path / "data").exists()
    stored = cli(tmp_path, "provider", "configure", "mem0", "--set", "pgPort=5433", "--set", "infer=no",
                 "--secret", "pgPassword", stdin=f"{key}\n")
    assert stored.returncode == 0, stored.stderr
    assert "fields: infer, pgPort, pgPassword (secret)" in stored.stdout and key not in stored.stdout
    providers = tmp_path / "data" / "state" / "memory-providers.json"
    assert json.loads(providers.read_text())["services"]["mem0"] == {"pgPort": 5433, "infer": False,
                                                                      "pgPassword": key}
    assert providers.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("field, value, rule", [
    ("mode", "remote", 'must be one of local, openai (got "remote")'),
    ("vectorStore", "chroma", 'must be one of qdrant-local, qdrant, pgvector (got "chroma")'),
    ("embeddingDims", "12.5", 'must be an integer between 1 and 16000 (got "12.5")'),
    ("pgPort", "70000", 'must be an integer between 1 and 65535 (got "70000")'),
    ("timeoutSeconds", "0", 'must be a number of seconds between 0.1 and 600 (got "0")'),
    ("infer", "maybe", 'must be true or false (got "maybe")'),
    ("collection", "team space", "must be 1..64 letters, digits, '_' or '-' (got \"team space\")"),
    ("pgHost", "db.example.test:5432", "must be a host name, an IP address or a Unix socket directory (not a URL: "
                                       "the user goes in pgUser, the password in pgPassword) (got "
                                       "\"db.example.test:5432\")"),
    ("vectorEndpoint", "qdrant.local:6333", "must be an http(s) URL: begin with http:// or https:// "
                                            "(e.g. http://127.0.0.1:8888)"),
    ("userId", "alice", "is not a Mem0 service field (dataPath, mode, endpoint, apiKey, collection, embeddingModel, "
                        "embeddingDims, vectorStore, vectorEndpoint, vectorApiKey, pgHost, pgPort, pgDatabase, pgUser, "
                        "pgPassword, pgSslMode, timeoutSeconds, infer, llmEndpoint, llmModel, llmApiKey)"),
])
def test_a_value_breaking_a_mem0_field_rule_is_refused_at_configure(tmp_path: Path, field: str, value: str,
                                                                    rule: str) -> None:
    service = SpacesService(tmp_path)
    with pytest.raises(InvalidInput) as refused:
        service.thirdparty.configure("mem0", {field: value})
    assert (refused.value.field, refused.value.rule) == (f"services.{field}", rule)
    assert not (tmp_path / "state").exists()


def test_a_secret_breaking_no_rule_is_never_echoed(tmp_path: Path) -> None:
    service = SpacesService(tmp_path)
    with pytest.raises(InvalidInput) as refused:
        service.thirdparty.configure("mem0", {"apiKey": "x" * 9000})
    assert refused.value.rule == "must be at most 8000 characters" and "xxx" not in refused.value.message


def test_a_credential_typed_on_a_terminal_is_not_echoed(tmp_path: Path) -> None:
    """``--secret`` on a terminal prompts on it with echo off (it read a visible line before)."""
    import pty
    import select

    key = "sk-" + "t3rM1nalKey9Zr2Lm9Xc4Vb8Nn1Kp5T"
    master, slave = pty.openpty()
    slave_name = os.ttyname(slave)

    def controlling_terminal() -> None:  # the child's /dev/tty is the pty (getpass prompts there)
        os.setsid()
        os.close(os.open(slave_name, os.O_RDWR))

    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMON_")}
    env.update(MNEMON_DATA_DIR=str(tmp_path / "data"), MNEMON_STORAGE_SCOPE="global", MNEMON_SEMANTIC="off")
    proc = subprocess.Popen([sys.executable, "-m", "mnemon_ls", "provider", "configure", "mem0", "--secret", "apiKey"],
                            stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path,
                            preexec_fn=controlling_terminal)
    os.close(slave)
    screen = b""
    try:
        while b"apiKey" not in screen:  # wait for the prompt (echo is off once it is shown)
            ready, _, _ = select.select([master], [], [], 60)
            assert ready, screen
            screen += os.read(master, 1024)
        os.write(master, key.encode() + b"\n")
        out, err = proc.communicate(timeout=120)
        while select.select([master], [], [], 0)[0]:
            try:
                chunk = os.read(master, 1024)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            screen += chunk
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert b"Mem0 apiKey (not echoed): " in screen and key.encode() not in screen
    assert key not in out.decode() + err.decode()
    stored = json.loads((tmp_path / "data" / "state" / "memory-providers.json").read_text())
    assert stored["services"]["mem0"] == {"apiKey": key}


SECRET_RULE = ("C0 and C1 controls (U+0000..U+001F, U+007F..U+009F), U+2028, U+2029 and format characters "
               "(Unicode Cf, such as U+200B and U+FEFF) are refused")

FRAGMENT_RULE = ("must not have a fragment (#...): an HTTP client never sends it, and a credential pasted there would "
                 "be stored in plain text (put the key in apiKey)")
QUERY_RULE = ("must not carry a credential in its query string (api_key=, key=, token=, password=, secret=, ...): put "
              "the key in apiKey")

#: Bad values an attack pass got stored, each with the field and the rule the refusal must name.
BAD_FIELDS = [
    ("secret", "apiKey", "sk-nul\x00key-0123", f"must not contain control or invisible characters (found U+0000: "
                                              f"{SECRET_RULE})"),
    ("secret", "pgPassword", "pw\x1b[31mred", f"must not contain control or invisible characters (found U+001B: "
                                             f"{SECRET_RULE})"),
    ("secret", "apiKey", "sk-nel\x85key-0123", f"must not contain control or invisible characters (found U+0085: "
                                              f"{SECRET_RULE})"),
    ("secret", "llmApiKey", "sk-ls-key-0123\u2028", f"must not contain control or invisible characters (found "
                                                    f"U+2028: {SECRET_RULE})"),
    ("secret", "vectorApiKey", "\ufeffsk-bom-key-0123", f"must not contain control or invisible characters (found "
                                                       f"U+FEFF: {SECRET_RULE})"),
    ("secret", "pgPassword", "pw\u200bzero", f"must not contain control or invisible characters (found U+200B: "
                                            f"{SECRET_RULE})"),
    ("set", "endpoint", "http://127.0.0.1:99999/v1", "must have a port of ASCII digits between 1 and 65535 (or none: "
                                                      "the scheme's default)"),
    ("set", "vectorEndpoint", "http://127.0.0.1:0", "must have a port of ASCII digits between 1 and 65535 (or none: "
                                                     "the scheme's default)"),
    # an endpoint is stored in plain text: no fragment, no credential in the query, no user information
    ("set", "endpoint", "https://emb.example.test/v1#api_key=sk-frag-0123", FRAGMENT_RULE),
    ("set", "llmEndpoint", "https://llm.example.test/v1#", FRAGMENT_RULE),
    ("set", "vectorEndpoint", "https://q.example.test:6333/?api-key=qk-0123", QUERY_RULE),
    ("set", "endpoint", "https://emb.example.test/v1?x=1&access_token=at-0123", QUERY_RULE),
    ("set", "endpoint", "https://emb.example.test/v1?api%5Fkey=ak-0123", QUERY_RULE),
    ("set", "llmEndpoint", "https://llm.example.test/v1?region=eu;Password=pw-0123", QUERY_RULE),
    ("set", "endpoint", "https://user:pw-0123@emb.example.test/v1", "must not hold user information (user:password@ "
                                                                   "before the host): put the key in apiKey"),
    ("set", "dataPath", "~root/x.db", "must not start with ~name (another user's home): only ~ or ~/ (your own home) "
                                      "is expanded; give an absolute path instead"),
    ("set", "pgPort", "٥٤٣٢", 'must be an integer between 1 and 65535, in ASCII digits (0-9) (got "٥٤٣٢")'),
    ("set", "timeoutSeconds", "１０", "must be a number of seconds between 0.1 and 600, in ASCII digits (0-9) "
                                    '(got "１０")'),
]


@pytest.mark.parametrize("how, field, value, rule", BAD_FIELDS)
def test_a_bad_field_is_refused_by_the_cli_naming_the_field_and_the_rule(tmp_path: Path, how: str, field: str,
                                                                         value: str, rule: str) -> None:
    assert cli(tmp_path, "provider", "configure", "mem0", "--set", "collection=team").returncode == 0
    path = tmp_path / "data" / "state" / "memory-providers.json"
    before = path.read_bytes(), path.stat().st_mtime_ns
    for action in ("configure", "enable"):
        args = ("--secret", field) if how == "secret" else ("--set", f"{field}={value}")
        done = cli(tmp_path, "provider", action, "mem0", *args, stdin=value + "\n" if how == "secret" else "")
        assert done.returncode == 2, (action, done.stdout, done.stderr)
        assert done.stderr == f"mnemon-ls: error: services.{field}: {rule}\n"
        assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_the_language_server_refuses_the_same_values_through_the_same_operation(tmp_path: Path) -> None:
    import asyncio

    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from tests.lsp.rawclient import RawServer  # the strict frame parser of the main suite

    assert cli(tmp_path, "provider", "configure", "mem0", "--set", "collection=team").returncode == 0
    path = tmp_path / "data" / "state" / "memory-providers.json"
    before = path.read_bytes(), path.stat().st_mtime_ns
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMON_")}
    env.update(MNEMON_DATA_DIR=str(tmp_path / "data"), MNEMON_SEMANTIC="off")

    async def session() -> list[dict]:
        server = RawServer()
        await server.start(env, tmp_path)
        try:
            folder = tmp_path / "repo"
            (folder / ".git").mkdir(parents=True)
            await server.initialize([folder], {"mnemon": {"storageScope": "global"}})
            return [await server.call(method, {"providerId": "mem0", "services": {field: value}}, timeout=120)
                    for _how, field, value, _rule in BAD_FIELDS
                    for method in ("mnemon/providers/configure", "mnemon/providers/enable")]
        finally:
            await server.close()

    answers = asyncio.run(session())
    expected = [("invalid-input", f"services.{field}", rule) for _how, field, _value, rule in BAD_FIELDS
                for _ in range(2)]
    assert [(a["error"]["data"]["code"], a["error"]["data"].get("field"), a["error"]["data"].get("rule"))
            for a in answers] == expected, answers
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


@pytest.mark.parametrize("field, bad, reason", [
    ("pgPort", "5432", "must be a JSON integer, not text (Mem0's rule: must be an integer between 1 and 65535) "
                       '(got "5432")'),
    ("pgPort", 5432.0, "must be a JSON integer, not a number (Mem0's rule: must be an integer between 1 and 65535) "
                       "(got 5432.0)"),
    ("infer", 1, "must be true or false, not a number (Mem0's rule: must be true or false) (got 1)"),
    ("timeoutSeconds", True, "must be a JSON number, not true/false (Mem0's rule: must be a number of seconds "
                             "between 0.1 and 600) (got true)"),
    ("collection", 7, "must be a JSON string, not a number (Mem0's rule: must be 1..64 letters, digits, '_' or '-') "
                      "(got 7)"),
    ("apiKey", 12345, "must be a JSON string, not a number (Mem0's rule: must be text)"),  # a secret: never echoed
    # of the right type and impossible (the attack pass: doctor said ok, provider test failed later)
    ("embeddingDims", -1, "must be an integer between 1 and 16000 (Mem0's rule) (got -1)"),
    ("timeoutSeconds", 1e308, "must be a number of seconds between 0.1 and 600 (Mem0's rule) (got 1e+308)"),
    ("vectorStore", "redis", "must be one of qdrant-local, qdrant, pgvector (Mem0's rule) (got \"redis\")"),
])
def test_a_stored_value_of_the_wrong_json_type_is_damage_and_the_other_fields_survive(
        tmp_path: Path, field: str, bad: object, reason: str) -> None:
    key = "sk-" + "w4Rr2Lm9Xc4Vb8Nn1Kp5Tt3Yw6Ee0Ub"
    assert cli(tmp_path, "provider", "configure", "mem0", "--set", "collection=team", "--secret", "vectorApiKey",
               stdin=key + "\n").returncode == 0
    path = tmp_path / "data" / "state" / "memory-providers.json"
    doc = json.loads(path.read_text())
    doc["services"]["mem0"][field] = bad
    path.write_text(json.dumps(doc, indent=2) + "\n")
    service = SpacesService(tmp_path / "data")
    service.state()
    [problem] = service.notices()
    assert problem["reason"] == f"services.mem0.{field}: {reason}"
    kept = json.loads(path.read_text())["services"]["mem0"]
    assert field not in kept
    assert kept["vectorApiKey"] == key  # a credential never survives only in quarantine
    service.close()


@pytest.mark.parametrize("stdin, rule", [
    ("sk-first-line-0123\nsk-second-line-4567\n", "must be one line: standard input held a line break inside the "
                                                  "credential (only one trailing line ending is dropped)"),
    ("sk-first-line-0123\n\n", "must be one line: standard input held a line break inside the credential (only one "
                               "trailing line ending is dropped)"),
    ("sk-first-line-0123\r\r\n", "must be one line: standard input held a line break inside the credential (only "
                                 "one trailing line ending is dropped)"),
    ("\nsk-after-a-blank-line-0123\n", "must be one line: standard input held a line break inside the credential "
                                       "(only one trailing line ending is dropped)"),
])
def test_a_piped_secret_of_several_lines_is_refused_never_cut_to_its_first_line(tmp_path: Path, stdin: str,
                                                                               rule: str) -> None:
    assert cli(tmp_path, "provider", "configure", "mem0", "--set", "collection=team").returncode == 0
    path = tmp_path / "data" / "state" / "memory-providers.json"
    before = path.read_bytes(), path.stat().st_mtime_ns
    for action in ("configure", "enable"):
        done = cli(tmp_path, "provider", action, "mem0", "--secret", "apiKey", stdin=stdin)
        assert done.returncode == 2, done.stdout
        assert done.stderr == f"mnemon-ls: error: services.apiKey: {rule}\n"
        assert (path.read_bytes(), path.stat().st_mtime_ns) == before


@pytest.mark.parametrize("stdin", ["sk-exact-key-0123", "sk-exact-key-0123\n", "sk-exact-key-0123\r\n"])
def test_exactly_one_trailing_line_ending_is_dropped_from_a_piped_secret(tmp_path: Path, stdin: str) -> None:
    done = cli(tmp_path, "provider", "configure", "mem0", "--secret", "apiKey", stdin=stdin)
    assert done.returncode == 0, done.stderr
    stored = json.loads((tmp_path / "data" / "state" / "memory-providers.json").read_text())
    assert stored["services"]["mem0"] == {"apiKey": "sk-exact-key-0123"}


def test_several_piped_secrets_take_one_line_each_in_order_and_no_more(tmp_path: Path) -> None:
    two = cli(tmp_path, "provider", "configure", "mem0", "--secret", "apiKey", "--secret", "pgPassword",
              stdin="sk-one-key-0123\r\npw-two-0456\n")
    assert two.returncode == 0, two.stderr
    path = tmp_path / "data" / "state" / "memory-providers.json"
    assert json.loads(path.read_text())["services"]["mem0"] == {"apiKey": "sk-one-key-0123",
                                                                "pgPassword": "pw-two-0456"}
    before = path.read_bytes(), path.stat().st_mtime_ns
    extra = cli(tmp_path, "provider", "configure", "mem0", "--secret", "apiKey", "--secret", "pgPassword",
                stdin="sk-one-key-0123\npw-two-0456\nthird\n")
    assert extra.returncode == 2
    assert extra.stderr == ("mnemon-ls: error: services.pgPassword: must be one line: standard input held 3 lines for "
                            "2 --secret field(s) (one line each, in the order given; only one trailing line ending "
                            "is dropped)\n")
    missing = cli(tmp_path, "provider", "configure", "mem0", "--secret", "apiKey", "--secret", "pgPassword",
                  stdin="sk-one-key-0123\n")
    assert missing.returncode == 2
    assert missing.stderr.startswith("mnemon-ls: error: services.pgPassword: is empty")
    twice = cli(tmp_path, "provider", "configure", "mem0", "--secret", "apiKey", "--secret", "apiKey",
                stdin="sk-one-key-0123\nsk-two-key-0456\n")  # the first line used to be dropped unsaid
    assert twice.returncode == 2
    assert twice.stderr == "mnemon-ls: error: services.apiKey: is given twice (each KEY may be set once)\n"
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_clearing_a_secret_clears_it_from_the_quarantined_copies_too(tmp_path: Path) -> None:
    """The attack pass: a repair of a damaged provider file keeps a copy in state/quarantine/, credentials
    included; ``--clear-secret`` left the key there."""
    key = "sk-" + "q9Rr2Lm9Xc4Vb8Nn1Kp5Tt3Yw6Ee0Ub"
    assert cli(tmp_path, "provider", "configure", "mem0", "--set", "collection=team", "--secret", "vectorApiKey",
               stdin=key + "\n").returncode == 0
    path = tmp_path / "data" / "state" / "memory-providers.json"
    doc = json.loads(path.read_text())
    doc["services"]["mem0"]["pgPort"] = "5432"  # damage: a repair quarantines a copy holding the key
    path.write_text(json.dumps(doc, indent=2) + "\n")
    assert cli(tmp_path, "provider", "list").returncode == 0
    [copy] = (tmp_path / "data" / "state" / "quarantine").glob("*-memory-providers.json")
    assert key in copy.read_text()
    cleared = cli(tmp_path, "provider", "configure", "mem0", "--clear-secret", "vectorApiKey")
    assert cleared.returncode == 0, cleared.stderr
    assert key not in path.read_text() and key not in copy.read_text()
    assert json.loads(copy.read_text())["services"]["mem0"]["pgPort"] == "5432"  # the damage itself is kept
