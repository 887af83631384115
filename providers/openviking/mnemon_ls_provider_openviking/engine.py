"""OpenViking behind mnemon-ls spaces (package doc for the mapping and the fields).

The server is reached over its HTTP API (``/api/v1/...``, OpenViking 0.5) through
:class:`mnemon_ls.spaces.providers.rest.JsonClient` (standard library; redirects not followed; answers read up to
64 MiB; ``timeoutSeconds`` bounds the connect and each wait on the answer). Every answer is OpenViking's envelope
``{"status": "ok"|"error", "result": ..., "error": {"code", "message"}}``.

Requests used: ``GET /health`` (open: the server answers and is an OpenViking), ``GET /api/v1/fs/ls`` (discovery,
counting, browsing), ``GET /api/v1/fs/stat`` (does a file or folder exist), ``POST /api/v1/fs/mkdir`` (a new
space's folder, made only when it does not exist), ``POST /api/v1/content/write`` (remember: ``mode`` ``create``,
``processing_mode`` ``vectors_only``, ``wait`` true), ``POST /api/v1/search/find`` (recall), ``GET
/api/v1/content/read`` (the whole text of a long result), ``DELETE /api/v1/fs`` (forget, ``wait`` true).

Errors: :class:`~mnemon_ls.errors.ProviderUnavailable` (``engine-failed``: the server cannot be reached, does not
answer within ``timeoutSeconds``, refuses the key (``field`` ``services.apiKey``: HTTP 401/403) or answers another
error; the message names the endpoint and OpenViking's error, never the key); :class:`~mnemon_ls.errors.InvalidInput`
naming the field for a missing ``endpoint``, a bad ``uri``, or an id that is not an item of the space.
"""

from __future__ import annotations

import hashlib
import math
import json
import re
import time
import uuid
from typing import Any, Mapping

from mnemon_ls.errors import InvalidInput, ProviderUnavailable
from mnemon_ls.spaces.model import Item, parse_time, rfc3339
from mnemon_ls.spaces.providers.base import (filtered, Health, KeepFn, Namespace, NoGraphNoMerge, SearchOutcome,
                                              sparse_hint)
from mnemon_ls.spaces.providers.carried_ids import carried, carry, HASHED
from mnemon_ls.spaces.providers.rest import as_dict, endpoint_of, JsonClient, key_of

from . import USER_PATTERN, USER_RULE

DEFAULT_TIMEOUT_SECONDS = 30.0
#: One folder or file name in a space's URI: no ``/``, ``\\`` or control character, not ``.`` or ``..``, not
#: drive-like (``c:...``): OpenViking refuses the last three with HTTP 403, which reads as a refused key.
_SEGMENT = r"(?!\.\.?(?:/|$))(?![A-Za-z]:)[^/\\\x00-\x1f\x7f]{1,255}"
#: A relative path OpenViking refuses (HTTP 403 PERMISSION_DENIED): a ``\\`` anywhere, a drive-like segment.
_UNSAFE = re.compile(r"\\|(?:^|/)[A-Za-z]:")
#: A space's ``targetUri``: one user's memories root or a folder under it (group 1 the user). (OpenViking 0.5
#: refuses ``viking://user/memories``, which the reference's registries may hold: a user must be named.)
SPACE_URI = re.compile(rf"^viking://user/({USER_PATTERN})/memories(?:/{_SEGMENT})*$")
_SLUG = re.compile(r"[^a-z0-9_.-]+")
#: The prefix of the files mnemon-ls writes (``mnemon-<32 hex>.md``; the item id is the name without ``.md``).
FILE_PREFIX = "mnemon-"
_OWN = re.compile(r"^mnemon-[0-9a-f]{32}$")
#: Entries listed per page (``fs/ls``).
PAGE = 500
#: The most entries one listing takes (``fs/ls`` pages of :data:`PAGE`): a server paging past it is refused.
MAX_LISTED = 200_000
#: The folders under a user's memories root where OpenViking's own memory extraction writes (and merges and
#: rewrites files: OpenViking 0.5's builtin memory templates): never a folder ``space create`` makes.
OPENVIKING_FOLDERS = frozenset({"cases", "entities", "events", "experiences", "preferences", "skills", "tools",
                                "trajectories"})
#: A result whose abstract is this long (characters) or empty has its file read whole (``content/read``).
READ_WHOLE_CHARS = 2000
#: What OpenViking writes in a folder beside the memories (``.abstract.md``, ``.overview.md``, ``.meta.json``...).
_HIDDEN = "."


def _tags_value(tags: list[str]) -> str:
    return json.dumps(tags, ensure_ascii=False, separators=(",", ":")).encode("utf-8").hex()


def _tags_of(value: str) -> list[str]:
    try:
        tags = json.loads(bytes.fromhex(value).decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return []
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []


#: A source kept as it is in a search tag (OpenViking lower-cases tags and drops one with a second ``=``); any
#: other source is kept as ``source_hex=`` + the hex of its UTF-8 bytes.
_PLAIN_SOURCE = re.compile(r"[a-z0-9_.:@+-]{1,100}")


def _source_tag(source: str) -> str:
    return f"source={source}" if _PLAIN_SOURCE.fullmatch(source) else f"source_hex={source.encode('utf-8').hex()}"


def _source_of(marks: Mapping[str, str]) -> str | None:
    if "source_hex" in marks:
        try:
            return bytes.fromhex(marks["source_hex"]).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            pass
    return marks.get("source")


def _search_tags(raw: Any) -> dict[str, str]:
    """OpenViking's ``key=value`` tags of a result as a map (anything else ignored)."""
    out: dict[str, str] = {}
    for tag in raw if isinstance(raw, list) else []:
        if isinstance(tag, str) and tag.count("=") == 1:
            key, value = tag.split("=", 1)
            out[key] = value
    return out


class OpenVikingEngine:
    """One OpenViking server (module doc): ``http`` (its client), ``user`` (the user a new space goes under),
    ``version`` and ``auth_mode`` (what ``/health`` answered)."""

    def __init__(self, http: JsonClient, user: str, version: str, auth_mode: str) -> None:
        self.http = http
        self.endpoint = http.endpoint
        self.user = user
        self.version = version
        self.auth_mode = auth_mode

    @classmethod
    def open(cls, service: dict[str, Any]) -> "OpenVikingEngine":
        """Open from service fields: checks ``endpoint`` and asks the server's ``/health`` (module doc for the
        errors). Writes nothing."""
        endpoint = endpoint_of(service, "http://127.0.0.1:1933")
        key = key_of(service)
        user = str(service.get("user") or "default")
        if not re.fullmatch(USER_PATTERN, user):
            raise InvalidInput("services.user", USER_RULE)
        raw = service.get("timeoutSeconds")
        timeout = DEFAULT_TIMEOUT_SECONDS if raw in (None, "") else float(raw)
        http = JsonClient("openviking", endpoint, key, timeout, key_header="X-API-Key", key_prefix="",
                          headers=None if key else {"X-OpenViking-User": user})
        health = as_dict(http.request("GET", "/health"))
        if not isinstance(health.get("version"), str) or "healthy" not in health:
            raise ProviderUnavailable(f"provider openviking: {endpoint} answered /health without a version: is it "
                                      "an OpenViking server?", provider="openviking", reason="engine-failed",
                                      location=endpoint)
        who = health.get("user_id")  # the user the key names (OpenViking answers it with a key)
        if key and isinstance(who, str) and re.fullmatch(USER_PATTERN, who) and health.get("role") != "root":
            if not service.get("user"):
                user = who
            elif user != who:
                raise InvalidInput("services.user", f"must be the user the key in apiKey names ({who}), or empty "
                                                    f"(then it is that user): the key cannot write {user}'s memories")
        return cls(http, user, health["version"], str(health.get("auth_mode") or ""))

    def call(self, method: str, path: str, body: Any = None, *, query: Mapping[str, Any] | None = None,
             missing: bool = False) -> Any:
        """The ``result`` of OpenViking's answer to ``method /api/v1<path>``; ``missing``: ``None`` when the
        server answers HTTP 404 (NOT_FOUND). An answer whose ``status`` is not ``ok`` raises
        :class:`ProviderUnavailable` naming its error."""
        answer = as_dict(self.http.request(method, "/api/v1" + path, body, query=query, missing=missing))
        if missing and not answer:
            return None
        if answer.get("status") != "ok":
            error = as_dict(answer.get("error"))
            raise self.http.down(f"answered {method} /api/v1{path} with {error.get('code') or 'an error'}: "
                                 f"{' '.join(str(error.get('message') or answer)[:300].split())}")
        return answer.get("result")

    def listing(self, uri: str, *, recursive: bool, simple: bool = True, missing: bool = False) -> list[Any] | None:
        """Every entry under ``uri`` (``fs/ls``, a page of :data:`PAGE` at a time): URIs when ``simple``, else
        entry objects; ``None`` when ``missing`` and the folder does not exist. A server that says ``has_more`` with a
        page of nothing new (it ignores ``offset``, or loops) is :class:`ProviderUnavailable`, never a request
        loop without end."""
        out: list[Any] = []
        seen: set[str] = set()
        offset = 0
        while True:
            query = {"uri": uri, "simple": str(simple).lower(), "recursive": str(recursive).lower(),
                     "limit": PAGE, "offset": offset}
            answer = as_dict(self.http.request("GET", "/api/v1/fs/ls", query=query, missing=missing))
            if missing and not answer:
                return None
            if answer.get("status") != "ok":
                raise self.http.down(f"answered fs/ls of {uri} with {as_dict(answer.get('error')).get('code')}")
            rows = answer.get("result") if isinstance(answer.get("result"), list) else []
            keys = {json.dumps(r, sort_keys=True, default=str) for r in rows}
            if offset and not keys - seen:
                raise self.http.down(f"answered fs/ls of {uri} at offset {offset} with has_more and no entry it had "
                                     "not listed already: its paging does not end")
            seen |= keys
            out.extend(rows)
            if len(out) > MAX_LISTED:
                raise self.http.down(f"listed more than {MAX_LISTED} entries under {uri} (fs/ls) and still said "
                                     "has_more")
            offset += len(rows)
            if not rows or answer.get("has_more") is not True:
                return out

    def exists(self, uri: str) -> bool:
        """Whether the server has a file or folder at ``uri`` (``fs/stat``)."""
        return self.call("GET", "/fs/stat", query={"uri": uri}, missing=True) is not None

    # ------------------------------------------------------------------ protocol

    def _roots(self) -> list[str]:
        """The memories root of every user the server shows (``viking://user/<user>/memories``)."""
        users = self.listing("viking://user", recursive=False) or []
        roots = [f"{u}/memories" for u in users if isinstance(u, str)]
        return [r for r in roots if SPACE_URI.fullmatch(r)]

    def health(self) -> Health:
        """The server's own health and the memory folders it shows."""
        started = time.perf_counter()
        state = as_dict(self.http.request("GET", "/health"))
        roots = self._roots()
        ok = state.get("healthy") is True
        return Health(ok, f"OpenViking {self.version} ({self.auth_mode or 'unknown'} mode)", self.endpoint, None,
                      (time.perf_counter() - started) * 1000,
                      f"memories of {len(roots)} user(s)" + ("" if ok else "; its /health did not answer healthy"),
                      {"users": len(roots), "user": self.user, "authMode": self.auth_mode})

    def discover(self) -> list[Namespace]:
        """For every user the server shows: the memories root (reference 6.7: an OpenViking space is a user's
        memories), named after the user, holding what OpenViking itself writes (the files directly in it and its
        own folders, :data:`OPENVIKING_FOLDERS`); and each other folder directly under it, a space of its own
        (what ``space create`` made, here or on another machine sharing the server, or a folder of OpenViking's
        clients), named ``OpenViking <user>/<folder>``. No file is in two spaces."""
        out = []
        for root in self._roots():
            user = root[len("viking://user/"):-len("/memories")]
            out.append(Namespace(root, f"OpenViking {user}", f"OpenViking memories of user {user}.",
                                 {"targetUri": root}))
            for entry in self.listing(root, recursive=False, simple=False, missing=True) or []:
                entry = as_dict(entry)
                uri, about = entry.get("uri"), entry.get("abstract")
                if entry.get("isDir") is not True or not isinstance(uri, str) or not uri.startswith(root + "/"):
                    continue
                folder = uri[len(root) + 1:]
                if folder in OPENVIKING_FOLDERS or folder.startswith(_HIDDEN) or not SPACE_URI.fullmatch(uri):
                    continue
                said = about if isinstance(about, str) and about.strip() and "abstract is not ready" not in about \
                    else f"OpenViking memories of user {user} in the folder {folder}."
                out.append(Namespace(uri, f"OpenViking {user}/{folder}", said, {"targetUri": uri}))
        return out

    def create_namespace(self, name: str, description: str) -> Namespace:
        """The folder ``viking://user/<user>/memories/<slug>`` (``name`` lower-case ASCII, runs of other characters
        to ``_``; a name with no ASCII letter or digit: ``space_`` + 12 hex of its SHA-256), made with
        ``description``. A folder of OpenViking's own (:data:`OPENVIKING_FOLDERS`) or one the server already has is
        refused (``InvalidInput`` naming ``name``): a new space
        never takes over memories it did not make unseen; discovery is how one is shared."""
        folder = _SLUG.sub("_", name.strip().lower()).strip("_.-")[:64]
        if not folder:
            folder = "space_" + hashlib.sha256(name.strip().encode("utf-8")).hexdigest()[:12]
        uri = f"viking://user/{self.user}/memories/{folder}"
        if folder in OPENVIKING_FOLDERS:
            raise InvalidInput("name", f"names the folder {uri}, where OpenViking's own memory extraction writes, "
                                       "merges and rewrites its memories: choose another name")
        if self.exists(uri):
            raise InvalidInput("name", f"names the folder {uri}, which the OpenViking server at {self.endpoint} "
                                       "already has: `mnemon-ls provider discover openviking` adds it as a space; choose "
                                       "another name for a new folder")
        self.call("POST", "/fs/mkdir", {"uri": uri, "description": description})
        return Namespace(uri, name, description, {"targetUri": uri})

    def space(self, connection: dict[str, Any], *, space_id: str) -> "OpenVikingSpace":
        """The space of one user's memories root or a folder under it (``targetUri``)."""
        uri = connection.get("targetUri")
        if not isinstance(uri, str) or not SPACE_URI.fullmatch(uri):
            raise InvalidInput("connection.targetUri", "must name a user: viking://user/<user>/memories[/<folder>...] "
                                                       "(OpenViking 0.5 refuses viking://user/memories)",
                               spaceId=space_id)
        return OpenVikingSpace(self, uri, space_id)

    def close(self) -> None:
        """Nothing held between requests."""


def _importance(value: Any) -> int | None:
    return int(value) if isinstance(value, str) and value in ("1", "2", "3", "4", "5") else None


class OpenVikingSpace(NoGraphNoMerge):
    """The SpaceProvider of one OpenViking memory folder (protocol: mnemon_ls.spaces.providers.base.SpaceProvider)."""

    provider_id = "openviking"
    engine_label = "OpenViking"  # in the refusals of NoGraphNoMerge

    def __init__(self, engine: OpenVikingEngine, uri: str, space_id: str) -> None:
        from . import PLUGIN

        self.capabilities = PLUGIN.capabilities
        self.engine = engine
        self.uri = uri
        self.space_id = space_id
        #: A user's memories root: its items are the files directly in it and in OpenViking's own folders.
        self.root = uri.endswith("/memories") and uri.count("/") == 4

    # ------------------------------------------------------------------ ids

    def item_id(self, file_uri: str) -> str | None:
        """The item id of a file URI of this folder (package doc), or ``None`` for one outside it or hidden."""
        if not file_uri.startswith(self.uri + "/"):
            return None
        relative = file_uri[len(self.uri) + 1:]
        parts = relative.split("/")
        if not relative.endswith(".md") or any(part.startswith(_HIDDEN) for part in parts):
            return None  # reference 6.7: only a non-dot .md file under the space is an item
        if self.root and len(parts) > 1 and parts[0] not in OPENVIKING_FOLDERS:
            return None  # a folder of its own under a user's root is a space of its own (discover)
        if relative.endswith(".md") and _OWN.match(relative[:-3]):
            return relative[:-3]
        return carry(relative)

    def file_of(self, item_id: str) -> str | None:
        """The file URI of ``item_id`` (:meth:`item_id` reversed; a hashed id looked up in the folder), or
        ``None``."""
        if _OWN.match(item_id):
            return f"{self.uri}/{item_id}.md"
        if item_id.startswith(HASHED):
            return next((u for u in self._files() if self.item_id(u) == item_id), None)
        relative = carried(item_id)
        if relative is None or any(p in ("", ".", "..") for p in relative.split("/")) or \
                any(ord(c) < 32 for c in relative) or _UNSAFE.search(relative):
            return None
        uri = f"{self.uri}/{relative}"
        return uri if self.item_id(uri) == item_id else None

    def _files(self) -> list[str]:
        """The URIs of every item file of this folder (none when the folder does not exist yet)."""
        rows = self.engine.listing(self.uri, recursive=True, simple=False, missing=True) or []
        return [r["uri"] for r in rows if isinstance(r, dict) and r.get("isDir") is False
                and isinstance(r.get("uri"), str) and self.item_id(r["uri"]) is not None]

    # ------------------------------------------------------------------ protocol

    def remember(self, content: str, *, category: str, importance: int, tags: list[str], entities: list[str],
                 source: str) -> dict[str, Any]:
        """A new file ``mnemon-<32 hex>.md`` holding ``content``, embedded and searchable when this returns
        (``wait`` true, ``mode`` ``create``: an existing file is never replaced); category, importance, source and
        tags as search tags (package doc)."""
        text = content.strip()
        item = FILE_PREFIX + uuid.uuid4().hex
        search_tags = [f"category={category.lower()}", f"importance={importance}", _source_tag(source)]
        if tags:
            search_tags.append(f"tags={_tags_value(list(tags))}")
        uri = f"{self.uri}/{item}.md"
        try:
            result = as_dict(self.engine.call("POST", "/content/write", {
                "uri": uri, "content": text, "mode": "create", "wait": True,
                "processing_mode": "vectors_only", "tags": search_tags, "tag_mode": "replace"}))
        except ProviderUnavailable as lost:
            raise self._unsure(item, uri, lost) from None
        if result.get("vector_status") not in ("complete", None):
            raise self.engine.http.down(f"stored {item} but did not index it (vector_status "
                                        f"{result.get('vector_status')!r}): forget it and remember again", id=item)
        return {"id": item, "action": "added", "content": text, "category": category, "importance": importance,
                "tags": list(tags), "entities": [], "edges_created": {}}

    def _unsure(self, item: str, uri: str, lost: ProviderUnavailable) -> ProviderUnavailable:
        """The error of a write whose answer did not come (a timeout, a connection cut, an error answer such as an
        embedding endpoint that is down): the server may have stored the file all the same, so it is asked
        (``fs/stat``); a file it has is deleted, so a failed write leaves nothing (remembering again makes one copy).
        When that cannot be done the error names ``item`` (``data["id"]``) as kept, instead of leaving a copy the
        caller does not know of. ``lost`` itself when the file is not there."""
        if lost.data.get("field") == "services.apiKey":
            return lost  # the server answered: the key is refused, nothing was stored
        said = lost.message.split(f"{self.engine.endpoint} ", 1)[-1]
        try:
            stored = self.engine.exists(uri)
        except ProviderUnavailable:
            return self.engine.http.down(f"may have stored {item} before its answer was lost (it {said}); "
                                         f"recall or `space forget {item}` before remembering it again", id=item)
        if not stored:
            return lost
        try:  # a failed write leaves nothing: the file (perhaps without its vectors) is taken back
            self.engine.call("DELETE", "/fs", query={"uri": uri, "wait": "true"})
            if not self.engine.exists(uri):
                return self.engine.http.down(f"failed to remember (it {said}); the file it had begun ({item}) was "
                                             "removed, so nothing is stored: remember it again")
        except ProviderUnavailable:
            pass
        return self.engine.http.down(f"stored {item} but its answer was lost (it {said}); it is kept: "
                                     f"`space forget {item}` removes it, remembering it again makes a second copy",
                                     id=item)

    def _item(self, row: dict[str, Any], item_id: str) -> Item:
        marks = _search_tags(row.get("tags"))
        score = row.get("score")
        score = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
        if score is not None and not (math.isfinite(score) and -1.0 <= score <= 1.0):
            score = None  # not a cosine (a server answering 1e308, -5 or NaN): unscored, never ranked by it
        return Item(item_id, str(row.get("abstract") or ""),
                    category=marks.get("category") or marks.get("memory_type") or "general",
                    importance=_importance(marks.get("importance")), tags=_tags_of(marks.get("tags", "")),
                    entities=[], source=_source_of(marks), created_at=_time(row.get("created_at")), score=score,
                    matched_via="openviking-vector",
                    similarity={"cosine": round(score, 4), "z": None} if score is not None else None,
                    updated_at=_time(row.get("updated_at")))

    def search(self, query: str, *, limit: int, mode: str = "smart", category: str | None = None,
               source: str | None = None, intent: str | None = None, keep: KeepFn | None = None) -> SearchOutcome:
        """OpenViking's ``find`` over this folder's files (its order: cosine of the server's model); ``category`` and
        ``source`` filter the search tags, ``keep(tags)`` false drops an item; a result whose abstract may not be the
        whole text (empty, or :data:`READ_WHOLE_CHARS` or longer) is read whole. A blank query finds nothing (the
        server refuses one)."""
        if not query.strip():
            return SearchOutcome([], sparse_hint(0, limit), 0, 0)
        # room for what the filters drop (a user's root: also the hits in folders that are spaces of their own)
        wanted = 200 if self.root else min(max(limit * 3, limit + 10), 200)
        result = as_dict(self.engine.call("POST", "/search/find", {
            "query": query, "limit": wanted, "target_uri": self.uri, "level": 2}))
        rows = [r for r in result.get("memories") or [] if isinstance(r, dict) and isinstance(r.get("uri"), str)]
        found: list[Item] = []
        seen: set[str] = set()
        for row in rows:
            item_id = self.item_id(row["uri"])
            if item_id is None or item_id in seen:
                continue
            seen.add(item_id)
            found.append(self._item(row, item_id))
        items, dropped = filtered(found, category, source, keep)
        items = items[:limit]
        for item in items:
            if not item.content or len(item.content) >= READ_WHOLE_CHARS:
                whole = self.engine.call("GET", "/content/read", query={"uri": self.file_of(item.id)}, missing=True)
                if isinstance(whole, str) and whole.strip():
                    item.content = whole
        return SearchOutcome(items, sparse_hint(len(items), limit), len(rows), dropped)

    def forget(self, item_id: str) -> dict[str, Any]:
        """Delete the file of ``item_id`` and its vectors (hard; the server has indexed the delete when this
        returns). An id that names no file of this folder (nothing, or a folder whose name ends in ``.md``) is
        ``InvalidInput`` naming ``id``."""
        uri = self.file_of(item_id)
        stat = None if uri is None else self.engine.call("GET", "/fs/stat", query={"uri": uri}, missing=True)
        if stat is None or as_dict(stat).get("isDir") is not False:
            raise InvalidInput("id", "is not an item of this space", id=item_id, spaceId=self.space_id)
        self.engine.call("DELETE", "/fs", query={"uri": uri, "wait": "true"})
        return {"id": item_id, "status": "deleted", "message": f"deleted from OpenViking ({uri})"}

    def status(self) -> dict[str, Any]:
        """The CLI-like status object of this folder."""
        return {"total_insights": self.count(), "deleted_insights": 0, "by_category": {}, "edge_count": 0,
                "top_entities": [], "oplog_count": 0, "db_path": self.uri, "db_size_bytes": 0,
                "endpoint": self.engine.endpoint}

    def count(self) -> int:
        """Files in this folder and the folders inside it (each a mnemon-ls item); 0 before the folder exists."""
        return len(self._files())

    def close(self) -> None:
        """Nothing to release."""


def _time(value: Any) -> str | None:
    moment = parse_time(value) if isinstance(value, str) else None
    return rfc3339(moment) if moment else None

