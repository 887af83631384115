/**
 * "Merge or Drop Entries..." (mnemon-ls issue 23 item 9): a multi-select quick pick of the numbered entries
 * of USER.md (or MEMORY.md), then "Merge into one entry" (an input box for the merged text) or "Drop the
 * picked entries", sent as `mnemon/runtime/compact` with `merge` / `drop`. Offered by the "USER.md is full"
 * message (the numbers, revision and pending change of its plan: the change that did not fit lands with the
 * compaction) and by the Runtime Memory view (numbers from `mnemon/runtime/snapshot`).
 *
 * One outcome, one message: success is said by the server's `mnemon/maintenanceCompleted` (src/maintenance.ts
 * shows what changed), a refusal by one error message here; nothing is changed by a refused compaction.
 */

import * as vscode from "vscode";
import { compactRuntime, entryItem, mergedDefault, NumberedEntry, numberEntries, numbers, PICK_ACTIONS } from "./compaction";
import { errorMessage } from "./format";
import { asMnemonError, runtimeSnapshot, Target } from "./requests";
import type { CompactionPlan } from "./maintenanceText";
import { MnemonServer } from "./server";
import { fileOf } from "./trees";

type EntryPick = vscode.QuickPickItem & { entry: NumberedEntry };

/** Where the numbers come from: a plan of `mnemon/maintenanceRequired`, or the folder's snapshot. */
export interface CompactSource {
    workspace?: string;
    target: Target;
    plan?: CompactionPlan;
}

/** Pick entries, then merge or drop them (module doc). Resolves when done, cancelled or refused. */
export async function mergeOrDropEntries(server: MnemonServer, source: CompactSource): Promise<void> {
    const file = fileOf(source.target);
    try {
        const client = await server.ensureClient();
        let entries: NumberedEntry[];
        let revision: string;
        let workspace = source.workspace;
        if (source.plan) {
            entries = source.plan.entries;
            revision = source.plan.revision;
        } else {
            const snapshot = await runtimeSnapshot(client, workspace);
            entries = numberEntries(snapshot.entries, source.target);
            revision = snapshot.revision;
            workspace = snapshot.workspace;
        }
        if (entries.length === 0) {
            void vscode.window.showInformationMessage(`Mnemon: ${file} has no entries to compact.`);
            return;
        }
        const budget = source.plan ? ` (the entries left may use ${source.plan.budgetBytes} bytes)` : "";
        const picks = await vscode.window.showQuickPick<EntryPick>(
            entries.map((entry) => ({ ...entryItem(entry), entry })),
            { canPickMany: true, title: `Mnemon: merge or drop entries of ${file}${budget}`,
                placeHolder: "Select the entries to merge into one, or to drop" });
        if (!picks || picks.length === 0) {
            return;
        }
        const picked = picks.map((p) => p.entry).sort((a, b) => a.index - b.index);
        const indexes = picked.map((e) => e.index);
        const action = await vscode.window.showQuickPick(
            [{ label: PICK_ACTIONS.merge, description: `entries ${numbers(indexes)} become one text` },
                { label: PICK_ACTIONS.drop, description: "kept word for word in runtime/archived/" }],
            { title: `Mnemon: entries ${numbers(indexes)} of ${file}` });
        if (!action) {
            return;
        }
        let change: { merge?: { sourceIndexes: number[]; content: string }[]; drop?: number[] };
        if (action.label === PICK_ACTIONS.merge) {
            const content = await vscode.window.showInputBox({
                title: `Mnemon: entries ${numbers(indexes)} of ${file} become`,
                prompt: "One entry (no '§'); it keeps the highest importance of the picked entries.",
                value: mergedDefault(picked),
                ignoreFocusOut: true,
            });
            if (content === undefined || content.trim() === "") {
                return;
            }
            change = { merge: [{ sourceIndexes: indexes, content }] };
        } else {
            change = { drop: indexes };
        }
        await compactRuntime(client, { workspace, target: source.target, revision, pending: source.plan?.pending ?? undefined,
            ...change });
    } catch (error) {
        if ((error as { reported?: boolean } | undefined)?.reported) {
            return; // a failed server start, already shown with its fix
        }
        const mnemon = asMnemonError(error);
        const text = mnemon ? errorMessage("not compacted", mnemon) : `Mnemon: not compacted: ${error instanceof Error ? error.message : String(error)}`;
        server.log.error(text);
        void vscode.window.showErrorMessage(text);
    }
}
