"""Hindsight behind mnemon-ls spaces (package doc for the mapping and the fields).

The server is reached over its REST API (``/v1/default/banks/...``, Hindsight 1.1) with the standard
library's ``urllib``: JSON in, JSON out, one request per call; ``timeoutSeconds`` bounds the connect and each
wait on the answer; redirects are not followed; an answer is read up to 64 MiB (all of it in
:class:`mnemon_ls.spaces.providers.rest.JsonClient`). (The official
``hindsight-client`` is an aiohttp client whose synchronous wrapper covers retain and recall but not listing
banks or deleting a document; its dependencies would add an event loop per call for five requests.)

Requests used: ``GET /v1/version`` (open: the server answers and is a Hindsight), ``GET /v1/default/banks``
(discovery), ``GET /v1/default/banks/{bank}/config`` and ``PUT /v1/default/banks/{bank}`` (a new space's bank:
made only when it does not exist),
``POST .../memories`` (retain, synchronous: ``async`` false), ``POST .../memories/recall``, ``GET
.../memories/list`` (counting and finding an item's units), ``GET .../stats``, ``DELETE
.../documents/{id}`` (forget).

Errors: :class:`~mnemon_ls.errors.ProviderUnavailable` (``engine-failed``: the server cannot be reached, does
not answer within ``timeoutSeconds``, refuses the key (``field`` ``services.apiKey``: HTTP 401/403) or answers
another error; the message names the endpoint and the HTTP status, never the key);
:class:`~mnemon_ls.errors.InvalidInput` naming the field for a missing ``endpoint``, a bad ``bankId`` or
``budget``, or an id that is not an item of the space.
"""

from __future__ import annotations

import hashlib
import re
import time
import urllib.parse
import uuid
from datetime import datetime, timezone
from typing import Any

from mnemon_ls.errors import InvalidInput, ProviderUnavailable
from mnemon_ls.spaces.model import Item, parse_time, rfc3339
from mnemon_ls.spaces.providers.base import (filtered, Health, KeepFn, Namespace, NoGraphNoMerge, SearchOutcome,
                                              sparse_hint)
from mnemon_ls.spaces.providers.carried_ids import carried, carry, HASHED
from mnemon_ls.spaces.providers.rest import as_dict as _dict, endpoint_of, JsonClient, key_of

DEFAULT_TIMEOUT_SECONDS = 30.0
BUDGETS = ("low", "mid", "high")
#: A bank id mnemon-ls accepts: what Hindsight's URL paths carry without escaping surprises.
BANK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_SLUG = re.compile(r"[^a-z0-9_.-]+")
#: A word character (Hindsight answers HTTP 422 to a query without one).
_WORDY = re.compile(r"[^\W_]")
#: Units read per page when counting or listing (Hindsight's list limit).
PAGE = 100
#: The prefix of the document ids mnemon-ls writes (``mnemon-<32 hex>``).
DOCUMENT_PREFIX = "mnemon-"
#: Item ids of documents Hindsight's own clients named (``notes/alice.md``): carried, or hashed and looked up.
item_id = carry
document_of = carried
_item_id = item_id  # (HindsightSpace.forget's parameter has the same name)


#: A recalled unit this long (characters) may be one chunk of a longer document (Hindsight cuts a retained text
#: into chunks of about 3,000 characters): its document's whole text is read.
CHUNK_HINT_CHARS = 2000


def _partial(row: dict[str, Any]) -> bool:
    """Whether a recalled unit may be part of a longer document: a chunk after the first (``chunk_id`` ending
    ``_<n>``, n > 0) or a text of :data:`CHUNK_HINT_CHARS` or more."""
    chunk = str(row.get("chunk_id") or "")
    tail = chunk.rsplit("_", 1)[-1] if "_" in chunk else ""
    return (tail.isdigit() and int(tail) > 0) or len(str(row.get("text") or "")) >= CHUNK_HINT_CHARS


class HindsightEngine:
    """One Hindsight server (module doc): ``endpoint`` (its base URL, no trailing slash), ``key`` (bearer
    token or ``None``), ``timeout`` (seconds: for connecting and for each wait on an answer), ``extracting`` (the server runs a language model),
    ``version`` (what ``/v1/version`` answered)."""

    def __init__(self, endpoint: str, key: str | None, timeout: float, extracting: bool, version: str) -> None:
        self.endpoint = endpoint
        self.key = key
        self.timeout = timeout
        self.extracting = extracting
        self.version = version
        self.http = JsonClient("hindsight", endpoint, key, timeout)

    @classmethod
    def open(cls, service: dict[str, Any]) -> "HindsightEngine":
        """Open from service fields: checks ``endpoint`` and asks the server its version (module doc for the
        errors). Writes nothing."""
        from . import extracting

        endpoint = endpoint_of(service, "http://127.0.0.1:8888")
        key = key_of(service)
        raw = service.get("timeoutSeconds")
        timeout = DEFAULT_TIMEOUT_SECONDS if raw in (None, "") else float(raw)
        engine = cls(endpoint, key, timeout, extracting(service), "")
        version = _dict(engine.request("GET", "/v1/version")).get("api_version")
        if not isinstance(version, str):
            raise ProviderUnavailable(f"provider hindsight: {endpoint} answered /v1/version without an api_version: "
                                      "is it a Hindsight server?", provider="hindsight", reason="engine-failed",
                                      location=endpoint)
        engine.version = version
        return engine

    # ------------------------------------------------------------------ HTTP

    def request(self, method: str, path: str, body: Any = None, *, query: dict[str, Any] | None = None,
                missing: bool = False) -> Any:
        """The JSON answer of ``method path`` (:meth:`mnemon_ls.spaces.providers.rest.JsonClient.request`:
        ``missing`` answers ``None`` to an HTTP 404). Raises :class:`ProviderUnavailable` (module doc)."""
        return self.http.request(method, path, body, query=query, missing=missing)

    # ------------------------------------------------------------------ protocol

    def _banks(self) -> list[dict[str, Any]]:
        banks: list[dict[str, Any]] = []
        offset = 0
        while True:
            page = _dict(self.request("GET", "/v1/default/banks", query={"limit": PAGE, "offset": offset}))
            rows = [b for b in page.get("banks") or [] if isinstance(b, dict) and isinstance(b.get("bank_id"), str)]
            banks.extend(rows)
            total = page.get("total")
            offset += len(rows)
            if not rows or not isinstance(total, int) or offset >= total:
                return banks

    def health(self) -> Health:
        """The server's own health (database connected) and the memory units of every bank."""
        started = time.perf_counter()
        state = _dict(self.request("GET", "/health"))
        banks = self._banks()
        units = sum(b.get("fact_count") or 0 for b in banks if isinstance(b.get("fact_count"), int))
        ok = state.get("status") == "healthy"
        return Health(ok, f"Hindsight {self.version} (hindsight-api)", self.endpoint, units,
                      (time.perf_counter() - started) * 1000,
                      f"{units} memory units in {len(banks)} bank(s)" + (
                          "" if ok else f"; its /health did not answer healthy (status {state.get('status')!r})"),
                      {"banks": len(banks), "database": state.get("database"), "extracting": self.extracting})

    def discover(self) -> list[Namespace]:
        """Every bank of the server (its name and mission; its memory units as ``items``)."""
        out = []
        for bank in self._banks():
            if not BANK_ID.match(bank["bank_id"]):
                continue  # an id this package would not put in a URL path: left alone
            count = bank.get("fact_count")
            out.append(Namespace(bank["bank_id"], bank.get("name") or bank["bank_id"],
                                 bank.get("mission") or f"Hindsight bank {bank['bank_id']}.",
                                 {"bankId": bank["bank_id"]}, count if isinstance(count, int) else None))
        return out

    def create_namespace(self, name: str, description: str) -> Namespace:
        """A bank named after ``name`` (lower-case ASCII, runs of other characters to ``_``; a name with no ASCII
        letter or digit: ``space_`` + 12 hex of its SHA-256), made with ``name`` and ``description`` as its
        mission. A bank the server already has is refused (``InvalidInput`` naming ``name``): a new space never takes
        over another root's bank unseen; discovery is how one is shared."""
        bank = _SLUG.sub("_", name.strip().lower()).strip("_.-")[:64]
        if not bank or not BANK_ID.match(bank):  # no ASCII letter or digit ("团队"): named by the name's hash
            bank = "space_" + hashlib.sha256(name.strip().encode("utf-8")).hexdigest()[:12]
        if self.request("GET", f"/v1/default/banks/{bank}/config", missing=True) is not None:
            raise InvalidInput("name", f"names the bank {bank}, which the Hindsight server at {self.endpoint} already "
                                       "has (another root's, or one its own clients made): `mnemon-ls provider "
                                       "discover hindsight` adds it as a space; choose another name for a new bank")
        self.request("PUT", f"/v1/default/banks/{bank}", {"name": name, "mission": description})
        return Namespace(bank, name, description, {"bankId": bank})

    def space(self, connection: dict[str, Any], *, space_id: str) -> "HindsightSpace":
        """The space of one bank (``bankId``; ``budget`` one of low/mid/high, default mid)."""
        bank = connection.get("bankId")
        if not isinstance(bank, str) or not BANK_ID.match(bank):
            raise InvalidInput("connection.bankId", "must be a Hindsight bank id: 1..128 letters, digits, '_', '.' "
                                                    "or '-', starting with a letter or digit", spaceId=space_id)
        budget = connection.get("budget") or "mid"
        if budget not in BUDGETS:
            raise InvalidInput("connection.budget", "must be low, mid or high", spaceId=space_id)
        return HindsightSpace(self, bank, str(budget), space_id)

    def close(self) -> None:
        """Nothing held between requests."""


def _time(value: Any) -> str | None:
    moment = parse_time(value) if isinstance(value, str) else None
    return rfc3339(moment) if moment else None


def _importance(value: Any) -> int | None:
    try:
        number = int(str(value))
    except (TypeError, ValueError):
        return None
    return number if 1 <= number <= 5 else None


class HindsightSpace(NoGraphNoMerge):
    """The SpaceProvider of one Hindsight bank (protocol: mnemon_ls.spaces.providers.base.SpaceProvider)."""

    provider_id = "hindsight"
    engine_label = "Hindsight"  # in the refusals of NoGraphNoMerge

    def __init__(self, engine: HindsightEngine, bank: str, budget: str, space_id: str) -> None:
        from . import PLUGIN

        self.capabilities = PLUGIN.capabilities_for({"extracting": engine.extracting})
        self.engine = engine
        self.bank = bank
        self.budget = budget
        self.space_id = space_id
        self.base = f"/v1/default/banks/{bank}"

    def _on_bank(self, method: str, path: str, body: Any) -> dict[str, Any]:
        """The answer of a request on this bank; a bank the server does not have (deleted outside mnemon-ls) raises
        :class:`ProviderUnavailable` with reason ``namespace-missing``, saying so, not that the server is down."""
        answer = self.engine.request(method, path, body, missing=True)
        if answer is None:
            raise ProviderUnavailable(
                f"provider hindsight: the server at {self.engine.endpoint} has no bank {self.bank} (deleted outside "
                f"mnemon-ls?): `mnemon-ls space deactivate {self.space_id}` stops reading it, `mnemon-ls provider "
                "discover hindsight` lists the banks there", provider="hindsight", reason="namespace-missing",
                location=self.engine.endpoint, spaceId=self.space_id)
        return _dict(answer)

    def _item(self, row: dict[str, Any]) -> Item:
        """An item of one memory unit (recall or list row): the document's id, the unit's text."""
        meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
        scores = row.get("scores") if isinstance(row.get("scores"), dict) else {}
        cosine = scores.get("semantic")
        keyword = scores.get("keyword")
        score = float(cosine) if isinstance(cosine, (int, float)) and not isinstance(cosine, bool) else None
        words = isinstance(keyword, (int, float)) and not isinstance(keyword, bool) and keyword > 0
        return Item(item_id(str(row.get("document_id") or row.get("id"))), str(row.get("text") or ""),
                    category=str(meta.get("category") or "general"), importance=_importance(meta.get("importance")),
                    tags=[str(t) for t in row.get("tags") or [] if isinstance(t, str)], entities=[],
                    source=meta.get("source") if isinstance(meta.get("source"), str) else None,
                    created_at=_time(row.get("mentioned_at") or row.get("date")), score=score,
                    matched_via="hindsight-keyword+vector" if words else "hindsight-vector",
                    similarity={"cosine": round(score, 4), "z": None} if score is not None else None,
                    updated_at=_time(row.get("updated_at")))

    def remember(self, content: str, *, category: str, importance: int, tags: list[str], entities: list[str],
                 source: str) -> dict[str, Any]:
        """``retain`` of one document (id ``mnemon-<32 hex>``) holding ``content``, synchronously; ``category``,
        ``importance`` and ``source`` go in its metadata, ``tags`` as Hindsight tags. With ``extracting`` the
        server's language model stores the facts it finds instead of the text: ``extracted`` lists them
        (``[{id, content}]``, the document's memory units)."""
        text = content.strip()
        document = DOCUMENT_PREFIX + uuid.uuid4().hex
        metadata = {"category": category, "importance": str(importance), "source": source}
        now = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")
        answer = self._on_bank("POST", f"{self.base}/memories", {
            "items": [{"content": text, "document_id": document, "metadata": metadata, "tags": list(tags),
                       "timestamp": now}], "async": False})
        if answer.get("success") is not True:
            raise ProviderUnavailable(f"provider hindsight: the server at {self.engine.endpoint} did not retain the "
                                      f"memory (answered success={answer.get('success')!r})", provider="hindsight",
                                      reason="engine-failed", location=self.engine.endpoint)
        out = {"id": document, "action": "added", "content": text, "category": category, "importance": importance,
               "tags": list(tags), "entities": [], "edges_created": {}}
        if self.engine.extracting:
            # what the server's language model stored in place of the text: its memory units of the document
            units = _dict(self.engine.request("GET", f"{self.base}/memories/list",
                                              query={"document_id": document, "limit": PAGE}))
            out["extracted"] = [{"id": str(u.get("id")), "content": str(u.get("text") or "")}
                                for u in units.get("items") or [] if isinstance(u, dict) and u.get("id")]
        return out

    def search(self, query: str, *, limit: int, mode: str = "smart", category: str | None = None,
               source: str | None = None, intent: str | None = None, keep: KeepFn | None = None) -> SearchOutcome:
        """The bank's ``recall`` (Hindsight's order; one item per document, its best unit); ``category`` and
        ``source`` filter the metadata, ``keep(tags)`` false drops an item; an exact item found by one chunk of a
        longer text comes back whole (:func:`_partial`: its document's ``original_text``). A query without a word character
        (``🚀``, ``???``) finds nothing and is not sent: Hindsight refuses it (HTTP 422), which is no failure of
        the engine. ``mode`` ``keyword`` or ``basic`` keeps the results Hindsight's keyword retrieval scored
        (``scores.keyword`` > 0); ``smart`` all of them."""
        if not _WORDY.search(query):
            return SearchOutcome([], sparse_hint(0, limit), 0, 0)
        answer = self._on_bank("POST", f"{self.base}/memories/recall",
                               {"query": query, "budget": self.budget, "max_tokens": 4096})
        rows = [r for r in answer.get("results") or [] if isinstance(r, dict)]
        if mode in ("keyword", "basic"):  # words only: the units Hindsight's keyword retrieval scored
            rows = [r for r in rows if isinstance(_dict(r.get("scores")).get("keyword"), (int, float))
                    and _dict(r.get("scores"))["keyword"] > 0]
        chunks: dict[str, dict[str, Any]] = {}  # item id -> the best unit recall found it by
        firsts: list[Item] = []
        for row in rows:
            item = self._item(row)
            if item.id not in chunks:
                chunks[item.id] = row
                firsts.append(item)
        items, dropped = filtered(firsts, category, source, keep)
        items = items[:limit]
        if not self.engine.extracting:  # an exact write comes back whole, not as the chunk that matched
            for item in items:
                if _partial(chunks[item.id]):
                    item.content = self._whole(chunks[item.id], item.content)
        return SearchOutcome(items, sparse_hint(len(items), limit), len(rows), dropped)

    def _whole(self, row: dict[str, Any], text: str) -> str:
        """The whole text of the document a recalled chunk ``row`` belongs to (its ``original_text``), else
        ``text``."""
        document = row.get("document_id")
        if not isinstance(document, str) or not document:
            return text
        found = _dict(self.engine.request("GET", f"{self.base}/documents/{urllib.parse.quote(document, safe='')}",
                                          missing=True))
        whole = found.get("original_text")
        return whole if isinstance(whole, str) and whole.strip() else text

    def forget(self, item_id: str) -> dict[str, Any]:
        """Delete the document of ``item_id`` (:func:`document_of`) and every memory unit of it (hard). An id the
        bank does not hold is ``InvalidInput`` naming ``id``."""
        document = self._hashed(item_id) if item_id.startswith(HASHED) else document_of(item_id)
        if document is not None and _item_id(document) != item_id:
            document = None  # another spelling of an id (a base64 form of a plain one): not an id recall gives
        if document is None:
            raise InvalidInput("id", "is not an item of this space", id=item_id, spaceId=self.space_id)
        path = f"{self.base}/documents/{urllib.parse.quote(document, safe='')}"
        answer = self.engine.request("DELETE", path, missing=True)
        if answer is None:
            raise InvalidInput("id", "is not an item of this space", id=item_id, spaceId=self.space_id)
        units = answer.get("memory_units_deleted") if isinstance(answer, dict) else None
        return {"id": item_id, "status": "deleted",
                "message": f"deleted from Hindsight with its {units} memory unit(s)" if isinstance(units, int)
                else "deleted from Hindsight"}

    def _hashed(self, item: str) -> str | None:
        """The document of the bank whose :func:`item_id` is the :data:`HASHED` ``item`` (its documents read a
        page at a time), or ``None``."""
        offset = 0
        while True:
            page = _dict(self.engine.request("GET", f"{self.base}/documents", query={"limit": PAGE, "offset": offset},
                                             missing=True))
            rows = [r for r in page.get("items") or [] if isinstance(r, dict) and isinstance(r.get("id"), str)]
            for row in rows:
                if item_id(row["id"]) == item:
                    return row["id"]
            offset += len(rows)
            if not rows:
                return None

    def status(self) -> dict[str, Any]:
        """The CLI-like status object of this bank (Hindsight's stats)."""
        stats = _dict(self.engine.request("GET", f"{self.base}/stats", missing=True))
        return {"total_insights": self.count(), "deleted_insights": 0, "by_category": {},
                "edge_count": stats.get("total_links") or 0, "top_entities": [], "oplog_count": 0,
                "db_path": self.engine.endpoint, "db_size_bytes": 0, "bankId": self.bank,
                "memoryUnits": stats.get("total_nodes") or 0}

    def count(self) -> int:
        """Documents in this bank (each a mnemon-ls item); 0 for a bank the server does not have yet."""
        stats = _dict(self.engine.request("GET", f"{self.base}/stats", missing=True))
        value = stats.get("total_documents")
        return value if isinstance(value, int) else 0

    def close(self) -> None:
        """Nothing to release."""

