/**
 * The Runtime memory view (`mnemon.runtime`): per folder, MEMORY.md and USER.md with their capacity and
 * entries (src/trees.ts `runtimeTree`), and its commands `mnemon.runtime.*` (add, edit, remove, importance,
 * branches, open the file, remove entries, raise the limit, compact). Every edit or removal first checks that
 * the entry, exactly as drawn, is still in the store; if not it is a conflict and nothing changes.
 */

import * as vscode from "vscode";
import { openTargetFile, raiseLimit, removeEntries, showMutationError, ViewsContext } from "./capacity";
import { mergeOrDropEntries } from "./compactPick";
import { MnemonTree } from "./mnemonTree";
import { asMnemonError, Importance, MnemonError, mutate, RequestSender, runtimeSnapshot, status, Target, workspaceFor } from "./requests";
import { conflictMessage, entryStillThere, fileOf, Node, NodeRef, perFolder, runtimeTree, shortLabel } from "./trees";
import { formatUsage } from "./units";
import { folderRows, refOf, ViewPart } from "./viewShared";

export class RuntimeView extends ViewPart {
    readonly tree: MnemonTree;

    constructor(ctx: ViewsContext) {
        super(ctx);
        this.tree = new MnemonTree(ctx.server, async (client) => {
            const rows = await folderRows(client);
            const now = Date.now();
            const out = [];
            for (const row of rows) {
                out.push({ workspace: row.uri, name: row.name, children: runtimeTree(await runtimeSnapshot(client, row.uri), row, now) });
            }
            return perFolder(out);
        });
    }

    /** The `mnemon.runtime.*` commands. */
    registerCommands(): vscode.Disposable[] {
        const targetOf = (node: unknown): { workspace?: string; target: Target } => {
            const r = (node as Node | undefined)?.ref;
            if (r && (r.kind === "target" || r.kind === "capacity" || r.kind === "entry")) {
                return { workspace: r.workspace, target: r.target };
            }
            return { target: "memory" };
        };
        return [
            vscode.commands.registerCommand("mnemon.runtime.add", (node?: unknown) => this.addEntry(targetOf(node))),
            vscode.commands.registerCommand("mnemon.runtime.edit", (node?: unknown) => this.editEntry(refOf(node, "entry"))),
            vscode.commands.registerCommand("mnemon.runtime.remove", (node?: unknown) => this.removeEntry(refOf(node, "entry"))),
            vscode.commands.registerCommand("mnemon.runtime.setImportance", (node?: unknown) => this.setImportance(refOf(node, "entry"))),
            vscode.commands.registerCommand("mnemon.runtime.setBranches", (node?: unknown) => this.setBranches(refOf(node, "entry"))),
            vscode.commands.registerCommand("mnemon.runtime.openFile", (node?: unknown) => {
                const t = targetOf(node);
                return openTargetFile(this.ctx, t.workspace, t.target);
            }),
            vscode.commands.registerCommand("mnemon.runtime.removeEntries", (node?: unknown) => {
                const t = targetOf(node);
                return removeEntries(this.ctx, t.workspace, t.target);
            }),
            vscode.commands.registerCommand("mnemon.runtime.raiseLimit", (node?: unknown) => raiseLimit(targetOf(node).target)),
            vscode.commands.registerCommand("mnemon.runtime.compact", (node?: unknown) => {
                const t = node ? targetOf(node) : { target: "user" as const }; // the palette: USER.md, the person's
                return mergeOrDropEntries(this.ctx.server, t).finally(() => this.after(this.tree));
            }),
        ];
    }

    private async addEntry(where: { workspace?: string; target: Target }): Promise<void> {
        let target = where.target;
        if (!where.workspace) {
            const pick = await vscode.window.showQuickPick(
                [
                    { label: "MEMORY.md", description: "this workspace's working reference", target: "memory" as Target },
                    { label: "USER.md", description: "facts about you", target: "user" as Target },
                ],
                { title: "Mnemon: add an entry to…" },
            );
            if (!pick) {
                return;
            }
            target = pick.target;
        }
        const content = await vscode.window.showInputBox({
            title: `Mnemon: add an entry to ${fileOf(target)}`,
            prompt: "One fact per entry (no '§', at most 8 KiB).",
            ignoreFocusOut: true,
        });
        if (content === undefined) {
            return;
        }
        try {
            const receipt = await mutate(await this.client(), { workspace: where.workspace, action: "add", target, content });
            void vscode.window.showInformationMessage(`Mnemon: ${receipt.message} ${fileOf(target)}: ${formatUsage(receipt.usage.used, receipt.usage.limit)}.`);
        } catch (error) {
            await showMutationError(this.ctx, "not added", error, where.workspace);
        } finally {
            this.after(this.tree);
        }
    }

    /**
     * The guard of every edit/remove from the view: the entry, exactly as drawn, must still be in the
     * store (another editor may have removed or changed it). If not: refresh, say so, change nothing.
     */
    private async stillThere(client: RequestSender, r: Extract<NodeRef, { kind: "entry" }>): Promise<boolean> {
        const fresh = await runtimeSnapshot(client, r.workspace);
        if (fresh.revision === r.revision || entryStillThere(fresh, r.target, r.entry.content)) {
            return true;
        }
        const text = conflictMessage(r.target, r.entry.content);
        this.tree.refresh();
        this.tree.say(text);
        void vscode.window.showWarningMessage(text);
        return false;
    }

    private async replace(r: Extract<NodeRef, { kind: "entry" }>, change: { content?: string; importance?: Importance; branches?: string[] }, verb: string): Promise<void> {
        try {
            const client = await this.client();
            if (!(await this.stillThere(client, r))) {
                return;
            }
            const receipt = await mutate(client, {
                workspace: r.workspace,
                action: "replace",
                target: r.target,
                oldText: r.entry.content,
                content: change.content ?? r.entry.content,
                importance: change.importance,
                branches: r.target === "memory" ? change.branches : undefined,
            });
            void vscode.window.setStatusBarMessage(`Mnemon: ${receipt.message} ${fileOf(r.target)}`, 5000);
        } catch (error) {
            await this.conflictOrError(r, verb, error);
        } finally {
            this.after(this.tree);
        }
    }

    private async conflictOrError(r: Extract<NodeRef, { kind: "entry" }>, verb: string, error: unknown): Promise<void> {
        const mnemon: MnemonError | undefined = asMnemonError(error);
        if (mnemon && (mnemon.code === "no-match" || mnemon.code === "revision-conflict")) {
            const text = conflictMessage(r.target, r.entry.content);
            this.tree.say(text);
            void vscode.window.showWarningMessage(text);
            return;
        }
        await showMutationError(this.ctx, verb, error, r.workspace);
    }

    private async editEntry(r: Extract<NodeRef, { kind: "entry" }> | undefined): Promise<void> {
        if (!r) {
            return;
        }
        const content = await vscode.window.showInputBox({
            title: `Mnemon: edit this ${fileOf(r.target)} entry`,
            value: r.entry.content,
            prompt: "Replaces the entry (importance and branches are kept). No '§', at most 8 KiB.",
            ignoreFocusOut: true,
        });
        if (content === undefined || content === r.entry.content) {
            return;
        }
        await this.replace(r, { content }, "not edited");
    }

    private async setImportance(r: Extract<NodeRef, { kind: "entry" }> | undefined): Promise<void> {
        if (!r) {
            return;
        }
        const current = r.entry.importance ?? "normal";
        const pick = await vscode.window.showQuickPick(
            (["critical", "normal", "low"] as Importance[]).map((importance) => ({
                label: importance,
                description: importance === current ? "current" : undefined,
                importance,
            })),
            { title: `Mnemon: importance of "${shortLabel(r.entry.content, 50)}"` },
        );
        if (!pick || pick.importance === current) {
            return;
        }
        await this.replace(r, { importance: pick.importance }, "importance not changed");
    }

    private async setBranches(r: Extract<NodeRef, { kind: "entry" }> | undefined): Promise<void> {
        if (!r || r.target !== "memory") {
            return;
        }
        const result = await status(await this.client());
        const branch = workspaceFor(result, r.workspace)?.branch;
        const value = await vscode.window.showInputBox({
            title: `Mnemon: branches of "${shortLabel(r.entry.content, 50)}"`,
            prompt: "Comma-separated branch names; empty = every branch.",
            value: (r.entry.branches ?? []).join(", ") || (branch ?? ""),
            ignoreFocusOut: true,
        });
        if (value === undefined) {
            return;
        }
        const branches = value.split(",").map((b) => b.trim()).filter((b) => b !== "");
        await this.replace(r, { branches }, "branches not changed");
    }

    private async removeEntry(r: Extract<NodeRef, { kind: "entry" }> | undefined): Promise<void> {
        if (!r) {
            return;
        }
        try {
            const client = await this.client();
            if (!(await this.stillThere(client, r))) {
                return;
            }
            await mutate(client, { workspace: r.workspace, action: "remove", target: r.target, oldText: r.entry.content });
            const undo = "Undo";
            void vscode.window.showInformationMessage(`Mnemon: removed "${shortLabel(r.entry.content, 60)}" from ${fileOf(r.target)}.`, undo).then(async (pick) => {
                if (pick === undo) {
                    try {
                        await mutate(await this.client(), {
                            workspace: r.workspace, action: "add", target: r.target, content: r.entry.content,
                            importance: r.entry.importance, branches: r.target === "memory" && r.entry.branches?.length ? r.entry.branches : undefined,
                        });
                    } catch (error) {
                        await showMutationError(this.ctx, "not restored", error);
                    } finally {
                        this.after(this.tree);
                    }
                }
            });
        } catch (error) {
            await this.conflictOrError(r, "not removed", error);
        } finally {
            this.after(this.tree);
        }
    }
}
