/**
 * Capacity maintenance notices (issue 9): a completed maintenance (`mnemon/maintenanceCompleted`) is a
 * short message (after a compaction: what changed); a full USER.md (`mnemon/maintenanceRequired`) is one
 * actionable message: merge or drop entries yourself (src/compactPick.ts, the plan's numbers; the change
 * that did not fit lands with it), compact it with your assistant (the plan is copied as a prompt and the
 * chat is opened with it) or open the file. The request that failed says nothing more
 * (src/capacity.ts leaves a full USER.md to this message).
 */

import * as vscode from "vscode";
import { mergeOrDropEntries } from "./compactPick";
import {
    COMPACT_ACTION,
    compactPrompt,
    MaintenanceCompletedParams,
    maintenanceCompletedMessage,
    MaintenanceNotification,
    MaintenanceRequiredParams,
    MERGE_DROP_ACTION,
    OPEN_ACTION,
    USER_FULL_MESSAGE,
} from "./maintenanceText";
import { MnemonServer } from "./server";

/** How long a completed maintenance stays in the status bar. */
const COMPLETED_MESSAGE_MS = 15_000;

/** Route the maintenance notifications of `server` to messages; the disposables to push. */
export function registerMaintenanceNotices(server: MnemonServer, log: vscode.LogOutputChannel): vscode.Disposable[] {
    const disposables: vscode.Disposable[] = [];
    disposables.push(
        server.onNotification(MaintenanceNotification.completed, (params) => {
            const text = maintenanceCompletedMessage(params as MaintenanceCompletedParams);
            log.info(text);
            disposables.push(vscode.window.setStatusBarMessage(text, COMPLETED_MESSAGE_MS));
            void vscode.window.showInformationMessage(text);
        }),
        server.onNotification(MaintenanceNotification.required, (params) => {
            void offerCompaction(server, params as MaintenanceRequiredParams, log);
        }),
    );
    return disposables;
}

async function offerCompaction(server: MnemonServer, params: MaintenanceRequiredParams, log: vscode.LogOutputChannel): Promise<void> {
    const message = params.target === "user" ? USER_FULL_MESSAGE : params.message;
    log.warn(`${message} (${params.file})`);
    const pick = await vscode.window.showWarningMessage(message, MERGE_DROP_ACTION, COMPACT_ACTION, OPEN_ACTION);
    if (pick === MERGE_DROP_ACTION) {
        await mergeOrDropEntries(server, { workspace: params.workspace, target: params.target, plan: params.plan });
    } else if (pick === OPEN_ACTION) {
        await vscode.window.showTextDocument(vscode.Uri.file(params.file));
    } else if (pick === COMPACT_ACTION) {
        const prompt = compactPrompt(params);
        await vscode.env.clipboard.writeText(prompt);
        try {
            await vscode.commands.executeCommand("workbench.action.chat.open", { query: prompt });
        } catch {
            void vscode.window.showInformationMessage("The compaction request is on the clipboard: paste it to your assistant.");
        }
    }
}
