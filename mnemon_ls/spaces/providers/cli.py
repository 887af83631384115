"""The ``mnemon-cli`` provider: the same operations through an installed ``mnemon`` binary.

Invocation (shared/reference/dsh-mnemon.md 6.4, mnemon-cli.md 10 and 15):

- Binary: ``cli_path`` when configured (used even if missing: then a clear error), else ``$MNEMON_CLI_PATH``
  when executable, else ``mnemon`` on ``PATH``, else ``~/.local/bin``, ``/opt/homebrew/bin``,
  ``/usr/local/bin``, ``/usr/bin``. Never through a shell.
- Every call gets ``--data-dir <root> --store <space-id>`` first (``--version`` gets none); the child
  environment drops inherited ``MNEMON_DATA_DIR``/``MNEMON_STORE`` and, when ``embed_endpoint`` is given,
  sets ``MNEMON_EMBED_ENDPOINT`` (e.g. ``http://127.0.0.1:1`` for fast, embedding-free runs).
- Calls are serialized per storage root (one lock per root in this process), each bounded by ``timeout``
  seconds (default 10). Output is capped at 2 MiB (128 MiB for whole-store dumps).
- Errors: binary missing or timeout -> :class:`~mnemon_ls.spaces.errors.ProviderUnavailable`; non-zero
  exit -> :class:`~mnemon_ls.spaces.errors.ProviderFailed` ``mnemon <command> exited <code>: <stderr or
  stdout or 'no output'>`` (a "not found" answer to forget/link/related becomes
  :class:`~mnemon_ls.errors.InvalidInput` naming the id); output that is not the documented JSON ->
  ``ProviderFailed`` "returned invalid JSON".

Operations: ``remember`` never lets the CLI replace anything: it first looks for byte-identical active
content (``recall <content> --basic``) and returns ``action: "skipped"`` with ``replaced_id`` = that id,
else runs ``remember --cat --imp --source [--tags] [--entities] --no-diff -- <content>`` (tags or entities
holding a comma go through ``import`` of a one-item draft instead, since flags cannot carry them);
``search`` maps ``smart`` -> ``recall``, ``basic`` -> ``recall --basic``, ``keyword`` -> ``search``;
``related``/``link``/``forget``/``status`` map 1:1; merge uses ``--readonly recall "" --basic --limit 100000``
(retried without ``--readonly``) and ``import <draft.json>`` with a 0600 temp draft deleted afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any, Sequence

from ...errors import InvalidInput
from ...settings import expand_own_home, own_home_path
from ..errors import ProviderFailed, ProviderUnavailable
from ..model import Item, normalize_row
from .base import Capabilities, ExportEdge, ExportItem, KeepFn, SearchOutcome, sparse_hint

PROVIDER_ID = "mnemon-cli"
DEFAULT_TIMEOUT = 10.0
OUTPUT_CAP = 2 * 1024 * 1024
DUMP_CAP = 128 * 1024 * 1024
FALLBACK_DIRS = ("~/.local/bin", "/opt/homebrew/bin", "/usr/local/bin", "/usr/bin")
CLI_CAPABILITIES = Capabilities(browse=True, graph=True, merge=True)

_ROOT_LOCKS: dict[str, threading.Lock] = {}
_ROOT_LOCKS_GUARD = threading.Lock()


def _root_lock(root: Path) -> threading.Lock:
    key = str(Path(root).resolve())
    with _ROOT_LOCKS_GUARD:
        return _ROOT_LOCKS.setdefault(key, threading.Lock())


def find_binary(cli_path: str | None = None, env: dict[str, str] | None = None) -> str:
    """The ``mnemon`` executable to run (module doc order); :class:`ProviderUnavailable` when none."""
    env = dict(os.environ if env is None else env)
    if cli_path:
        path = own_home_path(cli_path, "cliPath")  # ~name (another user's home) is refused
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        raise ProviderUnavailable(f"mnemon CLI not found at the configured path {path}",
                                  provider=PROVIDER_ID, reason="missing binary", path=path)
    configured = env.get("MNEMON_CLI_PATH", "").strip()
    if configured and os.path.isfile(configured) and os.access(configured, os.X_OK):
        return configured
    found = shutil.which("mnemon", path=env.get("PATH"))
    if found:
        return found
    for directory in FALLBACK_DIRS:
        candidate = os.path.join(expand_own_home(directory), "mnemon")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise ProviderUnavailable("mnemon CLI not found (set the CLI path, $MNEMON_CLI_PATH, or install mnemon on PATH)",
                              provider=PROVIDER_ID, reason="missing binary")


class CliRunner:
    """Runs ``mnemon`` for one storage root (see module doc). ``env`` is the base environment (default:
    this process's); ``timeout`` seconds per call."""

    def __init__(self, root: Path, *, cli_path: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 env: dict[str, str] | None = None, embed_endpoint: str | None = None) -> None:
        self.root = Path(root)
        self.cli_path = cli_path
        self.timeout = timeout
        self._env_override = None if env is None else dict(env)
        self.embed_endpoint = embed_endpoint
        self.lock = _root_lock(self.root)

    @property
    def base_env(self) -> dict[str, str]:
        """The environment children start from (this process's, read at each call, unless given)."""
        return dict(os.environ) if self._env_override is None else dict(self._env_override)

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in self.base_env.items() if k not in ("MNEMON_DATA_DIR", "MNEMON_STORE")}
        if self.embed_endpoint:
            env["MNEMON_EMBED_ENDPOINT"] = self.embed_endpoint
        return env

    def run(self, args: Sequence[str], *, store: str | None = None, parse_json: bool = True,
            global_flags: bool = True, cap: int = OUTPUT_CAP, readonly: bool = False,
            timeout: float | None = None) -> Any:
        """Run one command; returns parsed JSON (or stripped text with ``parse_json=False``)."""
        binary = find_binary(self.cli_path, self.base_env)
        argv = [binary]
        if global_flags:
            argv += ["--data-dir", str(self.root)]
            if store:
                argv += ["--store", store]
            if readonly:
                argv.append("--readonly")
        argv += list(args)
        command = " ".join(args[:1]) if args else "mnemon"
        limit = timeout or self.timeout
        with self.lock:
            try:
                proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=limit,
                                      env=self._env(), check=False)
            except subprocess.TimeoutExpired:
                raise ProviderUnavailable(f"mnemon {command} timed out after {limit:g} s", provider=PROVIDER_ID,
                                          reason="timeout", timeoutSeconds=limit) from None
            except OSError as exc:
                raise ProviderUnavailable(f"mnemon could not be started: {exc.strerror or exc}",
                                          provider=PROVIDER_ID, reason="cannot start") from None
        stdout = proc.stdout[:cap].decode("utf-8", "replace")
        stderr = proc.stderr[:4096].decode("utf-8", "replace").strip()
        if proc.returncode != 0:
            output = (stderr or stdout.strip() or "no output").splitlines()
            text = " ".join(line.strip() for line in output[-3:] if line.strip())[:500]
            raise ProviderFailed(f"mnemon {command} exited {proc.returncode}: {text}", provider=PROVIDER_ID,
                                 exitCode=proc.returncode, output=text)
        if len(proc.stdout) > cap:
            raise ProviderFailed(f"mnemon {command} printed more than {cap} bytes", provider=PROVIDER_ID,
                                 reason="output too large")
        if not parse_json:
            return stdout.strip()
        try:
            return json.loads(stdout)
        except ValueError:
            raise ProviderFailed(f"mnemon {command} returned invalid JSON", provider=PROVIDER_ID,
                                 reason="invalid JSON") from None

    def version(self) -> str:
        """``mnemon --version`` without the ``mnemon version`` prefix."""
        text = self.run(["--version"], parse_json=False, global_flags=False)
        return text.removeprefix("mnemon version ").strip()

    # ------------------------------------------------------------------ stores

    def create_store(self, space_id: str) -> None:
        """``--store <id> store create <id>``."""
        self.run(["store", "create", space_id], store=space_id, parse_json=False)

    def set_default_store(self, space_id: str) -> None:
        """``--store <id> store set <id>`` (writes ``<root>/active``)."""
        self.run(["store", "set", space_id], store=space_id, parse_json=False)


def _rows(data: Any) -> tuple[list[Any], str | None]:
    if isinstance(data, list):
        return data, None
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        hint = data.get("hint") if isinstance(data.get("hint"), str) else None
        return data["results"], hint
    if data is None:
        return [], None
    raise ProviderFailed("mnemon returned JSON of an unexpected shape", provider=PROVIDER_ID, reason="shape")


def _not_found(exc: ProviderFailed, field_name: str, item_id: str) -> Exception:
    text = str(exc.data.get("output", "")).lower()
    if "not found" in text or "no such" in text or "already deleted" in text or "not active" in text:
        return InvalidInput(field_name, "no active item with this id in the space (missing or forgotten)", id=item_id)
    return exc


class CliProvider:
    """One space served through ``mnemon`` (module doc)."""

    provider_id = PROVIDER_ID
    capabilities = CLI_CAPABILITIES

    def __init__(self, runner: CliRunner, space_id: str) -> None:
        self.runner = runner
        self.space_id = space_id

    def _run(self, args: Sequence[str], **kw: Any) -> Any:
        return self.runner.run(args, store=self.space_id, **kw)

    # ------------------------------------------------------------------ writes

    def _existing(self, content: str) -> str | None:
        rows, _ = _rows(self._run(["recall", content, "--basic", "--limit", "50"]))
        for row in rows:
            item = normalize_row(row)
            if item is not None and item.content == content:
                return item.id
        return None

    def remember(self, content: str, *, category: str = "general", importance: int = 3,
                 tags: Sequence[str] = (), entities: Sequence[str] = (), source: str = "user") -> dict[str, Any]:
        """See module doc; returns the CLI's remember JSON (``replaced_id`` names the existing item when
        ``action`` is ``skipped``)."""
        existing = self._existing(content)
        if existing is not None:
            return {"id": existing, "content": content, "action": "skipped", "diff_suggestion": "DUPLICATE",
                    "replaced_id": existing}
        if any("," in t for t in tags) or any("," in e for e in entities):
            result = self.import_items([ExportItem("draft-0", content, category, importance, list(tags),
                                                   list(entities), source, "")])
            row = next((r for r in result.get("results", []) if isinstance(r, dict)), {})
            return {"id": row.get("id"), "content": content, "category": category, "importance": importance,
                    "tags": list(tags), "entities": list(entities), "action": row.get("action") or "failed",
                    "error": row.get("error")}
        args = ["remember", "--cat", category, "--imp", str(importance), "--source", source]
        if tags:
            args += ["--tags", ",".join(tags)]
        if entities:
            args += ["--entities", ",".join(entities)]
        args += ["--no-diff", "--", content]
        data = self._run(args)
        if not isinstance(data, dict):
            raise ProviderFailed("mnemon remember returned JSON of an unexpected shape", provider=PROVIDER_ID,
                                 reason="shape")
        return data

    def link(self, source_id: str, target_id: str, *, edge_type: str = "semantic", weight: float = 0.5,
             metadata: dict[str, str] | None = None) -> dict[str, Any]:
        """``link <src> <tgt> --type <t> --weight <w> [--meta <json>]``."""
        args = ["link", source_id, target_id, "--type", edge_type, "--weight", f"{weight:g}"]
        if metadata:
            args += ["--meta", json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))]
        try:
            return self._run(args)
        except ProviderFailed as exc:
            raise _not_found(exc, "sourceId", source_id) from None

    def forget(self, item_id: str) -> dict[str, Any]:
        """``forget <id>``."""
        try:
            return self._run(["forget", item_id])
        except ProviderFailed as exc:
            raise _not_found(exc, "id", item_id) from None

    # ------------------------------------------------------------------ reads

    def search(self, query: str, *, limit: int, mode: str = "smart", category: str | None = None,
               source: str | None = None, intent: str | None = None, keep: KeepFn | None = None) -> SearchOutcome:
        """``recall``/``search`` (module doc); ``keep`` filters after the CLI answered, so twice the limit is
        asked for (at most 100)."""
        ask = min(100, limit * 2) if keep is not None else limit
        if mode == "keyword":
            args = ["search", query, "--limit", str(ask)]
        else:
            args = ["recall", query, "--limit", str(ask)]
            if mode == "basic":
                args.append("--basic")
            if category:
                args += ["--cat", category]
            if source:
                args += ["--source", source]
            if intent and mode != "basic":
                args += ["--intent", intent]
        rows, hint = _rows(self._run(args))
        items: list[Item] = []
        fetched = dropped = 0
        for row in rows:
            item = normalize_row(row)
            if item is None:
                continue
            fetched += 1
            if keep is not None and not keep(item.tags):
                dropped += 1
                continue
            if len(items) < limit:
                items.append(item)
        return SearchOutcome(items, hint if hint is not None else sparse_hint(len(items), limit), fetched=fetched,
                             dropped=dropped)

    def related(self, item_id: str, *, depth: int = 2, edge_type: str | None = None, limit: int = 20) -> list[Item]:
        """``related <id> --depth <d> [--edge <type>]`` (first ``limit`` rows)."""
        args = ["related", item_id, "--depth", str(depth)]
        if edge_type:
            args += ["--edge", edge_type]
        try:
            rows, _ = _rows(self._run(args))
        except ProviderFailed as exc:
            raise _not_found(exc, "id", item_id) from None
        out = []
        for row in rows:
            item = normalize_row(row)
            if item is not None:
                out.append(item)
            if len(out) >= limit:
                break
        return out

    def status(self) -> dict[str, Any]:
        """``status`` with missing numbers as 0."""
        data = self._run(["status"])
        if not isinstance(data, dict):
            raise ProviderFailed("mnemon status returned JSON of an unexpected shape", provider=PROVIDER_ID,
                                 reason="shape")
        for key in ("total_insights", "deleted_insights", "edge_count", "oplog_count", "db_size_bytes"):
            value = data.get(key)
            data[key] = value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
        data.setdefault("by_category", {})
        data.setdefault("top_entities", [])
        return data

    def count(self) -> int:
        """Active items (from ``status``)."""
        return int(self.status()["total_insights"])

    # ------------------------------------------------------------------ merge pair

    def export_items(self) -> tuple[list[ExportItem], list[ExportEdge]]:
        """Every active item via a whole-store basic recall (edges are not exported by the CLI)."""
        args = ["recall", "", "--basic", "--limit", "100000"]
        try:
            data = self._run(args, readonly=True, cap=DUMP_CAP)
        except ProviderFailed:
            data = self._run(args, cap=DUMP_CAP)
        rows, _ = _rows(data)
        items = []
        for row in rows:
            item = normalize_row(row)
            if item is None:
                continue
            items.append(ExportItem(item.id, item.content, item.category or "general",
                                    item.importance if item.importance and 1 <= item.importance <= 5 else 3,
                                    item.tags, item.entities, item.source or "user", item.created_at or ""))
        return items, []

    def import_items(self, items: Sequence[ExportItem], edges: Sequence[ExportEdge] = ()) -> dict[str, Any]:
        """``import <draft.json>`` of a 0600 temp draft (deleted afterwards); returns the CLI's import JSON."""
        draft = {"schema_version": "1", "source": "dsh-mnemon-merge", "insights": []}
        for item in items:
            entry: dict[str, Any] = {"content": item.content, "category": item.category,
                                     "importance": item.importance, "tags": list(item.tags),
                                     "entities": list(item.entities), "source": item.source}
            if item.created_at:
                entry["created_at"] = item.created_at
            draft["insights"].append(entry)
        positions = {item.id: index for index, item in enumerate(items)}
        links = [{"source_index": positions[e.source_id], "target_index": positions[e.target_id],
                  "edge_type": e.edge_type, "weight": e.weight or 0.5, "reason": e.metadata.get("reason", "merged")}
                 for e in edges if e.source_id in positions and e.target_id in positions and e.edge_type != "temporal"]
        if links:
            draft["edges"] = links
        fd, name = tempfile.mkstemp(prefix="mnemon-ls-draft-", suffix=".json")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(draft, handle, ensure_ascii=False)
            data = self._run(["import", name], timeout=max(self.runner.timeout, 60.0))
        finally:
            try:
                os.unlink(name)
            except FileNotFoundError:
                pass
        if not isinstance(data, dict):
            raise ProviderFailed("mnemon import returned JSON of an unexpected shape", provider=PROVIDER_ID,
                                 reason="shape")
        return data

    def close(self) -> None:
        """Nothing to close (one process per call)."""
