"""The wake snapshot: the bounded, model-facing projection of Runtime memory for one turn.

Layout (``shared/reference/dsh-mnemon.md`` section 3.6, vN, extended by DESIGN.md section 4)::

    MNEMON RUNTIME MEMORY SNAPSHOT
    Revision: <sha256 hex of what this snapshot shows: see view_revision>
    Store revision: <sha256 hex of the effective store (the write fence; the same on every branch)>
    Git branch: <name>[ (<reason>; ]<n> branch-scoped entr(y|ies) hidden)]   or   Git branch: none (<why>; ...)
    <one explanatory line>
    [Archived: <n> entries left MEMORY.md ... (capacity maintenance, issue 9)]
    [Guidance: <one routing line, guidance.WAKE_GUIDANCE_LINE, when the caller gives it>]
    [Notice: <why the store could not be read as is>]
    [Omitted: <n> entries to fit <budget> characters: MEMORY.md entries <numbers> [and USER.md entries
     <numbers>], as `mnemon-ls runtime list [--target memory|user]` numbers and shows them (...); ...]
    <blank>
    Contents of USER.md (user profile; entries: <visible>; UTF-8 bytes: <used>/<limit>)
    <runtime-memory-file name="USER.md">
    [importance=<imp>; created=<age>; updated=<age>[; branches=<b1>,<b2>]]
    <content>
    §
    ...            (or "(empty)")
    </runtime-memory-file>
    <blank>
    Contents of MEMORY.md (working reference; entries: <visible>; UTF-8 bytes: <used>/<limit>)
    <runtime-memory-file name="MEMORY.md">
    ...
    </runtime-memory-file>

Content never opens or closes the wrapper: a ``<runtime-memory-file`` or ``</runtime-memory-file`` tag in an
entry is shown with ``&lt;`` (:func:`neutralise_wrapper_tags`; the hook's fallback does the same).
Ages are whole 24-hour days since the stored timestamp, all from one capture time; ``future`` when the
time is ahead of it, ``unknown`` when unparseable. ``entries:`` counts the entries visible on the branch;
byte counts cover the whole store. Branch filtering happens only here, never in the files. The budget is
in characters (Unicode code points): when the text would exceed it, whole entries are dropped, every
MEMORY.md entry before any USER.md entry (the user profile is small, at most ``userLimitBytes``, and is
what an assistant most needs), within one file low importance first, then least recently updated. The
``Omitted:`` line names every entry it left out by its number in stored order (the numbers ``mnemon-ls
runtime list`` prints, hidden branch-scoped entries counted) and the command that shows them, so a
budgeted wake (the SessionStart hook's 12,000 characters, ``budgetChars``, ``wakeBudgetChars``) either
shows everything the full wake shows or says exactly what it left out. USER.md entries are dropped only
when the budget cannot hold the header and the whole of USER.md. Only when not one entry would fit do
the explanation and guidance lines give way (the smallest budgets, ~1 KiB).

Where this differs from the TypeScript plugin's vN layout (reference section 3.6): its ``Revision:`` is
the store revision, identical on two branches whose snapshots differ. Here ``Revision:`` identifies
the snapshot's visible content and branch (:func:`view_revision`) and ``Store revision:`` is the store's;
entries kept to branches say so (``branches=``) so an assistant knows they do not hold everywhere.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from .model import DELIMITER, Entry, Target, parse_timestamp_ms

HEADER = "MNEMON RUNTIME MEMORY SNAPSHOT"
EXPLANATION = (
    "Bracketed lines are annotations, not memory content: importance, branches (the entry holds only there) "
    "and ages in whole days at this snapshot ('future'/'unknown': ahead or unreadable); current instructions "
    "outrank stored memory; oldText for replace/remove matches the content line only."
)
_RANK = {"low": 0, "normal": 1, "critical": 2}
_DAY_MS = 86_400_000
_REVISION_PREFIX = "Revision: "
_STORE_REVISION_PREFIX = "Store revision: "
_AGES = re.compile(r"^(\[importance=[^;\]\n]*; )created=[^;\]\n]*; updated=[^;\]\n]*", re.MULTILINE)


def view_revision(text: str) -> str:
    """sha256 hex identifying what a wake snapshot ``text`` shows: its text without the ``Revision:`` and
    ``Store revision:`` lines and with the entries' ages left out (ages move with the clock, not with
    memory). Two snapshots with the same visible entries, covers and branch line have the same view
    revision; a different branch whose visible content differs, or any visible change, gives another."""
    lines = [line for line in text.split("\n")
             if not line.startswith((_REVISION_PREFIX, _STORE_REVISION_PREFIX))]
    masked = _AGES.sub(r"\1", "\n".join(lines))
    return hashlib.sha256(masked.encode("utf-8")).hexdigest()


def stamp_view_revision(text: str) -> tuple[str, str]:
    """``text`` with its first ``Revision:`` line set to :func:`view_revision` of it, and that revision
    (idempotent: the line itself is not hashed). Callers that append to a snapshot re-stamp it."""
    revision = view_revision(text)
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.startswith(_REVISION_PREFIX):
            lines[index] = _REVISION_PREFIX + revision
            break
    return "\n".join(lines), revision


@dataclass(frozen=True, slots=True)
class WakeSnapshot:
    """A rendered wake snapshot.

    ``text`` the snapshot; ``revision`` the view revision (:func:`view_revision`: what the text shows);
    ``store_revision`` the effective store revision (the write fence); ``branch`` the branch used for
    filtering (``None`` when none is known); ``branch_reason`` why (or how) the branch was determined;
    ``hidden`` branch-scoped entries hidden; ``omitted`` entries dropped for the budget; ``chars`` the
    text length in code points; ``notices`` store problems shown in the text.
    """

    text: str
    revision: str
    branch: str | None
    branch_reason: str | None
    hidden: int
    omitted: int
    chars: int
    notices: tuple[str, ...] = field(default=())
    store_revision: str = ""
    #: Entries capacity maintenance moved out of MEMORY.md (lineage lines), 0 when none.
    archived: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: ``{text, revision, storeRevision, branch, branchReason, hidden, omitted, chars, notices,
        archived}``."""
        return {
            "text": self.text,
            "revision": self.revision,
            "storeRevision": self.store_revision,
            "branch": self.branch,
            "branchReason": self.branch_reason,
            "hidden": self.hidden,
            "omitted": self.omitted,
            "chars": self.chars,
            "notices": list(self.notices),
            "archived": self.archived,
        }


def age_label(timestamp: str, now_ms: int) -> str:
    """``"<n>d"`` whole days from ``timestamp`` to ``now_ms`` (epoch ms); ``future`` / ``unknown``."""
    moment = parse_timestamp_ms(timestamp)
    if moment is None:
        return "unknown"
    if moment > now_ms:
        return "future"
    return f"{(now_ms - moment) // _DAY_MS}d"


def ages_valid_until(entries: Iterable[Entry], now_ms: int) -> int:
    """The first epoch millisecond after ``now_ms`` at which :func:`age_label` of a timestamp of ``entries``
    (created, updated) reads differently than at ``now_ms``: a ``future`` one when the time reaches it, a
    ``<n>d`` one when the next whole day has passed (an unreadable one never changes). Between the two, every
    label :func:`render_entry` writes for them is the same."""
    until = _FOREVER
    for entry in entries:
        for timestamp in (entry.created_at, entry.updated_at):
            moment = parse_timestamp_ms(timestamp)
            if moment is None:
                continue
            change = moment if moment > now_ms else moment + ((now_ms - moment) // _DAY_MS + 1) * _DAY_MS
            if change < until:
                until = change
    return until


#: Later than any time a wake is rendered at (epoch ms, year 9999).
_FOREVER = 253_402_300_800_000


#: The tag that wraps each file's content in the wake (and in the SessionStart hook's fallback).
WRAPPER_TAG = "runtime-memory-file"
_WRAPPER_TAG_START = re.compile(r"<(?=\s*/?\s*" + WRAPPER_TAG + r")", re.IGNORECASE)


def neutralise_wrapper_tags(text: str) -> str:
    """``text`` (a file's or an entry's content, as stored) with the ``<`` of every opening or closing
    :data:`WRAPPER_TAG` tag in it (any case, spaces inside the tag allowed: ``</runtime-memory-file>``,
    ``< /RUNTIME-MEMORY-FILE>``) written ``&lt;``: content, imported from anywhere, can never close (or open) the
    tag the wake wraps it in, so nothing after it reads as outside the file. Everything else is unchanged."""
    return _WRAPPER_TAG_START.sub("&lt;", text) if "<" in text else text  # most texts hold no "<": no regex


def render_entry(entry: Entry, now_ms: int, mark: str | None = None) -> str:
    """The two lines of one entry: ``[importance=...; created=Nd; updated=Nd]`` (plus ``; branches=a,b``
    for an entry kept to git branches, and ``; <mark>`` when the caller marks it: citations that are not fresh,
    ``review due``) then the content, its wrapper tags neutralised (:func:`neutralise_wrapper_tags`)."""
    scope = f"; branches={','.join(entry.branches)}" if entry.branches else ""
    note = f"; {mark}" if mark else ""
    return (
        f"[importance={entry.importance}; created={age_label(entry.created_at, now_ms)}; "
        f"updated={age_label(entry.updated_at, now_ms)}{scope}{note}]\n{neutralise_wrapper_tags(entry.content)}"
    )


def _plural(n: int) -> str:
    return f"{n} branch-scoped {'entry' if n == 1 else 'entries'}"


def branch_line(branch: str | None, reason: str | None, scoped: int, hidden: int, policy: str) -> str:
    """The ``Git branch:`` line (see module doc): the branch or why there is none, and what was hidden."""
    parts = [reason] if reason else []
    if branch is not None:
        if hidden:
            parts.append(f"{_plural(hidden)} hidden")
        return f"Git branch: {branch}" + (f" ({'; '.join(parts)})" if parts else "")
    if scoped:
        if policy == "show":
            parts.append(f"{_plural(scoped)} shown (detachedHeadPolicy=show)")
        else:
            parts.append(f"{_plural(hidden)} hidden until a branch is known")
    return "Git branch: none" + (f" ({'; '.join(parts)})" if parts else "")


def render_wake(
    *,
    user_entries: Sequence[Entry],
    memory_entries: Sequence[Entry],
    revision: str,
    used: dict[Target, int],
    limits: dict[Target, int],
    branch: str | None,
    branch_reason: str | None,
    now_ms: int,
    budget_chars: int,
    detached_head_policy: str = "hide",
    notices: Sequence[str] = (),
    archived: tuple[int, int] = (0, 0),
    guidance: str | None = None,
    covers: Sequence[str] = (),
    marks: Mapping[tuple[str, str], str] | None = None,
    mark_lines: Sequence[str] = (),
) -> WakeSnapshot:
    """Render the wake snapshot of the effective entries (user from the user root, memory from the root).

    ``used`` / ``limits`` are UTF-8 bytes per target over the whole store; ``now_ms`` the single capture
    time (epoch milliseconds); ``budget_chars`` the largest text in code points. With ``branch=None``
    branch-scoped memory entries are hidden unless ``detached_head_policy == "show"``. ``revision`` is
    the store revision (the ``Store revision:`` line); the ``Revision:`` line is :func:`view_revision`.
    ``user_entries`` / ``memory_entries`` are in stored order: the ``Omitted:`` line numbers entries by
    their 1-based position there (as ``mnemon-ls runtime list`` does). Entries dropped for the budget go
    MEMORY.md first, then USER.md (module doc).
    ``archived`` is ``(into Memory Spaces, into the local archive)``: entries capacity maintenance moved out
    of MEMORY.md, counted in the ``Archived:`` line (none when both are 0). ``guidance`` is one line shown
    after the explanation (``None``: none). ``covers`` are blocks appended after the runtime memory files, each
    after a blank line (the wake's covers of the other tiers, already within their own budget: ``budget_chars``
    bounds the text before them); the view revision covers them too. ``marks`` maps ``(target, content)`` of an
    entry to a short annotation appended to its bracketed line (:func:`render_entry`); ``mark_lines`` are header
    lines shown once after the guidance (what the marks mean and how many there are), given way like it at the
    smallest budgets.
    """
    show_all = branch is None and detached_head_policy == "show"
    scoped = sum(1 for e in memory_entries if e.branches)
    visible_memory = [e for e in memory_entries if show_all or e.visible_on(branch)]
    hidden = len(memory_entries) - len(visible_memory)
    visible = {"user": list(user_entries), "memory": visible_memory}
    marks = marks or {}
    rendered = {id(e): render_entry(e, now_ms, marks.get((target, e.content)))
                for target in visible for e in visible[target]}

    head = [HEADER, _REVISION_PREFIX + "0" * 64, _STORE_REVISION_PREFIX + revision,
            branch_line(branch, branch_reason, scoped, hidden, detached_head_policy), EXPLANATION]
    if sum(archived):
        head.append(archived_line(*archived))
    if guidance:
        head.append(guidance)
    head.extend(mark_lines)
    fixed = len(head)
    head.extend(f"Notice: {notice}" for notice in notices)

    number = {id(e): index for target in visible for index, e in enumerate(
        user_entries if target == "user" else memory_entries, 1)}

    def assemble(kept: dict[Target, list[Entry]], omitted: dict[Target, list[int]], compact: bool = False) -> str:
        lines = list(head)
        if any(omitted.values()):
            lines.append(omitted_line(omitted, {t: len(visible[t]) for t in visible}, budget_chars, compact))
        for target, title, name in (("user", "user profile", "USER.md"), ("memory", "working reference", "MEMORY.md")):
            body = DELIMITER.join(rendered[id(e)] for e in kept[target]) or "(empty)"
            lines += [
                "",
                f"Contents of {name} ({title}; entries: {len(visible[target])}; UTF-8 bytes: "
                f"{used[target]}/{limits[target]})",
                f'<runtime-memory-file name="{name}">',
                body,
                "</runtime-memory-file>",
            ]
        return "\n".join(lines)

    def fit() -> tuple[dict[Target, list[Entry]], dict[Target, list[int]], str]:
        """Drop whole entries (MEMORY.md before USER.md, then lowest rank first) until the text with the
        current ``head`` fits."""
        kept = {t: list(v) for t, v in visible.items()}
        omitted: dict[Target, list[int]] = {"user": [], "memory": []}
        text = assemble(kept, omitted)
        if len(text) <= budget_chars:
            return kept, omitted, text
        order = sorted(
            ((t, i, e) for t in ("memory", "user") for i, e in enumerate(visible[t])),
            key=lambda item: (0 if item[0] == "memory" else 1, _RANK[item[2].importance],
                              parse_timestamp_ms(item[2].updated_at) or -1, item[1]),
        )
        dropped: set[int] = set()
        position = 0

        def drop_next() -> None:
            nonlocal position
            target, _, entry = order[position]
            position += 1
            dropped.add(id(entry))
            omitted[target].append(number[id(entry)])

        # Estimate by rendered size first, then confirm with real renders (the Omitted line adds length;
        # each number it names is shorter than the entry it stands for, so every drop shortens the text).
        excess = len(text) - budget_chars
        while excess > 0 and position < len(order):
            excess -= len(rendered[id(order[position][2])]) + len(DELIMITER)
            drop_next()
        while True:
            kept = {t: [e for e in visible[t] if id(e) not in dropped] for t in visible}
            text = assemble(kept, omitted)
            if len(text) <= budget_chars:
                return kept, omitted, text
            if position >= len(order):
                # Everything is dropped: "all <n>" names the same entries in fewer characters.
                return kept, omitted, assemble(kept, omitted, compact=True)
            drop_next()

    kept, omitted, text = fit()
    if len(text) > budget_chars and notices:
        # Even with every entry dropped the notices do not fit: keep one short notice instead (the full
        # reasons stay in ``notices`` and in `mnemon-ls doctor`).
        del head[fixed:]
        head.append(f"Notice: {len(notices)} runtime memory file(s) could not be read as is; run `mnemon-ls doctor`.")
        kept, omitted, text = fit()
    if fixed > 4 and (len(text) > budget_chars or (any(visible.values()) and not any(kept.values()))):
        # The smallest budgets: an entry outranks the explanation and guidance lines, which go first.
        saved = head[4:fixed]
        del head[4:fixed]
        trial = fit()
        if len(trial[2]) <= budget_chars and (any(trial[0].values()) or len(text) > budget_chars):
            kept, omitted, text = trial
        else:
            head[4:4] = saved
    if covers:
        text = "\n\n".join([text, *covers])
    text, shown = stamp_view_revision(text)
    return WakeSnapshot(text, shown, branch, branch_reason, hidden, sum(map(len, omitted.values())), len(text),
                        tuple(notices),
                        store_revision=revision, archived=sum(archived))


def _number_runs(numbers: Sequence[int]) -> str:
    """``[1, 2, 3, 5, 8, 9]`` -> ``"1-3, 5, 8-9"`` (sorted; runs of consecutive numbers joined by ``-``)."""
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def omitted_line(omitted: dict[Target, list[int]], visible: dict[Target, int], budget_chars: int,
                 compact: bool = False) -> str:
    """The ``Omitted:`` header line: which entries a budget left out, and the command that shows them.

    ``omitted`` maps each target to the 1-based numbers of its left-out entries in stored order (the
    numbers ``mnemon-ls runtime list`` prints); ``visible`` the entries of each target visible on the
    branch; ``budget_chars`` the budget in characters. ``compact`` (used only when every visible entry is
    left out) says "all <n> visible" instead of listing the numbers. At least one number must be given.
    """
    parts = []
    for target, name in (("memory", "MEMORY.md"), ("user", "USER.md")):
        numbers = omitted[target]
        if not numbers:
            continue
        if compact and len(numbers) == visible[target]:
            parts.append(f"all {len(numbers)} visible {name} {'entry' if len(numbers) == 1 else 'entries'}")
        else:
            parts.append(f"{name} {'entry' if len(numbers) == 1 else 'entries'} {_number_runs(numbers)}")
    total = sum(map(len, omitted.values()))
    targets = [t for t in ("memory", "user") if omitted[t]]
    command = "mnemon-ls runtime list" + (f" --target {targets[0]}" if len(targets) == 1 else "")
    return (f"Omitted: {total} {'entry' if total == 1 else 'entries'} to fit {budget_chars} characters: "
            f"{' and '.join(parts)}, as `{command}` numbers and shows them (MEMORY.md gives way before USER.md, "
            "lowest importance and least recently updated first); absence here does not mean deletion.")


def archived_line(in_spaces: int, in_local: int) -> str:
    """The ``Archived:`` header line: how many entries left MEMORY.md and where to (module doc)."""
    total = in_spaces + in_local
    where = []
    if in_spaces:
        where.append(f"{in_spaces} into Memory Spaces (recall finds them)")
    if in_local:
        where.append(f"{in_local} into the local archive runtime/archived/MEMORY.md")
    return (f"Archived: {total} {'entry' if total == 1 else 'entries'} left MEMORY.md when it was full, "
            f"{' and '.join(where)}; `mnemon-ls runtime archived` lists where each went.")
