"""pytest-lsp fixtures: the real mnemon-ls server as a subprocess, driven like VS Code and Neovim drive it.

Every test gets fresh servers (function scope; a start costs ~0.5 s) on real directories under
``tmp_path`` and real git repositories made with pygit2 (:mod:`tests.gitrepo`). Nothing is mocked.

- ``lsp`` (:class:`Launcher`): starts clients on demand (``await lsp.start(caps=..., folders=[...],
  init={...})``) and shuts every one of them down at teardown. Its ``data_dir`` is the server's
  ``$MNEMON_DATA_DIR`` (the ``global`` storage root) and ``home`` its ``$HOME``.
- ``client``: one :class:`MnemonClient` per capability set of :data:`CLIENTS`, with the ``repo``
  fixture (a repository on ``main``) as its only workspace folder, ``storageScope: workspace`` and
  ``runtimeUserScope: storage`` (both USER.md and MEMORY.md in ``<repo>/.mnemon``; the defaults are
  ``workspaces`` + ``global``, tested in ``test_folders.py::test_default_root_*``).

No sleep is used as synchronisation, and no wait is bounded tightly enough to race a loaded machine:
:data:`REQUEST_TIMEOUT` and :data:`NOTIFY_TIMEOUT` are safety bounds that only fire when the server is
hung or the awaited message never comes. Notifications are awaited with pytest-lsp's
``wait_for_notification``, armed before the trigger (:meth:`MnemonClient.expect`); every mnemon
notification is also recorded in :attr:`MnemonClient.notes`, and :meth:`MnemonClient.until` waits for a
condition on what the client received (re-checked each time the server sends it something), so a test
can wait for the notification carrying a given state, or for a ``window/showMessageRequest``. After the
awaited message a test may still watch for a bounded window (a measurement: a duplicate would show).
``MnemonClient.ready()`` is the barrier after ``initialize``: it returns once the server has applied its
initial configuration. Where the server announces nothing (it applies
``didChangeWorkspaceFolders``/``didChangeConfiguration`` asynchronously; disk-only checks), a condition
poll with the same safety bound is used (:meth:`MnemonClient.eventually`, :func:`wait_for_bytes`).

``MNEMON_LSP_TEST_SERVER="python /path/to/other_serve.py"`` runs the suite against another server build
(how the xfail tests were checked to pass once their bug is fixed).

Client-side decoding (test infrastructure, not server behaviour):

- pygls turns custom results and notification params into namedtuples whose keys that are Python
  keywords get renamed (``replaced.from`` arrives as ``_0``); the test client keeps them as JSON dicts.
- lsprotocol 2025.0.0 structures *every* code action that carries a ``command`` as a ``Command``
  (its ``Union[Command, CodeAction]`` hook only checks the key); the test client registers the correct
  hook (``command`` is a string -> ``Command``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shlex
import time
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pygit2
import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCNotification, JsonRPCResponseMessage, default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES

from tests.gitrepo import make_repo
from tests.helpers.zygote import mnemon_command

CLIENTS = ["visual-studio-code", "neovim@v0.7", "neovim"]


def server_command() -> list[str]:
    """The server under test: ``python -m mnemon_ls serve``, forked from the suite's fork server
    (:mod:`tests.helpers.zygote`: the same code, the libraries already imported);
    ``$MNEMON_LSP_TEST_SERVER`` (a shell-style command line) runs the suite against another build of the
    server."""
    if os.environ.get("MNEMON_LSP_TEST_SERVER"):
        return shlex.split(os.environ["MNEMON_LSP_TEST_SERVER"])
    return mnemon_command("serve")

#: Longest wait for a response: a safety bound for a hung server, never a synchronisation (a healthy
#: server answers in milliseconds, but a start-up took more than 10 s at a load of 12 on two cores).
REQUEST_TIMEOUT = 60.0
#: Longest wait for a notification or a condition: a safety bound, like :data:`REQUEST_TIMEOUT` (the
#: aim for a watcher notification is < 300 ms; under load the server needs seconds).
NOTIFY_TIMEOUT = 60.0

BRANCH_CHANGED = "mnemon/branchChanged"
PROJECTION_REPAIRED = "mnemon/projectionRepaired"
RECORD_PROPOSED = "mnemon/recordProposed"
RECORDS_AUTO_WRITTEN = "mnemon/records/autoWritten"
REVIEW_SUGGESTED = "mnemon/reviewSuggested"
MAINTENANCE_COMPLETED = "mnemon/maintenanceCompleted"
MAINTENANCE_REQUIRED = "mnemon/maintenanceRequired"
NOTIFICATIONS = (BRANCH_CHANGED, PROJECTION_REPAIRED, RECORD_PROPOSED, RECORDS_AUTO_WRITTEN, REVIEW_SUGGESTED,
                 MAINTENANCE_COMPLETED, MAINTENANCE_REQUIRED)

#: The fixed explanatory line of every wake snapshot.
EXPLANATION = (
    "Bracketed lines are annotations, not memory content: importance, branches (the entry holds only there) "
    "and ages in whole days at this snapshot ('future'/'unknown': ahead or unreadable); current instructions "
    "outrank stored memory; oldText for replace/remove matches the content line only."
)
#: The routing line of the wake header (mnemon_ls.guidance.WAKE_GUIDANCE_LINE).
WAKE_GUIDANCE_LINE = ("Guidance: answer from the request and the repository first, then this snapshot; search "
                      "Documents, then recall Memory Spaces; never store secrets, temporary progress or raw logs.")


def view_revision(text: str) -> str:
    """What the ``Revision:`` line of a wake must be: sha256 of the text without its ``Revision:`` and
    ``Store revision:`` lines, ages (``created=…; updated=…``) left out of the metadata lines."""
    import re

    kept = [line for line in text.split("\n") if not line.startswith(("Revision: ", "Store revision: "))]
    masked = re.sub(r"^(\[importance=[^;\]\n]*; )created=[^;\]\n]*; updated=[^;\]\n]*", r"\1", "\n".join(kept),
                    flags=re.MULTILINE)
    return hashlib.sha256(masked.encode("utf-8")).hexdigest()


def stamp_view_revision(text: str) -> str:
    """``text`` with its ``Revision:`` line (the second) set to :func:`view_revision`."""
    lines = text.split("\n")
    lines[1] = "Revision: " + view_revision(text)
    return "\n".join(lines)


def as_dict(value: Any) -> Any:
    """pygls hands custom results and notification params over as namedtuples: turn them into dicts/lists."""
    if hasattr(value, "_asdict"):
        return {k: as_dict(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [as_dict(v) for v in value]
    return value


def uri(path: Path) -> str:
    return path.as_uri()


def folder(path: Path) -> types.WorkspaceFolder:
    return types.WorkspaceFolder(uri=path.as_uri(), name=path.name)


@dataclass
class Note:
    """One recorded mnemon notification."""

    at: float
    method: str
    params: dict[str, Any]


def _converter_factory():
    """pygls' converter with a correct ``Command | CodeAction`` hook (see the module doc)."""
    converter = default_converter()

    def command_or_action(obj: Any, _: type) -> Any:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(typing.Union[types.Command, types.CodeAction], command_or_action)

    def keep_json(obj: dict[str, Any], cls: type) -> Any:
        return cls(**obj)

    # Custom results and notification params stay plain JSON (dicts), not renamed namedtuples.
    converter.register_structure_hook(JsonRPCResponseMessage, keep_json)
    converter.register_structure_hook(JsonRPCNotification, keep_json)
    return converter


class MnemonClient(LanguageClient):
    """The pytest-lsp test client plus mnemon helpers (see the module doc)."""

    def __init__(self) -> None:
        super().__init__(converter_factory=_converter_factory)
        self.notes: list[Note] = []
        self.config_requests: list[types.ConfigurationParams] = []
        self.config_gate: asyncio.Event | None = None
        self.config_asked = asyncio.Event()
        self.config_answered = asyncio.Event()
        self.spec = ""
        self.init_result: types.InitializeResult | None = None
        self.exited = False  # the test ended the session itself (shutdown + exit already sent)
        #: ``client/registerCapability`` params received (each is accepted).
        self.registrations: list[types.RegistrationParams] = []
        #: How many ``workspace/codeLens/refresh`` requests the server sent (each is answered).
        self.lens_refreshes = 0
        #: ``window/showMessageRequest`` params received; each is answered with its first action.
        self.message_requests: list[types.ShowMessageRequestParams] = []
        #: Set (and replaced) each time the server sends the client something (:meth:`until`).
        self._arrived = asyncio.Event()

    # ------------------------------------------------------------------ requests

    async def call(self, method: str, params: Any = None, timeout: float = REQUEST_TIMEOUT) -> Any:
        """A ``mnemon/*`` request; the result as plain dicts."""
        return as_dict(await asyncio.wait_for(self.protocol.send_request_async(method, params), timeout))

    async def call_error(self, method: str, params: Any = None) -> JsonRpcException:
        """A request that must fail; returns the error after checking it carries no traceback."""
        with pytest.raises(JsonRpcException) as info:
            await asyncio.wait_for(self.protocol.send_request_async(method, params), REQUEST_TIMEOUT)
        assert_no_traceback(info.value)
        return info.value

    async def command(self, command: str, argument: Any) -> Any:
        """``workspace/executeCommand`` with one argument object."""
        return await asyncio.wait_for(self.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=[argument])), REQUEST_TIMEOUT)

    async def status(self) -> dict[str, Any]:
        return await self.call("mnemon/status", {})

    async def eventually(self, method: str, params: Any, predicate: Callable[[Any], bool],
                         timeout: float = NOTIFY_TIMEOUT) -> Any:
        """Repeat a request until ``predicate(result)`` (bounded condition poll).

        Needed after ``didChangeWorkspaceFolders`` / ``didChangeConfiguration``: the server applies them
        asynchronously and sends nothing when done, so the state itself is polled (every 20 ms) until it
        holds; ``timeout`` is a safety bound (fails after it).
        """
        deadline = time.monotonic() + timeout
        while True:
            result = await self.call(method, params)
            if predicate(result):
                return result
            if time.monotonic() > deadline:
                raise AssertionError(f"{method} never satisfied the condition; last result: {result!r}")
            await asyncio.sleep(0.02)

    # ------------------------------------------------------------------ notifications

    def expect(self, method: str) -> asyncio.Future[Any]:
        """Arm pytest-lsp's ``wait_for_notification`` for ``method`` now (call BEFORE the trigger)."""
        return asyncio.wrap_future(self.protocol.wait_for_notification(method))

    async def received(self, armed: asyncio.Future[Any], timeout: float = NOTIFY_TIMEOUT) -> dict[str, Any]:
        """The params of an armed notification (fails after ``timeout`` seconds)."""
        try:
            return as_dict(await asyncio.wait_for(armed, timeout))
        except asyncio.TimeoutError:
            raise AssertionError(f"no notification within {timeout} s") from None

    def arrived(self) -> None:
        """Wake every :meth:`until` waiting: the server just sent the client something."""
        self._arrived.set()
        self._arrived = asyncio.Event()

    async def until(self, condition: Callable[[], Any], what: str, timeout: float = NOTIFY_TIMEOUT) -> Any:
        """Wait for ``condition()`` to be true (returns its value), re-checking it each time the server
        sends the client a notification or a request (recorded in :attr:`notes`, :attr:`messages`,
        :attr:`message_requests`, :attr:`shown_documents`, ...), never on a clock. ``timeout`` is a safety
        bound: the assertion error names ``what`` was awaited."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            arrived = self._arrived  # taken before the check: nothing arriving after it is missed
            value = condition()
            if value:
                return value
            try:
                await asyncio.wait_for(arrived.wait(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                raise AssertionError(f"{what}: not received within {timeout} s") from None

    async def note(self, method: str, predicate: Callable[[dict[str, Any]], bool] = lambda _: True,
                   since: int = 0) -> dict[str, Any]:
        """The first ``method`` notification recorded after mark ``since`` that satisfies ``predicate``
        (waits for it; see :meth:`until`)."""
        def found() -> list[dict[str, Any]]:
            return [p for p in self.notes_since(since, method) if predicate(p)][:1]

        return (await self.until(found, f"{method} after mark {since}"))[0]

    def mark(self) -> int:
        return len(self.notes)

    def notes_since(self, mark: int, method: str | None = None) -> list[dict[str, Any]]:
        return [n.params for n in self.notes[mark:] if method is None or n.method == method]

    async def quiet_window(self, seconds: float) -> None:
        """Observe for a bounded time (a measurement window, not a synchronisation)."""
        await asyncio.sleep(seconds)

    # ------------------------------------------------------------------ lifecycle

    def supports_configuration(self) -> bool:
        workspace = self.capabilities.workspace if self.capabilities else None
        return bool(workspace and workspace.configuration)

    async def ready(self, pulls_configuration: bool = True) -> None:
        """Barrier: the server has run its ``initialized`` handler to the end (watchers armed).

        The handler first pulls ``workspace/configuration`` when the client supports it, so wait for
        that answer to be written (the server asks only when a folder is open), then make two
        ``mnemon/status`` round trips: the second is read by the server after everything the handler
        scheduled has run.
        """
        if pulls_configuration and self.supports_configuration():
            await asyncio.wait_for(self.config_answered.wait(), REQUEST_TIMEOUT)
        await self.status()
        await self.status()


def _record(method: str) -> Callable[[MnemonClient, Any], None]:
    def handler(client: MnemonClient, params: Any) -> None:
        client.notes.append(Note(time.monotonic(), method, as_dict(params)))
        client.arrived()

    return handler


def _announcing(handler: Callable[..., Any]) -> Callable[..., Any]:
    """``handler`` (a synchronous client feature), then :meth:`MnemonClient.arrived`."""
    def announce(client: MnemonClient, params: Any) -> Any:
        try:
            return handler(client, params)
        finally:
            client.arrived()

    return announce


async def _configuration(client: MnemonClient, params: types.ConfigurationParams) -> list[Any]:
    """``workspace/configuration`` from :meth:`LanguageClient.get_configuration`, optionally held back."""
    client.config_requests.append(params)
    client.config_asked.set()
    client.arrived()
    if client.config_gate is not None:
        await client.config_gate.wait()
    result = [client.get_configuration(section=item.section, scope_uri=item.scope_uri) for item in params.items]
    loop = asyncio.get_running_loop()
    # Two hops: the response is written by a done-callback scheduled after this coroutine returns.
    loop.call_soon(loop.call_soon, client.config_answered.set)
    return result


def _apply_edit(client: MnemonClient, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
    return types.ApplyWorkspaceEditResult(applied=True)


def _register_capability(client: MnemonClient, params: types.RegistrationParams) -> None:
    client.registrations.append(params)
    return None


def _show_message_request(client: MnemonClient, params: types.ShowMessageRequestParams) -> Any:
    """Record the request and pick its first action, as a person clicking the first button would."""
    client.message_requests.append(params)
    client.arrived()
    return params.actions[0] if params.actions else None


def _lens_refresh(client: MnemonClient, _params: Any) -> None:
    client.lens_refreshes += 1
    client.arrived()
    return None


def make_client() -> MnemonClient:
    """A test client answering everything the server may ask (lsp-anchors 2.4, pitfall 1)."""
    client = MnemonClient()
    for method, handler in DEFAULT_CLIENT_FEATURES.items():  # all synchronous (pytest-lsp 1.0)
        if method != types.WORKSPACE_CONFIGURATION:
            client.feature(method)(_announcing(handler))
    client.feature(types.WORKSPACE_CONFIGURATION)(_configuration)
    client.feature(types.WORKSPACE_APPLY_EDIT)(_apply_edit)
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(_register_capability)
    client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(_show_message_request)
    client.feature(types.WORKSPACE_CODE_LENS_REFRESH)(_lens_refresh)
    for method in NOTIFICATIONS:
        client.feature(method)(_record(method))
    return client


def assert_no_traceback(error: JsonRpcException) -> None:
    data = error.data
    assert "Traceback" not in error.message
    if isinstance(data, dict):
        assert "traceback" not in data
        assert "Traceback" not in json.dumps(data)
    else:
        assert data is None or "Traceback" not in str(data)


class Launcher:
    """Starts mnemon-ls servers for one test and stops them all at teardown."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.data_dir = tmp_path / "data"
        self.home = tmp_path / "home"
        self.home.mkdir(exist_ok=True)
        self.clients: list[MnemonClient] = []

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["MNEMON_DATA_DIR"] = str(self.data_dir)
        env["HOME"] = str(self.home)
        env.pop("GIT_DIR", None)
        env.pop("GIT_WORK_TREE", None)
        return env

    async def start(
        self,
        caps: str = "visual-studio-code",
        folders: list[Path] | tuple[Path, ...] = (),
        init: dict[str, Any] | None = None,
        *,
        configuration: dict[str, dict[str, Any]] | None = None,
        hold_configuration: bool = False,
        ready: bool = True,
        root_uri: str | None = None,
    ) -> MnemonClient:
        """Start a server and initialize it like the editor ``caps`` would.

        ``configuration`` maps a scope URI (``""`` = global) to the client's ``mnemon`` section;
        ``hold_configuration`` keeps the answer to ``workspace/configuration`` back until
        ``client.config_gate`` is set; ``ready`` waits for :meth:`MnemonClient.ready`; ``root_uri``
        sends ``rootUri`` (and no ``workspaceFolders`` when ``folders`` is empty).
        """
        client = make_client()
        client.spec = caps
        for scope, section in (configuration or {}).items():
            client.set_configuration(section, section="mnemon", scope_uri=scope or None)
        if hold_configuration:
            client.config_gate = asyncio.Event()
        await client.start_io(*server_command(), env=self.env())
        self.clients.append(client)
        params = types.InitializeParams(
            capabilities=client_capabilities(caps),
            workspace_folders=[folder(f) for f in folders] if folders or root_uri is None else None,
            root_uri=root_uri,
            initialization_options=init,
        )
        client.init_result = await asyncio.wait_for(client.initialize_session(params), REQUEST_TIMEOUT)
        if ready:
            await client.ready(pulls_configuration=bool(folders or root_uri))
        return client

    async def close(self) -> None:
        for client in reversed(self.clients):
            if client.config_gate is not None:
                client.config_gate.set()
            try:
                if client.exited:
                    raise RuntimeError("session already ended by the test")
                await asyncio.wait_for(client.shutdown_session(), 5)
            except Exception:  # a dead, hung or already exiting server: end the process we started
                server = getattr(client, "_server", None)
                if server is not None and server.returncode is None:
                    server.kill()
            try:
                await asyncio.wait_for(client.stop(), 5)
            except Exception:
                pass


@pytest.fixture
async def lsp(tmp_path: Path):
    launcher = Launcher(tmp_path)
    yield launcher
    await launcher.close()


@pytest.fixture
def repo_dir(tmp_path: Path) -> Path:
    return tmp_path / "repo"


@pytest.fixture
def repo(repo_dir: Path) -> pygit2.Repository:
    """A real git repository on ``main`` with one commit."""
    return make_repo(repo_dir, "main")


@pytest.fixture(params=CLIENTS)
async def client(request, lsp: Launcher, repo: pygit2.Repository, repo_dir: Path) -> MnemonClient:
    """A server for ``repo`` (storageScope workspace, runtimeUserScope storage), initialized with one
    editor's capabilities."""
    return await lsp.start(request.param, [repo_dir], {"mnemon": {"storageScope": "workspace",
                                                                  "runtimeUserScope": "storage"}})


# ---------------------------------------------------------------------------------- disk helpers


def memory_file(root: Path, name: str = "MEMORY.md") -> Path:
    return root / "runtime" / name


def read_entries(root: Path) -> list[dict[str, Any]]:
    return json.loads((root / "runtime" / "memories.json").read_text(encoding="utf-8"))["entries"]


def revision_of_file(root: Path) -> str:
    """The revision as the spec defines it: sha256 of the compact JSON of memories.json (key order kept)."""
    document = json.loads((root / "runtime" / "memories.json").read_text(encoding="utf-8"))
    compact = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(compact.encode("utf-8")).hexdigest()


def projection(contents: list[str]) -> bytes:
    """USER.md / MEMORY.md bytes for ``contents``."""
    return ("\n\u00a7\n".join(contents) + "\n").encode("utf-8") if contents else b""


def tree_state(base: Path) -> dict[str, tuple[int, int, int, bytes]]:
    """Every file and directory under ``base``: relative path -> (mtime_ns, size, inode, bytes).

    Directories only record that they exist, and the lock files (``runtime/.memories.lock`` and its
    ``.publish`` staging files) are left out: taking the Runtime lock creates and deletes them, which
    changes no data (a rejected request or a no-op repair check may take the lock).
    """
    state: dict[str, tuple[int, int, int, bytes]] = {}
    if not base.exists():
        return state
    for path in sorted([base, *base.rglob("*")]):
        if path.name.startswith(".memories.lock"):
            continue  # the lock marker and its staging files come and go with every lock, never data
        try:
            info = path.lstat()
            if path.is_dir():
                state[str(path.relative_to(base))] = (0, 0, info.st_ino, b"")
            else:
                state[str(path.relative_to(base))] = (info.st_mtime_ns, info.st_size, info.st_ino, path.read_bytes())
        except FileNotFoundError:  # removed while we looked: absent
            continue
    return state


async def watch_for_writes(base: Path, seconds: float, interval: float = 0.05) -> list[str]:
    """Poll ``os.stat`` of everything under ``base`` for ``seconds``; the paths that changed (bounded window)."""
    before = tree_state(base)
    changed: set[str] = set()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        await asyncio.sleep(interval)
        now = tree_state(base)
        changed |= {k for k in set(before) | set(now) if before.get(k) != now.get(k)}
    return sorted(changed)


async def wait_for_bytes(path: Path, expected: bytes, timeout: float = NOTIFY_TIMEOUT) -> None:
    """Poll a file until it holds ``expected`` (``timeout`` is a safety bound); for checks that must not
    rely on notifications."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if path.read_bytes() == expected:
                return
        except FileNotFoundError:
            pass
        if time.monotonic() > deadline:
            current = path.read_bytes() if path.exists() else None
            raise AssertionError(f"{path} never became {expected!r}; it is {current!r}")
        await asyncio.sleep(0.02)



def seed_store(root: Path, entries: list[tuple[str, str] | tuple[str, str, list[str]]]) -> None:
    """Commit entries ``(target, content[, branches])`` with the real Runtime store, before any server runs."""
    from mnemon_ls.runtime import ops
    from mnemon_ls.runtime.store import RuntimeStore

    store = RuntimeStore(root)
    for item in entries:
        target, content = item[0], item[1]
        branches = item[2] if len(item) > 2 else None
        store.mutate(ops.validate_request("add", target, content, None, None, branches))



def render_entries(entries: list[tuple]) -> str:
    """The body of one file in the wake: ``[importance=...; created=0d; updated=0d]`` + content, joined by §;
    an entry ``(importance, content, branches)`` is kept to those branches (``; branches=a,b``)."""
    def one(entry: tuple) -> str:
        imp, content, *rest = entry
        scope = f"; branches={','.join(rest[0])}" if rest and rest[0] else ""
        return f"[importance={imp}; created=0d; updated=0d{scope}]\n{content}"

    return "\n\u00a7\n".join(one(e) for e in entries)


def expected_wake(revision: str, branch_line: str, user: list[tuple[str, str]], memory: list[tuple[str, str]],
                  used: tuple[int, int], limits: tuple[int, int] = (4096, 10240),
                  user_count: int | None = None, memory_count: int | None = None,
                  extra: list[str] | None = None) -> str:
    """The exact wake text for entries created during the test (ages 0d); see runtime/snapshot.py's layout.
    ``revision`` is the store revision; the ``Revision:`` line is the text's view revision."""
    lines = ["MNEMON RUNTIME MEMORY SNAPSHOT", "Revision: " + "0" * 64, f"Store revision: {revision}", branch_line,
             EXPLANATION, WAKE_GUIDANCE_LINE, *(extra or [])]
    for name, title, entries, count, u, limit in (
        ("USER.md", "user profile", user, user_count, used[0], limits[0]),
        ("MEMORY.md", "working reference", memory, memory_count, used[1], limits[1]),
    ):
        lines += ["", f"Contents of {name} ({title}; entries: {len(entries) if count is None else count}; "
                      f"UTF-8 bytes: {u}/{limit})",
                  f'<runtime-memory-file name="{name}">', render_entries(entries) or "(empty)", "</runtime-memory-file>"]
    return stamp_view_revision("\n".join(lines))
