/**
 * The user-facing commands. They call `mnemon/*` requests through src/requests.ts. The server's
 * `mnemon.server.*` executeCommand ids are never contributed, registered or run as VS Code commands
 * (vscode-languageclient registers those itself; doing so here would collide, lsp-anchors 4.4); the
 * exceptions are plain `workspace/executeCommand` *requests* for "Create Document from File" and
 * "Remember Selection"
 * (src/requests.ts `createDocumentFromFile`), so that this logic lives only in the server.
 */

import * as vscode from "vscode";
import { StatusDocument, WakeDocuments } from "./documents";
import { importMemory } from "./importMemory";
import { judgeRecord, listProposals, noProposalsMessage, proposalPickItem, VERDICT_ITEMS, verdictMessage } from "./proposals";
import {
    createdMessage,
    errorMessage,
    noResultsMessage,
    noticesMessage,
    receiptMessage,
    rememberTargetRows,
    searchPickItem,
    searchTitle,
    spaceReceiptMessage,
    statusReport,
} from "./format";
import {
    asMnemonError,
    createDocumentFromFile,
    deactivateSpace,
    listSpaces,
    PROTOCOL_VERSION,
    rememberSelectionInMemory,
    rememberSelectionInSpace,
    RequestSender,
    SearchHit,
    SpaceView,
    searchDocuments,
    status,
    workspaceFor,
    WriteReceipt,
} from "./requests";
import { MnemonServer } from "./server";
import { StatusBar } from "./status";
import { MnemonViews, showMutationError } from "./views";

export interface CommandContext {
    server: MnemonServer;
    statusBar: StatusBar;
    wakeDocuments: WakeDocuments;
    statusDocument: StatusDocument;
    views: MnemonViews;
}

/** Show a request failure: the server's message and `data.code`, or the local error. */
async function reportError(ctx: CommandContext, prefix: string, error: unknown): Promise<void> {
    if ((error as { reported?: boolean } | undefined)?.reported) {
        return; // a failed server start, already shown with its fix
    }
    const mnemon = asMnemonError(error);
    if (mnemon?.code === "runtime-capacity") {
        // "Open MEMORY.md", "Remove entries...", "Raise limit"
        await showMutationError({ server: ctx.server, changed: () => ctx.statusBar.refresh() }, prefix, error);
        return;
    }
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

const RUNTIME_TARGET = "runtime" as const;
type RememberTarget = typeof RUNTIME_TARGET | SpaceView;
type TargetItem = vscode.QuickPickItem & { target?: RememberTarget };

/** The target pick's rows: MEMORY.md, then the spaces of {@link rememberTargetRows} under "active" / "inactive". */
function rememberTargetItems(spaces: SpaceView[], scope: string): TargetItem[] {
    const items: TargetItem[] = [{ label: "Runtime memory (MEMORY.md)", description: `wake snapshot${scope}`, target: RUNTIME_TARGET }];
    let group: string | undefined;
    for (const row of rememberTargetRows(spaces, scope)) {
        if (row.group !== group) {
            group = row.group;
            items.push({ label: group === "active" ? "active now" : "inactive", kind: vscode.QuickPickItemKind.Separator });
        }
        items.push({ label: row.label, description: row.description, detail: row.detail, target: row.space });
    }
    return items;
}

/**
 * Where "Remember Selection" writes: MEMORY.md when the folder has no active Memory Space (no
 * prompt, as before spaces existed), else the user's pick of MEMORY.md or a space (active or not,
 * marked). Resolves to undefined when the pick is dismissed. A server without spaces (or a failing
 * list) falls back to MEMORY.md, logged.
 */
async function pickRememberTarget(ctx: CommandContext, client: RequestSender, workspace: string, branch?: string): Promise<RememberTarget | undefined> {
    let spaces: SpaceView[];
    try {
        spaces = (await listSpaces(client, { workspace })).spaces;
    } catch (error) {
        const mnemon = asMnemonError(error);
        ctx.server.log.warn(`cannot list the Memory Spaces of ${workspace} (remembering in MEMORY.md): ${mnemon ? errorMessage("spaces", mnemon) : String(error)}`);
        return RUNTIME_TARGET;
    }
    if (!spaces.some((s) => s.active)) {
        return RUNTIME_TARGET;
    }
    const scope = branch ? ` for branch ${branch}` : "";
    const pick = await vscode.window.showQuickPick(rememberTargetItems(spaces, scope), {
        title: `Mnemon: remember the selection${scope} in…`,
        placeHolder: "Runtime memory or a Memory Space",
        matchOnDescription: true,
        matchOnDetail: true,
    });
    return pick?.target;
}

/** Show the receipt of a remember into a space; one that activated the space offers to undo that. */
async function showSpaceReceipt(ctx: CommandContext, client: RequestSender, receipt: WriteReceipt, workspace: string, branch?: string): Promise<void> {
    const text = spaceReceiptMessage(receipt, branch);
    if (receipt.status !== "committed" && receipt.status !== "skipped") {
        void vscode.window.showWarningMessage(text);
        return;
    }
    if (!receipt.activated) {
        void vscode.window.showInformationMessage(text);
        return;
    }
    const undo = `Deactivate ${receipt.spaceName}`;
    if ((await vscode.window.showInformationMessage(text, undo)) !== undo) {
        return;
    }
    try {
        await deactivateSpace(client, { workspace, spaceId: receipt.spaceId });
        void vscode.window.setStatusBarMessage(`Mnemon: ${receipt.spaceName} is inactive again`, 5000);
    } catch (error) {
        await reportError(ctx, `${receipt.spaceName} not deactivated`, error);
    } finally {
        ctx.views.refreshAll();
        ctx.wakeDocuments.refreshAll();
    }
}

/**
 * "Remember Selection": the server's command (`ServerCommand.rememberSelection`) does the work (a selected comment
 * loses its comment markers there, for every editor alike); this picks the target and shows the receipt.
 */
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
        const uri = client.code2ProtocolConverter.asUri(document.uri);
        if (forBranch) {
            const result = await status(client);
            ctx.statusBar.update(result);
            const row = workspaceFor(result, uri);
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
        const target = await pickRememberTarget(ctx, client, uri, branches?.[0]);
        if (target === undefined) {
            return; // the target pick was dismissed
        }
        // The selection's lines: the server cites them when the file is saved as shown (issue 24 item 2).
        const { start, end } = editor.selection;
        const range = { start: { line: start.line, character: start.character }, end: { line: end.line, character: end.character } };
        const args = { uri, text: content, range, languageId: document.languageId, branches };
        if (target !== RUNTIME_TARGET) {
            const receipt = await rememberSelectionInSpace(client, { ...args, spaceId: target.id });
            ctx.wakeDocuments.refreshAll(); // the wake lists the active spaces
            ctx.views.refreshAll();
            await showSpaceReceipt(ctx, client, receipt, receipt.workspace ?? uri, branches?.[0]);
            return;
        }
        const receipt = await rememberSelectionInMemory(client, args);
        void vscode.window.showInformationMessage(receiptMessage(receipt, branches));
    } catch (error) {
        await reportError(ctx, "not remembered", error);
        return;
    } finally {
        ctx.statusBar.refresh();
    }
    ctx.wakeDocuments.refreshAll();
}

/** The folder a wake/search command is about: the argument, the active editor's folder, the only folder, or a pick. */
async function pickFolder(arg: unknown, placeHolder = "Mnemon: wake snapshot of which folder?"): Promise<vscode.WorkspaceFolder | undefined> {
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
    return vscode.window.showWorkspaceFolderPick({ placeHolder });
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

// ------------------------------------------------------------------------------------------ documents

/** Hits shown by "Search Documents" (the server's default; it allows 1..50). */
export const SEARCH_LIMIT = 20;

/**
 * The files "Create Document from File" is about: the explorer selection (clicked item + the other
 * selected files), the Uri an editor menu passes, else the active editor's document.
 */
function createTargets(arg: unknown, selected: unknown): vscode.Uri[] {
    if (arg instanceof vscode.Uri) {
        const many = Array.isArray(selected) && selected.length > 1 && selected.every((u) => u instanceof vscode.Uri);
        return many ? (selected as vscode.Uri[]) : [arg];
    }
    const active = vscode.window.activeTextEditor?.document.uri;
    return active ? [active] : [];
}

function baseName(uri: vscode.Uri): string {
    return uri.path.split("/").pop() || uri.toString();
}

/**
 * The server reads the file from disk: an editor with unsaved changes must be saved first. Resolves
 * to false when the user declines or the save fails (already said so).
 */
async function savedOnDisk(uri: vscode.Uri): Promise<boolean> {
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (!document?.isDirty) {
        return true;
    }
    const save = "Save and Create";
    const pick = await vscode.window.showWarningMessage(
        `Mnemon: ${baseName(uri)} has unsaved changes. The document is created from the file on disk; save it first?`,
        { modal: true },
        save,
    );
    if (pick !== save) {
        return false;
    }
    if (!(await document.save())) {
        void vscode.window.showErrorMessage(`Mnemon: ${baseName(uri)} was not saved; no document created.`);
        return false;
    }
    return true;
}

async function createDocumentFrom(ctx: CommandContext, uri: vscode.Uri): Promise<void> {
    if (uri.scheme !== "file") {
        void vscode.window.showErrorMessage(
            uri.scheme === "untitled"
                ? "Mnemon: save this file inside a workspace folder first; a document is created from a file on disk."
                : `Mnemon: only a file on disk inside a workspace folder can become a document (this one is '${uri.scheme}:').`,
        );
        return;
    }
    if (!(await savedOnDisk(uri))) {
        return;
    }
    try {
        const client = await ctx.server.ensureClient();
        const result = await vscode.window.withProgress(
            { location: vscode.ProgressLocation.Window, title: `Mnemon: creating a document from ${baseName(uri)}` },
            () => createDocumentFromFile(client, { uri: client.code2ProtocolConverter.asUri(uri) }),
        );
        if (!result.success) {
            // The server has already shown "mnemon: no document created: ..." (window/showMessage);
            // showing it again here would pop the same error twice.
            ctx.server.log.error(`no document created from ${uri.toString()}: ${result.error.message} [${result.error.code}]`);
            return;
        }
        // VS Code supports window/showDocument, so the server normally opened the document already
        // (`shown`); open it here only when that did not happen, never twice.
        if (!result.shown) {
            // Rendered and read-only, never the raw managed file.
            await vscode.commands.executeCommand("mnemon.openDocument", { workspace: result.workspace, id: result.document.id, title: result.document.title });
        }
        if (result.notices.length > 0) {
            void vscode.window.showWarningMessage(noticesMessage(result.notices));
        }
        void vscode.window.showInformationMessage(createdMessage(result.document));
        ctx.wakeDocuments.refreshAll(); // the wake lists documents
    } catch (error) {
        await reportError(ctx, `no document created from ${baseName(uri)}`, error);
    }
}

async function createDocumentFromFileCommand(ctx: CommandContext, arg: unknown, selected: unknown): Promise<void> {
    let targets = createTargets(arg, selected);
    if (targets.length === 0) {
        // No file in hand (the Documents view's welcome button, the palette with no editor): pick one.
        const folder = vscode.workspace.workspaceFolders?.[0];
        if (!folder) {
            void vscode.window.showErrorMessage("Mnemon: open a folder first; a document is created from a file of a workspace folder.");
            return;
        }
        targets = (await vscode.window.showOpenDialog({
            defaultUri: folder.uri,
            canSelectFiles: true,
            canSelectFolders: false,
            canSelectMany: true,
            openLabel: "Create Document",
            title: "Mnemon: create a document from which file?",
        })) ?? [];
        if (targets.length === 0) {
            return;
        }
    }
    for (const uri of targets) {
        if (targets.length > 1) {
            const stat = await Promise.resolve(vscode.workspace.fs.stat(uri)).catch(() => undefined);
            if (stat && stat.type & vscode.FileType.Directory) {
                continue; // a folder in a multi-selection: only files become documents
            }
        }
        await createDocumentFrom(ctx, uri);
    }
}

type HitItem = vscode.QuickPickItem & { hit: SearchHit };

async function searchDocumentsCommand(ctx: CommandContext, arg: unknown): Promise<void> {
    const folder = await pickFolder(arg, "Mnemon: search the documents of which folder?");
    if (!folder) {
        if (!vscode.workspace.workspaceFolders?.length) {
            void vscode.window.showErrorMessage("Mnemon: open a folder first; documents belong to a workspace folder.");
        }
        return;
    }
    const query = await vscode.window.showInputBox({
        title: "Mnemon: Search Documents",
        prompt: `Search the documents of ${folder.name}: title, description and body (CJK text works too). Leave empty to list them all.`,
        placeHolder: "e.g. deployment checklist",
        ignoreFocusOut: true,
    });
    if (query === undefined) {
        return;
    }
    try {
        const client = await ctx.server.ensureClient();
        const workspace = client.code2ProtocolConverter.asUri(folder.uri);
        const result = await vscode.window.withProgress(
            { location: vscode.ProgressLocation.Window, title: "Mnemon: searching documents" },
            () => searchDocuments(client, { workspace, query, limit: SEARCH_LIMIT }),
        );
        if (result.notices.length > 0) {
            void vscode.window.showWarningMessage(noticesMessage(result.notices));
        }
        if (result.results.length === 0) {
            void vscode.window.showInformationMessage(noResultsMessage(query, folder.name));
            return;
        }
        const items: HitItem[] = result.results.map((hit) => ({ ...searchPickItem(hit), hit }));
        const pick = await vscode.window.showQuickPick(items, {
            title: searchTitle(result),
            placeHolder: "Open a document",
            matchOnDescription: true,
            matchOnDetail: true,
        });
        if (!pick) {
            return;
        }
        // A rendered, read-only preview (never the raw managed file with its frontmatter).
        await vscode.commands.executeCommand("mnemon.openDocument", { workspace, id: pick.hit.id, title: pick.hit.title });
    } catch (error) {
        await reportError(ctx, "cannot search documents", error);
    }
}

// ------------------------------------------------------------------------------------------ recall

async function recallCommand(ctx: CommandContext, arg: unknown): Promise<void> {
    const folder = await pickFolder(arg, "Mnemon: recall from which folder?");
    if (!folder) {
        if (!vscode.workspace.workspaceFolders?.length) {
            void vscode.window.showErrorMessage("Mnemon: open a folder first; Memory Spaces belong to a workspace folder's store.");
        }
        return;
    }
    try {
        const client = await ctx.server.ensureClient();
        // The results go to the Mnemon view's "Recall Results" (copy, forget from there).
        await ctx.views.recallCommand(client.code2ProtocolConverter.asUri(folder.uri));
    } catch (error) {
        await reportError(ctx, "cannot recall", error);
    }
}

/** "Mnemon: Review Proposals": pick an assistant's proposal, then Verify or Reject it (two picks). */
async function reviewProposals(ctx: CommandContext, arg: unknown): Promise<void> {
    const folder = await pickFolder(arg, "Mnemon: review the proposals of which folder?");
    if (!folder) {
        return;
    }
    try {
        const client = await ctx.server.ensureClient();
        const workspace = client.code2ProtocolConverter.asUri(folder.uri);
        const records = await listProposals(client, workspace);
        if (records.length === 0) {
            void vscode.window.showInformationMessage(noProposalsMessage(folder.name));
            return;
        }
        const pick = await vscode.window.showQuickPick(records.map((record) => ({ ...proposalPickItem(record), record })), {
            title: `Mnemon: ${records.length} proposal(s) in ${folder.name}`, placeHolder: "Review a proposal", matchOnDetail: true,
        });
        if (!pick) {
            return;
        }
        const verdict = await vscode.window.showQuickPick([...VERDICT_ITEMS], { title: pick.label, placeHolder: "Verify or reject" });
        if (!verdict) {
            return;
        }
        const receipt = await judgeRecord(client, workspace, pick.record, verdict.verdict);
        void vscode.window.showInformationMessage(verdictMessage(verdict.verdict, receipt));
    } catch (error) {
        const mnemon = asMnemonError(error);
        void vscode.window.showErrorMessage(mnemon ? errorMessage("Mnemon: proposal not reviewed", mnemon) : `Mnemon: ${String(error)}`);
    }
}

/** "Mnemon: Import Memory from Other Assistants…": scan, pick, import (src/importMemory.ts). */
async function importMemoryCommand(ctx: CommandContext, arg: unknown): Promise<void> {
    const folder = await pickFolder(arg, "Mnemon: import into which folder's memory?");
    if (!folder) {
        if (!vscode.workspace.workspaceFolders?.length) {
            void vscode.window.showErrorMessage("Mnemon: open a folder first; the memory of other assistants is found in a workspace folder.");
        }
        return;
    }
    try {
        if (await importMemory(ctx.server, folder)) {
            ctx.statusBar.refresh();
        }
    } catch (error) {
        await reportError(ctx, "nothing imported", error);
    }
}

export function registerCommands(ctx: CommandContext): vscode.Disposable[] {
    return [
        vscode.commands.registerCommand("mnemon.rememberSelection", () => rememberSelection(ctx, false)),
        vscode.commands.registerCommand("mnemon.rememberSelectionForBranch", () => rememberSelection(ctx, true)),
        vscode.commands.registerCommand("mnemon.showWakeSnapshot", (arg?: unknown) => showWakeSnapshot(ctx, arg)),
        vscode.commands.registerCommand("mnemon.showStatus", () => showStatus(ctx)),
        vscode.commands.registerCommand("mnemon.restartServer", () => restartServer(ctx)),
        vscode.commands.registerCommand("mnemon.showLog", () => ctx.server.log.show()),
        vscode.commands.registerCommand("mnemon.createDocumentFromFile", (arg?: unknown, selected?: unknown) =>
            createDocumentFromFileCommand(ctx, arg, selected),
        ),
        vscode.commands.registerCommand("mnemon.searchDocuments", (arg?: unknown) => searchDocumentsCommand(ctx, arg)),
        vscode.commands.registerCommand("mnemon.recall", (arg?: unknown) => recallCommand(ctx, arg)),
        vscode.commands.registerCommand("mnemon.reviewProposals", (arg?: unknown) => reviewProposals(ctx, arg)),
        vscode.commands.registerCommand("mnemon.importMemory", (arg?: unknown) => importMemoryCommand(ctx, arg)),
    ];
}
