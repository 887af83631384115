"""The wake snapshot: the bounded, model-facing projection of Runtime memory for one turn.

Layout (``shared/reference/dsh-mnemon.md`` section 3.6, vN, extended by DESIGN.md section 4)::

    MNEMON RUNTIME MEMORY SNAPSHOT
    Revision: <sha256 hex of the effective store>
    Git branch: <name>[ (<reason>; ]<n> branch-scoped entr(y|ies) hidden)]   or   Git branch: none (<why>; ...)
    <one explanatory line>
    [Archived: <n> entries left MEMORY.md ... (capacity maintenance, issue 9)]
    [Notice: <why the store could not be read as is>]
    [Omitted: <n> entries ... absence here does not mean deletion.]
    <blank>
    Contents of USER.md (user profile; entries: <visible>; UTF-8 bytes: <used>/<limit>)
    <runtime-memory-file name="USER.md">
    [importance=<imp>; created=<age>; updated=<age>]
    <content>
    §
    ...            (or "(empty)")
    </runtime-memory-file>
    <blank>
    Contents of MEMORY.md (working reference; entries: <visible>; UTF-8 bytes: <used>/<limit>)
    <runtime-memory-file name="MEMORY.md">
    ...
    </runtime-memory-file>

Ages are whole 24-hour days since the stored timestamp, all from one capture time; ``future`` when the
time is ahead of it, ``unknown`` when unparseable. ``entries:`` counts the entries visible on the branch;
byte counts cover the whole store. Branch filtering happens only here, never in the files. The budget is
in characters (Unicode code points): when the text would exceed it, whole entries are dropped (low
importance first, then least recently updated) and the ``Omitted:`` line says how many.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from .model import DELIMITER, Entry, Target, parse_timestamp_ms

HEADER = "MNEMON RUNTIME MEMORY SNAPSHOT"
EXPLANATION = (
    "Bracketed lines are annotations, not memory content: importance as recorded, and ages in whole days "
    "at this snapshot ('future' or 'unknown' for timestamps ahead or unreadable); current instructions "
    "outrank stored memory; oldText for replace/remove matches the content line only."
)
_RANK = {"low": 0, "normal": 1, "critical": 2}
_DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class WakeSnapshot:
    """A rendered wake snapshot.

    ``text`` the snapshot; ``revision`` the effective store revision; ``branch`` the branch used for
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
    #: Entries capacity maintenance moved out of MEMORY.md (lineage lines), 0 when none.
    archived: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: ``{text, revision, branch, branchReason, hidden, omitted, chars, notices, archived}``."""
        return {
            "text": self.text,
            "revision": self.revision,
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


def render_entry(entry: Entry, now_ms: int) -> str:
    """The two lines of one entry: ``[importance=...; created=Nd; updated=Nd]`` then the content."""
    return (
        f"[importance={entry.importance}; created={age_label(entry.created_at, now_ms)}; "
        f"updated={age_label(entry.updated_at, now_ms)}]\n{entry.content}"
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
) -> WakeSnapshot:
    """Render the wake snapshot of the effective entries (user from the user root, memory from the root).

    ``used`` / ``limits`` are UTF-8 bytes per target over the whole store; ``now_ms`` the single capture
    time (epoch milliseconds); ``budget_chars`` the largest text in code points. With ``branch=None``
    branch-scoped memory entries are hidden unless ``detached_head_policy == "show"``. ``archived`` is
    ``(into Memory Spaces, into the local archive)``: entries capacity maintenance moved out of MEMORY.md,
    counted in the ``Archived:`` line (none when both are 0).
    """
    show_all = branch is None and detached_head_policy == "show"
    scoped = sum(1 for e in memory_entries if e.branches)
    visible_memory = [e for e in memory_entries if show_all or e.visible_on(branch)]
    hidden = len(memory_entries) - len(visible_memory)
    visible = {"user": list(user_entries), "memory": visible_memory}
    rendered = {id(e): render_entry(e, now_ms) for target in visible for e in visible[target]}

    head = [HEADER, f"Revision: {revision}", branch_line(branch, branch_reason, scoped, hidden, detached_head_policy),
            EXPLANATION]
    if sum(archived):
        head.append(archived_line(*archived))
    head.extend(f"Notice: {notice}" for notice in notices)

    def assemble(kept: dict[Target, list[Entry]], omitted: dict[Target, int]) -> str:
        lines = list(head)
        total = sum(omitted.values())
        if total:
            detail = ", ".join(f"{n} from {name}" for name, n in
                               (("USER.md", omitted["user"]), ("MEMORY.md", omitted["memory"])) if n)
            lines.append(
                f"Omitted: {total} {'entry' if total == 1 else 'entries'} ({detail}) to fit {budget_chars} "
                "characters, lowest importance and least recently updated first; absence here does not mean deletion."
            )
        for target, title, name in (("user", "user profile", "USER.md"), ("memory", "working reference", "MEMORY.md")):
            body = DELIMITER.join(rendered[id(e)] for e in kept[target]) or "(empty)"
            lines += [
                "",
                f"Contents of {name} ({title}; entries: {len(visible[target])}; UTF-8 bytes: {used[target]}/{limits[target]})",
                f'<runtime-memory-file name="{name}">',
                body,
                "</runtime-memory-file>",
            ]
        return "\n".join(lines)

    kept = {t: list(v) for t, v in visible.items()}
    omitted = {"user": 0, "memory": 0}
    text = assemble(kept, omitted)
    if len(text) > budget_chars:
        order = sorted(
            ((t, i, e) for t in ("memory", "user") for i, e in enumerate(visible[t])),
            key=lambda item: (_RANK[item[2].importance], parse_timestamp_ms(item[2].updated_at) or -1,
                              0 if item[0] == "memory" else 1, item[1]),
        )
        dropped: set[int] = set()
        position = 0

        def drop_next() -> None:
            nonlocal position
            target, _, entry = order[position]
            position += 1
            dropped.add(id(entry))
            omitted[target] += 1

        # Estimate by rendered size first, then confirm with real renders (the Omitted line adds length).
        excess = len(text) - budget_chars
        while excess > 0 and position < len(order):
            excess -= len(rendered[id(order[position][2])]) + len(DELIMITER)
            drop_next()
        while True:
            kept = {t: [e for e in visible[t] if id(e) not in dropped] for t in visible}
            text = assemble(kept, omitted)
            if len(text) <= budget_chars or position >= len(order):
                break
            drop_next()
    if len(text) > budget_chars and notices:
        # Even with every entry dropped the notices do not fit: keep one short notice instead (the full
        # reasons stay in ``notices`` and in `mnemon-ls doctor`).
        del head[4 + (1 if sum(archived) else 0):]
        head.append(f"Notice: {len(notices)} runtime memory file(s) could not be read as is; run `mnemon-ls doctor`.")
        text = assemble(kept, omitted)
    return WakeSnapshot(text, revision, branch, branch_reason, hidden, sum(omitted.values()), len(text), tuple(notices),
                        sum(archived))


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
