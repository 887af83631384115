"""A recorded behaviour corpus of the three surfaces, replayed to prove a refactor changes no answer.

Issue 29 item 5: before the language server (``mnemon/*`` requests), the MCP server (tools, resources, the
prompt) and the command line move onto one operation layer, every request and its answer is recorded here;
``tests/ops/test_behaviour_corpus.py`` replays the cases and fails, naming the case, when an answer differs.

How the cases run
  One *sandbox* per surface (:class:`Sandbox`): a fresh temporary directory holding a real git repository
  ``ws`` (branches ``main``, checked out, and ``feature``), an empty ``home`` (``$HOME``) and ``data``
  (``$MNEMON_DATA_DIR``, the global root), and ``tmp`` (``$TMPDIR``). No storage setting is given, so every surface uses the defaults
  (``storageScope`` ``workspaces``: the memory lives in ``data/workspaces/<sha256 of the workspace path>``,
  USER.md in the global root). ``$DSH_USER_ID`` is fixed (records' user scope), ``$COLUMNS`` is 80 (help
  texts), ``MNEMON_SEMANTIC=off`` (keyword recall only). The cases of a surface run in order against that one
  storage root, so a case sees what earlier cases wrote; a case that fails changes what later ones see, and the
  replay then names every case whose answer moved.

  - LSP (:func:`run_lsp`): one ``python -m mnemon_ls serve`` subprocess spoken to in raw JSON-RPC frames
    (:class:`tests.lsp.rawclient.RawServer`, no client capabilities); the answer is the response message
    without ``jsonrpc``/``id`` (``{"result": ...}`` or ``{"error": {code, message, data}}``). Server
    notifications are not recorded (their timing is not part of an answer).
  - MCP (:func:`run_mcp`): one ``python -m mnemon_ls mcp`` subprocess (cwd: the workspace) driven by the
    official SDK client (``ClientSession``); a tool answer is the ``CallToolResult`` (``isError``, content), a
    protocol error is ``{"error": {code, message, data}}``.
  - CLI (:func:`run_cli`): the console script's entry point (``mnemon_ls.__main__.main``, which hands
    everything but ``serve`` to ``mnemon_ls.cli.full.main``) in this process with ``cwd`` the workspace, the
    sandbox's environment, standard input from the case, standard output and error captured; the answer is
    ``{exit, stdout, stderr}`` (standard output that is JSON is stored parsed, with ``stdoutLayout``
    ``indent=2``, ``compact`` or ``other`` saying how it was laid out). ``MNEMON_CORPUS_CLI=subprocess``
    runs each command as ``python -m mnemon_ls`` instead (slow; it checks that the in-process run answers as
    the console script does).

Adding a case
  Append a :class:`Case` to the list of its surface (:func:`lsp_cases`, :func:`mcp_cases`, :func:`cli_cases`)
  at the point of the sequence where its state makes sense; names must be unique within a surface. Strings
  in a request may hold ``<<TOKEN>>``: ``WS``, ``WS_URI``, ``ROOT``, ``HOME``, ``DATA`` (the sandbox's paths)
  or a name captured from an earlier answer: ``capture={"doc1": r'"id": "([0-9a-f-]{36})"'}`` searches the
  regex in the JSON text of the raw (not normalised) answer and keeps group 1 (a capture that finds nothing is
  listed under ``$missingCaptures`` in the answer, and the token stays unresolved); a regex prefixed ``json:``
  keeps group 1 parsed as JSON, ``path:result.bundle`` keeps the value at that dotted path of the raw answer,
  and a request string that is exactly ``<<name>>`` becomes that value (an object, a list). Then re-record.

Re-recording
  ``MNEMON_RECORD_CORPUS=1 python -m pytest tests/ops/test_behaviour_corpus.py`` rewrites
  ``tests/ops/corpus/<surface>.json``; review the diff (``git diff tests/ops/corpus``) before committing:
  every change there is a change of behaviour.

What is normalised (:class:`Normalizer`, applied to requests and answers before storing and comparing)
  - paths: the workspace becomes ``<WS>``, ``$HOME`` ``<HOME>``, the sandbox directory ``<ROOT>`` (also inside
    ``file://`` URIs);
  - generated ids, each distinct value numbered in order of first appearance within the surface, so equal ids
    stay equal: UUIDs (documents, space items, spaces) ``<uuidN>`` and their 8-character prefix in document file
    names ``<uuidN:8>``; record ids ``memory:<kind>:<type>:<recordN>``; view ids ``<viewN>``; session ids
    ``lsp-<sessionN>`` / ``mcp-<sessionN>``; 64-hex values (revisions, workspace hashes) ``<shaN>`` and their
    12-character short form in messages ``<shaN:12>`` (a short form whose full value the surface never showed:
    ``<shortN>``); 32-hex values (run ids) ``<hexN>``; 16-hex values (records' scope keys) ``<keyN>``;
  - timestamps (ISO 8601, ``YYYY-MM-DD HH:MM``, file stamps like ``20260915T080000.123Z``, pack file names)
    become ``<time>``; durations in text (``12 ms``, ``0.31 s``) ``<duration>``; values of keys naming a
    duration or an instant in milliseconds (:data:`VOLATILE_NUMBER_KEYS`, also inside a text holding JSON)
    ``<number>``;
  - the size of a pack (``bytes`` beside a ``fileName`` ending in ``.zip``, ``(N bytes)`` after a ``.zip``
    path in a text: ZIP compression of volatile values) becomes ``<number>``; on the LSP surface also a space's
    ``oplog_count``, ``db_size_bytes`` and its side index's ``size_bytes`` (:data:`LSP_VOLATILE_KEYS`: the
    server's 5-second background flush of read bookkeeping; seen under load: the index file 8 KiB larger);
  - the Python executable (``setup`` writes it into the clients' files) becomes ``<PYTHON>``;
  - the package version (``mnemon_ls.__version__``) becomes ``<version>``;
  - a string that holds line breaks is stored as ``{"$lines": [...]}`` (one element a line) so that a diff
    shows the line that moved.

  Everything else (error codes and messages, field names, exit codes, the text rendered for the model) is kept
  verbatim. Each server surface ends with a pseudo-case ``(server stderr)`` recording whether the server wrote
  a traceback to its standard error (and, for the LSP, any framing problem of its output). ``--help`` texts depend on the Python version's argparse: they are compared only on the Python
  version that recorded them.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import io
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from tests.helpers.zygote import mnemon_command

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
SURFACES = ("lsp", "mcp", "cli")
#: Longest wait for one answer (a healthy server answers in milliseconds; generous for a loaded machine).
TIMEOUT = 60.0
USER_ID = "corpus-user"
#: ``MNEMON_CORPUS_CLI=subprocess`` (read at import: tests/conftest.py clears ``MNEMON_*`` for each test).
CLI_MODE = os.environ.get("MNEMON_CORPUS_CLI", "in-process")


# ----------------------------------------------------------------------------------------------- cases


@dataclass
class Case:
    """One request of a surface.

    ``op`` is surface-specific: LSP ``{"method", "params"}`` (``"notify": True`` sends a notification and
    records nothing but ``{"notified": method}``); MCP ``{"kind": "tool", "name", "arguments"}`` or another
    kind (:func:`run_mcp`); CLI ``{"argv": [...], "stdin": str | None, "env": {...}}``.
    """

    name: str
    op: dict[str, Any]
    capture: dict[str, str] = field(default_factory=dict)


# ----------------------------------------------------------------------------------------------- sandbox


class Sandbox:
    """The temporary directory of one surface (module doc): ``ws`` (git repository), ``home``, ``data``."""

    def __init__(self, base: Path) -> None:
        from tests.gitrepo import commit_files, create_branch, make_repo

        self.root = Path(os.path.realpath(base))
        self.ws = self.root / "ws"
        self.home = self.root / "home"
        self.data = self.root / "data"
        self.home.mkdir(parents=True)
        self.tmp = self.root / "tmp"  # $TMPDIR: doctor names the temporary directory
        self.tmp.mkdir()
        repo = make_repo(self.ws, "main")
        commit_files(repo, {"src/app.py": "def main():\n    return 'hello'\n",
                            "docs/design.md": "# Cache design\n\nThe cache keeps 64 entries per shard.\n",
                            "notes.txt": "plain notes without a heading\n"}, "add sources")
        create_branch(repo, "feature")
        self.captured: dict[str, Any] = {}

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of the surface's processes: ours minus anything that could redirect git or
        mnemon, plus the sandbox's ``HOME``/``MNEMON_DATA_DIR``/``TMPDIR`` and the fixed values of the module doc."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GIT_", "MNEMON_", "DSH_", "XDG_CONFIG_HOME"))}
        env.update(HOME=str(self.home), MNEMON_DATA_DIR=str(self.data), TMPDIR=str(self.tmp),
                   MNEMON_SEMANTIC="off", DSH_USER_ID=USER_ID, COLUMNS="80", LINES="24", PYTHONUNBUFFERED="1", PYTHONHASHSEED="0",
                   TZ="UTC", LC_ALL="C.UTF-8", LANGUAGE="C")
        env.update(extra)
        return env

    def tokens(self) -> dict[str, Any]:
        return {"WS": str(self.ws), "WS_URI": self.ws.as_uri(), "ROOT": str(self.root), "HOME": str(self.home),
                "DATA": str(self.data), **self.captured}

    def substitute(self, value: Any) -> Any:
        """``value`` with every ``<<TOKEN>>`` of its strings replaced (module doc)."""
        if isinstance(value, str):
            tokens = self.tokens()
            whole = re.fullmatch(r"<<([A-Za-z0-9_]+)>>", value)
            if whole and whole.group(1) in tokens:
                return tokens[whole.group(1)]  # a captured JSON value keeps its type
            def one(m: re.Match[str]) -> str:
                found = tokens.get(m.group(1), m.group(0))
                return found if isinstance(found, str) else json.dumps(found, ensure_ascii=False)

            return re.sub(r"<<([A-Za-z0-9_]+)>>", one, value)
        if isinstance(value, list):
            return [self.substitute(v) for v in value]
        if isinstance(value, dict):
            return {self.substitute(k): self.substitute(v) for k, v in value.items()}
        return value

    def capture(self, case: Case, raw: Any) -> list[str]:
        """Keep the values ``case.capture`` names from the raw answer; the names not found."""
        text = json.dumps(raw, ensure_ascii=False, default=str)
        missing = []
        for name, pattern in case.capture.items():
            if pattern.startswith("path:"):  # a value of the raw answer by its dotted path
                value: Any = raw
                for part in pattern[5:].split("."):
                    value = value.get(part) if isinstance(value, dict) else None
                if value is None:
                    missing.append(name)
                else:
                    self.captured[name] = copy.deepcopy(value)
                continue
            as_json = pattern.startswith("json:")
            match = re.search(pattern[5:] if as_json else pattern, text)
            if match is None:
                missing.append(name)
                continue
            value = match.group(1)
            if as_json:  # JSON as such (a result's object) or inside a JSON string (a text for the model)
                try:
                    value = json.loads(value)
                except ValueError:
                    value = json.loads(json.loads(f'"{value}"'))
            self.captured[name] = value
        return missing


# ----------------------------------------------------------------------------------------------- normaliser

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_TIME_PATTERNS = [
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?",  # ISO 8601
    r"\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}(?:-\d{3})?",  # pack file names (mnemon-backup-<time>.zip)
    r"\d{8}T\d{6}(?:\.\d{3})?Z",  # file stamps (edits/, quarantine/, semantic)
    r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})?",  # records CLI
]
#: Keys whose numeric values are instants (``createdAt``: epoch milliseconds) or durations (``seconds``).
VOLATILE_NUMBER_KEYS = re.compile(r"(?:At|Seconds|^seconds|^elapsed.*|^duration.*|^took.*|Mtime|^mtime|^timestamp)$")


#: Numbers the language server's background work changes: every 5 s it writes the batched read bookkeeping
#: of Memory Spaces (``access_count`` and one oplog row per read), so a space's ``oplog_count`` and the size
#: of its store depend on whether that flush ran before the request.
LSP_VOLATILE_KEYS = frozenset({"oplog_count", "db_size_bytes", "size_bytes"})


class Normalizer:
    """Replaces volatile values by stable placeholders (module doc); one per surface run (numbering is
    shared by all cases of the surface)."""

    def __init__(self, sandbox: Sandbox, volatile_keys: frozenset[str] = frozenset()) -> None:
        from mnemon_ls import __version__

        #: Keys whose numeric values depend on timing on this surface (:data:`LSP_VOLATILE_KEYS`).
        self.volatile_keys = volatile_keys
        self.version = __version__
        self.paths = [(sys.executable, "<PYTHON>"), (str(sandbox.ws), "<WS>"), (str(sandbox.home), "<HOME>"),
                      (str(sandbox.root), "<ROOT>")]
        self.seen: dict[str, dict[str, str]] = {}
        #: Short forms of ids seen in full (a document file name's 8 characters, a revision's 12 in messages).
        self.prefixes: dict[str, str] = {}

    def _number(self, kind: str, value: str, fmt: str) -> str:
        table = self.seen.setdefault(kind, {})
        if value not in table:
            table[value] = fmt.format(n=len(table) + 1)
            if kind == "uuid":
                self.prefixes.setdefault(value[:8], table[value][:-1] + ":8>")
            elif kind == "sha":
                self.prefixes.setdefault(value[:12], table[value][:-1] + ":12>")
        return table[value]

    def _short(self, m: re.Match[str]) -> str:
        """A short id: the short form of a full id seen before, else (12 hex digits, not one digit repeated:
        a revision's short form whose full value this surface never showed) numbered on its own."""
        value = m.group(0)
        if value in self.prefixes:
            return self.prefixes[value]
        if len(value) == 12 and len(set(value)) > 1:
            return self._number("short", value, "<short{n}>")
        return value

    def prime(self, value: Any) -> None:
        """Number the full ids of ``value`` first, in order of appearance, so that a short form met before its
        full id (a file name before the ``id`` key, a message before ``data.actual``) is known."""
        text = json.dumps(value, ensure_ascii=False, default=str)
        for m in re.finditer(rf"{_UUID}|(?<![0-9a-zA-Z])[0-9a-f]{{64}}(?![0-9a-zA-Z])", text):
            if len(m.group(0)) == 64:
                self._number("sha", m.group(0), "<sha{n}>")
            else:
                self._number("uuid", m.group(0), "<uuid{n}>")

    def text(self, value: str) -> str:
        for path, token in self.paths:
            value = value.replace(path, token)
        for pattern in _TIME_PATTERNS:
            value = re.sub(pattern, "<time>", value)
        value = re.sub(_UUID, lambda m: self._number("uuid", m.group(0), "<uuid{n}>"), value)
        value = re.sub(r"(memory:[a-z-]+:[a-z-]+:)([0-9a-f]{24})\b",
                       lambda m: m.group(1) + self._number("record", m.group(2), "<record{n}>"), value)
        value = re.sub(r"\bview-\d+-[0-9a-f]{8}\b", lambda m: self._number("view", m.group(0), "<view{n}>"), value)
        value = re.sub(r"\b(lsp|mcp)-([0-9a-f]{16})\b",
                       lambda m: m.group(1) + "-" + self._number("session", m.group(2), "<session{n}>"), value)
        for length, kind in ((64, "sha"), (32, "hex"), (16, "key")):
            value = re.sub(rf"(?<![0-9a-zA-Z])[0-9a-f]{{{length}}}(?![0-9a-zA-Z])",
                           lambda m, kind=kind: self._number(kind, m.group(0), f"<{kind}{{n}}>"), value)
        value = re.sub(r"(?<![0-9a-zA-Z])(?:[0-9a-f]{12}|[0-9a-f]{8})(?![0-9a-zA-Z])", self._short, value)
        value = re.sub(r"\b\d+(?:\.\d+)? ?(?:ms|milliseconds)\b|\b\d+\.\d+ ?s\b", "<duration>", value)
        value = re.sub(r'("\w*At"\s*:\s*)\d{10,}', r"\1<number>", value)  # JSON inside a text
        value = re.sub(r"(\.zip\b[^\n]{0,4}\()\d+( bytes\))", r"\1<number>\2", value)  # a pack's size
        value = re.sub(r"(deleted space(?:'s|s') stores? \()[^)]*(\))", r"\1<size>\2", value)  # kept stores' size
        if self.version:
            value = re.sub(rf"(?<![0-9.]){re.escape(self.version)}(?![0-9])", "<version>", value)
        return value

    def __call__(self, value: Any, key: str | None = None) -> Any:
        if isinstance(value, str):
            text = self.text(value)
            return {"$lines": text.split("\n")} if "\n" in text else text
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, (int, float)):
            volatile = key is not None and (VOLATILE_NUMBER_KEYS.search(key) or key in self.volatile_keys)
            return "<number>" if volatile else value
        if isinstance(value, (list, tuple)):
            return [self(v) for v in value]
        if isinstance(value, dict):
            packed = isinstance(value.get("fileName"), str) and value["fileName"].endswith(".zip")
            return {self.text(str(k)): "<number>" if packed and k == "bytes" else self(v, str(k))
                    for k, v in value.items()}
        return self.text(repr(value))


def entry(case: Case, request: Any, answer: Any, normalize: Normalizer, missing: list[str]) -> dict[str, Any]:
    """The recorded form of one case (request first, so ids are numbered in the order a reader meets them)."""
    normalize.prime(request)
    normalize.prime(answer)
    req = normalize(request)
    ans = normalize(answer)
    if missing:
        ans = {"answer": ans, "$missingCaptures": missing}
    return {"case": case.name, "request": req, "answer": ans}


# ----------------------------------------------------------------------------------------------- LSP runner


async def run_lsp(sandbox: Sandbox, cases: list[Case]) -> list[dict[str, Any]]:
    """Every LSP case against one real server (module doc)."""
    from tests.lsp.rawclient import RawServer

    normalize = Normalizer(sandbox, LSP_VOLATILE_KEYS)
    server = RawServer()
    await server.start(sandbox.env(), sandbox.ws, mnemon_command("serve"))
    records: list[dict[str, Any]] = []
    try:
        for case in cases:
            op = sandbox.substitute(case.op)
            if op.get("notify"):
                server.notify(op["method"], op.get("params"))
                raw: Any = {"notified": op["method"]}
            else:
                message = await server.call(op["method"], op.get("params"), timeout=TIMEOUT)
                raw = {k: v for k, v in message.items() if k not in ("jsonrpc", "id")}
            missing = sandbox.capture(case, raw)
            records.append(entry(case, {k: v for k, v in op.items()}, raw, normalize, missing))
    finally:
        await server.close()
    stderr = server.stderr.decode("utf-8", "replace")
    records.append({"case": "(server stderr)", "request": None,
                    "answer": {"traceback": "Traceback" in stderr, "protocolErrors": server.protocol_errors}})
    return records


# ----------------------------------------------------------------------------------------------- MCP runner


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run_mcp(sandbox: Sandbox, cases: list[Case]) -> list[dict[str, Any]]:
    """Every MCP case against one real ``mnemon-ls mcp`` through the official SDK client (module doc).

    Kinds: ``initialize`` (the initialize result, recorded from the handshake), ``tool`` (``name``,
    ``arguments``), ``list_tools``, ``list_resources``, ``list_resource_templates``, ``read_resource``
    (``uri``), ``list_prompts``, ``get_prompt`` (``name``, ``arguments``), ``ping``.
    """
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.shared.exceptions import MCPError

    normalize = Normalizer(sandbox)
    params = StdioServerParameters(command=sys.executable, args=["-m", "mnemon_ls", "mcp"], cwd=str(sandbox.ws),
                                   env=sandbox.env())
    records: list[dict[str, Any]] = []
    errlog_path = sandbox.root / "mcp-stderr.log"
    with open(errlog_path, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=TIMEOUT) as session:
                initialized = await asyncio.wait_for(session.initialize(), TIMEOUT)
                for case in cases:
                    op = sandbox.substitute(case.op)
                    kind = op["kind"]
                    try:
                        if kind == "initialize":
                            raw: Any = {"result": _dump(initialized)}
                        elif kind == "tool":
                            result = await session.call_tool(op["name"], op.get("arguments"))
                            raw = {"result": _dump(result)}
                        elif kind == "list_tools":
                            raw = {"result": _dump(await session.list_tools())}
                        elif kind == "list_resources":
                            raw = {"result": _dump(await session.list_resources())}
                        elif kind == "list_resource_templates":
                            raw = {"result": _dump(await session.list_resource_templates())}
                        elif kind == "read_resource":
                            raw = {"result": _dump(await session.read_resource(op["uri"]))}
                        elif kind == "list_prompts":
                            raw = {"result": _dump(await session.list_prompts())}
                        elif kind == "get_prompt":
                            raw = {"result": _dump(await session.get_prompt(op["name"], op.get("arguments")))}
                        elif kind == "ping":
                            raw = {"result": _dump(await session.send_ping())}
                        else:  # pragma: no cover - a typo in the case list
                            raise ValueError(f"unknown MCP case kind {kind!r}")
                    except MCPError as exc:
                        raw = {"error": _dump(exc.error)}
                    missing = sandbox.capture(case, raw)
                    records.append(entry(case, op, raw, normalize, missing))
    stderr = errlog_path.read_text(encoding="utf-8", errors="replace")
    records.append({"case": "(server stderr)", "request": None, "answer": {"traceback": "Traceback" in stderr}})
    return records


# ----------------------------------------------------------------------------------------------- CLI runner


@contextlib.contextmanager
def _process_state(env: dict[str, str], cwd: Path, stdin: bytes):
    """The environment, working directory, standard streams and root log handlers of one in-process CLI
    run, as a fresh ``mnemon-ls`` process would have them (also the temporary directory, which
    :mod:`tempfile` reads from ``$TMPDIR`` once); restored afterwards."""
    import logging
    import tempfile

    saved_env = dict(os.environ)
    saved_tempdir = tempfile.tempdir
    saved_cwd = os.getcwd()
    saved = (sys.stdin, sys.stdout, sys.stderr)
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    out, err = io.StringIO(), io.StringIO()
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None
    os.chdir(cwd)
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    root.handlers = []  # mnemon_ls.output.install adds the handler a fresh process gets (to this stderr)
    root.setLevel(logging.WARNING)
    try:
        yield out, err
    finally:
        root.handlers, root.level = saved_handlers, saved_level
        sys.stdin, sys.stdout, sys.stderr = saved
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        tempfile.tempdir = saved_tempdir


def _cli_in_process(argv: list[str], env: dict[str, str], cwd: Path, stdin: bytes) -> tuple[int, str, str]:
    """``python -m mnemon_ls <argv>`` in this process: :func:`mnemon_ls.__main__.main` (the console script's
    entry point: ``serve`` has its own parser there) with ``sys.argv`` set."""
    from mnemon_ls.__main__ import main
    from mnemon_ls.cli import hooks

    saved_argv, saved_age = sys.argv, hooks.seconds_since_start
    with _process_state(env, cwd, stdin) as (out, err):
        sys.argv = ["mnemon-ls", *argv]
        # a fresh process is 0 s old when its hook starts: the hook's deadline (7 s) is not shortened by the
        # age of this test process (which, under 10 s old, a hook would take for its own start-up time)
        hooks.seconds_since_start = lambda: 0.0
        try:
            code = main()
        except SystemExit as exc:  # argparse: --help, --version, usage errors
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)
        finally:
            sys.argv, hooks.seconds_since_start = saved_argv, saved_age
        sys.stdout.flush()
        sys.stderr.flush()
        return code, out.getvalue(), err.getvalue()


def _cli_subprocess(argv: list[str], env: dict[str, str], cwd: Path, stdin: bytes) -> tuple[int, str, str]:
    done = subprocess.run(mnemon_command(*argv), cwd=cwd, env=env, input=stdin,
                          capture_output=True, timeout=TIMEOUT)
    return (done.returncode, done.stdout.decode("utf-8", "surrogateescape"),
            done.stderr.decode("utf-8", "surrogateescape"))


def run_cli(sandbox: Sandbox, cases: list[Case]) -> list[dict[str, Any]]:
    """Every CLI case in sequence (module doc)."""
    run = _cli_subprocess if CLI_MODE == "subprocess" else _cli_in_process
    normalize = Normalizer(sandbox)
    records: list[dict[str, Any]] = []
    for case in cases:
        op = sandbox.substitute(case.op)
        op["argv"] = [a if isinstance(a, str) else json.dumps(a) for a in op["argv"]]
        stdin = op.get("stdin")
        if stdin is not None and not isinstance(stdin, str):  # a JSON value (tokens already replaced)
            stdin = json.dumps(stdin, ensure_ascii=False)
        stdin_bytes = stdin.encode("utf-8") if isinstance(stdin, str) else b""
        cwd = Path(op.get("cwd", str(sandbox.ws)))
        code, out, err = run(op["argv"], sandbox.env(**op.get("env", {})), cwd, stdin_bytes)
        raw: dict[str, Any] = {"exit": code, "stdout": out, "stderr": err}
        if out.lstrip().startswith(("{", "[")):
            try:
                parsed = json.loads(out)
            except ValueError:
                pass
            else:  # compared as JSON (volatile values normalised by key); its layout kept as a label
                layout = ("indent=2" if out == json.dumps(parsed, ensure_ascii=False, indent=2) + "\n" else
                          "compact" if out == json.dumps(parsed, ensure_ascii=False) + "\n" else "other")
                raw = {"exit": code, "stdout": parsed, "stdoutLayout": layout, "stderr": err}
        missing = sandbox.capture(case, raw)
        records.append(entry(case, op, raw, normalize, missing))
    return records


# ----------------------------------------------------------------------------------------------- the cases


# ----------------------------------------------------------------------------------------------- the cases

#: Long facts for filling USER.md (4096 bytes) and MEMORY.md (10240 bytes) up to their limits.
def _long_fact(word: str, parts: int = 120) -> str:
    """``<word>: <word>-detail-000 ...``: about 1.9 KB with 120 parts, about 6.8 KB with 400."""
    return f"{word}: " + " ".join(f"{word}-detail-{i:03d}" for i in range(parts))


_ID = r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
_RECORD = r"(memory:[a-z-]+:[a-z]+:[0-9a-f]{24})"
_BUNDLE = {"schemaVersion": 1, "exportedAt": 1767225600000, "records": [
    {"schemaVersion": 1, "id": "memory:user:fact:0123456789abcdef01234567", "scope": "project",
     "scopeKey": "0123456789abcdef", "type": "fact", "title": "Imported fact",
     "content": "The importer keeps the title.",
     "tags": ["imported"], "provenance": {"kind": "user"}, "createdAt": 1767225600000, "updatedAt": 1767225600000,
     "useCount": 0, "contentHash": "sha256:" + hashlib.sha256(b"The importer keeps the title.").hexdigest(),
     "status": "active",
     "governance": {"origin": "user-authored", "sourceRefs": [{"kind": "file", "id": "src/app.py"}],
                    "verification": "unverified", "revision": 1, "retention": "project-delete"}}]}
#: The same bundle claiming a verification without its time.
_BAD_BUNDLE = copy.deepcopy(_BUNDLE)
_BAD_BUNDLE["records"][0]["governance"]["verification"] = "verified"


def lsp_cases() -> list[Case]:
    """The ``mnemon/*`` requests of the language server (every method of ``protocol.REQUESTS``), good and bad."""
    cases: list[Case] = []

    def add(name: str, method: str, params: Any = None, capture: dict[str, str] | None = None, **extra: Any) -> None:
        cases.append(Case(name, {"method": method, "params": params, **extra}, capture or {}))

    add("initialize", "initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                     "workspaceFolders": [{"uri": "<<WS_URI>>", "name": "ws"}],
                                     "initializationOptions": None})
    add("initialized", "initialized", {}, notify=True)

    # ---- status and the runtime snapshot on an empty root
    add("status: empty root", "mnemon/status", {})
    add("status: null params", "mnemon/status", None)
    add("status: unknown field", "mnemon/status", {"bogus": 1})
    add("status: params not an object", "mnemon/status", [1, 2])
    add("runtime/snapshot: empty", "mnemon/runtime/snapshot", {})
    add("runtime/snapshot: workspace path", "mnemon/runtime/snapshot", {"workspace": "<<WS>>"})
    add("runtime/snapshot: workspace uri", "mnemon/runtime/snapshot", {"workspace": "<<WS_URI>>"})
    add("runtime/snapshot: workspace not open", "mnemon/runtime/snapshot", {"workspace": "<<ROOT>>/elsewhere"})
    add("runtime/snapshot: workspace relative", "mnemon/runtime/snapshot", {"workspace": "relative/dir"})
    add("runtime/snapshot: workspace wrong type", "mnemon/runtime/snapshot", {"workspace": 5})
    add("runtime/snapshot: unknown field", "mnemon/runtime/snapshot", {"revision": "x"})

    # ---- runtime/mutate
    M = "mnemon/runtime/mutate"
    add("mutate: add memory", M, {"action": "add", "content": "Build with `make build`; tests with `make test`."})
    add("mutate: add memory critical", M, {"action": "add", "target": "memory", "importance": "critical",
                                           "content": "Never push to main directly."})
    add("mutate: add memory low for feature branch", M, {"action": "add", "content": "The feature branch "
                                                          "rewrites the cache.", "importance": "low",
                                                          "branches": ["feature"]})
    add("mutate: add user", M, {"action": "add", "target": "user", "content": "Prefers short answers."})
    add("mutate: add duplicate", M, {"action": "add", "content": "Never push to main directly."})
    add("mutate: add credential is redacted", M, {"action": "add", "content": "Deploy token is "
                                                  "ghp_abcdefghijklmnopqrstuvwxyz0123456789 for CI."})
    add("mutate: add with workspace uri", M, {"action": "add", "content": "The docs live in docs/.",
                                             "workspace": "<<WS_URI>>"})
    add("mutate: missing action", M, {"content": "x"})
    add("mutate: unknown action", M, {"action": "upsert", "content": "x"})
    add("mutate: unknown target", M, {"action": "add", "target": "both", "content": "x"})
    add("mutate: content wrong type", M, {"action": "add", "content": 5})
    add("mutate: content missing for add", M, {"action": "add"})
    add("mutate: content empty", M, {"action": "add", "content": "   "})
    add("mutate: content with section sign line", M, {"action": "add", "content": "one\n§\ntwo"})
    add("mutate: content too long", M, {"action": "add", "content": "x" * 9000})
    add("mutate: importance unknown", M, {"action": "add", "content": "x", "importance": "high"})
    add("mutate: branches on user target", M, {"action": "add", "target": "user", "content": "x",
                                               "branches": ["main"]})
    add("mutate: branches not a list", M, {"action": "add", "content": "x", "branches": "main"})
    add("mutate: branch name invalid", M, {"action": "add", "content": "x", "branches": ["bad..name"]})
    add("mutate: unknown field", M, {"action": "add", "content": "x", "colour": "red"})
    add("mutate: oldText on add", M, {"action": "add", "content": "x", "oldText": "y"})
    add("mutate: replace exact", M, {"action": "replace", "oldText": "The docs live in docs/.",
                                     "content": "The docs live in docs/ (Markdown)."})
    add("mutate: replace substring", M, {"action": "replace", "oldText": "make build",
                                         "content": "Build with `make build`; tests with `make check`."})
    add("mutate: replace ambiguous", M, {"action": "replace", "oldText": "The", "content": "x"})
    add("mutate: replace no match", M, {"action": "replace", "oldText": "no such entry", "content": "x"})
    add("mutate: replace missing oldText", M, {"action": "replace", "content": "x"})
    add("mutate: replace drops branch scope", M, {"action": "replace", "oldText": "rewrites the cache",
                                                  "content": "The feature branch rewrites the cache layer.",
                                                  "branches": []})
    add("mutate: remove no match", M, {"action": "remove", "oldText": "zzz"})
    add("mutate: remove", M, {"action": "remove", "oldText": "Markdown"})
    add("mutate: remove user", M, {"action": "remove", "target": "user", "oldText": "nothing like this"})
    add("mutate: routes not a list", M, {"action": "add", "content": "x", "routes": {"a": 1}})
    add("mutate: workspace not open", M, {"action": "add", "content": "x", "workspace": "/"})
    add("runtime/snapshot: after mutations", "mnemon/runtime/snapshot", {})

    # ---- wake and views
    W = "mnemon/wake"
    add("wake: default", W, {})
    add("wake: feature branch", W, {"branch": "feature"})
    add("wake: unknown branch", W, {"branch": "nobody-has-this"})
    add("wake: invalid branch", W, {"branch": "bad..name"})
    add("wake: tool surface", W, {"surface": "tool"})
    add("wake: unknown surface", W, {"surface": "chat"})
    add("wake: smallest budget", W, {"budgetChars": 1024})
    add("wake: budget below range", W, {"budgetChars": 10})
    add("wake: budget above range", W, {"budgetChars": 5_000_000})
    add("wake: budget as string", W, {"budgetChars": "2048"})
    add("wake: budget as float", W, {"budgetChars": 2048.0})
    add("wake: unknown view", W, {"viewId": "view-999-00000000"})
    add("wake: unknown field", W, {"branchName": "main"})
    T = "mnemon/turn/begin"
    add("turn/begin: new view", T, {}, {"view1": r'"viewId": "(view-[^"]+)"'})
    add("turn/begin: child view", T, {"parentViewId": "<<view1>>"}, {"view2": r'"viewId": "(view-[^"]+)"'})
    add("turn/begin: unknown parent", T, {"parentViewId": "view-0-deadbeef"})
    add("turn/begin: parent wrong type", T, {"parentViewId": 3})
    add("turn/begin: unknown field", T, {"view": "x"})
    add("wake: pinned view", W, {"viewId": "<<view1>>"})
    E = "mnemon/turn/end"
    add("turn/end: child", E, {"viewId": "<<view2>>"})
    add("turn/end: missing viewId", E, {})
    add("turn/end: unknown view", E, {"viewId": "view-77-00000000"})
    add("turn/end: activity bad count", E, {"viewId": "<<view1>>", "activity": {"toolCallCount": -1}})
    add("turn/end: activity unknown key", E, {"viewId": "<<view1>>", "activity": {"mood": "happy"}})
    add("turn/end: activity not an object", E, {"viewId": "<<view1>>", "activity": [1]})
    add("turn/end: with activity", E, {"viewId": "<<view1>>", "activity": {
        "userTextLength": 120, "toolCallCount": 9, "uniqueToolCount": 4, "toolNames": ["read", "edit"],
        "assistantTextLength": 800, "userText": "we decided to always use make"}})
    add("turn/begin: cancels the armed review", T, {})
    add("wake: ended view stays readable", W, {"viewId": "<<view1>>"})
    add("turn/end: again", E, {"viewId": "<<view1>>"})

    # ---- capacity and compaction of USER.md
    add("mutate: user long fact 1", M, {"action": "add", "target": "user", "content": _long_fact("alpha")})
    add("mutate: user long fact 2", M, {"action": "add", "target": "user", "content": _long_fact("beta")})
    add("mutate: user full (capacity plan)", M, {"action": "add", "target": "user", "content": _long_fact("gamma")},
        {"plan_rev": r'"revision": "([0-9a-f]{64})"', "pending": r'json:"pending": (\{[^{}]*\})'})
    C = "mnemon/runtime/compact"
    add("compact: missing revision", C, {"target": "user", "entries": []})
    add("compact: target wrong type", C, {"revision": "<<plan_rev>>", "target": 1, "entries": []})
    add("compact: unknown field", C, {"revision": "<<plan_rev>>", "target": "user", "entries": [], "force": True})
    add("compact: params not an object", C, ["x"])
    add("compact: stale revision", C, {"revision": "0" * 64, "target": "user", "entries": []})
    add("compact: entries not a list", C, {"revision": "<<plan_rev>>", "target": "user", "entries": "x"})
    add("compact: index missing", C, {"revision": "<<plan_rev>>", "target": "user", "entries": [
        {"content": "Prefers short answers.", "importance": "normal", "sourceIndexes": [1]}]})
    add("compact: lowered importance", C, {"revision": "<<plan_rev>>", "target": "user", "entries": [
        {"content": "Prefers short answers; alpha and beta details.", "importance": "low",
         "sourceIndexes": [1, 2, 3]}]})
    add("compact: over budget with pending", C, {"revision": "<<plan_rev>>", "target": "user",
                                                 "pending": "<<pending>>", "entries": [
        {"content": _long_fact("delta"), "importance": "normal", "sourceIndexes": [1, 2, 3]}]})
    add("compact: pending not an object", C, {"revision": "<<plan_rev>>", "target": "user", "pending": [1],
                                              "entries": []})
    add("compact: good with pending", C, {"revision": "<<plan_rev>>", "target": "user", "pending": "<<pending>>",
                                          "entries": [{"content": "Prefers short answers; alpha and beta details.",
                                                       "importance": "normal", "sourceIndexes": [1, 2, 3]}]})
    add("compact: replayed revision", C, {"revision": "<<plan_rev>>", "target": "user", "entries": [
        {"content": "Prefers short answers.", "importance": "normal", "sourceIndexes": [1]}]})
    add("runtime/snapshot: after compaction", "mnemon/runtime/snapshot", {})

    # ---- documents
    D = "mnemon/documents/"
    add("documents/list: empty", D + "list", {})
    add("documents/create: good", D + "create", {"title": "Cache design", "content": "# Cache design\n\nThe cache "
                                                 "keeps 64 entries per shard and evicts the oldest.\n",
                                                 "description": "How the cache evicts entries",
                                                 "sourcePaths": ["src/app.py"]}, {"doc1": _ID})
    add("documents/create: second", D + "create", {"title": "Release handoff", "content": "Release steps: tag, "
                                                   "build, upload. The cache must be warm."}, {"doc2": _ID})
    add("documents/create: missing title", D + "create", {"content": "x"})
    add("documents/create: empty title", D + "create", {"title": "  ", "content": "x"})
    add("documents/create: content wrong type", D + "create", {"title": "x", "content": ["x"]})
    add("documents/create: source outside workspace", D + "create", {"title": "x", "content": "x",
                                                                     "sourcePaths": ["/etc/passwd"]})
    add("documents/create: stale index revision", D + "create", {"title": "x", "content": "x",
                                                                 "expectedRevision": "0" * 64})
    add("documents/create: unknown field", D + "create", {"title": "x", "content": "x", "tags": ["a"]})
    add("documents/get: good", D + "get", {"id": "<<doc1>>"})
    add("documents/get: unknown id", D + "get", {"id": "00000000-0000-4000-8000-000000000000"})
    add("documents/get: malformed id", D + "get", {"id": "../../etc/passwd"})
    add("documents/get: missing id", D + "get", {})
    add("documents/list: active", D + "list", {})
    add("documents/list: archived", D + "list", {"status": "archived"})
    add("documents/list: unknown status", D + "list", {"status": "deleted"})
    add("documents/search: cache", D + "search", {"query": "cache"})
    add("documents/search: with content", D + "search", {"query": "shard", "includeContent": True})
    add("documents/search: no hit", D + "search", {"query": "kubernetes"})
    add("documents/search: empty query", D + "search", {"query": ""})
    add("documents/search: limit 0", D + "search", {"query": "cache", "limit": 0})
    add("documents/search: limit 51", D + "search", {"query": "cache", "limit": 51})
    add("documents/search: limit 1", D + "search", {"query": "cache", "limit": 1})
    add("documents/search: for an assistant", D + "search", {"query": "cache", "audience": "assistant"})
    add("documents/search: includeArchived string", D + "search", {"query": "cache", "includeArchived": "yes"})
    add("documents/search: missing query", D + "search", {})
    add("documents/update: content", D + "update", {"id": "<<doc1>>", "content": "# Cache design\n\nThe cache "
                                                    "keeps 128 entries per shard.\n", "documentRevision": 1})
    add("documents/update: stale revision", D + "update", {"id": "<<doc1>>", "title": "x", "documentRevision": 1})
    add("documents/update: revision as string", D + "update", {"id": "<<doc1>>", "title": "x",
                                                               "documentRevision": "2"})
    add("documents/update: unknown id", D + "update", {"id": "00000000-0000-4000-8000-000000000000", "title": "x"})
    add("documents/update: nothing to change", D + "update", {"id": "<<doc1>>"})
    add("documents/update: title and description", D + "update", {"id": "<<doc1>>", "title": "Cache design v2",
                                                                  "description": "Eviction and sizing"})
    add("documents/archive: missing revision", D + "archive", {"id": "<<doc2>>"})
    add("documents/archive: stale revision", D + "archive", {"id": "<<doc2>>", "documentRevision": 7})
    add("documents/archive: good", D + "archive", {"id": "<<doc2>>", "documentRevision": 1,
                                                   "summary": "Released."})
    add("documents/archive: already archived", D + "archive", {"id": "<<doc2>>", "documentRevision": 1})
    add("documents/update: archived document", D + "update", {"id": "<<doc2>>", "title": "x"})
    add("documents/search: include archived", D + "search", {"query": "release", "includeArchived": True})
    add("documents/list: archived after archive", D + "list", {"status": "archived"})
    add("documents/restore: active document", D + "restore", {"id": "<<doc1>>"})
    add("documents/restore: good", D + "restore", {"id": "<<doc2>>"})
    add("documents/restore: unknown id", D + "restore", {"id": "00000000-0000-4000-8000-000000000000"})
    add("documents/restore: revision wrong type", D + "restore", {"id": "<<doc2>>", "documentRevision": True})

    # ---- Memory Spaces
    S = "mnemon/spaces/"
    add("spaces/list: none", S + "list", {})
    add("spaces/create: first (active)", S + "create", {"name": "Decisions", "description": "Architecture and "
                                                        "process decisions of this repository", "active": True})
    add("spaces/create: second (inactive)", S + "create", {
        "name": "Facts", "description": "Facts about the build, the tools and the team"},
        {"space2": r'"id": "([^"]+)"'})
    add("spaces/create: same name other case", S + "create", {"name": "decisions", "description": "x"})
    add("spaces/create: missing description", S + "create", {"name": "Other"})
    add("spaces/create: active as string", S + "create", {"name": "Other", "description": "x", "active": "yes"})
    add("spaces/create: provider not installed", S + "create", {"name": "Other", "description": "x",
                                                                "provider": "mem0"})
    add("spaces/create: empty name", S + "create", {"name": "", "description": "x"})
    add("spaces/list: two", S + "list", {})
    add("spaces/list: active only", S + "list", {"activeOnly": True})
    add("spaces/list: activeOnly wrong type", S + "list", {"activeOnly": 1})
    add("spaces/update: rename", S + "update", {"spaceId": "<<space2>>", "name": "Build facts"})
    add("spaces/update: unknown space", S + "update", {"spaceId": "nope", "name": "x"})
    add("spaces/update: missing spaceId", S + "update", {"name": "x"})
    add("spaces/activate: second", S + "activate", {"spaceId": "<<space2>>"})
    add("spaces/activate: unknown", S + "activate", {"spaceId": "nope"})
    add("spaces/deactivate: second", S + "deactivate", {"spaceId": "<<space2>>"})
    add("spaces/deactivate: unknown", S + "deactivate", {"spaceId": "nope"})
    add("spaces/status: default", S + "status", {"spaceId": "default"})
    add("spaces/status: unknown", S + "status", {"spaceId": "nope"})
    R = "mnemon/remember"
    add("remember: default space", R, {"content": "We chose SQLite for the index because it ships with Python.",
                                       "category": "decision", "importance": 4, "tags": ["storage"],
                                       "entities": ["SQLite"]}, {"item1": _ID})
    add("remember: second item", R, {"content": "The index is rebuilt by `make reindex`.", "spaceId": "default"},
        {"item2": _ID})
    add("remember: duplicate", R, {"content": "We chose SQLite for the index because it ships with Python."})
    add("remember: branch scoped", R, {"content": "On this branch the cache is disabled.", "scopeToBranch": True})
    add("remember: inactive space", R, {"content": "Builds take four minutes.", "spaceId": "<<space2>>"})
    add("remember: unknown space", R, {"content": "x", "spaceId": "nope"})
    add("remember: importance out of range", R, {"content": "x", "spaceId": "default", "importance": 9})
    add("remember: importance as string", R, {"content": "x", "spaceId": "default", "importance": "3"})
    add("remember: unknown category", R, {"content": "x", "spaceId": "default", "category": "gossip"})
    add("remember: too many tags", R, {"content": "x", "spaceId": "default", "tags": [f"t{i}" for i in range(21)]})
    add("remember: entity with comma", R, {"content": "x", "spaceId": "default", "entities": ["a,b"]})
    add("remember: empty content", R, {"content": "", "spaceId": "default"})
    add("remember: missing content", R, {})
    add("remember: no space named, two active", R, {"content": "Which space?"})
    Q = "mnemon/recall"
    add("recall: sqlite", Q, {"query": "sqlite index"})
    add("recall: keyword mode", Q, {"query": "reindex", "mode": "keyword"})
    add("recall: basic mode", Q, {"query": "index", "mode": "basic"})
    add("recall: one space", Q, {"query": "builds", "spaces": ["<<space2>>"]})
    add("recall: unknown space", Q, {"query": "x", "spaces": ["nope"]})
    add("recall: limit 1", Q, {"query": "index", "limit": 1})
    add("recall: limit 0", Q, {"query": "index", "limit": 0})
    add("recall: unknown mode", Q, {"query": "x", "mode": "fuzzy"})
    add("recall: empty query", Q, {"query": ""})
    add("recall: no hit", Q, {"query": "kubernetes helm chart"})
    add("recall: for an assistant", Q, {"query": "index", "audience": "assistant"})
    add("recall: unknown audience", Q, {"query": "index", "audience": "model"})
    add("recall: spaces not a list", Q, {"query": "x", "spaces": "default"})
    LK = "mnemon/link"
    add("link: good", LK, {"spaceId": "default", "sourceId": "<<item1>>", "targetId": "<<item2>>",
                           "edgeType": "causal", "weight": 0.8})
    add("link: weight out of range", LK, {"spaceId": "default", "sourceId": "<<item1>>", "targetId": "<<item2>>",
                                          "weight": 2.0})
    add("link: weight as string", LK, {"spaceId": "default", "sourceId": "<<item1>>", "targetId": "<<item2>>",
                                       "weight": "0.5"})
    add("link: unknown edge type", LK, {"spaceId": "default", "sourceId": "<<item1>>", "targetId": "<<item2>>",
                                        "edgeType": "friend"})
    add("link: unknown target", LK, {"spaceId": "default", "sourceId": "<<item1>>",
                                     "targetId": "00000000-0000-4000-8000-000000000000"})
    add("link: to itself", LK, {"spaceId": "default", "sourceId": "<<item1>>", "targetId": "<<item1>>"})
    RL = "mnemon/related"
    add("related: good", RL, {"spaceId": "default", "id": "<<item1>>"})
    add("related: edge type", RL, {"spaceId": "default", "id": "<<item1>>", "edgeType": "causal", "depth": 1})
    add("related: depth out of range", RL, {"spaceId": "default", "id": "<<item1>>", "depth": 9})
    add("related: unknown item", RL, {"spaceId": "default", "id": "00000000-0000-4000-8000-000000000000"})
    add("related: unknown space", RL, {"spaceId": "nope", "id": "<<item1>>"})
    add("related: missing id", RL, {"spaceId": "default"})
    F = "mnemon/forget"
    add("forget: good", F, {"spaceId": "default", "id": "<<item2>>"})
    add("forget: again", F, {"spaceId": "default", "id": "<<item2>>"})
    add("forget: unknown item", F, {"spaceId": "default", "id": "00000000-0000-4000-8000-000000000000"})
    add("forget: missing spaceId", F, {"id": "<<item1>>"})
    add("recall: after forget", Q, {"query": "reindex"})
    add("spaces/status: after writes", S + "status", {"spaceId": "default"})
    add("spaces/merge: into itself", S + "merge", {"sourceIds": ["default"], "targetId": "default"})
    add("spaces/merge: unknown source", S + "merge", {"sourceIds": ["nope"], "targetId": "default"})
    add("spaces/merge: sourceIds not a list", S + "merge", {"sourceIds": "x", "targetId": "default"})
    add("spaces/merge: good", S + "merge", {"sourceIds": ["<<space2>>"], "targetId": "default",
                                            "deactivateSources": True})
    add("spaces/delete: unknown", S + "delete", {"spaceId": "nope"})
    add("spaces/delete: second holds items", S + "delete", {"spaceId": "<<space2>>"})
    add("spaces/delete: confirm not a boolean", S + "delete", {"spaceId": "<<space2>>", "confirm": "yes"})
    add("spaces/delete: second confirmed", S + "delete", {"spaceId": "<<space2>>", "confirm": True})
    add("spaces/delete: last native store", S + "delete", {"spaceId": "default"})
    add("spaces/list: after merge and delete", S + "list", {})
    add("mutate: memory big fact", M, {"action": "add", "content": _long_fact("omega", 400)})
    add("mutate: memory overflow, route to unknown space", M, {"action": "add", "content": _long_fact("sigma", 400),
                                                               "routes": [{"sourceIndexes": [1], "spaceId": "nope"}]})
    add("mutate: memory overflow, route not covering", M, {"action": "add", "content": _long_fact("sigma", 400),
                                                           "routes": [{"sourceIndexes": [1], "spaceId": "default"}]})
    add("mutate: memory overflow archives into the space", M, {"action": "add", "content": _long_fact("sigma", 400)})
    add("recall: the archived fact", Q, {"query": "omega-detail-007"})
    add("wake: after archival", W, {})

    # ---- records
    RC = "mnemon/records/"
    add("records/list: empty", RC + "list", {})
    add("records/create: project fact", RC + "create", {"title": "Build tool", "content": "The build uses make.",
                                                        "tags": ["build"], "sourceRefs": [{"kind": "file",
                                                                                           "id": "Makefile"}]},
        {"rec1": _RECORD})
    add("records/create: decision", RC + "create", {"type": "decision", "title": "Index store",
                                                    "content": "The index is SQLite."}, {"rec2": _RECORD})
    add("records/create: shared-project without confirm", RC + "create", {
        "recordScope": "shared-project", "title": "Shared", "content": "Shared rule."})
    add("records/create: shared-project confirmed", RC + "create", {
        "recordScope": "shared-project", "title": "Shared", "content": "Shared rule.", "confirm": True},
        {"rec3": _RECORD})
    add("records/create: user scope", RC + "create", {"recordScope": "user", "type": "preference",
                                                      "title": "Answers", "content": "Short answers."})
    add("records/create: session scope", RC + "create", {"recordScope": "session", "title": "Now",
                                                         "content": "Working on the cache."})
    add("records/create: unknown type", RC + "create", {"type": "rumour", "title": "x", "content": "x"})
    add("records/create: unknown scope", RC + "create", {"recordScope": "team", "title": "x", "content": "x"})
    add("records/create: missing title", RC + "create", {"content": "x"})
    add("records/create: title too long", RC + "create", {"title": "t" * 201, "content": "x"})
    add("records/create: bad source ref", RC + "create", {"title": "x", "content": "x",
                                                          "sourceRefs": [{"kind": "rumour", "id": "x"}]})
    add("records/create: confirm as string", RC + "create", {"title": "x", "content": "x", "confirm": "true"})
    add("records/propose: convention", RC + "propose", {"type": "convention", "title": "Commit style",
                                                        "content": "Commits start with the area: `cli: ...`.",
                                                        "note": "seen in the log"}, {"prop1": _RECORD})
    add("records/propose: second", RC + "propose", {"title": "Flaky test", "content": "test_watch is flaky."},
        {"prop2": _RECORD})
    add("records/propose: shared-project refused", RC + "propose", {"recordScope": "shared-project",
                                                                    "title": "x", "content": "x"})
    add("records/list: all", RC + "list", {})
    add("records/list: proposals", RC + "list", {"proposals": True})
    add("records/list: by type", RC + "list", {"type": "decision"})
    add("records/list: by text", RC + "list", {"text": "make"})
    add("records/list: by tag", RC + "list", {"tag": "build"})
    add("records/list: scopes", RC + "list", {"scopes": ["user", "session"]})
    add("records/list: limit 1", RC + "list", {"limit": 1})
    add("records/list: unknown scope", RC + "list", {"scopes": ["team"]})
    add("records/list: unknown verification", RC + "list", {"verification": "maybe"})
    add("records/list: limit wrong type", RC + "list", {"limit": "2"})
    add("records/get: good", RC + "get", {"id": "<<rec1>>"})
    add("records/get: with scope", RC + "get", {"id": "<<rec1>>", "recordScope": "project"})
    add("records/get: wrong scope", RC + "get", {"id": "<<rec1>>", "recordScope": "user"})
    add("records/get: unknown", RC + "get", {"id": "memory:user:fact:000000000000000000000000"})
    add("records/get: missing id", RC + "get", {})
    add("records/verify: proposal", RC + "verify", {"id": "<<prop1>>"})
    add("records/verify: again", RC + "verify", {"id": "<<prop1>>"})
    add("records/verify: unknown", RC + "verify", {"id": "memory:user:fact:000000000000000000000000"})
    add("records/reject: proposal", RC + "reject", {"id": "<<prop2>>"})
    add("records/stale: fact", RC + "stale", {"id": "<<rec1>>"})
    add("records/verify: shared without confirm", RC + "verify", {"id": "<<rec3>>"})
    add("records/edit: content", RC + "edit", {"id": "<<rec2>>", "content": "The index is SQLite (WAL mode).",
                                               "tags": ["index", "storage"]})
    add("records/edit: nothing to change", RC + "edit", {"id": "<<rec2>>"})
    add("records/edit: unknown type", RC + "edit", {"id": "<<rec2>>", "type": "rumour"})
    add("records/edit: unknown", RC + "edit", {"id": "memory:user:fact:000000000000000000000000", "title": "x"})
    add("records/archive: decision", RC + "archive", {"id": "<<rec2>>"})
    add("records/forget: fact", RC + "forget", {"id": "<<rec1>>"})
    add("records/forget: again", RC + "forget", {"id": "<<rec1>>"})
    add("records/list: archived", RC + "list", {"status": "archived"})
    add("records/list: forgotten", RC + "list", {"status": "forgotten"})
    add("records/export: all", RC + "export", {}, {"bundle": "path:result.bundle"})
    add("records/export: project", RC + "export", {"scopes": ["project"]})
    add("records/export: unknown scope", RC + "export", {"scopes": ["team"]})
    add("records/import: bundle", RC + "import", {"bundle": _BUNDLE})
    add("records/import: same bundle again", RC + "import", {"bundle": _BUNDLE})
    add("records/import: exported bundle", RC + "import", {"bundle": "<<bundle>>"})
    add("records/import: exported bundle into user", RC + "import", {"bundle": "<<bundle>>", "recordScope": "user"})
    add("records/import: not a bundle", RC + "import", {"bundle": {"records": "x"}})
    add("records/import: verified without verifiedAt", RC + "import", {"bundle": _BAD_BUNDLE})
    add("records/import: bundle a string", RC + "import", {"bundle": "x"})
    add("records/import: missing bundle", RC + "import", {})
    add("records/import: shared without confirm", RC + "import", {"bundle": _BUNDLE,
                                                                  "recordScope": "shared-project"})
    add("records/compact: project", RC + "compact", {})
    add("records/compact: shared without confirm", RC + "compact", {"recordScope": "shared-project"})
    add("records/compact: unknown scope", RC + "compact", {"recordScope": "team"})

    # ---- providers (no provider package is installed)
    P_ = "mnemon/providers/"
    add("providers/list", P_ + "list", {})
    add("providers/list: unknown field", P_ + "list", {"all": True})
    add("providers/configure: not installed", P_ + "configure", {"providerId": "mem0",
                                                                  "services": {"dataPath": "<<ROOT>>/m"}})
    add("providers/configure: unknown provider", P_ + "configure", {"providerId": "nope"})
    add("providers/configure: missing providerId", P_ + "configure", {})
    add("providers/configure: services not an object", P_ + "configure", {"providerId": "mem0", "services": [1]})
    add("providers/enable: not installed", P_ + "enable", {"providerId": "holographic"})
    add("providers/enable: clearSecrets refused", P_ + "enable", {"providerId": "mem0", "clearSecrets": ["apiKey"]})
    add("providers/disable: not installed", P_ + "disable", {"providerId": "mem0"})
    add("providers/test: not installed", P_ + "test", {"providerId": "mem0"})
    add("providers/test: reference provider", P_ + "test", {"providerId": "honcho"})
    add("providers/discover: not installed", P_ + "discover", {"providerId": "holographic"})
    add("providers/discover: providerId wrong type", P_ + "discover", {"providerId": 1})

    # ---- packs
    PK = "mnemon/pack/"
    add("pack/exportFolder", PK + "exportFolder", {})
    add("pack/exportFolder: unknown field", PK + "exportFolder", {"path": "/tmp"})
    add("pack/export: runtime to a file", PK + "export", {"packScope": "runtime", "path": "<<ROOT>>/runtime.zip"})
    add("pack/export: full to a file", PK + "export", {"path": "<<ROOT>>/full.zip", "includeUserProfile": True})
    add("pack/export: relative path", PK + "export", {"path": "pack.zip"})
    add("pack/export: inside the storage root", PK + "export", {"path": "<<DATA>>/inside.zip"})
    add("pack/export: unknown scope", PK + "export", {"packScope": "everything"})
    add("pack/export: includeUserProfile string", PK + "export", {"includeUserProfile": "yes"})
    add("pack/inspect: runtime pack", PK + "inspect", {"path": "<<ROOT>>/runtime.zip"})
    add("pack/inspect: full pack", PK + "inspect", {"path": "<<ROOT>>/full.zip"})
    add("pack/inspect: missing file", PK + "inspect", {"path": "<<ROOT>>/none.zip"})
    add("pack/inspect: not a zip", PK + "inspect", {"path": "<<WS>>/notes.txt"})
    add("pack/inspect: base64 not base64", PK + "inspect", {"base64": "%%%"})
    add("pack/inspect: base64 not a pack", PK + "inspect", {"base64": "aGVsbG8="})
    add("pack/inspect: path and base64", PK + "inspect", {"path": "<<ROOT>>/full.zip", "base64": "aGVsbG8="})
    add("pack/inspect: neither", PK + "inspect", {})
    add("pack/import: dry run merge", PK + "import", {"path": "<<ROOT>>/full.zip", "dryRun": True})
    add("pack/import: merge", PK + "import", {"path": "<<ROOT>>/full.zip"})
    add("pack/import: dry run replace runtime", PK + "import", {"path": "<<ROOT>>/runtime.zip", "mode": "replace",
                                                                "components": ["runtime"], "dryRun": True})
    add("pack/import: empty components", PK + "import", {"path": "<<ROOT>>/full.zip", "components": []})
    add("pack/import: unknown component", PK + "import", {"path": "<<ROOT>>/full.zip", "components": ["records"]})
    add("pack/import: unknown mode", PK + "import", {"path": "<<ROOT>>/full.zip", "mode": "overwrite"})
    add("pack/import: dryRun string", PK + "import", {"path": "<<ROOT>>/full.zip", "dryRun": "true"})
    add("pack/import: replaceUserProfile in merge", PK + "import", {"path": "<<ROOT>>/full.zip",
                                                                    "replaceUserProfile": True, "dryRun": True})

    # ---- commands, unknown methods, final state
    add("executeCommand: show wake", "workspace/executeCommand", {"command": "mnemon.server.showWakeSnapshot",
                                                                  "arguments": [{"uri": "<<WS_URI>>"}]})
    add("executeCommand: remember selection", "workspace/executeCommand", {
        "command": "mnemon.server.rememberSelection",
        "arguments": [{"uri": "<<WS_URI>>/src/app.py", "text": "main() returns hello"}]})
    add("executeCommand: remember selection bad args", "workspace/executeCommand", {
        "command": "mnemon.server.rememberSelection", "arguments": [{"uri": "<<WS_URI>>/src/app.py"}]})
    add("executeCommand: create document from file", "workspace/executeCommand", {
        "command": "mnemon.server.createDocumentFromFile", "arguments": [{"uri": "<<WS_URI>>/docs/design.md"}]})
    add("didOpen: src/app.py", "textDocument/didOpen", {"textDocument": {
        "uri": "<<WS_URI>>/src/app.py", "languageId": "python", "version": 1,
        "text": "def main():\n    return 'hello'\n"}}, notify=True)
    add("codeAction: selection in a source file", "textDocument/codeAction", {
        "textDocument": {"uri": "<<WS_URI>>/src/app.py"},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 18}},
        "context": {"diagnostics": []}})
    add("codeAction: empty selection", "textDocument/codeAction", {
        "textDocument": {"uri": "<<WS_URI>>/src/app.py"},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": []}})
    add("codeAction: file a document was made from", "textDocument/codeAction", {
        "textDocument": {"uri": "<<WS_URI>>/docs/design.md"},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": []}})
    add("executeCommand: update document from file", "workspace/executeCommand", {
        "command": "mnemon.server.updateDocumentFromFile", "arguments": [{"uri": "<<WS_URI>>/docs/design.md"}]})
    add("executeCommand: update document from a file no document names", "workspace/executeCommand", {
        "command": "mnemon.server.updateDocumentFromFile", "arguments": [{"uri": "<<WS_URI>>/notes.txt"}]})
    add("didClose: src/app.py", "textDocument/didClose", {"textDocument": {"uri": "<<WS_URI>>/src/app.py"}},
        notify=True)
    add("executeCommand: arguments not an array", "workspace/executeCommand", {
        "command": "mnemon.server.showWakeSnapshot", "arguments": {"uri": "<<WS_URI>>"}})
    add("executeCommand: unknown command", "workspace/executeCommand", {"command": "mnemon.server.nope",
                                                                        "arguments": []})
    add("unknown mnemon method", "mnemon/bogus", {})
    add("status: final", "mnemon/status", {})
    add("wake: final", W, {})
    add("runtime/snapshot: final", "mnemon/runtime/snapshot", {})
    add("documents/list: final", D + "list", {})
    add("spaces/list: final", S + "list", {})
    add("records/list: final", RC + "list", {})

    # ---- a person's compaction (merge/drop; issue 23 item 9), after the final state so it changes no answer above
    add("mutate: user short fact", M, {"action": "add", "target": "user", "content": "Works in UTC+2."})
    add("compact (person): with entries", C, {"revision": "0" * 64, "entries": [], "drop": [1]})
    add("compact (person): names nothing", C, {"merge": [], "drop": []})
    add("compact (person): drop out of range", C, {"drop": [9]})
    add("compact (person): drop not a number", C, {"drop": ["2"]})
    add("compact (person): merge without content", C, {"merge": [{"sourceIndexes": [1, 3]}]})
    add("compact (person): merge lowers importance", C, {"merge": [{"sourceIndexes": [1, 3], "content": "x",
                                                                    "importance": "low"}]})
    add("compact (person): merged and dropped", C, {"merge": [{"sourceIndexes": [1], "content": "x"}], "drop": [1]})
    add("compact (person): stale revision", C, {"revision": "0" * 64, "drop": [2]})
    add("compact (person): merge and drop", C, {"merge": [{"sourceIndexes": [1, 3], "content":
                                                           "Prefers short answers; works in UTC+2."}], "drop": [2]})
    add("runtime/snapshot: after the person's compaction", "mnemon/runtime/snapshot", {})

    # ---- memory where the code is (issue 24 item 5), last: it changes no answer above
    add("mutate: cites src/app.py", M, {"action": "add", "content": "main says hello",
                                        "cites": [{"path": "src/app.py", "startLine": 1, "endLine": 2}]})
    add("citations/file: src/app.py", "mnemon/citations/file", {"path": "src/app.py"})
    add("citations/file: outside", "mnemon/citations/file", {"path": "/etc/passwd"})
    add("citations/review: nothing changed", "mnemon/citations/review", {})
    add("citations/reanchor: unknown key", "mnemon/citations/reanchor", {"source": "runtime", "key": "memory:nope"})
    add("citations/reanchor: unknown source", "mnemon/citations/reanchor", {"source": "notes", "key": "x"})

    # ---- import from other assistants in an editor (issue 28 item 2), last: the sandbox holds no source files
    IM = "mnemon/import/"
    add("import/scan: nothing found", IM + "scan", {}, {"fingerprint": r'"fingerprint": "([0-9a-f]{64})"'})
    add("import/scan: unknown field", IM + "scan", {"source": "cursor"})
    add("import/apply: unknown id", IM + "apply", {"ids": ["0123456789abcdef"], "fingerprint": "<<fingerprint>>"})
    add("import/apply: no ids", IM + "apply", {"ids": [], "fingerprint": "<<fingerprint>>"})
    add("import/apply: fingerprint not hex", IM + "apply", {"ids": ["0123456789abcdef"], "fingerprint": "abc"})
    add("import/apply: fingerprint of no scan", IM + "apply", {"ids": ["0123456789abcdef"], "fingerprint": "0" * 64})
    return cases


def mcp_cases() -> list[Case]:
    """Every MCP tool (good and bad arguments), the resources, the prompt and the listings."""
    cases: list[Case] = []

    def tool(name: str, tool_name: str, arguments: Any = None, capture: dict[str, str] | None = None) -> None:
        cases.append(Case(name, {"kind": "tool", "name": tool_name, "arguments": arguments}, capture or {}))

    def other(case_name: str, kind: str, **op: Any) -> None:
        cases.append(Case(case_name, {"kind": kind, **op}))

    other("initialize", "initialize")
    other("ping", "ping")
    other("tools/list", "list_tools")
    other("resources/list", "list_resources")
    other("resources/templates/list", "list_resource_templates")
    other("prompts/list", "list_prompts")
    other("prompts/get: routing", "get_prompt", name="mnemon-routing")
    other("prompts/get: unknown", "get_prompt", name="no-such-prompt")
    other("prompts/get: unexpected argument", "get_prompt", name="mnemon-routing", arguments={"x": "y"})

    # ---- status and wake on an empty root
    tool("status: empty root", "mnemon_status", {})
    tool("status: workspace path", "mnemon_status", {"workspace": "<<WS>>"})
    tool("status: workspace elsewhere", "mnemon_status", {"workspace": "<<ROOT>>"})
    tool("status: workspace relative", "mnemon_status", {"workspace": "relative"})
    tool("status: workspace wrong type", "mnemon_status", {"workspace": 5})
    tool("status: unknown argument", "mnemon_status", {"bogus": 1})
    tool("unknown tool", "mnemon_nope", {})
    tool("wake: empty root", "mnemon_wake", {}, {"view1": r"View: (view-[0-9]+-[0-9a-f]+)"})
    other("resource: wake (empty)", "read_resource", uri="mnemon://wake")
    other("resource: USER.md (empty)", "read_resource", uri="mnemon://runtime/USER.md")
    other("resource: MEMORY.md (empty)", "read_resource", uri="mnemon://runtime/MEMORY.md")

    # ---- runtime memory
    RM = "mnemon_runtime_memory"
    tool("runtime: add memory", RM, {"action": "add", "content": "Build with `make build`; tests with `make test`."})
    tool("runtime: add critical", RM, {"action": "add", "content": "Never push to main directly.",
                                       "importance": "critical"})
    tool("runtime: add for feature branch", RM, {"action": "add", "content": "The feature branch rewrites the "
                                                 "cache.", "branches": ["feature"], "importance": "low"})
    tool("runtime: add user", RM, {"action": "add", "target": "user", "content": "Prefers short answers."})
    tool("runtime: duplicate", RM, {"action": "add", "content": "Never push to main directly."})
    tool("runtime: credential redacted", RM, {"action": "add", "content": "Deploy token is "
                                              "ghp_abcdefghijklmnopqrstuvwxyz0123456789 for CI."})
    tool("runtime: text that looks like JSON", RM, {"action": "add", "content": "[1, 2]"})
    tool("runtime: replace", RM, {"action": "replace", "old_text": "[1, 2]", "content": "The docs live in docs/."})
    tool("runtime: replace ambiguous", RM, {"action": "replace", "old_text": "The", "content": "x"})
    tool("runtime: remove no match", RM, {"action": "remove", "old_text": "zzz"})
    tool("runtime: remove", RM, {"action": "remove", "old_text": "docs live"})
    tool("runtime: missing action", RM, {"content": "x"})
    tool("runtime: unknown action", RM, {"action": "upsert", "content": "x"})
    tool("runtime: camelCase argument", RM, {"action": "remove", "oldText": "x"})
    tool("runtime: content wrong type", RM, {"action": "add", "content": 5})
    tool("runtime: content empty", RM, {"action": "add", "content": ""})
    tool("runtime: content with section sign", RM, {"action": "add", "content": "a\n§\nb"})
    tool("runtime: content too long", RM, {"action": "add", "content": "y" * 9000})
    tool("runtime: branches on user", RM, {"action": "add", "target": "user", "content": "x",
                                           "branches": ["main"]})
    tool("runtime: importance unknown", RM, {"action": "add", "content": "x", "importance": "urgent"})
    tool("runtime: several wrong types", RM, {"action": 1, "content": True, "branches": "main"})
    tool("runtime: routes wrong type", RM, {"action": "add", "content": "x", "routes": "default"})
    tool("runtime: workspace outside", RM, {"action": "add", "content": "x", "workspace": "/"})
    other("resource: MEMORY.md", "read_resource", uri="mnemon://runtime/MEMORY.md")
    other("resource: USER.md", "read_resource", uri="mnemon://runtime/USER.md")
    tool("wake: after writes", "mnemon_wake", {})
    tool("wake: feature branch", "mnemon_wake", {"branch": "feature"})
    tool("wake: invalid branch", "mnemon_wake", {"branch": "bad..name"})
    tool("wake: budget is not an argument", "mnemon_wake", {"budget_chars": 2048})
    other("resource: wake", "read_resource", uri="mnemon://wake")
    other("resource: unknown", "read_resource", uri="mnemon://nothing")

    # ---- capacity and compaction of USER.md
    tool("runtime: user long fact 1", RM, {"action": "add", "target": "user", "content": _long_fact("alpha")})
    tool("runtime: user long fact 2", RM, {"action": "add", "target": "user", "content": _long_fact("beta")})
    tool("runtime: user full (plan)", RM, {"action": "add", "target": "user", "content": _long_fact("gamma")},
         {"plan_rev": r"revision=([0-9a-f]{64})", "pending": r"json:pending=(\{.*?\}), entries = "})
    RC = "mnemon_runtime_compact"
    tool("compact: missing revision", RC, {"entries": []})
    tool("compact: entries wrong type", RC, {"revision": "<<plan_rev>>", "entries": "x"})
    tool("compact: unknown target", RC, {"revision": "<<plan_rev>>", "entries": [], "target": "both"})
    tool("compact: stale revision", RC, {"revision": "0" * 64, "entries": []})
    tool("compact: index missing", RC, {"revision": "<<plan_rev>>", "entries": [
        {"content": "Prefers short answers.", "importance": "normal", "sourceIndexes": [1]}]})
    tool("compact: over budget with pending", RC, {"revision": "<<plan_rev>>", "pending": "<<pending>>",
                                                     "entries": [{"content": _long_fact("delta"), "importance":
                                                                  "normal", "sourceIndexes": [1, 2, 3]}]})
    tool("compact: pending wrong type", RC, {"revision": "<<plan_rev>>", "pending": "add", "entries": []})
    tool("compact: good with pending", RC, {"revision": "<<plan_rev>>", "pending": "<<pending>>", "entries": [
        {"content": "Prefers short answers; alpha and beta details.", "importance": "normal",
         "sourceIndexes": [1, 2, 3]}]})
    tool("compact: replayed", RC, {"revision": "<<plan_rev>>", "entries": [
        {"content": "Prefers short answers.", "importance": "normal", "sourceIndexes": [1]}]})
    other("resource: USER.md after compaction", "read_resource", uri="mnemon://runtime/USER.md")

    # ---- documents
    DC, DM, DS = "mnemon_document_create", "mnemon_document_manage", "mnemon_document_search"
    tool("document_search: empty root", DS, {"query": "cache"})
    tool("document_create: good", DC, {"title": "Cache design", "content": "# Cache design\n\nThe cache keeps 64 "
                                       "entries per shard and evicts the oldest.\n",
                                       "description": "How the cache evicts entries", "source_paths": ["src/app.py"]},
         {"doc1": _ID})
    tool("document_create: second", DC, {"title": "Release handoff", "content": "Release steps: tag, build, "
                                         "upload. The cache must be warm."}, {"doc2": _ID})
    tool("document_create: description 'null'", DC, {"title": "Null words", "content": "null",
                                                      "description": "null"}, {"doc3": _ID})
    tool("document_create: missing content", DC, {"title": "x"})
    tool("document_create: empty title", DC, {"title": " ", "content": "x"})
    tool("document_create: source outside", DC, {"title": "x", "content": "x", "source_paths": ["../outside"]})
    tool("document_create: expected_revision is not an argument", DC, {"title": "x", "content": "x",
                                                                       "expected_revision": "0" * 64})
    tool("document_search: cache", DS, {"query": "cache"})
    tool("document_search: limit 1", DS, {"query": "cache", "limit": 1})
    tool("document_search: limit 0", DS, {"query": "cache", "limit": 0})
    tool("document_search: limit 51", DS, {"query": "cache", "limit": 51})
    tool("document_search: limit string", DS, {"query": "cache", "limit": "5"})
    tool("document_search: no hit", DS, {"query": "kubernetes"})
    tool("document_search: missing query", DS, {})
    tool("document_manage: get", DM, {"action": "get", "id": "<<doc1>>"})
    tool("document_manage: get unknown", DM, {"action": "get", "id": "00000000-0000-4000-8000-000000000000"})
    tool("document_manage: unknown action", DM, {"action": "delete", "id": "<<doc1>>"})
    tool("document_manage: missing id", DM, {"action": "get"})
    tool("document_manage: update", DM, {"action": "update", "id": "<<doc1>>", "content": "# Cache design\n\n"
                                         "The cache keeps 128 entries per shard.\n", "revision": 1})
    tool("document_manage: update stale revision", DM, {"action": "update", "id": "<<doc1>>", "title": "x",
                                                        "revision": 1})
    tool("document_manage: update revision string", DM, {"action": "update", "id": "<<doc1>>", "revision": "2"})
    tool("document_manage: update title", DM, {"action": "update", "id": "<<doc1>>", "title": "Cache design v2"})
    tool("document_manage: archive without revision", DM, {"action": "archive", "id": "<<doc2>>"})
    tool("document_manage: archive", DM, {"action": "archive", "id": "<<doc2>>", "revision": 1})
    tool("document_manage: archive again", DM, {"action": "archive", "id": "<<doc2>>", "revision": 2})
    tool("document_manage: update archived", DM, {"action": "update", "id": "<<doc2>>", "title": "x"})
    tool("document_search: include archived", DS, {"query": "release", "include_archived": True})
    tool("document_search: include_archived string", DS, {"query": "release", "include_archived": "true"})
    other("resource: document", "read_resource", uri="mnemon://documents/<<doc1>>")
    other("resource: archived document", "read_resource", uri="mnemon://documents/<<doc2>>")
    other("resource: unknown document", "read_resource", uri="mnemon://documents/nope")

    # ---- Memory Spaces
    SP = "mnemon_memory_spaces"
    tool("spaces: list none", SP, {})
    tool("spaces: create first", SP, {"action": "create", "name": "Decisions",
                                      "description": "Architecture and process decisions of this repository"})
    tool("spaces: create second inactive", SP, {"action": "create", "name": "Facts", "active": False,
                                                "description": "Facts about the build, the tools and the team"},
         {"space2": r"- ([0-9a-f-]{36}): Facts"})
    tool("spaces: create duplicate name", SP, {"action": "create", "name": "FACTS", "description": "x"})
    tool("spaces: create without description", SP, {"action": "create", "name": "Other"})
    tool("spaces: create active string", SP, {"action": "create", "name": "Other", "description": "x",
                                              "active": "false"})
    tool("spaces: list", SP, {"action": "list"})
    tool("spaces: update", SP, {"action": "update", "space_id": "<<space2>>", "name": "Build facts"})
    tool("spaces: update without id", SP, {"action": "update", "name": "x"})
    tool("spaces: update unknown", SP, {"action": "update", "space_id": "nope", "name": "x"})
    tool("spaces: activate", SP, {"action": "activate", "space_id": "<<space2>>"})
    tool("spaces: deactivate", SP, {"action": "deactivate", "space_id": "<<space2>>"})
    tool("spaces: deactivate unknown", SP, {"action": "deactivate", "space_id": "nope"})
    tool("spaces: delete is not an action", SP, {"action": "delete", "space_id": "<<space2>>"})
    RB = "mnemon_remember"
    tool("remember: only active space", RB, {"content": "We chose SQLite for the index because it ships with "
                                             "Python.", "category": "decision", "importance": 4,
                                             "tags": ["storage"], "entities": ["SQLite"]}, {"item1": _ID})
    tool("remember: second", RB, {"content": "The index is rebuilt by `make reindex`.", "space_id": "default"},
         {"item2": _ID})
    tool("remember: duplicate", RB, {"content": "We chose SQLite for the index because it ships with Python."})
    tool("remember: branch scoped", RB, {"content": "On this branch the cache is disabled.",
                                         "scope_to_branch": True})
    tool("remember: inactive space", RB, {"content": "Builds take four minutes.", "space_id": "<<space2>>"})
    tool("remember: unknown space", RB, {"content": "x", "space_id": "nope"})
    tool("remember: importance 0", RB, {"content": "x", "space_id": "default", "importance": 0})
    tool("remember: importance fraction", RB, {"content": "x", "space_id": "default", "importance": 3.5})
    tool("remember: unknown category", RB, {"content": "x", "space_id": "default", "category": "gossip"})
    tool("remember: too many tags", RB, {"content": "x", "space_id": "default",
                                         "tags": [f"t{i}" for i in range(21)]})
    tool("remember: source is not an argument", RB, {"content": "x", "source": "me"})
    tool("remember: no space, two active", RB, {"content": "Which space?"})
    RE = "mnemon_recall"
    tool("recall: sqlite", RE, {"query": "sqlite index"})
    tool("recall: one space", RE, {"query": "builds", "spaces": ["<<space2>>"]})
    tool("recall: unknown space", RE, {"query": "x", "spaces": ["nope"]})
    tool("recall: limit 1", RE, {"query": "index", "limit": 1})
    tool("recall: limit 13", RE, {"query": "index", "limit": 13})
    tool("recall: limit 0", RE, {"query": "index", "limit": 0})
    tool("recall: mode is not an argument", RE, {"query": "index", "mode": "basic"})
    tool("recall: audience is not an argument", RE, {"query": "index", "audience": "person"})
    tool("recall: empty query", RE, {"query": ""})
    tool("recall: no hit", RE, {"query": "kubernetes helm chart"})
    LK = "mnemon_link"
    tool("link: good", LK, {"space_id": "default", "source_id": "<<item1>>", "target_id": "<<item2>>",
                            "edge_type": "causal", "weight": 0.8})
    tool("link: weight 1 (integer)", LK, {"space_id": "default", "source_id": "<<item1>>", "target_id": "<<item2>>",
                                          "weight": 1})
    tool("link: weight out of range", LK, {"space_id": "default", "source_id": "<<item1>>",
                                           "target_id": "<<item2>>", "weight": 1.5})
    tool("link: unknown edge type", LK, {"space_id": "default", "source_id": "<<item1>>",
                                         "target_id": "<<item2>>", "edge_type": "friend"})
    tool("link: unknown target", LK, {"space_id": "default", "source_id": "<<item1>>",
                                      "target_id": "00000000-0000-4000-8000-000000000000"})
    tool("link: unknown space", LK, {"space_id": "nope", "source_id": "a", "target_id": "b"})
    RL = "mnemon_related"
    tool("related: good", RL, {"space_id": "default", "id": "<<item1>>"})
    tool("related: depth 1 causal", RL, {"space_id": "default", "id": "<<item1>>", "depth": 1,
                                         "edge_type": "causal"})
    tool("related: depth 6", RL, {"space_id": "default", "id": "<<item1>>", "depth": 6})
    tool("related: unknown item", RL, {"space_id": "default", "id": "00000000-0000-4000-8000-000000000000"})
    tool("related: limit is not an argument", RL, {"space_id": "default", "id": "<<item1>>", "limit": 3})
    FG = "mnemon_forget"
    tool("forget: good", FG, {"space_id": "default", "id": "<<item2>>"})
    tool("forget: again", FG, {"space_id": "default", "id": "<<item2>>"})
    tool("forget: unknown", FG, {"space_id": "default", "id": "00000000-0000-4000-8000-000000000000"})
    tool("forget: missing id", FG, {"space_id": "default"})
    tool("recall: after forget", RE, {"query": "reindex"})
    tool("spaces: deactivate the second", SP, {"action": "deactivate", "space_id": "<<space2>>"})
    tool("runtime: memory big fact", RM, {"action": "add", "content": _long_fact("omega", 400)})
    tool("runtime: overflow, route to unknown space", RM, {"action": "add", "content": _long_fact("sigma", 400),
                                                           "routes": [{"sourceIndexes": [1], "spaceId": "nope"}]})
    tool("runtime: overflow archives into the space", RM, {"action": "add", "content": _long_fact("sigma", 400)})
    tool("recall: the archived fact", RE, {"query": "omega-detail-007"})
    tool("wake: after archival", "mnemon_wake", {})

    # ---- records
    RP, RS = "mnemon_records_propose", "mnemon_records_search"
    tool("records_search: none", RS, {})
    tool("records_propose: fact", RP, {"title": "Build tool", "content": "The build uses make.",
                                       "tags": ["build"]})
    tool("records_propose: decision with refs", RP, {"type": "decision", "title": "Index store",
                                                     "content": "The index is SQLite.", "note": "from the chat",
                                                     "source_refs": [{"kind": "file", "id": "src/app.py"}]})
    tool("records_propose: user scope", RP, {"record_scope": "user", "type": "preference", "title": "Answers",
                                             "content": "Short answers."})
    tool("records_propose: session scope", RP, {"record_scope": "session", "title": "Now",
                                                "content": "Working on the cache."})
    tool("records_propose: shared-project refused", RP, {"record_scope": "shared-project", "title": "x",
                                                         "content": "x"})
    tool("records_propose: unknown type", RP, {"type": "rumour", "title": "x", "content": "x"})
    tool("records_propose: missing title", RP, {"content": "x"})
    tool("records_propose: title too long", RP, {"title": "t" * 201, "content": "x"})
    tool("records_propose: bad source ref", RP, {"title": "x", "content": "x",
                                                 "source_refs": [{"kind": "rumour", "id": "x"}]})
    tool("records_propose: source ref wrong type", RP, {"title": "x", "content": "x", "source_refs": ["file:x"]})
    tool("records_search: all", RS, {})
    tool("records_search: query", RS, {"query": "make"})
    tool("records_search: proposals only", RS, {"proposals_only": True})
    tool("records_search: by type", RS, {"type": "decision"})
    tool("records_search: by scope", RS, {"record_scope": "user"})
    tool("records_search: verification", RS, {"verification": "verified"})
    tool("records_search: limit 1", RS, {"limit": 1})
    tool("records_search: limit 0", RS, {"limit": 0})
    tool("records_search: unknown scope", RS, {"record_scope": "team"})
    tool("records_search: query too long", RS, {"query": "q" * 2001})

    # ---- final state
    tool("status: final", "mnemon_status", {})
    tool("wake: final", "mnemon_wake", {})
    tool("spaces: list final", SP, {})
    other("resource: wake final", "read_resource", uri="mnemon://wake")

    # ---- a person's compaction (merge/drop; issue 23 item 9), after the final state so it changes no answer above
    tool("runtime: user short fact", RM, {"action": "add", "target": "user", "content": "Works in UTC+2."})
    tool("compact (person): with entries", RC, {"revision": "0" * 64, "entries": [], "drop": [1]})
    tool("compact (person): drop out of range", RC, {"drop": [9]})
    tool("compact (person): drop not a number", RC, {"drop": ["2"]})
    tool("compact (person): merge lowers importance", RC, {"merge": [
        {"sourceIndexes": [1, 3], "content": "x", "importance": "low"}]})
    tool("compact (person): merge and drop", RC, {"merge": [
        {"sourceIndexes": [1, 3], "content": "Prefers short answers; works in UTC+2."}], "drop": [2]})
    other("resource: USER.md after the person's compaction", "read_resource", uri="mnemon://runtime/USER.md")

    # ---- memory where the code is (issue 24 item 5), last: it changes no answer above
    tool("runtime: cites src/app.py", RM, {"action": "add", "content": "main says hello",
                                           "cites": [{"path": "src/app.py", "startLine": 1, "endLine": 2}]})
    tool("citations: review (default action)", "mnemon_citations", {})
    tool("citations: file", "mnemon_citations", {"action": "file", "path": "src/app.py"})
    tool("citations: reanchor without key", "mnemon_citations", {"action": "reanchor", "source": "runtime"})
    tool("citations: reanchor unknown key", "mnemon_citations", {"action": "reanchor", "source": "runtime",
                                                                 "key": "memory:nope"})
    return cases


def cli_cases() -> list[Case]:
    """Every command and subcommand of ``mnemon-ls`` (``serve`` and ``mcp`` only as ``--help``), good and bad
    input, text and ``--json`` output."""
    cases: list[Case] = []

    def c(name: str, *argv: Any, stdin: Any = None, env: dict[str, str] | None = None,
          capture: dict[str, str] | None = None, cwd: str | None = None) -> None:
        op: dict[str, Any] = {"argv": list(argv)}
        if stdin is not None:
            op["stdin"] = stdin
        if env:
            op["env"] = env
        if cwd:
            op["cwd"] = cwd
        cases.append(Case(name, op, capture or {}))

    # ---- the parser: help, version, usage errors
    c("no arguments")
    c("--help", "--help")
    c("--version", "--version")
    c("unknown command", "frobnicate")
    for group in ("runtime", "doc", "space", "records", "provider", "pack"):
        c(f"{group} --help", group, "--help")
        c(f"{group} without action", group)
    for command in ("wake", "doctor", "redact", "migrate", "remember", "recall", "setup", "hook", "serve", "mcp"):
        c(f"{command} --help", command, "--help")
    for group, actions in (("runtime", ("add", "replace", "remove", "list", "recover", "archived", "compact")),
                           ("doc", ("create", "update", "get", "list", "search", "archive", "restore", "recover")),
                           ("space", ("list", "create", "update", "activate", "deactivate", "delete", "status",
                                      "reindex", "embed", "merge", "related", "link", "forget")),
                           ("records", ("list", "show", "create", "propose", "verify", "reject", "stale", "archive",
                                        "forget", "edit", "export", "import", "compact")),
                           ("provider", ("list", "configure", "enable", "disable", "test", "discover")),
                           ("pack", ("export", "inspect", "import"))):
        for action in actions:
            c(f"{group} {action} --help", group, action, "--help")
    c("runtime unknown action", "runtime", "upsert")
    c("unknown option", "wake", "--colour")

    # ---- an empty root
    c("wake: empty root", "wake")
    c("wake: empty root --json", "wake", "--json")
    c("runtime list: empty", "runtime", "list")
    c("runtime list: empty --json", "runtime", "list", "--json")
    c("doctor: empty root", "doctor")
    c("doctor: --json", "doctor", "--json")

    # ---- settings, scopes and workspaces
    c("settings: --scope global", "runtime", "list", "--scope", "global")
    c("settings: --scope custom without --data-dir", "runtime", "list", "--scope", "custom")
    c("settings: --data-dir relative", "runtime", "list", "--data-dir", "relative/dir")
    c("settings: --data-dir custom root", "runtime", "list", "--data-dir", "<<ROOT>>/custom-root", "--json")
    c("settings: --scope workspace", "runtime", "list", "--scope", "workspace")
    c("settings: --user-limit-bytes 0", "runtime", "list", "--user-limit-bytes", "0")
    c("settings: --memory-limit-bytes not a number", "runtime", "list", "--memory-limit-bytes", "lots")
    c("settings: --memory-limit-bytes too large", "runtime", "list", "--memory-limit-bytes", "2000000")
    c("settings: unknown --scope", "runtime", "list", "--scope", "team")
    c("settings: MNEMON_STORAGE_SCOPE unknown", "runtime", "list", env={"MNEMON_STORAGE_SCOPE": "team"})
    c("settings: MNEMON_USER_LIMIT_BYTES not a number", "runtime", "list", env={"MNEMON_USER_LIMIT_BYTES": "x"})
    c("settings: --workspace missing dir", "runtime", "list", "--workspace", "<<ROOT>>/missing")
    c("settings: --workspace a file", "runtime", "list", "--workspace", "<<WS>>/notes.txt")
    c("settings: no workspace (cwd outside)", "runtime", "list", cwd="<<HOME>>")
    c("settings: --workspace from elsewhere", "runtime", "list", "--workspace", "<<WS>>", cwd="<<HOME>>")

    # ---- runtime
    c("runtime add: memory", "runtime", "add", "--content", "Build with `make build`; tests with `make test`.")
    c("runtime add: critical --json", "runtime", "add", "--content", "Never push to main directly.",
      "--importance", "critical", "--json")
    c("runtime add: feature branch", "runtime", "add", "--content", "The feature branch rewrites the cache.",
      "--branch", "feature", "--importance", "low")
    c("runtime add: user", "runtime", "add", "--target", "user", "--content", "Prefers short answers.")
    c("runtime add: duplicate", "runtime", "add", "--content", "Never push to main directly.")
    c("runtime add: from stdin", "runtime", "add", "--content", "-", stdin="The docs live in docs/.\n")
    c("runtime add: credential redacted", "runtime", "add", "--content",
      "Deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789 for CI.")
    c("runtime add: credential allowed", "runtime", "add", "--secrets", "allow", "--content",
      "Staging token ghp_zyxwvutsrqponmlkjihgfedcba9876543210 (allowed).")
    c("runtime add: credential rejected", "runtime", "add", "--secrets", "reject", "--content",
      "Other token ghp_0123456789abcdefghijklmnopqrstuvwxyz.")
    c("runtime add: missing --content", "runtime", "add")
    c("runtime add: empty content", "runtime", "add", "--content", " ")
    c("runtime add: section sign", "runtime", "add", "--content", "a\n§\nb")
    c("runtime add: too long", "runtime", "add", "--content", "z" * 9000)
    c("runtime add: unknown importance", "runtime", "add", "--content", "x", "--importance", "high")
    c("runtime add: branch on user", "runtime", "add", "--target", "user", "--content", "x", "--branch", "main")
    c("runtime add: invalid branch", "runtime", "add", "--content", "x", "--branch", "bad..name")
    c("runtime add: routes not JSON", "runtime", "add", "--content", "x", "--routes", "{nope")
    c("runtime add: routes not a list", "runtime", "add", "--content", "x", "--routes", '{"a": 1}')
    c("runtime add: --json error", "runtime", "add", "--content", "", "--json")
    c("runtime replace: substring", "runtime", "replace", "--old-text", "make test", "--content",
      "Build with `make build`; tests with `make check`.")
    c("runtime replace: ambiguous", "runtime", "replace", "--old-text", "The", "--content", "x")
    c("runtime replace: no match --json", "runtime", "replace", "--old-text", "zzz", "--content", "x", "--json")
    c("runtime replace: --no-branches", "runtime", "replace", "--old-text", "rewrites the cache", "--content",
      "The feature branch rewrites the cache layer.", "--no-branches")
    c("runtime replace: --branch and --no-branches", "runtime", "replace", "--old-text", "x", "--content", "y",
      "--branch", "main", "--no-branches")
    c("runtime replace: missing --old-text", "runtime", "replace", "--content", "x")
    c("runtime remove: from stdin", "runtime", "remove", "--old-text", "-", stdin="docs live")
    c("runtime remove: no match", "runtime", "remove", "--old-text", "nothing like this")
    c("runtime remove: user no match", "runtime", "remove", "--target", "user", "--old-text", "zzz")
    c("runtime list", "runtime", "list")
    c("runtime list: --target user --json", "runtime", "list", "--target", "user", "--json")
    c("runtime list: --target memory", "runtime", "list", "--target", "memory")
    c("runtime recover: valid store", "runtime", "recover")
    c("runtime recover: --json", "runtime", "recover", "--json")
    c("runtime archived: nothing", "runtime", "archived")
    c("runtime archived: --json", "runtime", "archived", "--json")
    c("wake: after writes", "wake")
    c("wake: --branch feature", "wake", "--branch", "feature")
    c("wake: --branch invalid", "wake", "--branch", "bad..name")
    c("wake: --budget 1024", "wake", "--budget", "1024")
    c("wake: --budget 10", "wake", "--budget", "10")
    c("wake: --budget not a number", "wake", "--budget", "big")
    c("wake: --json", "wake", "--json")
    c("redact: dry run", "redact")
    c("redact: dry run --json", "redact", "--json")
    c("redact: --apply", "redact", "--apply")
    c("redact: nothing left", "redact")

    # ---- USER.md capacity and compaction
    c("runtime add: user long fact 1", "runtime", "add", "--target", "user", "--content", _long_fact("alpha"))
    c("runtime add: user long fact 2", "runtime", "add", "--target", "user", "--content", _long_fact("beta"))
    c("runtime add: user full", "runtime", "add", "--target", "user", "--content", _long_fact("gamma"))
    c("runtime add: user full --json (plan)", "runtime", "add", "--target", "user", "--content",
      _long_fact("gamma"), "--json",
      capture={"plan_rev": r'"revision": "([0-9a-f]{64})"', "pending": r'json:"pending": (\{[^{}]*\})'})
    c("runtime compact: neither --plan nor --entries", "runtime", "compact", "--revision", "<<plan_rev>>")
    c("runtime compact: --entries without --revision", "runtime", "compact", "--entries", "-", stdin="[]")
    c("runtime compact: --entries not JSON", "runtime", "compact", "--entries", "-", "--revision", "<<plan_rev>>",
      stdin="not json")
    c("runtime compact: --entries missing file", "runtime", "compact", "--entries", "<<ROOT>>/none.json",
      "--revision", "<<plan_rev>>")
    c("runtime compact: stale revision", "runtime", "compact", "--entries", "-", "--revision", "0" * 64,
      stdin="[]")
    c("runtime compact: index missing", "runtime", "compact", "--entries", "-", "--revision", "<<plan_rev>>",
      stdin=json.dumps([{"content": "Prefers short answers.", "importance": "normal", "sourceIndexes": [1]}]))
    c("runtime compact: --pending not JSON", "runtime", "compact", "--entries", "-", "--revision", "<<plan_rev>>",
      "--pending", "{x", stdin="[]")
    c("runtime compact: over budget with pending", "runtime", "compact", "--entries", "-", "--revision",
      "<<plan_rev>>", "--pending", "<<pending>>",
      stdin=json.dumps([{"content": _long_fact("delta"), "importance": "normal", "sourceIndexes": [1, 2, 3]}]))
    c("runtime compact: --plan from stdin", "runtime", "compact", "--plan", "-", "--json",
      stdin={"revision": "<<plan_rev>>", "target": "user", "pending": "<<pending>>", "entries": [
          {"content": "Prefers short answers; alpha and beta details.", "importance": "normal",
           "sourceIndexes": [1, 2, 3]}]})
    c("runtime compact: replayed", "runtime", "compact", "--entries", "-", "--revision", "<<plan_rev>>",
      stdin=json.dumps([{"content": "Prefers short answers.", "importance": "normal", "sourceIndexes": [1]}]))
    c("runtime list: after compaction", "runtime", "list", "--target", "user")
    c("runtime archived: after compaction", "runtime", "archived")
    c("runtime compact: memory target not full", "runtime", "compact", "--entries", "-", "--revision",
      "<<plan_rev>>", "--target", "memory", stdin="[]")

    # ---- documents
    c("doc list: empty", "doc", "list")
    c("doc create: content", "doc", "create", "--title", "Cache design", "--content", "# Cache design\n\nThe cache "
      "keeps 64 entries per shard and evicts the oldest.\n", "--description", "How the cache evicts entries",
      "--source", "src/app.py", "--json", capture={"doc1": _ID})
    c("doc create: from stdin", "doc", "create", "--title", "Release handoff", "--content", "-",
      stdin="Release steps: tag, build, upload. The cache must be warm.", capture={"doc2": r"\b" + _ID})
    c("doc create: --file", "doc", "create", "--file", "docs/design.md", "--json", capture={"doc3": _ID})
    c("doc create: --file without heading", "doc", "create", "--file", "notes.txt")
    c("doc create: --file outside the workspace", "doc", "create", "--file", "/etc/hostname")
    c("doc create: --file missing", "doc", "create", "--file", "docs/none.md")
    c("doc create: --content and --file", "doc", "create", "--title", "x", "--content", "x", "--file", "notes.txt")
    c("doc create: missing --title", "doc", "create", "--content", "x")
    c("doc create: empty title", "doc", "create", "--title", " ", "--content", "x")
    c("doc create: source outside", "doc", "create", "--title", "x", "--content", "x", "--source", "../outside")
    c("doc create: stale --index-revision", "doc", "create", "--title", "x", "--content", "x",
      "--index-revision", "0" * 64)
    c("doc create: malformed --index-revision", "doc", "create", "--title", "x", "--content", "x",
      "--index-revision", "abc")
    c("doc get: body", "doc", "get", "<<doc1>>")
    c("doc get: --json", "doc", "get", "<<doc1>>", "--json")
    c("doc get: unknown", "doc", "get", "00000000-0000-4000-8000-000000000000")
    c("doc get: unknown --json", "doc", "get", "00000000-0000-4000-8000-000000000000", "--json")
    c("doc get: missing id", "doc", "get")
    c("doc list", "doc", "list")
    c("doc list: --json", "doc", "list", "--json")
    c("doc list: --status archived", "doc", "list", "--status", "archived")
    c("doc list: unknown status", "doc", "list", "--status", "deleted")
    c("doc search: cache", "doc", "search", "cache")
    c("doc search: --json", "doc", "search", "shard", "--json")
    c("doc search: --limit 1", "doc", "search", "cache", "--limit", "1")
    c("doc search: --limit 0", "doc", "search", "cache", "--limit", "0")
    c("doc search: --limit 51", "doc", "search", "cache", "--limit", "51")
    c("doc search: no hit", "doc", "search", "kubernetes")
    c("doc search: empty query", "doc", "search", "")
    c("doc update: content", "doc", "update", "<<doc1>>", "--content", "# Cache design\n\nThe cache keeps 128 "
      "entries per shard.\n", "--revision", "1")
    c("doc update: stale revision", "doc", "update", "<<doc1>>", "--title", "x", "--revision", "1")
    c("doc update: revision not a number", "doc", "update", "<<doc1>>", "--title", "x", "--revision", "two")
    c("doc update: title and description --json", "doc", "update", "<<doc1>>", "--title", "Cache design v2",
      "--description", "Eviction and sizing", "--json")
    c("doc update: unknown", "doc", "update", "00000000-0000-4000-8000-000000000000", "--title", "x")
    c("doc update: content from stdin", "doc", "update", "<<doc3>>", "--content", "-",
      stdin="# Cache design\n\nUpdated from standard input.\n")
    c("doc archive: without revision", "doc", "archive", "<<doc2>>")
    c("doc archive: stale revision", "doc", "archive", "<<doc2>>", "--revision", "5")
    c("doc archive: good", "doc", "archive", "<<doc2>>", "--revision", "1", "--summary", "Released.")
    c("doc archive: again", "doc", "archive", "<<doc2>>", "--revision", "2")
    c("doc list: archived", "doc", "list", "--status", "archived")
    c("doc search: --include-archived", "doc", "search", "release", "--include-archived")
    c("doc restore: active document", "doc", "restore", "<<doc1>>")
    c("doc restore: good --json", "doc", "restore", "<<doc2>>", "--json")
    c("doc restore: unknown", "doc", "restore", "00000000-0000-4000-8000-000000000000")
    c("doc recover", "doc", "recover")
    c("doc recover: --json", "doc", "recover", "--json")
    c("doc list: after recover", "doc", "list")

    # ---- Memory Spaces, remember, recall
    c("space list: none", "space", "list")
    c("recall: no space", "recall", "anything")
    c("remember: no space", "remember", "A fact without a space.")
    c("space create: first", "space", "create", "--name", "Decisions", "--description",
      "Architecture and process decisions of this repository", "--active")
    c("space create: second --json", "space", "create", "--name", "Facts", "--description",
      "Facts about the build, the tools and the team", "--json", capture={"space2": r'"id": "([^"]+)"'})
    c("space create: duplicate name", "space", "create", "--name", "FACTS", "--description", "x")
    c("space create: missing --description", "space", "create", "--name", "Other")
    c("space create: provider not installed", "space", "create", "--name", "Other", "--description", "x",
      "--provider", "mem0")
    c("space create: empty name", "space", "create", "--name", "", "--description", "x")
    c("space list", "space", "list")
    c("space list: --json", "space", "list", "--json")
    c("space update: rename by name", "space", "update", "Facts", "--name", "Build facts")
    c("space update: unknown", "space", "update", "nope", "--name", "x")
    c("space update: nothing to change", "space", "update", "default")
    c("space activate: by name", "space", "activate", "Build facts")
    c("space activate: unknown", "space", "activate", "nope")
    c("space deactivate: by id --json", "space", "deactivate", "<<space2>>", "--json")
    c("space deactivate: unknown", "space", "deactivate", "nope")
    c("space status: default", "space", "status", "default")
    c("space status: --json", "space", "status", "default", "--json")
    c("space status: unknown", "space", "status", "nope")
    c("remember: default space --json", "remember", "We chose SQLite for the index because it ships with Python.",
      "--category", "decision", "--importance", "4", "--tag", "storage", "--entity", "SQLite", "--json",
      capture={"item1": _ID})
    c("remember: second --json", "remember", "The index is rebuilt by `make reindex`.", "--space", "default",
      "--json", capture={"item2": _ID})
    c("remember: duplicate", "remember", "We chose SQLite for the index because it ships with Python.")
    c("remember: from stdin", "remember", "-", "--space", "Decisions", stdin="Releases are cut on Fridays.")
    c("remember: --for-branch", "remember", "On this branch the cache is disabled.", "--for-branch")
    c("remember: inactive space", "remember", "Builds take four minutes.", "--space", "Build facts")
    c("remember: unknown space", "remember", "x", "--space", "nope")
    c("remember: importance out of range", "remember", "x", "--space", "default", "--importance", "9")
    c("remember: importance not a number", "remember", "x", "--space", "default", "--importance", "high")
    c("remember: unknown category", "remember", "x", "--space", "default", "--category", "gossip")
    c("remember: entity with comma", "remember", "x", "--space", "default", "--entity", "a,b")
    c("remember: empty content", "remember", "", "--space", "default")
    c("remember: two active, no --space", "remember", "Which space?")
    c("recall: sqlite", "recall", "sqlite index")
    c("recall: --json", "recall", "reindex", "--json")
    c("recall: --mode basic", "recall", "index", "--mode", "basic")
    c("recall: --mode keyword", "recall", "reindex", "--mode", "keyword")
    c("recall: --space by name", "recall", "builds", "--space", "Build facts")
    c("recall: --space unknown", "recall", "x", "--space", "nope")
    c("recall: --limit 1", "recall", "index", "--limit", "1")
    c("recall: --limit 0", "recall", "index", "--limit", "0")
    c("recall: --embed-seconds 0", "recall", "index", "--embed-seconds", "0")
    c("recall: --embed-seconds negative", "recall", "index", "--embed-seconds", "-1")
    c("recall: unknown --mode", "recall", "x", "--mode", "fuzzy")
    c("recall: empty query", "recall", "")
    c("recall: no hit", "recall", "kubernetes helm chart")
    c("space link: good", "space", "link", "<<item1>>", "<<item2>>", "--space", "default", "--type", "causal")
    c("space link: --json", "space", "link", "<<item2>>", "<<item1>>", "--space", "default", "--json")
    c("space link: unknown type", "space", "link", "<<item1>>", "<<item2>>", "--space", "default", "--type", "x")
    c("space link: unknown target", "space", "link", "<<item1>>", "00000000-0000-4000-8000-000000000000",
      "--space", "default")
    c("space link: unknown space", "space", "link", "a", "b", "--space", "nope")
    c("space link: missing --space", "space", "link", "<<item1>>", "<<item2>>")
    c("space related: good", "space", "related", "<<item1>>", "--space", "default")
    c("space related: --json --depth 1", "space", "related", "<<item1>>", "--space", "default", "--depth", "1",
      "--json")
    c("space related: depth 9", "space", "related", "<<item1>>", "--space", "default", "--depth", "9")
    c("space related: unknown item", "space", "related", "00000000-0000-4000-8000-000000000000", "--space",
      "default")
    c("space forget: good", "space", "forget", "<<item2>>", "--space", "default")
    c("space forget: again", "space", "forget", "<<item2>>", "--space", "default")
    c("space forget: --json unknown", "space", "forget", "00000000-0000-4000-8000-000000000000", "--space",
      "default", "--json")
    c("recall: after forget", "recall", "reindex")
    c("space reindex: default", "space", "reindex", "default")
    c("space reindex: --json", "space", "reindex", "default", "--json")
    c("space reindex: unknown", "space", "reindex", "nope")
    c("space embed: semantic off", "space", "embed", "default")
    c("space merge: into itself", "space", "merge", "default", "--into", "default")
    c("space merge: unknown source", "space", "merge", "nope", "--into", "default")
    c("space merge: missing --into", "space", "merge", "Build facts")
    c("space merge: good", "space", "merge", "Build facts", "--into", "default")
    c("space merge: --keep-active --json", "space", "merge", "Build facts", "--into", "default", "--keep-active",
      "--json")
    c("space delete: unknown", "space", "delete", "nope")
    c("space delete: second holds items", "space", "delete", "Build facts")
    c("space delete: second --confirm", "space", "delete", "Build facts", "--confirm")
    c("space delete: last native store", "space", "delete", "default")
    c("space list: after merge and delete", "space", "list")
    c("space status: after writes", "space", "status", "Decisions")
    c("runtime add: memory big fact", "runtime", "add", "--content", _long_fact("omega", 400))
    c("runtime add: overflow with --memory-maintenance reject", "runtime", "add", "--memory-maintenance", "reject",
      "--content", _long_fact("sigma", 400))
    c("runtime add: overflow, route to unknown space", "runtime", "add", "--content", _long_fact("sigma", 400),
      "--routes", '[{"sourceIndexes": [1], "spaceId": "nope"}]')
    c("runtime add: overflow archives into the space --json", "runtime", "add", "--content",
      _long_fact("sigma", 400), "--json")
    c("runtime archived: after overflow", "runtime", "archived")
    c("runtime archived: after overflow --json", "runtime", "archived", "--json")
    c("recall: the archived fact", "recall", "omega-detail-007")

    # ---- records
    c("records list: none", "records", "list")
    c("records create: project fact --json", "records", "create", "--title", "Build tool", "--content",
      "The build uses make.", "--tag", "build", "--source-ref", "file:Makefile", "--json", capture={"rec1": _RECORD})
    c("records create: decision --json", "records", "create", "--type", "decision", "--title", "Index store",
      "--content", "The index is SQLite.", "--json", capture={"rec2": _RECORD})
    c("records create: content from stdin", "records", "create", "--title", "From stdin", "--content", "-",
      stdin="Read from standard input.")
    c("records create: shared-project without --confirm", "records", "create", "--record-scope",
      "shared-project", "--title", "Shared", "--content", "Shared rule.")
    c("records create: shared-project --confirm --json", "records", "create", "--record-scope", "shared-project",
      "--title", "Shared", "--content", "Shared rule.", "--confirm", "--json", capture={"rec3": _RECORD})
    c("records create: user scope", "records", "create", "--record-scope", "user", "--type", "preference",
      "--title", "Answers", "--content", "Short answers.")
    c("records create: --user-id", "records", "create", "--record-scope", "user", "--user-id", "someone-else",
      "--title", "Theirs", "--content", "Someone else's preference.")
    c("records create: session scope", "records", "create", "--record-scope", "session", "--session-id", "s-1",
      "--title", "Now", "--content", "Working on the cache.")
    c("records create: session scope without id", "records", "create", "--record-scope", "session", "--title",
      "Now", "--content", "x")
    c("records create: missing --title", "records", "create", "--content", "x")
    c("records create: title too long", "records", "create", "--title", "t" * 201, "--content", "x")
    c("records create: bad --source-ref", "records", "create", "--title", "x", "--content", "x", "--source-ref",
      "nocolon")
    c("records create: unknown --type", "records", "create", "--title", "x", "--content", "x", "--type", "rumour")
    c("records propose: without a source", "records", "propose", "--title", "x", "--content", "x")
    c("records propose: convention --json", "records", "propose", "--type", "convention", "--title",
      "Commit style", "--content", "Commits start with the area: `cli: ...`.", "--note", "seen in the log",
      "--source-ref", "session:s-1", "--json", capture={"prop1": _RECORD})
    c("records propose: second --json", "records", "propose", "--title", "Flaky test", "--content",
      "test_watch is flaky.", "--source-ref", "file:tests/test_watch.py", "--json", capture={"prop2": _RECORD})
    c("records propose: shared-project", "records", "propose", "--record-scope", "shared-project", "--title",
      "x", "--content", "x", "--source-ref", "file:x", "--confirm")
    c("records list", "records", "list")
    c("records list: --json", "records", "list", "--json")
    c("records list: --proposals", "records", "list", "--proposals")
    c("records list: --type decision", "records", "list", "--type", "decision")
    c("records list: --text", "records", "list", "--text", "make")
    c("records list: --tag", "records", "list", "--tag", "build")
    c("records list: two scopes", "records", "list", "--record-scope", "user", "--record-scope", "shared-project")
    c("records list: --session-id", "records", "list", "--record-scope", "session", "--session-id", "s-1")
    c("records list: --limit 1", "records", "list", "--limit", "1")
    c("records list: --limit 0", "records", "list", "--limit", "0")
    c("records list: unknown --verification", "records", "list", "--verification", "maybe")
    c("records show: good", "records", "show", "<<rec1>>")
    c("records show: --json", "records", "show", "<<rec1>>", "--json")
    c("records show: wrong scope", "records", "show", "<<rec1>>", "--record-scope", "user")
    c("records show: unknown", "records", "show", "memory:user:fact:000000000000000000000000")
    c("records verify: proposal", "records", "verify", "<<prop1>>")
    c("records verify: again --json", "records", "verify", "<<prop1>>", "--json")
    c("records verify: unknown", "records", "verify", "memory:user:fact:000000000000000000000000")
    c("records reject: proposal", "records", "reject", "<<prop2>>")
    c("records stale: fact", "records", "stale", "<<rec1>>")
    c("records verify: shared without --confirm", "records", "verify", "<<rec3>>")
    c("records verify: shared --confirm", "records", "verify", "<<rec3>>", "--confirm")
    c("records edit: content and tags", "records", "edit", "<<rec2>>", "--content",
      "The index is SQLite (WAL mode).", "--tag", "index", "--tag", "storage")
    c("records edit: nothing to change", "records", "edit", "<<rec2>>")
    c("records edit: unknown", "records", "edit", "memory:user:fact:000000000000000000000000", "--title", "x")
    c("records archive: decision", "records", "archive", "<<rec2>>")
    c("records forget: fact", "records", "forget", "<<rec1>>")
    c("records forget: again", "records", "forget", "<<rec1>>")
    c("records list: --status archived", "records", "list", "--status", "archived")
    c("records list: --status forgotten", "records", "list", "--status", "forgotten")
    c("records export: stdout", "records", "export")
    c("records export: project to a file", "records", "export", "--record-scope", "project", "--output",
      "<<ROOT>>/bundle.json")
    c("records export: output into a missing dir", "records", "export", "--output", "<<ROOT>>/no/such/dir/b.json")
    c("records import: the exported file", "records", "import", "<<ROOT>>/bundle.json")
    c("records import: again --json", "records", "import", "<<ROOT>>/bundle.json", "--json")
    c("records import: from stdin", "records", "import", "-", stdin=json.dumps(_BUNDLE))
    c("records import: verified without verifiedAt", "records", "import", "-", stdin=_BAD_BUNDLE)
    c("records import: not JSON", "records", "import", "-", stdin="not json")
    c("records import: not a bundle", "records", "import", "-", stdin='{"records": "x"}')
    c("records import: missing file", "records", "import", "<<ROOT>>/none.json")
    c("records import: shared without --confirm", "records", "import", "<<ROOT>>/bundle.json", "--record-scope",
      "shared-project")
    c("records compact: project", "records", "compact")
    c("records compact: --json", "records", "compact", "--json")
    c("records compact: shared without --confirm", "records", "compact", "--record-scope", "shared-project")
    c("records list: final", "records", "list")

    # ---- providers (no provider package is installed)
    c("provider list", "provider", "list")
    c("provider list: --all", "provider", "list", "--all")
    c("provider list: --json", "provider", "list", "--json")
    c("provider configure: not installed", "provider", "configure", "mem0", "--set", "dataPath=<<ROOT>>/m")
    c("provider configure: bad --set", "provider", "configure", "mem0", "--set", "novalue")
    c("provider configure: unknown provider", "provider", "configure", "nope")
    c("provider configure: --secret from stdin", "provider", "configure", "mem0", "--secret", "apiKey",
      stdin="sk-secret-value\n")
    c("provider configure: --clear-secret", "provider", "configure", "mem0", "--clear-secret", "apiKey")
    c("provider enable: not installed", "provider", "enable", "holographic")
    c("provider enable: --json", "provider", "enable", "holographic", "--json")
    c("provider disable: not installed", "provider", "disable", "mem0")
    c("provider test: not installed", "provider", "test", "mem0")
    c("provider test: reference provider", "provider", "test", "honcho")
    c("provider discover: not installed", "provider", "discover", "holographic")
    c("provider unknown action", "provider", "remove", "mem0")
    c("doctor: --providers", "doctor", "--providers")

    # ---- packs
    c("pack export: runtime", "pack", "export", "--pack-scope", "runtime", "-o", "<<ROOT>>/runtime.zip")
    c("pack export: full --json", "pack", "export", "--include-user-profile", "--output", "<<ROOT>>/full.zip",
      "--json")
    c("pack export: default path", "pack", "export", "--pack-scope", "documents")
    c("pack export: into the workspace", "pack", "export", "-o", "<<WS>>/memory.zip")
    c("pack export: inside the storage root", "pack", "export", "-o", "<<DATA>>/inside.zip")
    c("pack export: existing file", "pack", "export", "-o", "<<ROOT>>/full.zip")
    c("pack export: unknown scope", "pack", "export", "--pack-scope", "everything")
    c("pack inspect: runtime", "pack", "inspect", "<<ROOT>>/runtime.zip")
    c("pack inspect: full --json", "pack", "inspect", "<<ROOT>>/full.zip", "--json")
    c("pack inspect: missing", "pack", "inspect", "<<ROOT>>/none.zip")
    c("pack inspect: not a zip", "pack", "inspect", "<<WS>>/notes.txt")
    c("pack import: --dry-run", "pack", "import", "<<ROOT>>/full.zip", "--dry-run")
    c("pack import: merge --json", "pack", "import", "<<ROOT>>/full.zip", "--json")
    c("pack import: --replace --dry-run runtime", "pack", "import", "<<ROOT>>/runtime.zip", "--replace",
      "--component", "runtime", "--dry-run")
    c("pack import: --replace-user-profile without --replace", "pack", "import", "<<ROOT>>/full.zip",
      "--replace-user-profile")
    c("pack import: unknown component", "pack", "import", "<<ROOT>>/full.zip", "--component", "records")
    c("pack import: component not in the pack", "pack", "import", "<<ROOT>>/runtime.zip", "--component",
      "documents")
    c("pack import: not a zip", "pack", "import", "<<WS>>/notes.txt")
    c("pack import: --replace runtime", "pack", "import", "<<ROOT>>/runtime.zip", "--replace", "--component",
      "runtime")

    # ---- migrate
    c("migrate: --from global --dry-run", "migrate", "--from", "global", "--dry-run")
    c("migrate: --from global --dry-run --json", "migrate", "--from", "global", "--dry-run", "--json")
    c("migrate: --from workspace (missing)", "migrate", "--from", "workspace")
    c("migrate: --from a missing dir", "migrate", "--from", "<<ROOT>>/nothing")
    c("migrate: --from relative", "migrate", "--from", "relative/dir")
    c("migrate: --from itself", "migrate", "--from", "<<ROOT>>/custom-root", "--data-dir", "<<ROOT>>/custom-root")
    c("migrate: missing --from", "migrate")
    c("migrate: --from global", "migrate", "--from", "global")

    # ---- assistant hooks and setup (everything under the sandbox's HOME and workspace)
    c("hook session-start", "hook", "session-start", stdin="{}")
    c("hook session-start: --json", "hook", "session-start", "--json", stdin='{"session_id": "abc"}')
    c("hook prompt", "hook", "prompt", stdin='{"prompt": "How do we build the index?"}')
    c("hook prompt: --json", "hook", "prompt", "--json", stdin='{"prompt": "Remember that we use make."}')
    c("hook prompt: not JSON", "hook", "prompt", stdin="not json")
    c("hook prompt: empty stdin", "hook", "prompt", stdin="")
    c("hook: unknown event", "hook", "session-end")
    c("setup claude-code: --dry-run", "setup", "claude-code", "--dry-run")
    c("setup claude-code", "setup", "claude-code")
    c("setup claude-code: again", "setup", "claude-code")
    c("setup claude-code: --json", "setup", "claude-code", "--json")
    c("setup claude-code: --remove", "setup", "claude-code", "--remove")
    c("setup codex: --dry-run", "setup", "codex", "--dry-run")
    c("setup codex", "setup", "codex")
    c("setup cursor: --project --dry-run", "setup", "cursor", "--project", "--dry-run")
    c("setup cursor: --project", "setup", "cursor", "--project")
    c("setup vscode: --project", "setup", "vscode", "--project")
    c("setup vscode: --project --remove", "setup", "vscode", "--project", "--remove")
    c("setup vscode: user", "setup", "vscode")
    c("setup: unknown client", "setup", "emacs")

    # ---- final state
    c("doctor: final", "doctor")
    c("wake: final", "wake")
    c("runtime list: final --json", "runtime", "list", "--json")
    c("doc list: final", "doc", "list")
    c("space list: final", "space", "list")

    # ---- a person's compaction (--merge/--as/--drop; issue 23 item 9), after the final state
    c("runtime add: user short fact", "runtime", "add", "--target", "user", "--content", "Works in UTC+2.")
    c("runtime list: user numbered", "runtime", "list", "--target", "user")
    c("runtime compact: --as before --merge", "runtime", "compact", "--as", "x", "--merge", "1,3")
    c("runtime compact: --merge without --as", "runtime", "compact", "--merge", "1,3")
    c("runtime compact: --merge not numbers", "runtime", "compact", "--merge", "1,x", "--as", "x")
    c("runtime compact: --drop out of range", "runtime", "compact", "--drop", "9")
    c("runtime compact: --importance lowers", "runtime", "compact", "--merge", "1,3", "--as", "x", "--importance",
      "low")
    c("runtime compact: merged and dropped", "runtime", "compact", "--merge", "1", "--as", "x", "--drop", "1")
    c("runtime compact: --plan with --revision", "runtime", "compact", "--plan", "-", "--revision", "x", stdin="{}")
    c("runtime compact: --drop with --entries", "runtime", "compact", "--drop", "2", "--entries", "-", "--revision",
      "x", stdin="[]")
    c("runtime compact: stale --revision", "runtime", "compact", "--drop", "2", "--revision", "0" * 64)
    c("runtime compact: --merge --as --drop", "runtime", "compact", "--merge", "1,3", "--as",
      "Prefers short answers; works in UTC+2.", "--drop", "2")
    c("runtime list: after the person's compaction", "runtime", "list", "--target", "user")

    # ---- doctor, redact, migrate and setup: more good and bad input (issue 29: operations, no longer bound by
    # hand), after everything else so that no earlier answer changes
    c("doctor: --json --providers", "doctor", "--json", "--providers")
    c("doctor: --scope custom without --data-dir", "doctor", "--scope", "custom")
    c("doctor: --scope custom without --data-dir --json", "doctor", "--scope", "custom", "--json")
    c("doctor: --workspace a file", "doctor", "--workspace", "<<WS>>/notes.txt")
    c("doctor: unknown option", "doctor", "--fix")
    c("redact: --apply with a bad setting", "redact", "--apply", "--scope", "custom")
    c("redact: --apply takes no value", "redact", "--apply", "yes")
    c("runtime add: another credential allowed", "runtime", "add", "--target", "user", "--secrets", "allow",
      "--content", "Backup token ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 (allowed).")
    c("redact: dry run finds it --json", "redact", "--json")
    c("redact: --apply --json", "redact", "--apply", "--json")
    c("redact: nothing left --json", "redact", "--json")
    c("migrate: --from global --json", "migrate", "--from", "global", "--json")
    c("migrate: --from empty", "migrate", "--from", "")
    c("migrate: --from empty --json", "migrate", "--from", "", "--json")
    c("migrate: --from a file", "migrate", "--from", "<<WS>>/notes.txt")
    c("migrate: --dry-run without --from --json", "migrate", "--dry-run", "--json")
    c("setup codex: --dry-run --json", "setup", "codex", "--dry-run", "--json")
    c("setup cursor: --remove when not set up", "setup", "cursor", "--remove")
    c("setup cursor: --remove --json when not set up", "setup", "cursor", "--remove", "--json")
    c("setup cursor: the settings flags are not read", "setup", "cursor", "--project", "--dry-run", "--scope",
      "custom")
    c("setup cursor: --workspace empty", "setup", "cursor", "--project", "--dry-run", "--workspace", "")
    c("setup codex: --workspace a file", "setup", "codex", "--project", "--dry-run", "--workspace",
      "<<WS>>/notes.txt")
    c("setup: two clients", "setup", "cursor", "codex")
    c("setup: no client --json", "setup", "--json")

    # ---- memory where the code is (issue 24 item 5), last: it changes no answer above
    c("runtime add: --cite src/app.py", "runtime", "add", "--content", "main says hello", "--cite", "src/app.py:1-2")
    c("cited: src/app.py", "cited", "src/app.py")
    c("cited: src/app.py --line 9 --json", "cited", "src/app.py", "--line", "9", "--json")
    c("review", "review")
    c("review --json", "review", "--json")
    c("reanchor: unknown key", "reanchor", "runtime", "memory:nope")
    c("reanchor: unknown source", "reanchor", "notes", "x")
    return cases


CASES: dict[str, Callable[[], list[Case]]] = {"lsp": lsp_cases, "mcp": mcp_cases, "cli": cli_cases}


def record_surface(surface: str, base: Path) -> list[dict[str, Any]]:
    """Run every case of ``surface`` in a new sandbox under ``base``; the recorded entries."""
    sandbox = Sandbox(base)
    cases = CASES[surface]()
    names = [c.name for c in cases]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise AssertionError(f"duplicate case names in the {surface} corpus: {duplicates}")
    if surface == "lsp":
        return asyncio.run(run_lsp(sandbox, cases))
    if surface == "mcp":
        return asyncio.run(run_mcp(sandbox, cases))
    return run_cli(sandbox, cases)


def corpus_file(surface: str) -> Path:
    return CORPUS_DIR / f"{surface}.json"


def python_version() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def save(surface: str, records: list[dict[str, Any]]) -> None:
    CORPUS_DIR.mkdir(parents=True, exist_ok=True)
    document = {"surface": surface, "python": python_version(), "cases": records}
    corpus_file(surface).write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def load(surface: str) -> dict[str, Any]:
    return json.loads(corpus_file(surface).read_text(encoding="utf-8"))
