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
  (:func:`name_conflict`; checked when a space is created or renamed, and when discovery names a provider's
  namespace). A new name that only *looks* the same as one in use is refused too (Unicode UTS #39: the
  confusable :func:`skeleton` of :func:`name_keys`, with the ``confusable-homoglyphs`` package's copy of
  Unicode's data: Greek ``Ρ`` U+03A1 or Cyrillic ``Р`` U+0420 for Latin ``P``, Cyrillic ``а`` for ``a``);
  a name wholly in another script stays free. Naming a space (:func:`resolve`) still compares by
  :func:`name_key` only. Registries written before this
  rule (or by another tool) may still hold two spaces of one name: naming that name is
  :class:`~mnemon_ls.errors.AmbiguousMatch` listing their ids, never a guess.
- An unknown reference is :class:`~mnemon_ls.errors.InvalidInput` (``is not a registered space id or
  name``) with up to three suggestions (``data.suggestions``: ids): an id or name equal ignoring case, ids
  starting with the reference, then close spellings (:func:`difflib.get_close_matches`, ratio >= 0.6).
"""

from __future__ import annotations

import threading
import unicodedata
from typing import Any, Callable, Iterable

from ..errors import AmbiguousMatch, InvalidInput, type_rule
from ..findings import Finding
from .model import MAX_NAME_CHARS, MAX_SPACE_ID_CHARS
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


#: Marks the confusables data wraps right-to-left glyphs in (LEFT-TO-RIGHT MARK, RIGHT-TO-LEFT MARK): display
#: hints, not part of the glyph.
_DISPLAY_MARKS = dict.fromkeys(map(ord, "\u200e\u200f"))
_prototypes: dict[str, str] | None = None
_prototypes_lock = threading.Lock()


def _prototype_map() -> dict[str, str]:
    """``{character: prototype}`` of Unicode's confusables data (UTS #39 ``confusables.txt``), as the
    ``confusable-homoglyphs`` package ships it (``confusables.json``: for each character the glyphs it can be
    confused with). That data links each prototype with every character mapped to it (a star; a prototype of
    several code points such as ``rn`` for ``m`` is never a source), so each connected group has one
    prototype: its multi-code-point member, else the member linked to all others (the lowest code point
    when two are, as in a pair). Built once per process (about 10,000 characters)."""
    global _prototypes
    with _prototypes_lock:
        if _prototypes is not None:
            return _prototypes
        from confusable_homoglyphs import confusables  # the data loads on import (0.9 MB JSON)

        links: dict[str, set[str]] = {}
        for source, glyphs in confusables.confusables_data.items():
            a = source.translate(_DISPLAY_MARKS)
            for glyph in glyphs:
                b = glyph["c"].translate(_DISPLAY_MARKS)
                if a and b and a != b:
                    links.setdefault(a, set()).add(b)
                    links.setdefault(b, set()).add(a)
        out: dict[str, str] = {}
        seen: set[str] = set()
        for start in links:
            if start in seen:
                continue
            group, todo = {start}, [start]
            while todo:
                for other in links[todo.pop()]:
                    if other not in group:
                        group.add(other)
                        todo.append(other)
            seen |= group
            hubs = [m for m in group if len(links[m]) == len(group) - 1] or list(group)
            multi = [m for m in hubs if len(m) > 1]
            prototype = multi[0] if multi else min(hubs)
            out.update((m, prototype) for m in group if len(m) == 1)
        _prototypes = out
        return out


def skeleton(text: str) -> str:
    """The UTS #39 confusable skeleton of ``text``: NFD, each character replaced by its prototype
    (:func:`_prototype_map`: Cyrillic ``р`` U+0440 and Greek ``ρ`` U+03C1 by Latin ``p``, ``1`` by ``l``,
    ``m`` by ``rn``), NFD again. Two strings with one skeleton look the same to a reader."""
    table = _prototype_map()
    mapped = "".join(table.get(ch, ch) for ch in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)


#: Prefix of the confusable keys in :func:`name_keys` (keeps them apart from :func:`name_key` forms).
SKELETON_PREFIX = "\x00skeleton:"


def name_keys(name: str) -> frozenset[str]:
    """Every comparison form of a space name (or id) under which it may not be taken twice: its
    :func:`name_key`, and (prefixed with :data:`SKELETON_PREFIX`) the confusable :func:`skeleton` of that key
    and of the NFKC name with only white space and format characters normalised (the case a skeleton keeps:
    ``Ill`` and ``lll`` look alike before case folding). Two names conflict when their key sets meet:
    ``Project``, ``project``, Greek ``Ρroject`` (U+03A1) and Cyrillic ``Рroject`` (U+0420) all do; a name
    wholly in another script (``Ελληνικά``, ``项目笔记``) keeps keys of its own."""
    key = name_key(name)
    plain = " ".join("".join(c for c in unicodedata.normalize("NFKC", name) if unicodedata.category(c) != "Cf").split())
    return frozenset({key, SKELETON_PREFIX + skeleton(key), SKELETON_PREFIX + skeleton(plain)})


def space_label(record: SpaceRecord) -> str:
    """How text output names a space: ``<name> (<id>)``, or the id alone when the name is the id."""
    return record.id if record.name == record.id else f"{record.name} ({record.id})"


def name_conflict(records: Iterable[SpaceRecord], name: str, *, except_id: str | None = None) -> SpaceRecord | None:
    """The first space other than ``except_id`` whose name or id is ``name`` ignoring case and width, or
    looks the same (:func:`name_keys`: the confusable skeleton); ``None`` when the name is free. A space
    equal by :func:`name_key` is preferred over one that only looks the same."""
    key, keys = name_key(name), name_keys(name)
    pool = [r for r in records if r.id != except_id]
    exact = next((r for r in pool if key in (name_key(r.name), name_key(r.id))), None)
    return exact or next((r for r in pool if keys & (name_keys(r.name) | name_keys(r.id))), None)


def require_free_name(records: Iterable[SpaceRecord], name: str, *, except_id: str | None = None,
                      field_name: str = "name") -> None:
    """Raise :class:`InvalidInput` naming ``field_name`` and the space holding it (``data.spaceId``) when
    :func:`name_conflict` finds one: ``is already the name of space Work (work)`` for a name equal ignoring
    case and width, ``looks the same as the name of space Project (project) ...`` for a confusable one (Greek
    ``Ρ`` U+03A1 or Cyrillic ``Р`` U+0420 for Latin ``P``)."""
    records = list(records)
    taken = name_conflict(records, name, except_id=except_id)
    if taken is None:
        return
    key = name_key(name)
    if key in (name_key(taken.name), name_key(taken.id)):
        what = "id" if name_key(taken.id) == key and name_key(taken.name) != key else "name"
        raise InvalidInput(field_name, f"is already the {what} of space {space_label(taken)} (space names are unique "
                                       "in a storage root, ignoring case and width; choose another name)",
                           spaceId=taken.id)
    what = "name" if name_keys(name) & name_keys(taken.name) else "id"
    raise InvalidInput(field_name, f"looks the same as the {what} of space {space_label(taken)} (letters of another "
                                   "script that read as these, such as Cyrillic or Greek for Latin, compare by "
                                   "their Unicode confusable skeleton, UTS #39; choose another name)",
                       spaceId=taken.id)


def unique_name(taken_keys: set[str], name: str) -> str:
    """``name``, or ``"<name> (2)"``, ``"<name> (3)"``... the first none of whose :func:`name_keys` is in
    ``taken_keys`` (the :func:`name_key` of every name and id already in the root, and their other
    :func:`name_keys` when confusable names must be kept apart too, as discovery does). The rule ``migrate`` and
    pack import give a space whose name is taken; the caller adds the result's key to ``taken_keys``. The name
    is shortened (trailing spaces dropped) so that name and suffix fit :data:`~.model.MAX_NAME_CHARS` (100
    characters)."""
    from .model import MAX_NAME_CHARS

    candidate, n = name, 1
    while not name_keys(candidate).isdisjoint(taken_keys):
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
        import difflib  # only when a name is not found

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


#: The longest comparison form (:func:`name_key`) a registered id or name can have: NFKC may lengthen one (``ﬃ``
#: is ``ffi``), so a generous multiple of the longest id or name.
_LONGEST_KEY = 4 * max(MAX_SPACE_ID_CHARS, MAX_NAME_CHARS)


def resolve(state: RegistryState, reference: Any, field_name: str = "spaceId") -> SpaceRecord:
    """The registered space ``reference`` names (module doc).

    The order: the id exactly, then the id ignoring case (:func:`fold`), then the name (:func:`name_key`).
    Raises :class:`InvalidInput` naming ``field_name`` (not a string, empty, longer than any id or name, or no such
    space, with
    ``data.spaceId`` = the reference clipped to 80 characters and ``data.suggestions`` = ids when there are
    any) or :class:`AmbiguousMatch` (``data.field``, ``data.spaceIds``) when two or more spaces have that id
    ignoring case, or that name."""
    if not isinstance(reference, str):
        raise InvalidInput(field_name, type_rule("a string (a space id or name)", reference))
    text = reference.strip()
    if not text:
        raise InvalidInput(field_name, "is required")
    if len(name_key(text)) > _LONGEST_KEY:  # names no space; and "did you mean" over it took seconds
        raise InvalidInput(field_name, f"names no space: a space id has at most {MAX_SPACE_ID_CHARS} characters and a "
                                       f"name at most {MAX_NAME_CHARS} (got {len(text)} characters)",
                           spaceId=_clip(text))
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
    state.require_native()  # perhaps a native space of a catalog written by a newer version (FormatTooNew)
    close = suggestions(state.all, text)
    if not close:
        raise InvalidInput(field_name, "is not a registered space id or name", spaceId=_clip(text))
    rule = f"is not a registered space id or name; did you mean {' or '.join(space_label(r) for r in close)}?"
    raise InvalidInput(field_name, rule, spaceId=_clip(text), suggestions=[r.id for r in close])
