/**
 * The Documents view (`mnemon.documents`): per folder, the documents of the store, active and archived
 * (src/trees.ts `documentsTree`), shown as rendered previews (`mnemon-doc:`, src/documents.ts
 * `DocumentContents`), and its commands: open, update from the source file, archive, restore. A managed
 * document file opened in the editor is shown as its preview instead (`MnemonServer.showManagedDocument`).
 */

import * as path from "node:path";
import * as vscode from "vscode";
import { showMutationError, ViewsContext } from "./capacity";
import { DocumentContents, showPreview } from "./documents";
import { frontmatterId, updatedFromFileMessage } from "./format";
import { MnemonTree } from "./mnemonTree";
import { archiveDocument, asMnemonError, CatalogEntry, getDocument, listDocuments, restoreDocument, status, updateDocument } from "./requests";
import { documentsTree, Node, NodeRef, perFolder } from "./trees";
import { EmptyContext, folderRows, refOf, setContext, ViewPart } from "./viewShared";

export class DocumentsView extends ViewPart {
    readonly tree: MnemonTree;
    /** The `mnemon-doc:` previews of documents. */
    readonly contents: DocumentContents;

    constructor(ctx: ViewsContext) {
        super(ctx);
        const server = ctx.server;
        this.tree = new MnemonTree(server, async (client) => {
            const rows = await folderRows(client);
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
        this.contents = new DocumentContents(server);
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
            this.tree.refresh();
            return true;
        };
    }

    /** The document commands (`mnemon.openDocument*`, `mnemon.documents.*`). */
    registerCommands(): vscode.Disposable[] {
        return [
            vscode.commands.registerCommand("mnemon.openDocument", (arg?: unknown) => this.openDocument(arg, true)),
            vscode.commands.registerCommand("mnemon.openDocumentReadOnly", (arg?: unknown) => this.openDocument(arg, false)),
            vscode.commands.registerCommand("mnemon.documents.updateFromSource", (node?: unknown) => this.updateFromSource(refOf(node, "document"))),
            vscode.commands.registerCommand("mnemon.documents.archive", (node?: unknown) => this.setStatus(refOf(node, "document"), archiveDocument, "archived")),
            vscode.commands.registerCommand("mnemon.documents.restore", (node?: unknown) => this.setStatus(refOf(node, "document"), restoreDocument, "restored")),
        ];
    }

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
            void vscode.window.showInformationMessage(updatedFromFileMessage(doc.title, source, result));
        } catch (error) {
            await this.documentError(`"${doc.title}" not updated from ${source}`, error);
        } finally {
            this.after(this.tree);
        }
    }

    private async documentError(prefix: string, error: unknown): Promise<void> {
        const mnemon = asMnemonError(error);
        if (mnemon?.code === "revision-conflict") {
            const text = `Mnemon: ${prefix}: the document changed since the view was drawn (another editor or the CLI). The view now shows its current state; nothing was changed.`;
            this.tree.say(text);
            void vscode.window.showWarningMessage(text);
            return;
        }
        await showMutationError(this.ctx, prefix, error);
    }

    /**
     * Archive or restore the document of `r` at the revision the view shows: `request` is `archiveDocument` or
     * `restoreDocument`, `done` the word for it ("archived", "restored") in the status bar message
     * (`Mnemon: archived "<title>"`) and in the error (`"<title>" not archived`).
     */
    private async setStatus(r: Extract<NodeRef, { kind: "document" }> | undefined, request: typeof archiveDocument, done: string): Promise<void> {
        if (!r) {
            return;
        }
        try {
            await request(await this.client(), { workspace: r.workspace, id: r.document.id, documentRevision: r.document.revision });
            void vscode.window.setStatusBarMessage(`Mnemon: ${done} "${r.document.title}"`, 5000);
        } catch (error) {
            await this.documentError(`"${r.document.title}" not ${done}`, error);
        } finally {
            this.after(this.tree);
        }
    }
}
