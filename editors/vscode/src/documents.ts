/**
 * Read-only virtual documents: the wake snapshot (`mnemon-wake:`, converted to Markdown by
 * `wakeMarkdown`) and the status report (`mnemon-status:`), shown as rendered Markdown previews.
 * Documents of a TextDocumentContentProvider scheme are read-only in VS Code.
 */

import * as vscode from "vscode";
import { errorMessage, statusReport, wakeMarkdown } from "./format";
import { asMnemonError, Notification, PROTOCOL_VERSION, status, wake } from "./requests";
import { MnemonServer } from "./server";

/** Open a rendered Markdown preview of `uri` (the read-only text when the preview is unavailable). */
export async function showPreview(uri: vscode.Uri): Promise<void> {
    try {
        await vscode.commands.executeCommand("markdown.showPreview", uri);
    } catch {
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: true });
    }
}

function describe(error: unknown): string {
    const mnemon = asMnemonError(error);
    return mnemon ? errorMessage("cannot render", mnemon) : `Mnemon: ${error instanceof Error ? error.message : String(error)}`;
}

/** `mnemon-wake:/<folder name> wake.md?ws=<base64url of the folder URI>`. */
export class WakeDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
    static readonly scheme = "mnemon-wake";

    private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
    private readonly prefetched = new Map<string, string>();
    private readonly disposables: vscode.Disposable[] = [];
    readonly onDidChange = this.emitter.event;

    constructor(private readonly server: MnemonServer) {
        this.disposables.push(
            this.emitter,
            vscode.workspace.registerTextDocumentContentProvider(WakeDocuments.scheme, this),
            server.onNotification(Notification.branchChanged, () => this.refreshAll()),
            server.onNotification(Notification.projectionRepaired, () => this.refreshAll()),
        );
    }

    /** The folder URI travels base64url-encoded in the query, so no URI re-encoding can alter it. */
    static uriFor(workspace: string, name: string): vscode.Uri {
        const label = (name || "workspace").replace(/[/\\?#%]/g, "_");
        const ws = Buffer.from(workspace, "utf8").toString("base64url");
        return vscode.Uri.from({ scheme: WakeDocuments.scheme, path: `/${label} wake.md`, query: `ws=${ws}` });
    }

    /** The folder URI a wake document is for. */
    static workspaceOf(uri: vscode.Uri): string | undefined {
        const match = /(?:^|&)ws=([A-Za-z0-9_-]+)/.exec(uri.query);
        return match ? Buffer.from(match[1], "base64url").toString("utf8") : undefined;
    }

    /**
     * Fetch the wake of `workspace` and show it. Rejects (with the server's error) when the wake
     * cannot be rendered, so the command can report it.
     */
    async show(workspace: string, name: string): Promise<void> {
        const client = await this.server.ensureClient();
        const snapshot = await wake(client, { workspace });
        const uri = WakeDocuments.uriFor(workspace, name);
        this.prefetched.set(uri.toString(), wakeMarkdown(snapshot.text));
        const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
        if (open) {
            this.emitter.fire(uri);
        }
        await showPreview(uri);
    }

    async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
        const prefetched = this.prefetched.get(uri.toString());
        if (prefetched !== undefined) {
            this.prefetched.delete(uri.toString());
            return prefetched;
        }
        const workspace = WakeDocuments.workspaceOf(uri);
        if (!workspace) {
            return "Mnemon: this wake document has no workspace.\n";
        }
        try {
            return wakeMarkdown((await wake(await this.server.ensureClient(), { workspace })).text);
        } catch (error) {
            return `${describe(error)}\n`;
        }
    }

    /** Re-render every open wake document (after a remember, a branch change, a repair). */
    refreshAll(): void {
        for (const document of vscode.workspace.textDocuments) {
            if (document.uri.scheme === WakeDocuments.scheme) {
                this.emitter.fire(document.uri);
            }
        }
    }

    dispose(): void {
        for (const disposable of this.disposables) {
            disposable.dispose();
        }
    }
}

/** `mnemon-status:/Mnemon Status.md`: the `mnemon/status` report as Markdown. */
export class StatusDocument implements vscode.TextDocumentContentProvider, vscode.Disposable {
    static readonly scheme = "mnemon-status";
    static readonly uri = vscode.Uri.from({ scheme: StatusDocument.scheme, path: "/Mnemon Status.md" });

    private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
    private readonly disposables: vscode.Disposable[] = [];
    readonly onDidChange = this.emitter.event;

    constructor(private readonly server: MnemonServer) {
        this.disposables.push(this.emitter, vscode.workspace.registerTextDocumentContentProvider(StatusDocument.scheme, this));
    }

    private text: string | undefined;

    /** Show `text` (a rendered report); the document re-fetches when VS Code asks again later. */
    async show(text: string): Promise<void> {
        this.text = text;
        const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === StatusDocument.uri.toString());
        if (open) {
            this.emitter.fire(StatusDocument.uri);
        }
        await showPreview(StatusDocument.uri);
    }

    async provideTextDocumentContent(): Promise<string> {
        if (this.text !== undefined) {
            const text = this.text;
            this.text = undefined;
            return text;
        }
        try {
            return statusReport(await status(await this.server.ensureClient()), PROTOCOL_VERSION);
        } catch (error) {
            return `${describe(error)}\n`;
        }
    }

    dispose(): void {
        for (const disposable of this.disposables) {
            disposable.dispose();
        }
    }
}
