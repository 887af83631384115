/**
 * Pure text for the UI (status bar, messages, the status report). No `vscode` import, unit-tested.
 */

import type { MnemonError, Receipt, StatusResult, Usage, WorkspaceStatus } from "./requests";

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
    return `${name}: ${entries} ${entries === 1 ? "entry" : "entries"}, ${usage.used}/${usage.limit} bytes (${percent(usage)}%)`;
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
    return `Mnemon: ${receipt.message} ${file}${scope}: ${entries}, ${receipt.usage.used}/${receipt.usage.limit} bytes.`;
}

/** Error message for a rejected request, e.g. `Mnemon: not remembered: content: must not contain § (invalid-input)`. */
export function errorMessage(prefix: string, error: MnemonError): string {
    let text = `Mnemon: ${prefix}: ${error.message}`;
    if (error.code === "runtime-capacity") {
        const { used, projected, limit } = error.data as { used?: number; projected?: number; limit?: number };
        if (typeof projected === "number" && typeof limit === "number") {
            text += ` (would be ${projected}/${limit} bytes, now ${used ?? "?"}; remove entries or raise mnemon.runtimeMemory.memoryLimitBytes)`;
        }
    }
    return `${text} [${error.code}]`;
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
