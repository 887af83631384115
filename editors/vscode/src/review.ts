/**
 * Memories whose cited code changed or is gone (issue 24 item 5), or that are due for review because nobody
 * updated or confirmed them for `reviewAfterDays` (item 6), for the "Needs Review" view: the
 * `mnemon/citations/review` and `mnemon/citations/reanchor` requests, the tree nodes, and what "Edit" and
 * "Remove" send for each Source (each Source's own operation: `runtime.mutate`, `records.edit`/`forget`,
 * `documents.archive`, `spaces.forget`; a document is edited in its file, a Memory Space item is not edited).
 * Pure: no `vscode` import (src/reviewView.ts shows it; src/test/review.test.ts checks it).
 */

import { OperationMethod } from "./protocol.generated";
import { RequestSender } from "./rpc";
import type { CitationView, CitedMemory, ReanchorResult, ReviewResult } from "./citations";
import type { Node } from "./trees";

/** The memories of one folder that need review. */
export async function listReview(client: RequestSender, workspace: string): Promise<ReviewResult> {
    return (await client.sendRequest(OperationMethod["citations.review"], { workspace })) as ReviewResult;
}

/** "Still true": re-anchor a memory's citations to the code as it is now. */
export async function reanchor(client: RequestSender, workspace: string, memory: CitedMemory): Promise<ReanchorResult> {
    return (await client.sendRequest(OperationMethod["citations.reanchor"], { workspace, source: memory.source, key: memory.key })) as ReanchorResult;
}

/** A citation in words (the server's `freshness_words`): `src/app.py:10-24 (changed)`, `... (moved to 12-26)`,
 * `... (renamed to src/b.py)`, `... (renamed to src/b.py:12-26)`, `... (changed, renamed to src/b.py)`. */
export function citationLabel(cite: CitationView): string {
    const lines = cite.startLine === cite.endLine ? `${cite.startLine}` : `${cite.startLine}-${cite.endLine}`;
    const symbol = cite.symbol ? ` [${cite.symbol}]` : "";
    const m = cite.movedTo;
    const where = m ? (m.startLine === m.endLine ? `${m.startLine}` : `${m.startLine}-${m.endLine}`) : "";
    let state: string = cite.freshness;
    if (cite.renamedTo) {
        const renamed = `renamed to ${cite.renamedTo}${where ? `:${where}` : ""}`;
        state = cite.freshness === "renamed" ? renamed : `${cite.freshness}, ${renamed}`;
    } else if (cite.freshness === "moved" && m) {
        state = `moved to ${where}`;
    }
    return `${cite.path}:${lines}${symbol} (${state})`;
}

/** Whether "Edit" is offered: every Source but a Memory Space item (forget it and remember a new one). */
export function canEdit(memory: CitedMemory): boolean {
    return memory.source !== "spaces";
}

/** The request "Edit" sends with the new text (`null` for a document, edited in its file, and a space item). */
export function editRequest(workspace: string, memory: CitedMemory, text: string): { method: string; params: Record<string, unknown> } | null {
    switch (memory.source) {
        case "runtime":
            return { method: OperationMethod["runtime.mutate"], params: { workspace, action: "replace", target: memory.target ?? "memory", key: memory.key, content: text } };
        case "records":
            return { method: OperationMethod["records.edit"], params: { workspace, id: memory.id, recordScope: memory.scope, content: text } };
        default:
            return null;
    }
}

/** The request "Remove" sends. */
export function removeRequest(workspace: string, memory: CitedMemory): { method: string; params: Record<string, unknown> } {
    switch (memory.source) {
        case "runtime":
            return { method: OperationMethod["runtime.mutate"], params: { workspace, action: "remove", target: memory.target ?? "memory", key: memory.key } };
        case "records":
            return { method: OperationMethod["records.forget"], params: { workspace, id: memory.id, recordScope: memory.scope } };
        case "documents":
            return { method: OperationMethod["documents.archive"], params: { workspace, id: memory.id } };
        case "spaces":
            return { method: OperationMethod["spaces.forget"], params: { workspace, spaceId: memory.spaceId, id: memory.id } };
    }
}

/**
 * The "Needs Review" nodes of one folder: one per memory (`mnemon.review.memory`, or `.noedit` for a Memory
 * Space item), its description the Source, age and what changed; children: each citation. An empty list says
 * so in one message node.
 */
export function reviewTree(result: ReviewResult): Node[] {
    if (result.memories.length === 0) {
        return [{ id: `message:review:${result.workspace}`, label: "No memory needs review", tooltip: "Every cited line is as it was (or only moved).", icon: "pass", contextValue: "mnemon.message" }];
    }
    return result.memories.map((memory) => {
        const stale = memory.cites.filter((c) => c.freshness === "changed" || c.freshness === "gone");
        const due = (memory.reasons ?? []).includes("review-due");
        const parts: string[] = [];
        if (stale.length > 0) {
            parts.push(stale.some((c) => c.freshness === "gone") ? (stale.every((c) => c.freshness === "gone") ? "code gone" : "code changed or gone") : "code changed");
        }
        if (due) {
            parts.push("review due");
        }
        const what = parts.join(", ");
        const label = memory.label === "MEMORY.md" && memory.target === "user" ? "USER.md" : memory.label;
        return {
            id: `review:${result.workspace}:${memory.source}:${memory.key}`,
            label: memory.preview,
            description: `${label} · ${memory.age} · ${what}`,
            tooltip: [
                (memory.title ? `**${memory.title}**\n\n` : "") + memory.content.replace(/\n/g, "  \n"),
                "---",
                ...memory.cites.map((c) => `\`${citationLabel(c)}\``),
                ...(due ? [`Not updated or confirmed for ${memory.age === "unknown" ? "a long time" : memory.age}${memory.reviewedAt ? ` (last confirmed ${memory.reviewedAt.slice(0, 10)})` : ""}${memory.reviewDueSince ? `: due for review since ${memory.reviewDueSince.slice(0, 10)}` : ""}.`] : []),
                stale.length > 0 ? "Still true? Re-anchor it to the current code. Otherwise edit or remove it." : "Still true? Confirm it. Otherwise edit or remove it.",
            ].join("\n\n"),
            icon: stale.some((c) => c.freshness === "gone") ? "error" : stale.length > 0 ? "warning" : "history",
            iconColor: "list.warningForeground",
            contextValue: canEdit(memory) ? "mnemon.review.memory" : "mnemon.review.memory.noedit",
            expanded: false,
            children: memory.cites.map((cite, index) => ({
                id: `review:${result.workspace}:${memory.source}:${memory.key}:${index}`,
                label: citationLabel(cite),
                icon: cite.freshness === "fresh" ? "pass" : cite.freshness === "moved" || cite.freshness === "renamed"
                    ? "arrow-swap" : "warning",
                contextValue: "mnemon.review.cite",
                ref: { kind: "review", workspace: result.workspace, memory },
            })),
            ref: { kind: "review", workspace: result.workspace, memory },
        };
    });
}

/** The message after "Still true". */
export function reanchoredMessage(result: ReanchorResult): string {
    const n = result.reanchored;
    const left = result.left.length > 0 ? ` ${result.left.length} left as ${result.left.length === 1 ? "it is" : "they are"} (${result.left.map(citationLabel).join(", ")}): edit or remove the memory.` : "";
    const kept = result.keptDamaged ? ` The damaged confirmation file was kept at ${result.keptDamaged}.` : "";
    const days = (result.nextReviewDays ? ` Next review in ${result.nextReviewDays} days.` : "") + kept;
    if (result.cites.length === 0) {
        return `Mnemon: confirmed still true.${days}`;
    }
    return `Mnemon: re-anchored ${n} citation${n === 1 ? "" : "s"} to the current code.${left}${days}`;
}
