/**
 * The "Needs Review" view of the Mnemon container (`mnemon.review`): per folder, the memories whose cited code
 * changed or is gone (src/review.ts builds the nodes), each with "Still true: Re-anchor to the Current Code",
 * "Edit" and "Remove" (`mnemon.review.reanchor|edit|remove`). Refreshed on the server's `mnemon/memoryChanged`
 * and `mnemon/branchChanged`, when a file is saved (cited code may have changed) and when the server starts
 * or stops; never by polling. Code lenses and hovers on cited code come from the server itself.
 */

import * as vscode from "vscode";
import { errorMessage } from "./format";
import { asMnemonError, getDocument, Notification, status } from "./requests";
import type { CitedMemory } from "./citations";
import { canEdit, editRequest, listReview, reanchor, reanchoredMessage, removeRequest, reviewTree } from "./review";
import { MnemonServer } from "./server";
import { Node, perFolder } from "./trees";
import { MnemonTree } from "./mnemonTree";

type ReviewRef = { workspace: string; memory: CitedMemory };

function refOf(node: unknown): ReviewRef | undefined {
    const r = (node as Node | undefined)?.ref;
    return r?.kind === "review" ? { workspace: r.workspace, memory: r.memory } : undefined;
}

/** Create the view and its commands; `changed` is called after a change made from it. */
export function registerReviewView(server: MnemonServer, changed: () => void): vscode.Disposable[] {
    const tree = new MnemonTree(server, async (client) => {
        const rows = (await status(client)).workspaces;
        const out = [];
        for (const row of rows) {
            out.push({ workspace: row.uri, name: row.name, children: reviewTree(await listReview(client, row.uri)) });
        }
        return perFolder(out);
    });
    const view = vscode.window.createTreeView("mnemon.review", { treeDataProvider: tree, showCollapseAll: true });
    tree.view = view;
    const after = () => {
        tree.refresh();
        changed();
    };
    const failed = (prefix: string, error: unknown) => {
        const mnemon = asMnemonError(error);
        const text = mnemon ? errorMessage(prefix, mnemon) : `Mnemon: ${prefix}: ${error instanceof Error ? error.message : String(error)}`;
        server.log.error(text);
        void vscode.window.showErrorMessage(text);
    };
    const send = async (request: { method: string; params: Record<string, unknown> }) => (await server.ensureClient()).sendRequest(request.method, request.params);

    const stillTrue = async (node?: unknown) => {
        const r = refOf(node);
        if (!r) {
            return;
        }
        try {
            const result = await reanchor(await server.ensureClient(), r.workspace, r.memory);
            void vscode.window.showInformationMessage(reanchoredMessage(result));
        } catch (error) {
            failed("not re-anchored", error);
        } finally {
            after();
        }
    };
    const edit = async (node?: unknown) => {
        const r = refOf(node);
        if (!r || !canEdit(r.memory)) {
            return;
        }
        try {
            if (r.memory.source === "documents") {
                const doc = await getDocument(await server.ensureClient(), { workspace: r.workspace, id: r.memory.id });
                if (doc.path) {
                    await vscode.window.showTextDocument(vscode.Uri.file(doc.path));
                }
                return;
            }
            const text = await vscode.window.showInputBox({
                title: `Mnemon: edit this ${r.memory.label}`,
                value: r.memory.content,
                prompt: "Say what is true of the code now.",
                ignoreFocusOut: true,
            });
            const request = text === undefined ? null : editRequest(r.workspace, r.memory, text);
            if (request) {
                await send(request);
                void vscode.window.showInformationMessage(`Mnemon: edited the ${r.memory.label}.`);
            }
        } catch (error) {
            failed("not edited", error);
        } finally {
            after();
        }
    };
    const remove = async (node?: unknown) => {
        const r = refOf(node);
        if (!r) {
            return;
        }
        const answer = await vscode.window.showWarningMessage(`Mnemon: remove "${r.memory.preview}"?`, { modal: true }, "Remove");
        if (answer !== "Remove") {
            return;
        }
        try {
            await send(removeRequest(r.workspace, r.memory));
        } catch (error) {
            failed("not removed", error);
        } finally {
            after();
        }
    };
    return [
        view,
        tree,
        vscode.commands.registerCommand("mnemon.review.reanchor", stillTrue),
        vscode.commands.registerCommand("mnemon.review.edit", edit),
        vscode.commands.registerCommand("mnemon.review.remove", remove),
        vscode.commands.registerCommand("mnemon.review.refresh", () => tree.refresh()),
        server.onNotification(Notification.memoryChanged, () => tree.refresh()),
        server.onNotification(Notification.branchChanged, () => tree.refresh()),
        server.onDidChangeRunning(() => tree.refresh()),
        vscode.workspace.onDidSaveTextDocument(() => tree.refresh()),
    ];
}
