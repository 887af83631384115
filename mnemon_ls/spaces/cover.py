"""The wake snapshot's Memory Spaces block: :func:`render` (the one rendering rule), and :func:`cover`, the block
for a one-command process read without the spaces service.

:meth:`SpacesService.cover <mnemon_ls.spaces.service.SpacesService.cover>` (the servers' long-lived hosts)
renders with item counts from its cached providers. A process that runs one command (the assistants'
``SessionStart`` hook, ``mnemon-ls wake``) calls :func:`cover`: the same registry read
(:meth:`SpaceRegistry.read <mnemon_ls.spaces.registry.SpaceRegistry.read>`, repairs included) and the same
:func:`render`, with each native space's items counted by one read-only query on its ``mnemon.db``
(:func:`native_count`) instead of opening its provider, so neither the providers, the semantic engine nor the
spaces service are imported. No third-party engine is opened by either (a cover names its provider instead).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

#: The native store's active items (what :meth:`NativeProvider.count` answers too).
ACTIVE_ITEMS_SQL = "SELECT count(*) FROM insights WHERE deleted_at IS NULL"


@dataclass(slots=True)
class SpacesCover:
    """The wake snapshot's Memory Spaces block: ``text`` (at most ``budget_chars``), ``spaces`` shown
    (``[{id, name, items}]``, items ``None`` when the count failed), ``hidden`` active spaces left out for
    the budget, ``active`` active spaces in total, ``notices`` (registry repairs)."""

    text: str
    spaces: list[dict[str, Any]] = field(default_factory=list)
    hidden: int = 0
    active: int = 0
    notices: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "spaces": self.spaces, "hidden": self.hidden, "active": self.active,
                "notices": self.notices}


def render(records: Sequence[Any], notices: list[str], count: Callable[[Any], int | None], budget_chars: int = 1200,
           recall_hint: str = "mnemon/recall", unreadable: str | None = None) -> SpacesCover:
    """The block for the registered spaces ``records`` (:attr:`RegistryState.all`): the active spaces' names,
    ids, item counts (native spaces, ``count(record)``: ``None`` when it failed; a third-party space shows its
    provider's label instead) and descriptions, telling the assistant to recall before assuming. Empty text when
    no space is registered; at most ``budget_chars`` characters (spaces that do not fit are counted in
    ``hidden``). ``recall_hint`` names the route the reader recalls through
    (:data:`mnemon_ls.guidance.RECALL_HINTS`). ``unreadable``: why the native spaces are not among ``records``
    (a catalog of a newer version: :attr:`RegistryState.native_refused`), said as the block's last line so
    an assistant is not left to think there are none."""
    cover = _render(records, notices, count, budget_chars, recall_hint)
    if unreadable is None:
        return cover
    line = f"{unreadable}\n"
    text = cover.text or "MNEMON MEMORY SPACES\n"
    if len(text) + len(line) <= budget_chars:
        cover.text = text + line
    return cover


def _render(records: Sequence[Any], notices: list[str], count: Callable[[Any], int | None], budget_chars: int,
            recall_hint: str) -> SpacesCover:
    """:func:`render` without ``unreadable``."""
    from .provider_fields import provider_label

    if not records:
        return SpacesCover("", notices=notices)
    active = [r for r in records if r.active]
    if not active:
        text = ("MNEMON MEMORY SPACES\nNo Memory Space is active for reading; long-term memory is not recalled "
                "until one is activated.\n")
        return SpacesCover(text if len(text) <= budget_chars else "", notices=notices)
    header = ("MNEMON MEMORY SPACES\nLong-term memory lives in these active spaces. Before assuming a past "
              f"decision, preference or fact is unknown, recall it from them ({recall_hint}).\n")
    if len(header) > budget_chars:
        return SpacesCover("", hidden=len(active), active=len(active), notices=notices)
    lines: list[str] = []
    shown: list[dict[str, Any]] = []
    used = len(header)
    for index, record in enumerate(active):
        items: int | None = None
        if record.native:
            items = count(record)
            count_text = (f"{items} item" + ("" if items == 1 else "s")) if items is not None \
                else "item count unavailable"
        else:  # never opened for the wake: a third-party engine may take seconds to import and open
            count_text = f"{provider_label(record.provider_id)} space"
        description = " ".join(record.description.split())
        line = f"- {record.name} (id {record.id}, {count_text}): {description}\n"
        remaining = len(active) - index - 1
        tail = len(_more_line(remaining)) if remaining else 0
        if used + len(line) + tail > budget_chars:
            room = budget_chars - used - len(_more_line(len(active) - index))
            short = f"- {record.name} (id {record.id}, {count_text})\n"
            if len(short) <= room and not remaining:
                lines.append(short)
                used += len(short)
                shown.append({"id": record.id, "name": record.name, "items": items})
                continue
            break
        lines.append(line)
        used += len(line)
        shown.append({"id": record.id, "name": record.name, "items": items})
    hidden = len(active) - len(shown)
    text = header + "".join(lines) + (_more_line(hidden) if hidden else "")
    return SpacesCover(text, shown, hidden, len(active), notices)


def _more_line(hidden: int) -> str:
    """The cover's last line when ``hidden`` (>= 1) active spaces did not fit: ``(1 more active space not
    shown)``, ``(3 more active spaces not shown)``."""
    return f"({hidden} more active space{'' if hidden == 1 else 's'} not shown)\n"


def native_count(path: Path) -> int | None:
    """Active items of the native store at ``path`` (:data:`ACTIVE_ITEMS_SQL` through
    :func:`mnemon_ls.sqliteindex.open_reader`, which leaves the store's directory as it found it); ``None`` when
    it cannot be read (missing, linked, locked past the timeout, not a store)."""
    from .. import fsio
    from ..errors import MnemonError
    from ..sqliteindex import open_reader

    try:
        fsio.check_store_path(path)  # SQLite follows links: a linked mnemon.db or data/<id> is refused
        if not path.is_file():
            return None
        db = open_reader(path)
        try:
            return int(db.execute(ACTIVE_ITEMS_SQL).fetchone()[0])
        finally:
            db.close()
    except (sqlite3.Error, OSError, MnemonError):
        return None


def cover(root: Path, budget_chars: int = 1200, recall_hint: str = "mnemon/recall", *,
          clock: Callable[[], Any] | None = None) -> SpacesCover:
    """The block of the storage root ``root`` for a one-command process (module doc): the registry as
    :class:`~mnemon_ls.spaces.registry.SpaceRegistry` reads it (repairing a damaged file, registering discovered
    stores) and :func:`native_count` per shown native space. Raises the registry's errors."""
    from .registry import SpaceRegistry

    registry = SpaceRegistry(root) if clock is None else SpaceRegistry(root, clock=clock)
    state = registry.read()
    return render(state.all, [p.message for p in registry.notices],
                  lambda record: native_count(registry.store_path(record.id)), budget_chars, recall_hint,
                  unreadable_reason(state))


def unreadable_reason(state: Any) -> str | None:
    """Why ``state`` (a :class:`~mnemon_ls.spaces.registry_model.RegistryState`) holds no native space although
    the catalog exists: the message of its :attr:`native_refused` (a catalog of a newer version), else ``None``."""
    refused = state.native_refused
    return None if refused is None else refused.message
