/**
 * `MnemonTree`: the tree data provider behind every Mnemon view (src/views.ts and its per-view modules,
 * src/reviewView.ts). It lists the root rows through a `build` function, shows nothing while the server is
 * down, and refreshes in place (src/treeUpdate.ts) so no row is unknown to VS Code during a refresh.
 */

import * as vscode from "vscode";
import { errorMessage } from "./format";
import { asMnemonError, RequestSender } from "./requests";
import { MnemonServer } from "./server";
import { updateInPlace } from "./treeUpdate";
import { message, Node } from "./trees";

/** Coalesce a burst of triggers (a notification right after our own request) into one fetch. */
const REFRESH_DELAY_MS = 100;

export class MnemonTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
    private readonly emitter = new vscode.EventEmitter<Node | Node[] | undefined>();
    readonly onDidChangeTreeData = this.emitter.event;
    private timer: NodeJS.Timeout | undefined;
    view: vscode.TreeView<Node> | undefined;
    /**
     * The root rows VS Code was last given (the very objects: a refresh updates them in place, src/treeUpdate.ts
     * says why), undefined before the first listing.
     */
    private shown: Node[] | undefined;
    /** Counts root listings and refreshes: only the latest of each applies. */
    private listingsAsked = 0;
    private reloads = 0;
    /** Root listings VS Code asked for that have not answered yet. */
    private listingsPending = 0;

    constructor(
        private readonly server: MnemonServer,
        private readonly build: (client: RequestSender & { code2ProtocolConverter: { asUri(uri: vscode.Uri): string } }) => Promise<Node[]>,
    ) {}

    /**
     * List again (a burst of calls within {@link REFRESH_DELAY_MS} is one listing). When the rows are the same
     * ones (ids, order), the changed rows are updated in place and redrawn, and no row is ever unknown to VS Code
     * meanwhile (a click on an inline action during a refresh still reaches its command); otherwise the whole
     * tree is listed again.
     */
    refresh(): void {
        if (this.timer) {
            clearTimeout(this.timer);
        }
        this.timer = setTimeout(() => {
            this.timer = undefined;
            void this.reload();
        }, REFRESH_DELAY_MS);
    }

    private async reload(): Promise<void> {
        const reload = ++this.reloads;
        const shown = this.shown;
        if (!shown || shown.length === 0) {
            this.emitter.fire(undefined); // nothing to keep: VS Code lists the tree again
            return;
        }
        const fresh = await this.list();
        if (reload !== this.reloads) {
            return; // a newer refresh lists again
        }
        if (this.listingsPending > 0) {
            this.emitter.fire(undefined); // VS Code is listing the roots, maybe from before the change: once more
            return;
        }
        if (shown !== this.shown) {
            return this.reload(); // VS Code listed the roots meanwhile, maybe before the change: again, on those
        }
        const changed = updateInPlace(shown, fresh);
        if (changed === undefined) {
            this.emitter.fire(undefined);
        } else if (changed.length > 0) {
            this.emitter.fire(changed);
        }
    }

    getTreeItem(node: Node): vscode.TreeItem {
        const state = node.children === undefined
            ? vscode.TreeItemCollapsibleState.None
            : node.expanded
              ? vscode.TreeItemCollapsibleState.Expanded
              : vscode.TreeItemCollapsibleState.Collapsed;
        const item = new vscode.TreeItem(node.label, state);
        item.id = node.id;
        item.description = node.description;
        if (node.tooltip) {
            const tooltip = new vscode.MarkdownString(node.tooltip);
            tooltip.supportHtml = false;
            item.tooltip = tooltip;
        }
        if (node.icon) {
            item.iconPath = new vscode.ThemeIcon(node.icon, node.iconColor ? new vscode.ThemeColor(node.iconColor) : undefined);
        }
        item.contextValue = node.contextValue;
        item.command = node.command;
        return item;
    }

    async getChildren(node?: Node): Promise<Node[]> {
        if (node) {
            return node.children ?? [];
        }
        const listing = ++this.listingsAsked;
        this.listingsPending += 1;
        try {
            const nodes = await this.list();
            if (listing === this.listingsAsked) {
                this.shown = nodes; // what VS Code keeps (it keeps only its latest listing too)
            }
            return nodes;
        } finally {
            this.listingsPending -= 1;
        }
    }

    /** The root rows from the server: none while it is not running, one error row when it cannot list. */
    private async list(): Promise<Node[]> {
        const client = this.server.running;
        if (!client) {
            return []; // the welcome text says the server is not running, with a Restart link
        }
        try {
            const nodes = await this.build(client);
            if (this.view) {
                this.view.message = undefined;
            }
            return nodes;
        } catch (error) {
            const mnemon = asMnemonError(error);
            const text = mnemon ? errorMessage("cannot list", mnemon) : `Mnemon: cannot list: ${error instanceof Error ? error.message : String(error)}`;
            this.server.log.warn(text);
            return [message("error", text, undefined, "error")];
        }
    }

    /** Say something at the top of the view until the next refresh (e.g. a conflict). */
    say(text: string): void {
        if (this.view) {
            this.view.message = text;
        }
    }

    dispose(): void {
        if (this.timer) {
            clearTimeout(this.timer);
        }
        this.emitter.dispose();
    }
}
