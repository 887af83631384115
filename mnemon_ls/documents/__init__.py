"""Documents Source: managed Markdown documents of a storage root, their index, search and capacity.

Modules (pure model/validation separate from I/O, like :mod:`mnemon_ls.runtime`):

- :mod:`.model` records, field rules, the managed Markdown format, capacity plan (pure);
- :mod:`.indexformat` the ``index.json`` codec: parse, salvage, serialize, revisions (pure);
- :mod:`.cover` the wake snapshot's Documents block (pure);
- :mod:`.views` result shapes (``to_dict()`` = JSON);
- :mod:`.paths` ``sourcePaths`` resolution (realpath against the workspace);
- :mod:`.access` ``lastAccessedAt`` side file (how access times stay durable without index writes);
- :mod:`.search_index` the derived SQLite postings index with BM25F;
- :mod:`.store` :class:`DocumentStore`: the constructor, create / update, the plain reads and the write path
  its parts share; it owns one object of each part as a named attribute: ``store.files`` (:mod:`.files`:
  managed files, temp-file names, what is known of each file), ``store.index`` (:mod:`.index`:
  ``index.json`` readings, the revision fence, the commit), ``store.capacity`` (:mod:`.capacity`: usage and
  capacity plans), ``store.search`` (:mod:`.search`: the search workflow), ``store.freshness``
  (:mod:`.freshness`: files changed outside mnemon-ls, adoption), ``store.moves`` (:mod:`.moves`: archive /
  restore and the repair of an interrupted one) and ``store.recovery`` (:mod:`.recovery`: ``recover``);
- :mod:`.doctor` :func:`diagnose` (read-only);
- :mod:`.errors` :class:`DocumentCapacityError` (``document-capacity``) and :class:`DocumentStatusError`
  (``document-status``), to move into :mod:`mnemon_ls.errors`.

Public API (what the Host, CLI and language server wire; JSON shapes via ``to_dict()``)::

    store = DocumentStore(root, workspace, max_body_bytes=settings.documents.max_body_bytes,
                          active_limit_bytes=settings.documents.active_limit_bytes, clock=clock)
    store.create(title, content, *, description=None, source_paths=None, session_ids=None,
                 expected_revision=None) -> MutationResult            # action "created"
    store.create_from_file(path, *, title=None, description=None, session_ids=None,
                           expected_revision=None) -> MutationResult  # "Create document from file"
    store.update(id, *, title=None, description=None, content=None, source_paths=None,
                 session_ids=None, document_revision=None, expected_revision=None) -> MutationResult
    store.moves.archive(id, document_revision, *, summary=None, memory_body_ids=None,
                        expected_revision=None, lineage=None) -> MutationResult   # action "archived"
    store.moves.restore(id, *, document_revision=None, expected_revision=None) -> MutationResult
    store.get(id) -> DocumentView                                     # record + content + path
    store.list(status=None, *, excerpts=False) -> Catalog
    store.search.find(query, include_archived=False, limit=20, *, include_content=False,
                      semantic=None, audience="person") -> SearchResult
    store.cover(budget_chars) -> DocumentsCover                       # wake snapshot block
    store.capacity.plan(*, document_id=None, title=None, content=None, description=None,
                        source_paths=None, session_ids=None) -> CapacityPlan   # create or update plan
    store.freshness.refresh() -> RefreshReport  # file watcher hook: changes under <root>/documents/
    store.moves.repair() -> RepairReport        # finish interrupted archive/restore (refresh runs it)
    store.recovery.recover() -> dict            # `doc recover`: rebuild index.json from managed files
    store.read() -> IndexState            # raw index state (revision, problem, bad record)
    store.record_for_path(path) -> DocumentRecord | None
    store.flush_access() -> bool; store.close()
    diagnose(store) -> list[Finding]      # `doctor`

``expected_revision`` is the *index* revision (sha256 hex; every result carries the new one) and
raises ``revision-conflict`` when stale; ``document_revision`` is the document's own integer revision.
Errors: ``invalid-input`` (``data.field`` names the field, e.g. ``sourcePaths[2]``), ``not-found``,
``revision-conflict``, ``document-status``, ``document-capacity`` (``data.projected``, ``limit``,
``used``, ``candidates``), ``unreadable-store`` (``data.file``, ``reason``, ``record``), ``store-busy``.

Wiring notes: the file watcher should call ``store.freshness.refresh()`` for changes under
``<root>/documents/`` except the side files (``.index.lock``, ``.access.*``, ``.search.sqlite3*``); the server should
call ``flush_access()`` every few seconds while idle and ``close()`` at shutdown; ``documents/.search.sqlite3*`` and
``.access.*`` are derived/soft state and should be excluded from pack exports.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .changes import CapacityPlan
    from .cover import DocumentsCover
    from .doctor import Finding, diagnose
    from .errors import DocumentCapacityError, DocumentStatusError
    from .model import DEFAULT_ACTIVE_LIMIT_BYTES, DEFAULT_MAX_BODY_BYTES, DocumentRecord
    from .store import DocumentStore
    from .views import (Catalog, CatalogEntry, DocumentView, IndexState, MutationResult, RefreshReport,
                        RepairReport, SearchHit, SearchResult, Usage)

#: Public name -> the module defining it: imported on first use (PEP 562), so that a reader of one part (the
#: wake's cover reads the index only) does not load the doctor, search and every write path with the package.
_HOMES = {"CapacityPlan": "changes", "DocumentsCover": "cover", "Finding": "doctor", "diagnose": "doctor",
          "DocumentCapacityError": "errors", "DocumentStatusError": "errors",
          "DEFAULT_ACTIVE_LIMIT_BYTES": "model", "DEFAULT_MAX_BODY_BYTES": "model", "DocumentRecord": "model",
          "DocumentStore": "store", **dict.fromkeys(("Catalog", "CatalogEntry", "DocumentView", "IndexState",
                                                     "MutationResult", "RefreshReport", "RepairReport", "SearchHit",
                                                     "SearchResult", "Usage"), "views")}


def __getattr__(name: str) -> Any:
    """The public name ``name`` from its module (:data:`_HOMES`); ``AttributeError`` for any other name."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_ACTIVE_LIMIT_BYTES", "DEFAULT_MAX_BODY_BYTES", "CapacityPlan", "Catalog", "CatalogEntry",
    "DocumentCapacityError", "DocumentRecord", "DocumentStatusError", "DocumentStore", "DocumentView",
    "DocumentsCover", "Finding", "IndexState", "MutationResult", "RefreshReport", "RepairReport", "SearchHit",
    "SearchResult", "Usage", "diagnose",
]
