/**
 * Typed helpers and texts for Mnemon Packs: `mnemon/pack/*` (pure: no `vscode` import, unit-tested;
 * re-exported by src/requests.ts). Server: mnemon_ls/ops/packs.py over the Host operations
 * `export_pack` / `inspect_pack` / `import_pack`, the same ones `mnemon-ls pack ...` and the Neovim
 * plugin's `:MnemonPackExport` / `:MnemonPackImport` (editors/neovim/lua/mnemon/packs.lua) call.
 *
 * The user profile (USER.md entries: facts about the person) stays out of a pack unless the export
 * asks for it with `includeUserProfile: true`; the export result counts what it left out
 * (`userProfile.leftOut`) and the third-party spaces it never carries (`providerSpaces.leftOut`).
 */

import { request, RequestSender } from "./rpc";
import { formatBytes } from "./units";

/** Request method names of this tier. */
export const PackMethod = {
    export: "mnemon/pack/export",
    exportFolder: "mnemon/pack/exportFolder",
    inspect: "mnemon/pack/inspect",
    import: "mnemon/pack/import",
} as const;

/** What goes into a pack (`packScope`; reference section 9). */
export type PackScope = "full" | "runtime" | "documents" | "memory-spaces";

/** One row of a manifest's `summary`: `bytes` is the component's uncompressed payload size in bytes. */
export interface PackSummaryRow {
    component: string;
    files: number;
    bytes: number;
    items: number;
}

/**
 * Result of `mnemon/pack/export` (server: `ExportedPack.to_dict`, mnemon_ls/packs/export.py, plus `path`
 * or `base64` and `workspace`). `bytes`: size of the ZIP in bytes. `userProfile.carried`: USER.md entries
 * in the pack; `userProfile.leftOut`: USER.md entries of this workspace the pack leaves out (0 when it
 * carries them or has no runtime component). `providerSpaces.leftOut`: third-party spaces left out.
 */
export interface PackExported {
    fileName: string;
    bytes: number;
    scope: PackScope;
    components: string[];
    summary: PackSummaryRow[];
    exportedAt: string;
    userProfile?: { carried: number; leftOut: number };
    providerSpaces?: { leftOut: number };
    path?: string;
    workspace?: string;
}

/** Result of `mnemon/pack/inspect` (what a pack holds; the server writes nothing). */
export interface PackInspected {
    scope: PackScope;
    exportedAt: string;
    summary: PackSummaryRow[];
    source: { plugin: string; pluginVersion: string };
    /** USER.md entries the pack carries (a user profile). */
    userProfile?: number;
}

/**
 * The counts of one component in an import receipt (server: `import_pack`, mnemon_ls/packs/importer.py).
 * Each item of the pack is one of `added` (new here), `skipped` (already here) or `renamed` (came in under
 * a new id); `removed` counts what was here and is gone (replace only; 0 or absent in merge).
 */
export interface PackPart {
    added: number;
    skipped: number;
    removed?: number;
    renamed?: { from: string; to: string }[];
}

/**
 * What happened to the user profile (USER.md): `shared` when it is the global one every workspace reads;
 * `handling` "replaced", "merged" (entries added, none removed; `optInNeeded` when replace was asked and
 * only `replaceUserProfile: true` would have replaced it) or "kept" (the pack carries none).
 */
export interface PackUserProfile {
    carried: number;
    added: number;
    skipped: number;
    removed: number;
    handling: "replaced" | "merged" | "kept";
    shared: boolean;
    path: string | null;
    optInNeeded: boolean;
}

/** The backup a replace import made first: `restore` is the `mnemon-ls` command line that puts it back. */
export interface PackBackup {
    path: string;
    components: string[];
    userProfile: boolean;
    keep: number;
    restore: string;
    written: boolean;
}

export interface PackReceipt {
    status: string;
    /** True when nothing was written: the receipt says what the import would do. */
    dryRun?: boolean;
    mode: "merge" | "replace";
    components: string[];
    runtime?: PackPart & { targets?: Record<string, PackPart>; userProfile?: PackUserProfile };
    documents?: PackPart;
    spaces?: PackPart;
    backup?: PackBackup | null;
}

/** Params of `mnemon/pack/export` with `path` (absolute: the server writes the ZIP there, 0600). */
export interface PackExportParams {
    workspace: string;
    packScope: PackScope;
    path: string;
    /** Carry the USER.md entries (the user profile); the server's default is false. */
    includeUserProfile?: boolean;
}

/** `mnemon/pack/export`: write the pack of `workspace` to `path`. */
export function exportPack(sender: RequestSender, params: PackExportParams): Promise<PackExported> {
    return request<PackExported>(sender, PackMethod.export, params);
}

/** What `mnemon/pack/exportFolder` answers: the file an export proposes (`<global root>/state/pack-exports/
 * mnemon-backup-<time>.zip`, never the workspace folder, a git work tree) and its folder (made, 0700). */
export interface PackExportFolder {
    folder: string;
    path: string;
}

/** `mnemon/pack/exportFolder`: where the save dialog starts. */
export function exportFolder(sender: RequestSender, workspace: string): Promise<PackExportFolder> {
    return request<PackExportFolder>(sender, PackMethod.exportFolder, { workspace });
}

/** `mnemon/pack/inspect`: validate the pack at `path` and say what it holds. */
export function inspectPack(sender: RequestSender, workspace: string, path: string): Promise<PackInspected> {
    return request<PackInspected>(sender, PackMethod.inspect, { workspace, path });
}

/** `mnemon/pack/import` of the pack at `path` into `workspace`. */
export function importPack(sender: RequestSender, workspace: string, path: string, mode: "merge" | "replace"): Promise<PackReceipt> {
    return request<PackReceipt>(sender, PackMethod.import, { workspace, path, mode });
}

/** The scope choices of the export command, in the order shown. */
export const SCOPE_ITEMS: readonly { label: string; description?: string; scope: PackScope }[] = [
    { label: "Full", description: "Runtime memory, documents and Memory Spaces", scope: "full" },
    { label: "Runtime memory", description: "USER.md and MEMORY.md", scope: "runtime" },
    { label: "Documents", scope: "documents" },
    { label: "Memory Spaces", description: "native stores only; never provider credentials", scope: "memory-spaces" },
];

/** Whether a pack of `scope` can carry the user profile (only the runtime component holds USER.md). */
export function scopeHasUserProfile(scope: PackScope): boolean {
    return scope === "full" || scope === "runtime";
}

/** The user-profile choices of the export command; the first (leave it out) is the default. */
export const PROFILE_ITEMS: readonly { label: string; description: string; includeUserProfile: boolean }[] = [
    {
        label: "Leave my user profile out",
        description: "USER.md entries (facts about you) stay on this machine",
        includeUserProfile: false,
    },
    {
        label: "Include my user profile",
        description: "the pack carries your USER.md entries: keep it to yourself",
        includeUserProfile: true,
    },
];

/** Placeholder of the user-profile quick pick. */
export const PROFILE_PLACEHOLDER = "Mnemon: include your user profile (USER.md)? A pack leaves it out unless you include it.";

function plural(count: number, one: string, many: string): string {
    return `${count} ${count === 1 ? one : many}`;
}

/** One line per component: "documents: 2 item(s), 3 file(s), 2 KiB". */
export function summaryText(summary: PackSummaryRow[]): string {
    return summary.map((row) => `${row.component}: ${row.items} item(s), ${row.files} file(s), ${formatBytes(row.bytes)}`).join("; ");
}

/**
 * The message of a finished export: the file written, its size in bytes, what each component holds,
 * and what was left out and why (the user profile unless included; third-party spaces always).
 */
export function exportedMessage(result: PackExported, path: string): string {
    const parts = [`Mnemon: exported ${result.scope} pack to ${path} (${formatBytes(result.bytes)}). ${summaryText(result.summary)}.`];
    const leftOut = result.userProfile?.leftOut ?? 0;
    const carried = result.userProfile?.carried ?? 0;
    if (leftOut > 0) {
        parts.push(`USER.md: ${plural(leftOut, "entry", "entries")} left out (your user profile stays on this machine; `
            + "export again and include it to carry it).");
    } else if (carried > 0) {
        parts.push(`USER.md: carries ${plural(carried, "entry", "entries")} (your user profile).`);
    }
    const providers = result.providerSpaces?.leftOut ?? 0;
    if (providers > 0) {
        parts.push(`Memory Spaces: ${plural(providers, "provider space", "provider spaces")} left out `
            + "(packs never carry third-party connections; their content stays with the provider).");
    }
    return parts.join(" ");
}

/**
 * What an import did (or, for a dry run, would do), in one line: per component what was added, already
 * here, under a new id and (replace) removed; what happened to a shared user profile; the backup.
 */
export function receiptText(receipt: PackReceipt): string {
    const parts: string[] = [];
    const replace = receipt.mode === "replace";
    for (const [key, label] of [["runtime", "Runtime entries"], ["documents", "documents"], ["spaces", "Memory Spaces"]] as const) {
        const part = receipt[key];
        if (!part) {
            continue;
        }
        let text = `${label}: ${part.added} added, ${part.skipped} already here`;
        if (part.renamed?.length) {
            text += `, ${part.renamed.length} under a new id`;
        }
        if (replace) {
            text += `, ${part.removed ?? 0} removed`;
        }
        parts.push(text);
    }
    const head = receipt.dryRun
        ? `Mnemon: dry run, nothing was written; the import (${receipt.mode}) would do this.`
        : `Mnemon: pack imported (${receipt.mode}).`;
    const tail: string[] = [];
    const profile = receipt.runtime?.userProfile;
    if (profile?.optInNeeded) {
        tail.push(`USER.md${profile.shared ? " (shared by every workspace)" : ""} was merged, not replaced: `
            + `${profile.added} added, none removed (replaceUserProfile replaces it).`);
    } else if (profile?.handling === "replaced" && profile.shared) {
        tail.push(`USER.md (shared by every workspace) replaced: ${profile.removed} removed, ${profile.added} added.`);
    }
    if (receipt.backup) {
        tail.push(receipt.backup.written
            ? `What was replaced is saved in ${receipt.backup.path} (restore: ${receipt.backup.restore}).`
            : `What would be replaced would first be saved in ${receipt.backup.path}.`);
    }
    return [`${head} ${parts.join("; ")}.`, ...tail].join(" ");
}
