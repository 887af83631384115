/**
 * Pure text for the UI (status bar, messages, the status report). No `vscode` import, unit-tested.
 */

import type {
    DocumentMutation,
    DocumentSearchResult,
    DocumentView,
    MnemonError,
    ProjectionRepairedParams,
    Receipt,
    RecallItem,
    RecallResult,
    SearchHit,
    SpaceView,
    StatusResult,
    Usage,
    WorkspaceStatus,
    WriteReceipt,
} from "./requests";
import { formatBytes, formatUsage } from "./units";

/** Usage at or above this share of the limit is shown as a warning. */
export const USAGE_WARNING_RATIO = 0.9;

export function percent(usage: Usage): number {
    return usage.limit > 0 ? Math.round((usage.used / usage.limit) * 100) : 0;
}

export function branchLabel(row: WorkspaceStatus): string {
    if (row.branch) {
        return row.branch;
    }
    return row.detached ? "(detached)" : "(no branch)";
}

/** Status bar text, e.g. `$(bookmark) main · MEMORY 12%`. */
export function statusBarText(row: WorkspaceStatus | undefined): string {
    if (!row) {
        return "$(bookmark) mnemon";
    }
    const icon = row.problems.length > 0 ? "$(warning)" : "$(bookmark)";
    return `${icon} ${branchLabel(row)} · MEMORY ${percent(row.usage.memory)}%`;
}

export function isNearlyFull(row: WorkspaceStatus | undefined): boolean {
    return !!row && row.usage.memory.limit > 0 && row.usage.memory.used / row.usage.memory.limit >= USAGE_WARNING_RATIO;
}

function usageLine(name: string, entries: number, usage: Usage): string {
    return `${name}: ${entries} ${entries === 1 ? "entry" : "entries"}, ${formatUsage(usage.used, usage.limit)} (${percent(usage)}%)`;
}

/** Multi-line tooltip for the status bar item. */
export function statusTooltip(row: WorkspaceStatus | undefined, serverVersion?: string): string {
    if (!row) {
        return "Mnemon: no workspace folder (click for status)";
    }
    const lines = [
        `Mnemon — ${row.name || row.uri}`,
        `Branch: ${branchLabel(row)}${row.branchReason && !row.branch ? ` (${row.branchReason})` : ""}`,
        usageLine("MEMORY.md", row.entries.memory, row.usage.memory),
        usageLine("USER.md", row.entries.user, row.usage.user),
        `Store: ${row.root} (${row.scope})`,
        ...row.problems.map((p) => `⚠ ${p}`),
    ];
    if (serverVersion) {
        lines.push(`mnemon-ls ${serverVersion}`);
    }
    return lines.join("\n");
}

/** Info message for a successful remember. */
export function receiptMessage(receipt: Receipt, branches?: string[]): string {
    const file = receipt.target === "user" ? "USER.md" : "MEMORY.md";
    const scope = branches && branches.length > 0 ? ` for branch ${branches.join(", ")}` : "";
    const entries = `${receipt.entryCount} ${receipt.entryCount === 1 ? "entry" : "entries"}`;
    return `Mnemon: ${receipt.message} ${file}${scope}: ${entries}, ${formatUsage(receipt.usage.used, receipt.usage.limit)}.`;
}

/** Error message for a rejected request, e.g. `Mnemon: not remembered: content: must not contain § (invalid-input)`. */
export function errorMessage(prefix: string, error: MnemonError): string {
    if (error.code === "runtime-capacity") {
        // Said once, from the numbers (the server's own sentence says the same; the buttons offer the fixes).
        const { used, projected, limit, target } = error.data as { used?: number; projected?: number; limit?: number; target?: string };
        if (typeof projected === "number" && typeof limit === "number") {
            const file = target === "user" ? "USER.md" : "MEMORY.md";
            return `Mnemon: ${prefix}: ${file} is full: this change would make it ${formatUsage(projected, limit)} (now ${typeof used === "number" ? formatBytes(used) : "?"}). [runtime-capacity]`;
        }
    }
    return `Mnemon: ${prefix}: ${error.message} [${error.code}]`;
}

/** Markdown report of `mnemon/status` for the read-only status document. */
export function statusReport(result: StatusResult, expectedProtocol: number): string {
    const lines = [`# Mnemon status`, ``, `- mnemon-ls ${result.version}, protocol ${result.protocolVersion}`];
    if (result.protocolVersion !== expectedProtocol) {
        lines.push(`- ⚠ this extension speaks protocol ${expectedProtocol}; update the extension or the server`);
    }
    if (result.workspaces.length === 0) {
        lines.push("", "No workspace folder is open.");
    }
    for (const row of result.workspaces) {
        lines.push(
            "",
            `## ${row.name || row.uri}`,
            "",
            `- Folder: ${row.uri}`,
            `- Branch: ${branchLabel(row)}${row.branchReason ? ` (${row.branchReason})` : ""}`,
            `- ${usageLine("MEMORY.md", row.entries.memory, row.usage.memory)}`,
            `- ${usageLine("USER.md", row.entries.user, row.usage.user)}`,
            `- Storage scope: ${row.scope}`,
            `- Store: ${row.root}`,
            `- USER.md store: ${row.userRoot}`,
        );
        for (const problem of row.problems) {
            lines.push(`- ⚠ ${problem}`);
        }
    }
    return lines.join("\n") + "\n";
}

// ------------------------------------------------------------------------------------------ documents

/** Whitespace runs (newlines included) collapsed to one space, trimmed: for one-line UI text. */
export function oneLine(text: string): string {
    return text.replace(/\s+/g, " ").trim();
}

/** A search hit as a QuickPick item: label = title, description = score, detail = excerpt. */
export function searchPickItem(hit: SearchHit): { label: string; description: string; detail: string } {
    const parts = hit.matched === "all" ? [] : [`score ${hit.score.toFixed(2)}`];
    if (hit.status === "archived") {
        parts.push("archived");
    }
    return { label: hit.title, description: parts.join(" · "), detail: oneLine(hit.excerpt) };
}

/** QuickPick title of a search, e.g. `Mnemon: 3 documents for “deploy”` (`20 of 34` when cut). */
export function searchTitle(result: Pick<DocumentSearchResult, "query" | "total" | "matches">): string {
    const count = result.matches > result.total ? `${result.total} of ${result.matches}` : `${result.total}`;
    const noun = result.matches === 1 ? "document" : "documents";
    return result.query ? `Mnemon: ${count} ${noun} for “${result.query}”` : `Mnemon: ${count} ${noun}, newest first`;
}

/** Info message when a search found nothing. */
export function noResultsMessage(query: string, folder: string): string {
    return query.trim() ? `Mnemon: no document in ${folder} matches “${query.trim()}”.` : `Mnemon: ${folder} has no documents yet.`;
}

/** Warning for search/list/mutation notices (missing files, a damaged index, adopted hand edits). */
export function noticesMessage(notices: string[]): string {
    return `Mnemon: ${notices.length === 1 ? notices[0] : `${notices.length} notices: ${notices.join("; ")}`}`;
}

/** Info message after "Create Document from File", e.g. `Mnemon: created document “Design” (documents/active/design-1a2b3c4d.md) from notes/design.md.` */
export function createdMessage(document: Pick<DocumentView, "title" | "relativePath" | "sourcePaths">): string {
    const from = document.sourcePaths.length > 0 ? ` from ${document.sourcePaths.join(", ")}` : "";
    return `Mnemon: created document “${document.title}” (${document.relativePath})${from}.`;
}

/**
 * Info message after "Update from Source File": what the server's answer (`action`) says happened to `title`
 * given the text of `source`. `adopted`: the managed file, edited by hand, already held that text, and the
 * update took that hand edit in as a new revision (not a change made from `source`).
 */
export function updatedFromFileMessage(title: string, source: string, result: Pick<DocumentMutation, "action"> & {
    document: Pick<DocumentView, "revision">;
}): string {
    const revision = result.document.revision;
    switch (result.action) {
        case "unchanged":
            return `Mnemon: "${title}" already matches ${source}: no change; revision ${revision} kept.`;
        case "adopted":
            return `Mnemon: "${title}" already held the text of ${source} through a hand edit of its managed file; `
                + `adopted that hand edit as revision ${revision}.`;
        default:
            return `Mnemon: updated "${title}" from ${source} (revision ${revision}).`;
    }
}

// ------------------------------------------------------------------------------------------ memory spaces

/** Longest QuickPick label of a recall hit (the content's first line). */
export const RECALL_LABEL_CHARS = 80;

/** The first non-empty line of `text`, whitespace collapsed, clipped to `max` characters (with `…`). */
export function firstLine(text: string, max = RECALL_LABEL_CHARS): string {
    const line = oneLine(text.split(/\r?\n/).find((l) => l.trim() !== "") ?? "");
    const chars = Array.from(line); // clip by code point, never inside a surrogate pair
    return chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : line;
}

/**
 * A recall hit as a QuickPick item: label = first line of the content, description =
 * `space · score · tier`, detail = category, tags, created, branch label.
 */
export function recallPickItem(item: RecallItem): { label: string; description: string; detail: string } {
    const score = typeof item.score === "number" && Number.isFinite(item.score) ? item.score.toFixed(2) : "unscored";
    const detail = [item.category];
    const tags = (item.tags ?? []).filter((t) => t !== "");
    if (tags.length > 0) {
        detail.push(`tags: ${tags.join(", ")}`);
    }
    if (item.createdAt) {
        detail.push(`created ${item.createdAt}`);
    }
    if (item.branchLabel) {
        detail.push(item.branchLabel);
    }
    return { label: firstLine(item.content) || item.id, description: `${item.spaceName} · ${score} · ${item.tier}`, detail: detail.filter(Boolean).join(" · ") };
}

/** QuickPick title of a recall, e.g. `Mnemon: 3 memories for “deploy” (2 hidden on other branches)`. */
export function recallTitle(result: Pick<RecallResult, "query" | "results" | "hidden" | "truncated">): string {
    const n = result.results.length;
    const extra: string[] = [];
    if (result.truncated > 0) {
        extra.push(`${result.truncated} more not shown`);
    }
    if (result.hidden.otherBranch > 0) {
        extra.push(`${result.hidden.otherBranch} hidden on other branches`);
    }
    if (result.hidden.detachedHead > 0) {
        extra.push(`${result.hidden.detachedHead} branch-scoped hidden (no branch)`);
    }
    return `Mnemon: ${n} ${n === 1 ? "memory" : "memories"} for “${result.query}”${extra.length > 0 ? ` (${extra.join("; ")})` : ""}`;
}

/** Info message when a recall found nothing: the server's hint and the hidden counts. */
export function recallEmptyMessage(result: Pick<RecallResult, "query" | "hint" | "hidden">, folder: string): string {
    let text = `Mnemon: nothing recalled in ${folder} for “${result.query}”`;
    if (result.hint) {
        text += `: ${result.hint}`;
    }
    const hidden = result.hidden.otherBranch + result.hidden.detachedHead;
    if (hidden > 0) {
        text += ` (${hidden} branch-scoped ${hidden === 1 ? "memory" : "memories"} hidden)`;
    }
    return `${text}.`;
}

/**
 * The space rows of the "Remember Selection" target pick (after MEMORY.md): every space, the active
 * ones first, each marked as it is before this write: `active`, or `inactive: remembering here makes
 * it active` (seed 000), which the receipt then confirms. `scope` is ` for branch B` or empty.
 */
export function rememberTargetRows(spaces: SpaceView[], scope: string): { group: "active" | "inactive"; label: string; description: string; detail?: string; space: SpaceView }[] {
    const ordered = [...spaces.filter((s) => s.active), ...spaces.filter((s) => !s.active)];
    return ordered.map((space) => ({
        group: space.active ? "active" : "inactive",
        label: space.name,
        description: `${space.active ? "active" : "inactive: remembering here makes it active"} · ${space.providerLabel}${scope}`,
        detail: space.description || undefined,
        space,
    }));
}

/**
 * Info message after remembering into a Memory Space. A write that activated the space (seed 000: a
 * committed write into an inactive space activates it) says so, and what it changed: recall now reads
 * the space, and with more than one space active a remember that names no space (an assistant's
 * `mnemon_remember`, `mnemon-ls remember`) must name one. The toast's "Deactivate" button undoes it.
 */
export function spaceReceiptMessage(receipt: Pick<WriteReceipt, "status" | "message" | "spaceName" | "id" | "activated" | "activeSpaces">, branch?: string): string {
    const scope = branch ? ` (branch ${branch})` : "";
    let activated = "";
    if (receipt.activated) {
        const active = (receipt.activeSpaces ?? []).map((s) => s.name);
        activated = ` ${receipt.spaceName} was inactive and is now active: recall reads it.`;
        if (active.length > 1) {
            activated += ` ${active.length} spaces are active (${active.join(", ")}), so a remember that names no space (an assistant's mnemon_remember, mnemon-ls remember) must name one.`;
        }
    }
    if (receipt.status === "committed" || receipt.status === "skipped") {
        return `Mnemon: ${receipt.message}${scope}${activated}`;
    }
    return `Mnemon: ${receipt.message} [${receipt.status}] in ${receipt.spaceName}${scope}.${activated}`;
}

/**
 * The status-bar text for a hand-edit result ("Mnemon: 2 entries added from your edit of MEMORY.md"),
 * or undefined when there is nothing to tell (no hand edit, or only line endings changed). The server's
 * own window/showMessage (or, for an edit not applied, its "Open edit" request) is the popup.
 */
export function handEditMessage(params: Pick<ProjectionRepairedParams, "handEdit">): string | undefined {
    const edit = params.handEdit;
    if (!edit || edit.status === "format" || !edit.message) {
        return undefined;
    }
    const icon = edit.status === "imported" ? "$(check)" : edit.status === "leftover" ? "$(info)" : "$(warning)";
    return `${icon} Mnemon: ${oneLine(edit.message)}`;
}

// ------------------------------------------------------------------------------------------ previews

/** `text` with Markdown and HTML syntax escaped, so that it renders as the literal characters. */
export function escapeMarkdown(text: string): string {
    return text.replace(/[\\`*_{}[\]()#+\-.!|<>~&]/g, (c) => (c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === "&" ? "&amp;" : `\\${c}`));
}

/**
 * The wake snapshot (plain text, mnemon_ls/runtime/snapshot.py) as Markdown for the preview: the title
 * line as a heading, the `Key: value` header lines as a list, each `Contents of X (...)` section as a
 * heading with its counts, each entry as a paragraph with its bracketed annotation line in italics and
 * `§` separators as rules. Every memory text is escaped, so it renders as written (never as Markdown
 * or HTML). Lines the converter does not recognise are kept as escaped paragraphs.
 */
export function wakeMarkdown(text: string): string {
    const lines = text.replace(/\r\n/g, "\n").split("\n");
    const out: string[] = [];
    let inFile = false;
    let header = true;
    lines.forEach((line, index) => {
        if (index === 0 && /^[A-Z][A-Z ]+$/.test(line.trim())) {
            out.push(`# ${line.trim().toLowerCase().replace(/^\w/, (c) => c.toUpperCase())}`, "");
            return;
        }
        const open = /^<runtime-memory-file name="([^"]+)">$/.exec(line.trim());
        if (open) {
            inFile = true;
            out.push("");
            return;
        }
        if (line.trim() === "</runtime-memory-file>") {
            inFile = false;
            out.push("");
            return;
        }
        if (inFile) {
            if (line.trim() === "§") {
                out.push("", "---", "");
            } else if (/^\[.*\]$/.test(line.trim())) {
                out.push("", `*${escapeMarkdown(line.trim())}*  `);
            } else if (line.trim() === "(empty)") {
                out.push("*(empty)*");
            } else {
                out.push(`${escapeMarkdown(line)}  `);
            }
            return;
        }
        const section = /^Contents of (\S+) \((.*)\)$/.exec(line.trim());
        if (section) {
            header = false;
            out.push("", `## ${escapeMarkdown(section[1])}`, "", `*${escapeMarkdown(section[2])}*`);
            return;
        }
        if (line.trim() === "") {
            header = false;
            out.push("");
            return;
        }
        const field = /^([A-Z][A-Za-z ]{1,30}): (.*)$/.exec(line);
        if (header && field) {
            out.push(`- **${escapeMarkdown(field[1])}:** ${escapeMarkdown(field[2])}`);
            return;
        }
        out.push("", escapeMarkdown(line), ""); // a paragraph of its own (never a list item's continuation)
    });
    return out.join("\n").replace(/\n{3,}/g, "\n\n").trim() + "\n";
}

// ------------------------------------------------------------------------------------------ log

/**
 * vscode-languageclient logs every server exit at error level ("[Error - 10:00:00] Server process
 * exited with code 0."), a normal stop or restart included, and, when the pipe closes while the client
 * is stopping, "Connection to server got closed. Server will not be restarted." (and "exited with signal
 * SIGKILL" when a busy server missed the stop timeout). Returns the text to log instead (without the
 * "[Error" prefix): for a code-0 exit always, for the closed connection and a signal only while
 * `stopping` (an intended stop or restart). Anything else: `undefined` (logged as the client wrote it).
 */
export function normalExitLine(line: string, stopping = false): string | undefined {
    if (/^\[Error\s*-\s*[^\]]*\]\s*Server process exited with code 0\.?\s*$/.test(line)) {
        return "mnemon-ls exited normally (code 0)";
    }
    if (stopping && /^\[Error\s*-\s*[^\]]*\]\s*Connection to server got closed\. Server will not be restarted\.\s*$/.test(line)) {
        return "connection to mnemon-ls closed (stop or restart)";
    }
    const signal = /^\[Error\s*-\s*[^\]]*\]\s*Server process exited with signal (\w+)\.?\s*$/.exec(line);
    if (stopping && signal) {
        return `mnemon-ls did not exit in time when stopped and was ended (${signal[1]})`;
    }
    return undefined;
}

/**
 * Whether a `file:` URI the server asks the client to show (`window/showDocument`) is a managed
 * document (`<storage root>/documents/{active,archived}/<file>.md`, DESIGN.md section 2): the extension
 * opens those as a rendered, read-only Markdown preview instead of an editor on the raw file.
 */
export function isManagedDocumentUri(uri: string): boolean {
    return /^file:\/\/.*\/documents\/(active|archived)\/[^/]+\.md$/i.test(uri);
}

/** The `id` of a managed document's YAML frontmatter (`id: "<uuid>"`, mnemon_ls/documents), else undefined. */
export function frontmatterId(text: string): string | undefined {
    const head = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
    const id = head ? /^id:\s*"?([0-9A-Za-z-]{8,64})"?\s*$/m.exec(head[1]) : null;
    return id ? id[1] : undefined;
}
