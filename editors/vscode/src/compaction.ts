/**
 * Compacting a full USER.md (or MEMORY.md) by hand (mnemon-ls issue 23 item 9): the `mnemon/runtime/compact`
 * request with a person's `merge` / `drop` (operation `runtime.compact`), the numbered entries a pick offers
 * (numbered as `mnemon-ls runtime list --target user` numbers them) and the text of what a compaction changed.
 * Pure: no `vscode` import; unit-tested, and the request is exercised against the real server by the contract
 * test. The pick itself is src/compactPick.ts.
 */

import { OperationMethod } from "./protocol.generated";
import type { Importance, MnemonError, Receipt, RuntimeEntry, Target } from "./requests";
import { request, RequestSender } from "./rpc";

/** One numbered entry of the target, as a compaction plan (`data.maintenance.entries`) carries it. */
export interface NumberedEntry {
    index: number;
    content: string;
    importance: Importance;
    bytes: number;
    branches?: string[];
}

/** A merge of the person's form: the entries `sourceIndexes` become one entry `content`. */
export interface CompactMerge {
    sourceIndexes: number[];
    content: string;
    /** Default: the highest importance of the merged entries. */
    importance?: Importance;
}

/** `mnemon/runtime/compact` params of a person's compaction (no `entries`: the server keeps the rest). */
export interface CompactParams {
    workspace?: string;
    target: Target;
    /** The revision the numbers come from (a plan's or a snapshot's); absent: the current one. */
    revision?: string;
    /** The pending mutation of a plan: it lands in the same commit. */
    pending?: Record<string, unknown> | null;
    merge?: CompactMerge[];
    drop?: number[];
}

/** `maintenance` of a compaction receipt (kind `local-compaction`). */
export interface CompactionReceipt {
    kind: string;
    target: Target;
    summary: string;
    entries: { content: string; importance: Importance; sourceIndexes: number[] }[];
    archived: { sourceIndex: number }[];
    dropped?: number[];
    bytesBefore?: number;
    bytesAfter?: number;
}

/** The result of `mnemon/runtime/compact`. */
export interface CompactResult extends Receipt {
    maintenance: CompactionReceipt;
}

/** The two things a pick of entries can do. */
export const PICK_ACTIONS = { merge: "Merge into one entry", drop: "Drop the picked entries" } as const;

/** `mnemon/runtime/compact`: merge and/or drop numbered entries; refused (nothing changed) when a rule breaks. */
export function compactRuntime(sender: RequestSender, params: CompactParams): Promise<CompactResult> {
    return request<CompactResult>(sender, OperationMethod["runtime.compact"], params);
}

function utf8Bytes(text: string): number {
    return new TextEncoder().encode(text).length;
}

/** The entries of `target` in a snapshot, numbered 1.. in stored order (the numbers `runtime list` prints). */
export function numberEntries(entries: RuntimeEntry[], target: Target): NumberedEntry[] {
    return entries
        .filter((e) => (e.target === "user" ? "user" : "memory") === target)
        .map((e, i) => ({ index: i + 1, content: e.content, importance: e.importance ?? "normal",
            bytes: utf8Bytes(e.content), branches: e.branches }));
}

function oneLine(text: string, max: number): string {
    const line = text.replace(/\s+/g, " ").trim();
    return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A pick row of one entry: `2. never force-push` / `30 bytes · critical`. */
export function entryItem(entry: NumberedEntry): { label: string; description: string } {
    const scope = entry.branches && entry.branches.length > 0 ? ` · ⎇ ${entry.branches.join(", ")}` : "";
    return { label: `${entry.index}. ${oneLine(entry.content, 100)}`, description: `${entry.bytes} bytes · ${entry.importance}${scope}` };
}

/** What the merged entry says before the person edits it: the picked texts joined by "; ". */
export function mergedDefault(picked: NumberedEntry[]): string {
    return picked.map((e) => oneLine(e.content, 8192)).join("; ");
}

/** "1, 2" */
export function numbers(values: number[]): string {
    return values.join(", ");
}

/**
 * What a compaction changed, numbered as its plan was: `merged 1, 2 into “…”`, `rewrote 4 as “…”`,
 * `dropped 3`, `97 → 46 bytes`.
 */
export function compactionChanges(receipt: CompactionReceipt): string[] {
    const gone = new Set((receipt.archived ?? []).map((a) => a.sourceIndex));
    const changes: string[] = [];
    for (const entry of receipt.entries ?? []) {
        const sources = entry.sourceIndexes ?? [];
        if (sources.length > 1) {
            changes.push(`merged ${numbers(sources)} into “${oneLine(entry.content, 40)}”`);
        } else if (sources.length === 1 && gone.has(sources[0])) {
            changes.push(`rewrote ${sources[0]} as “${oneLine(entry.content, 40)}”`);
        }
    }
    if (receipt.dropped && receipt.dropped.length > 0) {
        changes.push(`dropped ${numbers(receipt.dropped)}`);
    }
    if (typeof receipt.bytesBefore === "number" && typeof receipt.bytesAfter === "number") {
        changes.push(`${receipt.bytesBefore} → ${receipt.bytesAfter} bytes`);
    }
    return changes;
}

/** The one message of a finished compaction: `Mnemon: USER.md compacted: merged 1, 2 into “…”; dropped 3; 97 → 46 bytes.` */
export function compactionMessage(receipt: CompactionReceipt): string {
    const file = receipt.target === "memory" ? "MEMORY.md" : "USER.md";
    const text = `Mnemon: ${file} compacted: ${compactionChanges(receipt).join("; ")} (the old text is kept in runtime/archived/).`;
    return text.length <= 240 ? text : `${text.slice(0, 239)}…`;
}

/** Whether a notification's receipt is a compaction's (with its entries), so {@link compactionMessage} applies. */
export function isCompactionReceipt(receipt: unknown): receipt is CompactionReceipt {
    const r = receipt as Partial<CompactionReceipt> | undefined;
    return !!r && r.kind === "local-compaction" && Array.isArray(r.entries);
}

/**
 * Whether the server announces this request error itself: a `runtime-capacity` error carrying a compaction
 * plan (`data.maintenance`, a full USER.md) comes with `mnemon/maintenanceRequired`, whose message offers what
 * to do; the request's own error is then not shown too (one failure, one message).
 */
export function announcedByServer(error: MnemonError | undefined): boolean {
    const plan = error?.code === "runtime-capacity" ? error.data.maintenance : undefined;
    return typeof plan === "object" && plan !== null;
}
