"""The space directory of one storage root: ``data/.dsh-memory-bodies.json`` and ``state/memory-providers.json``.

Formats (shared/reference/dsh-mnemon.md 6.1, byte-compatible with the TypeScript plugin: ``indent=2`` JSON
plus a final newline, keys in this order)::

    data/.dsh-memory-bodies.json   (native catalog, version 1, 0600)
    {"version": 1, "bodies": [{"id", "name", "description", "active", "createdAt", "updatedAt",
                               "placement"?}]}

    state/memory-providers.json    (third-party plane, version 4, 0600, never in packs)
    {"version": 4, "services": {"<providerId>": {"<service field>": value, "apiKey": "secret"}},
     "enabled": {"<providerId>": true},
     "bodies": [{"id": "<providerId>-<hex24|uuid>", "name", "description", "active", "providerId",
                 "externalId"?, "metadataSource": "provider|manual|ai", "placement"?,
                 "connection": {"<memory field>": value}, "createdAt", "updatedAt"}],
     "disabledSpaces"?: [{"providerId", "externalId", "name", "description", "metadataSource": "manual|ai|provider",
     "active"}]}

  ``disabledSpaces`` (our extension; the reference ignores it) keeps, while a provider is disabled, the name
  and description a person (or the AI metadata pass) gave its spaces and which of them were active: not a
  mapping (no id, no connection), only the words and the flag to give each namespace again when re-enabling
  rediscovers it.

Rules:

- Ids match ``^[a-zA-Z0-9][a-zA-Z0-9_-]*$``. The first native space of a root without store directories
  gets id ``default``; later ones a UUIDv4 (re-rolled on collision). New spaces are inactive unless asked.
- Names are unique in the root ignoring case, and no name is another space's id, nor looks the same as a
  name or id in use (the UTS #39 confusable skeleton, :func:`.naming.name_keys`) (:mod:`.naming`): checked
  under the lock when a native space is created and when a person renames one (``update(unique_name=True)``).
- Discovery: every ``data/<dir>/mnemon.db`` (``<dir>`` matching the id rule) not yet registered becomes
  ``{id = name = <dir>, description "Existing Mnemon Store discovered on disk.", active = (no spaces
  registered yet) or <dir> == the effective store}``; the database is never moved or opened for that.
  The effective store is the constructor's ``effective_store``, else ``<root>/active`` (the CLI's
  default-store file), else ``default``. An empty ``data/`` writes nothing.
- ``updatedAt`` is strictly monotonic per space (+1 ms when the clock did not advance).
- Writes hold ``data/.dsh-memory-bodies.lock`` (exclusive-create marker, :func:`mnemon_ls.fsio.file_lock`)
  and re-read under it; files are written temp + fsync + rename; the provider file is deleted when it
  holds no provider space and no service. Every native write also refreshes ``state/.dsh-memory-bodies.
  last-good.json`` (same bytes).
- A damaged registry (not JSON, wrong version or shape, or a space that breaks a rule) is never discarded
  silently: the file is copied to ``data/.quarantine/`` (native) or ``state/quarantine/`` (providers),
  every readable space is salvaged (lenient scan of the damaged text, a broken field of a space taken from
  the last-good copy; then the last-good copy's other spaces, then the stores on disk), the registry is
  rewritten, and a notice is kept in :attr:`SpaceRegistry.notices`. Of a
  damaged provider file every complete service entry (credentials included) and enabled flag before the
  damage is kept, and the live file is rewritten with them (never deleted: credentials must not survive
  only in quarantine).
- A provider file whose ``version`` is above 4 was written by a newer version: it is read-only here, never
  quarantined, rewritten, moved or deleted (not even by native writes). Native spaces keep working; its
  third-party spaces are not shown; every provider-plane operation fails with
  :class:`~mnemon_ls.errors.FormatTooNew` (:meth:`RegistryState.require_providers`), and a notice says so.
- A catalog whose ``version`` is above 1 was written by a newer version too, and is handled the same way: never
  quarantined, rewritten, moved or deleted (nor is its last-good copy rewritten; provider-plane writes leave both
  as they are). Its native spaces are not shown and no store on disk is discovered (that would register them
  again); third-party spaces keep working; every native operation (create, update, activate, remove, remember,
  forget, a space reference that matches no readable space) fails with :class:`~mnemon_ls.errors.FormatTooNew`
  naming the file and its version (:meth:`RegistryState.require_native`), and a notice says so.
- A provider file that parses but holds a value of the wrong type (``"enabled": {"x": "yes"}``) breaks the
  strict model of :mod:`.registry_schema` and is damaged (above): never interpreted.
- Third-party provider services: known provider ids (:data:`PROVIDER_LABELS`), service fields
  (:data:`SERVICE_FIELDS`) and memory fields (:data:`MEMORY_FIELDS`); unknown keys rejected; URLs http(s)
  without credentials; strings at most 2,000 chars (secrets 8,000); OpenViking ``targetUri`` must be a
  user memories root ``viking://user[/<u>]/memories`` or a folder under it. Disabling a provider removes its local
  projections (never provider data) and keeps its service config (and, in ``disabledSpaces``, the user's names and
  descriptions of its spaces, given back when re-enabling rediscovers the namespaces). Credentials
  (:data:`SECRET_FIELDS`) never leave this module: views list configured field names only.

Layout: this module holds :class:`SpaceRegistry` (reading, discovery of stores on disk, native mutations,
writing); the file model (records, parsing, migration, salvage) is :mod:`.registry_model`, the repair of a
damaged file and the doctor's findings about the copies it quarantined are :mod:`.registry_repair`, and the
provider plane (service configuration, namespace sync) is :class:`~.registry_providers.ProviderPlane`, a part
each registry owns (``registry.provider_plane``).
"""

from __future__ import annotations

import os
import stat
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from .. import fsio
from ..errors import InvalidInput, echo_value
from .model import (
    SPACE_ID_RE,
    Clock,
    iso_ms,
    js_length,
    monotonic_iso,
    utc_now,
    validate_description,
    validate_name,
    validate_space_id,
)
from .registry_model import (
    DISABLED_SPACES_KEY,
    DISCOVERED_DESCRIPTION,
    LAST_GOOD_FILE,
    LOCK_FILE,
    NATIVE_FILE,
    NATIVE_VERSION,
    PROVIDERS_FILE,
    PROVIDERS_VERSION,
    STAGING_MAX_AGE_SECONDS,
    STAGING_PREFIX,
    Problem,
    RegistryState,
    SpaceRecord,
    _Damaged,
    _TooNew,
    _dump,
    _replace_body,
    parse_disabled_spaces,
    parse_native,
    parse_providers,
    newer_version,
)
from .naming import require_free_name
from .registry_providers import ProviderPlane


class SpaceRegistry:
    """The two registry files of ``root`` (see module doc). Reads cache by file signature; every mutation
    locks, re-reads, validates and writes (:meth:`locked`, :meth:`read_locked`, :meth:`write_locked`). ``clock``
    returns UTC now. ``provider_plane`` (:class:`~.registry_providers.ProviderPlane`) configures provider
    services and syncs their namespaces through the same write path."""

    def __init__(self, root: Path, *, clock: Clock = utc_now, effective_store: str | None = None,
                 lock_timeout: float = fsio.LOCK_TIMEOUT_SECONDS) -> None:
        self.root = Path(root)
        fsio.confine(self.root)  # invariant 10: no write below the root follows a link
        self.clock = clock
        self.lock_timeout = lock_timeout
        self._effective_store = effective_store
        self.data_dir = self.root / "data"
        self.state_dir = self.root / "state"
        self.native_path = self.data_dir / NATIVE_FILE
        self.providers_path = self.state_dir / PROVIDERS_FILE
        self.lock_path = self.data_dir / LOCK_FILE
        self.last_good_path = self.state_dir / LAST_GOOD_FILE
        self.notices: list[Problem] = []
        self._told: set[str] = set()  # the damage lines recall_notice_lines already gave
        self._told_lock = threading.Lock()
        self._cache: tuple[tuple, RegistryState] | None = None
        #: Provider services and the spaces mapped from their namespaces (``state/memory-providers.json``).
        self.provider_plane = ProviderPlane(self)

    def notice_lines(self) -> list[str]:
        """What a read of the spaces says about the registry's damage, once each: the repairs this registry
        made (:attr:`notices`) and the files of a newer version it found, then every damaged copy an earlier repair
        kept that none of them names (:func:`~.registry_repair.quarantined_copies`,
        :func:`~.registry_repair.repair_notice`); a repair's line only until its copy is deleted (a long-lived
        server stops saying it then too). Reads two directory listings; writes nothing."""
        from .registry_repair import quarantined_copies, repair_notice

        copies = quarantined_copies(self.root)
        kept = {str(copy) for copy, _name in copies}
        lines = [p.message for p in self.notices if p.quarantined is None or p.quarantined in kept]
        named = {p.quarantined for p in self.notices}
        return lines + [repair_notice(copy, name) for copy, name in copies if str(copy) not in named]

    def recall_notice_lines(self) -> list[str]:
        """:meth:`notice_lines` as a recall says them: each line about damage (a repair, a kept copy) once per
        registry, i.e. once per process for a long-lived server's workspace (MCP, the language server), and
        again for a new repair or another kept copy (another line); a file of a newer version every time (it
        is why the recall lacks those spaces). A command-line recall opens a new registry: it says them all."""
        newer = {p.message for p in self.notices if p.kind == "newer"}
        with self._told_lock:
            lines = [line for line in self.notice_lines() if line in newer or line not in self._told]
            self._told.update(line for line in lines if line not in newer)
        return lines

    # ------------------------------------------------------------------ reading

    @property
    def effective_store(self) -> str:
        """The Mnemon CLI's default store: constructor value, else ``<root>/active``, else ``default``."""
        if self._effective_store:
            return self._effective_store
        try:
            text = (self.root / "active").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            text = ""
        return text if text and SPACE_ID_RE.match(text) else "default"

    def _signature(self) -> tuple:
        sig = []
        for path in (self.native_path, self.providers_path):
            try:
                st = os.stat(path)
                sig.append((st.st_ino, st.st_mtime_ns, st.st_size))
            except FileNotFoundError:
                sig.append(None)
        return tuple(sig)

    def read(self) -> RegistryState:
        """The registry as on disk, repaired first when a file is damaged (module doc), with discovery
        of unregistered stores. Writes only to repair or to register discovered stores."""
        state = self._read_quiet()
        if state is None:
            with self.locked():
                state = self.read_locked()
        if self.discoverable(state):  # never while the catalog is a newer version's (read-only)
            with self.locked():
                state = self.read_locked()
                added = self.discovered(state)
                if added:
                    state = replace(state, bodies=(*state.bodies, *added))
                    self.write_locked(state)
        return state

    def _read_quiet(self) -> RegistryState | None:
        """Parse both files; ``None`` when one is damaged (caller repairs under the lock)."""
        sig = self._signature()
        if self._cache is not None and self._cache[0] == sig:
            return self._cache[1]
        try:
            bodies, native_refused = self.parse_native_file()
            (services, enabled, provider_bodies), refused = self.parse_providers_file()
        except _Damaged:
            return None
        enabled_bodies = tuple(b for b in provider_bodies if enabled.get(b.provider_id))
        state = RegistryState(bodies, services, enabled, enabled_bodies, providers_refused=refused,
                              native_refused=native_refused)
        self._cache = (sig, state)
        return state

    def parse_providers_file(self, data: bytes | None | bool = False) -> tuple[tuple, Any]:
        """``(parse_providers(bytes), None)``, or for a file written by a newer version (module doc: read-only,
        never repaired) ``(({}, {}, ()), FormatTooNew)`` with a notice (once). ``data``: the file's bytes
        (default: read now). Raises :class:`_Damaged`."""
        return self._parse_or_refuse(self.providers_path, self._parse_providers, PROVIDERS_VERSION, ({}, {}, ()),
                                     data)

    def parse_native_file(self, data: bytes | None | bool = False) -> tuple[tuple[SpaceRecord, ...], Any]:
        """``(parse_native(bytes), None)``, or for a catalog written by a newer version (module doc: read-only,
        never repaired) ``((), FormatTooNew)`` with a notice (once). ``data``: the file's bytes (default: read
        now). Raises :class:`_Damaged`."""
        return self._parse_or_refuse(self.native_path, self._parse_native, NATIVE_VERSION, (), data)

    def _parse_or_refuse(self, path: Path, parse: Any, supported: int, empty: Any,
                         data: bytes | None | bool) -> tuple[Any, Any]:
        """``(parse(data), None)``; for a file of a version above ``supported`` ``(empty, FormatTooNew)`` (naming
        ``path``, its version and the versions read here) and a ``newer`` notice, once."""
        from ..errors import FormatTooNew

        if data is False:
            data = fsio.read_bytes_or_none(path)
        try:
            parsed = parse(data)
        except _TooNew as newer:
            reads = f"1..{supported}" if supported > 1 else "1"
            shown = echo_value(newer.version, 32)  # said short, as every echoed number (errors.range_rule)
            version: Any = newer.version if shown == str(newer.version) else shown
            reason = f"format version {version}; this version reads {reads}"
            problem = Problem(str(path), reason, None, 0, kind="newer")
            if problem not in self.notices:
                self.notices.append(problem)
            return empty, FormatTooNew(problem.message, file=str(path), reason=reason, version=version,
                                       supported=reads)
        # readable again (put back, rebuilt, or replaced by this version's): a long-lived server stops saying it
        self.notices[:] = [p for p in self.notices if not (p.kind == "newer" and p.file == str(path))]
        return parsed, None

    #: The file parsers (:func:`.registry_model.parse_native` / :func:`~.registry_model.parse_providers`).
    _parse_native = staticmethod(parse_native)
    _parse_providers = staticmethod(parse_providers)

    # ------------------------------------------------------------------ stores on disk

    def store_path(self, space_id: str) -> Path:
        """``data/<space_id>/mnemon.db``: where a native space's store is."""
        return self.data_dir / space_id / "mnemon.db"

    # ------------------------------------------------------------------ discovery

    def store_dirs(self) -> list[str]:
        """Sorted names of ``data/<dir>`` holding ``mnemon.db`` (``<dir>`` matching the id rule)."""
        try:
            names = sorted(os.listdir(self.data_dir))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [n for n in names if SPACE_ID_RE.match(n) and (self.data_dir / n / "mnemon.db").is_file()]

    def _discovery_dirs(self) -> list[str]:
        """:meth:`store_dirs` whose ``mnemon.db`` is not empty: a zero-byte file is what an interrupted
        creation leaves (SQLite writes the schema as the first page), never a store the Mnemon CLI made.
        Staging directories (``data/.creating-*``) never match the id rule."""
        return [name for name in self.store_dirs() if self._holds_store(name)]

    def _holds_store(self, name: str) -> bool:
        """Whether ``data/<name>/mnemon.db`` is a discoverable store: ``name`` follows the id rule and the file
        is a regular file that is not empty."""
        if not SPACE_ID_RE.match(name):
            return False
        try:
            info = os.stat(os.path.join(self.data_dir, name, "mnemon.db"))
        except OSError:
            return False
        return stat.S_ISREG(info.st_mode) and info.st_size > 0

    def discoverable(self, state: RegistryState) -> bool:
        """True when some store on disk is not registered yet (every read asks: the registered ones are not
        looked at); never while the catalog is a newer version's (:attr:`RegistryState.native_refused`)."""
        if state.native_refused is not None:
            return False
        known = {b.id for b in state.all}
        try:
            names = os.listdir(self.data_dir)
        except (FileNotFoundError, NotADirectoryError):
            return False
        return any(self._holds_store(name) for name in names if name not in known)

    def discovered(self, state: RegistryState) -> list[SpaceRecord]:
        """The records discovery adds to ``state`` (module doc): one per non-empty store on disk not registered
        yet, active when ``state`` has no native space yet (the first only) or it is the effective store. None
        while the catalog is a newer version's."""
        if state.native_refused is not None:
            return []
        known = {b.id for b in state.all}
        effective = self.effective_store
        added: list[SpaceRecord] = []
        for name in self._discovery_dirs():
            if name in known:
                continue
            now = iso_ms(self.clock())
            first = not state.bodies and not added
            added.append(SpaceRecord(name, name, DISCOVERED_DESCRIPTION, first or name == effective, now, now))
        return added

    # ------------------------------------------------------------------ native mutations

    def new_native_id(self, state: RegistryState) -> str:
        """``default`` when the root has no store directory and no space uses it, else a fresh UUIDv4."""
        used = {b.id for b in state.all}
        if not self.store_dirs() and "default" not in used and not (self.data_dir / "default").exists():
            return "default"
        import uuid  # imported on use: reading the registry (every wake) never makes an id

        while True:
            candidate = str(uuid.uuid4())
            if candidate not in used and not (self.data_dir / candidate).exists():
                return candidate

    def staging_dir(self) -> Path:
        """A new empty directory ``data/.creating-<pid>-<12 hex>/`` (0700) to build a store in before
        :meth:`publish_native` moves it into place. Discovery never sees it (ids cannot start with a dot)."""
        fsio.ensure_dir(self.data_dir)
        import uuid

        path = self.data_dir / f"{STAGING_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:12]}"
        os.mkdir(path, fsio.DIR_MODE)
        return path

    def publish_native(self, staged: Path, name: str, description: str, *, active: bool = False) -> SpaceRecord:
        """Register the store built in ``staged`` (from :meth:`staging_dir`) as a new native space, all or
        nothing. Under the registry lock: choose the id (:meth:`new_native_id`), rename ``staged`` to
        ``data/<id>``, write the catalog (its rename is the commit; the directory fsync that follows covers
        both renames). If the catalog cannot be written (``OSError`` such as ENOSPC, anything else) the
        directory is renamed back to ``staged`` (the caller removes it) and the error is raised: nothing is
        registered and no store is left where discovery would find it. Staging directories older than
        :data:`STAGING_MAX_AGE_SECONDS` (left by a crash) are removed first. Raises :class:`InvalidInput`
        for a bad ``name``/``description`` before touching anything."""
        name, description = validate_name(name), validate_description(description)
        with self.locked():
            state = self.read_locked().require_native()
            require_free_name(state.all, name)  # checked under the lock: two creates cannot both take a name
            self._sweep_staging(keep=staged)
            space_id = self.new_native_id(state)
            target = self.data_dir / space_id
            os.rename(staged, target)
            now = iso_ms(self.clock())
            record = SpaceRecord(space_id, name, description, bool(active), now, now)
            try:
                self.write_locked(replace(state, bodies=(*state.bodies, record)))
            except BaseException:
                self._cache = None
                try:
                    committed = any(b.id == space_id for b in self._parse_native(
                        fsio.read_bytes_or_none(self.native_path)))
                except (_Damaged, _TooNew):
                    committed = False
                if not committed:
                    os.rename(target, staged)
                raise
            return record

    def _sweep_staging(self, keep: Path) -> None:
        """Remove staging directories older than :data:`STAGING_MAX_AGE_SECONDS` (call under the lock)."""
        try:
            names = os.listdir(self.data_dir)
        except OSError:
            return
        limit = time.time() - STAGING_MAX_AGE_SECONDS
        for entry in names:
            path = self.data_dir / entry
            if not entry.startswith(STAGING_PREFIX) or path == keep:
                continue
            try:
                if path.is_dir() and not path.is_symlink() and path.stat().st_mtime < limit:
                    import shutil

                    shutil.rmtree(path)
            except OSError:
                continue

    def add_native(self, space_id: str, name: str, description: str, *, active: bool = False,
                   placement: dict | None = None) -> SpaceRecord:
        """Register a native space whose store already exists at ``data/<space_id>/mnemon.db``."""
        with self.locked():
            state = self.read_locked().require_native()
            if state.find(space_id) is not None:
                raise InvalidInput("spaceId", "is already registered", spaceId=space_id)
            require_free_name(state.all, name)
            now = iso_ms(self.clock())
            record = SpaceRecord(space_id, validate_name(name), validate_description(description), bool(active), now,
                                 now, placement=placement)
            self.write_locked(replace(state, bodies=(*state.bodies, record)))
            return record

    def update(self, space_id: str, *, name: str | None = None, description: str | None = None,
               active: bool | None = None, touch: bool = False, unique_name: bool = False) -> SpaceRecord:
        """Change a space's name / description / active flag (or only bump ``updatedAt`` with ``touch``).
        Raises :class:`InvalidInput` (``spaceId``) for an unknown id; with ``unique_name`` (a rename a person
        asked for) also (``name``) when another space has that name or id (:func:`.naming.name_conflict`)."""
        new_name = validate_name(name) if name is not None else None
        new_description = validate_description(description) if description is not None else None
        with self.locked():
            state = self.read_locked()
            current = state.find(space_id)
            if current is None:
                state.require_native()  # perhaps a native space of a catalog this version cannot read
                raise InvalidInput("spaceId", "is not a registered space", spaceId=space_id)
            changes: dict[str, Any] = {}
            if new_name is not None and new_name != current.name:
                if unique_name:
                    require_free_name(state.all, new_name, except_id=current.id)
                changes["name"] = new_name
                if not current.native:
                    changes["metadata_source"] = "manual"
            if new_description is not None and new_description != current.description:
                changes["description"] = new_description
                if not current.native:
                    changes["metadata_source"] = "manual"
            if active is not None and bool(active) != current.active:
                changes["active"] = bool(active)
            if not changes and not touch:
                return current
            changes["updated_at"] = monotonic_iso(self.clock, current.updated_at)
            updated = replace(current, **changes)
            self.write_locked(_replace_body(state, updated))
            return updated

    def remove(self, space_id: str) -> SpaceRecord:
        """Unregister a space (its data is the caller's business). Raises :class:`InvalidInput` when unknown."""
        with self.locked():
            state = self.read_locked()
            current = state.find(space_id)
            if current is None:
                state.require_native()  # perhaps a native space of a catalog this version cannot read
                raise InvalidInput("spaceId", "is not a registered space", spaceId=space_id)
            self.write_locked(replace(state, bodies=tuple(b for b in state.bodies if b.id != space_id),
                                       provider_bodies=tuple(b for b in state.provider_bodies if b.id != space_id)))
            return current

    def update_metadata_batch(self, items: Iterable[Mapping[str, Any]]) -> list[SpaceRecord]:
        """AI metadata update (reference 6.2): 1..20 ``{"id", "title" (<=48), "description" (<=200)}``; any
        invalid, duplicate or unknown item rejects the whole batch (nothing applied). Sets
        ``metadataSource: "ai"`` on provider spaces."""
        batch = list(items)
        if not 1 <= len(batch) <= 20:
            raise InvalidInput("items", "must hold 1..20 entries")
        seen: set[str] = set()
        checked = []
        for index, item in enumerate(batch):
            if not isinstance(item, Mapping):
                raise InvalidInput(f"items[{index}]", "must be an object")
            space_id = validate_space_id(item.get("id"), f"items[{index}].id")
            if space_id in seen:
                raise InvalidInput(f"items[{index}].id", "is repeated in the batch")
            seen.add(space_id)
            title, description = item.get("title"), item.get("description")
            if not isinstance(title, str) or not 1 <= js_length(title.strip()) <= 48:
                raise InvalidInput(f"items[{index}].title", "must be 1..48 characters")
            if not isinstance(description, str) or not 1 <= js_length(description.strip()) <= 200:
                raise InvalidInput(f"items[{index}].description", "must be 1..200 characters")
            checked.append((space_id, title.strip(), description.strip()))
        with self.locked():
            state = self.read_locked()
            updated = []
            for index, (space_id, title, description) in enumerate(checked):
                current = state.find(space_id)
                if current is None:
                    state.require_native()
                    raise InvalidInput(f"items[{index}].id", "is not a registered space", spaceId=space_id)
                updated.append(replace(current, name=title, description=description,
                                       metadata_source=None if current.native else "ai",
                                       updated_at=monotonic_iso(self.clock, current.updated_at)))
            for record in updated:
                state = _replace_body(state, record)
            self.write_locked(state)
            return updated

    # ------------------------------------------------------------------ writing

    def locked(self):
        """The registry's cross-process lock (``data/.dsh-memory-bodies.lock``) as a context manager: waits
        ``lock_timeout`` seconds, then raises :class:`~mnemon_ls.errors.StoreBusy`. Every mutation holds it for
        the whole cycle: :meth:`read_locked`, then :meth:`write_locked`."""
        return fsio.file_lock(self.lock_path, self.lock_timeout)

    def read_locked(self) -> RegistryState:
        """The registry as on disk for a mutation (call with :meth:`locked` held): a damaged file is repaired
        first (quarantined, salvaged, rewritten; module doc); no discovery."""
        state = self._read_quiet()
        if state is not None:
            return state
        from .registry_repair import repair_locked  # imported on use: a sound registry (every wake) needs none

        return repair_locked(self)

    def write_locked(self, state: RegistryState, *, all_provider_bodies: tuple[SpaceRecord, ...] | None = None,
                      keep_providers_file: bool = False,
                      disabled_spaces: "tuple[dict[str, Any], ...] | None" = None) -> None:
        """Write both files for ``state`` (call under the lock). Order: the provider file (only when its bytes
        change), then the catalog (its rename commits a native change), then the last-good copy (best effort:
        a backup that the next write refreshes; a failure there never un-commits the catalog). A file of a newer
        version (module doc) is left exactly as it is (the catalog and the last-good copy, or the provider file). The
        provider file is deleted when it holds no provider space and no service, unless ``keep_providers_file`` (a
        repair keeps a live file so credentials never survive only in quarantine). ``disabled_spaces`` replaces the
        file's ``disabledSpaces`` (``None``: kept as on disk). Raises :class:`OSError` (nothing committed when it comes
        before the catalog's rename)."""
        try:
            native = _dump({"version": NATIVE_VERSION, "bodies": [b.to_native_json() for b in state.bodies]})
            if all_provider_bodies is None:
                all_provider_bodies = state.provider_bodies  # bodies of disabled providers are dropped (6.1)
            current = fsio.read_bytes_or_none(self.providers_path)
            # a registry file of a newer version is never written, moved or deleted (module doc)
            frozen = newer_version(current) is not None
            native_frozen = newer_version(fsio.read_bytes_or_none(self.native_path), NATIVE_VERSION) is not None
            # a last-good copy a newer version wrote is its backup, not ours to replace (a damaged catalog beside it
            # is rebuilt, but that copy stays as it is)
            last_good_frozen = native_frozen or newer_version(fsio.read_bytes_or_none(self.last_good_path),
                                                              NATIVE_VERSION) is not None
            if disabled_spaces is None:
                disabled_spaces = parse_disabled_spaces(current)
            providers: bytes | None = None
            if all_provider_bodies or state.services or keep_providers_file:
                doc: dict[str, Any] = {"version": PROVIDERS_VERSION,
                                       "services": {k: dict(v) for k, v in state.services.items()},
                                       "enabled": dict(state.enabled),
                                       "bodies": [b.to_provider_json() for b in all_provider_bodies]}
                if disabled_spaces:
                    doc[DISABLED_SPACES_KEY] = list(disabled_spaces)
                providers = _dump(doc)
            if frozen:
                providers = current
            if providers is not None and providers != current:
                fsio.ensure_dir(self.state_dir)
                fsio.write_file_atomically(self.providers_path, providers)
                os.chmod(self.providers_path, fsio.FILE_MODE)
            if not native_frozen and fsio.read_bytes_or_none(self.native_path) != native:
                fsio.write_file_atomically(self.native_path, native)
            try:
                if not last_good_frozen and fsio.read_bytes_or_none(self.last_good_path) != native:
                    fsio.ensure_dir(self.state_dir)
                    fsio.write_file_atomically(self.last_good_path, native)
            except OSError:
                pass
            if providers is None and current is not None:
                try:
                    os.unlink(self.providers_path)
                except FileNotFoundError:
                    pass
        finally:
            self._cache = None
