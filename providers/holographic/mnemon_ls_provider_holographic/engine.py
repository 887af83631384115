"""The Holographic engine behind mnemon-ls spaces (package doc for the mapping).

Loading: the engine directory (``plugins/memory/holographic`` of a ``hermes-agent`` installation) is found
by :func:`locate_engine`; its ``store.py`` / ``retrieval.py`` / ``holographic.py`` are imported as the
submodules of a private package (``_mnemon_hermes_holographic``) so Hermes' plugin ``__init__`` (which
needs Hermes' agent runtime and its ~30 dependencies) never runs. ``store.py`` imports ``hermes_state``
(WAL set-up) from the same site directory, which is put on ``sys.path`` (appended) when it is not there.

Errors: :class:`~mnemon_ls.errors.ProviderUnavailable` with ``reason`` ``engine-missing`` (no engine
found; the message says how to install one) or ``engine-failed`` (the database does not open: not
SQLite, unreadable directory, ...); :class:`~mnemon_ls.errors.InvalidInput` for a trust outside 0..1.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemon_ls.errors import InvalidInput, ProviderUnavailable
from mnemon_ls.spaces.model import Item, parse_time, rfc3339
from mnemon_ls.spaces.providers.base import Health, KeepFn, Namespace, NoGraphNoMerge, SearchOutcome, sparse_hint

PACKAGE = "_mnemon_hermes_holographic"
ENGINE_FILES = ("store.py", "retrieval.py", "holographic.py")
DEFAULT_MIN_TRUST = 0.3      # Hermes' fact_store search default
DEFAULT_TRUST = 0.5          # Hermes' MemoryStore default
#: Bank names this package creates: what Hermes' own categories look like (``user_pref``, ``project``).
BANK_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_load_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class EngineModules:
    """The loaded engine: ``store`` and ``retrieval`` modules, where they came from, Hermes' version."""

    store: types.ModuleType
    retrieval: types.ModuleType
    directory: Path
    version: str | None


def _site_of(engine_dir: Path) -> Path:
    return engine_dir.parent.parent.parent  # <site>/plugins/memory/holographic


def _candidates(engine_path: str | None) -> list[Path]:
    if engine_path:
        base = Path(engine_path).expanduser()
        return [base, base / "plugins" / "memory" / "holographic"]
    found = [Path(entry) / "plugins" / "memory" / "holographic" for entry in sys.path if entry]
    hermes = shutil.which("hermes")
    if hermes:  # a Hermes installed with pipx/uv tool: its own interpreter's site-packages
        try:
            with open(hermes, "rb") as handle:
                first = handle.readline().decode("utf-8", "replace")
            if first.startswith("#!"):
                python = first[2:].strip().split()[0]
                site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                      capture_output=True, text=True, timeout=10, check=False).stdout.strip()
                if site:
                    found.append(Path(site) / "plugins" / "memory" / "holographic")
        except (OSError, subprocess.SubprocessError, IndexError):
            pass
    return found


def locate_engine(engine_path: str | None = None) -> Path | None:
    """The directory holding the engine's three files: ``engine_path`` (that directory or a site-packages
    directory) when given, else the first on ``sys.path``, else the ``hermes`` command's site-packages."""
    for candidate in _candidates(engine_path):
        if all((candidate / name).is_file() for name in ENGINE_FILES):
            return candidate
    return None


def _version(site: Path) -> str | None:
    for info in sorted(site.glob("hermes_agent-*.dist-info")):
        return info.name[len("hermes_agent-"):-len(".dist-info")]
    return None


def load_engine(engine_path: str | None = None) -> EngineModules:
    """Import the engine modules (module doc); raises ``ProviderUnavailable`` (``engine-missing``)."""
    directory = locate_engine(engine_path)
    if directory is None:
        where = f" at {engine_path}" if engine_path else ""
        raise ProviderUnavailable(
            f"provider holographic: Hermes Agent's Holographic engine was not found{where} (install it with "
            "`pip install --no-deps hermes-agent==0.19.0`, or set enginePath to the plugins/memory/holographic "
            "directory of your Hermes installation)", provider="holographic", reason="engine-missing")
    with _load_lock:
        existing = sys.modules.get(PACKAGE)
        if existing is not None and Path(existing.__path__[0]) != directory:
            raise ProviderUnavailable(f"provider holographic: another engine ({existing.__path__[0]}) is already "
                                      f"loaded in this process; restart to use {directory}",
                                      provider="holographic", reason="engine-failed")
        site = _site_of(directory)
        if not any(Path(p) == site for p in sys.path if p) and str(site) not in sys.path:
            sys.path.append(str(site))  # store.py imports hermes_state from the same site
        try:
            if existing is None:
                package = types.ModuleType(PACKAGE)
                package.__path__ = [str(directory)]  # type: ignore[attr-defined]
                package.__package__ = PACKAGE
                sys.modules[PACKAGE] = package
            store = importlib.import_module(f"{PACKAGE}.store")
            retrieval = importlib.import_module(f"{PACKAGE}.retrieval")
        except Exception as exc:
            sys.modules.pop(PACKAGE, None)
            raise ProviderUnavailable(f"provider holographic: the engine at {directory} does not import: "
                                      f"{type(exc).__name__}: {exc}", provider="holographic",
                                      reason="engine-failed") from None
    return EngineModules(store, retrieval, directory, _version(site))


def hermes_home() -> Path:
    """``$HERMES_HOME`` or ``~/.hermes`` (where Hermes keeps ``memory_store.db``)."""
    value = os.environ.get("HERMES_HOME", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".hermes"


def _trust(value: Any, field: str, default: float) -> float:
    if value is None:
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(field, "must be a number 0..1") from None
    if not 0.0 <= number <= 1.0:
        raise InvalidInput(field, "must be a number 0..1", value=number)
    return number


def recall_score(relevance: float, trust: float, *, default_trust: float, min_trust: float) -> float:
    """The item score (0..1) of a fact: its relevance (0..1) with its trust deciding the recall tier around
    ``default_trust``, the trust every fact starts with (Hermes' ``MemoryStore`` default 0.5, feedback
    ``helpful`` +0.05 and ``unhelpful`` -0.10, clamped to 0..1; the engine never returns a fact below
    ``min_trust``, Hermes' ``fact_store`` default 0.3).

    - ``trust == default_trust`` (a fact nobody rated): the relevance itself, so the tier follows relevance;
    - above it: moved toward 1 by the share of the way from ``default_trust`` to full trust
      (``relevance + (1 - relevance) * (trust - default) / (1 - default)``): a fact rated helpful rises;
    - below it: scaled down linearly to 0 at ``min_trust`` (``relevance * (trust - min) / (default - min)``),
      the trust at which the engine stops returning the fact: one ``unhelpful`` (0.5 -> 0.4) halves the
      score, two (0.3) leave it at the edge of being dropped (strict-v1 drops it, balanced-v1 shows it low).

    The engine's own score is ``relevance x trust``: a fact at the default trust 0.5 scores at most 0.5 (never
    the high tier), and a literal hit of relevance under 0.5 (any but the best FTS5 match among several)
    falls under strict-v1's low floor (0.25) and is dropped. This mapping keeps the engine's order among
    facts of equal trust and is monotone in both. Values outside 0..1 are clamped."""
    relevance = max(0.0, min(1.0, relevance))
    if trust >= default_trust:
        if default_trust >= 1.0:
            return relevance
        return min(1.0, relevance + (1.0 - relevance) * (min(trust, 1.0) - default_trust) / (1.0 - default_trust))
    if default_trust <= min_trust:
        return 0.0
    return relevance * max(0.0, trust - min_trust) / (default_trust - min_trust)


def _relevance(row: dict[str, Any]) -> float:
    """The engine's relevance (0..1) of a scored row: its ``score`` is ``relevance x trust_score`` (the
    retriever is built without temporal decay), so the relevance is the quotient; 0 for a zero trust."""
    trust = float(row.get("trust_score") or 0.0)
    return float(row.get("score") or 0.0) / trust if trust > 0 else 0.0


def _time(value: Any) -> str | None:
    moment = parse_time(value)
    return rfc3339(moment) if moment else None


def _tags(text: Any) -> list[str]:
    return [t.strip() for t in str(text or "").split(",") if t.strip()]


def _create_private(db_path: Path) -> None:
    """Create the missing directories (0700) and the database file (0600) before the engine opens it
    (the engine would make them 0755/0644; SQLite gives its journal files the database's mode)."""
    import os

    missing = []
    parent = db_path.parent
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    for directory in reversed(missing):
        os.mkdir(directory, 0o700)
        os.chmod(directory, 0o700)
    if not db_path.exists():
        os.close(os.open(db_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


class _MissingStore:
    """What ``provider test`` opens when no database exists yet: unhealthy, no namespace, nothing written."""

    def __init__(self, modules: EngineModules, db_path: Path) -> None:
        self.modules, self.db_path = modules, db_path

    def health(self) -> Health:
        version = f"hermes-agent {self.modules.version}" if self.modules.version else "hermes-agent"
        return Health(False, f"{version} plugins/memory/holographic", str(self.db_path), 0, None,
                      "no Holographic store there yet (provider enable creates it; provider test writes nothing)")

    def discover(self) -> list[Namespace]:
        return []

    def close(self) -> None:
        return None


class HolographicEngine:
    """One Holographic database (``dataPath``) opened through the engine's ``MemoryStore``."""

    def __init__(self, modules: EngineModules, db_path: Path, *, default_trust: float, min_trust: float) -> None:
        self.modules = modules
        self.db_path = db_path
        self.default_trust = default_trust
        self.min_trust = min_trust
        self.store = modules.store.MemoryStore(db_path=str(db_path), default_trust=default_trust)
        self.retriever = modules.retrieval.FactRetriever(self.store)

    @classmethod
    def open(cls, service: dict[str, Any]) -> "HolographicEngine":
        """Open from service fields (package doc); raises ProviderUnavailable / InvalidInput."""
        default_trust = _trust(service.get("defaultTrust"), "services.defaultTrust", DEFAULT_TRUST)
        min_trust = _trust(service.get("minTrust"), "services.minTrust", DEFAULT_MIN_TRUST)
        modules = load_engine(service.get("enginePath") or None)
        raw = service.get("dataPath")
        db_path = Path(str(raw)).expanduser() if raw else hermes_home() / "memory_store.db"
        if service.get("probe") and not db_path.exists():
            # ``provider test`` writes nothing: no store is created where none is
            return _MissingStore(modules, db_path)  # type: ignore[return-value]
        try:
            _create_private(db_path)
            engine = cls(modules, db_path, default_trust=default_trust, min_trust=min_trust)
            engine.store._conn.execute("SELECT COUNT(*) FROM facts").fetchone()
        except (sqlite3.Error, OSError, ValueError) as exc:
            raise ProviderUnavailable(f"provider holographic: {db_path} does not open as a Holographic store: "
                                      f"{type(exc).__name__}: {exc}", provider="holographic",
                                      reason="engine-failed", dataPath=str(db_path)) from None
        return engine

    # ------------------------------------------------------------------ protocol

    def _conn(self) -> sqlite3.Connection:
        return self.store._conn

    def health(self) -> Health:
        """Facts, banks and the engine's origin (no write)."""
        started = time.perf_counter()
        with self.store._lock:
            facts = self._conn().execute("SELECT COUNT(*) FROM facts").fetchone()[0]
            banks = self._conn().execute("SELECT COUNT(DISTINCT category) FROM facts").fetchone()[0]
        version = f"hermes-agent {self.modules.version}" if self.modules.version else "hermes-agent"
        counted = f"{facts} fact{'' if facts == 1 else 's'} in {banks} bank{'' if banks == 1 else 's'}"
        return Health(True, f"{version} plugins/memory/holographic", str(self.db_path), int(facts),
                      (time.perf_counter() - started) * 1000, counted,
                      {"engineDir": str(self.modules.directory), "banks": int(banks),
                       "hrr": bool(getattr(self.store, "_hrr_available", False))})

    def discover(self) -> list[Namespace]:
        """Every bank (fact category) that holds facts, with its count."""
        with self.store._lock:
            rows = self._conn().execute(
                "SELECT category, COUNT(*) FROM facts GROUP BY category ORDER BY category").fetchall()
        return [Namespace(str(bank), str(bank), f"Holographic bank {bank} ({self.db_path}).", {"bankId": str(bank)},
                          int(count)) for bank, count in rows if bank]

    def create_namespace(self, name: str, description: str) -> Namespace:
        """A new bank named after ``name`` (lower-case, spaces to ``_``); it holds facts from the first
        remember on. :class:`InvalidInput` (``name``) when nothing usable is left of the name."""
        bank = re.sub(r"[^a-z0-9_.-]+", "_", name.strip().lower()).strip("_.-")[:64]
        if not BANK_RE.match(bank):
            raise InvalidInput("name", "must contain letters or digits to name a Holographic bank")
        return Namespace(bank, name, description, {"bankId": bank})

    def space(self, connection: dict[str, Any], *, space_id: str) -> "HolographicSpace":
        """The space of one bank (``connection.bankId``, default ``general``)."""
        bank = str(connection.get("bankId") or "general")
        return HolographicSpace(self, bank, space_id=space_id,
                                default_trust=_trust(connection.get("defaultTrust"), "connection.defaultTrust",
                                                     self.default_trust),
                                min_trust=_trust(connection.get("minTrust"), "connection.minTrust", self.min_trust))

    def close(self) -> None:
        """Release the engine's shared connection."""
        self.store.close()


class HolographicSpace(NoGraphNoMerge):
    """The SpaceProvider of one bank (protocol: mnemon_ls.spaces.providers.base.SpaceProvider)."""

    provider_id = "holographic"
    engine_label = "Holographic"  # in the refusals of NoGraphNoMerge

    def __init__(self, engine: HolographicEngine, bank: str, *, space_id: str, default_trust: float,
                 min_trust: float) -> None:
        from . import PLUGIN

        self.capabilities = PLUGIN.capabilities
        self.engine = engine
        self.bank = bank
        self.space_id = space_id
        self.default_trust = default_trust
        self.min_trust = min_trust

    # ------------------------------------------------------------------ helpers

    def _entities(self, fact_id: int) -> list[str]:
        rows = self.engine._conn().execute(
            "SELECT e.name FROM entities e JOIN fact_entities fe ON fe.entity_id = e.entity_id "
            "WHERE fe.fact_id = ? ORDER BY e.entity_id", (fact_id,)).fetchall()
        return [str(r[0]) for r in rows]

    def _item(self, fact: dict[str, Any], *, score: float | None, via: str) -> Item:
        tags = _tags(fact.get("tags"))
        category = next((t.split(":", 1)[1] for t in tags if t.startswith("category:")), "general")
        return Item(str(fact["fact_id"]), str(fact["content"]), category=category, importance=None,
                    tags=[t for t in tags if not t.startswith("category:")],
                    entities=self._entities(int(fact["fact_id"])), source=None,
                    created_at=_time(fact.get("created_at")), score=score, matched_via=via)

    def _score(self, relevance: float, fact: dict[str, Any]) -> float:
        """:func:`recall_score` of ``fact`` (its ``trust_score``) with this space's trust settings."""
        return recall_score(relevance, float(fact.get("trust_score") or 0.0), default_trust=self.default_trust,
                            min_trust=self.min_trust)

    def _fact(self, item_id: str) -> dict[str, Any]:
        if not item_id.isdigit():
            raise InvalidInput("id", "is not a Holographic fact id (a number)", id=item_id)
        row = self.engine._conn().execute(
            "SELECT fact_id, content, category, tags, trust_score, created_at, updated_at FROM facts "
            "WHERE fact_id = ?", (int(item_id),)).fetchone()
        if row is None or row["category"] != self.bank:
            raise InvalidInput("id", "is not an item of this space", id=item_id, spaceId=self.space_id)
        return dict(row)

    # ------------------------------------------------------------------ protocol

    def remember(self, content: str, *, category: str, importance: int, tags: list[str], entities: list[str],
                 source: str) -> dict[str, Any]:
        """``MemoryStore.add_fact`` in this bank; an exact duplicate (anywhere in the database: Hermes'
        content is UNIQUE) is ``{"action": "skipped", "id"}``. ``importance``/``source``/``entities`` have no
        place in the engine (it extracts its own entities)."""
        store = self.engine.store
        text = content.strip()
        labels = [t.replace(",", ";") for t in tags]
        if category and category != "general":
            labels.append(f"category:{category}")
        with store._lock:
            existing = self.engine._conn().execute("SELECT fact_id FROM facts WHERE content = ?", (text,)).fetchone()
            if existing is not None:
                return {"id": str(existing[0]), "action": "skipped", "content": text}
            fact_id = store.add_fact(text, category=self.bank, tags=",".join(labels))
            if abs(self.default_trust - store.default_trust) > 1e-9:
                store.update_fact(fact_id, trust_delta=self.default_trust - store.default_trust)
            fact = self._fact(str(fact_id))
        return {"id": str(fact_id), "action": "added", "content": text, "category": category or "general",
                "importance": importance, "tags": list(tags), "entities": self._entities(fact_id),
                "created_at": _time(fact.get("created_at")), "edges_created": {}}

    def search(self, query: str, *, limit: int, mode: str = "smart", category: str | None = None,
               source: str | None = None, intent: str | None = None, keep: KeepFn | None = None) -> SearchOutcome:
        """``FactRetriever.search`` in this bank, each fact's relevance turned into its score by
        :func:`recall_score` (trust decides the tier around ``defaultTrust``). The engine's FTS5 tokenizer
        keeps a run of Chinese/Japanese/Korean characters as one token, so a CJK query is also matched by
        character bigrams over the bank's facts (``MemoryStore.list_facts``), the query terms' coverage
        (0..1) standing for the relevance."""
        # The service asks for candidateLimit (3x the caller's limit); the engine itself takes 3x its limit as
        # FTS5 candidates and HRR-scores each (re-encoding the query per candidate), so it is asked for the
        # caller's limit, as Hermes' own fact_store tool asks (limit 10 -> 30 candidates).
        want = max(1, -(-limit // 3)) if keep is None else limit
        rows = self.engine.retriever.search(query, category=self.bank, min_trust=self.min_trust, limit=want)
        scored: dict[int, tuple[float, dict[str, Any], str]] = {
            int(r["fact_id"]): (self._score(_relevance(r), r), r, "holographic") for r in rows}
        if _CJK.search(query):
            from mnemon_ls.spaces.index import TOKENIZER
            from mnemon_ls.text import coverage

            terms = TOKENIZER.query_terms(query)
            if terms:
                for fact in self.engine.store.list_facts(category=self.bank, min_trust=self.min_trust, limit=1_000_000):
                    share = coverage(terms, TOKENIZER.term_set(str(fact["content"])))
                    if share <= 0:
                        continue
                    value = self._score(share, fact)
                    key = int(fact["fact_id"])
                    if key not in scored or scored[key][0] < value:
                        scored[key] = (value, fact, "holographic-cjk")
        ordered = sorted(scored.values(), key=lambda entry: -entry[0])
        items, dropped = [], 0
        for value, fact, via in ordered:
            if category is not None and f"category:{category}" not in _tags(fact.get("tags")) \
                    and not (category == "general" and "category:" not in str(fact.get("tags") or "")):
                continue
            item = self._item(fact, score=max(0.0, min(1.0, value)), via=via)
            if keep is not None and not keep(item.tags):
                dropped += 1
                continue
            items.append(item)
        fetched = len(ordered)
        items = items[:limit]
        return SearchOutcome(items, sparse_hint(len(items), limit), fetched, dropped)

    def related(self, item_id: str, *, depth: int = 2, edge_type: str | None = None, limit: int = 20) -> list[Item]:
        """Facts sharing the item's entities (``FactRetriever.related`` per entity) or, without entities, its
        terms (``FactRetriever.search``), weighted by trust as in :meth:`search`; top ``limit`` (at most 20)."""
        fact = self._fact(item_id)
        entities = self._entities(int(fact["fact_id"]))
        best: dict[int, tuple[float, dict[str, Any]]] = {}
        batches = [self.engine.retriever.related(e, category=self.bank, limit=limit) for e in entities] or \
            [self.engine.retriever.search(fact["content"], category=self.bank, min_trust=self.min_trust, limit=limit)]
        for batch in batches:
            for row in batch:
                key = int(row["fact_id"])
                if key == int(fact["fact_id"]):
                    continue
                value = self._score(_relevance(row), row)
                if key not in best or best[key][0] < value:
                    best[key] = (value, row)
        ordered = sorted(best.values(), key=lambda entry: -entry[0])[:min(limit, 20)]
        out = []
        for value, row in ordered:
            item = self._item(row, score=max(0.0, min(1.0, value)), via="entity" if entities else "term-overlap")
            item.depth, item.edge_type = 1, "entity" if entities else "semantic"
            out.append(item)
        return out

    def forget(self, item_id: str) -> dict[str, Any]:
        """``MemoryStore.remove_fact`` (a hard delete, as Hermes does)."""
        fact = self._fact(item_id)
        self.engine.store.remove_fact(int(fact["fact_id"]))
        return {"id": item_id, "status": "deleted", "message": "removed from the Holographic store"}

    def status(self) -> dict[str, Any]:
        """The CLI-like status object of this bank."""
        conn = self.engine._conn()
        total = conn.execute("SELECT COUNT(*) FROM facts WHERE category = ?", (self.bank,)).fetchone()[0]
        top = conn.execute(
            "SELECT e.name, COUNT(*) c FROM entities e JOIN fact_entities fe ON fe.entity_id = e.entity_id "
            "JOIN facts f ON f.fact_id = fe.fact_id WHERE f.category = ? GROUP BY e.entity_id "
            "ORDER BY c DESC, e.name LIMIT 10", (self.bank,)).fetchall()
        try:
            size = os.path.getsize(self.engine.db_path)
        except OSError:
            size = 0
        return {"total_insights": int(total), "deleted_insights": 0, "by_category": {}, "edge_count": 0,
                "top_entities": [{"entity": r[0], "count": r[1]} for r in top], "oplog_count": 0,
                "db_path": str(self.engine.db_path), "db_size_bytes": size, "bank": self.bank,
                "minTrust": self.min_trust, "defaultTrust": self.default_trust}

    def count(self) -> int:
        """Facts in this bank."""
        return int(self.engine._conn().execute("SELECT COUNT(*) FROM facts WHERE category = ?",
                                               (self.bank,)).fetchone()[0])

    def close(self) -> None:
        """Nothing to release (the engine owns the connection)."""
