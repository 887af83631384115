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
 */

import * as path from "node:path";
import * as vscode from "vscode";
import { openTargetFile, raiseLimit, removeEntries, showMutationError, ViewsContext } from "./capacity";
import { mergeOrDropEntries } from "./compactPick";
import { DocumentContents, showPreview } from "./documents";
import { frontmatterId, oneLine } from "./format";
import { judgeRecord, listProposals, RECORD_PROPOSED, Verdict, verdictMessage } from "./proposals";
import { buildProvidersTree, createSpaceIn, HealthReports, namespaceProviders, registerProviderCommands } from "./providers";
import {
    activateSpace,
    archiveDocument,
    asMnemonError,
    CatalogEntry,
    deactivateSpace,
    forgetInSpace,
    getDocument,
    Importance,
    listDocuments,
    listSpaces,
    MemoryChangedParams,
    MnemonError,
    mutate,
    Notification,
    ProviderView,
    recall,
    RecallResult,
    RequestSender,
    restoreDocument,
    runtimeSnapshot,
    SpaceView,
    status,
    Target,
    updateDocument,
    workspaceFor,
} from "./requests";
import { MnemonTree } from "./mnemonTree";
import { formatUsage } from "./units";
import {
    conflictMessage,
    documentsTree,
    entryStillThere,
    fileOf,
    message,
    Node,
    NodeRef,
    perFolder,
    proposalsTree,
    recallTree,
    runtimeTree,
    shortLabel,
    spacesTree,
} from "./trees";

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

/** Context keys that say a view is empty for want of something the user can create (package.json `viewsWelcome`). */
const EmptyContext = {
    documents: "mnemon.noDocuments",
    spaces: "mnemon.noSpaces",
    /** `noSpace` / `noActiveSpace` while the Recall Results show a recall that found nothing for that reason. */
    recall: "mnemon.recallEmpty",
} as const;

function setContext(key: string, value: unknown): Thenable<unknown> {
    return vscode.commands.executeCommand("setContext", key, value);
}

/** The folder (its protocol URI) a command without a row is about: the only one, else the user's pick. */
async function pickWorkspace(client: { code2ProtocolConverter: { asUri(uri: vscode.Uri): string } }): Promise<string | undefined> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    const folder = folders.length <= 1 ? folders[0] : await vscode.window.showWorkspaceFolderPick({ placeHolder: "Mnemon: which folder?" });
    return folder ? client.code2ProtocolConverter.asUri(folder.uri) : undefined;
}

// ------------------------------------------------------------------------------------------ the views

export class MnemonViews implements vscode.Disposable {
    private readonly disposables: vscode.Disposable[] = [];
    readonly runtime: MnemonTree;
    readonly documents: MnemonTree;
    readonly spaces: MnemonTree;
    readonly providers: MnemonTree;
    readonly recallResults: MnemonTree;
    readonly proposals: MnemonTree;
    readonly documentContents: DocumentContents;
    private lastRecall: RecallResult | undefined;
    /**
     * Why {@link lastRecall} found nothing, when a missing space is why: `noSpace`, `noActiveSpace`;
     * `retry` once a space is active since; empty otherwise.
     */
    private recallEmptyReason: "" | "noSpace" | "noActiveSpace" | "retry" = "";
    /** Space ids of {@link lastRecall} whose provider cannot forget (their items offer no "Forget Item"). */
    private unforgettable = new Set<string>();
    private readonly health = new HealthReports();

    constructor(private readonly ctx: ViewsContext) {
        const server = ctx.server;
        const folders = async (client: { code2ProtocolConverter: { asUri(uri: vscode.Uri): string } } & RequestSender) => {
            const result = await status(client);
            return { result, rows: result.workspaces };
        };
        this.runtime = new MnemonTree(server, async (client) => {
            const { rows } = await folders(client);
            const now = Date.now();
            const out = [];
            for (const row of rows) {
                out.push({ workspace: row.uri, name: row.name, children: runtimeTree(await runtimeSnapshot(client, row.uri), row, now) });
            }
            return perFolder(out);
        });
        this.documents = new MnemonTree(server, async (client) => {
            const { rows } = await folders(client);
            const now = Date.now();
            const out = [];
            let none = true;
            for (const row of rows) {
                const catalog = await listDocuments(client, { workspace: row.uri });
                none &&= catalog.documents.length === 0 && !catalog.problem;
                out.push({ workspace: row.uri, name: row.name, children: documentsTree(catalog, now) });
            }
            // No document anywhere: the view is empty and its welcome text offers "Create Document from File".
            await setContext(EmptyContext.documents, none);
            return none ? [] : perFolder(out);
        });
        this.spaces = new MnemonTree(server, async (client) => {
            const { rows } = await folders(client);
            const out = [];
            let none = true;
            for (const row of rows) {
                const { spaces } = await listSpaces(client, { workspace: row.uri });
                none &&= spaces.length === 0;
                out.push({ workspace: row.uri, name: row.name, children: spacesTree(row.uri, spaces) });
            }
            // No space anywhere: the view is empty and its welcome text offers "Create Memory Space".
            await setContext(EmptyContext.spaces, none);
            return none ? [] : perFolder(out);
        });
        this.providers = new MnemonTree(server, async (client) => perFolder(await buildProvidersTree(client, (await folders(client)).rows, this.health)));
        this.recallResults = new MnemonTree(server, async (client) => {
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
        this.proposals = new MnemonTree(server, async (client) => {
            const { rows } = await folders(client);
            const out = [];
            for (const row of rows) {
                out.push({ workspace: row.uri, name: row.name, children: proposalsTree(row.uri, await listProposals(client, row.uri)) });
            }
            return perFolder(out);
        });
        this.documentContents = new DocumentContents(server);
        server.showManagedDocument = async (uri) => {
            // The managed file's frontmatter names the document; its folder is the one whose store holds it.
            const file = vscode.Uri.parse(uri);
            const id = frontmatterId(Buffer.from(await vscode.workspace.fs.readFile(file)).toString("utf8"));
            const client = server.running;
            if (!id || !client) {
                return false;
            }
            const row = (await status(client)).workspaces.find((w) => file.fsPath.startsWith(`${w.root.replace(/[\\/]+$/, "")}${path.sep}`));
            if (!row) {
                return false;
            }
            const doc = await getDocument(client, { workspace: row.uri, id });
            await showPreview(DocumentContents.uriFor(row.uri, id, doc.title));
            this.documents.refresh();
            return true;
        };
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
                if (this.recallEmptyReason) {
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
        this.recallResults.refresh();
        await vscode.commands.executeCommand(`${ViewId.recallResults}.focus`);
    }

    // -------------------------------------------------------------------- commands

    private registerCommands(): vscode.Disposable[] {
        const ref = <K extends NodeRef["kind"]>(node: unknown, kind: K): Extract<NodeRef, { kind: K }> | undefined => {
            const r = (node as Node | undefined)?.ref;
            return r?.kind === kind ? (r as Extract<NodeRef, { kind: K }>) : undefined;
        };
        const targetOf = (node: unknown): { workspace?: string; target: Target } => {
            const r = (node as Node | undefined)?.ref;
            if (r && (r.kind === "target" || r.kind === "capacity" || r.kind === "entry")) {
                return { workspace: r.workspace, target: r.target };
            }
            return { target: "memory" };
        };
        return [
            vscode.commands.registerCommand("mnemon.refreshViews", () => this.refreshAll()),
            vscode.commands.registerCommand("mnemon.runtime.add", (node?: unknown) => this.addEntry(targetOf(node))),
            vscode.commands.registerCommand("mnemon.runtime.edit", (node?: unknown) => this.editEntry(ref(node, "entry"))),
            vscode.commands.registerCommand("mnemon.runtime.remove", (node?: unknown) => this.removeEntry(ref(node, "entry"))),
            vscode.commands.registerCommand("mnemon.runtime.setImportance", (node?: unknown) => this.setImportance(ref(node, "entry"))),
            vscode.commands.registerCommand("mnemon.runtime.setBranches", (node?: unknown) => this.setBranches(ref(node, "entry"))),
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
                return mergeOrDropEntries(this.ctx.server, t).finally(() => this.after(this.runtime));
            }),
            vscode.commands.registerCommand("mnemon.openDocument", (arg?: unknown) => this.openDocument(arg, true)),
            vscode.commands.registerCommand("mnemon.openDocumentReadOnly", (arg?: unknown) => this.openDocument(arg, false)),
            vscode.commands.registerCommand("mnemon.documents.updateFromSource", (node?: unknown) => this.updateFromSource(ref(node, "document"))),
            vscode.commands.registerCommand("mnemon.documents.archive", (node?: unknown) => this.archive(ref(node, "document"))),
            vscode.commands.registerCommand("mnemon.documents.restore", (node?: unknown) => this.restore(ref(node, "document"))),
            vscode.commands.registerCommand("mnemon.spaces.create", (node?: unknown) => this.createSpace((node as Node | undefined)?.ref?.workspace)),
            vscode.commands.registerCommand("mnemon.spaces.activate", (node?: unknown) => node ? this.setActive(ref(node, "space"), true) : this.pickAndActivate()),
            vscode.commands.registerCommand("mnemon.spaces.deactivate", (node?: unknown) => this.setActive(ref(node, "space"), false)),
            vscode.commands.registerCommand("mnemon.spaces.recall", (node?: unknown) => this.recallIn(ref(node, "space"))),
            vscode.commands.registerCommand("mnemon.recallResults.forget", (node?: unknown) => this.forgetItem(ref(node, "recallItem"))),
            vscode.commands.registerCommand("mnemon.recallResults.copy", async (node?: unknown) => {
                const r = ref(node, "recallItem");
                if (r) {
                    await vscode.env.clipboard.writeText(r.item.content);
                    void vscode.window.setStatusBarMessage("Mnemon: copied the recalled memory", 3000);
                }
            }),
            vscode.commands.registerCommand("mnemon.recallResults.clear", async () => {
                this.lastRecall = undefined;
                await vscode.commands.executeCommand("setContext", "mnemon.hasRecall", false);
                this.recallResults.refresh();
            }),
            vscode.commands.registerCommand("mnemon.proposals.verify", (node?: unknown) => this.judge(ref(node, "proposal"), "verify")),
            vscode.commands.registerCommand("mnemon.proposals.reject", (node?: unknown) => this.judge(ref(node, "proposal"), "reject")),
        ];
    }

    private async client(): Promise<RequestSender> {
        return this.ctx.server.ensureClient();
    }

    private after(tree: MnemonTree): void {
        tree.refresh();
        this.ctx.changed();
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
            this.after(this.runtime);
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
        this.runtime.refresh();
        this.runtime.say(text);
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
            this.after(this.runtime);
        }
    }

    private async conflictOrError(r: Extract<NodeRef, { kind: "entry" }>, verb: string, error: unknown): Promise<void> {
        const mnemon: MnemonError | undefined = asMnemonError(error);
        if (mnemon && (mnemon.code === "no-match" || mnemon.code === "revision-conflict")) {
            const text = conflictMessage(r.target, r.entry.content);
            this.runtime.say(text);
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
                        this.after(this.runtime);
                    }
                }
            });
        } catch (error) {
            await this.conflictOrError(r, "not removed", error);
        } finally {
            this.after(this.runtime);
        }
    }

    // -------------------------------------------------------------------- documents

    private async openDocument(arg: unknown, preview: boolean): Promise<void> {
        const fromNode = (arg as Node | undefined)?.ref;
        const target = fromNode?.kind === "document"
            ? { workspace: fromNode.workspace, id: fromNode.document.id, title: fromNode.document.title }
            : (arg as { workspace?: string; id?: string; title?: string } | undefined);
        if (!target?.workspace || !target.id) {
            return;
        }
        const uri = DocumentContents.uriFor(target.workspace, target.id, target.title ?? "document");
        if (preview) {
            await showPreview(uri);
        } else {
            await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: true });
        }
    }

    private async updateFromSource(r: Extract<NodeRef, { kind: "document" }> | undefined): Promise<void> {
        if (!r) {
            return;
        }
        const doc: CatalogEntry = r.document;
        const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(r.workspace));
        const source = doc.sourcePaths[0];
        if (!folder || !source) {
            void vscode.window.showErrorMessage(`Mnemon: "${doc.title}" was not created from a file of this workspace; nothing to update from.`);
            return;
        }
        const file = vscode.Uri.joinPath(folder.uri, ...source.split("/"));
        try {
            const bytes = await vscode.workspace.fs.readFile(file);
            const content = Buffer.from(bytes).toString("utf8");
            const result = await updateDocument(await this.client(), { workspace: r.workspace, id: doc.id, content, documentRevision: doc.revision });
            void vscode.window.showInformationMessage(`Mnemon: updated "${doc.title}" from ${source} (revision ${result.document.revision}).`);
        } catch (error) {
            await this.documentError(`"${doc.title}" not updated from ${source}`, error);
        } finally {
            this.after(this.documents);
        }
    }

    private async documentError(prefix: string, error: unknown): Promise<void> {
        const mnemon = asMnemonError(error);
        if (mnemon?.code === "revision-conflict") {
            const text = `Mnemon: ${prefix}: the document changed since the view was drawn (another editor or the CLI). The view now shows its current state; nothing was changed.`;
            this.documents.say(text);
            void vscode.window.showWarningMessage(text);
            return;
        }
        await showMutationError(this.ctx, prefix, error);
    }

    private async archive(r: Extract<NodeRef, { kind: "document" }> | undefined): Promise<void> {
        if (!r) {
            return;
        }
        try {
            await archiveDocument(await this.client(), { workspace: r.workspace, id: r.document.id, documentRevision: r.document.revision });
            void vscode.window.setStatusBarMessage(`Mnemon: archived "${r.document.title}"`, 5000);
        } catch (error) {
            await this.documentError(`"${r.document.title}" not archived`, error);
        } finally {
            this.after(this.documents);
        }
    }

    private async restore(r: Extract<NodeRef, { kind: "document" }> | undefined): Promise<void> {
        if (!r) {
            return;
        }
        try {
            await restoreDocument(await this.client(), { workspace: r.workspace, id: r.document.id, documentRevision: r.document.revision });
            void vscode.window.setStatusBarMessage(`Mnemon: restored "${r.document.title}"`, 5000);
        } catch (error) {
            await this.documentError(`"${r.document.title}" not restored`, error);
        } finally {
            this.after(this.documents);
        }
    }

    // -------------------------------------------------------------------- spaces

    private async createSpace(workspace: string | undefined): Promise<void> {
        try {
            const client = await this.client();
            // Where: asked only when an enabled provider can create namespaces; else a native space.
            const creators = await namespaceProviders(client, workspace);
            let provider: ProviderView | undefined;
            if (creators.length > 0) {
                const pick = await vscode.window.showQuickPick(
                    [{ label: "Mnemon (native)", description: "this root's own store", provider: undefined }, ...creators.map((p) => ({ label: p.label, description: `a new namespace in ${p.label}`, provider: p }))],
                    { title: "Mnemon: where should the new Memory Space live?", ignoreFocusOut: true },
                );
                if (!pick) {
                    return;
                }
                provider = pick.provider;
            }
            await createSpaceIn(client, workspace, provider);
        } catch (error) {
            await showMutationError(this.ctx, "no space created", error);
        } finally {
            this.after(this.spaces);
            this.providers.refresh();
        }
    }

    private async setActive(r: Extract<NodeRef, { kind: "space" }> | undefined, active: boolean): Promise<void> {
        if (!r) {
            return;
        }
        try {
            const client = await this.client();
            await (active ? activateSpace : deactivateSpace)(client, { workspace: r.workspace, spaceId: r.space.id });
        } catch (error) {
            await showMutationError(this.ctx, `"${r.space.name}" not ${active ? "activated" : "deactivated"}`, error);
        } finally {
            this.after(this.spaces);
        }
    }

    /**
     * "Activate Memory Space" without a row (the Recall Results welcome button, the palette): pick an
     * inactive space of the last recall's folder (else of the only or a picked folder) and activate it.
     */
    private async pickAndActivate(): Promise<void> {
        try {
            const client = await this.ctx.server.ensureClient();
            const workspace = this.lastRecall?.workspace ?? (await pickWorkspace(client));
            if (workspace === undefined) {
                return;
            }
            const inactive = (await listSpaces(client, { workspace })).spaces.filter((s) => !s.active);
            if (inactive.length === 0) {
                void vscode.window.showInformationMessage("Mnemon: no inactive Memory Space to activate here; create one.", "Create Memory Space").then((pick) => {
                    if (pick) {
                        void vscode.commands.executeCommand("mnemon.spaces.create", { ref: { kind: "folder", workspace } });
                    }
                });
                return;
            }
            const pick = await vscode.window.showQuickPick(
                inactive.map((space) => ({ label: space.name, description: space.providerLabel, detail: space.description || undefined, space })),
                { title: "Mnemon: activate which Memory Space? (recall reads the active ones)" },
            );
            if (pick) {
                await activateSpace(client, { workspace, spaceId: pick.space.id });
                void vscode.window.showInformationMessage(`Mnemon: ${pick.space.name} is active; recall reads it now.`);
            }
        } catch (error) {
            await showMutationError(this.ctx, "no space activated", error);
        } finally {
            this.after(this.spaces);
        }
    }

    private async recallIn(r: Extract<NodeRef, { kind: "space" }> | undefined): Promise<void> {
        await this.recallCommand(r?.workspace, r ? [r.space] : undefined);
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
            this.recallResults.refresh();
        }
    }

    // -------------------------------------------------------------------- proposals

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
            this.after(this.proposals);
        }
    }

    dispose(): void {
        for (const disposable of this.disposables) {
            disposable.dispose();
        }
    }
}
