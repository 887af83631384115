"""Human-readable text of the CLI's Memory Spaces and recall results (``--json`` prints the data itself), and
the messages the language server's editor commands show (:class:`~mnemon_ls.ops.surfaces.LspCommand` ``message``).

Each function takes the dict an operation returned (``SpacesService`` in :mod:`mnemon_ls.spaces.service`)
and gives lines a person reads; nothing here changes or re-computes a result.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping


def _plural(n: Any, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _scalar(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def plain(data: Any, indent: str = "") -> list[str]:
    """Any JSON-like value as indented ``key: value`` lines (lists one item a line), for results without
    a dedicated text; never Python or JSON syntax."""
    lines: list[str] = []
    if isinstance(data, Mapping):
        for key, value in data.items():
            if isinstance(value, (Mapping, list)) and value:
                lines.append(f"{indent}{key}:")
                lines.extend(plain(value, indent + "  "))
            elif isinstance(value, (Mapping, list)):
                lines.append(f"{indent}{key}: none")
            else:
                lines.append(f"{indent}{key}: {_scalar(value)}")
    elif isinstance(data, list):
        for item in data:
            if isinstance(item, (Mapping, list)):
                sub = plain(item, indent + "  ")
                lines.append(f"{indent}- " + sub[0].lstrip() if sub else f"{indent}-")
                lines.extend(sub[1:])
            else:
                lines.append(f"{indent}- {_scalar(item)}")
    else:
        lines.append(f"{indent}{_scalar(data)}")
    return lines


def provider_text(view: Mapping[str, Any]) -> str:
    """The provider of a space as every CLI text names it: its provider id (DESIGN.md vocabulary:
    ``mnemon-native``, or ``mnemon-cli`` when the native store is driven through the ``mnemon`` binary,
    else the third-party id such as ``holographic``), the word ``provider list`` and ``--provider`` use."""
    if view.get("kind") == "native" and view.get("driver") == "cli":
        return "mnemon-cli"
    return str(view.get("providerId") or "mnemon-native")


def space_line(view: Mapping[str, Any]) -> str:
    """``<id>  <name>  (active|inactive, <provider id>)``."""
    state = "active" if view.get("active") else "inactive"
    return f"{view.get('id')}  {view.get('name')}  ({state}, {provider_text(view)})"


def space_list_text(views: list[Mapping[str, Any]], *, creatable: bool = True) -> str:
    """``space list``: ``* <id>  <name>  (<provider id>)`` (``*`` marks an active space), the description
    below, and a count line. None: an invitation to ``space create``, unless not ``creatable`` (a catalog of a
    newer version: the note on stderr says why no space is shown)."""
    if not views:
        if not creatable:
            return "no Memory Space can be shown here (see the note above)"
        return "no Memory Space yet (`mnemon-ls space create`)"
    lines = [f"{'*' if v.get('active') else ' '} {v.get('id')}  {v.get('name')}  ({provider_text(v)})"
             f"\n      {v.get('description', '')}" for v in views]
    active = sum(1 for v in views if v.get("active"))
    lines.append(f"{_plural(len(views), 'space')}, {active} active (* marks them)")
    return "\n".join(lines)


def semantic_status_line(semantic: Mapping[str, Any], space_id: Any) -> str:
    """The ``semantic:`` line of ``space status`` from its ``status.semantic`` block
    (:meth:`mnemon_ls.semantic.spaces.SpaceSemantic.status`): coverage ``N of M items embedded with <model>``,
    or why recall of the space is keyword-only."""
    state = semantic.get("state")
    if state == "off":
        reason = semantic.get("reason") or "semantic recall is not set up in this process"
        return f"  semantic: off, recall is keyword-only ({reason})"
    if semantic.get("unusable"):
        return (f"  semantic: keyword-only: {semantic['unusable']}; it is left as it is, move it away and the next "
                "recall rebuilds it")
    if state == "failed":
        return f"  semantic: keyword-only: {semantic.get('lastError') or 'the model did not load'}"
    total, embedded = semantic.get("total"), semantic.get("embedded") or 0
    if total is None:
        return f"  semantic: {state} (no items indexed yet)"
    line = f"  semantic: {embedded} of {_plural(total, 'item')} embedded with {semantic.get('model')}"
    if embedded < total:
        left = total - embedded
        line += (f"; {'the other one is' if left == 1 else f'the other {left} are'} found by keyword only "
                 f"(`mnemon-ls space embed {space_id}` embeds {'it' if left == 1 else 'them'} now)")
    others = semantic.get("otherModels") or []
    if others:
        line += "; vectors of other models kept aside: " + ", ".join(
            f"{m.get('model')}/{m.get('dim')} ({m.get('vectors')})" for m in others)
    return line


def space_status_text(data: Mapping[str, Any]) -> str:
    """``space status``: the space's line, item counts, categories, store and index files."""
    view, status = data.get("space") or {}, data.get("status") or {}
    lines = [space_line(view)]
    if view.get("description"):
        lines.append(f"  {view['description']}")
    if "total_insights" in status:
        lines.append(f"  items: {status['total_insights']} ({status.get('deleted_insights', 0)} deleted), "
                     f"links: {status.get('edge_count', 0)}")
        categories = status.get("by_category") or {}
        if categories:
            lines.append("  categories: " + ", ".join(f"{k} {v}" for k, v in categories.items()))
        if status.get("db_path"):  # (a provider that does not know its store's size says 0 or nothing)
            size = status.get("db_size_bytes")
            said = [f"{size} bytes"] if isinstance(size, int) and size > 0 else []
            said += ["read-only"] if status.get("read_only") else []
            lines.append(f"  store: {status['db_path']}" + (f" ({', '.join(said)})" if said else ""))
        index = status.get("index") or {}
        if index.get("path"):
            lines.append(f"  index: {index['path']} ({_plural(index.get('items', 0), 'item')}, "
                         f"{index.get('size_bytes', '?')} bytes)")
        if isinstance(status.get("semantic"), Mapping):
            lines.append(semantic_status_line(status["semantic"], view.get("id")))
        if status.get("notice"):
            lines.append(f"  notice: {status['notice']}")
    else:  # another provider's status object
        lines.extend(plain(status, "  "))
    return "\n".join(lines)


def merge_text(data: Mapping[str, Any]) -> str:
    """``space merge``: the overall status, then one line per source space."""
    lines = [f"merge into {data.get('targetId')}: {data.get('status')}"]
    for source in data.get("sources") or []:
        errors = source.get("errors") or []
        line = (f"  {source.get('spaceId')}: {_plural(source.get('imported', 0), 'item')} imported, "
                f"{source.get('skipped', 0)} already there, of {source.get('items', 0)}; {source.get('status')}")
        if source.get("deactivated"):
            line += " (deactivated)"
        lines.append(line)
        lines.extend(f"    error: {e if not isinstance(e, Mapping) else e.get('message', e)}" for e in errors)
    return "\n".join(lines)


def related_text(data: Mapping[str, Any]) -> str:
    """``space related``: the starting item, then one line per related item (depth, edge, content)."""
    items = data.get("items") or []
    lines = [f"related to {printed_id(data.get('id'))} in {data.get('spaceName') or data.get('spaceId')}: "
             f"{_plural(len(items), 'item')}"]
    for item in items:
        content = " ".join(str(item.get("content", "")).split())
        lines.append(f"  depth {item.get('depth')} {item.get('edgeType') or '-'}  {printed_id(item.get('id'))}: "
                     f"{content}")
    lines.extend(f"note: {n}" for n in data.get("notices", []))
    return "\n".join(lines)


def space_text(action: str, data: Mapping[str, Any], space_id: Any = "ID") -> str:
    """The text of a ``mnemon-ls space <action>`` result (everything but ``list``); ``space_id`` is the space
    the command named (``embed``'s result does not carry it)."""
    if action == "status":
        return space_status_text(data)
    if action == "embed":
        return semantic_status_line(data, space_id).strip()
    if action == "reindex":
        return f"reindexed: {_plural(data.get('items', 0), 'item')} in {data.get('seconds', 0):g} s"
    if action == "merge":
        return merge_text(data)
    if action == "related":
        return related_text(data)
    if "message" in data:
        return str(data["message"])
    if "active" in data and "name" in data:
        return space_line(data)
    return "\n".join(plain(data))


def recall_hidden_lines(hidden: Mapping[str, Any]) -> list[str]:
    """Lines saying what branch scope hid from a recall (none when nothing was hidden)."""
    lines = []
    other, detached = hidden.get("otherBranch") or 0, hidden.get("detachedHead") or 0
    if other:
        lines.append(f"hidden: {_plural(other, 'item')} scoped to another git branch")
    if detached:
        lines.append(f"hidden: {_plural(detached, 'branch-scoped item')} (no current git branch)")
    return lines


def continued(text: str, indent: str) -> str:
    """``text`` (an item's content) as the rest of one result line: its first line as it is, each further line
    (any line break ``str.splitlines`` knows: ``\n``, ``\r``, ``\u2028``...) on a line of its own after ``indent``
    and ``| ``, so a content cannot begin a line of its own and forge a result or its metadata line."""
    lines = text.splitlines()
    if len(lines) <= 1:
        return lines[0] if lines else ""
    return lines[0] + "".join(f"\n{indent}| {line}" for line in lines[1:])


def printed_id(value: Any) -> str:
    """An item id as a line of text shows it: whole, each control or formatting character escaped (``\\n``,
    ``\\x1b``: :func:`~mnemon_ls.errors.echo_value`), so an id another program stored in ``mnemon.db`` with a
    newline in it cannot end the line and forge the next one."""
    from ..errors import echo_value

    text = str(value)
    return text if text.isprintable() else echo_value(text, 4096)


def recall_ids(results: list[Mapping[str, Any]], takes_short: Callable[[str], bool]) -> list[str]:
    """The id each recall result is printed with, in order: its first
    :data:`~mnemon_ls.spaces.model.MIN_ITEM_ID_PREFIX` (8) characters where its space takes a short id
    (``takes_short(spaceId)``: :meth:`~mnemon_ls.spaces.service_recall.SpacesRecall.takes_short_ids`; an error
    counts as no) and no other result of that space starts so, else the full id; an id holding a control or
    formatting character in full, escaped (:func:`printed_id`). ``space forget``, ``space link``
    and ``space related`` take either."""
    from ..spaces.model import MIN_ITEM_ID_PREFIX as SHORT

    takes: dict[str, bool] = {}
    starts: dict[tuple[str, str], int] = {}
    for item in results:
        space, ident = str(item.get("spaceId")), str(item.get("id"))
        if space not in takes:
            try:
                takes[space] = bool(takes_short(space))
            except Exception:  # noqa: BLE001 - a space that cannot be looked at: its ids are printed in full
                takes[space] = False
        starts[(space, ident[:SHORT])] = starts.get((space, ident[:SHORT]), 0) + 1
    shown = []
    for item in results:
        space, ident = str(item.get("spaceId")), str(item.get("id"))
        short = takes[space] and len(ident) > SHORT and starts[(space, ident[:SHORT])] == 1 and ident.isprintable()
        shown.append(ident[:SHORT] if short else printed_id(ident))
    return shown


def recall_match_label(item: Mapping[str, Any]) -> str:
    """The label a recall result found by meaning alone gets in text (CLI and MCP alike):
    `` (by meaning alone: cosine 0.868)`` for a ``matchedVia`` that says so (``vector`` of a native space,
    ``<engine>-vector`` of a provider such as Mem0's ``mem0-vector``: the rule of
    :func:`mnemon_ls.spaces.service_recall.meaning_only_via`) with a ``similarity.cosine`` (3 decimals),
    empty otherwise."""
    from ..spaces.service_recall import meaning_only_via

    similarity = item.get("similarity") or {}
    if meaning_only_via(item.get("matchedVia")) and isinstance(similarity.get("cosine"), (int, float)):
        return f" (by meaning alone: cosine {similarity['cosine']:.3f})"
    return ""


def document_match_label(hit: Mapping[str, Any]) -> str:
    """The label a Documents search hit found by meaning alone gets in text (`` (low, by meaning alone:
    cosine 0.810)`` for ``matched`` ``semantic-low``, `` (by meaning alone: cosine 0.835)`` for ``semantic``;
    without a ``similarity.cosine`` the same without the cosine; empty otherwise), worded as recall words its
    vector-only items."""
    matched = hit.get("matched")
    if matched not in ("semantic", "semantic-low"):
        return ""
    similarity = hit.get("similarity") or {}
    cosine = similarity.get("cosine")
    detail = f": cosine {cosine:.3f}" if isinstance(cosine, (int, float)) and not isinstance(cosine, bool) else ""
    return f" (low, by meaning alone{detail})" if matched == "semantic-low" else f" (by meaning alone{detail})"


def withheld_line(data: Mapping[str, Any], noun: str = "result",
                  why: str = "found by meaning alone with low confidence", ask: str | None = None) -> str | None:
    """The line saying how many results an assistant was not sent (``data["withheld"]["lowConfidence"]`` of
    a recall: ``why`` = ``with low confidence``; of a Documents search: found by meaning alone with low
    confidence, the default), or ``None`` when none was: ``withheld: 3 results found by meaning alone with low
    confidence (not sent)``; ``ask`` (how to have them sent) follows ``not sent``: ``(not sent;
    include_low_confidence: true sends them)``."""
    withheld = data.get("withheld")
    count = withheld.get("lowConfidence") if isinstance(withheld, Mapping) else None
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        return None
    return f"withheld: {_plural(count, noun)} {why} (not sent{'; ' + ask if ask else ''})"


def remember_line(data: Mapping[str, Any]) -> str:
    """The first line a person reads of a remember (``data``: a ``WriteReceipt.to_dict()``): the receipt's message
    (``Remembered in Team.``, ``Already remembered in Team as ID; no new item was stored.``; its status when it has
    none), then the space and the item's id in parentheses when the message does not name them: ``Remembered in
    Team (id 3f2a...).``. The status is not put before the message (``committed: Remembered in ...`` said it
    twice); ``--json`` carries it."""
    message = " ".join(str(data.get("message") or data.get("status") or "").split())
    extra = []
    space = data.get("spaceName") or data.get("spaceId")
    if space and str(space) not in message:
        extra.append(f"space {space}")
    if data.get("id") and str(data["id"]) not in message:
        extra.append(f"id {data['id']}")
    if not extra:
        return message
    return f"{message.rstrip('.')} ({', '.join(extra)})."


def activation_note(data: Mapping[str, Any], *, plain_write: str, name_it: str, deactivate: str) -> str | None:
    """What a remember that activated its space changed (seed 000: a write activates an inactive target;
    without a target exactly one space must be active), or ``None`` when it activated nothing. ``data`` is
    a ``WriteReceipt.to_dict()`` (``activated``, ``spaceName``, ``activeSpaces``: ``[{id, name}]`` after the
    write); the surface's words: ``plain_write`` a write without a target (```mnemon-ls remember``` without
    --space), ``name_it`` how to name this space (``--space Team``), ``deactivate`` the command that makes
    it inactive again. One line, e.g. ``Team was inactive: this write made it active. 2 spaces are active
    now (Default, Team), so mnemon-ls remember without --space is refused until only one is: name the
    space (--space Team), or make Team inactive again with mnemon-ls space deactivate Team.``"""
    if not data.get("activated"):
        return None
    name = data.get("spaceName") or data.get("spaceId")
    active = [str(s.get("name") or s.get("id")) for s in data.get("activeSpaces") or []]
    head = f"{name} was inactive: this write made it active."
    if len(active) <= 1:
        return (f"{head} It is the only active space, so {plain_write} now writes into it; {deactivate} makes it "
                "inactive again.")
    listed = ", ".join(active[:5]) + (", ..." if len(active) > 5 else "")
    return (f"{head} {_plural(len(active), 'space')} are active now ({listed}), so {plain_write} is refused until "
            f"only one is: name the space ({name_it}), or make {name} inactive again with {deactivate}.")


# ------------------------------------------------------------------ the editor commands' messages


def remembered_in_memory(receipt: Mapping[str, Any], params: Any) -> str:
    """The message of "Remember selection" into MEMORY.md (``runtime.mutate``): the receipt's message, the
    branches the entry was scoped to (``params.request.branches``, when it changed anything), the entry count
    and the usage in bytes (``Entry added. MEMORY.md for branch main: 3 entries, 120/10240 bytes``)."""
    branches = params.request.branches
    scope = f" for branch {', '.join(branches)}" if branches and receipt["changed"] else ""
    count, usage = receipt["entryCount"], receipt["usage"]
    return (f"{receipt['message']} MEMORY.md{scope}: {count} {'entry' if count == 1 else 'entries'}, "
            f"{usage['used']}/{usage['limit']} bytes")


def remembered_in_space(data: Mapping[str, Any], _params: Any = None) -> str:
    """The message of "Remember selection" into a Memory Space (``spaces.remember``): the receipt's message (else its
    status), the space, and :func:`activation_note` in an editor's words."""
    import shlex

    name = shlex.quote(str(data.get("spaceName") or data.get("spaceId")))
    note = activation_note(data, plain_write="a remember that names no space", name_it=f"name {name}",
                           deactivate=f"`mnemon-ls space deactivate {name}`")
    return f"{data.get('message') or data['status']} (space {data.get('spaceName')})" + (f" {note}" if note else "")


def document_updated(data: Mapping[str, Any], _params: Any = None) -> str:
    """The message of "Update document from file" (``documents.updateFromFile``): the document's title and
    new revision; for a file that already is the document's body, ``document unchanged: <title>: no change;
    revision N kept``; for a file whose text a hand edit of the managed file already held, ``document adopted:
    <title> (revision N): <notice>``; each file kept under ``documents/edits/`` follows (:func:`preserved_lines`)."""
    document = data["document"]
    kept = "".join(f"; {line}" for line in preserved_lines(data))
    if data.get("action") == "unchanged":
        return f"document unchanged: {document['title']}: {'; '.join(data.get('notices') or ())}{kept}"
    if data.get("action") == "adopted":
        return (f"document adopted: {document['title']} (revision {document['revision']}): "
                f"{'; '.join(data.get('notices') or ())}{kept}")
    return f"document updated: {document['title']} (revision {document['revision']}){kept}"


def preserved_lines(data: Mapping[str, Any]) -> list[str]:
    """One line per file a Documents write kept rather than replace or remove (its result's ``preserved``:
    ``{what was on disk: where it is kept}``, a hand edit or a save made during the write, under
    ``documents/edits/``): ``kept <what> at <where>``; ``[]`` when it kept none."""
    preserved = data.get("preserved")
    if not isinstance(preserved, Mapping):
        return []
    return [f"kept {name} at {saved}" for name, saved in preserved.items()]


def citation_text(cite: dict[str, Any]) -> str:
    """A citation with its freshness in a person's words (:func:`~mnemon_ls.citations.model.freshness_words`):
    ``src/app.py:10-24 (fresh)``, ``... (moved to 12-26)``, ``... (renamed to src/b.py)``,
    ``f.py:3 [parse] (changed)``."""
    lines = str(cite["startLine"]) if cite["startLine"] == cite["endLine"] else f"{cite['startLine']}-{cite['endLine']}"
    symbol = f" [{cite['symbol']}]" if cite.get("symbol") else ""
    from ..citations.model import freshness_words

    return f"{cite['path']}:{lines}{symbol} ({freshness_words(cite)})"


def memory_name(named: dict[str, Any]) -> str:
    """A memory a receipt names (``{source, key, id?, spaceId?, scope?, preview?}``) in a person's words:
    ``spaces default/4f1bf04b "retry backoff doubles"``."""
    if named.get("source") == "spaces":
        where = f"{named.get('spaceId')}/{printed_id(str(named.get('id'))[:8])}"
    elif named.get("source") in ("documents", "records"):
        where = (f"{named['scope']}/" if named.get("scope") else "") + str(named.get("id"))[:8]
    else:
        where = "MEMORY.md"
    preview = f" \"{named['preview']}\"" if named.get("preview") else ""
    return f"{named.get('source')} {where}{preview}"


def superseding_lines(data: dict[str, Any]) -> list[str]:
    """``supersedes: ...`` (a runtime replace with citations) and ``possibly superseded: ...`` (memories citing
    the same lines as this write) lines of a write's receipt; ``[]`` when it names none."""
    lines = []
    if data.get("supersedes"):
        lines.append(f"supersedes: {memory_name(data['supersedes'])}")
    if data.get("possiblySuperseded"):
        lines.append("possibly superseded (cites the same lines; check it and update or remove it): "
                     + "; ".join(memory_name(n) for n in data["possiblySuperseded"]))
    return lines


def state_label(item: dict[str, Any]) -> str:
    """`` · code changed`` / `` · review due`` labels of a read item with ``freshness`` not fresh or
    ``review`` due (``""`` otherwise)."""
    label = ""
    if item.get("freshness") not in (None, "fresh"):
        label += f" · cited code {item['freshness']}"
    if item.get("review") == "due":
        label += " · review due"
    for source in item.get("sourcePathFreshness") or ():
        if source.get("freshness") != "fresh":
            label += f" · source {source['path']} {source['freshness']}"
    return label
