/**
 * "Mnemon: Import Memory from Other Assistants…" (mnemon-ls issue 28 item 2): scan the folder's workspace and
 * the home directory (`mnemon/import/scan`), show every item found in one multi-select quick pick grouped by
 * source (label the item, description where it goes, detail why; every item picked but those the scan would
 * skip), then import the picked ones (`mnemon/import/apply` with the scan's fingerprint) and show the receipt.
 * Cancelling sends nothing. A file changed between the scan and the import refuses the whole import (nothing
 * is written); the message says which file. Files a source imports from outside the repository (Claude Code's
 * `@path`) are read only when the person says so: a modal question first ("Read Them" scans again with
 * `allowOutside`, "Leave Them Out" goes on without them, cancelling imports nothing). Requests and texts:
 * src/imports.ts.
 */

import * as vscode from "vscode";
import { applyImports, approvalQuestion, ImportScan, importReceiptMessage, importRows, nothingFoundMessage, refusalText, refusedLines, scanImports } from "./imports";
import { MnemonServer } from "./server";

type Row = vscode.QuickPickItem & { id?: string };

/** The buttons of the question asked when imported files outside the repository were not read. */
const READ_THEM = "Read Them";
const LEAVE_THEM_OUT = "Leave Them Out";

/** Scan, pick, import (module doc). Errors are thrown to the caller (which shows them). */
export async function importMemory(server: MnemonServer, folder: vscode.WorkspaceFolder): Promise<boolean> {
    const client = await server.ensureClient();
    const workspace = client.code2ProtocolConverter.asUri(folder.uri);
    const scanned = (allowOutside: boolean): Thenable<ImportScan> => vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: "Mnemon: looking for other assistants' memory" },
        () => scanImports(client, workspace, allowOutside));
    let scan = await scanned(false);
    const relative = (path: string): string => vscode.workspace.asRelativePath(path, false);
    let allowOutside = false;
    const question = approvalQuestion(scan, relative);
    if (question) {
        const choice = await vscode.window.showWarningMessage(question.message, { modal: true, detail: question.detail },
            READ_THEM, LEAVE_THEM_OUT);
        if (choice === undefined) {
            return false;
        }
        if (choice === READ_THEM) {
            allowOutside = true;
            scan = await scanned(true);
        }
    }
    for (const line of refusedLines(scan, relative)) {
        server.log.warn(`import: refused ${line}`);
    }
    const rows: Row[] = importRows(scan, relative).map((row) => row.separator
        ? { label: row.label, kind: vscode.QuickPickItemKind.Separator }
        : { label: row.label, description: row.description, detail: row.detail, picked: row.picked, id: row.id });
    if (!rows.some((row) => row.id)) {
        void vscode.window.showInformationMessage(nothingFoundMessage(folder.name, scan));
        return false;
    }
    const count = rows.filter((row) => row.id).length;
    const picks = await vscode.window.showQuickPick(rows, {
        canPickMany: true,
        matchOnDescription: true,
        matchOnDetail: true,
        ignoreFocusOut: true,
        title: `Mnemon: import ${count} item${count === 1 ? "" : "s"} found for ${folder.name}`,
        placeHolder: "Pick what to import (duplicates and earlier imports are not picked)",
    });
    const ids = (picks ?? []).map((p) => p.id).filter((id): id is string => typeof id === "string");
    if (ids.length === 0) {
        return false;
    }
    const receipt = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `Mnemon: importing ${ids.length} item${ids.length === 1 ? "" : "s"}` },
        () => applyImports(client, workspace, scan.fingerprint, ids, allowOutside));
    const message = importReceiptMessage(receipt);
    if ((receipt.refusedItems ?? []).length > 0) {  // partly imported, or nothing: a warning, not news
        for (const refusal of receipt.refusedItems ?? []) {
            server.log.warn(`import: refused ${relative(refusal.path)}: ${refusalText(refusal)}`);
        }
        void vscode.window.showWarningMessage(message);
    } else {
        void vscode.window.showInformationMessage(message);
    }
    return receipt.counts.written > 0;
}
