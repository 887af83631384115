/**
 * Mnemon Packs in VS Code: "Mnemon: Export Pack" and "Mnemon: Import Pack" (reference section 9).
 *
 * Both call the server's `mnemon/pack/*` requests (the same Host operations as `mnemon-ls pack ...`):
 * export writes the ZIP where the save dialog says; import validates the chosen file first
 * (`mnemon/pack/inspect`), shows what it holds, asks merge or replace (replace asks again, modal), then
 * imports. Errors show the server's message and stable code; a refused import changed nothing.
 */

import * as vscode from "vscode";
import { errorMessage } from "./format";
import { asMnemonError, RequestSender } from "./requests";
import { MnemonServer } from "./server";

export const PackMethod = {
    export: "mnemon/pack/export",
    inspect: "mnemon/pack/inspect",
    import: "mnemon/pack/import",
} as const;

export type PackScope = "full" | "runtime" | "documents" | "memory-spaces";

export interface PackSummaryRow {
    component: string;
    files: number;
    bytes: number;
    items: number;
}

export interface PackExported {
    fileName: string;
    bytes: number;
    scope: PackScope;
    summary: PackSummaryRow[];
    path?: string;
}

export interface PackInspected {
    scope: PackScope;
    exportedAt: string;
    summary: PackSummaryRow[];
    source: { plugin: string; pluginVersion: string };
}

export interface PackPart {
    added: number;
    skipped: number;
    replaced?: number;
    renamed?: { from: string; to: string }[];
}

export interface PackReceipt {
    status: string;
    mode: "merge" | "replace";
    components: string[];
    runtime?: PackPart;
    documents?: PackPart;
    spaces?: PackPart;
}

/** One line per component: "documents: 2 items, 3 files, 1998 bytes". */
export function summaryText(summary: PackSummaryRow[]): string {
    return summary.map((row) => `${row.component}: ${row.items} item(s), ${row.files} file(s), ${row.bytes} bytes`).join("; ");
}

/** What an import did, in one line. */
export function receiptText(receipt: PackReceipt): string {
    const parts: string[] = [];
    for (const [key, label] of [["runtime", "Runtime entries"], ["documents", "documents"], ["spaces", "Memory Spaces"]] as const) {
        const part = receipt[key];
        if (!part) {
            continue;
        }
        // `added` counts the renamed spaces too: one outcome each
        let text = `${label}: ${part.added - (part.renamed?.length ?? 0)} added, ${part.skipped} already here`;
        if (part.replaced) {
            text += `, ${part.replaced} replaced`;
        }
        if (part.renamed?.length) {
            text += `, ${part.renamed.length} under a new id`;
        }
        parts.push(text);
    }
    return `Mnemon: pack imported (${receipt.mode}). ${parts.join("; ")}.`;
}

export async function exportPack(client: RequestSender, workspace: string, packScope: PackScope, path: string): Promise<PackExported> {
    return (await client.sendRequest(PackMethod.export, { workspace, packScope, path })) as PackExported;
}

export async function inspectPack(client: RequestSender, workspace: string, path: string): Promise<PackInspected> {
    return (await client.sendRequest(PackMethod.inspect, { workspace, path })) as PackInspected;
}

export async function importPack(client: RequestSender, workspace: string, path: string, mode: "merge" | "replace"): Promise<PackReceipt> {
    return (await client.sendRequest(PackMethod.import, { workspace, path, mode })) as PackReceipt;
}

async function folderFor(placeHolder: string): Promise<vscode.WorkspaceFolder | undefined> {
    const active = vscode.window.activeTextEditor?.document.uri;
    const folder = active?.scheme === "file" ? vscode.workspace.getWorkspaceFolder(active) : undefined;
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folder) {
        return folder;
    }
    if (folders.length <= 1) {
        if (!folders.length) {
            void vscode.window.showErrorMessage("Mnemon: open a folder first; a pack is the memory of a workspace folder.");
        }
        return folders[0];
    }
    return vscode.window.showWorkspaceFolderPick({ placeHolder });
}

function showFailure(server: MnemonServer, prefix: string, error: unknown): void {
    if ((error as { reported?: boolean } | undefined)?.reported) {
        return;
    }
    const mnemon = asMnemonError(error);
    const text = mnemon ? errorMessage(prefix, mnemon) : `Mnemon: ${prefix}: ${error instanceof Error ? error.message : String(error)}`;
    server.log.error(text);
    void vscode.window.showErrorMessage(text);
}

async function exportCommand(server: MnemonServer): Promise<void> {
    const folder = await folderFor("Mnemon: export the memory of which folder?");
    if (!folder) {
        return;
    }
    const scopes: (vscode.QuickPickItem & { scope: PackScope })[] = [
        { label: "Full", description: "Runtime memory, documents and Memory Spaces", scope: "full" },
        { label: "Runtime memory", description: "USER.md and MEMORY.md", scope: "runtime" },
        { label: "Documents", scope: "documents" },
        { label: "Memory Spaces", description: "native stores only; never provider credentials", scope: "memory-spaces" },
    ];
    const scope = await vscode.window.showQuickPick(scopes, { placeHolder: "Mnemon: what goes into the pack?" });
    if (!scope) {
        return;
    }
    const target = await vscode.window.showSaveDialog({
        defaultUri: vscode.Uri.joinPath(folder.uri, "mnemon-backup.zip"),
        filters: { "Mnemon Pack": ["zip"] },
        title: "Mnemon: save the pack as",
    });
    if (!target) {
        return;
    }
    try {
        const client = await server.ensureClient();
        const workspace = client.code2ProtocolConverter.asUri(folder.uri);
        const result = await exportPack(client, workspace, scope.scope, target.fsPath);
        void vscode.window.showInformationMessage(`Mnemon: exported ${result.scope} pack to ${target.fsPath}. ${summaryText(result.summary)}`);
    } catch (error) {
        showFailure(server, "pack not exported", error);
    }
}

async function importCommand(server: MnemonServer): Promise<void> {
    const folder = await folderFor("Mnemon: import into which folder's memory?");
    if (!folder) {
        return;
    }
    const picked = await vscode.window.showOpenDialog({
        canSelectMany: false, filters: { "Mnemon Pack": ["zip"] }, title: "Mnemon: import which pack?",
    });
    if (!picked?.length) {
        return;
    }
    const path = picked[0].fsPath;
    try {
        const client = await server.ensureClient();
        const workspace = client.code2ProtocolConverter.asUri(folder.uri);
        const inspected = await inspectPack(client, workspace, path);
        const mode = await vscode.window.showQuickPick(
            [
                { label: "Merge", description: "add what is not here yet (nothing is removed)", mode: "merge" as const },
                { label: "Replace", description: "the pack's components replace this folder's", mode: "replace" as const },
            ],
            { placeHolder: `${inspected.scope} pack of ${inspected.exportedAt}: ${summaryText(inspected.summary)}` },
        );
        if (!mode) {
            return;
        }
        if (mode.mode === "replace") {
            const sure = await vscode.window.showWarningMessage(
                `Replace the ${inspected.scope} memory of ${folder.name} with this pack?`, { modal: true }, "Replace");
            if (sure !== "Replace") {
                return;
            }
        }
        const receipt = await importPack(client, workspace, path, mode.mode);
        void vscode.window.showInformationMessage(receiptText(receipt));
    } catch (error) {
        showFailure(server, "pack not imported (nothing changed)", error);
    }
}

export function registerPackCommands(server: MnemonServer): vscode.Disposable[] {
    return [
        vscode.commands.registerCommand("mnemon.exportPack", () => exportCommand(server)),
        vscode.commands.registerCommand("mnemon.importPack", () => importCommand(server)),
    ];
}
