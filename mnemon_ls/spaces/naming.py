"""How a person names a Memory Space: by its id or by its name, one rule for every surface.

Rules (the CLI, the language server and the MCP server all call :func:`resolve` through
:class:`~mnemon_ls.spaces.service.SpacesService`):

- A space is named by its **id** or by its **name**. An id matches exactly, else ignoring case (``WORK-ID``
  names ``work-id``; two ids that differ only in case, possible on a case-sensitive file system since the id is
  the ``data/<id>`` directory, make that reference :class:`~mnemon_ls.errors.AmbiguousMatch`). A name is
  compared by :func:`name_key`: NFKC-normalised and case folded (NFKC casefold: fullwidth ``ｗｏｒｋ`` is
  ``work``), invisible format characters (Unicode category Cf: zero-width spaces and joiners) dropped, trimmed
  and runs of white space collapsed (``" Work  Notes"`` and ``"work notes"`` are the same name). An id wins
  over a name. New names are stored NFKC-normalised and may not hold control or format characters
  (:func:`~.model.validate_name`).
- Names are unique within a storage root by :func:`name_key`, and a name may not be another space's id
  (:func:`name_conflict`; checked when a space is created or renamed). Registries written before this
  rule (or by another tool) may still hold two spaces of one name: naming that name is
  :class:`~mnemon_ls.errors.AmbiguousMatch` listing their ids, never a guess.
- An unknown reference is :class:`~mnemon_ls.errors.InvalidInput` (``is not a registered space id or
  name``) with up to three suggestions (``data.suggestions``: ids): an id or name equal ignoring case, ids
  starting with the reference, then close spellings (:func:`difflib.get_close_matches`, ratio >= 0.6).
"""

from __future__ import annotations

import difflib
import unicodedata
from typing import Any, Callable, Iterable

from ..errors import AmbiguousMatch, InvalidInput
from ..findings import Finding
from .registry_model import RegistryState, SpaceRecord

#: References longer than this (characters) get no spelling suggestions (difflib is quadratic).
MAX_SUGGEST_CHARS = 200
MAX_SUGGESTIONS = 3


def fold(text: str) -> str:
    """NFKC casefold of ``text`` (``NFKC(casefold(NFKC(text)))``): the form in which two ids or names that
    differ only in case or in compatibility forms (fullwidth letters, ligatures) are equal."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def name_key(name: str) -> str:
    """The comparison form of a space name (or id): :func:`fold`, invisible format characters (Unicode
    category Cf, e.g. U+200B) dropped (a registry written by another tool may hold them), trimmed, inner
    white space collapsed to one space."""
    folded = "".join(c for c in fold(name) if unicodedata.category(c) != "Cf")
    return " ".join(folded.split())


def space_label(record: SpaceRecord) -> str:
    """How text output names a space: ``<name> (<id>)``, or the id alone when the name is the id."""
    return record.id if record.name == record.id else f"{record.name} ({record.id})"


def name_conflict(records: Iterable[SpaceRecord], name: str, *, except_id: str | None = None) -> SpaceRecord | None:
    """The space other than ``except_id`` whose name is ``name`` ignoring case, or whose id is ``name``
    ignoring case; ``None`` when the name is free."""
    key = name_key(name)
    return next((r for r in records if r.id != except_id and key in (name_key(r.name), name_key(r.id))), None)


def require_free_name(records: Iterable[SpaceRecord], name: str, *, except_id: str | None = None,
                      field_name: str = "name") -> None:
    """Raise :class:`InvalidInput` naming ``field_name`` when :func:`name_conflict` finds a space."""
    taken = name_conflict(records, name, except_id=except_id)
    if taken is not None:
        what = "id" if name_key(taken.id) == name_key(name) and name_key(taken.name) != name_key(name) else "name"
        raise InvalidInput(field_name, f"is already the {what} of space {space_label(taken)} (space names are unique "
                                       "in a storage root, ignoring case and width; choose another name)",
                           spaceId=taken.id)


def unique_name(taken_keys: set[str], name: str) -> str:
    """``name``, or ``"<name> (2)"``, ``"<name> (3)"``... the first whose :func:`name_key` is not in
    ``taken_keys`` (the :func:`name_key` of every name and id already in the root). The rule ``migrate`` and
    pack import give a space whose name is taken; the caller adds the result's key to ``taken_keys``. The name
    is shortened (trailing spaces dropped) so that name and suffix fit :data:`~.model.MAX_NAME_CHARS` (100
    characters)."""
    from .model import MAX_NAME_CHARS

    candidate, n = name, 1
    while name_key(candidate) in taken_keys:
        n += 1
        suffix = f" ({n})"
        candidate = name[:MAX_NAME_CHARS - len(suffix)].rstrip() + suffix
    return candidate


def diagnose_names(records: Iterable[SpaceRecord]) -> list[Finding]:
    """Doctor findings (``problem``, subject ``spaces``) for each id that two or more registered spaces share
    ignoring case (store directories ``data/Team`` and ``data/team`` on a case-sensitive file system) and for
    each name two or more share by :func:`name_key` (a registry written before the uniqueness rule, or by
    another tool): naming such a space in another case is :class:`AmbiguousMatch`. The advice is the exact id
    or the merge command, and the rename command."""
    records = list(records)
    groups: dict[str, list[SpaceRecord]] = {}
    for record in records:
        groups.setdefault(name_key(record.name), []).append(record)
    findings = []
    ids: dict[str, list[SpaceRecord]] = {}
    for record in records:
        ids.setdefault(fold(record.id), []).append(record)
    for group in ids.values():
        if len(group) > 1:
            listed = ", ".join(r.id for r in group)
            findings.append(Finding("problem", "spaces", f"{len(group)} spaces have ids that differ only in case "
                                    f"({listed}); naming them in another case is ambiguous",
                                    "give the id exactly as `mnemon-ls space list` shows it, or merge one into "
                                    f"the other: `mnemon-ls space merge {group[-1].id} --into {group[0].id}`"))
    for group in groups.values():
        if len(group) > 1:
            ids = ", ".join(r.id for r in group)
            findings.append(Finding("problem", "spaces", f"{len(group)} spaces share the name {group[0].name!r} "
                                    f"ignoring case (ids {ids}); naming it is ambiguous",
                                    f"rename all but one: `mnemon-ls space update {group[-1].id} --name NEW`"))
    return findings


def suggestions(records: Iterable[SpaceRecord], reference: str) -> list[SpaceRecord]:
    """Up to :data:`MAX_SUGGESTIONS` spaces ``reference`` probably meant (module doc), best first."""
    pool = list(records)
    folded = fold(reference)
    key = name_key(reference)
    found: list[SpaceRecord] = []

    def add(record: SpaceRecord) -> None:
        if record not in found:
            found.append(record)

    for record in pool:
        if fold(record.id) == folded or name_key(record.name) == key:
            add(record)
    for record in pool:
        if folded and fold(record.id).startswith(folded):
            add(record)
    if len(reference) <= MAX_SUGGEST_CHARS:
        choices: dict[str, SpaceRecord] = {}
        for record in pool:
            choices.setdefault(fold(record.id), record)
            if len(record.name) <= MAX_SUGGEST_CHARS:
                choices.setdefault(name_key(record.name), record)
        for match in difflib.get_close_matches(key, list(choices), n=MAX_SUGGESTIONS, cutoff=0.6):
            add(choices[match])
    return found[:MAX_SUGGESTIONS]


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _only(matches: list, field_name: str, message: Callable[[int, str], str]) -> Any:
    """The one record of ``matches``, ``None`` for none; several raise :class:`AmbiguousMatch` with
    ``message(count, "id, id, ...")`` after the field name."""
    if len(matches) == 1:
        return matches[0]
    if matches:
        ids = [r.id for r in matches]
        raise AmbiguousMatch(f"{field_name}: {message(len(matches), ', '.join(ids))}", field=field_name, spaceIds=ids)
    return None


def resolve(state: RegistryState, reference: Any, field_name: str = "spaceId") -> SpaceRecord:
    """The registered space ``reference`` names (module doc).

    The order: the id exactly, then the id ignoring case (:func:`fold`), then the name (:func:`name_key`).
    Raises :class:`InvalidInput` naming ``field_name`` (not a string, empty, or no such space, with
    ``data.spaceId`` = the reference clipped to 80 characters and ``data.suggestions`` = ids when there are
    any) or :class:`AmbiguousMatch` (``data.field``, ``data.spaceIds``) when two or more spaces have that id
    ignoring case, or that name."""
    if not isinstance(reference, str):
        raise InvalidInput(field_name, "must be a string (a space id or name)")
    text = reference.strip()
    if not text:
        raise InvalidInput(field_name, "is required")
    record = state.find(text)
    if record is not None:
        return record
    folded = fold(text)
    found = _only([r for r in state.all if fold(r.id) == folded], field_name, lambda n, ids: (
        f"{n} spaces have the id {_clip(text)!r} ignoring case (ids {ids}); give the id exactly as "
        "`mnemon-ls space list` shows it"))
    if found is not None:
        return found
    key = name_key(text)
    named = [r for r in state.all if name_key(r.name) == key]
    found = _only(named, field_name, lambda n, ids: (
        f"{n} spaces are named {named[0].name!r} (ids {ids}); give the id, or rename one "
        "(`mnemon-ls space update ID --name NEW`)"))
    if found is not None:
        return found
    close = suggestions(state.all, text)
    if not close:
        raise InvalidInput(field_name, "is not a registered space id or name", spaceId=_clip(text))
    rule = f"is not a registered space id or name; did you mean {' or '.join(space_label(r) for r in close)}?"
    raise InvalidInput(field_name, rule, spaceId=_clip(text), suggestions=[r.id for r in close])
