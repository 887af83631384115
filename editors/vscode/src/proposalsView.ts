/**
 * The Record proposals view (`mnemon.proposals`): per folder, what an assistant proposed to remember
 * (src/proposals.ts, src/trees.ts `proposalsTree`), with "Verify" and "Reject" (`mnemon.proposals.*`).
 */

import * as vscode from "vscode";
import { showMutationError, ViewsContext } from "./capacity";
import { MnemonTree } from "./mnemonTree";
import { judgeRecord, listProposals, Verdict, verdictMessage } from "./proposals";
import { NodeRef, perFolder, proposalsTree } from "./trees";
import { folderRows, refOf, ViewPart } from "./viewShared";

export class ProposalsView extends ViewPart {
    readonly tree: MnemonTree;

    constructor(ctx: ViewsContext) {
        super(ctx);
        this.tree = new MnemonTree(ctx.server, async (client) => {
            const rows = await folderRows(client);
            const out = [];
            for (const row of rows) {
                out.push({ workspace: row.uri, name: row.name, children: proposalsTree(row.uri, await listProposals(client, row.uri)) });
            }
            return perFolder(out);
        });
    }

    /** The `mnemon.proposals.*` commands. */
    registerCommands(): vscode.Disposable[] {
        return [
            vscode.commands.registerCommand("mnemon.proposals.verify", (node?: unknown) => this.judge(refOf(node, "proposal"), "verify")),
            vscode.commands.registerCommand("mnemon.proposals.reject", (node?: unknown) => this.judge(refOf(node, "proposal"), "reject")),
        ];
    }

    private async judge(r: Extract<NodeRef, { kind: "proposal" }> | undefined, verdict: Verdict): Promise<void> {
        if (!r) {
            return;
        }
        try {
            const receipt = await judgeRecord(await this.client(), r.workspace, r.record, verdict);
            void vscode.window.showInformationMessage(verdictMessage(verdict, receipt));
        } catch (error) {
            await showMutationError(this.ctx, `proposal not ${verdict === "verify" ? "verified" : "rejected"}`, error);
        } finally {
            this.after(this.tree);
        }
    }
}
