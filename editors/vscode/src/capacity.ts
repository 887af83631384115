/**
 * Capacity errors (`runtime-capacity`) and the actions they offer, shared by the Mnemon view and the
 * commands: "Open MEMORY.md" (the projection file), "Remove entries..." (a pick of the target's entries,
 * removed one by one) and "Raise limit" (the `mnemon.runtimeMemory.<target>LimitBytes` setting). A full
 * USER.md is said once, by the server's `mnemon/maintenanceRequired` (src/maintenance.ts), not here.
 */

import * as vscode from "vscode";
import { errorMessage } from "./format";
import { announcedByServer } from "./compaction";
import { asMnemonError, mutate, RequestSender, RuntimeEntry, runtimeSnapshot, status, StatusResult, Target, workspaceFor } from "./requests";
import { MnemonServer } from "./server";
import { fileOf, shortLabel } from "./trees";
import { formatBytes, formatUsage } from "./units";

export interface ViewsContext {
    server: MnemonServer;
    /** Called after a change made from a view (status bar, wake documents). */
    changed(): void;
}

export const CAPACITY_ACTIONS = { open: "Open MEMORY.md", remove: "Remove entries...", raise: "Raise limit" } as const;

/**
 * Show a `runtime-capacity` error with its three actions: open the file, remove entries (a pick of
 * the target's entries), raise the limit (the setting). Other errors are shown plainly.
 */
export async function showMutationError(ctx: ViewsContext, prefix: string, error: unknown, folder?: string): Promise<void> {
    if ((error as { reported?: boolean } | undefined)?.reported) {
        return;
    }
    const mnemon = asMnemonError(error);
    const text = mnemon ? errorMessage(prefix, mnemon) : `Mnemon: ${prefix}: ${error instanceof Error ? error.message : String(error)}`;
    ctx.server.log.error(text);
    if (announcedByServer(mnemon)) {
        return; // one failure, one message: the server's mnemon/maintenanceRequired (src/maintenance.ts) says it
    }
    if (mnemon?.code !== "runtime-capacity") {
        void vscode.window.showErrorMessage(text);
        return;
    }
    const target: Target = mnemon.data.target === "user" ? "user" : "memory";
    const workspace = folder ?? (typeof mnemon.data.workspace === "string" ? mnemon.data.workspace : undefined);
    const open = target === "user" ? "Open USER.md" : CAPACITY_ACTIONS.open;
    const pick = await vscode.window.showErrorMessage(text, open, CAPACITY_ACTIONS.remove, CAPACITY_ACTIONS.raise);
    if (pick === open) {
        await openTargetFile(ctx, workspace, target);
    } else if (pick === CAPACITY_ACTIONS.remove) {
        await removeEntries(ctx, workspace, target);
    } else if (pick === CAPACITY_ACTIONS.raise) {
        await raiseLimit(target);
    }
}

async function folderRow(ctx: ViewsContext, workspace: string | undefined): Promise<{ client: RequestSender; result: StatusResult; workspace: string } | undefined> {
    const client = await ctx.server.ensureClient();
    const result = await status(client);
    const row = workspace ? workspaceFor(result, workspace) : result.workspaces[0];
    return row ? { client, result, workspace: row.uri } : undefined;
}

export async function openTargetFile(ctx: ViewsContext, workspace: string | undefined, target: Target): Promise<void> {
    const found = await folderRow(ctx, workspace);
    const row = found && workspaceFor(found.result, found.workspace);
    if (!row) {
        return;
    }
    const root = target === "user" ? row.userRoot : row.root;
    await vscode.window.showTextDocument(vscode.Uri.joinPath(vscode.Uri.file(root), "runtime", fileOf(target)));
}

export async function raiseLimit(target: Target): Promise<void> {
    await vscode.commands.executeCommand("workbench.action.openSettings", `mnemon.runtimeMemory.${target}LimitBytes`);
}

type EntryPick = vscode.QuickPickItem & { entry: RuntimeEntry };

/** "Remove entries...": a multi-select pick of the target's entries (largest first), removed one by one. */
export async function removeEntries(ctx: ViewsContext, workspace: string | undefined, target: Target): Promise<void> {
    try {
        const found = await folderRow(ctx, workspace);
        if (!found) {
            return;
        }
        const snapshot = await runtimeSnapshot(found.client, found.workspace);
        const entries = snapshot.entries.filter((e) => (e.target === "user" ? "user" : "memory") === target);
        const usage = snapshot.usage[target];
        const items: EntryPick[] = [...entries]
            .sort((a, b) => Buffer.byteLength(b.content) - Buffer.byteLength(a.content))
            .map((entry) => ({
                label: shortLabel(entry.content),
                description: `${formatBytes(Buffer.byteLength(entry.content))} · ${entry.importance ?? "normal"}${entry.branches?.length ? ` · ⎇ ${entry.branches.join(", ")}` : ""}`,
                entry,
            }));
        const picks = await vscode.window.showQuickPick(items, {
            canPickMany: true,
            title: `Mnemon: remove entries of ${fileOf(target)} (${formatUsage(usage.used, usage.limit)})`,
            placeHolder: "Select the entries to remove",
        });
        if (!picks || picks.length === 0) {
            return;
        }
        let removed = 0;
        for (const pick of picks) {
            await mutate(found.client, { workspace: found.workspace, action: "remove", target, oldText: pick.entry.content });
            removed += 1;
        }
        void vscode.window.showInformationMessage(`Mnemon: removed ${removed} ${removed === 1 ? "entry" : "entries"} from ${fileOf(target)}.`);
    } catch (error) {
        await showMutationError(ctx, "not removed", error, workspace);
    } finally {
        ctx.changed();
    }
}

