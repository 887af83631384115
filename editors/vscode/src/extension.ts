/**
 * Mnemon for VS Code: runs the mnemon-ls language server (one client per window) and adds commands,
 * a wake-snapshot view and a status bar item on top of its `mnemon/*` requests.
 */

import * as vscode from "vscode";
import { registerCommands } from "./commands";
import { registerLanguageModelTools, registerMcpServerDefinitions } from "./lmtools";
import { StatusDocument, WakeDocuments } from "./documents";
import { handEditMessage } from "./format";
import { registerPackCommands } from "./packs";
import { registerReviewView } from "./reviewView";
import { registerMaintenanceNotices } from "./maintenance";
import { Notification, ProjectionRepairedParams } from "./requests";
import { MnemonServer, onPythonInterpreterChanged } from "./server";
import { StatusBar } from "./status";
import { MnemonViews } from "./views";

let server: MnemonServer | undefined;
/** How long a hand-edit result stays in the status bar. */
const HAND_EDIT_MESSAGE_MS = 15_000;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const log = vscode.window.createOutputChannel("Mnemon", { log: true });
    server = new MnemonServer(log);
    const statusBar = new StatusBar(server);
    const wakeDocuments = new WakeDocuments(server);
    const statusDocument = new StatusDocument(server);
    const views = new MnemonViews({
        server,
        changed: () => {
            statusBar.refresh();
            wakeDocuments.refreshAll();
        },
    });
    context.subscriptions.push(log, server, statusBar, wakeDocuments, statusDocument, views);
    context.subscriptions.push(...registerCommands({ server, statusBar, wakeDocuments, statusDocument, views }));
    context.subscriptions.push(...registerLanguageModelTools(server), ...registerMcpServerDefinitions(server));
    context.subscriptions.push(...registerPackCommands(server));
    context.subscriptions.push(...registerReviewView(server, () => statusBar.refresh())); // memories whose cited code changed (issue 24)
    context.subscriptions.push(...registerMaintenanceNotices(server, log)); // capacity maintenance messages (issue 9)

    const current = server;
    context.subscriptions.push(
        // A hand edit of USER.md / MEMORY.md: its result stays in the status bar for a while and in the log
        // (the server's message is the popup; an edit not applied comes with an "Open edit" button).
        server.onNotification(Notification.projectionRepaired, (params) => {
            const text = handEditMessage(params as ProjectionRepairedParams);
            if (text) {
                log.info(text);
                context.subscriptions.push(vscode.window.setStatusBarMessage(text, HAND_EDIT_MESSAGE_MS));
            }
        }),
        vscode.workspace.onDidChangeConfiguration((event) => {
            // Server settings travel through workspace/configuration (the server re-pulls them on
            // didChangeConfiguration); only the interpreter needs a new process.
            if (event.affectsConfiguration("mnemon.interpreter")) {
                void current.restart("mnemon.interpreter changed");
            }
        }),
        vscode.workspace.onDidChangeWorkspaceFolders(() => {
            // Folders are forwarded by the client (didChangeWorkspaceFolders); this only covers a
            // window that had no folder when the extension activated.
            if (!current.running && vscode.workspace.workspaceFolders?.length) {
                void current.start();
            }
        }),
    );
    void onPythonInterpreterChanged(log, () => {
        const configured = vscode.workspace.getConfiguration("mnemon").get<string[]>("interpreter") ?? [];
        if (configured.length === 0) {
            void current.restart("Python interpreter changed");
        }
    }).then((disposable) => disposable && context.subscriptions.push(disposable));

    // Without a folder there is nothing to remember into; the server starts with the first folder
    // (or when a command needs it).
    if (vscode.workspace.workspaceFolders?.length) {
        void server.start();
    }
}

export async function deactivate(): Promise<void> {
    const current = server;
    server = undefined;
    await current?.stop();
}
