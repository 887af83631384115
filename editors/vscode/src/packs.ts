/**
 * Mnemon Packs in VS Code: "Mnemon: Export Pack" and "Mnemon: Import Pack" (reference section 9).
 *
 * Both call the server's `mnemon/pack/*` requests (the same Host operations as `mnemon-ls pack ...` and
 * Neovim's `:MnemonPackExport` / `:MnemonPackImport`; helpers and texts in src/requestsPacks.ts).
 * Export asks what goes in (the pack scope), then, when the scope holds Runtime memory, whether the user
 * profile (USER.md entries) goes in too (default: left out), then where to save (the dialog starts at the
 * server's exports folder, `mnemon/pack/exportFolder`, not the workspace folder, a git work tree where
 * `git add .` would commit the memory); the message names the
 * file, its size and what was left out. Import validates the chosen file first (`mnemon/pack/inspect`),
 * shows what it holds, asks merge or replace (replace asks again, modal), then imports. Cancelling any
 * step sends nothing and writes nothing. Errors show the server's message and stable code; a refused
 * import changed nothing.
 */

import * as vscode from "vscode";
import { errorMessage } from "./format";
import { asMnemonError } from "./requests";
import {
    exportedMessage,
    exportFolder,
    exportPack,
    importPack,
    inspectPack,
    PROFILE_ITEMS,
    PROFILE_PLACEHOLDER,
    receiptText,
    SCOPE_ITEMS,
    scopeHasUserProfile,
    summaryText,
} from "./requestsPacks";
import { MnemonServer } from "./server";

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
    const scope = await vscode.window.showQuickPick(SCOPE_ITEMS.map((item) => ({ ...item })),
        { placeHolder: "Mnemon: what goes into the pack?" });
    if (!scope) {
        return;
    }
    let includeUserProfile = false;
    if (scopeHasUserProfile(scope.scope)) {
        const profile = await vscode.window.showQuickPick(PROFILE_ITEMS.map((item) => ({ ...item })),
            { placeHolder: PROFILE_PLACEHOLDER });
        if (!profile) {
            return;
        }
        includeUserProfile = profile.includeUserProfile;
    }
    let proposed: vscode.Uri;
    let client;
    let workspace: string;
    try {
        client = await server.ensureClient();
        workspace = client.code2ProtocolConverter.asUri(folder.uri);
        proposed = vscode.Uri.file((await exportFolder(client, workspace)).path);
    } catch (error) {
        showFailure(server, "pack not exported", error);
        return;
    }
    const target = await vscode.window.showSaveDialog({
        defaultUri: proposed,
        filters: { "Mnemon Pack": ["zip"] },
        title: "Mnemon: save the pack as",
    });
    if (!target) {
        return;
    }
    try {
        const result = await exportPack(client, { workspace, packScope: scope.scope, path: target.fsPath, includeUserProfile });
        void vscode.window.showInformationMessage(exportedMessage(result, target.fsPath));
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
