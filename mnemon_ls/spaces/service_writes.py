"""Writes of the Memory Spaces service (:mod:`.service`): the write/read target rules, ``remember``/
``remember_many`` (validation, redaction, activation of an inactive target on a committed write), ``link``,
``forget`` and the native-only, non-destructive ``merge``.

:class:`SpacesWrites` is a mixin of :class:`~mnemon_ls.spaces.service.SpacesService`: its methods use the
service's registry, providers and lock and are only meant to be called on a ``SpacesService``. The rules
are in :mod:`.service`'s module doc; receipts are :class:`~mnemon_ls.spaces.model.WriteReceipt`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from ..errors import InvalidInput, MnemonError, choice_rule, echo_value, range_rule
from ..redact import Scrubber
from .errors import SpaceRefused
from .model import (
    BRANCH_TAG_PREFIX,
    EDGE_TYPES,
    WriteReceipt,
    branch_tags,
    full_item_id,
    receipt_status,
    require_unicode,
    validate_branch,
    validate_category,
    validate_content,
    validate_entities,
    item_not_found,
    validate_importance,
    validate_item_id,
    validate_source,
    validate_tags,
)
from .naming import resolve
from .registry_model import SpaceRecord


def _scrub_tags(scrub: Scrubber, field: str, tags: Any) -> Any:
    """``tags`` through ``scrub`` as labels (:meth:`~mnemon_ls.redact.Scrubber.label`: a random-looking word
    of 20+ characters is a credential), except a ``branch:<name>`` tag, which is a branch scope and is
    judged like a branch name (:meth:`~mnemon_ls.redact.Scrubber.identifier`: a known credential format
    is refused; a generated-looking branch name such as ``wip/3f9a2c7e1b4d8f6a`` is kept, or capacity
    maintenance would lose the branch scope of what it archives). Fields ``field[i]``; a value that is
    not a list of strings is returned for :func:`validate_tags` to name."""
    if not isinstance(tags, (list, tuple)):
        return tags
    return type(tags)(scrub.identifier(f"{field}[{i}]", tag)
                      if isinstance(tag, str) and tag.startswith(BRANCH_TAG_PREFIX)
                      else scrub.label(f"{field}[{i}]", tag) for i, tag in enumerate(tags))


#: What a duplicate ``remember`` stores: no item (the native store still logs a ``diff-skip`` oplog row, as
#: the Mnemon CLI does, mnemon-cli.md 7.1 step 4, so "nothing was written" would not be true).
NO_NEW_ITEM = "no new item was stored"


def _names(branches: Sequence[str]) -> str:
    """``branch main`` / ``branches a, b``: the words of a branch list in a receipt."""
    return ("branch " if len(branches) == 1 else "branches ") + ", ".join(branches)



def _shown(item_id: Any) -> str:
    """An item id as a receipt's message names it: each control or formatting character escaped
    (:func:`~mnemon_ls.errors.echo_value`), so an id another program stored with a newline in it stays on its line."""
    text = str(item_id)
    return text if text.isprintable() else echo_value(text, 4096)

class SpacesWrites:
    """Write targets, writes and merge of :class:`~mnemon_ls.spaces.service.SpacesService` (mixin)."""

    # ------------------------------------------------------------------ targets

    def _readable(self, space_id: Any, field_name: str) -> SpaceRecord:
        record = resolve(self.state(), space_id, field_name)
        if not record.active:
            raise InvalidInput(field_name, f"is not active for reading ({record.name}; activate it first)",
                               spaceId=record.id)
        return record

    def _write_target(self, space_id: Any) -> SpaceRecord:
        state = self.state()
        if space_id is None:
            active = [b for b in state.all if b.active]
            if not active:
                state.require_native()  # the native spaces of a newer version's catalog are not readable here
                raise InvalidInput("spaceId", "is required: 0 spaces are active, and a write without a target needs "
                                              "exactly one: create a space (or activate one), or name one",
                                   active=0)
            if len(active) > 1:
                names = ", ".join(b.name for b in active[:5]) + (", ..." if len(active) > 5 else "")
                raise InvalidInput("spaceId", f"is required: {len(active)} spaces are active ({names}), and a write "
                                              "without a target needs exactly one: name the space, or deactivate "
                                              "the others", active=len(active))
            return active[0]
        return resolve(state, space_id)

    # ------------------------------------------------------------------ writes

    def remember(self, content: str, *, space_id: str | None = None, category: str | None = None,
                 importance: int | None = None, tags: Sequence[str] | None = None,
                 entities: Sequence[str] | None = None, source: str | None = None,
                 branch: str | None = None) -> WriteReceipt:
        """Remember one item (module doc). ``branch`` adds a ``branch:<name>`` tag. Returns a
        :class:`WriteReceipt`: ``status`` ``committed`` with ``detail`` ``{"action": "added", "edgesCreated",
        "entities", "tags", "createdAt"[, "extracted"][, "redacted"]}`` or ``skipped`` with ``duplicateOf``
        (the existing id, also in ``id``; with ``branchScope`` and a message saying so when the stored item is
        scoped to other branches than asked: :meth:`_duplicate_scope`), or, from an extracting provider that kept
        nothing, ``reason`` ``nothing-extracted`` and ``id`` ``None``. A committed write into an inactive space
        activates it: ``activated`` is true and ``detail["activeSpaces"]`` (``[{id, name}]``, registry order) lists the
        spaces active after it, so a receipt can say whether a write without ``space_id`` still has exactly one target.
        ``extracted`` (``[{id, content}]``): the facts an extracting provider (Mem0 with ``infer``) stored in place of
        the text. Content, tags and entities pass :mod:`mnemon_ls.redact` first (tags and entities as labels: a
        random-looking word of 20+ characters counts as a credential too, :meth:`~mnemon_ls.redact.Scrubber.label`)."""
        scrub = Scrubber(self.secrets)
        content, branch = scrub.text("content", content), scrub.identifier("branch", branch)
        tags, entities = _scrub_tags(scrub, "tags", tags), scrub.labels("entities", entities)
        text = validate_content(content)
        cat = validate_category(category)
        imp = validate_importance(importance)
        tag_list = validate_tags(tags)
        entity_list = validate_entities(entities)
        src = validate_source(source)
        branch_name = validate_branch(branch)
        if branch_name is not None:
            tag = BRANCH_TAG_PREFIX + branch_name
            if tag not in tag_list:
                tag_list = validate_tags([*tag_list, tag])
        record = self._write_target(space_id)
        provider = self.provider(record)
        raw = provider.remember(text, category=cat or "general", importance=imp, tags=tag_list,
                                entities=entity_list, source=src)
        activated = False
        if raw.get("action") != "skipped" and receipt_status(raw) == "committed" and not record.active:
            record = self.registry.update(record.id, active=True)  # a committed write activates (reference)
            activated = True
        receipt = self._write_receipt(record, raw, {"entities": entity_list, "tags": tag_list}, scrub, activated)
        if receipt.detail.get("duplicateOf") is not None:
            receipt = self._duplicate_scope(record, receipt, branch_tags(tag_list))
        if activated:  # what the activation changed: a later write without a target needs exactly one active
            receipt.detail["activeSpaces"] = [{"id": b.id, "name": b.name} for b in self.state().all if b.active]
        return receipt

    def remember_many(self, space_id: str, items: Sequence[dict[str, Any]], *,
                      require_active: bool = True) -> list[WriteReceipt]:
        """Remember several items in one space as one batch (capacity maintenance, issue 9): with the
        embedded provider one write transaction (all or nothing), otherwise one provider call per item in
        order (an error stops the batch; the items before it stay written). ``items[i]`` holds
        :meth:`remember`'s keyword arguments (``content`` required; ``category``, ``importance``, ``tags``,
        ``entities``, ``source``), each validated and redacted like :meth:`remember` (fields named
        ``items[i].content`` etc.) before anything is written. ``require_active`` refuses an inactive space
        (:class:`InvalidInput` ``spaceId``) instead of activating it. Returns one :class:`WriteReceipt`
        per item, in order. An error of a one-by-one provider carries ``written``: the receipts of the
        items stored before it."""
        record = resolve(self.state(), space_id)
        if require_active and not record.active:
            raise InvalidInput("spaceId", "is not active (a batch write never activates a space)", spaceId=record.id)
        scrubs, prepared = [], []
        for index, item in enumerate(items):
            where = f"items[{index}]"
            scrub = Scrubber(self.secrets)
            tags = validate_tags(_scrub_tags(scrub, f"{where}.tags", item.get("tags")), f"{where}.tags")
            entities = validate_entities(scrub.labels(f"{where}.entities", item.get("entities")), f"{where}.entities")
            prepared.append({
                "content": validate_content(scrub.text(f"{where}.content", item.get("content")), f"{where}.content"),
                "category": validate_category(item.get("category"), f"{where}.category") or "general",
                "importance": validate_importance(item.get("importance"), f"{where}.importance"),
                "tags": tags, "entities": entities, "source": validate_source(item.get("source"), f"{where}.source")})
            scrubs.append(scrub)
        provider = self.provider(record)
        batch = getattr(provider, "remember_many", None)
        if batch is not None:
            return [self._write_receipt(record, raw, item, scrub)
                    for raw, item, scrub in zip(batch(prepared), prepared, scrubs)]
        receipts: list[WriteReceipt] = []
        try:
            for item, scrub in zip(prepared, scrubs):
                raw = provider.remember(item["content"], category=item["category"], importance=item["importance"],
                                        tags=item["tags"], entities=item["entities"], source=item["source"])
                receipts.append(self._write_receipt(record, raw, item, scrub))
        except Exception as exc:
            exc.written = receipts  # type: ignore[attr-defined]  # what the caller must know is stored
            raise
        return receipts

    def _duplicate_scope(self, record: SpaceRecord, receipt: WriteReceipt, asked: list[str]) -> WriteReceipt:
        """``receipt`` (skipped: a duplicate of ``receipt.id``) saying the branch scope the fact already has,
        when it is not the one ``asked`` (the branch names of the write's ``branch:<name>`` tags, ``[]`` for
        every branch). A provider's duplicate check is by content alone, so a write scoped otherwise than the
        stored item stores nothing: already on every branch (no branch scope) is all a branch asked for needs;
        scoped to other branches, recall filters it out where it was asked, and the message says so and how
        to change it. ``detail["branchScope"]``: the stored item's branches (``[]``: every branch) when known.
        The stored item is read best-effort: unreadable, the receipt is returned as it is."""
        try:
            item = self.get_item(record.id, str(receipt.id))
        except MnemonError:
            return receipt
        if item is None:
            return receipt
        stored = branch_tags(item.tags)
        if sorted(stored) == sorted(asked):
            return receipt
        head = f"Already remembered in {record.name} as {_shown(receipt.id)}"
        if not stored:
            scope = f"{head} for every branch (it has no branch scope, so {_names(asked)} recalls it too)"
        elif not asked:
            scope = (f"{head}, scoped to {_names(stored)} only: it was not stored for every branch (recall on "
                     f"other branches filters it out; forget {receipt.id} and remember it again to widen it)")
        else:
            missing = [b for b in asked if b not in stored]
            scope = (f"{head}, scoped to {_names(stored)}" + (
                f": it was not stored for {_names(missing)} (recall there filters it out; forget {receipt.id} "
                "and remember it again to change its scope)" if missing else ""))
        message = f"{scope}; {NO_NEW_ITEM}."
        return replace(receipt, message=message, detail={**receipt.detail, "branchScope": stored})

    @staticmethod
    def _write_receipt(record: SpaceRecord, raw: dict[str, Any], item: dict[str, Any], scrub: Scrubber,
                       activated: bool = False) -> WriteReceipt:
        """The :class:`WriteReceipt` of one provider ``remember`` answer (``item`` the ``entities`` and ``tags``
        sent; ``activated`` whether the write activated the space), for :meth:`remember` and
        :meth:`remember_many`."""
        action = str(raw.get("action") or "")
        if action == "skipped" and raw.get("reason") == "nothing-extracted":
            # an extracting provider kept nothing of it (Mem0 with infer): no duplicate, and the provider says why
            return WriteReceipt("skipped", "skipped", record.id, record.name, None, str(raw.get("message") or
                                f"{record.name}'s provider kept nothing of it; nothing was written."),
                                {"reason": "nothing-extracted", **_redacted(scrub)})
        if action == "skipped":
            existing = raw.get("replaced_id") or raw.get("id")
            return WriteReceipt("skipped", "skipped", record.id, record.name, existing,
                                f"Already remembered in {record.name} as {_shown(existing)}; {NO_NEW_ITEM}.",
                                {"duplicateOf": existing, **_redacted(scrub)})
        status = receipt_status(raw)
        detail = {"edgesCreated": raw.get("edges_created") or {}, "entities": raw.get("entities") or item["entities"],
                  "tags": raw.get("tags") if isinstance(raw.get("tags"), list) else item["tags"],
                  "createdAt": raw.get("created_at"), **_redacted(scrub)}
        message = f"Remembered in {record.name}." if status == "committed" else f"Provider answered {action or status}."
        extracted = raw.get("extracted")
        if isinstance(extracted, list) and extracted:
            # an extracting provider (Mem0 with infer) stored these facts in place of the text
            detail["extracted"] = [{"id": str(e.get("id")), "content": str(e.get("content") or "")} for e in extracted]
            if status == "committed":
                facts = "1 fact" if len(extracted) == 1 else f"{len(extracted)} facts"
                message = f"Remembered in {record.name} as {facts} its provider extracted."
            if isinstance(raw.get("llmRedacted"), int) and raw["llmRedacted"] > 0:
                # credentials the provider's language model wrote into the facts, redacted before they were stored
                detail["llmRedacted"] = raw["llmRedacted"]
                message += f" {raw['llmRedacted']} credential(s) its language model wrote were redacted."
        notice = raw.get("notice")
        if status == "committed" and isinstance(notice, str) and notice.strip():
            # what the provider says of a committed write (ByteRover: when its search will find it)
            message += " " + " ".join(notice.split())[:200]
        return WriteReceipt(status, action or "added", record.id, record.name, raw.get("id"), message, detail,
                            activated)

    def link(self, space_id: str, source_id: str, target_id: str, *, edge_type: str = "semantic",
             weight: float = 0.5, metadata: dict[str, str] | None = None) -> WriteReceipt:
        """Link two items of one space, each named by exact id or by the unique start of one (:meth:`forget`).
        Raises :class:`InvalidInput` naming ``sourceId``/``targetId``/``edgeType``/``weight``/``metadata`` when
        malformed, :class:`~mnemon_ls.errors.ItemNotFound` (exit 3)
        naming ``sourceId``/``targetId`` when an end is missing or forgotten (:func:`.model.item_not_found`)."""
        record = resolve(self.state(), space_id)
        src, tgt = validate_item_id(source_id, "sourceId"), validate_item_id(target_id, "targetId")
        if src == tgt:
            raise InvalidInput("targetId", "must differ from sourceId")
        if edge_type not in EDGE_TYPES:
            raise InvalidInput("edgeType", choice_rule(EDGE_TYPES, edge_type))
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight <= 1:
            raise InvalidInput("weight", range_rule("number", {"ge": 0, "le": 1}, weight))
        scrub = Scrubber(self.secrets)
        if isinstance(metadata, dict):
            metadata = {k: scrub.text(f"metadata.{k}", v) for k, v in metadata.items()}
        meta = _validate_metadata(metadata)
        self._capable(record, "link")
        provider = self.provider(record)
        src, tgt = full_item_id(provider, src, "sourceId"), full_item_id(provider, tgt, "targetId")
        if src == tgt:
            raise InvalidInput("targetId", "must differ from sourceId")
        try:
            raw = provider.link(src, tgt, edge_type=edge_type, weight=float(weight), metadata=meta)
        except InvalidInput as exc:
            raise item_not_found(exc, {"sourceId": src, "targetId": tgt}) from None
        return WriteReceipt(receipt_status(raw), "linked", record.id, record.name, src,
                            f"Linked {_shown(src)} -> {_shown(tgt)} ({edge_type}).",
                            {"sourceId": src, "targetId": tgt, "edgeType": edge_type, "weight": float(weight),
                             **_redacted(scrub)})

    def forget(self, space_id: str, item_id: str) -> WriteReceipt:
        """Soft-delete one item by exact id, or by the unique start of one of at least 8 characters (a native
        space: :func:`.model.full_item_id`; the receipt names the full id). Raises :class:`InvalidInput` (``id``)
        for a malformed id, or a start of several ids, and :class:`~mnemon_ls.errors.ItemNotFound` (``id``, exit 3)
        for an unknown or already forgotten one."""
        record = resolve(self.state(), space_id)
        key = validate_item_id(item_id, "id")
        self._capable(record, "forget")
        provider = self.provider(record)
        key = full_item_id(provider, key, "id")
        try:
            raw = provider.forget(key)
        except InvalidInput as exc:  # every provider names a well-formed id it does not hold with field "id"
            raise item_not_found(exc, {"id": key}) from None
        status = receipt_status(raw)
        caps = self._capabilities(record)
        kind = caps.delete if caps is not None and caps.delete in ("soft", "hard") else "soft"
        return WriteReceipt(status, "deleted", record.id, record.name, key, f"Forgot {_shown(key)} ({kind} delete).")

    def _capable(self, record: SpaceRecord, what: str) -> None:
        caps = self._capabilities(record)
        if caps is not None and not getattr(caps, what):
            raise SpaceRefused(f"space {record.id} does not support {what}", spaceId=record.id, reason=what)

    # ------------------------------------------------------------------ merge

    def merge(self, source_ids: Sequence[str], target_id: str, *, deactivate_sources: bool = True) -> dict[str, Any]:
        """Import each source space into ``target_id`` (module doc). Returns ``{"targetId", "status":
        committed|partial|failed, "sources": [{"spaceId", "items", "imported", "skipped", "errors", "status",
        "deactivated"}]}``; overall ``committed`` only when every source is."""
        if isinstance(source_ids, str) or not isinstance(source_ids, (list, tuple)) or not source_ids:
            raise InvalidInput("sourceIds", "must be a non-empty list of space ids")
        state = self.state()
        target = resolve(state, target_id, "targetId")
        sources = [resolve(state, s, f"sourceIds[{i}]") for i, s in enumerate(source_ids)]
        for index, record in enumerate(sources):
            if record.id == target.id:
                raise InvalidInput("targetId", "must differ from every source space (a space cannot be merged into "
                                               "itself)", spaceId=record.id)
            if any(earlier.id == record.id for earlier in sources[:index]):
                raise InvalidInput(f"sourceIds[{index}]", "is repeated")
        for record in (*sources, target):
            if not record.native:
                raise SpaceRefused(f"space: {record.name} ({record.id}) is a {record.provider_id} space and cannot "
                                   "merge (merge is Mnemon-native only)", field="space", spaceId=record.id,
                                   reason="not native")
        target_provider = self.provider(target)
        reports = []
        for record in sources:
            items, edges = self.provider(record).export_items()
            if items:
                raw = target_provider.import_items(items, edges)
            else:
                raw = {"imported": 0, "updated": 0, "skipped": 0, "errors": 0}
            imported, updated = int(raw.get("imported") or 0), int(raw.get("updated") or 0)
            skipped = int(raw.get("skipped") or 0)
            errors = raw.get("errors")
            error_count = int(errors) if isinstance(errors, (int, float)) and not isinstance(errors, bool) else (
                len(errors) if isinstance(errors, list) else 0)
            complete = error_count == 0 and imported + updated + skipped == len(items)
            mapped = receipt_status(raw) if items else "committed"
            status = "committed" if complete and mapped in ("committed", "unknown") else (
                "partial" if imported + updated + skipped else "failed")
            deactivated = False
            if status == "committed" and deactivate_sources and record.active:
                self.registry.update(record.id, active=False)
                deactivated = True
            reports.append({"spaceId": record.id, "items": len(items), "imported": imported, "updated": updated,
                            "skipped": skipped, "errors": error_count, "status": status, "deactivated": deactivated})
        overall = "committed" if all(r["status"] == "committed" for r in reports) else (
            "failed" if all(r["status"] == "failed" for r in reports) else "partial")
        return {"targetId": target.id, "status": overall, "sources": reports}


def _validate_metadata(metadata: Any) -> dict[str, str]:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInput("metadata", "must be an object of strings")
    if len(metadata) > 20:
        raise InvalidInput("metadata", "must hold at most 20 entries")
    out = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not key or len(key) > 100:
            raise InvalidInput("metadata", "keys must be strings of 1..100 characters")
        require_unicode(key, "metadata")
        if not isinstance(value, str) or len(value) > 1000:
            raise InvalidInput(f"metadata.{key}", "must be a string of at most 1000 characters")
        require_unicode(value, f"metadata.{key}")
        out[key] = value
    return out


def _redacted(scrub: Scrubber) -> dict[str, Any]:
    """``{"redacted": summary}`` when the redaction pass replaced something, else ``{}``."""
    summary = scrub.summary()
    return {"redacted": summary} if summary else {}
