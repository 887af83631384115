/**
 * The Mnemon view container (activity bar, id `mnemon`): tree views `mnemon.runtime` (Runtime memory),
 * `mnemon.documents`, `mnemon.spaces`, `mnemon.providers` (Memory Providers, commands in
 * src/providers.ts), `mnemon.recallResults` and `mnemon.proposals`, and the commands of their menus. The trees themselves are built by the pure src/trees.ts.
 *
 * Refresh: on the server's notifications only (never by polling): `mnemon/memoryChanged {workspace,
 * source}` (a Source's truth changed on disk: this window, another window on the same root, the CLI),
 * `mnemon/branchChanged`, `mnemon/projectionRepaired`, `mnemon/recordProposed`, and when the server
 * starts or stops. While the server is down the views are empty and show their welcome text (a
 * "Restart Server" link, package.json `viewsWelcome`, `!mnemon.serverRunning`); they fill again when it
 * is back.
 *
 * This module holds the view ids, creates the tree views and routes the server's notifications to them; each
 * view's tree and commands live in its own module: src/runtimeView.ts, src/documentsView.ts,
 * src/spacesView.ts, src/recallView.ts, src/proposalsView.ts (Memory Providers: src/providers.ts), sharing
 * src/viewShared.ts; the tree data provider they all use is src/mnemonTree.ts.
 */

import * as vscode from "vscode";
import { ViewsContext } from "./capacity";
import { DocumentContents } from "./documents";
import { DocumentsView } from "./documentsView";
import { MnemonTree } from "./mnemonTree";
import { ProposalsView } from "./proposalsView";
import { RECORD_PROPOSED } from "./proposals";
import { buildProvidersTree, HealthReports, registerProviderCommands } from "./providers";
import { RecallView } from "./recallView";
import { MemoryChangedParams, Notification, RecallResult, SpaceView } from "./requests";
import { RuntimeView } from "./runtimeView";
import { SpacesView } from "./spacesView";
import { perFolder } from "./trees";
import { folderRows } from "./viewShared";

type ChangedSource = MemoryChangedParams["source"];

export const ViewId = {
    container: "mnemon",
    runtime: "mnemon.runtime",
    documents: "mnemon.documents",
    spaces: "mnemon.spaces",
    providers: "mnemon.providers",
    recallResults: "mnemon.recallResults",
    proposals: "mnemon.proposals",
} as const;

export type { ViewsContext } from "./capacity";
export { showMutationError } from "./capacity";
export { MnemonTree } from "./mnemonTree";

export class MnemonViews implements vscode.Disposable {
    private readonly disposables: vscode.Disposable[] = [];
    readonly runtime: MnemonTree;
    readonly documents: MnemonTree;
    readonly spaces: MnemonTree;
    readonly providers: MnemonTree;
    readonly recallResults: MnemonTree;
    readonly proposals: MnemonTree;
    readonly documentContents: DocumentContents;
    private readonly runtimeView: RuntimeView;
    private readonly documentsView: DocumentsView;
    private readonly spacesView: SpacesView;
    private readonly recallView: RecallView;
    private readonly proposalsView: ProposalsView;
    private readonly health = new HealthReports();

    constructor(private readonly ctx: ViewsContext) {
        const server = ctx.server;
        this.runtimeView = new RuntimeView(ctx);
        this.documentsView = new DocumentsView(ctx);
        this.spacesView = new SpacesView(ctx, () => this.providers.refresh(), () => this.recallView);
        this.recallView = new RecallView(ctx);
        this.proposalsView = new ProposalsView(ctx);
        this.runtime = this.runtimeView.tree;
        this.documents = this.documentsView.tree;
        this.spaces = this.spacesView.tree;
        this.providers = new MnemonTree(server, async (client) => perFolder(await buildProvidersTree(client, await folderRows(client), this.health)));
        this.recallResults = this.recallView.tree;
        this.proposals = this.proposalsView.tree;
        this.documentContents = this.documentsView.contents;
        const trees: [string, MnemonTree][] = [
            [ViewId.runtime, this.runtime],
            [ViewId.documents, this.documents],
            [ViewId.spaces, this.spaces],
            [ViewId.providers, this.providers],
            [ViewId.recallResults, this.recallResults],
            [ViewId.proposals, this.proposals],
        ];
        for (const [id, tree] of trees) {
            const view = vscode.window.createTreeView(id, { treeDataProvider: tree, showCollapseAll: id !== ViewId.recallResults });
            tree.view = view;
            this.disposables.push(view, tree);
        }
        this.disposables.push(
            this.documentContents,
            server.onNotification(Notification.memoryChanged, (params: Partial<MemoryChangedParams>) => this.onChanged(params.source)),
            server.onNotification(Notification.branchChanged, () => this.runtime.refresh()),
            server.onNotification(Notification.projectionRepaired, () => this.runtime.refresh()),
            server.onNotification(RECORD_PROPOSED, () => this.proposals.refresh()),
            server.onDidChangeRunning(() => this.refreshAll()),
            vscode.workspace.onDidChangeWorkspaceFolders(() => this.refreshAll()),
            ...this.registerCommands(),
            ...registerProviderCommands(ctx, this.health, () => {
                this.after(this.providers);
                this.spaces.refresh();
            }),
        );
    }

    private onChanged(source: ChangedSource | undefined): void {
        switch (source) {
            case "runtime":
                this.runtime.refresh();
                this.ctx.changed();
                break;
            case "documents":
                this.documents.refresh();
                this.documentContents.refreshAll();
                break;
            case "spaces": // the registry or state/memory-providers.json
                this.spaces.refresh();
                this.providers.refresh();
                if (this.recallView.waitingForSpace) {
                    this.recallResults.refresh(); // its welcome text may offer "Recall Again" now
                }
                break;
            case "records":
                this.proposals.refresh();
                break;
            default:
                this.refreshAll();
        }
    }

    refreshAll(): void {
        for (const tree of [this.runtime, this.documents, this.spaces, this.providers, this.recallResults, this.proposals]) {
            tree.refresh();
        }
    }

    /** Show a recall result in the Recall results view (and reveal it). */
    async showRecall(result: RecallResult): Promise<void> {
        await this.recallView.showRecall(result);
    }

    /** Ask for a query, recall (from `spaces`, default every active one) and show the results view. */
    async recallCommand(workspace: string | undefined, spaces?: SpaceView[]): Promise<void> {
        await this.recallView.recallCommand(workspace, spaces);
    }

    /** Every command of the views but the Memory Providers' (src/providers.ts `registerProviderCommands`). */
    private registerCommands(): vscode.Disposable[] {
        return [
            vscode.commands.registerCommand("mnemon.refreshViews", () => this.refreshAll()),
            ...this.runtimeView.registerCommands(),
            ...this.documentsView.registerCommands(),
            ...this.spacesView.registerCommands(),
            ...this.recallView.registerCommands(),
            ...this.proposalsView.registerCommands(),
        ];
    }

    private after(tree: MnemonTree): void {
        tree.refresh();
        this.ctx.changed();
    }

    dispose(): void {
        for (const disposable of this.disposables) {
            disposable.dispose();
        }
    }
}
