/**
 * Memory other assistants keep (mnemon-ls issue 28 item 2), for "Mnemon: Import Memory from Other
 * Assistants…": the `mnemon/import/scan` and `mnemon/import/apply` requests, the quick-pick rows and the
 * receipt message. Pure: no `vscode` import (src/importMemory.ts shows it; src/test/imports.test.ts checks it;
 * the contract test drives the real server with the same helpers).
 *
 * The scan answers every source found in the workspace and the home directory (Claude Code, AGENTS.md,
 * Cursor, GitHub Copilot, Cline/Roo, Hermes), each item with an id, where it would go and why, or why it
 * would be skipped (already imported, rejected in review, a duplicate); the apply imports the picked ids and is
 * refused, with nothing written, when a file changed since the scan (its fingerprint).
 */

import { OperationMethod } from "./protocol.generated";
import { request, RequestSender } from "./rpc";

export type ImportDestination = "user" | "memory" | "document" | "space";

/** Why an item would be skipped: `why` (already-imported, rejected-in-review, exact-duplicate, near-duplicate,
 * temporary-progress), `of` what. */
export interface ImportSkip {
    why: string;
    of: string;
}

/** One item of a scan. */
export interface ImportItem {
    id: string;
    path: string;
    title: string;
    destination: ImportDestination;
    reason: string;
    bytes: number;
    text: string;
    preview: string;
    redacted: string[];
    skip: ImportSkip | null;
}

/** A file a source's file imports (Claude Code's `@path`) from outside the repository and the Claude home: not
 * read unless the scan is made with `allowOutside` (credential locations never are). */
export interface ImportApproval {
    path: string;
    reason: string;
    importedBy: string[];
}

/** One source found: its files, the files refused (with the rule they broke), the files waiting for approval and
 * its items. */
export interface ImportSource {
    source: string;
    title: string;
    files: { path: string; sha256: string; bytes: number }[];
    refused: { path: string; reason: string }[];
    needsApproval?: ImportApproval[];
    items: ImportItem[];
}

/** The answer of `mnemon/import/scan`. */
export interface ImportScan {
    fingerprint: string;
    sources: ImportSource[];
    counts: Record<string, number>;
    spaceId: string | null;
    spaceProblem: string | null;
    workspace: string;
}

/** An item its Source refused (nothing of it written; the import went on): which, where to, and the rule. */
export interface ImportRefusal {
    id: string;
    source: string;
    path: string;
    title: string;
    destination: ImportDestination;
    code: string;
    field: string | null;
    rule: string;
    refusedBefore?: string | null;
}

/** The answer of `mnemon/import/apply`: `status` is `imported`, `partly-imported` (some items refused, the rest
 * written) or `refused` (every picked item refused, nothing written). */
export interface ImportReceipt {
    applied: { id: string; source: string; path: string; title: string; destination: ImportDestination; ref: string }[];
    skipped: { id: string; source: string; path: string; title: string; why: string; of: string }[];
    refusedItems?: ImportRefusal[];
    status?: "imported" | "partly-imported" | "refused";
    counts: { written: number; user: number; memory: number; document: number; space: number; skipped: number;
        refusedItems?: number };
    spaceId: string | null;
    workspace: string;
}

/** Every source of a folder's workspace and the home directory; `allowOutside`: also read the files imported from
 * outside the repository (the person approved them, {@link approvalQuestion}). */
export async function scanImports(client: RequestSender, workspace: string, allowOutside = false): Promise<ImportScan> {
    return request<ImportScan>(client, OperationMethod["imports.scan"], { workspace, allowOutside });
}

/** Import the picked items of the scan with `fingerprint` (made with the same `allowOutside`). */
export async function applyImports(client: RequestSender, workspace: string, fingerprint: string, ids: string[],
    allowOutside = false): Promise<ImportReceipt> {
    return request<ImportReceipt>(client, OperationMethod["imports.apply"], { workspace, fingerprint, ids, allowOutside });
}

/** The question asked before the picks when the scan left files imported from outside the repository unread:
 * `message` (how many) and `detail` (each file, what imports it, and that credential locations are never read);
 * `undefined` when there are none. */
export function approvalQuestion(scan: ImportScan, relative: (path: string) => string): { message: string; detail: string } | undefined {
    const waiting = scan.sources.flatMap((s) => s.needsApproval ?? []);
    if (waiting.length === 0) {
        return undefined;
    }
    const many = waiting.length !== 1;
    return {
        message: `Mnemon: ${waiting.length} imported file${many ? "s" : ""} outside the repository ${many ? "were" : "was"} not read. Read ${many ? "them" : "it"} too?`,
        detail: [...waiting.map((w) => `${relative(w.path)} (imported by ${w.importedBy.map(relative).join("; ")})`),
            "Claude Code asks you to approve such imports the first time; credential locations (~/.ssh, ~/.aws, ...) are never read."].join("\n"),
    };
}

/** Where an item goes, in words. */
export const DESTINATION_LABELS: Record<ImportDestination, string> = {
    user: "USER.md",
    memory: "MEMORY.md",
    document: "Document",
    space: "Memory Space",
};

/** Why an item is skipped, in a word or two: "duplicate", "already imported". */
const SKIP_WORDS: Record<string, string> = {
    "already-imported": "already imported",
    "rejected-in-review": "rejected in review",
    "exact-duplicate": "duplicate",
    "near-duplicate": "near duplicate",
    "temporary-progress": "temporary progress",
};

/** Whether the words of a skip name what it duplicates. */
function namesWhat(skip: ImportSkip): boolean {
    return skip.why === "exact-duplicate" || skip.why === "near-duplicate";
}

/** Why an item is skipped, in words: "duplicate of MEMORY.md", "already imported". */
export function skipText(skip: ImportSkip): string {
    const words = SKIP_WORDS[skip.why] ?? skip.why;
    return namesWhat(skip) ? `${words} of ${skip.of}` : words;
}

/** A row of the quick pick: a source's separator, or an item (picked unless it would be skipped). */
export interface ImportRow {
    separator: boolean;
    label: string;
    description?: string;
    detail?: string;
    picked?: boolean;
    id?: string;
}

/**
 * The quick-pick rows of a scan: per source a separator (its title, and how many files were refused), then
 * its items: label the preview, description where it goes (and that it would be skipped, in a word), detail why
 * (what it duplicates first) and the file (`relative` shows a path the way the person knows it). Every item is
 * picked but those the scan would skip.
 */
export function importRows(scan: ImportScan, relative: (path: string) => string): ImportRow[] {
    const rows: ImportRow[] = [];
    for (const source of scan.sources) {
        if (source.items.length === 0) {
            continue;
        }
        const refused = source.refused.length > 0 ? ` (${source.refused.length} file${source.refused.length === 1 ? "" : "s"} refused)` : "";
        rows.push({ separator: true, label: `${source.title}${refused}` });
        for (const item of source.items) {
            const to = DESTINATION_LABELS[item.destination];
            const redacted = item.redacted.length > 0 ? ` · secrets redacted: ${item.redacted.join(", ")}` : "";
            const duplicates = item.skip && namesWhat(item.skip) ? `${skipText(item.skip)}; ` : "";
            rows.push({
                separator: false,
                label: item.preview,
                description: item.skip ? `${to} · skipped: ${SKIP_WORDS[item.skip.why] ?? item.skip.why}` : to,
                detail: `${duplicates}${item.reason} (${relative(item.path)}: ${item.title})${redacted}`,
                picked: item.skip === null,
                id: item.id,
            });
        }
    }
    return rows;
}

/** The refused files of a scan, one line each ("<path>: <rule>"). */
export function refusedLines(scan: ImportScan, relative: (path: string) => string): string[] {
    return scan.sources.flatMap((s) => s.refused.map((r) => `${relative(r.path)}: ${r.reason}`));
}

/** The message when nothing was found to import. */
export function nothingFoundMessage(folderName: string, scan: ImportScan): string {
    const refused = scan.sources.reduce((n, s) => n + s.refused.length, 0);
    const files = refused > 0 ? ` (${refused} file${refused === 1 ? "" : "s"} refused: see the log)` : "";
    return `Mnemon: no memory of other assistants found for ${folderName}${files}: looked for CLAUDE.md, AGENTS.md, Cursor rules, Copilot instructions, a Cline/Roo memory bank and Hermes memories.`;
}

/** One refused item in words: "Fixture policy -> Document: documents.activeLimitBytes: <rule>". */
export function refusalText(refusal: ImportRefusal): string {
    const title = refusal.title.split(" > ").pop() ?? refusal.title;
    const field = refusal.field ? `${refusal.field}: ` : "";
    return `${title} -> ${DESTINATION_LABELS[refusal.destination] ?? refusal.destination}: ${field}${refusal.rule}`;
}

/** The receipt in one message: what was imported where, how many were skipped (and why), and the items their
 * Source refused (each with its rule; the import went on past them and tries them again when run again). */
export function importReceiptMessage(receipt: ImportReceipt): string {
    const c = receipt.counts;
    const where = (["memory", "user", "document", "space"] as const)
        .filter((t) => c[t] > 0)
        .map((t) => `${c[t]} to ${DESTINATION_LABELS[t]}`);
    const added = `imported ${c.written} item${c.written === 1 ? "" : "s"}${where.length > 0 ? ` (${where.join(", ")})` : ""}`;
    const parts = [added];
    if (c.skipped > 0) {
        const reasons = [...new Set(receipt.skipped.map((s) => skipText(s)))];
        parts.push(`skipped ${c.skipped} (${reasons.join("; ")})`);
    }
    const refused = receipt.refusedItems ?? [];
    if (refused.length > 0) {
        parts.push(`refused ${refused.length} (${refused.map(refusalText).join("; ")}): importing again tries ${refused.length === 1 ? "it" : "them"} again`);
    }
    return `Mnemon: ${parts.join("; ")}.`;
}
