/**
 * The user-facing commands. They call `mnemon/*` requests through src/requests.ts, never the
 * server's `mnemon.server.*` executeCommand ids (vscode-languageclient registers those itself;
 * registering or contributing them here would collide, lsp-anchors 4.4).
 */

import * as vscode from "vscode";
import { StatusDocument, WakeDocuments } from "./documents";
import { errorMessage, receiptMessage, statusReport } from "./format";
import { asMnemonError, PROTOCOL_VERSION, remember, status, workspaceFor } from "./requests";
import { MnemonServer } from "./server";
import { StatusBar } from "./status";

export interface CommandContext {
    server: MnemonServer;
    statusBar: StatusBar;
    wakeDocuments: WakeDocuments;
    statusDocument: StatusDocument;
}

/** Show a request failure: the server's message and `data.code`, or the local error. */
async function reportError(ctx: CommandContext, prefix: string, error: unknown): Promise<void> {
    if ((error as { reported?: boolean } | undefined)?.reported) {
        return; // a failed server start, already shown with its fix
    }
    const mnemon = asMnemonError(error);
    const text = mnemon ? errorMessage(prefix, mnemon) : `Mnemon: ${prefix}: ${error instanceof Error ? error.message : String(error)}`;
    ctx.server.log.error(text);
    const pick = await vscode.window.showErrorMessage(text, ...(mnemon ? [] : ["Show Log"]));
    if (pick === "Show Log") {
        ctx.server.log.show();
    }
}

function explainNoBranch(reason: string | null, detached: boolean): string {
    if (detached) {
        return "HEAD is detached";
    }
    return reason ? reason : "no branch is checked out";
}

async function rememberSelection(ctx: CommandContext, forBranch: boolean): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
        void vscode.window.showErrorMessage("Mnemon: open a file and select the text to remember.");
        return;
    }
    const document = editor.document;
    const content = document.getText(editor.selection);
    if (editor.selection.isEmpty || content.trim() === "") {
        void vscode.window.showErrorMessage("Mnemon: select the text to remember first.");
        return;
    }
    if (document.uri.scheme !== "file") {
        void vscode.window.showErrorMessage(
            `Mnemon: only text of a file on disk inside a workspace folder can be remembered (this document is '${document.uri.scheme}:').`,
        );
        return;
    }
    let branches: string[] | undefined;
    try {
        const client = await ctx.server.ensureClient();
        const workspace = client.code2ProtocolConverter.asUri(document.uri);
        if (forBranch) {
            const result = await status(client);
            ctx.statusBar.update(result);
            const row = workspaceFor(result, workspace);
            if (!row) {
                void vscode.window.showErrorMessage(`Mnemon: ${vscode.workspace.asRelativePath(document.uri)} is not inside a workspace folder known to mnemon-ls.`);
                return;
            }
            if (!row.branch) {
                void vscode.window.showErrorMessage(
                    `Mnemon: cannot remember for this branch: ${explainNoBranch(row.branchReason, row.detached)} in ${row.name || row.uri}. Use 'Mnemon: Remember Selection' to remember it for every branch.`,
                );
                return;
            }
            branches = [row.branch];
        }
        const receipt = await remember(client, { workspace, content, branches });
        void vscode.window.showInformationMessage(receiptMessage(receipt, branches));
    } catch (error) {
        await reportError(ctx, "not remembered", error);
        return;
    } finally {
        ctx.statusBar.refresh();
    }
    ctx.wakeDocuments.refreshAll();
}

/** The folder a wake/status command is about: the argument, the active editor's folder, the only folder, or a pick. */
async function pickFolder(arg: unknown): Promise<vscode.WorkspaceFolder | undefined> {
    const candidates: (vscode.Uri | undefined)[] = [arg instanceof vscode.Uri ? arg : undefined, vscode.window.activeTextEditor?.document.uri];
    for (const uri of candidates) {
        if (uri?.scheme === "file") {
            const folder = vscode.workspace.getWorkspaceFolder(uri);
            if (folder) {
                return folder;
            }
        }
        if (uri?.scheme === WakeDocuments.scheme) {
            const workspace = WakeDocuments.workspaceOf(uri);
            const folder = workspace ? vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(workspace)) : undefined;
            if (folder) {
                return folder;
            }
        }
    }
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folders.length <= 1) {
        return folders[0];
    }
    return vscode.window.showWorkspaceFolderPick({ placeHolder: "Mnemon: wake snapshot of which folder?" });
}

async function showWakeSnapshot(ctx: CommandContext, arg: unknown): Promise<void> {
    const folder = await pickFolder(arg);
    if (!folder) {
        if (!vscode.workspace.workspaceFolders?.length) {
            void vscode.window.showErrorMessage("Mnemon: open a folder first; the wake snapshot belongs to a workspace folder.");
        }
        return;
    }
    try {
        const client = await ctx.server.ensureClient();
        await ctx.wakeDocuments.show(client.code2ProtocolConverter.asUri(folder.uri), folder.name);
    } catch (error) {
        await reportError(ctx, "cannot show the wake snapshot", error);
    }
}

async function showStatus(ctx: CommandContext): Promise<void> {
    try {
        const result = await status(await ctx.server.ensureClient());
        ctx.statusBar.update(result);
        await ctx.statusDocument.show(statusReport(result, PROTOCOL_VERSION));
    } catch (error) {
        await reportError(ctx, "cannot read the status", error);
    }
}

async function restartServer(ctx: CommandContext): Promise<void> {
    await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: "Mnemon: restarting mnemon-ls" },
        () => ctx.server.restart("command"),
    );
    if (ctx.server.running) {
        void vscode.window.showInformationMessage("Mnemon: mnemon-ls restarted.");
    }
}

export function registerCommands(ctx: CommandContext): vscode.Disposable[] {
    return [
        vscode.commands.registerCommand("mnemon.rememberSelection", () => rememberSelection(ctx, false)),
        vscode.commands.registerCommand("mnemon.rememberSelectionForBranch", () => rememberSelection(ctx, true)),
        vscode.commands.registerCommand("mnemon.showWakeSnapshot", (arg?: unknown) => showWakeSnapshot(ctx, arg)),
        vscode.commands.registerCommand("mnemon.showStatus", () => showStatus(ctx)),
        vscode.commands.registerCommand("mnemon.restartServer", () => restartServer(ctx)),
    ];
}
