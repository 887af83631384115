/**
 * What the Mnemon view modules share (src/runtimeView.ts, src/documentsView.ts, src/spacesView.ts,
 * src/recallView.ts, src/proposalsView.ts, composed by src/views.ts): the welcome-text context keys, the
 * folder pick of commands without a row, the folder rows of a listing, a row's typed reference, and
 * {@link ViewPart} (the client and the "refresh after a change" of a view's commands).
 */

import * as vscode from "vscode";
import type { ViewsContext } from "./capacity";
import type { MnemonTree } from "./mnemonTree";
import { RequestSender, status, WorkspaceStatus } from "./requests";
import type { Node, NodeRef } from "./trees";

/** The language client as a view's `build` gets it: requests, and folder URIs in the protocol's form. */
export type ViewClient = RequestSender & { code2ProtocolConverter: { asUri(uri: vscode.Uri): string } };

/** Context keys that say a view is empty for want of something the user can create (package.json `viewsWelcome`). */
export const EmptyContext = {
    documents: "mnemon.noDocuments",
    spaces: "mnemon.noSpaces",
    /** `noSpace` / `noActiveSpace` while the Recall Results show a recall that found nothing for that reason. */
    recall: "mnemon.recallEmpty",
} as const;

export function setContext(key: string, value: unknown): Thenable<unknown> {
    return vscode.commands.executeCommand("setContext", key, value);
}

/** The folder (its protocol URI) a command without a row is about: the only one, else the user's pick. */
export async function pickWorkspace(client: { code2ProtocolConverter: { asUri(uri: vscode.Uri): string } }): Promise<string | undefined> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    const folder = folders.length <= 1 ? folders[0] : await vscode.window.showWorkspaceFolderPick({ placeHolder: "Mnemon: which folder?" });
    return folder ? client.code2ProtocolConverter.asUri(folder.uri) : undefined;
}

/** The folders the server serves (`mnemon/status` workspaces), one per root row of a per-folder view. */
export async function folderRows(client: ViewClient): Promise<WorkspaceStatus[]> {
    return (await status(client)).workspaces;
}

/** The reference of a row (a command's argument) when it is of `kind`, else undefined. */
export function refOf<K extends NodeRef["kind"]>(node: unknown, kind: K): Extract<NodeRef, { kind: K }> | undefined {
    const r = (node as Node | undefined)?.ref;
    return r?.kind === kind ? (r as Extract<NodeRef, { kind: K }>) : undefined;
}

/** A view's commands: the client they send with, and the refresh after a change made from the view. */
export abstract class ViewPart {
    constructor(protected readonly ctx: ViewsContext) {}

    protected async client(): Promise<RequestSender> {
        return this.ctx.server.ensureClient();
    }

    protected after(tree: MnemonTree): void {
        tree.refresh();
        this.ctx.changed();
    }
}
