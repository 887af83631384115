/**
 * The status bar item: branch and MEMORY.md usage of the active editor's folder, from `mnemon/status`.
 * Refreshed when the server starts, on `mnemon/branchChanged` / `mnemon/projectionRepaired`, after
 * each remember, and when folders change; re-rendered (no request) when the active editor changes.
 */

import * as vscode from "vscode";
import { isNearlyFull, statusBarText, statusTooltip } from "./format";
import { Notification, PROTOCOL_VERSION, status, StatusResult, workspaceFor, WorkspaceStatus } from "./requests";
import { MnemonServer } from "./server";
import { WakeDocuments } from "./documents";

const REFRESH_DELAY_MS = 150;

export class StatusBar implements vscode.Disposable {
    private readonly item: vscode.StatusBarItem;
    private readonly disposables: vscode.Disposable[] = [];
    private last: StatusResult | undefined;
    private timer: NodeJS.Timeout | undefined;
    private warnedProtocol = false;

    constructor(private readonly server: MnemonServer) {
        this.item = vscode.window.createStatusBarItem("mnemon.status", vscode.StatusBarAlignment.Left, 10);
        this.item.name = "Mnemon";
        this.item.command = "mnemon.showStatus";
        this.renderStopped("not started");
        this.disposables.push(
            this.item,
            server.onNotification(Notification.branchChanged, () => this.refresh()),
            server.onNotification(Notification.projectionRepaired, () => this.refresh()),
            server.onDidChangeRunning((running) => {
                if (running) {
                    this.refresh();
                } else {
                    this.last = undefined; // never show a stale branch or usage while the server is down
                    this.renderStopped("stopped");
                }
            }),
            vscode.window.onDidChangeActiveTextEditor(() => this.render()),
            vscode.workspace.onDidChangeWorkspaceFolders(() => this.refresh()),
        );
    }

    /** The last `mnemon/status` result, if any. */
    get lastStatus(): StatusResult | undefined {
        return this.last;
    }

    /** Fetch `mnemon/status` soon (bursts of triggers coalesce). */
    refresh(): void {
        if (this.timer) {
            clearTimeout(this.timer);
        }
        this.timer = setTimeout(() => {
            this.timer = undefined;
            void this.fetch();
        }, REFRESH_DELAY_MS);
    }

    /** Fetch now; resolves to the result (undefined when the server is not running or failed). */
    async fetch(): Promise<StatusResult | undefined> {
        const client = this.server.running;
        if (!client) {
            this.renderStopped("stopped");
            return undefined;
        }
        try {
            this.update(await status(client));
        } catch (error) {
            this.server.log.warn(`mnemon/status failed: ${String(error)}`);
        }
        return this.last;
    }

    /** Use a status result fetched elsewhere. */
    update(result: StatusResult): void {
        this.last = result;
        if (result.protocolVersion !== PROTOCOL_VERSION && !this.warnedProtocol) {
            this.warnedProtocol = true;
            void vscode.window.showWarningMessage(
                `Mnemon: mnemon-ls ${result.version} speaks protocol ${result.protocolVersion}, this extension protocol ${PROTOCOL_VERSION}; update the one that is older.`,
            );
        }
        this.render();
    }

    /** The row the status bar shows: the active editor's folder, else the first folder. */
    private currentRow(): WorkspaceStatus | undefined {
        if (!this.last) {
            return undefined;
        }
        const uri = vscode.window.activeTextEditor?.document.uri;
        let key: string | undefined;
        if (uri?.scheme === "file") {
            key = this.server.running?.code2ProtocolConverter.asUri(uri) ?? uri.toString();
        } else if (uri?.scheme === WakeDocuments.scheme) {
            key = WakeDocuments.workspaceOf(uri);
        }
        return (key ? workspaceFor(this.last, key) : undefined) ?? this.last.workspaces[0];
    }

    private render(): void {
        if (!this.server.running) {
            this.renderStopped("stopped");
            return;
        }
        if (!this.last) {
            return;
        }
        this.item.command = "mnemon.showStatus";
        const row = this.currentRow();
        this.item.text = statusBarText(row);
        this.item.tooltip = statusTooltip(row, this.last.version);
        this.item.backgroundColor = isNearlyFull(row) ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
        this.item.show();
    }

    private renderStopped(state: string): void {
        const down = this.server.down;
        if (down) {
            // Said plainly: the server is down, click restarts it.
            this.item.text = down === "crashed" ? "$(debug-disconnect) mnemon: server stopped" : "$(error) mnemon: server not started";
            this.item.tooltip = `Mnemon: mnemon-ls ${down === "crashed" ? "stopped unexpectedly" : "failed to start"}; memory shown elsewhere may be out of date. Click to restart it.`;
            this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
            this.item.command = "mnemon.restartServer";
        } else {
            const idle = state === "not started" || !vscode.workspace.workspaceFolders?.length;
            this.item.text = idle ? "$(bookmark) mnemon" : "$(sync~spin) mnemon";
            this.item.tooltip = `Mnemon: server ${idle ? "not started (it starts with the first folder)" : "starting or restarting"} (click for status)`;
            this.item.backgroundColor = undefined;
            this.item.command = "mnemon.showStatus";
        }
        this.item.show();
    }

    dispose(): void {
        if (this.timer) {
            clearTimeout(this.timer);
        }
        for (const disposable of this.disposables) {
            disposable.dispose();
        }
    }
}
