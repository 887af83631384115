/**
 * Pure text for capacity maintenance notices (issue 9): the short message of
 * `mnemon/maintenanceCompleted` (after a compaction: what was merged into what, what was dropped, the bytes)
 * and the actionable "USER.md is full" of `mnemon/maintenanceRequired`, with the prompt an assistant needs
 * to compact. No `vscode` import, unit-tested.
 */

import { compactionMessage, isCompactionReceipt } from "./compaction";

/** Server -> client notifications of capacity maintenance. */
export const MaintenanceNotification = {
    completed: "mnemon/maintenanceCompleted",
    required: "mnemon/maintenanceRequired",
} as const;

/** The message shown for a full USER.md (the server sends the same text in `message`). */
export const USER_FULL_MESSAGE = "USER.md is full: compact it with your assistant, or open it";
/** Actions of the "USER.md is full" message. */
export const MERGE_DROP_ACTION = "Merge or Drop Entries...";
export const COMPACT_ACTION = "Compact with Assistant";
export const OPEN_ACTION = "Open USER.md";

/** One numbered entry of a compaction plan. */
export interface PlanEntry {
    index: number;
    content: string;
    importance: "critical" | "normal" | "low";
    bytes: number;
    branches?: string[];
}

/** `data.maintenance` of a `runtime-capacity` error (the compaction plan). */
export interface CompactionPlan {
    kind: string;
    method: string;
    file: string;
    target: "user" | "memory";
    revision: string;
    entries: PlanEntry[];
    pending: Record<string, unknown> | null;
    budgetBytes: number;
    limit: number;
    rules: string[];
}

/** `mnemon/maintenanceRequired` params. */
export interface MaintenanceRequiredParams {
    workspace: string;
    target: "user" | "memory";
    file: string;
    message: string;
    plan: CompactionPlan;
}

/** `mnemon/maintenanceCompleted` params. */
export interface MaintenanceCompletedParams {
    workspace: string;
    kind: string;
    summary: string;
    receipt: Record<string, unknown>;
}

/**
 * The short message of a completed maintenance: `Mnemon: <summary>` on one line (at most 200 characters);
 * for a compaction, what changed (src/compaction.ts {@link compactionMessage}).
 */
export function maintenanceCompletedMessage(params: MaintenanceCompletedParams): string {
    if (isCompactionReceipt(params.receipt)) {
        return compactionMessage(params.receipt);
    }
    const summary = (params.summary || `${params.kind} finished`).replace(/\s+/g, " ").trim();
    const text = `Mnemon: ${summary}`;
    return text.length <= 200 ? text : `${text.slice(0, 199)}\u2026`;
}

/**
 * What the assistant is asked to do with a plan: rewrite the numbered entries and send
 * `mnemon/runtime/compact` (the tool/CLI shape), keeping every rule the server checks.
 */
export function compactPrompt(params: MaintenanceRequiredParams): string {
    const plan = params.plan;
    const lines = [
        `${plan.file} is full (${plan.limit} bytes). Compact it: merge and shorten the numbered entries below into`,
        `at most ${plan.budgetBytes} UTF-8 bytes in total, then send ${plan.method} with`,
        `{"revision": "${plan.revision}", "target": "${plan.target}", "pending": ${JSON.stringify(plan.pending)},`,
        ` "entries": [{"content": "...", "importance": "critical|normal|low", "sourceIndexes": [1, 2]}]}`,
        `(or run: mnemon-ls runtime compact --plan FILE). Rules:`,
        ...plan.rules.map((rule) => `- ${rule}`),
        "Entries:",
        ...plan.entries.map((e) => `${e.index}. [importance=${e.importance}] ${e.content}`),
    ];
    return lines.join("\n");
}
