/**
 * The Recall Results view (`mnemon.recallResults`): the last recall's results (src/trees.ts `recallTree`), or,
 * when it found nothing because no Memory Space exists or none is active, the welcome text offering to create
 * or activate one (`mnemon.recallEmpty`); and its commands: recall (`recallCommand`), forget an item, copy an
 * item, clear the results.
 */

import * as vscode from "vscode";
import { showMutationError, ViewsContext } from "./capacity";
import { oneLine } from "./format";
import { MnemonTree } from "./mnemonTree";
import { forgetInSpace, listSpaces, recall, RecallResult, SpaceView } from "./requests";
import { message, NodeRef, recallTree } from "./trees";
import { EmptyContext, refOf, setContext, ViewPart } from "./viewShared";

export class RecallView extends ViewPart {
    readonly tree: MnemonTree;
    private lastRecall: RecallResult | undefined;
    /**
     * Why {@link lastRecall} found nothing, when a missing space is why: `noSpace`, `noActiveSpace`;
     * `retry` once a space is active since; empty otherwise.
     */
    private recallEmptyReason: "" | "noSpace" | "noActiveSpace" | "retry" = "";
    /** Space ids of {@link lastRecall} whose provider cannot forget (their items offer no "Forget Item"). */
    private unforgettable = new Set<string>();

    constructor(ctx: ViewsContext) {
        super(ctx);
        this.tree = new MnemonTree(ctx.server, async (client) => {
            const result = this.lastRecall;
            if (result && this.recallEmptyReason && (await listSpaces(client, { workspace: result.workspace })).spaces.some((s) => s.active)) {
                this.recallEmptyReason = "retry"; // a space was activated or created since: recall again
            }
            // Nothing recalled because no space is active (or none exists): the view is empty and its
            // welcome text offers to activate or create one (package.json viewsWelcome, mnemon.recallEmpty).
            await setContext(EmptyContext.recall, result ? this.recallEmptyReason : "");
            if (result && this.recallEmptyReason) {
                return [];
            }
            return result ? recallTree(result, (spaceId) => !this.unforgettable.has(spaceId)) : [message("norecall", "Run Recall (view title, or Ctrl+Alt+Shift+M) to see results here")];
        });
    }

    /** The folder (protocol URI) of the last recall, if any. */
    get workspace(): string | undefined {
        return this.lastRecall?.workspace;
    }

    /** The last recall found nothing for want of a (active) space: its welcome text may change when spaces do. */
    get waitingForSpace(): boolean {
        return this.recallEmptyReason !== "";
    }

    /** Show a recall result in the Recall results view (and reveal it). */
    async showRecall(result: RecallResult): Promise<void> {
        this.lastRecall = result;
        this.recallEmptyReason = "";
        try {
            const { spaces } = await listSpaces(await this.client(), { workspace: result.workspace });
            this.unforgettable = new Set(spaces.filter((s) => s.capabilities && (s.capabilities.forget === false || s.capabilities.delete === "unsupported")).map((s) => s.id));
            if (result.results.length === 0 && !spaces.some((s) => s.active)) {
                this.recallEmptyReason = spaces.length === 0 ? "noSpace" : "noActiveSpace";
            }
        } catch {
            this.unforgettable = new Set(); // the forget request itself would then say what the space cannot do
        }
        await vscode.commands.executeCommand("setContext", "mnemon.hasRecall", true);
        this.tree.refresh();
        await vscode.commands.executeCommand("mnemon.recallResults.focus"); // ViewId.recallResults (src/views.ts)
    }

    /** The `mnemon.recallResults.*` commands. */
    registerCommands(): vscode.Disposable[] {
        return [
            vscode.commands.registerCommand("mnemon.recallResults.forget", (node?: unknown) => this.forgetItem(refOf(node, "recallItem"))),
            vscode.commands.registerCommand("mnemon.recallResults.copy", async (node?: unknown) => {
                const r = refOf(node, "recallItem");
                if (r) {
                    await vscode.env.clipboard.writeText(r.item.content);
                    void vscode.window.setStatusBarMessage("Mnemon: copied the recalled memory", 3000);
                }
            }),
            vscode.commands.registerCommand("mnemon.recallResults.clear", async () => {
                this.lastRecall = undefined;
                await vscode.commands.executeCommand("setContext", "mnemon.hasRecall", false);
                this.tree.refresh();
            }),
        ];
    }

    /** Ask for a query, recall (from `spaces`, default every active one) and show the results view. */
    async recallCommand(workspace: string | undefined, spaces?: SpaceView[]): Promise<void> {
        const query = await vscode.window.showInputBox({
            title: spaces ? `Mnemon: recall from ${spaces.map((s) => s.name).join(", ")}` : "Mnemon: Recall",
            prompt: "What do you want to know (CJK text works too)?",
            ignoreFocusOut: true,
        });
        if (query === undefined || query.trim() === "") {
            return;
        }
        try {
            const client = await this.client();
            const result = await recall(client, { workspace, query, spaces: spaces?.map((s) => s.id) });
            await this.showRecall(result);
        } catch (error) {
            await showMutationError(this.ctx, "cannot recall", error);
        }
    }

    private async forgetItem(r: Extract<NodeRef, { kind: "recallItem" }> | undefined): Promise<void> {
        if (!r) {
            return;
        }
        try {
            const receipt = await forgetInSpace(await this.client(), { workspace: r.workspace, spaceId: r.item.spaceId, id: r.item.id });
            if (this.lastRecall) {
                this.lastRecall = { ...this.lastRecall, results: this.lastRecall.results.filter((i) => !(i.spaceId === r.item.spaceId && i.id === r.item.id)) };
            }
            void vscode.window.setStatusBarMessage(`Mnemon: ${oneLine(receipt.message)}`, 5000);
        } catch (error) {
            await showMutationError(this.ctx, "not forgotten", error);
        } finally {
            this.tree.refresh();
        }
    }
}
